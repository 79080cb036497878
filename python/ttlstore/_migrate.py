"""Moving a stopped query's checkpoint from Spark's own state store provider to ttlstore.

Spark pins the provider class in the checkpoint's offset log, so a query keeps its provider for
life. ``migrate`` rewrites that pin in the latest offset-log entry (keeping a backup); on restart
ttlstore adopts the state Spark's provider left, without rewriting it, and upgrades it lazily
(KIP-258; see docs/migration.md). Nothing else in the checkpoint changes, and ``rollback`` puts the
pin back while no batch has run on ttlstore.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ttlstore.settings import PROVIDER_CLASS, PROVIDER_CLASS_KEY

HDFS_PROVIDER = "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider"
ROCKSDB_PROVIDER = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
ADOPTABLE = {HDFS_PROVIDER: "hdfs", ROCKSDB_PROVIDER: "rocksdb"}
#: Where migrate keeps its backup and record, inside the checkpoint (Spark ignores the directory).
BACKUP_DIR = "ttlstore-migration"
_JOIN_FORMAT_KEY = "spark.sql.streaming.join.stateFormatVersion"
_CHECKPOINT_FORMAT_KEY = "spark.sql.streaming.stateStore.checkpointFormatVersion"


class MigrationError(Exception):
    """The checkpoint cannot be migrated (or rolled back); the message says why and what to do."""

    def __init__(self, name: str, message: str):
        super().__init__(f"[{name}] {message}")
        self.name = name


@dataclass
class MigrationReport:
    """What ``migrate`` found and did (or, with ``dry_run``, would do)."""

    checkpoint: str
    batch: int
    provider: str
    operators: list[dict[str, Any]]
    action: str  # "migrated", "would migrate", "already migrated", "rolled back", "would roll back"
    uncommitted_batch: int | None = None
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _batches(directory: Path) -> list[int]:
    if not directory.is_dir():
        return []
    return sorted(int(p.name) for p in directory.iterdir() if p.name.isdigit())


def _read_entry(path: Path) -> tuple[list[str], dict[str, Any]]:
    lines = path.read_text(encoding="utf-8").split("\n")
    if len(lines) < 2 or not lines[0].startswith("v"):
        raise MigrationError("OFFSET_LOG_UNREADABLE", f"{path} is not an offset-log entry (no version line).")
    try:
        metadata = json.loads(lines[1])
    except json.JSONDecodeError as e:
        raise MigrationError("OFFSET_LOG_UNREADABLE", f"{path}: its metadata line is not JSON ({e}).") from None
    return lines, metadata


def _operators(checkpoint: Path) -> list[dict[str, Any]]:
    state = checkpoint / "state"
    found = []
    for op in _batches(state):
        op_dir = state / str(op)
        name, stores = None, []
        meta = op_dir / "_metadata" / "metadata"
        if meta.is_file():
            try:
                info = json.loads(meta.read_text(encoding="utf-8").split("\n", 1)[1])
                name = info.get("operatorInfo", {}).get("operatorName")
                stores = [s.get("storeName") for s in info.get("stateStoreInfo", [])]
            except (IndexError, ValueError, AttributeError):
                pass
        if (op_dir / "_metadata" / "v2").exists() or (op_dir / "_stateSchema").exists():
            name = name or "transformWithState"
        found.append({"id": op, "name": name, "stores": stores,
                      "partitions": len([p for p in op_dir.iterdir() if p.name.isdigit()])})
    return found


def _checkpoint_format(checkpoint: Path) -> int:
    """The state checkpoint format the query runs in: 2 when its commit log names checkpoint ids.

    Spark keeps the format a checkpoint started with and records it in the commit log, not in the
    offset log: a ``v2`` entry with ``stateUniqueIds``."""
    commits = _batches(checkpoint / "commits")
    if not commits:
        return 1
    try:
        lines = (checkpoint / "commits" / str(commits[-1])).read_text(encoding="utf-8").split("\n")
        return 2 if lines[0].strip() == "v2" or "stateUniqueIds" in json.loads(lines[1]) else 1
    except (OSError, IndexError, ValueError):
        return 1


def _refuse_unservable(operators: list[dict[str, Any]], conf: dict[str, str], checkpoint: Path) -> None:
    for op in operators:
        name = (op["name"] or "").lower()
        if "transformwithstate" in name:
            raise MigrationError(
                "UNSUPPORTED_OPERATOR",
                f"operator {op['id']} is transformWithState, which Spark 4.3 runs only on its own "
                "RocksDBStateStoreProvider; this query cannot move to ttlstore.")
        if "join" in name and int(conf.get(_JOIN_FORMAT_KEY, "2")) >= 3:
            raise MigrationError(
                "UNSUPPORTED_OPERATOR",
                f"operator {op['id']} is a stream-stream join with state format {conf[_JOIN_FORMAT_KEY]} "
                f"({_JOIN_FORMAT_KEY}), which needs column families; ttlstore serves join state format 2 only.")
    written = max(int(conf.get(_CHECKPOINT_FORMAT_KEY, "1")), _checkpoint_format(checkpoint))
    if written != 1:
        raise MigrationError(
            "UNSUPPORTED_CHECKPOINT",
            f"{checkpoint} was written in state checkpoint format v{written} ({_CHECKPOINT_FORMAT_KEY}; its "
            "commit log names the checkpoint id of every state version), and ttlstore adopts the state of "
            "format v1 checkpoints only. Nothing was changed. Keep this query on its provider, or run it on "
            "ttlstore from a new checkpoint (in either format) and let it rebuild its state from the source.")


def migrate(
    checkpoint: str | os.PathLike[str],
    *,
    dry_run: bool = False,
    rollback: bool = False,
    force: bool = False,
) -> MigrationReport:
    """Move a stopped query's checkpoint to ttlstore, or (``rollback``) back.

    Checks that ``checkpoint`` is a streaming checkpoint on Spark's HDFS or RocksDB provider whose
    operators ttlstore serves, then rewrites the provider pinned in the latest offset-log entry to
    ttlstore's, keeping the original in ``<checkpoint>/ttlstore-migration/``. Running it again is
    harmless. A last batch with offsets but no commit re-runs on ttlstore at restart: that needs
    ``force``.

    :param dry_run: report what would change, change nothing.
    :param rollback: restore the original entry; refused once a batch has run on ttlstore.
    :param force: migrate although the last batch has no commit.
    :raises MigrationError: naming what is wrong and what to do.
    """
    root = Path(checkpoint)
    offsets = root / "offsets"
    batches = _batches(offsets)
    if not batches:
        raise MigrationError(
            "NOT_A_CHECKPOINT",
            f"{root} is not a streaming query's checkpoint: it has no {offsets} with batch files. Pass the "
            "directory given as the query's checkpointLocation, after the query ran at least one batch.")
    if rollback:
        return _rollback(root, dry_run)
    latest = batches[-1]
    entry = offsets / str(latest)
    lines, metadata = _read_entry(entry)
    conf = metadata.get("conf", {})
    provider = conf.get(PROVIDER_CLASS_KEY)
    operators = _operators(root)
    report = MigrationReport(str(root), latest, provider or "(not recorded)", operators, "would migrate")
    if provider == PROVIDER_CLASS:
        report.action = "already migrated"
        return report
    if provider not in ADOPTABLE:
        raise MigrationError(
            "UNKNOWN_PROVIDER",
            f"{entry} pins the provider {provider!r}; ttlstore adopts the state of "
            f"{HDFS_PROVIDER} and {ROCKSDB_PROVIDER} only.")
    _refuse_unservable(operators, conf, root)
    if latest not in _batches(root / "commits"):
        report.uncommitted_batch = latest
        report.notes.append(
            f"batch {latest} has offsets but no commit: on restart it runs again, on ttlstore, from the "
            f"state of batch {latest - 1}")
        if not force and not dry_run:
            raise MigrationError(
                "UNCOMMITTED_BATCH",
                f"batch {latest} of {root} has offsets but no commit. After migration it re-runs on ttlstore "
                f"from the state of batch {latest - 1}. Pass --force to accept that, or restart the query "
                "on its provider until the batch commits, stop it, and migrate then.")
    if dry_run:
        return report
    backup = root / BACKUP_DIR
    backup.mkdir(exist_ok=True)
    shutil.copy2(entry, backup / f"offsets-{latest}")
    crc = offsets / f".{latest}.crc"
    if crc.exists():
        shutil.copy2(crc, backup / f"offsets-{latest}.crc")
    (backup / "migration.json").write_text(json.dumps({
        "batch": latest, "from": provider, "committed": report.uncommitted_batch is None,
        "migratedAtMs": int(time.time() * 1000)}) + "\n", encoding="utf-8")
    conf[PROVIDER_CLASS_KEY] = PROVIDER_CLASS
    lines[1] = json.dumps(metadata, separators=(",", ":"))
    tmp = offsets / f".{latest}.ttlstore-tmp"
    tmp.write_text("\n".join(lines), encoding="utf-8")
    os.replace(tmp, entry)
    # Hadoop's checksum of the old content would fail Spark's read of the new one.
    crc.unlink(missing_ok=True)
    report.action = "migrated"
    return report


def _rollback(root: Path, dry_run: bool) -> MigrationReport:
    backup = root / BACKUP_DIR
    record_file = backup / "migration.json"
    if not record_file.is_file():
        raise MigrationError("NOT_MIGRATED", f"{root} has no {record_file}: it was not migrated by ttlstore migrate.")
    record = json.loads(record_file.read_text(encoding="utf-8"))
    batch = record["batch"]
    ran = [b for b in _batches(root / "offsets") if b > batch]
    if not record["committed"] and batch in _batches(root / "commits"):
        ran.append(batch)
    adopted = sorted(str(p.relative_to(root)) for p in (root / "state").rglob("ttlstore") if p.is_dir())
    if ran or adopted:
        raise MigrationError(
            "ALREADY_RAN_ON_TTLSTORE",
            f"batch {(ran or [batch])[0]} of {root} already ran on ttlstore "
            f"({'ttlstore state in ' + adopted[0] if adopted else 'offsets after the migrated batch'}); its "
            "state exists only in ttlstore's format now, so the original provider cannot continue it.")
    report = MigrationReport(str(root), batch, record["from"], _operators(root), "would roll back")
    if dry_run:
        return report
    offsets = root / "offsets"
    shutil.copy2(backup / f"offsets-{batch}", offsets / str(batch))
    if (backup / f"offsets-{batch}.crc").exists():
        shutil.copy2(backup / f"offsets-{batch}.crc", offsets / f".{batch}.crc")
    shutil.rmtree(backup)
    report.action = "rolled back"
    return report
