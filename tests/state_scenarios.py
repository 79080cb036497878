"""State written by the operators' scenarios and read back: the checkpoints of one scenario on Spark's
HDFS provider and on ttlstore, Spark's state reader over them, and a TTL'd deduplication whose state
``read_state`` shows (test_state_reader.py, test_read_state.py and the suites that read state too).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from operator_scenarios import SCENARIOS as OPERATOR_SCENARIOS
from operator_scenarios import shared_run
from pyspark.sql import DataFrame, SparkSession
from ttl_rounds import EVENTS, MINUTE, T0, clock_at, rows

import ttlstore

from conftest import HDFS_PROVIDER, TTL_PROVIDER, run_rounds

SCENARIOS = {s.name: s for s in OPERATOR_SCENARIOS}
READ_SCENARIOS = ["aggregation without watermark", "dropDuplicates", "applyInPandasWithState", "session windows",
                  "stream-stream left outer join"]
JOIN = "stream-stream left outer join"


def checkpoints(spark: SparkSession, shared_runs: Path, name: str, conf: dict[str, str] | None = None,
                reference: tuple[str, str] = ("hdfs", HDFS_PROVIDER)) -> dict[str, Path]:
    """The checkpoints the scenario `name` leaves on the `reference` provider and on ttlstore (runs shared with the
    differential tests: read them, never write into them)."""
    paths = {}
    for label, provider in (reference, ("ttlstore", TTL_PROVIDER)):
        checkpoint = shared_run(spark, shared_runs, provider, SCENARIOS[name], conf).checkpoint
        assert checkpoint is not None
        paths[label] = checkpoint
    return paths


def read(spark: SparkSession, checkpoint: Path, **options: object) -> DataFrame:
    reader = spark.read.format("statestore")
    for key, value in options.items():
        reader = reader.option(key, str(value))
    return reader.load(str(checkpoint))


# Expired rows stay stored until something removes them: no sweep, no native filter.
KEEP_EXPIRED = {
    ttlstore.settings.OPTIONS["sweep_rows_per_commit"][0]: "0",
    ttlstore.settings.OPTIONS["native_filter"][0]: "false",
}


def at(minutes: float) -> datetime:
    """The session-local wall-clock time of T0 + minutes, as Spark returns timestamps."""
    return datetime.fromtimestamp((T0 + minutes * MINUTE) / 1000)


def dedup_with_ttl(spark: SparkSession, tmp_path: Path, ttl: timedelta | None):
    conf = dict(KEEP_EXPIRED)
    if ttl is not None:
        conf.update(ttlstore.StateTtlConfig(ttl).to_spark_conf())
    return run_rounds(
        spark, TTL_PROVIDER, tmp_path, EVENTS, lambda s: s.dropDuplicates(["key"]),
        [rows("a"), rows("b"), rows("c")], "append", extra_conf=conf, round_conf=clock_at([0, 5, 12]),
    )


def by_key(df) -> dict[str, tuple]:
    return {r.key.key: (r.written_at, r.expires_at, r.expired) for r in df.collect()}
