"""Damaged checkpoint files: every kind of file ttlstore writes, every fault, at the latest version and
an older one. A restart either computes what the undamaged checkpoint computes, or fails naming the
damaged file; and with the file put back, the same checkpoint goes on as if nothing had happened
(a failed restart changed no committed state).

The cases come from two tables, FILE_KINDS and FAULTS; `test_every_file_ttlstore_writes_is_a_kind_of_the_matrix`
fails when a checkpoint holds a file no kind describes, so a new kind of file cannot be left out.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from operator_scenarios import EVENTS, SCENARIOS
from pyspark.errors import StreamingQueryException
from pyspark.sql import SparkSession

import ttlstore

from conftest import HDFS_PROVIDER, TTL_PROVIDER, StreamRun, run_rounds, unload_state_stores

AGGREGATION = SCENARIOS[0]  # count and sum per key, update mode: every batch's output depends on all the state
BASE_ROUNDS = 4
SNAPSHOTS = {"spark.sql.streaming.stateStore.minDeltasForSnapshot": "2"}


@dataclass(frozen=True)
class FileKind:
    """A kind of file in a store's `ttlstore/` folder: its name pattern and which file is the latest or an older one."""

    name: str
    pattern: str  # a regular expression over the path below `ttlstore/`
    checkpoint: str  # which base checkpoint has it: "own" (written by ttlstore) or "adopted" (migrated)
    versioned: bool = True  # one file per version (so a latest and an older one), or one per store

    def files(self, folder: Path) -> list[Path]:
        found = [p for p in folder.rglob("*") if p.is_file() and re.fullmatch(self.pattern, str(p.relative_to(folder)))]
        return sorted(found, key=lambda p: (p.stat().st_mtime_ns, p.name))


FILE_KINDS = [
    FileKind("changelog", r"\d+\.changelog", "own"),
    FileKind("snapshot (manifest and RocksDB metadata)", r"\d+\.snapshot", "own"),
    FileKind("SST", r"sst/[^/]+\.sst", "own"),
    FileKind("adoption record", r"adopted\.json", "adopted", versioned=False),
]


def truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def flip(path: Path) -> None:
    data = bytearray(path.read_bytes())
    for i in range(len(data) // 3, min(len(data), len(data) // 3 + 8)):
        data[i] ^= 0x5A
    path.write_bytes(bytes(data))


def empty(path: Path) -> None:
    path.write_bytes(b"")


FAULTS: dict[str, Callable[[Path], None]] = {"truncated": truncate, "bytes flipped": flip, "deleted": Path.unlink,
                                             "emptied": empty}
WHICH = ("latest", "older")


def build_base(spark: SparkSession, workdir: Path, kind: str) -> Path:
    """A checkpoint of BASE_ROUNDS batches on ttlstore (snapshots every 2 versions), or migrated from
    Spark's HDFS provider after BASE_ROUNDS - 1 and one more batch on ttlstore."""
    if kind == "own":
        run = run_rounds(spark, TTL_PROVIDER, workdir, EVENTS, AGGREGATION.build, AGGREGATION.rounds[:BASE_ROUNDS],
                         AGGREGATION.output_mode, extra_conf=SNAPSHOTS)
    else:
        run = run_rounds(spark, HDFS_PROVIDER, workdir, EVENTS, AGGREGATION.build,
                         AGGREGATION.rounds[: BASE_ROUNDS - 1], AGGREGATION.output_mode)
        assert ttlstore.migrate(run.checkpoint).action == "migrated"
        run = run_rounds(spark, TTL_PROVIDER, workdir, EVENTS, AGGREGATION.build,
                         AGGREGATION.rounds[BASE_ROUNDS - 1: BASE_ROUNDS], AGGREGATION.output_mode,
                         first_round=BASE_ROUNDS - 1)
    assert run.checkpoint is not None
    return workdir


def next_round(spark: SparkSession, workdir: Path) -> list:
    """The batch after the base, on the checkpoint in `workdir`: its output, sorted."""
    run = run_rounds(spark, TTL_PROVIDER, workdir, EVENTS, AGGREGATION.build,
                     AGGREGATION.rounds[BASE_ROUNDS: BASE_ROUNDS + 1], AGGREGATION.output_mode,
                     first_round=BASE_ROUNDS, extra_conf=SNAPSHOTS)
    return sorted(tuple(r) for r in run.outputs[0])


def store_folders(workdir: Path) -> list[Path]:
    return sorted(workdir.glob("checkpoint/state/*/*/ttlstore"))


def wait_for_snapshots(workdir: Path, timeout_s: float = 120) -> None:
    """Until every store has uploaded a snapshot. Spark's maintenance uploads them in the background
    (every second here); unloading the stores before it ran would drop the pending ones, and a
    loaded machine can make it late."""
    deadline = time.monotonic() + timeout_s
    while not all(list(f.glob("*.snapshot")) for f in store_folders(workdir)):
        assert time.monotonic() < deadline, f"no snapshot uploaded in {timeout_s} s: {store_folders(workdir)}"
        time.sleep(0.5)


@dataclass(frozen=True)
class Base:
    """An undamaged checkpoint, kept aside, and where it runs: the file source's log records its input
    files' absolute paths, so every case runs the checkpoint at the path it was made at."""

    work: Path
    kept: Path
    expected: list  # what the batch after the base emits, undamaged

    def restore(self) -> Path:
        shutil.rmtree(self.work, ignore_errors=True)
        shutil.copytree(self.kept, self.work)
        return self.work


@pytest.fixture(scope="module")
def bases(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Base]:
    """Per base kind, the undamaged checkpoint and what its next batch emits."""
    out = {}
    for kind in ("own", "adopted"):
        root = tmp_path_factory.mktemp(f"base-{kind}")
        work, kept = root / "work", root / "kept"
        build_base(spark, work, kind)
        if kind == "own":
            wait_for_snapshots(work)
        unload_state_stores(spark)
        shutil.copytree(work, kept)
        expected = next_round(spark, work)
        assert expected, "the batch after the base must emit rows, or a wrong state could go unseen"
        out[kind] = Base(work, kept, expected)
    return out


def test_every_file_ttlstore_writes_is_a_kind_of_the_matrix(bases: dict[str, Base]):
    for kind_of_base, base in bases.items():
        for folder in store_folders(base.kept):
            for path in (p for p in folder.rglob("*") if p.is_file()):
                relative = str(path.relative_to(folder))
                kinds = [k for k in FILE_KINDS if re.fullmatch(k.pattern, relative)]
                assert kinds, f"{relative} ({kind_of_base} checkpoint) is a kind of file the damage matrix does not know"
    for kind in FILE_KINDS:
        kept = bases[kind.checkpoint].kept
        assert any(kind.files(f) for f in store_folders(kept)), f"the {kind.checkpoint} base has no {kind.name}"


# Each case's outcome ("recovered", or the error's name), written to $TTLSTORE_DAMAGE_REPORT at the
# end of the module when it is set (make chaos puts the table in docs/reliability.md).
OUTCOMES: dict[str, str] = {}


@pytest.fixture(scope="module", autouse=True)
def report_outcomes():
    yield
    if os.environ.get("TTLSTORE_DAMAGE_REPORT") and OUTCOMES:
        Path(os.environ["TTLSTORE_DAMAGE_REPORT"]).write_text(json.dumps(OUTCOMES, indent=2))


def error_name(message: str) -> str:
    """The name of ttlstore's error in a failed query's message: the innermost, after Spark's wrappers."""
    names = re.findall(r"\[([A-Z][A-Z_]+)\]", message)
    return names[-1] if names else "unnamed"


CASES = [pytest.param(kind, fault, which, id=f"{kind.name}, {which}, {fault}")
         for kind in FILE_KINDS for fault in FAULTS for which in (WHICH if kind.versioned else WHICH[:1])]


@pytest.mark.parametrize("kind, fault, which", CASES)
def test_a_damaged_file_is_recovered_from_or_named_and_the_checkpoint_survives(
    spark: SparkSession, bases: dict[str, Base], kind: FileKind, fault: str, which: str
):
    base = bases[kind.checkpoint]
    # The last case's query may still be uploading a snapshot into the work copy in the background.
    unload_state_stores(spark)
    work = base.restore()
    folder = next(f for f in store_folders(work) if kind.files(f))
    files = kind.files(folder)
    target = files[-1] if which == "latest" else files[0]
    original = target.read_bytes()
    FAULTS[fault](target)

    try:
        got = next_round(spark, work)
    except StreamingQueryException as e:
        message = str(e)
        assert target.name in message, f"the error does not name the damaged file {target.name}: {message[:2000]}"
        OUTCOMES[f"{kind.name}|{which}|{fault}"] = f"named: {error_name(message)}"
        # The failed restart changed no committed state: with the file back, the batch computes as undamaged.
        target.write_bytes(original)
        assert next_round(spark, work) == base.expected
    else:
        assert got == base.expected, f"recovered from a {fault} {kind.name} with other results"
        OUTCOMES[f"{kind.name}|{which}|{fault}"] = "recovered"


def restart_with_latest_snapshot_damaged(spark: SparkSession, base: Base, repair: str) -> tuple[Path, StreamRun]:
    """The base with the snapshot its restart loads (the newest) damaged, restarted for one batch with
    Spark's autoSnapshotRepair.enabled set to `repair`: the damaged file, and the run."""
    unload_state_stores(spark)
    work = base.restore()
    snapshots = FILE_KINDS[1]
    folder = next(f for f in store_folders(work) if snapshots.files(f))
    latest = max(snapshots.files(folder), key=lambda p: int(p.name.split(".")[0]))
    flip(latest)
    conf = {**SNAPSHOTS, "spark.sql.streaming.stateStore.autoSnapshotRepair.enabled": repair}
    try:
        return latest, run_rounds(spark, TTL_PROVIDER, work, EVENTS, AGGREGATION.build,
                                  AGGREGATION.rounds[BASE_ROUNDS: BASE_ROUNDS + 1], AGGREGATION.output_mode,
                                  first_round=BASE_ROUNDS, extra_conf=conf)
    except StreamingQueryException as e:
        raise AssertionError(f"{latest.name}: {e}") from e


def test_a_damaged_snapshot_is_repaired_as_spark_s_providers_repair_it(spark: SparkSession, bases: dict[str, Base]):
    """Spark's autoSnapshotRepair (on by default): the restart builds the version from an older snapshot
    and the changelogs after it, computes what the undamaged checkpoint computes, and says so."""
    _, run = restart_with_latest_snapshot_damaged(spark, bases["own"], "true")
    assert sorted(tuple(r) for r in run.outputs[0]) == bases["own"].expected
    assert run.last_progress is not None
    assert run.last_progress["stateOperators"][0]["customMetrics"]["ttlstoreSnapshotsRepaired"] >= 1


def test_with_spark_s_snapshot_repair_off_a_damaged_snapshot_fails_naming_it(spark: SparkSession, bases: dict[str, Base]):
    with pytest.raises(AssertionError, match=r"(?s)^(\d+\.snapshot): .*SNAPSHOT_CORRUPTED.*\1"):
        restart_with_latest_snapshot_damaged(spark, bases["own"], "false")
