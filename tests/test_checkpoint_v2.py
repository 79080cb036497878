"""Checkpoint format v2 (``spark.sql.streaming.stateStore.checkpointFormatVersion=2``) on ttlstore.

Every committed state version carries the checkpoint id Spark's commit log names; the state reader,
``read_state``, ``inspect`` and retention follow those ids. Compared with Spark's RocksDB provider
under format v2 (Spark's HDFS provider refuses v2). The operators themselves are compared in
test_operators_differential.py; a task retried after its state committed in the JVM suite
``CheckpointV2EndToEndSuite``.
"""

from __future__ import annotations

import time
from datetime import timedelta
from pathlib import Path

import pytest
from chispa import assert_df_equality
from pyspark.sql import Row, SparkSession
from test_operators_differential import EVENTS as OPERATOR_EVENTS
from test_read_state import KEEP_EXPIRED, at, by_key
from test_state_reader import JOIN, READ_SCENARIOS, SCENARIOS, read
from test_ttl import EVENTS, clock_at, rows

import ttlstore

from conftest import ROCKSDB_PROVIDER, TTL_PROVIDER, run_rounds

FORMAT_KEY = "spark.sql.streaming.stateStore.checkpointFormatVersion"
V2 = {FORMAT_KEY: "2", "spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled": "true"}


def read_v2_count(spark: SparkSession, paths: dict[str, Path], batch_id: int, side: dict) -> int:
    spark.conf.set(FORMAT_KEY, "2")
    try:
        return read(spark, paths["rocksdb"], batchId=batch_id, **side).count()
    finally:
        spark.conf.unset(FORMAT_KEY)


def without_noop_deletes(feed: list[Row]) -> list[Row]:
    """A change feed without deletes of keys that were not there.

    Spark's RocksDB provider logs a remove of an absent key (applyInPandasWithState removing the
    state of a key seen for the first time); ttlstore, like Spark's HDFS provider, logs nothing."""
    present: set = set()
    kept = []
    for batch_id in sorted({r.batch_id for r in feed}):
        batch = [r for r in feed if r.batch_id == batch_id]
        written = {(r.partition_id, str(r.key)) for r in batch if r.change_type != "delete"}
        for r in batch:
            k = (r.partition_id, str(r.key))
            if r.change_type != "delete" or k in present or k in written:
                kept.append(r)
        present |= written
        present -= {(r.partition_id, str(r.key)) for r in batch if r.change_type == "delete" and
                    (r.partition_id, str(r.key)) not in written}
    return kept


def changelogs(checkpoint: Path) -> list[str]:
    return sorted(p.name for p in (checkpoint / "state").rglob("ttlstore/*.changelog"))


@pytest.mark.parametrize("name", READ_SCENARIOS)
def test_under_format_v2_the_state_at_each_batch_and_its_change_feed_read_as_on_spark_s_rocksdb_provider(
    spark: SparkSession, tmp_path: Path, name: str
):
    scenario = SCENARIOS[name]
    paths = {
        label: run_rounds(spark, provider, tmp_path / label, OPERATOR_EVENTS, scenario.build, scenario.rounds,
                          scenario.output_mode, scenario.sources, extra_conf=V2).checkpoint
        for label, provider in (("rocksdb", ROCKSDB_PROVIDER), ("ttlstore", TTL_PROVIDER))
    }
    sides = [{"joinSide": "left"}, {"joinSide": "right"}] if name == JOIN else [{}]
    last = len(scenario.rounds) - 1
    # Spark's reader loads its RocksDB provider's v2 state only in a session set to format v2;
    # ttlstore's provider follows the ids the commit log gives in either.
    spark.conf.set(FORMAT_KEY, "2")
    try:
        rows_read = 0
        for batch_id in range(len(scenario.rounds)):
            for side in sides:
                theirs, ours = (read(spark, paths[p], batchId=batch_id, **side) for p in ("rocksdb", "ttlstore"))
                assert_df_equality(ours, theirs, ignore_row_order=True, ignore_nullable=True)
                rows_read += ours.count()
        assert rows_read > 0
        if name != JOIN:
            feed = {"readChangeFeed": "true", "changeStartBatchId": 0, "changeEndBatchId": last}
            theirs, ours = (read(spark, paths[p], **feed) for p in ("rocksdb", "ttlstore"))
            assert ours.count() > 0
            assert sorted(map(str, ours.collect())) == sorted(map(str, without_noop_deletes(theirs.collect())))
    finally:
        spark.conf.unset(FORMAT_KEY)
    for side in sides:
        assert read(spark, paths["ttlstore"], batchId=last, **side).count() == read_v2_count(spark, paths, last, side)


