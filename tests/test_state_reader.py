"""Spark's state data source on ttlstore checkpoints, against the same query on Spark's HDFS provider.

The queries are the operator scenarios of test_operators_differential.py.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from chispa import assert_df_equality
from pyspark.sql import SparkSession
from state_scenarios import JOIN, READ_SCENARIOS, SCENARIOS, checkpoints, read
from ttl_rounds import EVENTS, clock_at, rows

import ttlstore

from conftest import HAS_STATE_READER, NOT_IN_SPARK_3_5, TTL_PROVIDER, core_params, run_rounds

pytestmark = pytest.mark.skipif(not HAS_STATE_READER, reason=NOT_IN_SPARK_3_5)

P = ttlstore.settings.PREFIX


@pytest.mark.parametrize("name", core_params(READ_SCENARIOS, ["session windows"]))
def test_the_state_at_each_batch_reads_as_on_spark_s_hdfs_provider(spark: SparkSession, shared_runs: Path, name: str):
    paths = checkpoints(spark, shared_runs, name)
    sides = [{"joinSide": "left"}, {"joinSide": "right"}] if name == JOIN else [{}]
    rows_read = 0
    for batch_id in range(len(SCENARIOS[name].rounds)):
        for side in sides:
            hdfs, ours = (read(spark, paths[p], batchId=batch_id, **side) for p in ("hdfs", "ttlstore"))
            assert_df_equality(ours, hdfs, ignore_row_order=True, ignore_nullable=True)
            rows_read += ours.count()
    assert rows_read > 0
    hdfs, ours = (spark.read.format("state-metadata").load(str(paths[p])) for p in ("hdfs", "ttlstore"))
    assert ours.count() > 0
    assert_df_equality(ours, hdfs, ignore_row_order=True, ignore_nullable=True)


@pytest.mark.parametrize("name", core_params([n for n in READ_SCENARIOS if n != JOIN], ["dropDuplicates"]))
def test_the_change_feed_reads_as_on_spark_s_hdfs_provider(spark: SparkSession, shared_runs: Path, name: str):
    paths = checkpoints(spark, shared_runs, name)
    last = len(SCENARIOS[name].rounds) - 1
    for start, end in ((0, last), (2, 3)):
        hdfs, ours = (read(spark, paths[p], readChangeFeed="true", changeStartBatchId=start, changeEndBatchId=end)
                      for p in ("hdfs", "ttlstore"))
        assert ours.count() > 0
        assert_df_equality(ours, hdfs, ignore_row_order=True, ignore_nullable=True)


def test_a_snapshot_that_does_not_exist_is_named_with_the_ones_that_do(spark: SparkSession, shared_runs: Path):
    ours = checkpoints(spark, shared_runs, "dropDuplicates")["ttlstore"]
    with pytest.raises(Exception, match=r"SNAPSHOT_NOT_FOUND.*snapshotStartBatchId"):
        read(spark, ours, snapshotStartBatchId=0, snapshotPartitionId=0).collect()


@pytest.mark.every_line
def test_the_reader_judges_expiry_with_the_ttl_recorded_for_the_version_not_its_own_settings(
    spark: SparkSession, tmp_path: Path
):
    ttl = ttlstore.StateTtlConfig(timedelta(minutes=10))
    run = run_rounds(
        spark, TTL_PROVIDER, tmp_path, EVENTS, lambda s: s.dropDuplicates(["key"]),
        [rows("a"), rows("b"), rows("c")], "append",
        extra_conf=ttl.to_spark_conf(), round_conf=clock_at([0, 5, 12]),
    )

    def keys(**options: object) -> list[str]:
        return sorted(r.key.key for r in read(spark, run.checkpoint, **options).collect())

    # At 12 min (the last batch) "a", written at 0, had expired; at 5 min nothing had.
    expected = {"latest": ["b", "c"], "batch 1": ["a", "b"]}
    for settings in ({}, ttlstore.StateTtlConfig(timedelta(days=1)).to_spark_conf(), {P + "ttl": "1 ms"}):
        previous = {k: spark.conf.get(k, None) for k in settings}
        for k, v in settings.items():
            spark.conf.set(k, v)
        try:
            assert {"latest": keys(), "batch 1": keys(batchId=1)} == expected, settings
        finally:
            for k, v in previous.items():
                spark.conf.unset(k) if v is None else spark.conf.set(k, v)
