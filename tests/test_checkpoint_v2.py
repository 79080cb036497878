"""Checkpoint format v2 (``spark.sql.streaming.stateStore.checkpointFormatVersion=2``) on ttlstore.

Every committed state version carries the checkpoint id Spark's commit log names; the state reader,
``read_state``, ``inspect`` and retention follow those ids. Compared with Spark's RocksDB provider
under format v2 (Spark's HDFS provider refuses v2). The operators themselves are compared in
test_operators_differential.py; a task retried after its state committed in the JVM suite
``CheckpointV2EndToEndSuite``.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from chispa import assert_df_equality
from operator_scenarios import FORMAT_V2
from pyspark.sql import Row, SparkSession
from pyspark.sql.utils import StreamingQueryException
from state_scenarios import JOIN, KEEP_EXPIRED, READ_SCENARIOS, SCENARIOS, at, by_key, checkpoints, read
from ttl_rounds import EVENTS, clock_at, rows

import ttlstore

from conftest import (
    CAPABILITIES,
    HAS_FORMAT_V2,
    NOT_IN_SPARK_3_5,
    ROCKSDB_PROVIDER,
    TTL_PROVIDER,
    core_params,
    run_rounds,
    unload_state_stores,
)

pytestmark = pytest.mark.skipif(not HAS_FORMAT_V2, reason=NOT_IN_SPARK_3_5)

FORMAT_KEY = "spark.sql.streaming.stateStore.checkpointFormatVersion"
#: Format v2, with Spark's RocksDB provider's changelog checkpointing (which format v2 asks for).
V2 = FORMAT_V2

#: Spark's state reader on a checkpoint in format v2. From 4.2 on it reads one in a session set to
#: format v2, and ttlstore's state in any session (the provider follows the ids the commit log gives).
#: Spark 4.1's reads one only in a session set to format v2, whichever the provider: it reads the
#: commit log in the session's format (INVALID_LOG_VERSION otherwise). Spark 4.0's never: it passes
#: no checkpoint ids (Spark's RocksDB provider then looks for `<version>.changelog`; ttlstore
#: refuses by name).
READER_READS_V2 = CAPABILITIES["stateReaderReadsFormatV2"]
READER_READS_TTLSTORE_V2_IN_ANY_SESSION = CAPABILITIES["stateReaderFollowsTtlstoreIdsInAnySession"]
READER_REFUSALS = {"rocksdb": "CANNOT_LOAD_STATE_STORE", "ttlstore": "CHECKPOINT_ID_MISSING"}


@contextlib.contextmanager
def v2_session(spark: SparkSession) -> Iterator[None]:
    spark.conf.set(FORMAT_KEY, "2")
    try:
        yield
    finally:
        spark.conf.unset(FORMAT_KEY)


def assert_reader_refuses(spark: SparkSession, paths: dict[str, Path], **options: object) -> None:
    """On Spark 4.0, whose reader cannot read format v2, both providers' state fails to read, by name."""
    for label, checkpoint in paths.items():
        with pytest.raises(Exception, match=READER_REFUSALS[label]):
            read(spark, checkpoint, **options).collect()


def read_v2_count(spark: SparkSession, paths: dict[str, Path], batch_id: int, side: dict) -> int:
    with v2_session(spark):
        return read(spark, paths["rocksdb"], batchId=batch_id, **side).count()


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


@pytest.mark.parametrize("name", core_params(READ_SCENARIOS, ["dropDuplicates"]))
def test_under_format_v2_the_state_at_each_batch_and_its_change_feed_read_as_on_spark_s_rocksdb_provider(
    spark: SparkSession, shared_runs: Path, name: str
):
    scenario = SCENARIOS[name]
    paths = checkpoints(spark, shared_runs, name, FORMAT_V2, reference=("rocksdb", ROCKSDB_PROVIDER))
    sides = [{"joinSide": "left"}, {"joinSide": "right"}] if name == JOIN else [{}]
    last = len(scenario.rounds) - 1
    with v2_session(spark):
        if not READER_READS_V2:
            for side in sides:
                assert_reader_refuses(spark, paths, batchId=last, **side)
            if name != JOIN:
                assert_reader_refuses(spark, paths, readChangeFeed="true", changeStartBatchId=0)
            return
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
    if not READER_READS_TTLSTORE_V2_IN_ANY_SESSION:
        return
    for side in sides:
        assert read(spark, paths["ttlstore"], batchId=last, **side).count() == read_v2_count(spark, paths, last, side)


