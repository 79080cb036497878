"""A crash loop: stateful queries whose driver is killed with SIGKILL at seeded random moments.

The parent starts the driver (crash_queries.py: the queries, their input and their results), waits
for its queries to start, then kills the whole process group with SIGKILL after a seeded random
delay (while state loads, mid-batch, during a commit or a snapshot upload, between batches), and
starts it again, until it has killed `kills` times; the last driver runs to the end. The final
results must equal those of the same queries run without faults on the variant's reference.

The variants: TTL off and TTL on (nothing expiring) run the four classic queries against Spark's
HDFS provider. A TTL where rows do expire needs a clock both runs share: the variant "TTL expiring"
runs the expiring queries with event-time TTL of 2 seconds ("now" is the largest event time a store
has seen, recorded with each version), against the same queries on ttlstore without faults.

The variant "executors killed while stores load" runs on Spark's `local-cluster` master (two executor
JVMs): after each start of the driver, while its first batches load every store from the checkpoint (a
snapshot's files and the changelogs after it, fetched at once), one executor is killed with SIGKILL too;
its stores load again on the other executor or on the one its worker starts anew. Two more kill, after
each start, the executor that first logs that a store opened before its files were local (with
`lazyLoad.enabled`) or that it brings files down into its budget (in remote mode, 1 MiB), 0-1.5 s after
it does, with the checkpoints on an object store emulated over local files (`shaped://`,
ShapedFileSystem, test code: every request waits, every stream is slow) so that the files take seconds to
come down: the kills land while stores read their files from the checkpoint and bring them down.

`tests/test_crash_loop.py` runs a few kills in `make test`; `make chaos` runs this script with
hundreds and writes its figures to bench-output/chaos.json and docs/reliability.md; `--variant`
runs some variants alone.
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

from chaos.crash_queries import restarted_counts, results, write_input
from chaos.report import CRASH_LOOP, crash_loop_section, replace_section, section_of
from processes import kill_group  # tests/ is on PYTHONPATH (conftest, make chaos)

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "cluster"))
sys.path.insert(0, str(ROOT / "bench"))
from executors import spark_home  # noqa: E402
from ladder import test_classes  # noqa: E402

HDFS_PROVIDER = "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider"
TTL_PROVIDER = "io.ttlstore.TtlStateStoreProvider"
QUERIES_SCRIPT = Path(__file__).with_name("crash_queries.py")


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


def kill_the_executor_that_logs(child: subprocess.Popen, rng: random.Random, logs: Path, line: str,  # type: ignore[type-arg]
                                started: float, wait: float = 75.0) -> bool:
    """Kills with SIGKILL the executor of the driver's local cluster whose log (under `logs`, a worker's work
    directory, in an application started after `started`) first shows `line`, 0-1.5 s after it does; whether it
    did (not if the driver ended or no executor logged it within `wait` seconds: the first start, with no state to
    load yet, runs that long before its driver's kill)."""
    deadline = time.monotonic() + wait
    read: dict[Path, int] = {}  # how far each log was read: each poll reads what was written since
    while time.monotonic() < deadline and child.poll() is None:
        for log in logs.glob("app-*/*/stderr"):
            if log.stat().st_mtime < started:
                continue
            with log.open("rb") as f:
                f.seek(start := max(0, read.get(log, 0) - len(line)))  # a line written across two polls is found too
                new = f.read()
            read[log] = start + len(new)
            if line.encode() in new:
                text = log.read_text(errors="replace")
                pid = text.split("process name: ", 1)[1].split("@", 1)[0] if "process name: " in text else ""
                time.sleep(rng.uniform(0, 1.5))
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (ValueError, ProcessLookupError):
                    return False
                return True
        time.sleep(0.1)
    return False


def run(work: Path, provider: str, confs: list[str], kills: int, seed: int, max_delay: float = 8.0,
        timeout: float = 600.0, query_set: str = "classic", checkpoints: str | None = None,
        master: str | None = None, kill_after: str | None = None) -> dict:
    """Runs the driver until it finishes, killing it `kills` times first; returns the kills' moments.
    `checkpoints`: where the checkpoints go (a URI), by default `work/checkpoints`. On a `local-cluster`
    `master`, an executor is killed too after each start: 0-3 s in, while the stores load, or with `kill_after`
    the first to log that line, 0-1.5 s after it does (the driver's kill follows)."""
    rng = random.Random(seed)
    delays = []
    executor_kills = 0
    argv = ([sys.executable, str(QUERIES_SCRIPT), str(work), provider, f"--queries={query_set}"]
            + [f"--conf={c}" for c in confs] + ([f"--checkpoints={checkpoints}"] if checkpoints else [])
            + ([f"--master={master}"] if master else []))
    env = dict(os.environ)
    if master and master.startswith("local-cluster"):
        home = work / "spark-home"
        env["SPARK_HOME"] = str(home if home.is_dir() else spark_home(work))
    while True:
        killing = len(delays) < kills
        started = time.time()
        with open(work / "driver.log", "a") as log:
            child = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=log, text=True,
                                     start_new_session=True, env=env)
            try:
                assert child.stdout is not None
                line = child.stdout.readline()
                if not line.startswith("STARTED"):
                    raise RuntimeError(f"the driver did not start (see {work / 'driver.log'}): {line!r}")
                if killing and master and master.startswith("local-cluster"):
                    executor_kills += (kill_the_executor_that_logs(child, rng, Path(env["SPARK_HOME"]) / "work", kill_after,
                                                                   started) if kill_after
                                       else kill_an_executor(child, rng, 3.0))
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


