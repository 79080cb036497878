"""ttlstore inspect: what a checkpoint holds, per operator and store, from its files alone."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest
from operator_scenarios import EVENTS as OPERATOR_EVENTS
from pyspark.sql import SparkSession
from state_scenarios import JOIN, READ_SCENARIOS, SCENARIOS, dedup_with_ttl, read
from ttl_rounds import EVENTS, rows

import ttlstore

from conftest import (
    HAS_OPERATOR_METADATA,
    HAS_STATE_READER,
    HDFS_PROVIDER,
    ROCKSDB_PROVIDER,
    TTL_PROVIDER,
    StreamRun,
    run_rounds,
    unload_state_stores,
)

CLI = Path(sys.executable).parent / "ttlstore"


def ttlstore_run(spark: SparkSession, tmp_path: Path, name: str) -> StreamRun:
    scenario = SCENARIOS[name]
    run = run_rounds(spark, TTL_PROVIDER, tmp_path, OPERATOR_EVENTS, scenario.build, scenario.rounds,
                     scenario.output_mode, scenario.sources)
    # The query has stopped, but Spark's maintenance would go on uploading its snapshots in the
    # background: unload its stores, so that the files on disk stay as inspect saw them.
    unload_state_stores(spark)
    return run


def ttlstore_checkpoint(spark: SparkSession, tmp_path: Path, name: str) -> Path:
    checkpoint = ttlstore_run(spark, tmp_path, name).checkpoint
    assert checkpoint is not None
    return checkpoint


#: A stream-stream join's four stores (Spark's SymmetricHashJoinStateManager names them).
JOIN_STORES = [f"{side}-{kind}" for side in ("left", "right") for kind in ("keyToNumValues", "keyWithIndexToValue")]


def stores_spark_ran(spark: SparkSession, run: StreamRun) -> list[tuple[int, str, int]]:
    """(operator id, store name, partitions) of the query's stores, as Spark's operator metadata says,
    or on Spark 3.5 (which writes none) as its progress and offset log say (these scenarios have one
    stateful operator each)."""
    if HAS_OPERATOR_METADATA:
        metadata = spark.read.format("state-metadata").load(str(run.checkpoint)).collect()
        return sorted((m.operatorId, m.stateStoreName, m.numPartitions) for m in metadata)
    assert run.last_progress and run.checkpoint
    conf = json.loads((run.checkpoint / "offsets" / "0").read_text().splitlines()[1])["conf"]
    partitions = int(conf["spark.sql.shuffle.partitions"])
    [operator] = run.last_progress["stateOperators"]
    names = JOIN_STORES if operator["operatorName"] == "symmetricHashJoin" else ["default"]
    return sorted((0, name, partitions) for name in names)


def partition_bytes(operator_dir: Path) -> int:
    """Every file of the operator's partition directories (not the operator's own _metadata)."""
    return sum(f.stat().st_size for p in operator_dir.iterdir() if p.name.isdigit()
               for f in p.rglob("*") if f.is_file())


@pytest.mark.parametrize("name", READ_SCENARIOS)
def test_inspect_names_every_operator_store_and_partition_with_its_rows_and_bytes(
    spark: SparkSession, tmp_path: Path, name: str
):
    run = ttlstore_run(spark, tmp_path, name)
    checkpoint = run.checkpoint
    assert checkpoint is not None
    report = ttlstore.inspect_checkpoint(spark, checkpoint)

    assert report["provider"] == TTL_PROVIDER
    last_commit = max(int(f.name) for f in (checkpoint / "commits").iterdir() if f.name.isdigit())
    assert report["latestBatch"] == report["lastCommittedBatch"] == last_commit
    assert sorted((op["id"], s["name"], s["partitions"]) for op in report["operators"] for s in op["stores"]) == \
        stores_spark_ran(spark, run)
    for op in report["operators"]:
        assert partition_bytes(checkpoint / "state" / str(op["id"])) == sum(s["bytesOnDisk"] for s in op["stores"]) > 0
        for store in op["stores"]:
            assert store["files"] == ["ttlstore"] and store["formatVersions"] == [3] and store["scanned"]
            assert store["latestVersion"] == report["latestBatch"] + 1
            assert store["expiredRowsStored"] == 0 and store["legacyRows"] == 0
            assert store["ttl"] == [{"ttlMs": 0, "updateType": "OnCreateAndWrite",
                                     "stateVisibility": "NeverReturnExpired",
                                     "timeCharacteristic": "ProcessingTime", "eventTimeColumn": None}]
            if name == JOIN:  # the reader combines a join side's two stores into one row
                continue
            if HAS_STATE_READER:
                assert store["rows"] == read(spark, checkpoint, operatorId=op["id"]).count() > 0
            else:  # Spark 3.5: the rows its progress counted after the last batch
                assert run.last_progress is not None
                assert store["rows"] == run.last_progress["stateOperators"][op["id"]]["numRowsTotal"] > 0


def test_inspect_counts_expired_rows_still_stored_and_shows_the_ttl_in_force(spark: SparkSession, tmp_path: Path):
    checkpoint = dedup_with_ttl(spark, tmp_path, timedelta(minutes=10)).checkpoint
    [store] = ttlstore.inspect_checkpoint(spark, checkpoint)["operators"][0]["stores"]
    assert (store["rows"], store["expiredRowsStored"], store["legacyRows"]) == (2, 1, 0)
    if HAS_STATE_READER:
        assert ttlstore.read_state(spark, checkpoint, include_expired=True).filter("expired").count() == 1
    assert [t["ttlMs"] for t in store["ttl"]] == [600_000]

    quick = ttlstore.inspect_checkpoint(spark, checkpoint, scan=False)["operators"][0]["stores"][0]
    assert (quick["rows"], quick["expiredRowsStored"], quick["legacyRows"], quick["scanned"]) == (3, None, None, False)


@pytest.mark.parametrize("provider, files", [(HDFS_PROVIDER, "hdfs"), (ROCKSDB_PROVIDER, "rocksdb")])
def test_inspect_reports_a_checkpoint_of_spark_s_own_provider_by_its_files(
    spark: SparkSession, tmp_path: Path, provider: str, files: str
):
    checkpoint = run_rounds(spark, provider, tmp_path, EVENTS, lambda s: s.dropDuplicates(["key"]),
                            [rows("a"), rows("b")], "append").checkpoint
    report = ttlstore.inspect_checkpoint(spark, checkpoint)
    assert report["provider"] == provider
    [store] = report["operators"][0]["stores"]
    assert store["files"] == [files] and store["retainedVersions"] == [1, 2]
    assert store["rows"] is None and store["formatVersions"] == [] and store["bytesOnDisk"] > 0


def test_a_directory_that_is_not_a_checkpoint_is_named_with_what_is_missing(spark: SparkSession, tmp_path: Path):
    with pytest.raises(ttlstore.InspectError, match=r"NOT_A_CHECKPOINT.*offsets.*checkpointLocation"):
        ttlstore.inspect_checkpoint(spark, tmp_path)


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(CLI), *args], capture_output=True, text=True, timeout=300)


def test_the_cli_prints_a_table_json_for_scripts_and_a_progress_bar(spark: SparkSession, tmp_path: Path):
    checkpoint = dedup_with_ttl(spark, tmp_path, timedelta(minutes=10)).checkpoint

    as_json = run_cli("inspect", "--json", "--progress", "always", str(checkpoint))
    assert as_json.returncode == 0, as_json.stderr
    report = json.loads(as_json.stdout)
    assert report["operators"][0]["stores"][0]["expiredRowsStored"] == 1
    assert re.search(r"scanning state \[#+\] (\d+)/\1 partitions", as_json.stderr), as_json.stderr

    table = run_cli("inspect", "--quick", str(checkpoint))
    assert table.returncode == 0, table.stderr
    lines = table.stdout.splitlines()
    assert lines[1].split() == ["provider", TTL_PROVIDER]
    header = next(line for line in lines if line.startswith("operator"))
    assert header.split()[:4] == ["operator", "store", "parts", "files"]
    assert "10 min ProcessingTime" in table.stdout and "scanning" not in table.stderr


def test_the_cli_fails_with_exit_code_2_on_a_path_that_is_not_a_checkpoint(tmp_path: Path):
    # Told before any JVM starts: with no Java to be found, the answer is the same.
    no_java = {**os.environ, "JAVA_HOME": str(tmp_path / "no-java")}
    missing = subprocess.run([str(CLI), "inspect", str(tmp_path / "nowhere")], capture_output=True, text=True,
                             env=no_java, timeout=60)
    assert missing.returncode == 2 and "does not exist" in missing.stderr
    empty = subprocess.run([str(CLI), "inspect", str(tmp_path)], capture_output=True, text=True, env=no_java,
                           timeout=60)
    assert empty.returncode == 2 and "NOT_A_CHECKPOINT" in empty.stderr and empty.stdout == ""


def test_the_cli_reads_in_a_plain_jvm_exactly_what_a_spark_session_reads(spark: SparkSession, tmp_path: Path):
    checkpoint = ttlstore_checkpoint(spark, tmp_path, "stream-stream left outer join")
    for scan in (True, False):
        assert ttlstore.inspect_checkpoint_offline(checkpoint, scan=scan) == \
            ttlstore.inspect_checkpoint(spark, checkpoint, scan=scan)
    no_java = {**os.environ, "JAVA_HOME": str(tmp_path / "no-java")}
    refused = subprocess.run([str(CLI), "inspect", str(checkpoint)], capture_output=True, text=True, env=no_java,
                             timeout=60)
    assert refused.returncode == 2 and "JAVA_HOME" in refused.stderr


def test_inspect_on_a_migrated_checkpoint_shows_the_adopted_files_then_the_legacy_rows(
    spark: SparkSession, tmp_path: Path
):
    build = lambda s: s.dropDuplicates(["key"])  # noqa: E731
    checkpoint = run_rounds(spark, HDFS_PROVIDER, tmp_path, EVENTS, build, [rows("a", "b", "c")], "append").checkpoint
    ttlstore.migrate(checkpoint)

    # Migrated, no batch on ttlstore yet: the pin is ttlstore's, the stores hold Spark's files.
    report = ttlstore.inspect_checkpoint(spark, checkpoint)
    assert report["provider"] == TTL_PROVIDER
    assert {f for s in report["operators"][0]["stores"] for f in s["files"]} == {"hdfs"}

    # After a batch on ttlstore with no upgrade at commit, untouched rows are still legacy rows.
    run_rounds(spark, TTL_PROVIDER, tmp_path, EVENTS, build, [rows("a", "d")], "append", first_round=1,
               extra_conf={ttlstore.settings.OPTIONS["upgrade_rows_per_commit"][0]: "0"})
    [store] = ttlstore.inspect_checkpoint(spark, checkpoint)["operators"][0]["stores"]
    assert store["files"] == ["ttlstore"]
    assert (store["rows"], store["legacyRows"]) == (2, 2)  # "a" was read (upgraded), "d" new; "b", "c" legacy


def test_inspect_counts_no_legacy_rows_once_a_batch_upgraded_them_all_whatever_provider_wrote_them(
    spark: SparkSession, tmp_path: Path
):
    # Spark's RocksDB provider stores keys in its own encoding; the store upgrades every row at its
    # first commit (upgradeRowsPerCommit's default), and inspect must agree with the store.
    build = lambda s: s.dropDuplicates(["key"])  # noqa: E731
    checkpoint = run_rounds(spark, ROCKSDB_PROVIDER, tmp_path, EVENTS, build, [rows("a", "b", "c", "d")], "append").checkpoint
    ttlstore.migrate(checkpoint)
    after = run_rounds(spark, TTL_PROVIDER, tmp_path, EVENTS, build, [rows("e")], "append", first_round=1)
    assert after.last_progress["stateOperators"][0]["customMetrics"]["ttlstoreLegacyRowsRemaining"] == 0
    stores = ttlstore.inspect_checkpoint(spark, checkpoint)["operators"][0]["stores"]
    assert sum(s["legacyRows"] for s in stores) == 0
    assert sum(s["rows"] for s in stores) == 5


def test_inspect_by_partition_shows_each_store_s_newest_snapshot_and_the_versions_a_restart_replays(
    spark: SparkSession, tmp_path: Path
):
    conf = {"spark.sql.streaming.stateStore.minDeltasForSnapshot": "1"}
    batches = [rows(*(f"k{r}-{i}" for i in range(200))) for r in range(3)]
    run = run_rounds(spark, TTL_PROVIDER, tmp_path, EVENTS, lambda s: s.dropDuplicates(["key"]), batches, "append",
                     extra_conf=conf)
    assert run.checkpoint is not None
    deadline = time.monotonic() + 30  # Spark's maintenance uploads snapshots every second here
    while len({p.parent.parent.name for p in (run.checkpoint / "state").rglob("ttlstore/*.snapshot")}) < 2:
        assert time.monotonic() < deadline, "each partition's store uploads a snapshot"
        time.sleep(0.5)
    unload_state_stores(spark)

    table = run_cli("inspect", "--quick", "--partitions", str(run.checkpoint))
    assert table.returncode == 0, table.stderr
    lines = table.stdout.splitlines()
    header = lines.index(next(line for line in lines if line.startswith("operator")))
    assert lines[header].split() == ["operator", "store", "part", "latest", "snapshot", "behind", "written", "rows",
                                     "expired", "disk"]
    for line in lines[header + 1:]:
        operator, store, part, latest, snapshot, behind, written, *_ = line.split()
        files = (run.checkpoint / "state" / operator / part / "ttlstore").glob("*.snapshot")
        newest = max(int(f.name.split(".")[0].split("_")[0]) for f in files)
        assert (store, int(latest), int(snapshot), int(behind)) == ("default", 3, newest, 3 - newest), line
        assert re.fullmatch(r"\dm\d\ds", written), f"written within this test: {line}"
    assert len(lines) - header - 1 == 2, "a row per partition"
