"""Working copies on local disk do not outlive the JVM that made them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from conftest import ROOT

DRIVER = textwrap.dedent(
    """
    import sys, time
    from pyspark.sql import SparkSession
    import ttlstore

    local, checkpoint, source, mode = sys.argv[1:5]
    spark = ttlstore.configure(
        SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2"),
        local_dir=local,
    ).getOrCreate()
    writer = (spark.readStream.schema("k string").json(source).dropDuplicates(["k"])
              .writeStream.format("noop").option("checkpointLocation", checkpoint))
    if mode == "to the end":
        writer.trigger(availableNow=True).start().awaitTermination()
        print("STORES", sum(1 for _ in __import__("pathlib").Path(local).glob("ttlstore-*")))
        spark.stop()
    else:  # "until killed": the query keeps running after its first batch
        writer.start().processAllAvailable()
        print("JVM", spark._jvm.java.lang.ProcessHandle.current().pid(), flush=True)
        time.sleep(600)
    """
)


def run_to_the_end(local: Path, checkpoint: Path, source: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", DRIVER, str(local), str(checkpoint), str(source), "to the end"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_working_copies_are_deleted_when_the_jvm_exits(tmp_path: Path):
    local, source = tmp_path / "local", tmp_path / "in"
    local.mkdir()
    source.mkdir()
    (source / "a.json").write_text('{"k": "a"}\n{"k": "b"}\n')
    done = run_to_the_end(local, tmp_path / "checkpoint", source)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "STORES 2" in done.stdout, done.stdout  # one working copy per partition while running
    assert not list(local.glob("ttlstore-*")), "working copies left behind after the JVM exited"
    assert not list(local.glob(".ttlstore-*.claim")), "the JVM's claim on the directory left behind"


def test_working_copies_of_a_killed_jvm_are_removed_by_the_next_one(tmp_path: Path):
    local, source = tmp_path / "local", tmp_path / "in"
    local.mkdir()
    source.mkdir()
    (source / "a.json").write_text('{"k": "a"}\n{"k": "b"}\n')
    driver = subprocess.Popen([sys.executable, "-c", DRIVER, str(local), str(tmp_path / "killed"), str(source), "until killed"],
                              cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert driver.stdout is not None
        line = driver.stdout.readline()  # after the first batch, while the query runs
        assert line.startswith("JVM "), f"the driver did not start its query: {line!r}"
        jvm = int(line.split()[1])
        os.kill(jvm, signal.SIGKILL)  # no shutdown hook runs
        while process_runs(jvm):
            time.sleep(0.1)
    finally:
        driver.kill()
        driver.wait()
    left = sorted(p.name for p in local.glob("ttlstore-*"))
    assert len(left) == 2, left  # what a killed JVM leaves: one working copy per partition
    assert len(list(local.glob(".ttlstore-*.claim"))) == 1  # and its claim, whose lock went with it

    done = run_to_the_end(local, tmp_path / "next", source)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "STORES 2" in done.stdout, (done.stdout, left)  # its own two; the killed JVM's are gone
    assert not list(local.glob("ttlstore-*")) and not list(local.glob(".ttlstore-*.claim"))


def process_runs(pid: int) -> bool:
    """Whether a process of that id still runs (a zombie of a child does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"
