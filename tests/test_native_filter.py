"""The native TTL compaction filter end to end: expired rows leave the disk, the answers stay the same.

One query runs continuously (no restarts) over event time, so that its stores stay open and
Spark's background maintenance (every second in these tests) can compact them.
"""

from __future__ import annotations

import time
from datetime import timedelta
from pathlib import Path

import pytest
from pyspark.sql import Row, SparkSession
from pyspark.sql import functions as F
from ttl_rounds import EVENTS, rows

import ttlstore
from ttlstore._session import spark_options

from conftest import TTL_PROVIDER, write_round

MINUTE = 60  # the events' t is in seconds
GROWTH_ROUNDS = 8
KEYS_PER_ROUND = 2000
TAIL_ROUNDS = 15  # at most: the filtered run stops once the filter has done its work
#: The most keys alive once the growth expired: each of the 2 stores keeps the tail keys stamped within the
#: TTL (3 minutes, one key a minute) of its stream time, the largest event time it has seen.
ALIVE_AT_MOST = 2 * 3

pytestmark = pytest.mark.every_line


def run_churn(spark: SparkSession, workdir: Path, native_filter: bool,
              rounds_run: int | None = None) -> tuple[list[list[Row]], list[dict]]:
    """New keys for a while, then a trickle that moves event time on until all of them expired and, with the
    filter, until it removed them and the SST bytes fell (`rounds_run` instead: that many rounds).

    Returns what each batch emitted and each batch's progress.
    """
    config = ttlstore.StateTtlConfig(timedelta(minutes=3), time_characteristic="EventTime", event_time_column="ts")
    settings = {
        ttlstore.settings.PROVIDER_CLASS_KEY: TTL_PROVIDER,
        "spark.sql.streaming.stateStore.minDeltasForSnapshot": "2",
        **config.to_spark_conf(),
        **spark_options(native_filter=native_filter),
    }
    previous = {k: spark.conf.get(k, None) for k in settings}
    for k, v in settings.items():
        spark.conf.set(k, v)
    source = workdir / "input"
    outputs: list[list[Row]] = []
    progress: list[dict] = []

    def collect(df, _batch_id):
        outputs.append(sorted(df.collect()))

    rounds = [rows(*(f"r{r}-{i}" for i in range(KEYS_PER_ROUND)), t=r * MINUTE) for r in range(GROWTH_ROUNDS)]
    rounds += [rows(f"tail{j}", t=(GROWTH_ROUNDS + 1 + j) * MINUTE) for j in range(TAIL_ROUNDS)]
    # Redeliveries: of the first round's key (expired, so emitted again) and of the last one's (alive).
    rounds[GROWTH_ROUNDS] += rows("r0-0", t=0) + rows(f"r{GROWTH_ROUNDS - 1}-0", t=(GROWTH_ROUNDS - 1) * MINUTE)
    try:
        write_round(source, 0, rounds[0])
        query = (
            spark.readStream.schema(EVENTS).option("maxFilesPerTrigger", 1).json(str(source))
            .withColumn("ts", F.timestamp_seconds("t")).dropDuplicates(["key", "ts"]).select("key")
            .writeStream.foreachBatch(collect).option("checkpointLocation", str(workdir / "checkpoint")).start()
        )
        try:
            for index, batch in enumerate(rounds):
                if index > 0:
                    write_round(source, index, batch)
                query.processAllAvailable()
                progress.append(query.lastProgress)
                if len(progress) == rounds_run or (rounds_run is None and filtered_away(progress)):
                    break
                if index >= GROWTH_ROUNDS:
                    time.sleep(0.5)  # lets maintenance (every second here) run between batches
        finally:
            query.stop()
    finally:
        for k, v in previous.items():
            spark.conf.unset(k) if v is None else spark.conf.set(k, v)
    return outputs, progress


def metric(progress: dict, name: str) -> int:
    return progress["stateOperators"][0]["customMetrics"][name]


def sst_fell(progress: list[dict]) -> bool:
    sizes = [metric(p, "ttlstoreSstBytes") for p in progress]
    return max(sizes) > 0 and sizes[-1] < max(sizes) / 2


def filtered_away(progress: list[dict]) -> bool:
    """The redeliveries ran, every growth key expired, and the filter dropped rows so that the SST bytes fell
    below half their peak."""
    return (len(progress) > GROWTH_ROUNDS + 1 and progress[-1]["stateOperators"][0]["numRowsTotal"] <= ALIVE_AT_MOST
            and sst_fell(progress) and sum(metric(p, "ttlstoreExpiredRemovedByFilter") for p in progress) > 0)


