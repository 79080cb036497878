"""Recovery against state size (`make bench-recovery`): how long a query with big state takes to serve again after
its stores lost their local copies, for Spark's RocksDB provider (changelog checkpointing on) and ttlstore.

One `dropDuplicates` of wide events (a long id and 512 characters of random base64 per row, so the state is as large
on disk as its rows, TTL on for ttlstore) over STORES stores is built to each rung's size on the local disk (local[2],
a process of its own per provider). Then, per arm and repeat, interleaved, a new process restarts the query from that
checkpoint on `local-cluster[2,1,3072]` (two executor JVMs with fresh local directories: a new cluster). A local
checkpoint is first copied as hard links (the query writes new files and deletes old ones, it changes none), so
that every run restarts from the same versions, snapshots and changelogs whatever the runs before it wrote; the
copy is read through `shaped://` (jvm/src/test/scala/io/ttlstore/bench/ShapedFileSystem.scala: the same files,
served as an object store serves them, with a first-byte latency per request and a bandwidth per stream and per
executor). It runs AFTER batches of half new, half stored keys, then kills an executor while it runs a task of the
stateful stage (its stores move) and runs AFTER batches more.

Figures per run: restart, the time from the query's start (its executors up) until the first batch commits; loss,
from the kill until the batch it hit commits; the batch times after each; the load figures the progress reports
(ttlstore's `ttlstoreLoad*`, Spark's `rocksdbLoad*` and `rocksdbReplayChangeLog*`), and the checkpoint's bytes.
Run as a script it builds (`build`), restarts (`restart`) or copies a checkpoint to another file system (`put`)
once and prints one line `RESULT {json}`.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from datetime import datetime
from pathlib import Path

import ladder

sys.path.insert(0, str(ladder.ROOT / "tests" / "cluster"))
from executors import kill_during_stage, spark_home  # noqa: E402

STORES = 16
PAYLOAD_HASHES = 6  # 6 x 64 random bytes a row, in base64: 512 characters
BUILD_ROWS_PER_BATCH = 200_000
AFTER_ROWS_PER_BATCH = 20_000
AFTER = 10
TTL = "1 day"
# What the emulated object store serves (ShapedFileSystem's settings): per request and stream, per executor.
LATENCY_MS, STREAM_MBPS, PROCESS_MBPS = 30, 64, 256
SHAPED = {
    "spark.hadoop.fs.shaped.impl": "io.ttlstore.bench.ShapedFileSystem",
    "spark.hadoop.fs.shaped.latencyMs": str(LATENCY_MS),
    "spark.hadoop.fs.shaped.streamMBps": str(STREAM_MBPS),
    "spark.hadoop.fs.shaped.processMBps": str(PROCESS_MBPS),
}
CHANGELOG = {"spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled": "true"}
SPARK_ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
TTLSTORE = "io.ttlstore.TtlStateStoreProvider"
TTL_ON = {"spark.sql.streaming.stateStore.ttlstore.ttl": TTL}
# The state each arm restarts from: Spark's provider's, or ttlstore's (one checkpoint for both of its arms).
STATES = {"rocksdb-changelog": (SPARK_ROCKSDB, CHANGELOG), "ttlstore": (TTLSTORE, TTL_ON)}
# arm: (label, state, extra settings); the arm "ttlstore-before" runs the jar given as --before-jar.
ARMS = {
    "rocksdb-changelog": ("Spark's RocksDB provider + changelog", "rocksdb-changelog", {}),
    "ttlstore-before": ("ttlstore before issue 50 (one download at a time)", "ttlstore", {}),
    "ttlstore-sequential": ("ttlstore, downloadThreads = 1", "ttlstore",
                            {"spark.sql.streaming.stateStore.ttlstore.downloadThreads": "1"}),
    "ttlstore": ("ttlstore", "ttlstore", {}),
    "ttlstore-lazy": ("ttlstore, lazyLoad.enabled (open first, fetch lazily)", "ttlstore",
                      {"spark.sql.streaming.stateStore.ttlstore.lazyLoad.enabled": "true"}),
    "ttlstore-remote-quarter": ("ttlstore, remote mode, local caches of a quarter of the state", "ttlstore", {}),
    "ttlstore-remote-half": ("ttlstore, remote mode, local caches of half the state", "ttlstore", {}),
    "ttlstore-remote-quarter-no-read-ahead": ("ttlstore, remote mode, a quarter of the state local, no read-ahead",
                                              "ttlstore", {"spark.sql.streaming.stateStore.ttlstore.readAhead.rows": "0"}),
    "ttlstore-remote-half-no-read-ahead": ("ttlstore, remote mode, half of the state local, no read-ahead",
                                           "ttlstore", {"spark.sql.streaming.stateStore.ttlstore.readAhead.rows": "0"}),
}
# Remote mode's arms: the share of the state the executors' local caches hold together (remote.localCacheMB is
# per executor), from the rows the state holds.
REMOTE_SHARES = {"ttlstore-remote-quarter": 0.25, "ttlstore-remote-half": 0.5,
                 "ttlstore-remote-quarter-no-read-ahead": 0.25, "ttlstore-remote-half-no-read-ahead": 0.5}
EXECUTORS = 2
BYTES_PER_ROW = 585  # measured: a row's share of a ttlstore snapshot (its SST bytes over its rows)


def remote_cache(arm: str, stored: int) -> dict[str, str]:
    """The setting of remote mode's arm `arm` for a state of `stored` rows; none for the other arms."""
    if arm not in REMOTE_SHARES:
        return {}
    mb = max(1, int(stored * BYTES_PER_ROW * REMOTE_SHARES[arm] / EXECUTORS / 2**20))
    return {"spark.sql.streaming.stateStore.ttlstore.remote.localCacheMB": str(mb)}


