"""Moving a stopped query's checkpoint from Spark's own state store provider to ttlstore.

Spark pins the provider class in the checkpoint's offset log, so a query keeps its provider for
life. ``migrate`` rewrites that pin in the latest offset-log entry (keeping a backup); on restart
ttlstore adopts the state Spark's provider left, without rewriting it, and upgrades it lazily
(KIP-258; see docs/migration.md). Nothing else in the checkpoint changes, and ``rollback`` puts the
pin back while no batch has run on ttlstore.

The work is done by ``io.ttlstore.migrate.CheckpointMigration`` in a plain JVM (no Spark session), through
Hadoop's FileSystem API: the checkpoint may be any URI Spark accepts.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ttlstore._offline import OfflineJvmError, command, json_lines
from ttlstore.errors import TtlStoreError

HDFS_PROVIDER = "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider"
ROCKSDB_PROVIDER = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
#: Where migrate keeps its backup and record, inside the checkpoint (Spark ignores the directory).
BACKUP_DIR = "ttlstore-migration"


class MigrationError(TtlStoreError):
    """The checkpoint cannot be migrated (or rolled back); the message says why and what to do."""


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


def migrate(
    checkpoint: str | os.PathLike[str],
    *,
    dry_run: bool = False,
    rollback: bool = False,
    force: bool = False,
    hadoop_conf: Mapping[str, str] | None = None,
    jars: Sequence[str | os.PathLike[str]] = (),
) -> MigrationReport:
    """Move a stopped query's checkpoint to ttlstore, or (``rollback``) back.

    Checks that ``checkpoint`` is a streaming checkpoint on Spark's HDFS or RocksDB provider whose
    operators ttlstore serves, then rewrites the provider pinned in the latest offset-log entry to
    ttlstore's, keeping the original in ``<checkpoint>/ttlstore-migration/``. Running it again is
    harmless. A last batch with offsets but no commit re-runs on ttlstore at restart: that needs
    ``force``. ``checkpoint`` may be any URI Hadoop reads (``hdfs://``, ``s3a://``, ``file:``),
    reached with ``hadoop_conf`` (a ``spark.hadoop.`` prefix is taken off, as Spark does).

    :param dry_run: report what would change, change nothing.
    :param rollback: restore the original entry; refused once a batch has run on ttlstore.
    :param force: migrate although the last batch has no commit.
    :param jars: jars (or directories of them) the file system needs beyond pyspark's, such as
        hadoop-aws and the AWS SDK for ``s3a://``.
    :raises MigrationError: naming what is wrong and what to do.
    """
    flags = [flag for flag, on in (("--dry-run", dry_run), ("--rollback", rollback), ("--force", force)) if on]
    try:
        with json_lines(command("MigrateMain", [os.fspath(checkpoint), *flags], hadoop_conf, jars, brief=True)) as lines:
            r = next(lines)["report"]
    except OfflineJvmError as e:
        raise MigrationError(str(e)) from None
    operators = [{"id": op["id"], "name": op.get("name"), "stores": op.get("stores", []),
                  "partitions": op["partitions"]} for op in r["operators"]]
    return MigrationReport(r["checkpoint"], r["batch"], r["provider"], operators, r["action"],
                           r.get("uncommittedBatch"), r.get("notes", []))
