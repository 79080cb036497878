"""Working copies on local disk do not outlive the JVM that made them."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from conftest import ROOT

JOB = textwrap.dedent(
    """
    import sys
    from pyspark.sql import SparkSession
    import ttlstore

    local, checkpoint, source = sys.argv[1:4]
    spark = ttlstore.configure(
        SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2"),
        local_dir=local,
    ).getOrCreate()
    query = (spark.readStream.schema("k string").json(source).dropDuplicates(["k"])
             .writeStream.format("noop").option("checkpointLocation", checkpoint)
             .trigger(availableNow=True).start())
    query.awaitTermination()
    print("STORES", sum(1 for _ in __import__("pathlib").Path(local).glob("ttlstore-*")))
    spark.stop()
    """
)


def test_working_copies_are_deleted_when_the_jvm_exits(tmp_path: Path):
    local, source = tmp_path / "local", tmp_path / "in"
    local.mkdir()
    source.mkdir()
    (source / "a.json").write_text('{"k": "a"}\n{"k": "b"}\n')
    done = subprocess.run(
        [sys.executable, "-c", JOB, str(local), str(tmp_path / "checkpoint"), str(source)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "STORES 2" in done.stdout, done.stdout  # one working copy per partition while running
    assert not list(local.glob("ttlstore-*")), "working copies left behind after the JVM exited"