def test_under_format_v2_read_state_and_inspect_see_the_versions_the_commit_log_names(
    spark: SparkSession, tmp_path: Path
):
    conf = {**KEEP_EXPIRED, **V2, **ttlstore.StateTtlConfig(timedelta(minutes=10)).to_spark_conf()}
    run = run_rounds(spark, TTL_PROVIDER, tmp_path, EVENTS, lambda s: s.dropDuplicates(["key"]),
                     [rows("a"), rows("b"), rows("c")], "append", extra_conf=conf, round_conf=clock_at([0, 5, 12]))
    assert all("_" in name for name in changelogs(run.checkpoint))
    assert by_key(ttlstore.read_state(spark, run.checkpoint, include_expired=True)) == {
        "a": (at(0), at(10), True),
        "b": (at(5), at(15), False),
        "c": (at(12), at(22), False),
    }
    assert by_key(ttlstore.read_state(spark, run.checkpoint, batch_id=1)) == {
        "a": (at(0), at(10), False),
        "b": (at(5), at(15), False),
    }
    stores = ttlstore.inspect_checkpoint(spark, run.checkpoint)["operators"][0]["stores"]
    assert sum(s["rows"] for s in stores) == 2 and sum(s["expiredRowsStored"] for s in stores) == 1
    assert all(s["latestVersion"] == 3 for s in stores if s["rows"])


@pytest.mark.parametrize("started, restarted", [("1", "2"), ("2", "1")])
def test_a_checkpoint_keeps_the_format_it_started_with_as_spark_decides(
    spark: SparkSession, tmp_path: Path, started: str, restarted: str
):
    # Spark's commit log pins the format: a restart that sets the other one runs on in the first,
    # silently, and ttlstore writes what Spark asks for.
    query = lambda s: s.groupBy("key").count()  # noqa: E731
    first = run_rounds(spark, TTL_PROVIDER, tmp_path, EVENTS, query, [rows("a", "b"), rows("a")], "update",
                       extra_conf={FORMAT_KEY: started})
    then = run_rounds(spark, TTL_PROVIDER, tmp_path, EVENTS, query, [rows("a", "c"), rows("b")], "update",
                      extra_conf={FORMAT_KEY: restarted}, first_round=2)
    emitted = [sorted((r.key, r["count"]) for r in out) for out in first.outputs + then.outputs]
    assert emitted == [[("a", 1), ("b", 1)], [("a", 2)], [("a", 3), ("c", 1)], [("b", 2)]]
    names = changelogs(first.checkpoint)
    assert len(names) >= 4 and all(("_" in n) == (started == "2") for n in names), names


def test_under_format_v2_retention_deletes_old_versions_and_keeps_the_retained_ones_loadable(
    spark: SparkSession, tmp_path: Path
):
    conf = {**V2, "spark.sql.streaming.minBatchesToRetain": "3",
            "spark.sql.streaming.stateStore.minDeltasForSnapshot": "2"}
    rounds = [rows(*(f"k{r}-{i}" for i in range(5))) for r in range(8)]
    run = run_rounds(spark, TTL_PROVIDER, tmp_path, EVENTS, lambda s: s.dropDuplicates(["key"]), rounds, "append",
                     extra_conf=conf)
    # A last round runs maintenance (every second in these tests) on the providers of the query.
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and any(int(n.split("_")[0]) <= 2 for n in changelogs(run.checkpoint)):
        run_rounds(spark, TTL_PROVIDER, tmp_path, EVENTS, lambda s: s.dropDuplicates(["key"]), [rows()], "append",
                   extra_conf=conf, first_round=len(rounds))
        time.sleep(1)
    versions = sorted({int(n.split("_")[0]) for n in changelogs(run.checkpoint)})
    assert versions and versions[0] > 2, versions
    last = int(max(p.name for p in (run.checkpoint / "commits").iterdir() if p.name.isdigit()))
    for batch_id in range(last - 2, last + 1):
        assert read(spark, run.checkpoint, batchId=batch_id).count() == 5 * min(batch_id + 1, len(rounds))
