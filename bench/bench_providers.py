"""The providers the benchmarks compare and where their results go: shared by bench/run_bench.py and the runners
it calls (bounded_memory.py, latency.py), which import this module, never run_bench."""

from __future__ import annotations

from pathlib import Path

from ttlstore._lines import SPARK_LINES, installed_line

ROOT = Path(__file__).resolve().parents[1]
# The line of the pyspark that runs the bench: the development line's results and report are
# bench-output/ and docs/benchmarks.md, another line's (make bench-line) bench-output/spark-<line>/
# and docs/benchmarks-spark-<line>.md.
LINE, _ = installed_line()
DEV_LINE = SPARK_LINES[-1]
OUT = ROOT / "bench-output" if LINE == DEV_LINE else ROOT / "bench-output" / f"spark-{LINE}"

PROVIDERS = {
    "hdfs": ("HDFS provider", "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider", {}),
    "rocksdb": ("RocksDB provider", "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider", {}),
    "rocksdb-changelog": (
        "RocksDB provider + changelog",
        "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider",
        {"spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled": "true"},
    ),
    "ttlstore": ("ttlstore", "io.ttlstore.TtlStateStoreProvider", {}),
    "ttlstore-ttl": ("ttlstore, TTL on", "io.ttlstore.TtlStateStoreProvider",
                     {"spark.sql.streaming.stateStore.ttlstore.ttl": "1 day"}),
    "ttlstore-sweep": ("ttlstore, TTL on, JVM sweep only", "io.ttlstore.TtlStateStoreProvider",
                       {"spark.sql.streaming.stateStore.ttlstore.ttl": "1 day",
                        "spark.sql.streaming.stateStore.ttlstore.nativeFilter.enabled": "false"}),
    # The read-ahead turned off (docs/read-ahead.md), for its cost where every read is local: asked by name only.
    "ttlstore-ttl-no-read-ahead": ("ttlstore, TTL on, no read-ahead", "io.ttlstore.TtlStateStoreProvider",
                                   {"spark.sql.streaming.stateStore.ttlstore.ttl": "1 day",
                                    "spark.sql.streaming.stateStore.ttlstore.readAhead.rows": "0"}),
    # Checkpoint format v2 (checkpoint ids), measured by the latency workload only.
    "rocksdb-changelog-v2": (
        "RocksDB provider + changelog, format v2",
        "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider",
        {"spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled": "true",
         "spark.sql.streaming.stateStore.checkpointFormatVersion": "2"},
    ),
    "ttlstore-v2": ("ttlstore, format v2", "io.ttlstore.TtlStateStoreProvider",
                    {"spark.sql.streaming.stateStore.checkpointFormatVersion": "2"}),
}

#: Providers a run measures only when named (--providers).
ON_REQUEST = {"ttlstore-ttl-no-read-ahead"}
