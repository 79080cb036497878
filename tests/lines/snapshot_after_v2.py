"""Writes the checkpoint of a deduplication on Spark's RocksDB provider (format 1, snapshots only) in a
fresh JVM whose first query ran in checkpoint format v2.

``python snapshot_after_v2.py WORKDIR`` runs one round of a deduplication in format v2 under
``WORKDIR/v2``, then two rounds of one in format 1 under ``WORKDIR/v1``, and prints one line
``RESULT {json}``: the Spark version, the second query's outputs, and the first line of the metadata
of each of its snapshots. Spark 4.0 writes the first line from the format of the session that first
wrote a snapshot in its JVM, so there it is "v2" although the query is in format 1; tests/test_migrate.py
migrates the checkpoint and continues it on ttlstore.
"""

from __future__ import annotations

import json
import sys
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from test_checkpoint_v2 import FORMAT_KEY  # noqa: E402
from test_ttl import EVENTS, rows  # noqa: E402

from conftest import ROCKSDB_PROVIDER, local_session_builder, run_rounds  # noqa: E402


def dedup(stream):
    return stream.dropDuplicates(["key"]).select("key")


def main(workdir: Path) -> None:
    spark = local_session_builder("ttlstore-snapshot-after-v2").getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    run_rounds(spark, ROCKSDB_PROVIDER, workdir / "v2", EVENTS, dedup, [rows("x")], "append",
               extra_conf={FORMAT_KEY: "2"})
    run = run_rounds(spark, ROCKSDB_PROVIDER, workdir / "v1", EVENTS, dedup, [rows("a", "b"), rows("b", "c")],
                     "append")
    headers = sorted({zipfile.ZipFile(z).read("metadata").decode().splitlines()[0]
                      for z in (run.checkpoint / "state").rglob("*.zip")})
    outputs = [sorted(r.key for r in out) for out in run.outputs]
    print("RESULT " + json.dumps({"spark": spark.version, "outputs": outputs, "headers": headers}), flush=True)
    spark.stop()


if __name__ == "__main__":
    main(Path(sys.argv[1]))