def events(spark, rows_per_batch: int, stored: int, building: bool):  # type: ignore[no-untyped-def]
    """The query's input: an id per row and its payload, derived from the id alone so that a repeat is a duplicate.
    While building, the rate source's value up to `stored`, then only ids already stored (the stores only read
    while maintenance uploads their snapshots); afterwards, every other row a new id and every other an id of
    the first `stored`."""
    from pyspark.sql import functions as F

    source = (spark.readStream.format("rate-micro-batch").option("rowsPerBatch", rows_per_batch)
              .option("numPartitions", 2).load())
    value = F.col("value")
    ident = (F.when(value < stored, value).otherwise(value % stored) if building
             else F.when(value % 2 == 0, value).otherwise((value * 7919) % stored))
    ids = source.select(ident.cast("long").alias("id"))
    payload = F.base64(F.concat(*[F.unhex(F.sha2(F.concat(F.col("id").cast("string"), F.lit(f"/{i}")), 512))
                                  for i in range(PAYLOAD_HASHES)]))
    return ids.select("id", payload.alias("payload")).dropDuplicates(["id", "payload"])


def start(spark, rows_per_batch: int, stored: int, building: bool, checkpoint: str, **trigger):  # type: ignore[no-untyped-def]
    """The query of `events` into the noop sink, from `checkpoint`, with `trigger` (Spark's keywords)."""
    return (events(spark, rows_per_batch, stored, building).writeStream.format("noop").outputMode("append")
            .option("checkpointLocation", checkpoint).trigger(**trigger).start())


def session(master: str, provider_class: str, settings: dict[str, str], local: Path, jar: str | None):  # type: ignore[no-untyped-def]
    from pyspark.sql import SparkSession

    import ttlstore

    classes = str(ladder.test_classes())
    builder = (
        SparkSession.builder.master(master).appName("recovery")
        .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", "4g").config("spark.executor.memory", "3g")
        # The overhead an executor holding 0.7 GB of state would be given: ttlstore derives its memory budget from it
        # (512 MiB, as these figures were first measured with; Spark's default 384 MiB would give it 96).
        .config("spark.executor.memoryOverhead", "1g")
        .config("spark.local.dir", str(local))
        .config("spark.sql.shuffle.partitions", str(STORES))
        .config("spark.driver.extraClassPath", classes).config("spark.executor.extraClassPath", classes)
        .config("spark.sql.streaming.numRecentProgressUpdates", "1000")
    )
    for key, value in {**SHAPED, **settings}.items():
        builder = builder.config(key, value)
    spark = ttlstore.configure(builder, jar=jar).config(ttlstore.settings.PROVIDER_CLASS_KEY, provider_class).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def batches(query) -> list[dict]:  # type: ignore[no-untyped-def]
    if query.exception() is not None:
        raise RuntimeError(str(query.exception()))
    return [p for p in query.recentProgress if p["numInputRows"] > 0]


