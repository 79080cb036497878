"""What a streaming checkpoint holds: operators, stores, versions, rows, bytes, TTL settings.

The facts come from io.ttlstore.CheckpointInspector in the jar, which reads the checkpoint's files
without writing anything: through a Spark session's JVM (:func:`inspect_checkpoint`), or in a plain
JVM with Spark's jars and no session (:func:`inspect_checkpoint_offline`, what the CLI uses: it
answers in seconds). This module adds the facts up per store and prints them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ttlstore._connect import hadoop_settings, is_connect_session
from ttlstore._offline import OfflineJvmError, command, json_lines
from ttlstore.errors import TtlStoreError

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: Called after each store partition: (partitions done, partitions in all).
Progress = Callable[[int, int], None]


class InspectError(TtlStoreError):
    """The checkpoint could not be inspected; the message names the file or setting and the fix."""


def _jvm_call(call: Callable[[], str]) -> Any:
    try:
        return json.loads(call())
    except Exception as e:  # py4j's error carries ttlstore's [ERROR_NAME] message
        java = getattr(e, "java_exception", None)
        if java is None:
            raise
        raise InspectError(str(java.getMessage()), _parameters(java)) from None


def _parameters(java: Any) -> dict[str, str]:
    """The message parameters of a JVM error of ttlstore's (a SparkThrowable), if it is one."""
    try:
        return {str(k): str(v) for k, v in dict(java.getMessageParameters()).items()}
    except Exception:
        return {}


