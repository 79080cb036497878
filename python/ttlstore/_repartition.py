"""Giving a stopped query's state another number of partitions (``ttlstore repartition``).

A stateful query keeps the ``spark.sql.shuffle.partitions`` of its first batch for life: Spark
pins it in the offset log, and each state store partition holds the keys that the shuffle sends
there. :func:`repartition` adds one batch to the checkpoint that re-plans the last committed batch
with the new count and carries every row of the state, timestamp included (TTL is not reset), to
the partition Spark's shuffle sends its key to; the query then continues with the new count. It is
Spark 4.3's offline repartition (``spark._streamingCheckpointManager.repartition``, which serves
only Spark's RocksDB provider) for ttlstore's state, and runs in a plain JVM without a Spark
session (see docs/repartition.md).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ttlstore._offline import OfflineJvmError, command, json_lines
from ttlstore.errors import TtlStoreError


class RepartitionError(TtlStoreError):
    """The checkpoint cannot be repartitioned; the message (``[NAME] ...``) says why and what to do."""


@dataclass
class RepartitionReport:
    """What :func:`repartition` did (or, with ``dry_run``, would do)."""

    checkpoint: str
    action: str  # "repartitioned", "would repartition", "unchanged"
    from_partitions: int
    to_partitions: int
    #: The batch whose state was read, and the batch that carries the repartitioned state.
    last_committed_batch: int | None
    batch: int | None
    #: True when this finished a repartition that an earlier run started and did not finish.
    retry: bool
    #: Per operator: id, name, and per store its name, rows and rows per new partition.
    operators: list[dict[str, Any]] = field(default_factory=list)
    duration_ms: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def repartition(
    checkpoint: str | os.PathLike[str],
    partitions: int,
    *,
    dry_run: bool = False,
    hadoop_conf: Mapping[str, str] | None = None,
    jars: Sequence[str | os.PathLike[str]] = (),
    progress: Callable[[dict[str, Any]], None] | None = None,
) -> RepartitionReport:
    """Give the state of the stopped query at ``checkpoint`` ``partitions`` partitions.

    Run it while the query is stopped, after its last batch committed. ``checkpoint`` may be any
    URI Hadoop reads (``hdfs://``, ``s3a://``, ``file:``), read with ``hadoop_conf`` (a
    ``spark.hadoop.`` prefix is taken off, as Spark does). The state of every aggregation,
    dropDuplicates, flatMapGroupsWithState/applyInPandasWithState, session window and stream-stream
    join of the query is repartitioned. The way back is another repartition to the old count.

    :param dry_run: check everything and report what would be done; write nothing.
    :param progress: called with each operator's result as it is done.
    :param jars: jars (or directories of them) the file system needs beyond pyspark's, such as
        hadoop-aws and the AWS SDK for ``s3a://``.
    :raises RepartitionError: naming what is wrong and what to do; nothing committed was changed.
    """
    args = [os.fspath(checkpoint), "--partitions", str(int(partitions))] + (["--dry-run"] if dry_run else [])
    try:
        with json_lines(command("RepartitionMain", args, hadoop_conf, jars)) as lines:
            for line in lines:
                if "operator" in line and progress is not None:
                    progress(line["operator"])
                if "report" in line:
                    r = line["report"]
                    return RepartitionReport(
                        r["checkpoint"], r["action"], r["fromPartitions"], r["toPartitions"],
                        r.get("lastCommittedBatch"), r.get("batch"), r["retry"],
                        [{"id": op["id"], "name": op["name"],
                          "stores": [{"name": s["name"], "rows": sum(s["rowsByPartition"]),
                                      "rows_by_partition": s["rowsByPartition"]} for s in op["stores"]]}
                         for op in r["operators"]],
                        r["durationMs"])
    except OfflineJvmError as e:
        raise RepartitionError(str(e)) from None
    raise RepartitionError("the repartitioning JVM ended without a report")
