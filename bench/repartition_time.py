"""Offline repartition of a stopped query's state: ttlstore's against Spark's own (`make bench`).

One aggregation (count per key, update mode, local[2]) with KEYS distinct keys in FROM_PARTITIONS
state partitions is built once per provider, from FILES parquet files read one per batch
(availableNow, so the query stops by itself with every batch committed). Each measurement then
repartitions a fresh copy of that checkpoint to TO_PARTITIONS: on Spark's RocksDB provider with
Spark 4.3's `spark._streamingCheckpointManager.repartition` in a session started beforehand (the
session's start is not counted), on ttlstore with `ttlstore.repartition`, a plain JVM whose start is
counted. Interleaved repeats; medians with their range. Run as a script it does one step and prints
`RESULT {json}`.
"""

from __future__ import annotations

import json
import shutil
import statistics
import sys
import time
from pathlib import Path

import ladder

KEYS = 1_000_000
FILES = 4
FROM_PARTITIONS = 4
TO_PARTITIONS = 8
TIME_PROVIDERS = ("rocksdb", "ttlstore")


def session(provider_class: str):  # type: ignore[no-untyped-def]
    from pyspark.sql import SparkSession

    import ttlstore

    builder = (SparkSession.builder.master("local[2]").appName("repartition-time")
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.driver.memory", "4g").config("spark.sql.shuffle.partitions", str(FROM_PARTITIONS)))
    spark = ttlstore.configure(builder).config(ttlstore.settings.PROVIDER_CLASS_KEY, provider_class).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def build(provider_class: str, work: Path) -> dict:
    spark = session(provider_class)
    source = work / "input"
    spark.range(KEYS).selectExpr("id AS key").repartition(FILES).write.parquet(str(source))
    counts = (spark.readStream.schema("key long").option("maxFilesPerTrigger", 1).parquet(str(source))
              .groupBy("key").count())
    query = (counts.writeStream.format("noop").outputMode("update")
             .option("checkpointLocation", str(work / "checkpoint")).trigger(availableNow=True).start())
    query.awaitTermination()
    rows = query.lastProgress["stateOperators"][0]["numRowsTotal"]
    spark.stop()
    return {"rows": rows}


def spark_repartition(provider_class: str, checkpoint: Path) -> dict:
    spark = session(provider_class)
    start = time.monotonic()
    spark._streamingCheckpointManager.repartition(str(checkpoint), TO_PARTITIONS)
    ms = (time.monotonic() - start) * 1000
    spark.stop()
    return {"ms": ms}


def ttlstore_repartition(checkpoint: Path) -> dict:
    import ttlstore

    start = time.monotonic()
    report = ttlstore.repartition(checkpoint, TO_PARTITIONS)
    ms = (time.monotonic() - start) * 1000
    assert report.action == "repartitioned" and report.operators[0]["stores"][0]["rows"] == KEYS
    return {"ms": ms, "tool_ms": report.duration_ms}


def measure(providers: dict, chosen: list[str], out: Path, repeats: int = 3) -> list[dict]:
    """Builds each provider's checkpoint once, then `repeats` interleaved repartitions of fresh copies."""
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    which = [p for p in TIME_PROVIDERS if p in chosen]
    for provider in which:
        built = ladder.run_in_subprocess(["build", providers[provider][1], str(out / provider)], script=__file__)
        assert built["rows"] == KEYS, built
    results = []
    for repeat in range(repeats):
        for provider in which:
            copy = out / f"{provider}-{repeat}"
            shutil.copytree(out / provider / "checkpoint", copy)
            if provider == "ttlstore":
                r = ttlstore_repartition(copy)
            else:
                r = ladder.run_in_subprocess(["spark", providers[provider][1], str(copy)], script=__file__)
            r.update(provider=provider, measured=time.strftime("%Y-%m-%d"))
            results.append(r)
            shutil.rmtree(copy)
            print(f"repartition {provider:10s} {r['ms']:8.0f} ms", flush=True)
    return results


def report(results: list[dict], providers: dict) -> list[str]:
    if not results:
        return []
    runs: dict[str, list[float]] = {}
    for r in results:
        runs.setdefault(r["provider"], []).append(r["ms"])
    base = statistics.median(runs["rocksdb"]) if "rocksdb" in runs else None
    lines = [
        "## Repartition",
        "",
        f"Measured {results[0]['measured']}. bench/repartition_time.py: an aggregation's state of {KEYS:,} keys "
        f"in {FROM_PARTITIONS} partitions (local[2]), repartitioned offline to {TO_PARTITIONS}: Spark's RocksDB "
        "provider with Spark 4.3's `spark._streamingCheckpointManager.repartition` (its session started beforehand, "
        "not counted), ttlstore with `ttlstore.repartition` (a plain JVM; its start is counted). Each run on a fresh "
        "copy of the same checkpoint; medians of interleaved runs, with their range.",
        "",
        "| provider | runs | repartition (range) | vs Spark's RocksDB provider |",
        "|---|---|---|---|",
    ]
    for provider, ms in runs.items():
        versus = f"{statistics.median(ms) / base:.2f}x" if base else "-"
        lines.append(f"| {providers[provider][0]} | {len(ms)} | {statistics.median(ms):.0f} ms "
                     f"({min(ms):.0f}-{max(ms):.0f}) | {versus} |")
    tool = [r["tool_ms"] for r in results if r["provider"] == "ttlstore"]
    if tool:
        lines += ["", f"Of ttlstore's time, the tool's own work (reading the {FROM_PARTITIONS} stores, spilling, writing "
                  f"{TO_PARTITIONS} snapshots: the report's `duration_ms`) is {statistics.median(tool):.0f} ms in median "
                  f"({min(tool)}-{max(tool)}); the rest is the JVM's start."]
    return lines + [""]


if __name__ == "__main__":
    step = sys.argv[1]
    if step == "build":
        print("RESULT " + json.dumps(build(sys.argv[2], Path(sys.argv[3]))))
    else:
        print("RESULT " + json.dumps(spark_repartition(sys.argv[2], Path(sys.argv[3]))))
