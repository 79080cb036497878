"""ttlstore repartition: a stopped query's state gets another number of partitions, and the query
continues as if it had always had them.

Each scenario runs two rounds with 3 partitions, is repartitioned up to 5, runs a round, is
repartitioned down to 2, and runs the rest; every round must emit what a run that never
repartitioned emits. A key whose state landed in another partition than the one Spark's shuffle
sends it to would be seen as new there, and the rounds after each repartition touch old keys.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from chispa import assert_df_equality
from operator_scenarios import EVENTS
from pyspark.sql import SparkSession
from pyspark.sql.utils import StreamingQueryException
from state_scenarios import SCENARIOS

import ttlstore

from conftest import (
    CAPABILITIES,
    HAS_OPERATOR_METADATA,
    NOT_IN_SPARK_3_5,
    ROCKSDB_PROVIDER,
    TTL_PROVIDER,
    run_rounds,
    unload_state_stores,
)

pytestmark = pytest.mark.skipif(not HAS_OPERATOR_METADATA, reason=NOT_IN_SPARK_3_5)

CLI = Path(sys.executable).parent / "ttlstore"
THREE = {"spark.sql.shuffle.partitions": "3"}
# Rounds [a, b) run after repartitioning to n (None: as started; b None: to the scenario's last round).
STEPS = [(0, 2, None), (2, 3, 5), (3, None, 2)]


def run(spark: SparkSession, workdir: Path, name: str, start: int, end: int, provider: str = TTL_PROVIDER):
    scenario = SCENARIOS[name]
    return run_rounds(spark, provider, workdir, EVENTS, scenario.build, scenario.rounds[start:end],
                      scenario.output_mode, scenario.sources, extra_conf=THREE, first_round=start)


def state_partitions(run_) -> int:
    return run_.last_progress["stateOperators"][0]["numShufflePartitions"]


def assert_same_rows(spark: SparkSession, reference, outputs) -> None:
    assert len(outputs) == len(reference.outputs)
    assert sum(len(r) for r in outputs[2:]) > 0, "the rounds after repartitioning must emit something"
    for expected, actual in zip(reference.outputs, outputs, strict=True):
        assert_df_equality(spark.createDataFrame(expected, reference.schema),
                           spark.createDataFrame(actual, reference.schema), ignore_row_order=True)


# Aggregations are repartitioned the same way on local-cluster (test_local_cluster) and on HDFS
# (test_distributed_fs); these are the other key layouts: a prefix, a state function, a join's four stores.
@pytest.mark.parametrize("name", ["session windows", "applyInPandasWithState", "stream-stream left outer join"])
def test_a_query_repartitioned_up_and_down_emits_what_a_run_that_never_was_emits(
    spark: SparkSession, tmp_path: Path, name: str
):
    rounds = len(SCENARIOS[name].rounds)
    reference = run(spark, tmp_path / "reference", name, 0, rounds)
    outputs = []
    for start, end, partitions in STEPS:
        if partitions is not None:
            unload_state_stores(spark)
            report = ttlstore.repartition(tmp_path / "ours" / "checkpoint", partitions)
            assert report.action == "repartitioned" and report.to_partitions == partitions
            stores = report.operators[0]["stores"]
            assert all(len(s["rows_by_partition"]) == partitions for s in stores)
            assert sum(s["rows"] for s in stores) > 0
        ours = run(spark, tmp_path / "ours", name, start, end or rounds)
        assert state_partitions(ours) == (partitions or 3)
        outputs += ours.outputs
    assert_same_rows(spark, reference, outputs)


@pytest.fixture(scope="module")
def stopped_query(spark: SparkSession, tmp_path_factory) -> Path:
    """An aggregation that ran two batches on ttlstore with 3 partitions, stopped."""
    workdir = tmp_path_factory.mktemp("stopped")
    run(spark, workdir, "aggregation without watermark", 0, 2)
    unload_state_stores(spark)
    return workdir / "checkpoint"


def copy_of(checkpoint: Path, tmp_path: Path) -> Path:
    subprocess.run(["cp", "-r", str(checkpoint), str(tmp_path / "checkpoint")], check=True)
    return tmp_path / "checkpoint"


def files_of(checkpoint: Path) -> dict[str, bytes]:
    return {str(p.relative_to(checkpoint)): p.read_bytes() for p in sorted(checkpoint.rglob("*")) if p.is_file()}


def test_a_dry_run_checks_everything_and_writes_nothing(stopped_query: Path, tmp_path: Path):
    checkpoint = copy_of(stopped_query, tmp_path)
    before = files_of(checkpoint)
    report = ttlstore.repartition(checkpoint, 8, dry_run=True)
    assert (report.action, report.from_partitions, report.to_partitions, report.batch) == (
        "would repartition", 3, 8, 2)
    assert report.operators[0]["name"] == "stateStoreSave"
    assert files_of(checkpoint) == before


def test_the_same_count_again_changes_nothing(stopped_query: Path, tmp_path: Path):
    checkpoint = copy_of(stopped_query, tmp_path)
    before = files_of(checkpoint)
    assert ttlstore.repartition(checkpoint, 3).action == "unchanged"
    assert files_of(checkpoint) == before


def test_a_running_or_failed_batch_is_refused_before_anything_is_written(stopped_query: Path, tmp_path: Path):
    checkpoint = copy_of(stopped_query, tmp_path)
    # What a running query (or one whose batch failed) leaves: the next batch's offsets, no commit.
    (checkpoint / "offsets" / "2").write_text((checkpoint / "offsets" / "1").read_text())
    before = files_of(checkpoint)
    with pytest.raises(ttlstore.RepartitionError) as refused:
        ttlstore.repartition(checkpoint, 5)
    assert refused.value.name == "UNCOMMITTED_BATCH"
    assert "Batch 2" in str(refused.value) and "stop it" in str(refused.value)
    assert files_of(checkpoint) == before


@pytest.mark.every_line
def test_an_unfinished_repartition_stops_the_query_and_is_finished_by_the_same_count_only(
    spark: SparkSession, stopped_query: Path, tmp_path: Path
):
    checkpoint = copy_of(stopped_query, tmp_path)
    ttlstore.repartition(checkpoint, 5)
    # What a repartition killed before its last step leaves: the new batch has no commit.
    for name in ("2", ".2.crc"):
        (checkpoint / "commits" / name).unlink()

    # Spark 4.2 and later find it at restart; before, ttlstore's query check does, at the first batch.
    found_by = ("STREAMING_UNFINISHED_REPARTITION_DETECTED" if CAPABILITIES["checksUnfinishedRepartition"]
                else "REPARTITION_UNFINISHED")
    with pytest.raises(StreamingQueryException, match=found_by):
        run(spark, tmp_path, "aggregation without watermark", 2, 3)
    with pytest.raises(ttlstore.RepartitionError) as refused:
        ttlstore.repartition(checkpoint, 7)
    assert refused.value.name == "REPARTITION_UNFINISHED" and "--partitions 5" in str(refused.value)

    unload_state_stores(spark)
    finished = ttlstore.repartition(checkpoint, 5)
    assert (finished.action, finished.retry, finished.batch) == ("repartitioned", True, 2)
    reference = run(spark, tmp_path / "reference", "aggregation without watermark", 0, 3)
    after = run(spark, tmp_path, "aggregation without watermark", 2, 3)
    assert state_partitions(after) == 5
    assert_df_equality(spark.createDataFrame(reference.outputs[2], reference.schema),
                       spark.createDataFrame(after.outputs[0], reference.schema), ignore_row_order=True)


def test_state_of_another_provider_is_refused_with_the_way_to_repartition_it(stopped_query: Path, tmp_path: Path):
    checkpoint = copy_of(stopped_query, tmp_path)
    entry = checkpoint / "offsets" / "1"
    entry.write_text(entry.read_text().replace(TTL_PROVIDER, ROCKSDB_PROVIDER))
    (checkpoint / "offsets" / ".1.crc").unlink()
    with pytest.raises(ttlstore.RepartitionError) as refused:
        ttlstore.repartition(checkpoint, 4)
    assert refused.value.name == "REPARTITION_OTHER_PROVIDER"
    assert "_streamingCheckpointManager.repartition" in str(refused.value)


def test_an_operator_whose_state_is_not_keyed_is_refused(spark: SparkSession, tmp_path: Path):
    run(spark, tmp_path, "streaming global limit", 0, 1)
    unload_state_stores(spark)
    with pytest.raises(ttlstore.RepartitionError) as refused:
        ttlstore.repartition(tmp_path / "checkpoint", 4)
    assert refused.value.name == "REPARTITION_UNSUPPORTED_OPERATOR"
    assert "globalLimit" in str(refused.value) or "limit" in str(refused.value).lower()


def test_the_cli_repartitions_and_says_the_way_back(stopped_query: Path, tmp_path: Path):
    checkpoint = copy_of(stopped_query, tmp_path)
    done = subprocess.run([str(CLI), "repartition", str(checkpoint), "--partitions", "4", "--json"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["from_partitions"], report["to_partitions"], report["action"]) == (3, 4, "repartitioned")
    assert sum(report["operators"][0]["stores"][0]["rows_by_partition"]) == 25

    back = subprocess.run([str(CLI), "repartition", str(checkpoint), "--partitions", "3"],
                          capture_output=True, text=True)
    assert back.returncode == 0 and "4 -> 3" in back.stdout and "--partitions 4" in back.stdout

    for bad, says in ((["--partitions", "0"], "greater than zero"), (["--partitions", "4", "--conf", "x"], "KEY=VALUE")):
        refused = subprocess.run([str(CLI), "repartition", str(checkpoint), *bad], capture_output=True, text=True)
        assert refused.returncode == 2 and says in refused.stderr
    missing = subprocess.run([str(CLI), "repartition", str(tmp_path / "nothing"), "--partitions", "4"],
                             capture_output=True, text=True)
    assert missing.returncode == 2 and "does not exist" in missing.stderr
