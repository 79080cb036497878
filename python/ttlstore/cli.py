"""The ``ttlstore`` command line: ``ttlstore inspect CHECKPOINT``, ``ttlstore migrate CHECKPOINT``,
``ttlstore repartition CHECKPOINT --partitions N``, ``ttlstore jar`` (the bundled jar's path, for
``spark-submit --jars "$(ttlstore jar)"``) and ``ttlstore connect-server`` (the command that starts a
Spark Connect server with ttlstore).

All three work in a plain JVM with Spark's jars and the bundled jar, no Spark session, through
Hadoop's FileSystem API (any checkpoint URI, with ``--conf`` for Hadoop settings); ``inspect``
writes nothing, ``migrate`` and ``repartition`` need a stopped query.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import TextIO

from ttlstore._inspect import InspectError, format_report, inspect_checkpoint_offline
from ttlstore._migrate import MigrationError, MigrationReport, migrate
from ttlstore._repartition import RepartitionError, RepartitionReport, repartition
from ttlstore._version import __version__


class _Bar:
    """A one-line progress bar on a terminal: shown only while a scan goes through many stores."""

    def __init__(self, out: TextIO, enabled: bool):
        self.out = out
        self.enabled = enabled

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        width = 30
        filled = width * done // max(total, 1)
        self.out.write(f"\rscanning state [{'#' * filled}{'.' * (width - filled)}] {done}/{total} partitions")
        if done == total:
            self.out.write("\n")
        self.out.flush()


def _conf_argument(command: argparse.ArgumentParser) -> None:
    command.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                         help="a Hadoop setting to reach the checkpoint with, as spark-submit takes it "
                         "(spark.hadoop.fs.defaultFS=hdfs://nn:8020, fs.s3a.endpoint=...); repeatable")
    command.add_argument("--jars", default="", metavar="JARS",
                         help="comma-separated jars (or directories of jars) the file system needs beyond pyspark's, "
                         "as spark-submit --jars takes them: hadoop-aws and the AWS SDK for s3a://")


def _jars(args: argparse.Namespace) -> list[str]:
    return [j for j in args.jars.split(",") if j]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ttlstore", description="ttlstore's checkpoint tools.")
    parser.add_argument("--version", action="version", version=f"ttlstore {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    inspect = commands.add_parser(
        "inspect",
        help="describe a streaming checkpoint's state",
        description="Operators, stores, partitions, retained versions, rows, expired rows still stored, "
        "legacy rows, bytes on disk, the TTL settings in force, the provider and ttlstore's format version. "
        "Reads only.",
    )
    inspect.add_argument("checkpoint", help="the query's checkpointLocation: a path, or any URI Hadoop reads "
                         "(hdfs://, s3a://, file:)")
    _conf_argument(inspect)
    inspect.add_argument("--json", action="store_true", help="print JSON (for scripts) instead of a table")
    inspect.add_argument(
        "--quick", action="store_true",
        help="do not rebuild stores to count rows: rows from the latest record, expired and legacy rows unknown",
    )
    inspect.add_argument(
        "--progress", choices=("auto", "always", "never"), default="auto",
        help="progress bar on stderr while scanning (auto: when stderr is a terminal)",
    )
    inspect.add_argument(
        "--partitions", action="store_true",
        help="a row per store partition: its newest snapshot, the versions since (what a restart replays), when "
        "it was written, rows, expired rows and bytes",
    )
    move = commands.add_parser(
        "migrate",
        help="move a stopped query's checkpoint from Spark's HDFS or RocksDB provider to ttlstore",
        description="Rewrites the state store provider pinned in the latest offset-log entry to ttlstore's, "
        "keeping a backup in CHECKPOINT/ttlstore-migration. On restart ttlstore adopts the old state where it "
        "is (Spark's files are never rewritten) and upgrades it lazily. Stop the query first.",
    )
    move.add_argument("checkpoint", help="the query's checkpointLocation: a path, or any URI Hadoop reads")
    move.add_argument("--dry-run", action="store_true", help="show what would change, change nothing")
    move.add_argument("--rollback", action="store_true",
                      help="restore the original provider (only while no batch has run on ttlstore)")
    move.add_argument("--force", action="store_true",
                      help="migrate although the last batch has offsets but no commit (it re-runs on ttlstore)")
    _conf_argument(move)
    move.add_argument("--json", action="store_true", help="print JSON (for scripts)")
    spread = commands.add_parser(
        "repartition",
        help="give a stopped query's state another number of partitions (spark.sql.shuffle.partitions)",
        description="Adds one batch to the checkpoint that re-plans the last committed batch with N shuffle "
        "partitions and moves every state row, with its timestamp, to the partition Spark's shuffle sends its key "
        "to; the query continues with N partitions. Stop the query first (its last batch must be committed). "
        "The way back is another repartition to the old count.",
    )
    spread.add_argument("checkpoint", help="the query's checkpointLocation: a path, or any URI Hadoop reads")
    spread.add_argument("--partitions", type=int, required=True, metavar="N", help="the new number of partitions")
    spread.add_argument("--dry-run", action="store_true", help="check and show what would be done, change nothing")
    _conf_argument(spread)
    spread.add_argument("--json", action="store_true", help="print JSON (for scripts)")
    jar = commands.add_parser(
        "jar",
        help="print the path of the bundled jar for the installed pyspark",
        description='For spark-submit and other JVM launchers: spark-submit --jars "$(ttlstore jar)" ... '
        "together with --conf spark.sql.streaming.stateStore.providerClass=io.ttlstore.TtlStateStoreProvider. "
        "ttlstore has one jar per Spark line; this prints the one for the installed pyspark's line.",
    )
    jar.add_argument("--coordinates", action="store_true",
                     help="print the Maven coordinates of that line's artifact instead (for spark-submit --packages)")
    connect = commands.add_parser(
        "connect-server",
        help="print the command that starts a Spark Connect server with ttlstore",
        description="The installed pyspark's start-connect-server.sh with ttlstore's jar, session extension and "
        "provider, and a --conf per --conf given. Run it as it is printed, or with eval \"$(ttlstore connect-server)\"; "
        "clients then connect with SparkSession.builder.remote(\"sc://localhost:15002\").",
    )
    connect.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                         help="a further Spark setting of the server, such as spark.master=local[4]; repeatable")
    return parser


def _connect_server(confs: list[str]) -> int:
    import shlex

    from ttlstore._connect import connect_server_command
    from ttlstore._lines import UnsupportedSparkError

    bad = [c for c in confs if "=" not in c or not c.partition("=")[0]]
    if bad:
        print(f"ttlstore connect-server: --conf takes KEY=VALUE, got {bad[0]!r}.", file=sys.stderr)
        return 2
    try:
        print(shlex.join(connect_server_command(**dict(c.partition("=")[::2] for c in confs))))
    except (FileNotFoundError, UnsupportedSparkError) as e:
        print(f"ttlstore connect-server: {e}", file=sys.stderr)
        return 2
    return 0


def _jar(coordinates: bool) -> int:
    from ttlstore._jars import jar_path, maven_coordinates
    from ttlstore._lines import UnsupportedSparkError

    try:
        print(maven_coordinates() if coordinates else jar_path())
    except (FileNotFoundError, UnsupportedSparkError) as e:
        print(f"ttlstore jar: {e}", file=sys.stderr)
        return 2
    return 0


def _describe(report: MigrationReport) -> str:
    lines = [f"{report.action}: {report.checkpoint}",
             f"  provider     {report.provider}" + (" -> io.ttlstore.TtlStateStoreProvider"
                                                    if report.action in ("migrated", "would migrate") else ""),
             f"  batch        {report.batch} (latest offset-log entry)"]
    for op in report.operators:
        stores = ", ".join(s for s in op["stores"] if s) or "-"
        lines.append(f"  operator {op['id']}   {op['name'] or '(unknown)'}, stores {stores}, {op['partitions']} partitions")
    lines += [f"  note         {n}" for n in report.notes]
    return "\n".join(lines)


def _migrate(args: argparse.Namespace, hadoop_conf: dict[str, str]) -> int:
    try:
        report = migrate(args.checkpoint, dry_run=args.dry_run, rollback=args.rollback, force=args.force,
                         hadoop_conf=hadoop_conf, jars=_jars(args))
    except MigrationError as e:
        print(f"ttlstore migrate: {e}", file=sys.stderr)
        return 2
    print(json.dumps(report.to_dict(), indent=2) if args.json else _describe(report))
    return 0


def _describe_repartition(report: RepartitionReport) -> str:
    if report.action == "unchanged":
        return f"unchanged: {report.checkpoint} already has {report.to_partitions} partitions"
    lines = [f"{report.action}: {report.checkpoint}",
             f"  partitions   {report.from_partitions} -> {report.to_partitions}",
             f"  batch        {report.batch} (state of batch {report.last_committed_batch}"
             + (", finishing an earlier repartition)" if report.retry else ")")]
    for op in report.operators:
        stores = ", ".join(s["name"] + ("" if report.action != "repartitioned" else f" ({s['rows']:,} rows)")
                           for s in op["stores"])
        lines.append(f"  operator {op['id']}   {op['name']}: {stores}")
    if report.action == "repartitioned":
        lines.append(f"  took         {report.duration_ms / 1000:.1f} s; the way back: ttlstore repartition "
                     f"{report.checkpoint} --partitions {report.from_partitions}")
    return "\n".join(lines)


def _repartition(args: argparse.Namespace, hadoop_conf: dict[str, str]) -> int:
    try:
        report = repartition(args.checkpoint, args.partitions, dry_run=args.dry_run, hadoop_conf=hadoop_conf,
                             jars=_jars(args))
    except RepartitionError as e:
        print(f"ttlstore repartition: {e}", file=sys.stderr)
        return 2
    print(json.dumps(report.to_dict(), indent=2) if args.json else _describe_repartition(report))
    return 0


def _not_a_local_checkpoint(checkpoint: str) -> str | None:
    """Why a local path is no checkpoint, told before any JVM starts (URIs are left to the JVM)."""
    if "://" in checkpoint:
        return None
    path = Path(checkpoint.removeprefix("file:"))
    if not path.exists():
        return f"[NOT_A_CHECKPOINT] {checkpoint} does not exist."
    offsets = path / "offsets"
    if not offsets.is_dir() or not any(p.name.isdigit() for p in offsets.iterdir()):
        return f"[NOT_A_CHECKPOINT] {checkpoint} is not a streaming query's checkpoint: it has no {offsets} with batch files."
    return None


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "jar":
        return _jar(args.coordinates)
    if args.command == "connect-server":
        return _connect_server(args.conf)
    hadoop_conf = dict(c.partition("=")[::2] for c in args.conf)
    bad = [c for c in args.conf if "=" not in c or not c.partition("=")[0]]
    if bad:
        print(f"ttlstore {args.command}: --conf takes KEY=VALUE, got {bad[0]!r}.", file=sys.stderr)
        return 2
    default_fs = {k.removeprefix("spark.hadoop.") for k in hadoop_conf} & {"fs.defaultFS", "fs.default.name"}
    problem = None if default_fs else _not_a_local_checkpoint(args.checkpoint)
    if problem:
        print(f"ttlstore {args.command}: {problem} Pass the query's checkpointLocation.", file=sys.stderr)
        return 2
    if args.command == "migrate":
        return _migrate(args, hadoop_conf)
    if args.command == "repartition":
        if args.partitions <= 0:
            print(f"ttlstore repartition: --partitions must be greater than zero, got {args.partitions}.",
                  file=sys.stderr)
            return 2
        return _repartition(args, hadoop_conf)
    show_bar = args.progress == "always" or (args.progress == "auto" and sys.stderr.isatty())
    try:
        bar = _Bar(sys.stderr, enabled=show_bar and not args.quick)
        report = inspect_checkpoint_offline(args.checkpoint, scan=not args.quick, progress=bar,
                                            hadoop_conf=hadoop_conf, jars=_jars(args))
    except InspectError as e:
        print(f"ttlstore inspect: {e}", file=sys.stderr)
        return 2
    now_ms = int(time.time() * 1000) if args.partitions else None
    print(json.dumps(report, indent=2) if args.json else format_report(report, partitions_at_ms=now_ms))
    return 0


if __name__ == "__main__":
    sys.exit(main())
