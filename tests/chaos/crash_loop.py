"""A crash loop: stateful queries whose driver is killed with SIGKILL at seeded random moments.

One driver process (a child, with its own JVM) runs four stateful queries over the same input
files: an aggregation in update mode, `dropDuplicates`, `applyInPandasWithState` (a running count)
and a session window in append mode. A file source with one file per trigger makes the batches
deterministic; each query's sink writes one file per batch id, atomically (a temporary name, then a
rename), so a batch run again after a crash replaces its own output: exactly once. The parent
starts the driver, waits for its queries to start, then kills the whole process group with SIGKILL
after a seeded random delay (while state loads, mid-batch, during a commit or a snapshot upload,
between batches), and starts it again, until it has killed `kills` times; the last driver runs to
the end. The final results (per query, the outputs folded in batch order) must equal those of the
same queries run without faults on Spark's HDFS provider.

A TTL where rows do expire needs a clock both runs share: the variant "TTL expiring" runs three
queries whose state rows carry an event time `groupState.ts` (an aggregation per key and 4-second
window start, `dropDuplicates` on key, value and time, `applyInPandasWithState` keeping the last
event time in its state),
with event-time TTL of 2 seconds: "now" is the largest event time a store has seen, recorded with
each version, so which rows expire depends on the input alone. Its reference is the same queries
on ttlstore without faults; `restarted_counts` shows that rows did expire.

The variant "executors killed while stores load" runs on Spark's `local-cluster` master (two executor
JVMs): after each start of the driver, while its first batches load every store from the checkpoint (a
snapshot's files and the changelogs after it, fetched at once), one executor is killed with SIGKILL too;
its stores load again on the other executor or on the one its worker starts anew.

`tests/test_crash_loop.py` runs a few kills in `make test`; `make chaos` runs this script with
hundreds and writes its figures to bench-output/chaos.json.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from chaos.report import replace_section
from processes import kill_group  # tests/ is on PYTHONPATH (conftest, make chaos)

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "cluster"))
from executors import spark_home  # noqa: E402

HDFS_PROVIDER = "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider"
TTL_PROVIDER = "io.ttlstore.TtlStateStoreProvider"
# Per query set, its queries; `classic` are the four of the issue, `expiring` those whose state rows
# carry the event time `ts` that event-time TTL reads, `pair` two of the classic ones (for a file
# system under test rather than the operators).
QUERY_SETS = {"classic": ("aggregation", "dropDuplicates", "applyInPandasWithState", "sessionWindow"),
              "expiring": ("aggregation", "dropDuplicates", "applyInPandasWithState"),
              "pair": ("aggregation", "dropDuplicates")}
QUERIES = QUERY_SETS["classic"]
# How each query's outputs fold into its result: update mode keeps the last row per key.
LAST_PER_KEY = {"classic": {"aggregation": ("key",), "applyInPandasWithState": ("key",)},
                "expiring": {"aggregation": ("key", "ts"), "applyInPandasWithState": ("key",)},
                "pair": {"aggregation": ("key",)}}
FLUSH = "flush"


def write_input(directory: Path, seed: int, files: int, rows: int, keys: int) -> None:
    """Input files of events (key, v, t seconds), the event time moving forward file by file.

    Two last files hold one event each of the key `FLUSH`, far in the future: the first moves the
    watermark past every session, the second's batch emits them. So no result depends on whether
    Spark ran a batch without data after the last file; the `FLUSH` rows are left out of results."""
    rng = random.Random(seed)
    directory.mkdir(parents=True, exist_ok=True)
    for f in range(files):
        lines = [json.dumps({"key": f"k{rng.randrange(keys)}", "v": rng.randrange(10), "t": f * 4 + rng.randrange(6)})
                 for _ in range(rows)]
        (directory / f"{f:04d}.json").write_text("\n".join(lines) + "\n")
    for n, t in enumerate((files * 4 + 100, files * 4 + 200)):
        (directory / f"{files + n:04d}.json").write_text(json.dumps({"key": FLUSH, "v": 0, "t": t}) + "\n")
    # The file source takes files in the order of their modification times: a second apart, so that
    # files written within one millisecond cannot swap places between runs (and move the watermark
    # differently).
    for n, path in enumerate(sorted(directory.glob("*.json"))):
        os.utime(path, (1_700_000_000 + n, 1_700_000_000 + n))


def running_count(key, frames, state):  # type: ignore[no-untyped-def]
    import pandas as pd

    count = state.get[0] if state.exists else 0
    for frame in frames:
        count += len(frame)
    state.update((count,))
    yield pd.DataFrame({"key": [key[0]], "count": [count]})


def running_count_since(key, frames, state):  # type: ignore[no-untyped-def]
    """The running count of a key whose state also keeps its last event time (ms), for event-time TTL."""
    import pandas as pd

    count, last = (state.get[0], state.get[1]) if state.exists else (0, 0)
    for frame in frames:
        count += len(frame)
        last = max(last, int(frame["t"].max()) * 1000)
    state.update((count, last))
    yield pd.DataFrame({"key": [key[0]], "count": [count]})


def plans_of(query_set: str, source):  # type: ignore[no-untyped-def]
    """The queries of a set, each a (DataFrame, output mode)."""
    from pyspark.sql import functions as F
    from pyspark.sql.streaming.state import GroupStateTimeout

    if query_set == "expiring":
        # One session setting names the event-time field for all three: `groupState.ts`, where
        # applyInPandasWithState's state value has it; the other two carry a struct of that name.
        def stamped():  # type: ignore[no-untyped-def]
            return source().withColumn("groupState", F.struct(F.col("ts").alias("ts")))

        return {
            "aggregation": (source().withColumn("groupState", F.struct(F.window("ts", "4 seconds").start.alias("ts")))
                            .groupBy("key", "groupState").agg(F.count("*").alias("n"), F.sum("v").alias("total"))
                            .select("key", F.col("groupState.ts").cast("long").alias("ts"), "n", "total"), "update"),
            "dropDuplicates": (stamped().dropDuplicates(["key", "v", "groupState"]).select("key", "v", "t"), "append"),
            "applyInPandasWithState": (source().groupBy("key").applyInPandasWithState(
                running_count_since, "key string, count long", "count long, ts long", "update",
                GroupStateTimeout.NoTimeout), "update"),
        }
    return {
        "aggregation": (source().groupBy("key").agg(F.count("*").alias("n"), F.sum("v").alias("total")), "update"),
        "dropDuplicates": (source().dropDuplicates(["key", "v"]).select("key", "v"), "append"),  # which t is kept is not determined
        "applyInPandasWithState": (source().groupBy("key").applyInPandasWithState(
            running_count, "key string, count long", "count long", "update", GroupStateTimeout.NoTimeout), "update"),
        "sessionWindow": (source().withWatermark("ts", "5 seconds").groupBy(F.session_window("ts", "3 seconds"), "key")
                          .agg(F.count("*").alias("n")).select(F.col("session_window.start").cast("long").alias("start"),
                                                               F.col("session_window.end").cast("long").alias("end"),
                                                               "key", "n"), "append"),
    }


def drive(work: Path, provider: str, confs: list[str], query_set: str = "classic", checkpoints: str | None = None,
          master: str | None = None) -> None:
    """The driver: runs the queries until every input file is processed (resuming their checkpoints,
    below `checkpoints`: a URI, by default `work/checkpoints`), on `master` if given."""
    from pyspark.sql import functions as F

    import ttlstore

    # The test suite's session (local[2], 2 shuffle partitions, maintenance every second); importing
    # conftest also points pandas' workers at this interpreter.
    from conftest import local_session_builder

    builder = (local_session_builder("crash-loop")
               .config("spark.sql.streaming.stateStore.minDeltasForSnapshot", "2")
               .config("spark.sql.streaming.minBatchesToRetain", "4"))
    if master:
        builder = builder.master(master).config("spark.executor.memory", "1g")
    for setting in confs:
        key, _, value = setting.partition("=")
        builder = builder.config(key, value)
    # After configure, which names ttlstore's provider: the reference runs on Spark's.
    spark = ttlstore.configure(builder).config(ttlstore.settings.PROVIDER_CLASS_KEY, provider).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")

    def source():  # type: ignore[no-untyped-def]
        return (spark.readStream.schema("key string, v int, t long").option("maxFilesPerTrigger", 1)
                .json(str(work / "input")).withColumn("ts", F.timestamp_seconds("t")))

    plans = {name: plan for name, plan in plans_of(query_set, source).items() if name in QUERY_SETS[query_set]}

    def sink(name: str):  # type: ignore[no-untyped-def]
        out = work / "out" / name
        out.mkdir(parents=True, exist_ok=True)

        def write(df, batch_id: int) -> None:  # type: ignore[no-untyped-def]
            rows = sorted(json.dumps(r.asDict(), sort_keys=True) for r in df.collect())
            temp = out / f".{batch_id:06d}.tmp"
            temp.write_text(json.dumps(rows))
            os.replace(temp, out / f"{batch_id:06d}.json")
        return write

    queries = [df.writeStream.outputMode(mode).foreachBatch(sink(name))
               .option("checkpointLocation", f"{checkpoints or work / 'checkpoints'}/{name}").start()
               for name, (df, mode) in plans.items()]
    print("STARTED", flush=True)
    for q in queries:
        q.processAllAvailable()
    for q in queries:
        q.stop()
    print("DONE", flush=True)
    spark.stop()


def outputs(work: Path, name: str) -> list[dict]:
    """A query's output rows in batch order, the `FLUSH` events left out."""
    files = sorted((work / "out" / name).glob("*.json"))
    return [row for f in files for r in json.loads(f.read_text()) if (row := json.loads(r))["key"] != FLUSH]


