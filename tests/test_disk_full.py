"""A full local disk, as a running query meets it: the task fails by name, nothing committed changes,
and once there is room again the query goes on with the results it would have had.

The stores' working copies (``ttlstore.localDir``) live on a tmpfs of 64 MiB mounted for the test, the
checkpoint on the ordinary disk. A real aggregation runs, Spark scheduling it with default settings
but for maintenance every second (so that the snapshot of version 10 is uploaded as soon as it is
taken); after 3 batches, or after 12 (the snapshot in the checkpoint), the test fills the tmpfs to the
last byte. The next local write of RocksDB (the flush ahead of the next local snapshot, every 10
versions with Spark's default ``minDeltasForSnapshot``) fails with ENOSPC, and so does a restart's
load while the disk stays full (opening a new DB, or downloading the snapshot first). Mounting needs
root (CI and this project's machines run as root); elsewhere the test says so and skips.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import ROOT

DRIVER = textwrap.dedent(
    """
    import json, os, shutil, sys, time
    from pathlib import Path
    from pyspark.sql import SparkSession, functions as F
    import ttlstore
    from ttlstore.errors import condition_of

    local, work = Path(sys.argv[1]), Path(sys.argv[2])
    rounds, filled_after = int(sys.argv[3]), int(sys.argv[4])
    spark = ttlstore.configure(
        SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        # Snapshots are uploaded within a second of their commit, not a minute (Spark's default).
        .config("spark.sql.streaming.stateStore.maintenanceInterval", "1s"),
        local_dir=str(local),
    ).getOrCreate()
    spark.sparkContext.setLogLevel("OFF")
    PROVIDER = "spark.sql.streaming.stateStore.providerClass"
    TTLSTORE = spark.conf.get(PROVIDER)
    HDFS = "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider"

    def write_round(source, i):
        source.mkdir(parents=True, exist_ok=True)
        rows = [{"k": f"k{(i * 1500 + j) % 20000}", "pad": f"{i:04d}" + "x" * 200} for j in range(2000)]
        tmp = source / f".{i}.tmp"
        tmp.write_text("".join(json.dumps(r) + "\\n" for r in rows))
        tmp.rename(source / f"round-{i:04d}.json")

    def start(name, outputs):
        def collect(df, batch_id):
            outputs[batch_id] = sorted(tuple(r) for r in df.collect())
        source = work / f"{name}-in"
        source.mkdir(parents=True, exist_ok=True)
        return (spark.readStream.schema("k string, pad string").option("maxFilesPerTrigger", 1).json(str(source))
                .groupBy("k").agg(F.count("*").alias("n"), F.max("pad").alias("pad"))
                .writeStream.outputMode("update").foreachBatch(collect)
                .option("checkpointLocation", str(work / f"{name}-checkpoint")).start()), source

    def failure(e):
        # ttlstore's own message, from its condition on (Spark's wrapping and the stack traces around it left out).
        text = str(e)
        at = text.rfind("[" + str(condition_of(e)) + "]")
        return {"condition": condition_of(e), "message": text[at:at + 1500] if at >= 0 else text[-4000:]}

    def feed(query, source, first, last):
        for i in range(first, last):
            write_round(source, i)
            query.processAllAvailable()

    # The reference: the same rounds on Spark's HDFS provider, without faults (and without ttlstore's
    # settings, which would refuse a checkpoint of another provider).
    LOCAL_DIR = "spark.sql.streaming.stateStore.ttlstore.localDir"
    spark.conf.set(PROVIDER, HDFS)
    spark.conf.unset(LOCAL_DIR)
    reference = {}
    query, source = start("reference", reference)
    feed(query, source, 0, rounds)
    query.stop()
    spark.conf.set(PROVIDER, TTLSTORE)
    spark.conf.set(LOCAL_DIR, str(local))

    result = {"reference": {str(k): v for k, v in reference.items()}}
    outputs = {}
    query, source = start("ttlstore", outputs)
    feed(query, source, 0, filled_after)
    snapshots = lambda: list((work / "ttlstore-checkpoint" / "state" / "0").glob("*/ttlstore/10.snapshot"))
    deadline = time.time() + 60
    while filled_after > 10 and len(snapshots()) < 2 and time.time() < deadline:
        time.sleep(0.2)
    result["snapshots_before_filling"] = len(snapshots())
    filler = local / "filler"

    def fill():
        fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        for size in (1 << 20, 4096, 1):  # to the last byte the tmpfs has
            try:
                while True:
                    os.write(fd, bytes(size))
            except OSError:
                pass
        os.close(fd)

    fill()
    result["free_after_filling"] = shutil.disk_usage(local).free
    failed_at = None
    for i in range(filled_after, rounds):
        try:
            feed(query, source, i, i + 1)
        except Exception as e:
            failed_at, result["running"] = i, failure(e)
            break
    result["failed_at"] = failed_at
    query.stop()
    if failed_at is not None:
        # A restart while the disk is still full: its load has no room either. The stopped run's stores free
        # their working copies (ttlstore-*) when maintenance unloads them, within a second here but later on a
        # busy machine: the test waits for that, then fills what they freed.
        deadline = time.time() + 120
        while list(local.glob("ttlstore-*")) and time.time() < deadline:
            time.sleep(0.2)
        fill()
        query, _ = start("ttlstore", outputs)
        try:
            query.processAllAvailable()
            result["restart_while_full"] = {"condition": None, "message": "it ran"}
        except Exception as e:
            result["restart_while_full"] = failure(e)
        query.stop()
        filler.unlink()
        query, _ = start("ttlstore", outputs)
        query.processAllAvailable()  # the failed batch, again
        feed(query, source, failed_at + 1, rounds)
        query.stop()
    result["outputs"] = {str(k): v for k, v in outputs.items()}
    result["rows_total"] = query.lastProgress["stateOperators"][0]["numRowsTotal"]
    print("RESULT " + json.dumps(result))
    spark.stop()
    """
)


@pytest.fixture
def small_local_disk(tmp_path: Path) -> Iterator[Path]:
    """A tmpfs of 64 MiB for the stores' working copies, unmounted afterwards."""
    if os.geteuid() != 0:
        pytest.skip("mounting a size-limited tmpfs needs root (CI and this project's machines run as root)")
    mount = tmp_path / "local"
    mount.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", f"ttlstore-{uuid.uuid4().hex[:8]}",
                              str(mount)], capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