def test_expired_rows_leave_the_disk_through_the_filter_and_every_answer_stays_the_same(
    spark: SparkSession, tmp_path: Path
):
    filtered, filtered_progress = run_churn(spark, tmp_path / "filter", native_filter=True)
    swept, swept_progress = run_churn(spark, tmp_path / "sweep", native_filter=False, rounds_run=len(filtered))

    sizes = [metric(p, "ttlstoreSstBytes") for p in filtered_progress]
    assert sst_fell(filtered_progress), f"SST bytes never fell below half their peak: {sizes}"
    assert sum(metric(p, "ttlstoreExpiredRemovedByFilter") for p in filtered_progress) > 0
    assert sum(metric(p, "ttlstoreCompactionsRequested") for p in filtered_progress) > 0
    assert sum(metric(p, "ttlstoreSweepRowsExamined") for p in filtered_progress) == 0
    # At the end only tail keys are alive, the same ones however the expired rows were removed.
    alive = [p["stateOperators"][0]["numRowsTotal"] for p in (filtered_progress[-1], swept_progress[-1])]
    assert alive[0] == alive[1] <= ALIVE_AT_MOST, alive

    # The filter only removes what reads already hide: the same batches emit the same rows.
    assert filtered == swept
    assert sum(len(out) for out in filtered[:GROWTH_ROUNDS]) == GROWTH_ROUNDS * KEYS_PER_ROUND
    assert filtered[GROWTH_ROUNDS] == [Row(key="r0-0"), Row(key="tail0")]


def test_the_maintenance_spark_schedules_compacts_a_store_whose_rows_mostly_expired(spark: SparkSession, tmp_path: Path):
    """Default settings, but Spark's maintenance every second (the session's): a store whose rows
    expired asks for a compaction at commit, and Spark 4.3's periodic maintenance (which calls
    doSnapshotMaintenance and doCleanupMaintenance, never doMaintenance) runs it, so the filter
    drops the rows and the files shrink within a few batches.
    """
    config = ttlstore.StateTtlConfig(timedelta(minutes=3), time_characteristic="EventTime", event_time_column="ts")
    settings = {ttlstore.settings.PROVIDER_CLASS_KEY: TTL_PROVIDER, "spark.sql.shuffle.partitions": "1",
                **config.to_spark_conf()}
    previous = {k: spark.conf.get(k, None) for k in settings}
    for k, v in settings.items():
        spark.conf.set(k, v)
    source = tmp_path / "input"
    growth = 11  # one more than minDeltasForSnapshot: the snapshot at version 10 flushes the rows to a file
    progress: list[dict] = []
    try:
        for r in range(growth):
            write_round(source, r, rows(*(f"g{r}-{i}" for i in range(2000)), t=0))
        query = (
            spark.readStream.schema(EVENTS).option("maxFilesPerTrigger", 1).json(str(source))
            .withColumn("ts", F.timestamp_seconds("t")).dropDuplicates(["key", "ts"])
            .writeStream.format("noop").option("checkpointLocation", str(tmp_path / "checkpoint")).start()
        )
        try:
            query.processAllAvailable()
            progress.append(query.lastProgress)
            for j in range(1, 13):  # a trickle moves event time on; the growth expires at 3 minutes
                write_round(source, growth + j, rows(f"tail{j}", t=j * MINUTE))
                query.processAllAvailable()
                progress.append(query.lastProgress)
                if sum(metric(p, "ttlstoreExpiredRemovedByFilter") for p in progress) > 0 and sst_fell(progress):
                    break
                time.sleep(1.2)  # one maintenance interval between batches, as a running query has
        finally:
            query.stop()
    finally:
        for k, v in previous.items():
            spark.conf.unset(k) if v is None else spark.conf.set(k, v)

    sizes = [metric(p, "ttlstoreSstBytes") for p in progress]
    assert sum(metric(p, "ttlstoreCompactionsRequested") for p in progress) > 0
    assert sum(metric(p, "ttlstoreExpiredRemovedByFilter") for p in progress) >= growth * 2000 * 9 // 10, sizes
    assert sst_fell(progress), f"SST bytes never fell below half their peak: {sizes}"
    # The figures add up: every key stored once, less those that expired, is what is left; and the
    # expired rows were shown as still stored until the compaction dropped them.
    inserted = growth * 2000 + len(progress) - 1
    expired = sum(metric(p, "ttlstoreRowsExpired") for p in progress)
    assert expired >= growth * 2000
    assert progress[-1]["stateOperators"][0]["numRowsTotal"] == inserted - expired
    assert max(metric(p, "ttlstoreExpiredRowsStored") for p in progress) >= growth * 2000
    assert metric(progress[-1], "ttlstoreExpiredRowsStored") < growth * 2000