# What a store that opens before its SST files are local logs (Hydration), at its open and once they all are.
LAZY_OPEN, LAZY_DONE = "were local; they come down while it reads them", "ms after it opened"
# What an executor in remote mode logs when it brings files down into its budget (LocalSstCache).
REMOTE_FILL = "Remote mode: bringing"


def hydrations_cut(work: Path) -> tuple[int, int]:
    """In the executors' logs of a local-cluster loop: how many stores opened before their files were local, and how
    many of those a kill ended before the files all were (the log of the executor ends with no line saying so)."""
    opened = done = 0
    for log in (work / "spark-home" / "work").glob("*/*/stderr"):
        text = log.read_text(errors="replace")
        opened, done = opened + text.count(LAZY_OPEN), done + text.count(LAZY_DONE)
    return opened, opened - done


@dataclass(frozen=True)
class Variant:
    """ttlstore's settings for one loop, the queries it runs, and the provider of the run without faults."""

    confs: tuple[str, ...]
    query_set: str = "classic"
    reference: str = HDFS_PROVIDER
    master: str | None = None  # the loop's (its reference runs on the test suite's local[2])
    # Input files where not the run's number: a round on local-cluster gets through more batches before its kill,
    # so that its kills still meet loads rather than a query with nothing left to do.
    input_files: int | None = None
    # Events per file and keys where not the run's numbers (more of both: more state for each store to load).
    rows: int | None = None
    keys: int | None = None
    # The loop's checkpoints on an object store emulated over the local files (its reference's stay local).
    shaped: bool = False
    # On local-cluster: kill the executor that first logs this line (0-1.5 s after), not one 0-3 s after the start.
    kill_after: str | None = None

    @property
    def reference_confs(self) -> list[str]:
        return list(self.confs) if self.reference == TTL_PROVIDER else []

    def loop_confs(self) -> list[str]:
        """The loop's settings: the variant's, and with `shaped` the emulated object store's (slow enough that a
        store's files take seconds to come down) with the test classes that serve it."""
        if not self.shaped:
            return list(self.confs)
        classes = test_classes()
        return [*self.confs, f"spark.driver.extraClassPath={classes}", f"spark.executor.extraClassPath={classes}",
                "spark.hadoop.fs.shaped.impl=io.ttlstore.bench.ShapedFileSystem",
                "spark.hadoop.fs.shaped.latencyMs=30", "spark.hadoop.fs.shaped.streamMBps=0.25"]

    def checkpoints(self, work: Path) -> str | None:
        return f"shaped://{work / 'checkpoints'}" if self.shaped else None


TTL_KEY = "spark.sql.streaming.stateStore.ttlstore."
VARIANTS = {
    "TTL off": Variant(()),
    "TTL on (1 day, nothing expiring)": Variant((TTL_KEY + "ttl=1 day",)),
    "TTL expiring (event time, 2 seconds)": Variant(
        (TTL_KEY + "ttl=2 seconds", TTL_KEY + "timeCharacteristic=EventTime", TTL_KEY + "eventTimeColumn=groupState.ts"),
        query_set="expiring", reference=TTL_PROVIDER),
    "executors killed while stores load (local-cluster, TTL 1 day)": Variant(
        (TTL_KEY + "ttl=1 day",), query_set="pair", master="local-cluster[2,1,1024]", input_files=150),
    "executors killed while stores open lazily (local-cluster, lazyLoad.enabled, emulated object store)": Variant(
        (TTL_KEY + "ttl=1 day", TTL_KEY + "lazyLoad.enabled=true"), query_set="pair",
        master="local-cluster[2,1,1024]", input_files=150, rows=1_000, keys=100_000, shaped=True,
        kill_after=LAZY_OPEN),
    "executors killed in remote mode (local-cluster, remote.localCacheMB=1, emulated object store)": Variant(
        (TTL_KEY + "ttl=1 day", TTL_KEY + "remote.localCacheMB=1"), query_set="pair",
        master="local-cluster[2,1,1024]", input_files=150, rows=1_000, keys=100_000, shaped=True,
        kill_after=REMOTE_FILL),
}