#: Each case runs until a few rounds after the flush ahead of the next local snapshot (version 10, then 20)
#: met the full disk.
@pytest.mark.parametrize(("filled_after", "rounds", "restart_meets"), [
    (3, 14, "open its RocksDB instance"),  # before any snapshot: a restart starts a new DB from the changelogs
    (12, 24, "download the snapshot of version 10"),  # after one: a restart downloads it first
], ids=["before the first snapshot", "after a snapshot"])
def test_a_full_local_disk_fails_the_batch_by_name_and_the_query_goes_on_once_there_is_room(
        small_local_disk: Path, tmp_path: Path, filled_after: int, rounds: int, restart_meets: str):
    ran = subprocess.run([sys.executable, "-c", DRIVER, str(small_local_disk), str(tmp_path / "work"), str(rounds),
                          str(filled_after)], cwd=ROOT, capture_output=True, text=True, timeout=600)
    results = [line.removeprefix("RESULT ") for line in ran.stdout.splitlines() if line.startswith("RESULT ")]
    assert ran.returncode == 0 and len(results) == 1, ran.stdout[-2000:] + ran.stderr[-4000:]
    result = json.loads(results[0])

    assert result["free_after_filling"] < 64 * 1024, "the test did not fill the local disk"
    assert result["failed_at"] is not None, "the query never met the full disk"
    running = result["running"]
    assert running["condition"] == "LOCAL_DISK_FULL", running["message"]
    assert str(small_local_disk) in running["message"], "the error does not name the full directory"
    assert "localDir" in running["message"], "the error does not say which setting moves the working copies"
    restart = result["restart_while_full"]
    assert restart["condition"] == "LOCAL_DISK_FULL", restart["message"]
    assert result["snapshots_before_filling"] == (2 if filled_after > 10 else 0)
    assert restart_meets in restart["message"], restart["message"]

    # Nothing committed changed: every batch, the failed one run again included, emitted what the
    # same rounds emit on Spark's HDFS provider without faults.
    assert result["outputs"] == result["reference"]
    assert len(result["outputs"]) == rounds
    assert result["rows_total"] == 20000, "every key the rounds wrote is stored"
