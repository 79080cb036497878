"""ttlstore.read_state: the state of a query on ttlstore, with when each row was written and expires."""

from __future__ import annotations

import threading
import time
from datetime import timedelta
from pathlib import Path

import pytest
from chispa import assert_df_equality
from pyspark.sql import SparkSession
from state_scenarios import JOIN, READ_SCENARIOS, at, by_key, checkpoints, dedup_with_ttl, read
from ttl_rounds import CLOCK_KEY, EVENTS, MINUTE, T0, rows

import ttlstore

from conftest import HAS_STATE_READER, HDFS_PROVIDER, NOT_IN_SPARK_3_5, TTL_PROVIDER, run_rounds, write_round

pytestmark = pytest.mark.skipif(not HAS_STATE_READER, reason=NOT_IN_SPARK_3_5)

P = ttlstore.settings.PREFIX
TIME_COLUMNS = ["written_at", "expires_at", "expired"]


@pytest.mark.every_line
def test_read_state_gives_each_row_its_write_time_and_expiry_and_hides_what_the_query_hid(
    spark: SparkSession, tmp_path: Path
):
    run = dedup_with_ttl(spark, tmp_path, timedelta(minutes=10))

    # At 12 min "a" (written at 0) has expired: hidden, as the query hid it, yet still stored.
    assert by_key(ttlstore.read_state(spark, run.checkpoint)) == {
        "b": (at(5), at(15), False),
        "c": (at(12), at(22), False),
    }
    assert by_key(ttlstore.read_state(spark, run.checkpoint, include_expired=True)) == {
        "a": (at(0), at(10), True),
        "b": (at(5), at(15), False),
        "c": (at(12), at(22), False),
    }
    # After batch 1 (at 5 min) nothing had expired.
    assert by_key(ttlstore.read_state(spark, run.checkpoint, batch_id=1, include_expired=True)) == {
        "a": (at(0), at(10), False),
        "b": (at(5), at(15), False),
    }


def test_a_reading_session_with_another_ttl_gets_the_same_answer(spark: SparkSession, tmp_path: Path):
    run = dedup_with_ttl(spark, tmp_path, timedelta(minutes=10))
    expected = by_key(ttlstore.read_state(spark, run.checkpoint, include_expired=True))
    for settings in (ttlstore.StateTtlConfig(timedelta(days=1)).to_spark_conf(), {P + "ttl": "1 ms"},
                     {CLOCK_KEY: str(T0 + 1000 * MINUTE)}):
        for k, v in settings.items():
            spark.conf.set(k, v)
        try:
            assert by_key(ttlstore.read_state(spark, run.checkpoint, include_expired=True)) == expected
        finally:
            for k in settings:
                spark.conf.unset(k)


def test_without_ttl_rows_have_a_write_time_and_never_expire(spark: SparkSession, tmp_path: Path):
    run = dedup_with_ttl(spark, tmp_path, ttl=None)
    assert by_key(ttlstore.read_state(spark, run.checkpoint)) == {
        "a": (at(0), None, False),
        "b": (at(5), None, False),
        "c": (at(12), None, False),
    }


@pytest.mark.parametrize("name", [n for n in READ_SCENARIOS if n != JOIN])
def test_read_state_holds_the_rows_spark_s_state_reader_reads(spark: SparkSession, shared_runs: Path, name: str):
    ours = checkpoints(spark, shared_runs, name)["ttlstore"]
    for batch_id in (1, 3):
        timed = ttlstore.read_state(spark, ours, batch_id=batch_id)
        assert timed.columns[-3:] == TIME_COLUMNS
        assert timed.filter("written_at is null or expired").count() == 0
        assert_df_equality(timed.drop(*TIME_COLUMNS), read(spark, ours, batchId=batch_id),
                           ignore_row_order=True, ignore_nullable=True)


def test_the_same_columns_are_a_data_source_for_scala_and_sql(spark: SparkSession, tmp_path: Path):
    run = dedup_with_ttl(spark, tmp_path, timedelta(minutes=10))
    view = f"state_{abs(hash(str(tmp_path)))}"
    spark.sql(f"CREATE TEMPORARY VIEW {view} USING {ttlstore.settings.STATE_SOURCE} "
              f"OPTIONS (path '{run.checkpoint}', includeExpired 'true')")
    expired = spark.sql(f"SELECT key.key AS k FROM {view} WHERE expired").collect()
    assert [r.k for r in expired] == ["a"]


def test_a_checkpoint_of_another_provider_is_refused_by_name(spark: SparkSession, tmp_path: Path):
    hdfs = run_rounds(spark, HDFS_PROVIDER, tmp_path, EVENTS, lambda s: s.dropDuplicates(["key"]),
                      [rows("a")], "append")
    with pytest.raises(Exception, match=r"NOT_TTLSTORE_STATE.*format\(\"statestore\"\)"):
        ttlstore.read_state(spark, hdfs.checkpoint).collect()


def test_options_that_read_something_other_than_rows_are_refused_by_name(spark: SparkSession, tmp_path: Path):
    run = dedup_with_ttl(spark, tmp_path, ttl=None)
    with pytest.raises(Exception, match=r"STATE_SOURCE_OPTION_REFUSED.*readChangeFeed"):
        spark.read.format(ttlstore.settings.STATE_SOURCE).option("readChangeFeed", "true").load(str(run.checkpoint))
    with pytest.raises(ValueError, match="operator_id"):
        ttlstore.read_state(spark, run.checkpoint, operator_id=-1)


def test_reading_while_the_query_runs_does_not_change_what_it_emits(spark: SparkSession, tmp_path: Path):
    source, checkpoint = tmp_path / "input", tmp_path / "checkpoint"
    batches = [[{"key": f"k{(i * 7 + j) % 60}", "t": 0} for j in range(20)] for i in range(12)]
    write_round(source, 0, batches[0])
    emitted: list[str] = []
    spark.conf.set(ttlstore.settings.PROVIDER_CLASS_KEY, TTL_PROVIDER)
    query = (
        spark.readStream.schema(EVENTS).option("maxFilesPerTrigger", 1).json(str(source))
        .dropDuplicates(["key"])
        .writeStream.foreachBatch(lambda df, _: emitted.extend(r.key for r in df.collect()))
        .option("checkpointLocation", str(checkpoint))
        .trigger(processingTime="200 milliseconds")
        .start()
    )
    reads, failures = [], []

    def keep_reading() -> None:
        while query.isActive and len(reads) < 200:
            try:
                reads.append(ttlstore.read_state(spark, checkpoint).count())
                spark.read.format("statestore").load(str(checkpoint)).count()
            except Exception as e:  # the first batch may not have committed yet
                failures.append(str(e))
            time.sleep(0.05)

    reader = threading.Thread(target=keep_reading)
    try:
        while not checkpoint.joinpath("commits", "0").exists():
            time.sleep(0.1)
        reader.start()
        for i in range(1, len(batches)):
            write_round(source, i, batches[i])
            time.sleep(0.3)
        query.processAllAvailable()
    finally:
        query.stop()
        reader.join()
    assert len(reads) >= 3, failures[:3]
    all_keys = {r["key"] for b in batches for r in b}
    assert sorted(emitted) == sorted(all_keys)
    assert ttlstore.read_state(spark, checkpoint).count() == len(all_keys)
