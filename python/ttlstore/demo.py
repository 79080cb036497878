"""The ttlstore demo: a streaming deduplication job on ttlstore, with its state figures per batch.

Run it with ``make demo`` (or ``python -m ttlstore.demo``). It starts a local Spark session
configured by :func:`ttlstore.configure`, deduplicates a generated stream of user events by user
id, prints what ttlstore reports after each micro-batch, and stops by itself.
"""

from __future__ import annotations

import argparse
import shutil
import time
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

import ttlstore

COLUMNS = (
    ("batch", 5),
    ("input rows", 10),
    ("emitted", 8),
    ("state rows", 10),
    ("state MiB", 9),
    ("commit ms", 9),
    ("changelog KiB", 13),
    ("SST KiB", 8),
)


def format_row(values: list[str]) -> str:
    return "  ".join(v.rjust(width) for v, (_name, width) in zip(values, COLUMNS))


def progress_row(progress: dict) -> list[str]:
    state = progress["stateOperators"][0]
    custom = state.get("customMetrics", {})
    return [
        str(progress["batchId"]),
        f"{progress['numInputRows']:,}",
        f"{progress['sink'].get('numOutputRows', 0):,}",
        f"{state['numRowsTotal']:,}",
        f"{state['memoryUsedBytes'] / 2**20:.1f}",
        f"{state['commitTimeMs']:,}",
        f"{custom.get('ttlstoreChangelogBytes', 0) / 1024:,.0f}",
        f"{custom.get('ttlstoreSstBytes', 0) / 1024:,.0f}",
    ]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Deduplicate a generated event stream on ttlstore.")
    parser.add_argument("--batches", type=int, default=12, help="micro-batches to run (default 12)")
    parser.add_argument("--rows-per-batch", type=int, default=50_000, help="events per micro-batch")
    parser.add_argument("--users", type=int, default=2_000_000, help="distinct user ids in the stream")
    parser.add_argument("--output", default="demo-output", help="directory for the checkpoint")
    args = parser.parse_args(argv)

    output = Path(args.output).resolve()
    shutil.rmtree(output, ignore_errors=True)
    log_conf = Path("conf/log4j2.properties").resolve()
    builder = (
        SparkSession.builder.master("local[*]")
        .appName("ttlstore-demo")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "4")
    )
    if log_conf.is_file():
        builder = builder.config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={log_conf}")
    spark = ttlstore.configure(builder).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")

    # Each event names a user; a user seen before is a duplicate. Ids are scrambled so that new
    # and repeated users arrive mixed, as in real traffic.
    events = (
        spark.readStream.format("rate-micro-batch")
        .option("rowsPerBatch", args.rows_per_batch)
        .load()
        .select(F.pmod(F.xxhash64("value"), F.lit(args.users)).alias("user_id"), F.col("timestamp"))
    )
    query = (
        events.dropDuplicates(["user_id"])
        .writeStream.format("noop")
        .option("checkpointLocation", str(output / "checkpoint"))
        .trigger(processingTime="0 seconds")
        .start()
    )

    print(f"ttlstore {ttlstore.__version__}: dropDuplicates(user_id) over {args.users:,} users, "
          f"{args.rows_per_batch:,} events per batch, state in {output / 'checkpoint'}\n")
    print(format_row([name for name, _width in COLUMNS]))
    printed = 0
    try:
        while printed < args.batches:
            if query.exception() is not None:
                raise SystemExit(f"the query failed: {query.exception()}")
            reports = [p for p in query.recentProgress if p["numInputRows"] > 0]
            for progress in reports[printed : args.batches]:
                print(format_row(progress_row(progress)), flush=True)
                printed += 1
            time.sleep(0.2)
    finally:
        # Stopping interrupts the batch in flight, which Spark logs as errors: not news here.
        spark.sparkContext.setLogLevel("OFF")
        query.stop()
        spark.stop()
    print("\nDone: the state holds every user seen so far, so it grew with every batch.")


if __name__ == "__main__":
    main()
