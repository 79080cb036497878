"""One size ladder: a streaming query whose state grows through several sizes, timed at each size.

A single query per (workload, provider), in its own JVM. Each rung first brings new keys until every
store holds `size` keys, then runs `steady` micro-batches whose rows are all keys already stored
(a deduplication's duplicates, an aggregation's updates, a running count's next call). Per-row cost
at a rung is the median over its steady batches, the first `--warmup` left out, of
`allUpdatesTimeMs / numInputRows` (the state operator's time, summed over partitions); rows/s is
`numInputRows / triggerExecution` of the same batches (the whole query).

Workloads: `dropDuplicates`, `aggregation` (count per key, update mode) and `flatMapGroupsWithState`
(a running count per key in the group's state, update mode; the query comes from the test classes,
jvm/src/test/scala/io/ttlstore/bench/RunningCount.scala, which `make bench` and `make bench-ladder`
compile).

With `--read-profile` every store counts its reads in RocksDB's statistics (a test hook of ttlstore's), batches
start every `--trigger-interval`, and each rung also gives what RocksDB counted over its counted batches
(`reads`: tickers and histogram counts and sums, bench/read_profile.py divides them by the reads).

Run as a script it prints one line `RESULT {json}`; `tests/test_no_cliff.py` and `make bench`
(bench/run_bench.py) call it in a subprocess, since a JVM's block cache is sized once.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
import hooks  # noqa: E402
from processes import run_script  # noqa: E402

WORKLOADS = ("dropDuplicates", "aggregation", "flatMapGroupsWithState")


def test_classes() -> Path:
    """Where sbt compiles the test classes of the installed pyspark's line and Scala: build.sbt's target is
    jvm/target/spark-<line>, or spark-<line>_<Scala> for a Scala the line's pyspark does not ship."""
    from ttlstore._lines import installed_line

    line, scala = installed_line()
    candidates = [ROOT / "jvm" / "target" / name / f"scala-{scala}" / "test-classes"
                  for name in (f"spark-{line}", f"spark-{line}_{scala}")]
    return next((c for c in candidates if c.is_dir()), candidates[0])


def schedule(sizes: list[int], partitions: int, rows_per_batch: int, steady: int) -> list[tuple[str, int, int]]:
    """The batches, in order: (phase, first key, keys so far) per batch; phase is 'fill' or a rung's size."""
    batches: list[tuple[str, int, int]] = []
    total = 0
    for size in sizes:
        target = size * partitions
        while total < target:
            batches.append(("fill", total, total + rows_per_batch))
            total += rows_per_batch
        for i in range(steady):
            # A different window of existing keys each batch, so no batch finds its keys cached by the last.
            start = (i * 7919 * rows_per_batch + size) % total
            batches.append((str(size), start, total))
    return batches


def key_column(batches: list[tuple[str, int, int]], rows_per_batch: int):  # type: ignore[no-untyped-def]
    """Maps the rate source's value (batch b, offset o) to the key (start_b + o) mod keys_b. A batch past the
    schedule (the query may start one before it is stopped) repeats the last one rather than failing the query."""
    from pyspark.sql import functions as F

    batch = F.least((F.col("value") / rows_per_batch).cast("int"), F.lit(len(batches) - 1))
    offset = F.col("value") % rows_per_batch
    start = F.element_at(F.array(*[F.lit(b[1]) for b in batches]), batch + 1)
    modulo = F.element_at(F.array(*[F.lit(b[2]) for b in batches]), batch + 1)
    return ((start + offset) % modulo).cast("long")