def results(work: Path, query_set: str = "classic") -> dict[str, list[str]]:
    """Per query, its outputs folded in batch order: the last row per key (update mode) or all rows."""
    folded = {}
    for name in QUERY_SETS[query_set]:
        rows = outputs(work, name)
        if name in LAST_PER_KEY[query_set]:
            last = {tuple(r[k] for k in LAST_PER_KEY[query_set][name]): r for r in rows}
            rows = list(last.values())
        folded[name] = sorted(json.dumps(r, sort_keys=True) for r in rows)
    return folded


def restarted_counts(work: Path) -> int:
    """How often a key's running count went down in batch order: its state had expired in between."""
    last: dict[str, int] = {}
    restarts = 0
    for row in outputs(work, "applyInPandasWithState"):
        restarts += row["count"] < last.get(row["key"], 0)
        last[row["key"]] = row["count"]
    return restarts


def executors_of(group: int) -> list[int]:
    """The executor JVMs of a driver's local cluster: those in its process group."""
    out = subprocess.run(["ps", "-eo", "pid=,pgid=,args="], capture_output=True, text=True, check=True).stdout
    return [int(f[0]) for line in out.splitlines() if "CoarseGrainedExecutorBackend" in line
            and len(f := line.split()) > 1 and int(f[1]) == group]