@pytest.mark.every_line
def test_under_format_v2_read_state_and_inspect_see_the_versions_the_commit_log_names(
    spark: SparkSession, tmp_path: Path
):
    conf = {**KEEP_EXPIRED, **V2, **ttlstore.StateTtlConfig(timedelta(minutes=10)).to_spark_conf()}
    run = run_rounds(spark, TTL_PROVIDER, tmp_path, EVENTS, lambda s: s.dropDuplicates(["key"]),
                     [rows("a"), rows("b"), rows("c")], "append", extra_conf=conf, round_conf=clock_at([0, 5, 12]))
    assert all("_" in name for name in changelogs(run.checkpoint))
    stores = ttlstore.inspect_checkpoint(spark, run.checkpoint)["operators"][0]["stores"]
    assert sum(s["rows"] for s in stores) == 2 and sum(s["expiredRowsStored"] for s in stores) == 1
    assert all(s["latestVersion"] == 3 for s in stores if s["rows"])
    # read_state is Spark's reader with the timestamps beside: in a session set to format v2 before 4.2.
    session = contextlib.nullcontext() if READER_READS_TTLSTORE_V2_IN_ANY_SESSION else v2_session(spark)
    with session:
        if READER_READS_V2:
            assert_reads_as_the_query_judged(spark, run.checkpoint)
        else:
            with pytest.raises(Exception, match=READER_REFUSALS["ttlstore"]):
                ttlstore.read_state(spark, run.checkpoint).collect()


def assert_reads_as_the_query_judged(spark: SparkSession, checkpoint: Path) -> None:
    assert by_key(ttlstore.read_state(spark, checkpoint, include_expired=True)) == {
        "a": (at(0), at(10), True),
        "b": (at(5), at(15), False),
        "c": (at(12), at(22), False),
    }
    assert by_key(ttlstore.read_state(spark, checkpoint, batch_id=1)) == {
        "a": (at(0), at(10), False),
        "b": (at(5), at(15), False),
    }


def restarted_in_the_other_format(spark: SparkSession, workdir: Path, provider: str, started: str,
                                  restarted: str) -> tuple[list, list[str]] | str:
    """What a query started in one format emits when restarted in the other, with the changelogs it
    left; or the message of the error that stopped it."""
    query = lambda s: s.groupBy("key").count()  # noqa: E731
    first = run_rounds(spark, provider, workdir, EVENTS, query, [rows("a", "b"), rows("a")], "update",
                       extra_conf={**V2, FORMAT_KEY: started})
    try:
        then = run_rounds(spark, provider, workdir, EVENTS, query, [rows("a", "c"), rows("b")], "update",
                          extra_conf={**V2, FORMAT_KEY: restarted}, first_round=2)
    except StreamingQueryException as e:
        return str(e)
    emitted = [sorted((r.key, r["count"]) for r in out) for out in first.outputs + then.outputs]
    return emitted, sorted(p.name for p in (first.checkpoint / "state").rglob("*.changelog"))


@pytest.mark.every_line
@pytest.mark.parametrize("started, restarted", [("1", "2"), ("2", "1")])
def test_a_restart_in_the_other_checkpoint_format_does_what_spark_s_rocksdb_provider_does(
    spark: SparkSession, tmp_path: Path, started: str, restarted: str
):
    theirs, ours = (restarted_in_the_other_format(spark, tmp_path / label, provider, started, restarted)
                    for label, provider in (("rocksdb", ROCKSDB_PROVIDER), ("ttlstore", TTL_PROVIDER)))
    restart = CAPABILITIES["restartInOtherCheckpointFormat"]
    if restart == "pinned":
        # The commit log pins the format: the restart runs on in the first one, silently.
        assert isinstance(theirs, tuple) and isinstance(ours, tuple), (theirs, ours)
        assert ours[0] == theirs[0] == [[("a", 1), ("b", 1)], [("a", 2)], [("a", 3), ("c", 1)], [("b", 2)]]
        assert len(ours[1]) >= 4 and all(("_" in n) == (started == "2") for n in ours[1]), ours[1]
    elif restart == "session":
        # Spark 4.2 runs the restart in the session's format on state of the other: its batch fails
        # in the stores (Spark's RocksDB provider without a name), committing nothing.
        assert isinstance(theirs, str) and isinstance(ours, str), (theirs, ours)
        assert re.search("CHECKPOINT_ID_MISSING|CHECKPOINT_FORMAT_MISMATCH", ours), ours
    else:
        assert restart == "refused", restart
        # Spark 4.0 and 4.1 refuse the restart: the commit log is in the other format.
        assert "INVALID_LOG_VERSION" in str(theirs) and "INVALID_LOG_VERSION" in str(ours), (theirs, ours)


