"""Spark's own state store settings on ttlstore.

A user who moves a query to ttlstore keeps the Spark configuration it ran with. With every one of
Spark's state store settings set away from its default, a query on ttlstore emits what Spark's HDFS
provider emits with the same settings: none of them breaks a query or changes its results. What
ttlstore does with each (honours it, leaves it to Spark, always does what it turns on, or has nothing
it applies to) is io.ttlstore.config.SparkStateSettings, the table docs/configuration.md shows; the
ScalaTest SparkStateSettingsSuite keeps that table complete against Spark's own list of settings, and
the tests named in its rows show each behaviour.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from operator_scenarios import SCENARIOS, Scenario, assert_same_rows, run_scenario
from pyspark.errors import StreamingQueryException
from pyspark.sql import SparkSession
from ttl_rounds import EVENTS, rows

from conftest import CAPABILITIES, HDFS_PROVIDER, TTL_PROVIDER, run_rounds

P = "spark.sql.streaming.stateStore."

#: Every state store setting of Spark 4.3 that a query may set, away from its default (a line without
#: one of them ignores it).
AWAY_FROM_DEFAULTS = {
    P + "minDeltasForSnapshot": "2",
    "spark.sql.streaming.minBatchesToRetain": "2",
    "spark.sql.streaming.maxBatchesToRetainInMemory": "0",
    "spark.sql.streaming.ratioExtraSpaceAllowedInCheckpoint": "0",
    P + "maxVersionsToDeletePerMaintenance": "1",
    P + "compression.codec": "zstd",
    P + "autoSnapshotRepair.numFailuresBeforeActivating": "2",
    P + "autoSnapshotRepair.maxChangeFileReplay": "50",
    P + "rowChecksum.enabled": "true",
    P + "rowChecksum.readVerificationRatio": "1",
    "spark.sql.streaming.checkpoint.fileChecksum.skipCreationIfFileMissingChecksum": "false",
    P + "fileChecksumThreadPoolSize": "0",
    P + "formatValidation.enabled": "false",
    "spark.sql.streaming.checkpoint.fileChecksum.enabled": "false",
    P + "skipNullsForStreamStreamJoins.enabled": "true",
    P + "unloadOnCommit": "true",
    P + "maintenanceInterval": "200ms",
    P + "snapshotToCleanupThreadRatio": "0.25",
    P + "numStateStoreMaintenanceThreads": "3",
    P + "maintenanceProcessingTimeout": "60s",
    P + "maintenanceShutdownTimeout": "120s",
    P + "maintenanceForceShutdownTimeout": "30s",
    P + "coordinatorReportSnapshotUploadLag": "false",
    P + "snapshotLagReportInterval": "1s",
    P + "multiplierForMinVersionDiffToLog": "1",
    P + "multiplierForMinTimeDiffToLog": "1",
    P + "maxLaggingStoresToReport": "1",
    P + "forceSnapshotUploadOnLag": "false",
    P + "numStateStoreInstanceMetricsToReport": "1",
    P + "rocksdb.changelogCheckpointing.enabled": "true",
}

CHOSEN = [s for s in SCENARIOS if s.name in ("aggregation without watermark", "stream-stream left outer join")]


@pytest.mark.parametrize("scenario", CHOSEN, ids=[s.name for s in CHOSEN])
def test_with_every_spark_state_setting_away_from_its_default_ttlstore_emits_what_spark_s_provider_does(
    spark: SparkSession, tmp_path: Path, scenario: Scenario
):
    reference = run_scenario(spark, HDFS_PROVIDER, tmp_path / "hdfs", scenario, AWAY_FROM_DEFAULTS)
    ours = run_scenario(spark, TTL_PROVIDER, tmp_path / "ttlstore", scenario, AWAY_FROM_DEFAULTS)

    assert_same_rows(spark, reference, ours, scenario)
    assert list((ours.checkpoint / "state").rglob("ttlstore/*.changelog")), "the rows went through ttlstore"


def schema_change_failure(spark: SparkSession, provider: str, workdir: Path) -> str | None:
    """A dedup on `key`, restarted as a dedup on `key` and `t` (another state schema): Spark's condition
    for the restart's failure."""
    run_rounds(spark, provider, workdir, EVENTS, lambda s: s.dropDuplicates(["key"]), [rows("a")], "append")
    try:
        run_rounds(spark, provider, workdir, EVENTS, lambda s: s.dropDuplicates(["key", "t"]), [rows("b")], "append",
                   first_round=1)
    except StreamingQueryException as e:
        return next(iter(re.findall(r"\[(STATE_STORE_[A-Z_]+)\]", str(e))), str(e)[:300])
    return None


def test_spark_s_state_schema_check_fails_a_changed_query_on_ttlstore_as_on_spark_s_provider(
    spark: SparkSession, tmp_path: Path
):
    expected = schema_change_failure(spark, HDFS_PROVIDER, tmp_path / "hdfs")
    assert expected is not None and expected.startswith("STATE_STORE_"), expected
    assert schema_change_failure(spark, TTL_PROVIDER, tmp_path / "ttlstore") == expected


@pytest.mark.skipif(not CAPABILITIES["encodingFormat"], reason="the encoding format came with Spark 4.0")
def test_spark_refuses_the_avro_encoding_for_classic_operators_whichever_the_provider(spark: SparkSession, tmp_path: Path):
    for provider in (HDFS_PROVIDER, TTL_PROVIDER):
        with pytest.raises(Exception, match="encoding format as avro is not supported for operator=aggregation"):
            run_scenario(spark, provider, tmp_path / provider.rsplit(".", 1)[1], CHOSEN[0], {P + "encodingFormat": "avro"})
