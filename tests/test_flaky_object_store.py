"""Checkpoints on an object store that misbehaves as real ones do: throttling (503 SlowDown), connections
reset mid-upload and mid-download, requests that hang, a store that is down for a while.

A real aggregation keeps its checkpoint on S3 (moto's server, as in test_object_store.py) reached
through a fault-injecting proxy (tests/chaos/object_store_proxy.py) that picks requests for the
store's state files (paths with ``/state/``). Every round is one micro-batch of a restarted query, so
every round loads its stores from the checkpoint (downloads) and commits them (uploads). Each round
has its fault: transient ones are retried by Hadoop's S3A client and the AWS SDK beneath it, and the
round completes; what is not retried (a store that is down; a connection reset mid-download, which
Hadoop 3.5's S3A input stream does not retry) fails the batch with ``CHECKPOINT_READ_FAILED`` naming
the file, never as damage, and once the store is back the restarted query runs the batch again. At
the end every round's output equals the same rounds' on Spark's HDFS provider on local disk, without
faults: no committed version was lost or changed.

Every round runs in two arms: fetching first (each load downloads its files before RocksDB opens them) and
opening first (``lazyLoad.enabled``: a snapshot of each version is uploaded and the stores are unloaded after
each round, so each load opens with every SST file in the checkpoint and reads them by ranged GETs while its
downloads bring them down; the download-reset round resets those SST reads). A read the client does not retry
fails as above, naming the checkpoint's file.

`make chaos` runs every fault, in both arms (the tests are marked long): `make test` runs S3 through
test_object_store.py, where a driver is killed while it uploads.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import ROOT, RUNNING_LINE, SPARK_LINES

S3A_JARS = ROOT / ".build" / ("s3a" if RUNNING_LINE == SPARK_LINES[-1].line else f"spark-{RUNNING_LINE}/s3a")

DRIVER = textwrap.dedent(
    """
    import json, re, sys, time
    from pathlib import Path
    import boto3
    from moto.server import ThreadedMotoServer
    from pyspark.sql import SparkSession, functions as F
    import ttlstore
    from ttlstore.errors import condition_of
    sys.path.insert(0, sys.argv[3])
    from chaos.object_store_proxy import Fault, FaultyObjectStore

    work, jars, injected = Path(sys.argv[1]), sys.argv[2], set(json.loads(sys.argv[4]))
    lazy = sys.argv[5] == "open first"
    from conftest import unload_state_stores
    moto = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    moto.start()
    host, port = moto.get_host_and_port()
    s3 = boto3.client("s3", endpoint_url=f"http://{host}:{port}", aws_access_key_id="test",
                      aws_secret_access_key="test", region_name="us-east-1")
    s3.create_bucket(Bucket="checkpoints")
    proxy = FaultyObjectStore((host, port))
    s3a = {"endpoint": proxy.endpoint, "path.style.access": "true", "access.key": "test", "secret.key": "test",
           "endpoint.region": "us-east-1", "connection.ssl.enabled": "false",
           # Retries and timeouts short enough for a test; each transient fault below is retried within them.
           "retry.limit": "3", "retry.interval": "50ms", "retry.throttle.limit": "3",
           "retry.throttle.interval": "50ms", "attempts.maximum": "2", "connection.timeout": "5s",
           "connection.request.timeout": "10s", "connection.acquisition.timeout": "10s"}
    builder = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", "2").config("spark.jars", jars))
    if lazy:  # a snapshot of every version, uploaded within a second, for each round's stores to open lazily
        builder = (builder.config("spark.sql.streaming.stateStore.maintenanceInterval", "1s")
                   .config("spark.sql.streaming.stateStore.minDeltasForSnapshot", "1"))
    for key, value in s3a.items():
        builder = builder.config(f"spark.hadoop.fs.s3a.{key}", value)
    spark = ttlstore.configure(builder).getOrCreate()
    spark.sparkContext.setLogLevel("OFF")
    PROVIDER = "spark.sql.streaming.stateStore.providerClass"
    TTLSTORE = spark.conf.get(PROVIDER)
    STATE = r"/state/"
    OWN = r"/state/.*/ttlstore/"  # ttlstore's own files (Spark's, such as the state schema, are read by Spark)
    # Each round's fault, for the requests of the stores' files (None: none).
    SST = OWN + "sst/"  # the snapshots' SST files: a lazily opened store's ranged reads and downloads
    FAULTS = {
        2: Fault("slowdown", path=STATE, every=2, budget=6),
        3: Fault("reset", methods=frozenset({"PUT"}), path=STATE, every=2, budget=2),
        4: Fault("reset", methods=frozenset({"GET"}), path=SST if lazy else OWN, every=2, budget=3),
        5: Fault("stall", methods=frozenset({"PUT", "GET"}), path=STATE, every=3, budget=2, seconds=15),
        # Down for ttlstore's own files (a load's downloads, a commit's uploads), until the round runs again.
        6: Fault("slowdown", path=OWN),
        7: Fault("slow", path=OWN, seconds=0.25),  # a slow store: every request to ttlstore's files
    }
    FAULTS = {i: f for i, f in FAULTS.items() if i in injected}
    ROUNDS = max(FAULTS) + 3  # two rounds without a fault after the last one

    def write_round(source, i):
        source.mkdir(parents=True, exist_ok=True)
        rows = [{"k": f"k{(i * 700 + j) % 5000}"} for j in range(1000)]
        (source / f".{i}.tmp").write_text("".join(json.dumps(r) + "\\n" for r in rows))
        (source / f".{i}.tmp").rename(source / f"round-{i:04d}.json")

    def run_round(name, checkpoint, outputs):  # returns the state operator's custom metrics, summed over batches
        def collect(df, batch_id):
            outputs[batch_id] = sorted(tuple(r) for r in df.collect())
        query = (spark.readStream.schema("k string").option("maxFilesPerTrigger", 1).json(str(work / f"{name}-in"))
                 .groupBy("k").count().writeStream.outputMode("update").foreachBatch(collect)
                 .option("checkpointLocation", checkpoint).trigger(availableNow=True).start())
        query.awaitTermination()
        summed = {}
        for progress in query.recentProgress:
            for metric, value in progress["stateOperators"][0]["customMetrics"].items():
                summed[metric] = summed.get(metric, 0) + value
        return summed

    def snapshotted_partitions(version):  # the store partitions whose snapshot of `version` the checkpoint holds
        pages = s3.get_paginator("list_objects_v2").paginate(Bucket="checkpoints", Prefix="flaky/state/0/")
        keys = [o["Key"] for page in pages for o in page.get("Contents", [])]
        return {k.split("/")[3] for k in keys
                if "/ttlstore/" in k and re.fullmatch(f"{version}(_[^/]*)?[.]snapshot", k.rsplit("/", 1)[1])}

    # Waits for both stores' snapshot of `version` (read past the proxy), then unloads the stores: the next round
    # opens them with every SST file in the checkpoint, as an executor that lost them does.
    def open_lazily_next(version):
        deadline = time.time() + 60
        while len(snapshotted_partitions(version)) < 2:
            assert time.time() < deadline, f"no snapshot of version {version} for both stores"
            time.sleep(0.3)
        unload_state_stores(spark)

    def failure(e):
        text = str(e)
        at = text.find("[" + str(condition_of(e)) + "]")
        return {"condition": condition_of(e), "message": text[at:at + 1500] if at >= 0 else text[-4000:]}

    spark.conf.set(PROVIDER, "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider")
    reference = {}
    for i in range(ROUNDS):
        write_round(work / "reference-in", i)
        run_round("reference", str(work / "reference-checkpoint"), reference)
    spark.conf.set(PROVIDER, TTLSTORE)
    spark.conf.set(ttlstore.settings.PREFIX + "lazyLoad.enabled", str(lazy).lower())

    outputs, rounds = {}, []
    for i in range(ROUNDS):
        write_round(work / "ttlstore-in", i)
        fault = FAULTS.get(i)
        proxy.set(fault)
        before = dict(proxy.injected)
        start = time.time()
        entry = {"round": i, "fault": fault.kind if fault else None}
        try:
            entry["metrics"] = run_round("ttlstore", "s3a://checkpoints/flaky", outputs)
        except Exception as e:
            entry["failed"] = failure(e)
            proxy.set(None)  # the store is back
            if lazy and i:
                open_lazily_next(i)
            entry["metrics"] = run_round("ttlstore", "s3a://checkpoints/flaky", outputs)  # the failed batch, again
        proxy.set(None)
        if lazy:
            open_lazily_next(i + 1)
        entry["injected"] = sum(proxy.injected.values()) - sum(before.values())
        entry["seconds"] = round(time.time() - start, 1)
        rounds.append(entry)
    print("RESULT " + json.dumps({"reference": {str(k): v for k, v in reference.items()},
                                  "outputs": {str(k): v for k, v in outputs.items()}, "rounds": rounds,
                                  "requests": dict(proxy.requests)}))
    spark.stop()
    proxy.close()
    moto.stop()
    """
)


def run_driver(work: Path, faults: list[int], arm: str) -> dict:
    """A query restarted through a round of each fault in `faults` (the indices of the driver's FAULTS) on one of
    the ARMS, and the reference beside it."""
    assert (S3A_JARS / ".fetched").is_file(), f"{S3A_JARS} is missing: `make test` fetches it"
    jars = ",".join(sorted(str(j) for j in S3A_JARS.glob("*.jar")))
    ran = subprocess.run([sys.executable, "-c", DRIVER, str(work), jars, str(ROOT / "tests"), json.dumps(faults), arm],
                         cwd=ROOT, capture_output=True, text=True, timeout=900)
    results = [line.removeprefix("RESULT ") for line in ran.stdout.splitlines() if line.startswith("RESULT ")]
    assert ran.returncode == 0 and len(results) == 1, ran.stdout[-3000:] + ran.stderr[-5000:]
    return {**json.loads(results[0]), "arm": arm}


#: How each round's stores load: fetching every file first, or opening first (``lazyLoad.enabled``) with every
#: SST file in the checkpoint, read block by block while the downloads bring them down (docs/lazy-load.md).
ARMS = ["fetch first", "open first"]


@pytest.fixture(scope="module", params=ARMS)
def flaky_run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict:
    return run_driver(tmp_path_factory.mktemp("flaky"), list(FAULTS), request.param)


#: The rounds' faults, by the index of the round they are injected in.
FAULTS = {2: "503 SlowDown", 3: "connection reset mid-upload", 4: "connection reset mid-download",
          5: "a request that hangs", 6: "the store down", 7: "a slow store"}

#: What each round's fault must come to: "retried" (the batch completes), "named" (the batch fails with
#: CHECKPOINT_READ_FAILED naming one of the store's files, and completes once the store is back), or
#: either. Hadoop's S3A client retries throttling and a reset or hung upload; a download reset or hung
#: midway is not retried by Hadoop 3.5's input stream (pyspark 4.3's), so those batches may fail.
EXPECTED = {2: {"retried"}, 3: {"retried"}, 4: {"retried", "named"}, 5: {"retried", "named"}, 6: {"named"},
            7: {"retried"}}


def outcome(entry: dict) -> str:
    if "failed" not in entry:
        return "retried"
    failed = entry["failed"]
    named = (failed["condition"] == "CHECKPOINT_READ_FAILED" and "s3a://checkpoints/flaky/state/0/" in failed["message"]
             and "/ttlstore" in failed["message"])
    return "named" if named else f"failed otherwise: {failed['condition']}: {failed['message'][:1500]}"


def assert_came_to_what_it_must(run: dict, index: int) -> None:
    entry = run["rounds"][index]
    assert entry["injected"] > 0, f"the fault never met the store's files: {entry}"  # it was really injected
    assert outcome(entry) in EXPECTED[index], entry


def assert_no_committed_version_lost_or_changed(run: dict) -> None:
    assert run["outputs"] == run["reference"]
    assert len(run["outputs"]) == len(run["rounds"])


@pytest.mark.long
@pytest.mark.parametrize(("index", "fault"), FAULTS.items())
def test_each_fault_is_retried_or_fails_the_batch_naming_the_file(flaky_run: dict, index: int, fault: str):
    assert_came_to_what_it_must(flaky_run, index)


@pytest.mark.long
def test_no_committed_version_is_lost_or_changed(flaky_run: dict):
    assert_no_committed_version_lost_or_changed(flaky_run)


def assert_opened_lazily_if_asked(run: dict) -> None:
    """In the open-first arm the restarted rounds' stores read SST files from the checkpoint (they opened before their
    files were local; a round whose downloads land before the DB opens reads none); fetching first, none did."""
    reads = [entry["metrics"].get("ttlstoreLoadCheckpointReads", 0) for entry in run["rounds"][1:]]
    assert any(reads) if run["arm"] == "open first" else not any(reads), reads


def assert_read_ahead(run: dict) -> None:
    """The aggregation's keys were read ahead (docs/read-ahead.md) while the faults met the checkpoint's reads."""
    asked = [entry["metrics"].get("ttlstoreReadAheadAsked", 0) for entry in run["rounds"] if entry.get("metrics")]
    assert any(asked), asked


@pytest.mark.long
def test_the_stores_open_as_their_arm_says(flaky_run: dict):
    assert_opened_lazily_if_asked(flaky_run)


@pytest.mark.long
def test_the_aggregations_keys_are_read_ahead_while_the_faults_meet_the_checkpoints_reads(flaky_run: dict):
    assert_read_ahead(flaky_run)