def inspect_checkpoint(
    spark: SparkSession,
    checkpoint: str | os.PathLike[str],
    *,
    scan: bool = True,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Describe a streaming checkpoint: the provider pinned in it, the batches, and per stateful
    operator and store: partitions, retained versions, rows, expired rows still stored, legacy rows,
    bytes on disk, the TTL settings recorded with the latest version and ttlstore's format version.

    Over Spark Connect the client has no JVM of the session's: the checkpoint is read as
    :func:`inspect_checkpoint_offline` reads it, from this machine, with the session's ``spark.hadoop.*``
    settings; a checkpoint only the server can reach is inspected there with ``ttlstore inspect``.

    :param scan: rebuild each store's latest version in a temporary directory to count rows,
        expired rows and legacy rows exactly; without it, rows come from the latest version's
        record and expired and legacy rows are ``None``.
    :param progress: called after each store partition with (done, total).
    :raises InspectError: when ``checkpoint`` is not a streaming checkpoint, or a file is damaged.
    """
    path = os.fspath(checkpoint)
    if is_connect_session(spark):
        return inspect_checkpoint_offline(path, scan=scan, progress=progress, hadoop_conf=hadoop_settings(spark))
    inspector = spark._jvm.io.ttlstore.CheckpointInspector  # type: ignore[union-attr]
    overview = _jvm_call(lambda: inspector.overview(path))

    def reports() -> Iterator[dict[str, Any]]:
        for op in overview["operators"]:
            for store in op["stores"]:
                for p in store["partitions"]:
                    def call(op: Any = op, store: Any = store, p: Any = p) -> str:
                        return str(inspector.store(path, op["id"], store["name"], p, scan))

                    yield _jvm_call(call)

    return _assemble(overview, reports(), progress)


def inspect_checkpoint_offline(
    checkpoint: str | os.PathLike[str],
    *,
    scan: bool = True,
    progress: Progress | None = None,
    hadoop_conf: Mapping[str, str] | None = None,
    jars: Sequence[str | os.PathLike[str]] = (),
) -> dict[str, Any]:
    """:func:`inspect_checkpoint` without a Spark session: in a plain JVM started with the jars of
    the installed pyspark and ttlstore's jar (``io.ttlstore.InspectMain``), found through
    ``JAVA_HOME`` or ``java`` on the ``PATH``. ``checkpoint`` may be any URI Hadoop reads
    (``hdfs://``, ``s3a://``, ``file:``); ``hadoop_conf`` gives the Hadoop settings to read it with
    (``fs.defaultFS``, credentials; a ``spark.hadoop.`` prefix is taken off, as Spark does).

    :param jars: jars (or directories of them) the file system needs beyond pyspark's, such as
        hadoop-aws and the AWS SDK for ``s3a://``.
    :raises InspectError: as :func:`inspect_checkpoint`, and when no Java can be found.
    """
    try:
        line = command("InspectMain", [os.fspath(checkpoint)] + ([] if scan else ["--quick"]), hadoop_conf, jars,
                       brief=not scan)
        with json_lines(line) as lines:
            first = next(lines)

            def reports() -> Iterator[dict[str, Any]]:
                for answer in lines:
                    yield answer["report"]

            return _assemble(first["overview"], reports(), progress)
    except OfflineJvmError as e:
        raise InspectError(str(e)) from None


def _assemble(overview: dict[str, Any], reports: Iterator[dict[str, Any]], progress: Progress | None) -> dict[str, Any]:
    """The overview's operators and stores, each with the reports of its partitions, in order."""
    total = sum(len(s["partitions"]) for op in overview["operators"] for s in op["stores"])
    done = 0
    operators = []
    for op in overview["operators"]:
        stores = []
        for store in op["stores"]:
            parts = []
            for _ in store["partitions"]:
                parts.append(next(reports))
                done += 1
                if progress is not None:
                    progress(done, total)
            stores.append(_store_summary(store["name"], parts))
        operators.append({"id": op["id"], "name": op.get("name"), "stores": stores})
    return {
        "checkpoint": overview["checkpoint"],
        "provider": overview.get("provider"),
        "latestBatch": overview.get("latestBatch"),
        "lastCommittedBatch": overview.get("lastCommittedBatch"),
        "operators": operators,
    }


_TTL_FIELDS = ("ttlMs", "updateType", "stateVisibility", "timeCharacteristic", "eventTimeColumn")


def _total(parts: list[dict[str, Any]], key: str) -> int | None:
    values = [p.get(key) for p in parts]
    return None if any(v is None for v in values) else sum(int(v) for v in values if v is not None)


def _store_summary(name: str, parts: list[dict[str, Any]]) -> dict[str, Any]:
    versions = sorted({v for p in parts for v in p["versions"]})
    # The settings recorded with each partition's latest version (not the time each was judged at).
    ttls = {json.dumps({k: p["ttl"].get(k) for k in _TTL_FIELDS}) for p in parts if p.get("ttl")}
    distinct_ttls = [json.loads(t) for t in sorted(ttls)]
    return {
        "name": name,
        "partitions": len(parts),
        "files": sorted({p["files"] for p in parts}),
        "formatVersions": sorted({p["formatVersion"] for p in parts if p.get("formatVersion") is not None}),
        "retainedVersions": versions,
        "latestVersion": max((p["latestVersion"] for p in parts if p.get("latestVersion") is not None),
                             default=None),
        "rows": _total(parts, "rows"),
        "expiredRowsStored": _total(parts, "expiredRowsStored"),
        "legacyRows": _total(parts, "legacyRows"),
        "bytesOnDisk": sum(p["bytesOnDisk"] for p in parts),
        "ttl": distinct_ttls,
        "scanned": all(p["scanned"] for p in parts),
        "byPartition": parts,
    }


def _bytes(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


def _count(n: int | None) -> str:
    return "-" if n is None else f"{n:,}"


def _ttl_text(ttls: list[dict[str, Any]]) -> str:
    if not ttls:
        return "-"
    parts = []
    for t in ttls:
        if t["ttlMs"] <= 0:
            parts.append("off")
        else:
            column = f" on {t['eventTimeColumn']}" if t.get("eventTimeColumn") else ""
            parts.append(f"{_duration(t['ttlMs'])} {t['timeCharacteristic']}{column}, {t['updateType']}, "
                         f"{t['stateVisibility']}")
    return "; ".join(parts)


def _duration(ms: int) -> str:
    for unit_ms, unit in ((86_400_000, "d"), (3_600_000, "h"), (60_000, "min"), (1000, "s")):
        if ms % unit_ms == 0:
            return f"{ms // unit_ms} {unit}"
    return f"{ms} ms"


def _versions_text(versions: list[int]) -> str:
    if not versions:
        return "-"
    return f"{versions[0]}" if len(versions) == 1 else f"{versions[0]}-{versions[-1]} ({len(versions)})"


def _age(now_ms: int, written_ms: int | None) -> str:
    if written_ms is None:
        return "-"
    seconds = max(0, now_ms - written_ms) // 1000
    return f"{seconds // 3600}h{seconds // 60 % 60:02d}m" if seconds >= 3600 else f"{seconds // 60}m{seconds % 60:02d}s"


def partition_rows(report: dict[str, Any], now_ms: int) -> list[list[str]]:
    """Each store partition's row of ``ttlstore inspect --partitions``: the figures a running query reports per
    store (docs/monitoring.md) that its checkpoint shows: the newest snapshot, how many versions the latest is
    past it (what a restart replays), how long ago it was written; rows, expired rows stored, bytes."""
    rows = []
    for op in report["operators"]:
        for s in op["stores"]:
            for p in s["byPartition"]:
                snapshot = max(p["snapshots"], default=None)
                latest = p.get("latestVersion")
                behind = "-" if latest is None else str(latest - (snapshot or 0))
                rows.append([
                    str(op["id"]), s["name"], str(p["partition"]), _count(latest), _count(snapshot), behind,
                    _age(now_ms, p.get("newestSnapshotWrittenAtMs")) if snapshot is not None else "-",
                    _count(p.get("rows")), _count(p.get("expiredRowsStored")), _bytes(p["bytesOnDisk"]),
                ])
    return rows


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in [header] + rows) for i in range(len(header))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=False)).rstrip() for r in [header] + rows]


