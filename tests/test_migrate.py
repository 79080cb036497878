"""ttlstore migrate: a query on Spark's own provider continues on ttlstore without reprocessing.

Each scenario runs some rounds on Spark's provider, is migrated, and runs the rest on ttlstore; every
emitted row must equal a reference run that never switched.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from chispa import assert_df_equality
from operator_scenarios import EVENTS as OPERATOR_EVENTS
from pyspark.sql import SparkSession
from state_scenarios import SCENARIOS
from ttl_rounds import EVENTS, rows

import ttlstore

from conftest import (
    CAPABILITIES,
    HAS_FORMAT_V2,
    HAS_OPERATOR_METADATA,
    HDFS_PROVIDER,
    ROCKSDB_PROVIDER,
    RUNNING_LINE,
    TTL_PROVIDER,
    core_params,
    run_rounds,
    run_script,
)

CHANGELOG = {"spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled": "true"}
CLI = Path(sys.executable).parent / "ttlstore"
SPLIT = 3  # rounds on Spark's provider before the migration


def run(spark: SparkSession, provider: str, workdir: Path, name: str, rounds: slice, conf=None, first_round=0):
    scenario = SCENARIOS[name]
    return run_rounds(spark, provider, workdir, OPERATOR_EVENTS, scenario.build, scenario.rounds[rounds],
                      scenario.output_mode, scenario.sources, extra_conf=conf, first_round=first_round)


def migrated_run(spark: SparkSession, tmp_path: Path, name: str, provider: str, conf=None):
    before = run(spark, provider, tmp_path / "migrated", name, slice(0, SPLIT), conf)
    report = ttlstore.migrate(before.checkpoint)
    assert report.action == "migrated" and report.provider == provider
    after = run(spark, TTL_PROVIDER, tmp_path / "migrated", name, slice(SPLIT, None), conf, first_round=SPLIT)
    return before, after


def assert_same_rows(spark: SparkSession, expected_run, outputs, schema) -> None:
    assert len(outputs) == len(expected_run.outputs)
    assert sum(len(r) for r in outputs[SPLIT:]) > 0, "the rounds on ttlstore must emit something"
    for expected, actual in zip(expected_run.outputs, outputs, strict=False):
        assert_df_equality(spark.createDataFrame(expected, schema), spark.createDataFrame(actual, schema),
                           ignore_row_order=True)


MIGRATED = ["aggregation without watermark", "dropDuplicates", "session windows", "applyInPandasWithState"]


@pytest.mark.parametrize("name", core_params(MIGRATED, ["aggregation without watermark"]))
def test_a_query_migrated_from_spark_s_hdfs_provider_emits_what_it_would_have(
    spark: SparkSession, tmp_path: Path, name: str
):
    reference = run(spark, HDFS_PROVIDER, tmp_path / "reference", name, slice(None))
    before, after = migrated_run(spark, tmp_path, name, HDFS_PROVIDER)
    assert_same_rows(spark, reference, before.outputs + after.outputs, reference.schema)

    # The rounds after the migration ran on ttlstore, over the adopted state.
    state = after.checkpoint / "state"
    assert list(state.rglob("ttlstore/adopted.json")) and list(state.rglob("*.delta"))
    custom = after.progress[0]["stateOperators"][0]["customMetrics"]
    assert "ttlstoreLegacyRowsRemaining" in custom


#: Each query from Spark's RocksDB provider, and each way that provider writes a version (snapshots alone,
#: changelog checkpointing) twice: what a migration reads depends on the one (the rows' layout) and on the
#: other (which files hold a version), not on the pair. The other lines' core takes session windows from
#: changelogs (test_a_rocksdb_snapshot_written_after_... reads that provider's snapshots on every line).
ROCKSDB_WRITES = {"snapshots": None, "changelog checkpointing": CHANGELOG}
ROCKSDB_RUNS = {f"{name}-{written}": (name, ROCKSDB_WRITES[written]) for name, written in (
    ("aggregation without watermark", "snapshots"), ("dropDuplicates", "changelog checkpointing"),
    ("session windows", "changelog checkpointing"), ("applyInPandasWithState", "snapshots"))}


@pytest.mark.parametrize("run_of", core_params(ROCKSDB_RUNS, ["session windows-changelog checkpointing"]))
def test_a_query_migrated_from_spark_s_rocksdb_provider_emits_what_it_would_have(
    spark: SparkSession, tmp_path: Path, run_of: tuple
):
    name, conf = run_of
    reference = run(spark, ROCKSDB_PROVIDER, tmp_path / "reference", name, slice(None), conf)
    before, after = migrated_run(spark, tmp_path, name, ROCKSDB_PROVIDER, conf)
    assert_same_rows(spark, reference, before.outputs + after.outputs, reference.schema)
    assert list((after.checkpoint / "state").rglob("ttlstore/adopted.json"))


@pytest.mark.every_line
def test_a_rocksdb_snapshot_written_after_a_format_v2_query_in_its_jvm_migrates(spark: SparkSession, tmp_path: Path):
    # A fresh JVM runs a query in checkpoint format v2, then the one migrated here in format 1.
    written = run_script(sys.executable, Path(__file__).parent / "lines" / "snapshot_after_v2.py", tmp_path)
    assert written["outputs"] == [["a", "b"], ["c"]]
    # Spark 4.0 labels every snapshot of that JVM with the format of its first: "v2", the same content.
    assert written["headers"] == (["v2"] if RUNNING_LINE == "4.0" else ["v1"])

    checkpoint = tmp_path / "v1" / "checkpoint"
    assert ttlstore.migrate(checkpoint).provider == ROCKSDB_PROVIDER
    after = run_rounds(spark, TTL_PROVIDER, tmp_path / "v1", EVENTS, lambda s: s.dropDuplicates(["key"]).select("key"),
                       [rows("a", "c", "d")], "append", first_round=2)
    assert [r.key for r in after.outputs[0]] == ["d"]
    assert list((checkpoint / "state").rglob("ttlstore/adopted.json"))


def dedup(spark: SparkSession, tmp_path: Path, provider: str = HDFS_PROVIDER):
    return run_rounds(spark, provider, tmp_path, EVENTS, lambda s: s.dropDuplicates(["key"]),
                      [rows("a", "b"), rows("c")], "append").checkpoint


def offsets_entry(checkpoint: Path) -> bytes:
    return (checkpoint / "offsets" / "1").read_bytes()


def test_migrating_twice_is_harmless_and_a_dry_run_changes_nothing(spark: SparkSession, tmp_path: Path):
    checkpoint = dedup(spark, tmp_path)
    original = offsets_entry(checkpoint)
    dry = ttlstore.migrate(checkpoint, dry_run=True)
    assert dry.action == "would migrate" and offsets_entry(checkpoint) == original
    assert not (checkpoint / "ttlstore-migration").exists()
    assert ttlstore.migrate(checkpoint).action == "migrated"
    assert TTL_PROVIDER.encode() in offsets_entry(checkpoint) and HDFS_PROVIDER.encode() not in offsets_entry(checkpoint)
    assert ttlstore.migrate(checkpoint).action == "already migrated"


def test_rollback_before_any_batch_gives_back_the_original_query(spark: SparkSession, tmp_path: Path):
    checkpoint = dedup(spark, tmp_path)
    original = offsets_entry(checkpoint)
    ttlstore.migrate(checkpoint)
    assert ttlstore.migrate(checkpoint, rollback=True).action == "rolled back"
    assert offsets_entry(checkpoint) == original and not (checkpoint / "ttlstore-migration").exists()
    # The original query continues on its own provider.
    more = run_rounds(spark, HDFS_PROVIDER, tmp_path, EVENTS, lambda s: s.dropDuplicates(["key"]),
                      [rows("a", "d")], "append", first_round=2)
    assert [r.key for r in more.outputs[0]] == ["d"]
    assert not list((checkpoint / "state").rglob("ttlstore"))


def test_rollback_is_refused_once_a_batch_ran_on_ttlstore(spark: SparkSession, tmp_path: Path):
    checkpoint = dedup(spark, tmp_path)
    ttlstore.migrate(checkpoint)
    run_rounds(spark, TTL_PROVIDER, tmp_path, EVENTS, lambda s: s.dropDuplicates(["key"]), [rows("e")], "append",
               first_round=2)
    with pytest.raises(ttlstore.MigrationError, match="ALREADY_RAN_ON_TTLSTORE"):
        ttlstore.migrate(checkpoint, rollback=True)


def test_an_uncommitted_last_batch_needs_force(spark: SparkSession, tmp_path: Path):
    checkpoint = dedup(spark, tmp_path)
    (checkpoint / "commits" / "1").unlink()
    (checkpoint / "commits" / ".1.crc").unlink(missing_ok=True)
    with pytest.raises(ttlstore.MigrationError, match=r"UNCOMMITTED_BATCH.*batch 1.*re-runs on ttlstore.*--force"):
        ttlstore.migrate(checkpoint)
    report = ttlstore.migrate(checkpoint, force=True)
    assert report.action == "migrated" and report.uncommitted_batch == 1


def test_bad_input_is_refused_by_name(spark: SparkSession, tmp_path: Path):
    with pytest.raises(ttlstore.MigrationError, match="NOT_A_CHECKPOINT"):
        ttlstore.migrate(tmp_path)
    (tmp_path / "offsets").mkdir()
    with pytest.raises(ttlstore.MigrationError, match="NOT_A_CHECKPOINT.*offsets"):
        ttlstore.migrate(tmp_path)

    checkpoint = dedup(spark, tmp_path / "q")
    entry = checkpoint / "offsets" / "1"
    entry.write_text(entry.read_text().replace(HDFS_PROVIDER, "com.example.OtherProvider"))
    (checkpoint / "offsets" / ".1.crc").unlink(missing_ok=True)
    with pytest.raises(ttlstore.MigrationError, match="UNKNOWN_PROVIDER.*com.example.OtherProvider"):
        ttlstore.migrate(checkpoint)

    if not HAS_OPERATOR_METADATA:  # Spark 3.5 writes none, and has no transformWithState to refuse
        return
    meta = checkpoint / "state" / "0" / "_metadata" / "metadata"
    entry.write_text(entry.read_text().replace("com.example.OtherProvider", HDFS_PROVIDER))
    meta.write_text(meta.read_text().replace('"dedupe"', '"transformWithStateExec"'))
    (meta.parent / ".metadata.crc").unlink(missing_ok=True)
    with pytest.raises(ttlstore.MigrationError, match="UNSUPPORTED_OPERATOR.*transformWithState"):
        ttlstore.migrate(checkpoint)


def assert_refused_and_left_untouched(spark: SparkSession, tmp_path: Path, provider: str, conf: dict, error: str):
    """A dedup of two batches on `provider` with `conf`: migrate refuses its checkpoint with `error` and changes nothing."""
    checkpoint = run_rounds(spark, provider, tmp_path, EVENTS, lambda s: s.dropDuplicates(["key"]),
                            [rows("a", "b"), rows("c")], "append", extra_conf=conf).checkpoint
    before = offsets_entry(checkpoint)
    with pytest.raises(ttlstore.MigrationError, match=error):
        ttlstore.migrate(checkpoint)
    assert offsets_entry(checkpoint) == before and not (checkpoint / "ttlstore-migration").exists()


@pytest.mark.skipif(not HAS_FORMAT_V2, reason="Spark 3.5 has no checkpoint format v2 (it ignores the setting)")
def test_a_checkpoint_of_spark_s_rocksdb_provider_in_format_v2_is_refused_and_left_untouched(
    spark: SparkSession, tmp_path: Path
):
    v2 = {**CHANGELOG, "spark.sql.streaming.stateStore.checkpointFormatVersion": "2"}
    assert_refused_and_left_untouched(spark, tmp_path, ROCKSDB_PROVIDER, v2,
                                      r"UNSUPPORTED_CHECKPOINT.*format v2.*new checkpoint")


@pytest.mark.every_line
@pytest.mark.skipif(not CAPABILITIES["rowChecksums"], reason="row checksums came with Spark 4.2 (4.1 has no such setting)")
def test_a_checkpoint_written_with_spark_s_row_checksums_is_refused_and_left_untouched(
    spark: SparkSession, tmp_path: Path
):
    checksums = {"spark.sql.streaming.stateStore.rowChecksum.enabled": "true"}
    assert_refused_and_left_untouched(spark, tmp_path, HDFS_PROVIDER, checksums,
                                      r"LEGACY_ROW_CHECKSUMS.*rowChecksum.enabled=true.*Nothing was")


def test_the_cli_migrates_reports_json_and_fails_with_exit_code_2(spark: SparkSession, tmp_path: Path):
    checkpoint = dedup(spark, tmp_path)
    dry = subprocess.run([str(CLI), "migrate", "--dry-run", str(checkpoint)], capture_output=True, text=True)
    # The operator's name comes from Spark's operator metadata, which Spark 3.5 does not write.
    operator = "dedupe" if HAS_OPERATOR_METADATA else "operator 0   (unknown)"
    assert dry.returncode == 0 and dry.stdout.startswith("would migrate") and operator in dry.stdout, dry.stdout
    done = subprocess.run([str(CLI), "migrate", "--json", str(checkpoint)], capture_output=True, text=True)
    assert done.returncode == 0 and json.loads(done.stdout)["action"] == "migrated"
    bad = subprocess.run([str(CLI), "migrate", str(tmp_path / "nowhere")], capture_output=True, text=True)
    assert bad.returncode == 2 and "NOT_A_CHECKPOINT" in bad.stderr


def test_a_checkpoint_of_spark_s_provider_restarted_with_ttlstore_fails_naming_migrate(spark: SparkSession, tmp_path: Path):
    checkpoint = dedup(spark, tmp_path)
    # Spark's offset log pins the HDFS provider; without the check the query would run on it,
    # without TTL, with only a warning in the log.
    with pytest.raises(Exception, match=r"CHECKPOINT_PINS_ANOTHER_PROVIDER.*ttlstore migrate") as failure:
        run_rounds(spark, TTL_PROVIDER, tmp_path, EVENTS, lambda s: s.dropDuplicates(["key"]),
                   [rows("a", "d")], "append", first_round=2)
    assert str(checkpoint) in str(failure.value)
    # Nothing ran; a session that names the pinned provider runs it as Spark would, whatever ttlstore settings it holds.
    more = run_rounds(spark, HDFS_PROVIDER, tmp_path, EVENTS, lambda s: s.dropDuplicates(["key"]),
                      [rows("a", "d")], "append", first_round=2, extra_conf={ttlstore.settings.PREFIX + "ttl": "1h"})
    assert [r.key for r in more.outputs[0]] == ["d"]
