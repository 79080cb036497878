"""A store answers a read of a key it certainly does not hold from a filter on the JVM heap, without asking
RocksDB (docs/performance.md, "New keys"): a store that starts from the empty state has one at once; one
restored from a snapshot builds it by a scan in the background after its first commit. A wrong "absent" shows
as a key deduplicated twice, so the query runs several batches after a restart from a snapshot, each mixing
keys stored before the restart, keys of the batches since and new keys, against Spark's HDFS provider.
``jvm/.../KeyIndexSuite`` checks the filter at the store: the scan, the writes while it runs, its rebuild.
"""

from __future__ import annotations

import time
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql.types import LongType, StructField, StructType

import ttlstore

from conftest import HDFS_PROVIDER, TTL_PROVIDER, restoring, unload_state_stores, write_round

KEYS = StructType([StructField("key", LongType())])
PER_BATCH = 6_000
BEFORE = [list(range(b * PER_BATCH, (b + 1) * PER_BATCH)) for b in range(3)]
# After the restart: a third stored before it, a third of the batch before (or new, in the first), a third new.
AFTER = [
    list(range(b * 2_000, (b + 1) * 2_000))
    + (list(range(100_000 + (b - 1) * 2_000, 100_000 + b * 2_000)) if b > 0 else [])
    + list(range(100_000 + b * 2_000, 100_000 + (b + 1) * 2_000))
    for b in range(6)
]


def run(spark: SparkSession, workdir: Path, batches: list[list[int]], first: int) -> None:
    """Adds one file per batch and runs the deduplication over all of them at once (one batch per file)."""
    for i, keys in enumerate(batches):
        write_round(workdir / "input", first + i, [{"key": k} for k in keys])
    query = (spark.readStream.schema(KEYS).option("maxFilesPerTrigger", 1).json(str(workdir / "input"))
             .dropDuplicates(["key"]).writeStream.format("json").option("path", str(workdir / "output"))
             .option("checkpointLocation", str(workdir / "checkpoint")).trigger(availableNow=True).start())
    query.awaitTermination()
    assert query.exception() is None
    assert len([p for p in query.recentProgress if p["numInputRows"] > 0]) == len(batches)


def deduplicate_across_a_restart(spark: SparkSession, workdir: Path, provider: str) -> list[int]:
    with restoring(spark, [ttlstore.settings.PROVIDER_CLASS_KEY, "spark.sql.streaming.stateStore.minDeltasForSnapshot"]):
        spark.conf.set(ttlstore.settings.PROVIDER_CLASS_KEY, provider)
        spark.conf.set("spark.sql.streaming.stateStore.minDeltasForSnapshot", "2")
        run(spark, workdir, BEFORE, 0)
        if provider == TTL_PROVIDER:
            deadline = time.monotonic() + 60  # maintenance (every second here) uploads the snapshots
            while len(list((workdir / "checkpoint" / "state").rglob("ttlstore/*.snapshot"))) < 2:
                assert time.monotonic() < deadline, "no snapshot uploaded for both stores"
                time.sleep(0.5)
        unload_state_stores(spark)
        run(spark, workdir, AFTER, len(BEFORE))
        return sorted(r.key for r in spark.read.schema(KEYS).json(str(workdir / "output")).collect())


def test_a_deduplication_restarted_from_a_snapshot_drops_every_key_it_held_in_each_batch_after(
    spark: SparkSession, tmp_path: Path
):
    ours = deduplicate_across_a_restart(spark, tmp_path / "ours", TTL_PROVIDER)
    reference = deduplicate_across_a_restart(spark, tmp_path / "reference", HDFS_PROVIDER)
    assert ours == reference
    assert ours == sorted({k for batch in BEFORE + AFTER for k in batch})
