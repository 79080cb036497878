"""The ttlstore demo: what state TTL buys, on the same streaming deduplication with and without it.

Run it with ``make demo`` (or ``python -m ttlstore.demo``). It starts a local Spark session
configured by :func:`ttlstore.configure`, runs two copies of one job side by side (a generated
stream of user events, deduplicated by user id), the first without TTL and the second with one,
prints the state rows of both after each micro-batch, writes a chart of them as a PNG next to the
checkpoints, and stops by itself.
"""

from __future__ import annotations

import argparse
import shutil
import time
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming.query import StreamingQuery

import ttlstore
from ttlstore._ttl import duration_ms

COLUMNS = (
    ("batch", 5),
    ("input rows", 10),
    ("state rows, no TTL", 18),
    ("state rows, TTL", 15),
    ("+ new", 9),
    ("- expired", 9),
    ("filter dropped", 14),
    ("commit ms (TTL)", 15),
)
"""The TTL job's columns add up: its state rows are the previous batch's, plus the new rows its
batch stored (``numRowsUpdated``), minus the rows that expired (``ttlstoreRowsExpired``: on access,
by the sweep, before a snapshot or by the native filter). "filter dropped" is what the native
compaction filter removed from the disk (``ttlstoreExpiredRemovedByFilter``), older versions of a
key included: the disk's side of expiry, not a part of the sum."""


def format_row(values: list[str]) -> str:
    return "  ".join(v.rjust(width) for v, (_name, width) in zip(values, COLUMNS, strict=False))


def progress_row(plain: dict[str, Any], ttl: dict[str, Any]) -> list[str]:
    plain_state, ttl_state = plain["stateOperators"][0], ttl["stateOperators"][0]
    custom = ttl_state.get("customMetrics", {})
    return [
        str(plain["batchId"]),
        f"{plain['numInputRows']:,}",
        f"{plain_state['numRowsTotal']:,}",
        f"{ttl_state['numRowsTotal']:,}",
        f"{ttl_state['numRowsUpdated']:,}",
        f"{custom.get('ttlstoreRowsExpired', 0):,}",
        f"{custom.get('ttlstoreExpiredRemovedByFilter', 0):,}",
        f"{ttl_state['commitTimeMs']:,}",
    ]


def write_chart(path: Path, plain: list[int], ttl: list[int], ttl_text: str) -> bool:
    """Plots state rows per batch for both jobs; False if matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, ax = plt.subplots(figsize=(7, 4))
    batches = list(range(len(plain)))
    ax.plot(batches, plain, marker="o", label="without TTL")
    ax.plot(batches, ttl, marker="o", label=f"with TTL ({ttl_text})")
    ax.set_xlabel("micro-batch")
    ax.set_ylabel("state rows (numRowsTotal)")
    ax.set_title("dropDuplicates(user_id) on ttlstore")
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def start(spark: SparkSession, events: DataFrame, checkpoint: Path, trigger: str) -> StreamingQuery:
    return (
        events.dropDuplicates(["user_id"])
        .writeStream.format("noop")
        .option("checkpointLocation", str(checkpoint))
        .trigger(processingTime=trigger)
        .start()
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Deduplicate a generated event stream on ttlstore, "
                                                 "without and with state TTL.")
    parser.add_argument("--batches", type=int, default=12, help="micro-batches to run (default 12)")
    parser.add_argument("--rows-per-batch", type=int, default=50_000, help="events per micro-batch")
    parser.add_argument("--users", type=int, default=2_000_000, help="distinct user ids in the stream")
    parser.add_argument("--ttl", default="4 seconds", help="the TTL of the second job (default 4 seconds)")
    parser.add_argument("--trigger", default="1 second", help="micro-batch interval (default 1 second)")
    parser.add_argument("--output", default="demo-output", help="directory for checkpoints and the chart")
    args = parser.parse_args(argv)
    ttl_ms = duration_ms(args.ttl)

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
    # and repeated users arrive mixed, as in real traffic. Both jobs read the same generated stream.
    events = (
        spark.readStream.format("rate-micro-batch")
        .option("rowsPerBatch", args.rows_per_batch)
        .load()
        .select(F.pmod(F.xxhash64("value"), F.lit(args.users)).alias("user_id"), F.col("timestamp"))
    )
    # ttlstore's settings are read when a query starts: the first job starts without TTL.
    plain = start(spark, events, output / "checkpoint-no-ttl", args.trigger)
    ttlstore.apply_ttl(spark, ttlstore.StateTtlConfig(ttl_ms))
    with_ttl = start(spark, events, output / "checkpoint-ttl", args.trigger)

    print(f"ttlstore {ttlstore.__version__}: dropDuplicates(user_id) over {args.users:,} users, "
          f"{args.rows_per_batch:,} events per batch, twice: without TTL and with TTL "
          f"{args.ttl}. State in {output}\n")
    print(format_row([name for name, _width in COLUMNS]))
    rows_plain: list[int] = []
    rows_ttl: list[int] = []
    try:
        while len(rows_plain) < args.batches:
            for query in (plain, with_ttl):
                if query.exception() is not None:
                    raise SystemExit(f"the query failed: {query.exception()}")
            done_plain = [p for p in plain.recentProgress if p["numInputRows"] > 0]
            done_ttl = [p for p in with_ttl.recentProgress if p["numInputRows"] > 0]
            for a, b in zip(done_plain[len(rows_plain) : args.batches], done_ttl[len(rows_plain) : args.batches], strict=False):
                print(format_row(progress_row(a, b)), flush=True)
                rows_plain.append(a["stateOperators"][0]["numRowsTotal"])
                rows_ttl.append(b["stateOperators"][0]["numRowsTotal"])
            time.sleep(0.2)
    finally:
        # Stopping interrupts the batch in flight, which Spark logs as errors: not news here.
        spark.sparkContext.setLogLevel("OFF")
        plain.stop()
        with_ttl.stop()
        spark.stop()
    chart = output / "state-rows.png"
    if write_chart(chart, rows_plain, rows_ttl, args.ttl):
        print(f"\nChart: {chart}")
    else:
        print("\n(matplotlib is not installed: no chart; `pip install matplotlib` for one)")
    print(f"Without TTL the state holds every user seen so far and grows with every batch; with TTL "
          f"{args.ttl} it holds only the users seen within the TTL and stays flat.")


if __name__ == "__main__":
    main()
