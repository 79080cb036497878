"""Checkpoints on a distributed file system: HDFS, from Hadoop's own mini cluster.

The mini cluster (hadoop-client-minicluster of the Hadoop version whose client jars pyspark ships,
fetched by `make test` into .build/minicluster) runs in a JVM of its own for the module. ttlstore
writes there through Spark's CheckpointFileManager, as Spark's own providers do: every file is
written aside and renamed into place, so a writer killed halfway leaves nothing a load would trust.
The tools (`ttlstore inspect`, `migrate`, `repartition`) work on the checkpoints where they are,
through Hadoop's FileSystem API.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from chaos import crash_loop, crash_queries
from cluster.mini_dfs import mini_dfs
from crash_scenario import FILES, KEYS, ROWS, SEED, assert_computes_the_reference
from operator_scenarios import EVENTS
from pyspark.sql import SparkSession
from state_scenarios import SCENARIOS

import ttlstore
from ttlstore.cli import main

from conftest import (
    HAS_OPERATOR_METADATA,
    HDFS_PROVIDER,
    ROOT,
    SPARK_LINES,
    TTL_PROVIDER,
    run_rounds,
    unload_state_stores,
)


@pytest.fixture(scope="module")
def hdfs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The URI of a running HDFS (one name node, one data node) on this machine. The server runs on the
    development line's Hadoop; a client of another line's Hadoop (make test-matrix) talks to it over RPC."""
    with mini_dfs(tmp_path_factory.mktemp("hdfs"), ROOT / ".build" / f"spark-{SPARK_LINES[-1].line}" / "jars") as uri:
        yield uri


def files_below(spark: SparkSession, uri: str) -> list[str]:
    """Every file below `uri`, listed through Hadoop's FileSystem API."""
    jvm = spark._jvm
    fs = jvm.org.apache.hadoop.fs.FileSystem.get(jvm.java.net.URI(uri), spark._jsc.hadoopConfiguration())
    listed = fs.listFiles(jvm.org.apache.hadoop.fs.Path(uri), True)
    found = []
    while listed.hasNext():
        found.append(listed.next().getPath().toString())
    return found


@pytest.mark.long
def test_a_driver_killed_with_its_checkpoints_on_hdfs_and_restarted_computes_what_spark_hdfs_provider_does(
    spark: SparkSession, tmp_path: Path, hdfs: str, hdfs_reference: dict[str, list[str]],
    capsys: pytest.CaptureFixture[str]
):
    variant = crash_loop.VARIANTS["TTL off"]
    reference = hdfs_reference
    work = tmp_path / "killed"
    crash_queries.write_input(work / "input", SEED, FILES, ROWS, KEYS)

    kills = crash_loop.run(work, crash_loop.TTL_PROVIDER, list(variant.confs), kills=1, seed=SEED,
                           query_set=variant.query_set, checkpoints=f"{hdfs}/killed")

    assert kills["kills"] == 1, kills
    got = assert_computes_the_reference(work, variant, reference, kills)
    stored = files_below(spark, f"{hdfs}/killed")
    for kind in (".changelog", ".snapshot", ".sst"):
        assert any("/ttlstore/" in f and f.endswith(kind) for f in stored), f"no ttlstore {kind} on HDFS: {stored[:20]}"
    assert not list(work.glob("checkpoints")), "nothing was checkpointed on the local disk"

    # `ttlstore inspect` reads it where it is, with the Hadoop settings given as spark-submit takes them.
    assert main(["inspect", "/killed/dropDuplicates", "--json", "--conf", f"spark.hadoop.fs.defaultFS={hdfs}"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["provider"] == crash_loop.TTL_PROVIDER
    [store] = report["operators"][0]["stores"]
    # Its rows: every row the query emitted, and the one of the two FLUSH events (same key and value)
    # that the results leave out.
    assert store["files"] == ["ttlstore"] and store["rows"] == len(got["dropDuplicates"]) + 1, store
    assert main(["inspect", "/killed/dropDuplicates", "--conf", "fs.defaultFS"]) == 2
    assert "--conf takes KEY=VALUE, got 'fs.defaultFS'" in capsys.readouterr().err


def test_a_query_on_hdfs_is_migrated_rolled_back_and_repartitioned_where_it_is(
    spark: SparkSession, tmp_path: Path, hdfs: str, capsys: pytest.CaptureFixture[str]
):
    scenario = SCENARIOS["aggregation without watermark"]

    def rounds(workdir: Path, provider: str, start: int, end: int, checkpoint: str | None = None):
        return run_rounds(spark, provider, workdir, EVENTS, scenario.build, scenario.rounds[start:end],
                          scenario.output_mode, extra_conf={"spark.sql.shuffle.partitions": "3"}, first_round=start,
                          checkpoint_uri=checkpoint)

    reference = rounds(tmp_path / "reference", HDFS_PROVIDER, 0, 4)
    on_hdfs = f"{hdfs}/migrated"
    outputs = rounds(tmp_path / "migrated", HDFS_PROVIDER, 0, 2, on_hdfs).outputs
    conf = ["--conf", f"spark.hadoop.fs.defaultFS={hdfs}"]
    # migrate, take it back, migrate again: the offset log entry and its backup live on HDFS.
    assert main(["migrate", "/migrated", "--json", *conf]) == 0
    assert json.loads(capsys.readouterr().out)["action"] == "migrated"
    assert any(f.endswith("/ttlstore-migration/migration.json") for f in files_below(spark, on_hdfs))
    assert ttlstore.migrate(on_hdfs, rollback=True).action == "rolled back"
    assert not any("/ttlstore-migration/" in f for f in files_below(spark, on_hdfs))
    assert ttlstore.migrate("/migrated", hadoop_conf={"fs.defaultFS": hdfs}).action == "migrated"
    outputs += rounds(tmp_path / "migrated", TTL_PROVIDER, 2, 4, on_hdfs).outputs
    for expected, actual in zip(reference.outputs, outputs, strict=True):
        assert sorted(map(tuple, actual)) == sorted(map(tuple, expected))

    # A query on ttlstore from its start, repartitioned 3 -> 5 on HDFS, continues as one never repartitioned
    # (on Spark 3.5, which writes no operator metadata, repartition is refused by name and the query
    # continues on its 3 partitions).
    on_hdfs = f"{hdfs}/repartitioned"
    outputs = rounds(tmp_path / "repartitioned", TTL_PROVIDER, 0, 2, on_hdfs).outputs
    unload_state_stores(spark)
    partitions = 5 if HAS_OPERATOR_METADATA else 3
    if HAS_OPERATOR_METADATA:
        assert main(["repartition", "/repartitioned", "--partitions", "5", "--json", *conf]) == 0
        assert json.loads(capsys.readouterr().out)["to_partitions"] == 5
    else:
        assert main(["repartition", "/repartitioned", "--partitions", "5", *conf]) == 2
        assert "OPERATOR_METADATA_MISSING" in capsys.readouterr().err
    after = rounds(tmp_path / "repartitioned", TTL_PROVIDER, 2, 4, on_hdfs)
    assert after.last_progress["stateOperators"][0]["numShufflePartitions"] == partitions
    for expected, actual in zip(reference.outputs, outputs + after.outputs, strict=True):
        assert sorted(map(tuple, actual)) == sorted(map(tuple, expected))
    if HAS_OPERATOR_METADATA:  # the new partition's store, which repartition wrote on HDFS
        assert any(f.endswith("/state/0/4/ttlstore/3.snapshot") for f in files_below(spark, on_hdfs))