def run(args: argparse.Namespace) -> dict:
    from pyspark.sql import SparkSession

    import ttlstore

    batches = schedule(args.sizes, args.partitions, args.rows_per_batch, args.steady)
    log_conf = f"-Dlog4j2.configurationFile={ROOT / 'conf' / 'log4j2.properties'}"
    if args.jfr:
        # A flight recording of the whole run (the JDK's profile settings: a task thread sampled every 10 ms).
        log_conf += f" -XX:StartFlightRecording=filename={Path(args.jfr).resolve()},settings=profile"
    builder = (
        SparkSession.builder.master("local[2]")
        .appName(f"ladder-{args.workload}-{args.provider_class.rsplit('.', 1)[-1]}")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", args.driver_memory)
        .config("spark.sql.shuffle.partitions", str(args.partitions))
        .config("spark.driver.extraJavaOptions", log_conf)
        # Every batch's progress is read back from recentProgress, which keeps only the last 100 by default.
        .config("spark.sql.streaming.numRecentProgressUpdates", str(len(batches) + 100))
    )
    if args.workload == "flatMapGroupsWithState":
        classes = test_classes()
        if not (classes / "io" / "ttlstore" / "bench" / "RunningCount.class").is_file():
            raise SystemExit(f"{classes} has no RunningCount: compile the test classes first (make bench and "
                             "make bench-ladder do)")
        builder = builder.config("spark.driver.extraClassPath", str(classes))
    for setting in args.conf:
        key, _, value = setting.partition("=")
        builder = builder.config(key, value)
    if any(setting.startswith(hooks.PREFIX) for setting in args.conf):
        builder = hooks.with_testkit(builder)
    spark = ttlstore.configure(builder).config(ttlstore.settings.PROVIDER_CLASS_KEY, args.provider_class).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    source = (spark.readStream.format("rate-micro-batch").option("rowsPerBatch", args.rows_per_batch)
              .option("numPartitions", 2).load())
    keys = source.select(key_column(batches, args.rows_per_batch).alias("key"))
    if args.workload == "dropDuplicates":
        query_df, mode = keys.dropDuplicates(["key"]), "append"
    elif args.workload == "aggregation":
        query_df, mode = keys.groupBy("key").count(), "update"
    else:
        from pyspark.sql import DataFrame

        running_count = spark._jvm.io.ttlstore.bench.RunningCount.apply(keys._jdf)  # type: ignore[union-attr]
        query_df, mode = DataFrame(running_count, spark), "update"
    checkpoint = tempfile.mkdtemp(prefix="ladder-", dir=args.workdir)
    query = (query_df.writeStream.format("noop").outputMode(mode).option("checkpointLocation", checkpoint)
             .trigger(processingTime=args.trigger_interval).start())
    # With the read profile: RocksDB's figures as each rung's counted batches begin and end (the batches start
    # every trigger interval, so each figure is read between two batches).
    boundaries = counted_bounds(batches, args.warmup) if args.read_profile else {}
    figures: dict[int, dict[str, float]] = {}
    try:
        while (done := len([p for p in query.recentProgress if p["numInputRows"] > 0])) < len(batches):
            if query.exception() is not None:
                raise RuntimeError(str(query.exception()))
            if any(done in bounds for bounds in boundaries.values()) and done not in figures:
                figures[done] = read_statistics(spark)
            time.sleep(0.05 if boundaries else 0.2)
        if boundaries:
            figures[done] = read_statistics(spark)
    finally:
        query.stop()
        progress = [p for p in query.recentProgress if p["numInputRows"] > 0][: len(batches)]
        spark.stop()
        shutil.rmtree(checkpoint, ignore_errors=True)
    if args.progress_out:
        Path(args.progress_out).write_text(json.dumps(progress, indent=1, default=str))
    measured = rungs(batches, progress, args.warmup)
    for rung in measured:
        if (bounds := boundaries.get(str(rung["keys_per_store"]))) is not None:
            first, last = (figures[b] for b in bounds)
            rung["reads"] = {k: v - first.get(k, 0.0) for k, v in last.items() if v - first.get(k, 0.0)}
            rung["input_rows"] = sum(p["numInputRows"] for p in progress[bounds[0]:bounds[1]])
    return {"workload": args.workload, "rungs": measured, "conf": args.conf,
            "warmup": args.warmup,
            "partitions": args.partitions, "rows_per_batch": args.rows_per_batch,
            # The state's memory as Spark reports it (all stores together), the largest of any batch.
            "peak_memory_used_bytes": max(p["stateOperators"][0]["memoryUsedBytes"] for p in progress),
            "sst_bytes": progress[-1]["stateOperators"][0].get("customMetrics", {}).get("ttlstoreSstBytes"),
            "batch_ms": [p["durationMs"]["triggerExecution"] for p in progress]}


def counted_bounds(batches: list[tuple[str, int, int]], warmup: int) -> dict[str, tuple[int, int]]:
    """Per rung: the number of batches done when its counted batches begin, and when they end."""
    bounds = {}
    for size in dict.fromkeys(b[0] for b in batches if b[0] != "fill"):
        at = [i for i, b in enumerate(batches) if b[0] == size]
        bounds[size] = (at[0] + warmup, at[-1] + 1)
    return bounds