def kill_an_executor(child: subprocess.Popen, rng: random.Random, max_delay: float) -> bool:  # type: ignore[type-arg]
    """Kills one of the driver's executors with SIGKILL after a random delay (while its stores load); whether it did."""
    deadline = time.monotonic() + rng.uniform(0, max_delay)
    while time.monotonic() < deadline and child.poll() is None:
        time.sleep(0.05)
    pids = executors_of(child.pid) if child.poll() is None else []
    if not pids:
        return False
    try:
        os.kill(rng.choice(pids), signal.SIGKILL)
    except ProcessLookupError:
        return False
    return True


def run(work: Path, provider: str, confs: list[str], kills: int, seed: int, max_delay: float = 8.0,
        timeout: float = 600.0, query_set: str = "classic", checkpoints: str | None = None,
        master: str | None = None) -> dict:
    """Runs the driver until it finishes, killing it `kills` times first; returns the kills' moments.
    `checkpoints`: where the checkpoints go (a URI), by default `work/checkpoints`. On a `local-cluster`
    `master`, an executor is killed too after each start, 0-3 s in, while the stores load."""
    rng = random.Random(seed)
    delays = []
    executor_kills = 0
    argv = ([sys.executable, __file__, "drive", str(work), provider, f"--queries={query_set}"]
            + [f"--conf={c}" for c in confs] + ([f"--checkpoints={checkpoints}"] if checkpoints else [])
            + ([f"--master={master}"] if master else []))
    env = dict(os.environ)
    if master and master.startswith("local-cluster"):
        home = work / "spark-home"
        env["SPARK_HOME"] = str(home if home.is_dir() else spark_home(work))
    while True:
        killing = len(delays) < kills
        with open(work / "driver.log", "a") as log:
            child = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=log, text=True,
                                     start_new_session=True, env=env)
            try:
                assert child.stdout is not None
                line = child.stdout.readline()
                if not line.startswith("STARTED"):
                    raise RuntimeError(f"the driver did not start (see {work / 'driver.log'}): {line!r}")
                if killing and master and master.startswith("local-cluster"):
                    executor_kills += kill_an_executor(child, rng, 3.0)
                if killing:
                    delay = rng.uniform(0, max_delay)
                    deadline = time.monotonic() + delay
                    while time.monotonic() < deadline and child.poll() is None:
                        time.sleep(0.05)
                    if child.poll() is None:
                        delays.append(round(delay, 2))
                        continue  # the finally below kills it
                    killing = False  # it finished before the kill: that run was the last
                done, _ = child.communicate(timeout=timeout)
                if "DONE" not in done or child.returncode != 0:
                    raise RuntimeError(f"the driver failed (exit {child.returncode}); see {work / 'driver.log'}")
                return {"kills": len(delays), "delays": delays, "executor_kills": executor_kills}
            finally:
                kill_group(child)


