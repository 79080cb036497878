"""One application, several providers: each query runs on the provider its session named when it started
(Spark pins it in the checkpoint's offset log), so ttlstore's queries and Spark's run side by side in one
session, whatever ttlstore settings the session holds. Only a restart that asks for ttlstore on a checkpoint
Spark pins to another provider is refused (``CHECKPOINT_PINS_ANOTHER_PROVIDER``), since it would run without
TTL. docs/usage.md, "One provider per query"."""

from __future__ import annotations

from pathlib import Path

import pytest
from provider_scenarios import HDFS, PROVIDER_KEY, ROCKSDB, TTL_KEY, TTLSTORE, Stream, running_count_processor, session_conf
from pyspark.sql import DataFrame, GroupedData, SparkSession

pytestmark = pytest.mark.every_line

HAS_TRANSFORM_WITH_STATE = hasattr(GroupedData, "transformWithStateInPandas")


def dedup(df: DataFrame) -> DataFrame:
    return df.dropDuplicates(["key"])


def counted(df: DataFrame) -> DataFrame:
    return df.groupBy("key").transformWithStateInPandas(
        statefulProcessor=running_count_processor(), outputStructType="key string, count long",
        outputMode="Update", timeMode="None")


def keys(rows: list) -> list[str]:
    return sorted(r.key for r in rows)


def test_a_query_started_on_spark_s_provider_runs_beside_ttlstore_s_whatever_ttlstore_settings_the_session_holds(
    spark: SparkSession, tmp_path: Path
):
    with session_conf(spark, **{PROVIDER_KEY: TTLSTORE, TTL_KEY: "1 hour"}):
        ours = Stream(spark, tmp_path / "ours", dedup, "append")
        try:
            assert keys(ours.feed("a", "b")) == ["a", "b"]
            with session_conf(spark, **{PROVIDER_KEY: HDFS}):
                theirs = Stream(spark, tmp_path / "theirs", dedup, "append")
            try:
                assert keys(theirs.feed("a", "c")) == ["a", "c"]
                # The session names ttlstore again, for the next query: the running one keeps its provider.
                later = Stream(spark, tmp_path / "later", dedup, "append")
                try:
                    assert keys(theirs.feed("c", "d")) == ["d"]
                    assert keys(later.feed("a", "d")) == ["a", "d"]
                    assert keys(ours.feed("b", "e")) == ["e"]
                    assert theirs.query.exception() is None and theirs.query.isActive
                finally:
                    later.query.stop()
            finally:
                theirs.query.stop()
        finally:
            ours.query.stop()
    assert (ours.pinned_provider(), theirs.pinned_provider(), later.pinned_provider()) == (TTLSTORE, HDFS, TTLSTORE)
    assert (ours.checkpoint / "state" / "0" / "0" / "ttlstore").is_dir()
    assert not (theirs.checkpoint / "state" / "0" / "0" / "ttlstore").exists(), "Spark's provider wrote its own files"


@pytest.mark.skipif(not HAS_TRANSFORM_WITH_STATE, reason="transformWithState came with Spark 4.0")
def test_transform_with_state_on_spark_s_rocksdb_provider_runs_beside_a_ttlstore_query_in_one_session(
    spark: SparkSession, tmp_path: Path
):
    with session_conf(spark, **{PROVIDER_KEY: TTLSTORE, TTL_KEY: "1 hour"}):
        ours = Stream(spark, tmp_path / "ours", dedup, "append")
        try:
            with session_conf(spark, **{PROVIDER_KEY: ROCKSDB}):
                tws = Stream(spark, tmp_path / "tws", counted, "update")
            try:
                assert sorted((r.key, r["count"]) for r in tws.feed("a", "a", "b")) == [("a", 2), ("b", 1)]
                assert keys(ours.feed("a", "b")) == ["a", "b"]
                assert sorted((r.key, r["count"]) for r in tws.feed("a", "c")) == [("a", 3), ("c", 1)]
                assert keys(ours.feed("a", "c")) == ["c"]
            finally:
                tws.query.stop()
        finally:
            ours.query.stop()
    assert (ours.pinned_provider(), tws.pinned_provider()) == (TTLSTORE, ROCKSDB)


@pytest.mark.skipif(not HAS_TRANSFORM_WITH_STATE, reason="transformWithState came with Spark 4.0")
def test_transform_with_state_asked_of_ttlstore_fails_saying_to_run_it_on_spark_s_provider(spark: SparkSession, tmp_path: Path):
    # Spark 4.1 and later refuse any provider but their own by name; on 4.0 ttlstore refuses the column families.
    with session_conf(spark, **{PROVIDER_KEY: TTLSTORE}), pytest.raises(Exception) as failure:
        stream = Stream(spark, tmp_path, counted, "update")
        try:
            stream.feed("a")
        finally:
            stream.query.stop()
    message = str(failure.value)
    assert "STORE_BACKEND_NOT_SUPPORTED_FOR_TWS" in message or (PROVIDER_KEY in message and ROCKSDB in message), message


def test_a_restart_that_asks_for_ttlstore_on_a_checkpoint_pinned_to_another_provider_fails_naming_both_ways_out(
    spark: SparkSession, tmp_path: Path
):
    with session_conf(spark, **{PROVIDER_KEY: HDFS}):
        stream = Stream(spark, tmp_path, dedup, "append")
        assert keys(stream.feed("a")) == ["a"]
        stream.query.stop()
    # The session names ttlstore: Spark would run the restarted query on the HDFS provider its offset log pins.
    with session_conf(spark, **{PROVIDER_KEY: TTLSTORE}):
        stream.start()
        try:
            with pytest.raises(Exception) as failure:
                stream.feed("b")
        finally:
            stream.query.stop()
    message = str(failure.value)
    assert "CHECKPOINT_PINS_ANOTHER_PROVIDER" in message and str(stream.checkpoint) in message, message
    assert HDFS in message and "ttlstore migrate" in message and "spark.conf.set" in message, message
