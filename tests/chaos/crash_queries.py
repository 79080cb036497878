"""The queries a crash loop kills, their input and how their outputs fold into results.

One driver process (a child with its own JVM: `crash_queries.py WORK PROVIDER`) runs stateful
queries over the same input files until every file is processed. A file source with one file per
trigger makes the batches deterministic; each query's sink writes one file per batch id,
atomically (a temporary name, then a rename), so a batch run again after a crash replaces its own
output: exactly once. The results (per query, the outputs folded in batch order) are what a run
with faults must share with a run without them.

The set `classic` is an aggregation in update mode, `dropDuplicates`, `applyInPandasWithState` (a
running count) and a session window in append mode. The set `expiring` runs three queries whose
state rows carry an event time `groupState.ts` (an aggregation per key and 4-second window start,
`dropDuplicates` on key, value and time, `applyInPandasWithState` keeping the last event time in
its state), for event-time TTL: which rows expire then depends on the input alone, and
`restarted_counts` shows that rows did expire. The set `pair` is two of the classic queries.
"""

from __future__ import annotations

import argparse
import json
import os
import random
from pathlib import Path

# Per query set, its queries; `classic` are the four of the issue, `expiring` those whose state rows
# carry the event time `ts` that event-time TTL reads, `pair` two of the classic ones (for a file
# system under test rather than the operators).
QUERY_SETS = {"classic": ("aggregation", "dropDuplicates", "applyInPandasWithState", "sessionWindow"),
              "expiring": ("aggregation", "dropDuplicates", "applyInPandasWithState"),
              "pair": ("aggregation", "dropDuplicates")}
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("work", type=Path)
    parser.add_argument("provider")
    parser.add_argument("--conf", action="append", default=[])
    parser.add_argument("--queries", choices=QUERY_SETS, default="classic")
    parser.add_argument("--checkpoints", help="where the checkpoints go (a URI); default WORK/checkpoints")
    parser.add_argument("--master", help="default: the test suite's local[2]")
    args = parser.parse_args()
    drive(args.work, args.provider, args.conf, args.queries, args.checkpoints, args.master)


if __name__ == "__main__":
    main()