@dataclass(frozen=True)
class Variant:
    """ttlstore's settings for one loop, the queries it runs, and the provider of the run without faults."""

    confs: tuple[str, ...]
    query_set: str = "classic"
    reference: str = HDFS_PROVIDER
    master: str | None = None  # the loop's (its reference runs on the test suite's local[2])

    @property
    def reference_confs(self) -> list[str]:
        return list(self.confs) if self.reference == TTL_PROVIDER else []


TTL_KEY = "spark.sql.streaming.stateStore.ttlstore."
VARIANTS = {
    "TTL off": Variant(()),
    "TTL on (1 day, nothing expiring)": Variant((TTL_KEY + "ttl=1 day",)),
    "TTL expiring (event time, 2 seconds)": Variant(
        (TTL_KEY + "ttl=2 seconds", TTL_KEY + "timeCharacteristic=EventTime", TTL_KEY + "eventTimeColumn=groupState.ts"),
        query_set="expiring", reference=TTL_PROVIDER),
    "executors killed while stores load (local-cluster, TTL 1 day)": Variant(
        (TTL_KEY + "ttl=1 day",), query_set="pair", master="local-cluster[2,1,1024]"),
}
SECTION = "## Crash loop (`make chaos`)"


def chaos(out: Path, kills: int, seed: int, files: int, rows: int, keys: int) -> dict:
    """The long loop: per variant, `kills` kills, the results compared with its reference run without faults."""
    import shutil

    shutil.rmtree(out, ignore_errors=True)
    report: dict = {"measured": time.strftime("%Y-%m-%d"), "seed": seed, "files": files, "rows": rows, "variants": {}}
    for n, (name, variant) in enumerate(VARIANTS.items()):
        reference = out / f"reference-{n}"
        write_input(reference / "input", seed, files, rows, keys)
        run(reference, variant.reference, variant.reference_confs, kills=0, seed=seed, query_set=variant.query_set)
        expected = results(reference, variant.query_set)
        work = out / f"variant-{n}"
        write_input(work / "input", seed, files, rows, keys)
        started = time.monotonic()
        done = run(work, TTL_PROVIDER, list(variant.confs), kills=kills, seed=seed + n + 1, query_set=variant.query_set,
                   master=variant.master)
        got = results(work, variant.query_set)
        report["variants"][name] = {
            **done, "seconds": round(time.monotonic() - started),
            "reference": variant.reference.rsplit(".", 1)[-1],
            "equal": {q: got[q] == expected[q] for q in expected},
            "rows": {q: len(expected[q]) for q in expected},
            "restarted_counts": restarted_counts(work) if variant.query_set == "expiring" else None,
        }
        print(f"{name}: {done['kills']} kills, results equal: {report['variants'][name]['equal']}", flush=True)
    return report