def limited(spark: SparkSession, workdir: Path, provider: str) -> list | str:
    """Two rounds of a streaming global limit in format v2: its outputs, or the error that stopped it."""
    try:
        run = run_rounds(spark, provider, workdir, EVENTS, lambda s: s.limit(3), [rows("a", "b"), rows("c", "d")],
                         "append", extra_conf=V2)
        return [sorted(r.key for r in out) for out in run.outputs]
    except StreamingQueryException as e:
        return str(e)


@pytest.mark.every_line
def test_a_streaming_global_limit_in_format_v2_runs_where_spark_s_rocksdb_provider_does_and_is_refused_by_name_else(
    spark: SparkSession, tmp_path: Path
):
    theirs, ours = (limited(spark, tmp_path / label, provider)
                    for label, provider in (("rocksdb", ROCKSDB_PROVIDER), ("ttlstore", TTL_PROVIDER)))
    if not CAPABILITIES["globalLimitFailsInFormatV2"]:
        assert ours == theirs and len(sum(ours, [])) == 3, (theirs, ours)
    else:
        # Spark 4.0's driver asserts one checkpoint id per shuffle partition after the batch, and the
        # limit's state has one: Spark's provider fails there; ttlstore refuses before any task runs.
        assert "ChekpointInfo length: 1" in theirs, theirs
        assert "GLOBAL_LIMIT_IN_FORMAT_V2" in ours and "checkpointFormatVersion" in ours, ours
        assert str(tmp_path / "ttlstore" / "checkpoint") in ours, ours
        assert not (tmp_path / "ttlstore" / "checkpoint" / "commits" / "0").exists()
        assert not list((tmp_path / "ttlstore" / "checkpoint" / "state").rglob("*.changelog"))


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
    stores = ttlstore.inspect_checkpoint(spark, run.checkpoint)["operators"][0]["stores"]
    assert sum(s["rows"] for s in stores) == 5 * len(rounds)
    if not READER_READS_V2:
        return
    last = int(max(p.name for p in (run.checkpoint / "commits").iterdir() if p.name.isdigit()))
    with v2_session(spark):
        for batch_id in range(last - 2, last + 1):
            assert read(spark, run.checkpoint, batchId=batch_id).count() == 5 * min(batch_id + 1, len(rounds))


@pytest.mark.every_line
def test_under_format_v2_a_damaged_snapshot_is_repaired_around_as_spark_s_autosnapshotrepair_asks(
    spark: SparkSession, tmp_path: Path
):
    """The newest snapshot of a store damaged: the restart walks its lineage back to an older snapshot
    (or the empty state) and replays the changelogs after it; the duplicates it drops show the state."""
    conf = {**V2, "spark.sql.streaming.stateStore.minDeltasForSnapshot": "2"}
    dedup = lambda s: s.dropDuplicates(["key"])  # noqa: E731
    rounds = [rows(*(f"k{r}-{i}" for i in range(3))) for r in range(5)]
    run = run_rounds(spark, TTL_PROVIDER, tmp_path, EVENTS, dedup, rounds, "append", extra_conf=conf)
    assert run.checkpoint is not None
    deadline = time.monotonic() + 60  # maintenance (every second here) uploads the snapshots
    while not list((run.checkpoint / "state").rglob("ttlstore/*.snapshot")):
        assert time.monotonic() < deadline, "no snapshot uploaded"
        time.sleep(0.5)
    unload_state_stores(spark)
    newest = max((run.checkpoint / "state").rglob("ttlstore/*.snapshot"), key=lambda p: int(p.name.split("_")[0]))
    newest.write_bytes(newest.read_bytes()[:10])

    after = run_rounds(spark, TTL_PROVIDER, tmp_path, EVENTS, dedup, [rows(*(f"k{r}-0" for r in range(5)), "new")],
                       "append", extra_conf=conf, first_round=len(rounds))
    assert [r["key"] for r in after.outputs[0]] == ["new"]
    assert after.last_progress is not None
    assert after.last_progress["stateOperators"][0]["customMetrics"]["ttlstoreSnapshotsRepaired"] >= 1
