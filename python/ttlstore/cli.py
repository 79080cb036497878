"""The ``ttlstore`` command line: ``ttlstore inspect CHECKPOINT``.

It starts a small local Spark session (one core, no UI) with the bundled jar to read the
checkpoint's files; nothing in the checkpoint is written.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import List, Optional, TextIO

from ttlstore._inspect import InspectError, format_report, inspect_checkpoint
from ttlstore._version import __version__


def _session():
    from pyspark.sql import SparkSession

    from ttlstore._session import configure

    log_conf = Path(__file__).resolve().parent / "log4j2-cli.properties"
    builder = (
        SparkSession.builder.master("local[1]")
        .appName("ttlstore inspect")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={log_conf}")
    )
    spark = configure(builder).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


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
    inspect.add_argument("checkpoint", help="the query's checkpointLocation")
    inspect.add_argument("--json", action="store_true", help="print JSON (for scripts) instead of a table")
    inspect.add_argument(
        "--quick", action="store_true",
        help="do not rebuild stores to count rows: rows from the latest record, expired and legacy rows unknown",
    )
    inspect.add_argument(
        "--progress", choices=("auto", "always", "never"), default="auto",
        help="progress bar on stderr while scanning (auto: when stderr is a terminal)",
    )
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    args = _parser().parse_args(argv)
    path = Path(args.checkpoint)
    if not path.exists() and "://" not in args.checkpoint:
        print(f"ttlstore inspect: {args.checkpoint} does not exist. Pass the query's checkpointLocation.",
              file=sys.stderr)
        return 2
    show_bar = args.progress == "always" or (args.progress == "auto" and sys.stderr.isatty())
    spark = _session()
    try:
        bar = _Bar(sys.stderr, enabled=show_bar and not args.quick)
        report = inspect_checkpoint(spark, args.checkpoint, scan=not args.quick, progress=bar)
    except InspectError as e:
        print(f"ttlstore inspect: {e}", file=sys.stderr)
        return 2
    finally:
        spark.stop()
    print(json.dumps(report, indent=2) if args.json else format_report(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
