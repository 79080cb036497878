"""State TTL end to end: each operator forgets what was not written within the TTL.

Time is the provider's test clock (``hooks.CLOCK_MS``), set before each round; every round is
one micro-batch and the query restarts between rounds, so each step also reloads the state.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pandas as pd
import pytest
from chispa import assert_df_equality
from pyspark.errors import StreamingQueryException
from pyspark.sql import DataFrame, Row, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming.state import GroupState, GroupStateTimeout
from pyspark.sql.types import LongType, StringType, StructField, StructType
from ttl_rounds import EVENTS, clock_at, rows

import ttlstore
from ttlstore._session import spark_options

from conftest import TTL_PROVIDER, run_rounds

pytestmark = pytest.mark.every_line


def ttl_conf(config: ttlstore.StateTtlConfig, operator_id: int | None = None) -> dict[str, str]:
    return config.to_spark_conf(operator_id=operator_id)


def emitted(spark: SparkSession, out: list[Row], schema: StructType) -> DataFrame:
    return spark.createDataFrame(out, schema)


def test_dropduplicates_drops_a_repeat_inside_the_ttl_and_emits_it_after(spark: SparkSession, tmp_path: Path):
    run = run_rounds(
        spark, TTL_PROVIDER, tmp_path, EVENTS,
        lambda s: s.dropDuplicates(["key"]).select("key"),
        [rows("a", "b"), rows("a", "c"), rows("a", "b", "c")],
        "append",
        extra_conf=ttl_conf(ttlstore.StateTtlConfig(timedelta(minutes=10))),
        round_conf=clock_at([0, 5, 12]),
    )
    schema = StructType([StructField("key", StringType())])
    expected = [["a", "b"], ["c"], ["a", "b"]]  # at 12 min: a and b (written at 0) expired, c (at 5) not
    for out, keys in zip(run.outputs, expected, strict=False):
        assert_df_equality(
            emitted(spark, out, schema), spark.createDataFrame([(k,) for k in keys], schema), ignore_row_order=True
        )


def test_aggregation_without_watermark_restarts_a_key_after_expiry(spark: SparkSession, tmp_path: Path):
    run = run_rounds(
        spark, TTL_PROVIDER, tmp_path, EVENTS,
        lambda s: s.groupBy("key").count(),
        [rows("a", "a", "b"), rows("a"), rows("a", "b")],
        "update",
        extra_conf=ttl_conf(ttlstore.StateTtlConfig("10 minutes")),
        round_conf=clock_at([0, 8, 16]),
    )
    schema = StructType([StructField("key", StringType()), StructField("count", LongType(), False)])
    # At 16 min: a (last written at 8) lives on, b (written at 0) expired and counts from zero.
    expected = [[("a", 2), ("b", 1)], [("a", 3)], [("a", 4), ("b", 1)]]
    for out, counts in zip(run.outputs, expected, strict=False):
        assert_df_equality(
            emitted(spark, out, schema), spark.createDataFrame(counts, schema), ignore_row_order=True,
            ignore_nullable=True,
        )


def count_in_state(key: tuple, frames: Iterator[pd.DataFrame], state: GroupState) -> Iterator[pd.DataFrame]:
    """applyInPandasWithState: a running count per key, kept in state."""
    count = state.get[0] if state.exists else 0
    for frame in frames:
        count += len(frame)
    state.update((count,))
    yield pd.DataFrame({"key": [key[0]], "count": [count]})


def test_apply_in_pandas_with_state_state_expires(spark: SparkSession, tmp_path: Path):
    run = run_rounds(
        spark, TTL_PROVIDER, tmp_path, EVENTS,
        lambda s: s.groupBy("key").applyInPandasWithState(
            count_in_state, "key string, count long", "count long", "update", GroupStateTimeout.NoTimeout
        ),
        [rows("a", "b"), rows("a"), rows("a", "b")],
        "update",
        extra_conf=ttl_conf(ttlstore.StateTtlConfig(timedelta(minutes=10)), operator_id=0),
        round_conf=clock_at([0, 8, 15]),
    )
    schema = StructType([StructField("key", StringType()), StructField("count", LongType())])
    expected = [[("a", 1), ("b", 1)], [("a", 2)], [("a", 3), ("b", 1)]]
    for out, counts in zip(run.outputs, expected, strict=False):
        assert_df_equality(emitted(spark, out, schema), spark.createDataFrame(counts, schema), ignore_row_order=True)


def test_event_time_ttl_on_a_deduplication_follows_the_stream_not_the_clock(spark: SparkSession, tmp_path: Path):
    # Redelivered events repeat their id and event time; the state key is (key, ts).
    config = ttlstore.StateTtlConfig(
        timedelta(minutes=10), time_characteristic="EventTime", event_time_column="ts"
    )
    minute = 60
    run = run_rounds(
        spark, TTL_PROVIDER, tmp_path, EVENTS,
        lambda s: s.withColumn("ts", F.timestamp_seconds("t")).dropDuplicates(["key", "ts"]).select("key"),
        [rows("a", t=0), rows("a", t=0) + rows("b", t=9 * minute), rows("a", t=0) + rows("c", t=20 * minute),
         rows("a", t=0)],
        "append",
        extra_conf=ttl_conf(config),
        round_conf=clock_at([0, 0, 0, 0]),  # the wall clock stands still: only event time moves
    )
    # Stream time 9 min: "a" (0) lives. At 20 min it is still judged by the previous stream time,
    # 9 min, and dropped; by round 3 the stream time is 20 min and "a" (0 + 10 <= 20) is new again.
    assert [sorted(r.key for r in out) for out in run.outputs] == [["a"], ["b"], ["c"], ["a"]]


@pytest.mark.parametrize("native_filter", [False, True], ids=["jvm-sweep", "native-filter"])
def test_num_rows_total_stays_bounded_under_churn(spark: SparkSession, tmp_path: Path, native_filter: bool):
    batches = 22
    run = run_rounds(
        spark, TTL_PROVIDER, tmp_path, EVENTS,
        lambda s: s.dropDuplicates(["key"]),
        [rows(*(f"b{b}-{i}" for i in range(10))) for b in range(batches)],
        "append",
        extra_conf={**ttl_conf(ttlstore.StateTtlConfig(timedelta(minutes=3))),
                    **spark_options(native_filter=native_filter)},
        round_conf=clock_at(list(range(batches))),  # one batch per minute
    )
    totals = [p["stateOperators"][0]["numRowsTotal"] for p in run.progress]
    assert max(totals) <= 3 * 10 + 10, totals  # rows of the last TTL plus one batch, never all 220
    assert totals[-1] == 30
    custom = run.progress[-1]["stateOperators"][0]["customMetrics"]
    removed = sum(sum(p["stateOperators"][0]["customMetrics"][k] for k in (
        "ttlstoreExpiredRemovedBySweep", "ttlstoreExpiredRemovedOnAccess", "ttlstoreExpiredRemovedBeforeSnapshot"))
        for p in run.progress)
    if native_filter:  # expired rows are uncounted at commit and left to compactions: no sweep
        assert removed == 0 and custom["ttlstoreSweepRowsExamined"] == 0
    else:
        assert removed == batches * 10 - 30 and custom["ttlstoreExpiredRowsStored"] == 0


def test_a_stream_stream_join_with_ttl_is_refused_at_start(spark: SparkSession, tmp_path: Path):
    def join(left: DataFrame, right: DataFrame) -> DataFrame:
        return left.join(right.withColumnRenamed("key", "rkey").withColumnRenamed("t", "rt"), F.expr("key = rkey"))

    with pytest.raises(StreamingQueryException, match=r"TTL_ON_STREAM_STREAM_JOIN.*allowTtlOnStreamStreamJoin"):
        run_rounds(
            spark, TTL_PROVIDER, tmp_path, EVENTS, join, [(rows("a"), rows("a"))], "append", sources=2,
            extra_conf=ttl_conf(ttlstore.StateTtlConfig("1h")),
        )


def test_a_key_for_an_operator_the_query_lacks_fails_at_start_naming_it(spark: SparkSession, tmp_path: Path):
    with pytest.raises(StreamingQueryException, match=r"UNKNOWN_OPERATOR.*operator\.5\..*0 \(StreamingDeduplicate\)"):
        run_rounds(
            spark, TTL_PROVIDER, tmp_path, EVENTS, lambda s: s.dropDuplicates(["key"]), [rows("a")], "append",
            extra_conf=ttl_conf(ttlstore.StateTtlConfig("1h"), operator_id=5),
        )
