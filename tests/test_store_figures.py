"""Each store's own figures (docs/monitoring.md): what a user watches per partition to act before a disk, a
container or a restart does. Every line sums them over the operator's stores in the progress
(``ttlstoreLocalBytes``, ``ttlstoreFilesNotLocal``, ``ttlstoreExpiredRowsStored``); Spark 4.3 also reports
each operator's worst partitions of every figure as instance metrics (``ttlstoreSnapshotAgeMs.partition_0_default``
and kin, ``numStateStoreInstanceMetricsToReport`` of them), as Spark does for its own providers' snapshot versions,
and Spark 4.1 and 4.2 the snapshot version alone (each figure costs their tasks a SQL metric per partition);
``ttlstore inspect`` shows them for every partition.

Here a TTL'd deduplication runs as Spark schedules it, with its snapshots uploaded by Spark's maintenance.
"""

from __future__ import annotations

import importlib.util
import time
from pathlib import Path

import pytest
from pyspark.sql import DataFrame, SparkSession
from ttl_rounds import EVENTS, rows

import ttlstore
from ttlstore._watch import figures_of

from conftest import CAPABILITIES, TTL_PROVIDER, run_rounds

pytestmark = pytest.mark.every_line

GAUGES = ["ttlstoreSnapshotLastUploaded", "ttlstoreSnapshotAgeMs", "ttlstoreExpiredRowsStored",
          "ttlstoreLocalBytes", "ttlstoreFilesNotLocal"]
#: How the line reports instance metrics (none; one SQL metric per partition, where ttlstore reports the snapshot
#: version alone, as Spark's providers do; one accumulator), and the figures it reports per partition.
INSTANCE_METRICS = CAPABILITIES["instanceMetrics"]
PER_PARTITION = {"none": [], "sqlMetricPerPartition": GAUGES[:1], "accumulator": GAUGES}[str(INSTANCE_METRICS)]
PARTITIONS = 2  # the tests' session's shuffle partitions
CONF = {
    "spark.sql.streaming.stateStore.minDeltasForSnapshot": "1",
    ttlstore.settings.PREFIX + "ttl": "1h",
}


def dedup(events: DataFrame) -> DataFrame:
    return events.dropDuplicates(["key"])


def batch(r: int) -> list[dict]:
    return rows(*(f"k{r}-{i}" for i in range(500)))


def snapshots_uploaded(checkpoint: Path, seconds: float = 30) -> bool:
    """Whether each partition's store has a snapshot in the checkpoint within ``seconds`` (Spark's maintenance
    uploads them every second here)."""
    deadline = time.monotonic() + seconds
    while len({p.parent.parent.name for p in (checkpoint / "state").rglob("ttlstore/*.snapshot")}) < PARTITIONS:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.5)
    return True


def listened(watch: ttlstore.StoreWatch, alerts: list[str], seconds: float = 30) -> bool:
    """Whether the watch got a progress, and called ``alerts.append`` for each alert it raised, within ``seconds``."""
    deadline = time.monotonic() + seconds
    while not watch.figures or len(alerts) < len(watch.alerts):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True


def per_partition(progress: dict, gauge: str) -> dict[int, int]:
    """Each partition's ``gauge`` in a progress, read as ``ttlstore.StoreWatch`` reads it."""
    return {f.partition: f.value for f in figures_of(progress) if f.name == gauge and f.partition is not None}


def test_a_deduplication_reports_each_store_s_figures_as_spark_reports_its_own(spark: SparkSession, tmp_path: Path):
    first = run_rounds(spark, TTL_PROVIDER, tmp_path, EVENTS, dedup, [batch(0), batch(1)], "append", extra_conf=CONF)
    assert first.checkpoint is not None and snapshots_uploaded(first.checkpoint), "maintenance uploads snapshots"
    alerts: list[str] = []
    watch = ttlstore.StoreWatch(limits={"ttlstoreLocalBytes": 1}, alert=alerts.append)
    spark.streams.addListener(watch)
    try:
        run = run_rounds(spark, TTL_PROVIDER, tmp_path, EVENTS, dedup, [batch(2)], "append", extra_conf=CONF,
                         first_round=2)
        assert listened(watch, alerts), "Spark's listener bus hands the watch the batch's progress"
    finally:
        spark.streams.removeListener(watch)
    assert run.last_progress is not None
    metrics = run.last_progress["stateOperators"][0]["customMetrics"]
    watched = {(f.name, f.partition): f.value for f in watch.figures}
    assert watched[("ttlstoreLocalBytes", None)] == metrics["ttlstoreLocalBytes"], watched
    assert alerts and alerts == watch.alerts and all("ttlstoreLocalBytes is" in a for a in alerts), alerts
    if importlib.util.find_spec("matplotlib"):  # the development line's environment; the other lines' have none
        assert watch.plot(tmp_path / "local-bytes.png", "ttlstoreLocalBytes").stat().st_size > 0

    assert metrics["ttlstoreLocalBytes"] > 0 and metrics["ttlstoreFilesNotLocal"] == 0, (
        f"every line sums the stores' local bytes and files not local: {metrics}")
    figures = {gauge: per_partition(run.last_progress, gauge) for gauge in GAUGES}
    assert [g for g in GAUGES if figures[g]] == PER_PARTITION, f"the figures {INSTANCE_METRICS} reports: {figures}"
    assert all(set(figures[g]) == set(range(PARTITIONS)) for g in PER_PARTITION), (
        f"each figure of every partition (the 5 worst are reported, of {PARTITIONS}): {figures}")
    assert all(v >= 1 for v in figures["ttlstoreSnapshotLastUploaded"].values()), (
        f"each store knows its newest snapshot in the checkpoint: {figures}")
    if "ttlstoreLocalBytes" not in PER_PARTITION:
        assert len(set(alerts)) == 1 and "the sum of operator 0" in alerts[0], alerts
        return
    assert sum(figures["ttlstoreLocalBytes"].values()) == metrics["ttlstoreLocalBytes"], (
        "a partition's local bytes are its share of the operator's sum")
    assert sum(figures["ttlstoreExpiredRowsStored"].values()) == metrics["ttlstoreExpiredRowsStored"] == 0, (
        "nothing expired within the hour")
    assert all(0 <= v < 120_000 for v in figures["ttlstoreSnapshotAgeMs"].values()), (
        f"written within this test: {figures}")
    assert all(v == 0 for v in figures["ttlstoreFilesNotLocal"].values())
    assert len(set(alerts)) == PARTITIONS, f"each store over its limit is named, not the operator's sum: {alerts}"


@pytest.mark.skipif(not PER_PARTITION, reason="instance metrics are Spark 4.1's and later")
def test_the_progress_names_only_the_worst_partitions_spark_is_asked_for(spark: SparkSession, tmp_path: Path):
    conf = {**CONF, "spark.sql.streaming.stateStore.numStateStoreInstanceMetricsToReport": "1"}
    run = run_rounds(spark, TTL_PROVIDER, tmp_path, EVENTS, dedup, [batch(0)], "append", extra_conf=conf)
    assert run.last_progress is not None
    metrics = run.last_progress["stateOperators"][0]["customMetrics"]

    assert all(len(per_partition(run.last_progress, g)) == 1 for g in PER_PARTITION), metrics
    if "ttlstoreLocalBytes" in PER_PARTITION:
        local = per_partition(run.last_progress, "ttlstoreLocalBytes")
        assert next(iter(local.values())) * PARTITIONS >= metrics["ttlstoreLocalBytes"], (
            "the partition named holds the most bytes")