def committed_at(progress: dict) -> float:
    """When a batch committed (its start, from the progress, plus its time), in seconds since the epoch."""
    start = datetime.fromisoformat(progress["timestamp"].replace("Z", "+00:00")).timestamp()
    return start + progress["durationMs"]["triggerExecution"] / 1000


def du(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def build(args: argparse.Namespace) -> dict:
    """Fills a new checkpoint to `args.rows` rows on the local disk, and waits for every store's snapshot."""
    provider_class, settings = STATES[args.state]
    work = Path(args.work)
    # Maintenance every 10 s, and the changelogs of only the last 10 versions kept: built in a few large batches,
    # the state would otherwise sit twice in the checkpoint (snapshots and changelogs), which a stream that grew
    # over days does not have.
    maintenance = {"spark.sql.streaming.stateStore.maintenanceInterval": "10s",
                   "spark.sql.streaming.minBatchesToRetain": "10"}
    spark = session("local[2]", provider_class, {**settings, **maintenance}, work / "local-build", None)
    query = start(spark, BUILD_ROWS_PER_BATCH, args.rows, True, str(work / "checkpoint"), processingTime="0 seconds")
    started = time.monotonic()
    try:
        while len(batches(query)) * BUILD_ROWS_PER_BATCH < args.rows:
            time.sleep(0.5)
        filled = time.monotonic()
        # Batches of stored ids only, while maintenance (every 10 s here) uploads each store's snapshot.
        while time.monotonic() - filled < 35:
            time.sleep(0.5)
        progress = batches(query)
        query.stop()
        # Stopped mid-batch, the query leaves that batch's offsets written and not committed, and a restart would run
        # it first, at the build's size (some 170,000 rows at 8 GB). Run once more, which runs that batch alone, so
        # that every restart from this checkpoint starts at a batch of its own size.
        query = start(spark, BUILD_ROWS_PER_BATCH, args.rows, True, str(work / "checkpoint"), once=True)
        query.awaitTermination()
    finally:
        query.stop()
        spark.stop()
    shutil.rmtree(work / "local-build", ignore_errors=True)
    logged = {d: max(int(f.name) for f in (work / "checkpoint" / d).iterdir() if f.name.isdigit())
              for d in ("offsets", "commits")}
    if logged["offsets"] != logged["commits"]:
        raise RuntimeError(f"the built checkpoint has a batch not committed: {logged}")
    state = work / "checkpoint" / "state"
    return {"state": args.state, "rows": progress[-1]["stateOperators"][0]["numRowsTotal"], "batches": len(progress),
            "build_s": filled - started, "checkpoint_bytes": du(state)}


def restart(args: argparse.Namespace) -> dict:
    """Restarts the query from the checkpoint on a new local cluster, then loses an executor; see the module's doc."""
    label, state, extra = ARMS[args.arm]
    provider_class, settings = STATES[state]
    work = Path(tempfile.mkdtemp(prefix=f"restart-{args.arm}-", dir=args.work))
    os.environ["SPARK_HOME"] = str(spark_home(work))
    spark = session(f"local-cluster[{EXECUTORS},1,3072]", provider_class,
                    {**settings, **extra, **remote_cache(args.arm, args.stored), **dict(c.split("=", 1) for c in args.conf)},
                    work / "local",
                    args.before_jar if args.arm == "ttlstore-before" else None)
    status = spark.sparkContext._jsc.sc()  # type: ignore[union-attr]
    while status.getExecutorMemoryStatus().size() < 3:  # the driver and both executors
        time.sleep(0.1)
    # A path is copied as hard links and read through the emulated object store; a URI (hdfs://...) as it is.
    if "://" in args.checkpoint:
        checkpoint = args.checkpoint
    else:
        copy = work / "checkpoint"
        shutil.copytree(args.checkpoint, copy, copy_function=os.link)
        checkpoint = f"shaped://{copy.resolve()}"
    started = time.time()
    query = start(spark, AFTER_ROWS_PER_BATCH, args.stored, False, checkpoint, processingTime="0 seconds")
    killed: dict = {}
    try:
        while len(batches(query)) < args.after:
            time.sleep(0.1)
        killer = threading.Thread(target=lambda: killed.update(kill_during_stage(spark, STORES, after=0.3, timeout=600)))
        killer.start()
        killer.join()
        while len(batches(query)) < 2 * args.after + 2:
            time.sleep(0.1)
    finally:
        query.stop()
        progress = batches(query) if query.exception() is None else []
        spark.stop()
    hit = max(i for i, p in enumerate(progress)
              if datetime.fromisoformat(p["timestamp"].replace("Z", "+00:00")).timestamp() <= killed["at"])
    shutil.rmtree(work, ignore_errors=True)

    def metrics(p: dict, *parts: str) -> dict:
        """The state operator's custom metrics whose names hold one of `parts`."""
        return {k: v for k, v in p["stateOperators"][0]["customMetrics"].items() if any(x in k for x in parts)}

    def loads(p: dict) -> dict:
        return metrics(p, "Load", "ReplayChangeLog", "Fetched", "Reused")

    def reads(p: dict) -> dict:
        return metrics(p, "CheckpointRead", "ReadAhead")

    ms = [p["durationMs"]["triggerExecution"] for p in progress]
    return {"arm": args.arm, "label": label, "restart_s": committed_at(progress[0]) - started,
            "restart_batches_ms": ms[:args.after], "restart_loads": loads(progress[0]),
            "loss_s": committed_at(progress[hit]) - killed["at"], "loss_batches_ms": ms[hit:hit + args.after],
            "loss_loads": loads(progress[hit]), "killed": killed,
            "restart_reads": [reads(p) for p in progress[:args.after]],
            "loss_reads": [reads(p) for p in progress[hit:hit + args.after]]}


def put(args: argparse.Namespace) -> dict:
    """Copies the local checkpoint `args.checkpoint` to the URI `args.to` through Hadoop's FileSystem API (a JVM
    with Spark's jars and no Spark application)."""
    from pyspark.java_gateway import launch_gateway

    jvm = launch_gateway().jvm
    conf = jvm.org.apache.hadoop.conf.Configuration()
    # HDFS's client asks the name node to complete each file it closes and, if the data node has not reported
    # the block yet, retries after 400 ms by default: a quarter second a file on the mini cluster. This setup
    # copy retries sooner; the restarts keep the default that users have.
    conf.set("dfs.client.block.write.locateFollowingBlock.initial.delay.ms", "10")
    target = jvm.org.apache.hadoop.fs.Path(args.to)
    started = time.monotonic()
    copied = jvm.org.apache.hadoop.fs.FileUtil.copy(jvm.java.io.File(args.checkpoint), target.getFileSystem(conf),
                                                    target, False, conf)
    assert copied, f"{args.checkpoint} was not copied to {args.to}"
    return {"put_s": time.monotonic() - started, "bytes": du(Path(args.checkpoint))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("step", choices=("build", "restart", "put"))
    parser.add_argument("--work", required=True)
    parser.add_argument("--state", choices=tuple(STATES))
    parser.add_argument("--rows", type=int)
    parser.add_argument("--arm", choices=tuple(ARMS))
    parser.add_argument("--checkpoint", help="a local path (read through shaped://) or a URI")
    parser.add_argument("--stored", type=int, help="rows the built state holds")
    parser.add_argument("--before-jar")
    parser.add_argument("--to", help="put: the URI to copy the checkpoint to")
    parser.add_argument("--after", type=int, default=AFTER, help="restart: the batches after the restart and the loss")
    parser.add_argument("--conf", nargs="*", default=[], help="restart: more settings, key=value")
    args = parser.parse_args()
    print("RESULT " + json.dumps({"build": build, "restart": restart, "put": put}[args.step](args)), flush=True)


if __name__ == "__main__":
    main()