def chaos(out: Path, kills: int, seed: int, files: int, rows: int, keys: int, titles: list[str]) -> dict:
    """The long loop: per variant of `titles`, `kills` kills, the results compared with its reference run without
    faults."""
    import shutil

    shutil.rmtree(out, ignore_errors=True)
    report: dict = {"measured": time.strftime("%Y-%m-%d"), "seed": seed, "rows": rows, "variants": {}}
    for n, (name, variant) in enumerate(VARIANTS.items()):
        if name not in titles:
            continue
        reference = out / f"reference-{n}"
        variant_files, variant_rows, variant_keys = variant.input_files or files, variant.rows or rows, variant.keys or keys
        write_input(reference / "input", seed, variant_files, variant_rows, variant_keys)
        run(reference, variant.reference, variant.reference_confs, kills=0, seed=seed, query_set=variant.query_set)
        expected = results(reference, variant.query_set)
        work = out / f"variant-{n}"
        write_input(work / "input", seed, variant_files, variant_rows, variant_keys)
        started = time.monotonic()
        done = run(work, TTL_PROVIDER, variant.loop_confs(), kills=kills, seed=seed + n + 1,
                   query_set=variant.query_set, master=variant.master, checkpoints=variant.checkpoints(work),
                   kill_after=variant.kill_after)
        got = results(work, variant.query_set)
        report["variants"][name] = {
            **done, "seconds": round(time.monotonic() - started), "files": variant_files, "events": variant_rows,
            "reference": variant.reference.rsplit(".", 1)[-1],
            "equal": {q: got[q] == expected[q] for q in expected},
            "rows": {q: len(expected[q]) for q in expected},
            "restarted_counts": restarted_counts(work) if variant.query_set == "expiring" else None,
            "lazy_opens": hydrations_cut(work) if variant.master else None,
        }
        print(f"{name}: {done['kills']} kills, results equal: {report['variants'][name]['equal']}", flush=True)
    return report


def chosen(starts: list[str]) -> list[str]:
    """The variants whose titles start with one of `starts`; each must name exactly one."""
    titles = []
    for start in starts:
        matching = [title for title in VARIANTS if title.startswith(start)]
        if len(matching) != 1:
            raise SystemExit(f"--variant {start!r} names {len(matching)} variants; the variants are: "
                             + "; ".join(VARIANTS))
        titles += matching
    return titles


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("chaos", help="the long loop of `make chaos`")
    c.add_argument("--kills", type=int, default=70, help="kills per variant")
    c.add_argument("--seed", type=int, default=1)
    c.add_argument("--files", type=int, default=24, help="input files, where a variant names no number of its own")
    c.add_argument("--rows", type=int, default=100)
    c.add_argument("--keys", type=int, default=30)
    c.add_argument("--out", type=Path, default=ROOT / "bench-output" / "chaos")
    c.add_argument("--report", type=Path, default=ROOT / "docs" / "reliability.md",
                   help="the document whose crash-loop section is rewritten")
    c.add_argument("--variant", action="append", metavar="TITLE_START",
                   help="run only the variants whose title starts so (repeatable; default: every variant); the "
                        "section keeps the other variants' rows as they were, each with its date")
    args = parser.parse_args()
    titles = chosen(args.variant) if args.variant else list(VARIANTS)
    report = chaos(args.out, args.kills, args.seed, args.files, args.rows, args.keys, titles)
    (args.out.parent / "chaos.json").write_text(json.dumps(report, indent=2))
    replace_section(args.report, CRASH_LOOP,
                    crash_loop_section(report, list(VARIANTS), section_of(args.report, CRASH_LOOP)))
    failed = [v for v, r in report["variants"].items() if not all(r["equal"].values())]
    if failed:
        raise SystemExit(f"results differ from the run without faults: {failed}")


if __name__ == "__main__":
    main()
