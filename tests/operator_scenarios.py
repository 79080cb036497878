"""The scenarios of every classic stateful operator: a query, its output mode and its rounds of events,
run on two providers and compared row by row (test_operators_differential.py and the suites that
reuse the same queries).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from chispa import assert_df_equality
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming.state import GroupState, GroupStateTimeout
from pyspark.sql.types import LongType, StringType, StructField, StructType

from conftest import (
    StreamRun,
    run_rounds,
)

EVENTS = StructType(
    [StructField("key", StringType()), StructField("v", LongType()), StructField("t", LongType())]
)


def events(seed: int, rounds: int, per_round: int, keys: int, start: int = 0, step: int = 4) -> list[list[dict]]:
    """Rounds of events whose event time (seconds) moves forward `step` per round, with some disorder."""
    rng = random.Random(seed)
    return [
        [
            {"key": f"k{rng.randrange(keys)}", "v": rng.randrange(100), "t": start + r * step + rng.randrange(6)}
            for _ in range(per_round)
        ]
        for r in range(rounds)
    ]


def with_ts(df: DataFrame) -> DataFrame:
    return df.withColumn("ts", F.timestamp_seconds("t"))


def running_count(key: tuple, frames: Iterator[pd.DataFrame], state: GroupState) -> Iterator[pd.DataFrame]:
    """applyInPandasWithState: a running count per key; the state is dropped once it reaches 5."""
    count = state.get[0] if state.exists else 0
    for frame in frames:
        count += len(frame)
    if count >= 5:
        state.remove()
    else:
        state.update((count,))
    yield pd.DataFrame({"key": [key[0]], "count": [count]})


def join_query(left: DataFrame, right: DataFrame) -> DataFrame:
    lhs = with_ts(left).select(F.col("key").alias("lkey"), F.col("v").alias("lv"), F.col("ts").alias("lts"))
    rhs = with_ts(right).select(F.col("key").alias("rkey"), F.col("v").alias("rv"), F.col("ts").alias("rts"))
    return lhs.withWatermark("lts", "5 seconds").join(
        rhs.withWatermark("rts", "5 seconds"),
        F.expr("lkey = rkey AND rts >= lts AND rts <= lts + interval 8 seconds"),
        "leftOuter",
    )


@dataclass(frozen=True)
class Scenario:
    name: str
    build: Callable[..., DataFrame]
    output_mode: str
    rounds: list
    sources: int = 1


SCENARIOS = [
    Scenario(
        "aggregation without watermark",
        lambda s: s.groupBy("key").agg(F.count("*").alias("n"), F.sum("v").alias("total")),
        "update",
        events(1, 5, 60, 25),
    ),
    Scenario(
        "windowed aggregation evicted by watermark",
        lambda s: with_ts(s).withWatermark("ts", "5 seconds").groupBy(F.window("ts", "4 seconds"), "key").count(),
        "append",
        events(2, 6, 50, 6),
    ),
    Scenario("dropDuplicates", lambda s: s.dropDuplicates(["key"]), "append", events(3, 5, 40, 80)),
    Scenario(
        "dropDuplicatesWithinWatermark",
        lambda s: with_ts(s).withWatermark("ts", "5 seconds").dropDuplicatesWithinWatermark(["key"]),
        "append",
        events(4, 6, 40, 30),
    ),
    Scenario(
        "applyInPandasWithState",
        lambda s: s.groupBy("key").applyInPandasWithState(
            running_count, "key string, count long", "count long", "update", GroupStateTimeout.NoTimeout
        ),
        "update",
        events(5, 5, 30, 12),
    ),
    Scenario(
        "session windows",
        lambda s: with_ts(s)
        .withWatermark("ts", "5 seconds")
        .groupBy(F.session_window("ts", "3 seconds"), "key")
        .agg(F.count("*").alias("n")),
        "append",
        events(6, 6, 25, 5, step=5),
    ),
    Scenario(
        "stream-stream left outer join",
        join_query,
        "append",
        [tuple(pair) for pair in zip(events(7, 5, 20, 10), events(8, 5, 20, 10), strict=False)],
        sources=2,
    ),
    Scenario("streaming global limit", lambda s: s.limit(17), "append", events(9, 4, 6, 10)),
]


FORMAT_V2 = {
    "spark.sql.streaming.stateStore.checkpointFormatVersion": "2",
    "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled": "true",
}


def run_scenario(
    spark: SparkSession, provider: str, workdir: Path, scenario: Scenario, conf: dict[str, str] | None = None
) -> StreamRun:
    return run_rounds(
        spark,
        provider,
        workdir,
        EVENTS,
        scenario.build,
        scenario.rounds,
        scenario.output_mode,
        scenario.sources,
        extra_conf=conf,
    )


#: The runs made by shared_run, by their session's directory, provider, scenario and settings.
_SHARED: dict[tuple[Path, str, str, tuple[tuple[str, str], ...]], StreamRun] = {}


def shared_run(
    spark: SparkSession, shared_runs: Path, provider: str, scenario: Scenario, conf: dict[str, str] | None = None
) -> StreamRun:
    """`scenario` run on `provider` with `conf`, made at the first call of a test session (in conftest's
    `shared_runs` directory) and shared by every test that only reads what it emitted and what it left in its
    checkpoint: the differential tests and the state readers'. A test that writes into a checkpoint, or
    restarts its query, makes a run of its own (run_scenario)."""
    key = (shared_runs, provider, scenario.name, tuple(sorted((conf or {}).items())))
    if key not in _SHARED:
        workdir = shared_runs / f"{len(_SHARED)}-{provider.rsplit('.', 1)[-1]}"
        _SHARED[key] = run_scenario(spark, provider, workdir, scenario, conf)
    return _SHARED[key]


def assert_same_rows(spark: SparkSession, reference: StreamRun, ours: StreamRun, scenario: Scenario) -> None:
    assert sum(len(rows) for rows in reference.outputs) > 0, "the scenario must emit something"
    assert len(ours.outputs) == len(reference.outputs) == len(scenario.rounds)
    for expected, actual in zip(reference.outputs, ours.outputs, strict=False):
        assert_df_equality(
            spark.createDataFrame(expected, reference.schema),
            spark.createDataFrame(actual, reference.schema),
            ignore_row_order=True,
        )
