"""One "now" per micro-batch: the same on every partition, and the same when Spark runs the batch
again after a failure, so that a replayed batch computes what its first attempt computed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from ttl_rounds import CLOCK_KEY, EVENTS, MINUTE, T0, rows

import ttlstore

from conftest import HAS_STATE_READER, TTL_PROVIDER, write_round


class FirstAttemptFails(Exception):
    pass


def run_until_done(spark: SparkSession, source: Path, checkpoint: Path, conf: dict[str, str],
                   emitted: dict[int, list[list[str]]], fail_batch: int | None) -> None:
    """Runs the dedup over every file in `source`; the first attempt of `fail_batch` emits its rows,
    then fails after its stores committed and before Spark's commit log records the batch."""
    previous = {k: spark.conf.get(k, None) for k in conf}
    for k, v in conf.items():
        spark.conf.set(k, v)

    def sink(df, batch_id: int) -> None:
        emitted.setdefault(batch_id, []).append(sorted(r.key for r in df.collect()))
        if batch_id == fail_batch and len(emitted[batch_id]) == 1:
            raise FirstAttemptFails(f"batch {batch_id} dies after its output")

    try:
        query = (
            spark.readStream.schema(EVENTS).option("maxFilesPerTrigger", 1).json(str(source))
            .dropDuplicates(["key"]).writeStream.foreachBatch(sink)
            .option("checkpointLocation", str(checkpoint)).trigger(availableNow=True).start()
        )
        try:
            query.awaitTermination()
        except Exception as e:  # the deliberate failure, reported through Spark
            assert "batch" in str(e) and "dies after its output" in str(e), e
    finally:
        for k, v in previous.items():
            spark.conf.unset(k) if v is None else spark.conf.set(k, v)


def test_a_batch_run_again_after_a_failure_judges_expiry_at_the_first_attempt_s_time(
    spark: SparkSession, tmp_path: Path
):
    ttl = ttlstore.StateTtlConfig("1 minute").to_spark_conf()
    source, checkpoint = tmp_path / "input", tmp_path / "checkpoint"
    write_round(source, 0, rows("a", "b"))
    write_round(source, 1, rows("a", "c"))
    emitted: dict[int, list[list[str]]] = {}
    # Both batches run at T0; batch 1's first attempt finds "a" alive and drops it, then fails.
    run_until_done(spark, source, checkpoint, {ttlstore.settings.PROVIDER_CLASS_KEY: TTL_PROVIDER, **ttl,
                                               CLOCK_KEY: str(T0)}, emitted, fail_batch=1)
    assert emitted == {0: [["a", "b"]], 1: [["c"]]}
    # Ten minutes later by the clock, Spark runs batch 1 again: "a" would be expired by now.
    run_until_done(spark, source, checkpoint, {ttlstore.settings.PROVIDER_CLASS_KEY: TTL_PROVIDER, **ttl,
                                               CLOCK_KEY: str(T0 + 10 * MINUTE)}, emitted, fail_batch=None)
    assert emitted[1] == [["c"], ["c"]], "the replay must emit what the first attempt emitted"


@pytest.mark.skipif(not HAS_STATE_READER, reason="Spark 3.5 has no state reader to read each row's stamp back "
                    "(the batch's time comes from Spark's offset log in code every line shares: OffsetLog)")
def test_every_partition_of_a_batch_stamps_its_rows_with_the_batch_s_timestamp(spark: SparkSession, tmp_path: Path):
    source, checkpoint = tmp_path / "input", tmp_path / "checkpoint"
    write_round(source, 0, rows(*(f"k{i}" for i in range(200))))
    emitted: dict[int, list[list[str]]] = {}
    run_until_done(spark, source, checkpoint, {ttlstore.settings.PROVIDER_CLASS_KEY: TTL_PROVIDER,
                                               **ttlstore.StateTtlConfig("1 hour").to_spark_conf()},
                   emitted, fail_batch=None)
    entry = (checkpoint / "offsets" / "0").read_text().splitlines()
    batch_timestamp = json.loads(entry[1])["batchTimestampMs"]
    state = ttlstore.read_state(spark, checkpoint, batch_id=0).collect()
    partitions = {r.partition_id for r in state}
    stamps = {r.written_at for r in state}
    assert len(state) == 200 and len(partitions) == 2
    assert stamps == {_from_ms(batch_timestamp)}, "one time per batch, Spark's own"


def _from_ms(ms: int):
    from datetime import datetime

    return datetime.fromtimestamp(ms // 1000).replace(microsecond=ms % 1000 * 1000)


def test_an_idle_partition_s_rows_expire_as_the_query_s_watermark_passes_them(spark: SparkSession, tmp_path: Path):
    """Event time with a watermark: every partition judges by the batch's watermark, so the rows of a
    partition that receives nothing more expire as the rest of the stream moves the watermark on."""
    probe = spark.createDataFrame([(f"k{i}",) for i in range(100)], "key string")
    placed = probe.select("key", F.expr("pmod(hash(key), 2)").alias("p")).collect()  # Spark's shuffle hash
    idle = [r.key for r in placed if r.p == 0][:5]
    busy = [r.key for r in placed if r.p == 1][:7]
    source, checkpoint = tmp_path / "input", tmp_path / "checkpoint"
    write_round(source, 0, rows(*idle, t=0) + rows(busy[0], t=0))
    for j in range(1, 7):
        write_round(source, j, rows(busy[j], t=j * 60))  # only the busy partition hears from now on
    config = ttlstore.StateTtlConfig("3 minutes", time_characteristic="EventTime", event_time_column="max")
    conf = {ttlstore.settings.PROVIDER_CLASS_KEY: TTL_PROVIDER, **config.to_spark_conf()}
    previous = {k: spark.conf.get(k, None) for k in conf}
    for k, v in conf.items():
        spark.conf.set(k, v)
    try:
        query = (
            spark.readStream.schema(EVENTS).option("maxFilesPerTrigger", 1).json(str(source))
            .withColumn("ts", F.timestamp_seconds("t")).withWatermark("ts", "0 seconds")
            .groupBy("key").agg(F.max("ts"))  # the state value's field "max": the key's latest event
            .writeStream.format("noop").outputMode("update")
            .option("checkpointLocation", str(checkpoint)).trigger(availableNow=True).start()
        )
        query.awaitTermination()
        last = query.lastProgress
    finally:
        for k, v in previous.items():
            spark.conf.unset(k) if v is None else spark.conf.set(k, v)

    # The last batch's watermark (Spark's offset log) is past the idle keys' expiry: only the busy keys
    # seen within the TTL before it are left, on both partitions' count and as the reader shows them.
    batches = sorted(int(p.name) for p in (checkpoint / "offsets").iterdir() if p.name.isdigit())
    watermark = json.loads((checkpoint / "offsets" / str(batches[-1])).read_text().splitlines()[1])["batchWatermarkMs"]
    alive = [key for j, key in enumerate(busy) if j * 60_000 + 180_000 > watermark]
    assert watermark >= 180_000 and 0 < len(alive) < len(busy)
    assert last["stateOperators"][0]["numRowsTotal"] == len(alive)
    if HAS_STATE_READER:
        assert sorted(r.key.key for r in ttlstore.read_state(spark, checkpoint).collect()) == sorted(alive)
