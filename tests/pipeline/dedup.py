"""The pipeline's driver (tests/test_kafka_pipeline.py, `make pipeline-demo`): a Kafka topic's events (JSON: id,
event_time, payload) deduplicated on (id, event_time) into a table: a Parquet table by Spark's file sink, which
commits each batch's files in its log exactly once, or a Delta table by Delta's sink, which commits each batch as a
table version at most once (its log records the query's last batch). On ttlstore the deduplication forgets an event
``--ttl`` of event time after it, so a redelivery within the TTL is dropped and one after it is kept; on Spark's
HDFS provider it never forgets.

``python dedup.py --bootstrap HOST:PORT --topic T --table DIR --checkpoint DIR --provider ttlstore|hdfs
--connector DIR --ttl 7200s [--delta DIR] [--until-idle]``: with ``--delta`` (the directory of Delta's jars) the
table is a Delta table; with ``--until-idle`` the query reads what the topic holds and stops
(Trigger.AvailableNow), else it runs until it is stopped or killed. It prints a line per batch, and a ``RESULT``
line with the batches it ran once it stops.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming import StreamingQuery

import ttlstore

HDFS = "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider"
SCHEMA = "id string, event_time timestamp, payload string"


#: Delta's session extension and catalog, as Delta's docs configure a session.
DELTA_SETTINGS = {"spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
                  "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog"}


def _jars(directory: Path, what: str, fetched: str) -> list[str]:
    jars = [str(j) for j in sorted(directory.glob("*.jar"))]
    if not jars:
        raise FileNotFoundError(f"{what} is not in {directory}: run `make {fetched}`")
    return jars


def session(provider: str, connector: Path, ttl: str, delta: Path | None = None) -> SparkSession:
    """The driver's session; with ``delta`` (the directory of Delta's jars) one that writes Delta tables. Delta's
    extension is set before ttlstore.configure(), which adds ttlstore's to the extensions already set."""
    jars = _jars(connector, "Spark's Kafka connector", ".build/kafka/.fetched")
    if delta is not None:
        jars += _jars(delta, "Delta Lake", ".build/delta/.fetched")
    builder = (SparkSession.builder.master("local[2]").appName(f"kafka-dedup-{provider}")
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.jars", ",".join(jars)))
    for key, value in (DELTA_SETTINGS if delta is not None else {}).items():
        builder = builder.config(key, value)
    if provider == "ttlstore":
        builder = ttlstore.configure(builder, ttl=ttl, time_characteristic="EventTime", event_time_column="event_time")
    else:
        builder = builder.config(ttlstore.settings.PROVIDER_CLASS_KEY, HDFS)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def events(spark: SparkSession, bootstrap: str, topic: str, max_offsets: int) -> DataFrame:
    return (spark.readStream.format("kafka").option("kafka.bootstrap.servers", bootstrap).option("subscribe", topic)
            .option("startingOffsets", "earliest").option("maxOffsetsPerTrigger", max_offsets).load()
            .select(F.from_json(F.col("value").cast("string"), SCHEMA).alias("e")).select("e.*"))


def progress_line(p: dict) -> str:
    state = p["stateOperators"][0] if p.get("stateOperators") else {}
    expired = state.get("customMetrics", {}).get("ttlstoreRowsExpired")
    return (f"batch {p['batchId']}: {p['numInputRows']} events in, {state.get('numRowsUpdated', '?')} new to the "
            f"table, {state.get('numRowsTotal', '?')} remembered" + ("" if expired is None else f", {expired} expired"))


def start(spark: SparkSession, bootstrap: str, topic: str, table: str, checkpoint: str, max_offsets: int = 500,
          until_idle: bool = False, table_format: str = "parquet") -> StreamingQuery:
    unique = events(spark, bootstrap, topic, max_offsets).dropDuplicates(["id", "event_time"])
    writer = unique.writeStream.format(table_format).option("path", table).option("checkpointLocation", checkpoint)
    return (writer.trigger(availableNow=True) if until_idle else writer).start()


def table_events(spark: SparkSession, table: Path, table_format: str = "parquet") -> Counter[tuple[str, datetime]]:
    """The events the table holds, each (id, event time) with how many rows hold it (its committed files alone:
    Spark reads the file sink's log, Delta its own)."""
    rows = spark.read.format(table_format).load(str(table)).select("id", F.unix_millis("event_time")).collect()
    return Counter((r[0], datetime.fromtimestamp(r[1] / 1000, timezone.utc)) for r in rows)


def follow(query: StreamingQuery, going: Callable[[], bool], shown: int = -1) -> int:
    """Prints a line for each batch after ``shown`` that the query runs while ``going()``; returns the last shown."""
    while True:
        for p in query.recentProgress:
            if p["batchId"] > shown:
                print(progress_line(p), flush=True)
                shown = p["batchId"]
        if not going():
            return shown
        time.sleep(0.2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bootstrap", required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--table", required=True)
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--provider", choices=["ttlstore", "hdfs"], required=True)
    parser.add_argument("--connector", required=True, type=Path, help="the directory of Spark's Kafka connector jars")
    parser.add_argument("--ttl", required=True, help="how long of event time an event is remembered")
    parser.add_argument("--delta", type=Path, help="the directory of Delta's jars: write a Delta table")
    parser.add_argument("--max-offsets", type=int, default=500, help="maxOffsetsPerTrigger")
    parser.add_argument("--until-idle", action="store_true")
    parser.add_argument("--report-table", action="store_true",
                        help="once the query stops, add what the table holds to the RESULT line")
    args = parser.parse_args()

    table_format = "delta" if args.delta else "parquet"
    spark = session(args.provider, args.connector, args.ttl, args.delta)
    query = start(spark, args.bootstrap, args.topic, args.table, args.checkpoint, args.max_offsets, args.until_idle,
                  table_format)
    shown = follow(query, lambda: query.isActive)
    query.awaitTermination()
    follow(query, lambda: False, shown)
    result: dict[str, object] = {"batches": [p["batchId"] for p in query.recentProgress]}
    if args.report_table:
        held = table_events(spark, Path(args.table), table_format)
        result["table"] = [[key, at.isoformat(), n] for (key, at), n in held.items()]
    print("RESULT " + json.dumps(result), flush=True)
    spark.stop()


if __name__ == "__main__":
    main()