def section(report: dict) -> str:
    lines = [SECTION, "",
             f"Measured {report['measured']}. tests/chaos/crash_loop.py, seed {report['seed']}: the queries over "
             f"{report['files']} input files of {report['rows']} events, the driver killed with SIGKILL after a random "
             "delay of 0-8 s once its queries had started, restarted until the input was done; results compared with "
             "the same queries run without faults on the reference provider (the TTL-expiring variant: ttlstore with "
             "the same settings, its running counts restarting where rows expired). On `local-cluster`, an executor "
             "is also killed 0-3 s after each start, while the stores load.", "",
             "| variant | kills survived (driver, executor) | reference | results equal to the run without faults | "
             "time |",
             "|---|---|---|---|---|"]
    for variant, v in report["variants"].items():
        equal = f"all {len(v['equal'])} queries" if all(v["equal"].values()) else \
            "NOT " + ", ".join(q for q, ok in v["equal"].items() if not ok)
        if v.get("restarted_counts") is not None:
            equal += f"; {v['restarted_counts']} running counts restarted after expiry"
        lines.append(f"| {variant} | {v['kills']}, {v.get('executor_kills', 0)} | {v['reference']} | {equal} | "
                     f"{v['seconds'] // 60} min |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("drive", help="(the driver the loop starts and kills)")
    d.add_argument("work", type=Path)
    d.add_argument("provider")
    d.add_argument("--conf", action="append", default=[])
    d.add_argument("--queries", choices=QUERY_SETS, default="classic")
    d.add_argument("--checkpoints", help="where the checkpoints go (a URI); default WORK/checkpoints")
    d.add_argument("--master", help="default: the test suite's local[2]")
    c = sub.add_parser("chaos", help="the long loop of `make chaos`")
    c.add_argument("--kills", type=int, default=70, help="kills per variant")
    c.add_argument("--seed", type=int, default=1)
    c.add_argument("--files", type=int, default=24)
    c.add_argument("--rows", type=int, default=100)
    c.add_argument("--keys", type=int, default=30)
    c.add_argument("--out", type=Path, default=ROOT / "bench-output" / "chaos")
    c.add_argument("--report", type=Path, default=ROOT / "docs" / "reliability.md",
                   help="the document whose crash-loop section is rewritten")
    args = parser.parse_args()
    if args.command == "drive":
        drive(args.work, args.provider, args.conf, args.queries, args.checkpoints, args.master)
        return
    report = chaos(args.out, args.kills, args.seed, args.files, args.rows, args.keys)
    (args.out.parent / "chaos.json").write_text(json.dumps(report, indent=2))
    replace_section(args.report, SECTION, section(report))
    failed = [v for v, r in report["variants"].items() if not all(r["equal"].values())]
    if failed:
        raise SystemExit(f"results differ from the run without faults: {failed}")


if __name__ == "__main__":
    main()