def read_statistics(spark) -> dict[str, float]:  # type: ignore[no-untyped-def]
    """What RocksDB has counted so far in the stores of this JVM (local mode: the executors' JVM)."""
    figures = spark._jvm.io.ttlstore.store.rocksdb.ReadStatistics.snapshot()
    return {str(k): float(figures.get(k)) for k in figures.keySet().toArray()}


def rungs(batches: list[tuple[str, int, int]], progress: list[dict], warmup: int = 1) -> list[dict]:
    """Per rung: keys per store, the counted steady batches' per-row state time and rows/s (the first `warmup`
    left out), and the state's memory."""
    out = []
    for size in dict.fromkeys(b[0] for b in batches if b[0] != "fill"):
        steady = [p for b, p in zip(batches, progress, strict=True) if b[0] == size][warmup:]
        ops = [p["stateOperators"][0] for p in steady]
        out.append({
            "keys_per_store": int(size),
            "state_rows": ops[-1]["numRowsTotal"],
            "us_per_row": [1000.0 * o["allUpdatesTimeMs"] / p["numInputRows"] for o, p in zip(ops, steady, strict=True)],
            "rows_per_second": [p["numInputRows"] * 1000.0 / p["durationMs"]["triggerExecution"] for p in steady],
            "memory_used_bytes": max(o["memoryUsedBytes"] for o in ops),
            # ttlstore's live SST bytes, all stores together (Spark's providers do not report it).
            "sst_bytes": ops[-1].get("customMetrics", {}).get("ttlstoreSstBytes"),
        })
    return [with_medians(rung) for rung in out]


def with_medians(rung: dict) -> dict:
    """The rung with the medians of its counted batches' per-row time and rows/s (also for pooled runs)."""
    return dict(rung, median_us_per_row=statistics.median(rung["us_per_row"]),
                median_rows_per_second=statistics.median(rung["rows_per_second"]))


def conf_args(settings: dict[str, str]) -> list[str]:
    """Spark settings as the bench scripts take them: --conf KEY=VALUE ..."""
    return [a for k, v in settings.items() for a in ("--conf", f"{k}={v}")]


def run_in_subprocess(argv: list[str], timeout: float | None = None, script: str = __file__) -> dict:
    """Runs `script` (this one unless named) with `argv` in a new process, so a new JVM with the full JIT,
    and returns its `RESULT` line's JSON (tests/processes.py)."""
    return run_script(Path(script), argv, timeout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("workload", choices=WORKLOADS)
    parser.add_argument("provider_class")
    parser.add_argument("--sizes", type=int, nargs="+", required=True, help="keys per store at each rung")
    parser.add_argument("--partitions", type=int, default=2)
    parser.add_argument("--rows-per-batch", type=int, default=200_000)
    parser.add_argument("--progress-out", help="also write every batch's progress (JSON list) to this file")
    parser.add_argument("--steady", type=int, default=4, help="steady batches per rung, warm-up included")
    parser.add_argument("--warmup", type=int, default=1,
                        help="steady batches left out before the counted ones (the work a fill leaves behind)")
    parser.add_argument("--driver-memory", default="8g")
    parser.add_argument("--workdir", required=True, help="where the checkpoint goes (a new directory, removed at the end)")
    parser.add_argument("--conf", action="append", default=[], help="KEY=VALUE, a Spark setting")
    parser.add_argument("--read-profile", action="store_true",
                        help="count ttlstore's reads in RocksDB's statistics and give them per rung")
    parser.add_argument("--jfr", help="record the run with Java Flight Recorder into this file")
    parser.add_argument("--trigger-interval", default=None,
                        help="the query's processing-time trigger (default: 0 seconds; with --read-profile 4 seconds)")
    args = parser.parse_args()
    if args.trigger_interval is None:
        args.trigger_interval = "4 seconds" if args.read_profile else "0 seconds"
    if args.read_profile:
        args.conf.append(f"{hooks.ROCKSDB_STATISTICS}=true")
    if not 0 <= args.warmup < args.steady:
        parser.error(f"--warmup {args.warmup} must leave at least one of the --steady {args.steady} batches counted")
    os.makedirs(args.workdir, exist_ok=True)
    print("RESULT " + json.dumps(run(args)), flush=True)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