def format_report(report: dict[str, Any], partitions_at_ms: int | None = None) -> str:
    """The report as a readable table (what ``ttlstore inspect`` prints without ``--json``): a row per store, or
    with ``partitions_at_ms`` (now, in ms since the epoch) a row per partition (``--partitions``)."""
    batches = (f"latest {report['latestBatch']}, last committed "
               f"{'-' if report['lastCommittedBatch'] is None else report['lastCommittedBatch']}")
    lines = [
        f"checkpoint  {report['checkpoint']}",
        f"provider    {report['provider'] or '(not recorded)'}",
        f"batches     {batches}",
        "",
    ]
    if partitions_at_ms is not None:
        header = ["operator", "store", "part", "latest", "snapshot", "behind", "written", "rows", "expired", "disk"]
        rows = partition_rows(report, partitions_at_ms)
        lines += _table(header, rows) if rows else ["no stateful operators"]
        return "\n".join(lines)
    header = ["operator", "store", "parts", "files", "format", "versions", "rows", "expired", "legacy", "disk",
              "TTL"]
    rows = []
    for op in report["operators"]:
        label = f"{op['id']}" + (f" {op['name']}" if op.get("name") else "")
        for s in op["stores"]:
            rows.append([
                label, s["name"], str(s["partitions"]), ",".join(s["files"]),
                ",".join(str(v) for v in s["formatVersions"]) or "-", _versions_text(s["retainedVersions"]),
                _count(s["rows"]), _count(s["expiredRowsStored"]), _count(s["legacyRows"]),
                _bytes(s["bytesOnDisk"]), _ttl_text(s["ttl"]),
            ])
    if not rows:
        lines.append("no stateful operators")
        return "\n".join(lines)
    lines += _table(header, rows)
    if not all(s["scanned"] for op in report["operators"] for s in op["stores"]):
        lines += ["", "expired and legacy rows are counted by a scan (leave out --quick); '-': not known"]
    return "\n".join(lines)
