"""A stateful query on Spark's local-cluster master, its executors in JVMs of their own.

Run by tests/test_local_cluster.py in a process of its own (one SparkContext per process):

    python tests/cluster/local_cluster.py WORKDIR [--kill-round N]

For each of Spark's HDFS provider and ttlstore it runs the same deduplication and aggregation
round by round, each round a new query run on the same checkpoint (so stores are loaded again,
wherever Spark places them). In ttlstore's run it kills -9 one executor JVM while round N's
stateful stage runs; Spark retries the lost tasks on the other executor and its standalone worker
starts a new executor. It prints one line, ``RESULT {json}``: the rows of every round per provider
and query, the executor that initialized each ttlstore store (from the executors' logs), and the
kill.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

import ttlstore

HDFS_PROVIDER = "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider"
PARTITIONS = 4
ROUNDS = 6


def rows_of(round_index: int) -> list[dict]:
    """Round r: 60 events over keys shared with earlier rounds and keys new in it."""
    return [{"key": f"k{(round_index * 7 + i * 3) % (20 + 10 * round_index)}", "n": i} for i in range(60)]


QUERIES = {
    "dedup": ("append", lambda df: df.dropDuplicates(["key"]).select("key")),
    "count": ("update", lambda df: df.groupBy("key").count()),
}


def slow(key: str) -> str:
    time.sleep(0.1)
    return key


def executors(app_id: str) -> list[tuple[int, str]]:
    """The executor JVMs of the application: (pid, executor id)."""
    out = subprocess.run(["ps", "-eo", "pid=,args="], capture_output=True, text=True, check=True).stdout
    return [(int(line.split()[0]), re.search(r"--executor-id (\S+)", line).group(1)) for line in out.splitlines()
            if "CoarseGrainedExecutorBackend" in line and app_id in line]


def kill_during_stateful_stage(spark: SparkSession, worker_dir: Path, killed: dict) -> None:
    """Kills -9 an executor that is running a task of the stateful stage (the one of PARTITIONS
    tasks), as its log shows, half a second after the task started."""
    tracker = spark.sparkContext.statusTracker()
    app = spark.sparkContext.applicationId
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        for stage in tracker.getActiveStageIds():
            info = tracker.getStageInfo(stage)
            if not info or info.numTasks != PARTITIONS:
                continue
            for pid, executor in executors(app):
                if tasks_lost(worker_dir, executor, stage):
                    time.sleep(0.5)
                    os.kill(pid, signal.SIGKILL)
                    killed.update(pid=pid, executor=executor, stage=stage)
                    return
        time.sleep(0.05)


def run_rounds(spark: SparkSession, provider: str, name: str, work: Path, kill_round: int | None) -> dict:
    worker_dir = Path(os.environ["SPARK_HOME"]) / "work"
    mode, build = QUERIES[name]
    label = "ttlstore" if provider == ttlstore.settings.PROVIDER_CLASS else "hdfs"
    source, checkpoint = work / f"{name}-{label}-input", work / f"{name}-{label}-checkpoint"
    source.mkdir(parents=True)
    spark.conf.set(ttlstore.settings.PROVIDER_CLASS_KEY, provider)
    outputs, killed, seconds = [], {}, []
    for r in range(ROUNDS):
        (source / f".{r}.tmp").write_text("".join(json.dumps(x) + "\n" for x in rows_of(r)))
        (source / f".{r}.tmp").rename(source / f"{r:03d}.json")
        emitted: list = []
        stateful = build(spark.readStream.schema("key string, n int").option("maxFilesPerTrigger", 1).json(str(source)))
        if r == kill_round:
            stateful = stateful.withColumn("key", F.udf(slow)("key"))
        query = (stateful.writeStream.outputMode(mode)
                 .foreachBatch(lambda df, _b, out=emitted: out.extend(tuple(x) for x in df.collect()))
                 .option("checkpointLocation", str(checkpoint)).trigger(availableNow=True).start())
        killer = None
        if r == kill_round:
            killer = threading.Thread(target=kill_during_stateful_stage, args=(spark, worker_dir, killed))
            killer.start()
        start = time.monotonic()
        query.awaitTermination()
        seconds.append(time.monotonic() - start)
        if killer:
            killer.join()
            killed["batch_seconds"] = time.monotonic() - start
        outputs.append(sorted(emitted))
    return {"outputs": outputs, "killed": killed, "seconds": seconds}


def executors_by_store(worker_dir: Path) -> dict[str, list[str]]:
    """The executors that initialized each ttlstore store (by its checkpoint directory), from their logs."""
    found: dict[str, set[str]] = {}
    for log in worker_dir.glob("app-*/*/stderr"):
        for m in re.finditer(r"Initialized ttlstore for StateStoreId\[[^\]]*\] in \S+ \(checkpoint (\S+)\)",
                             log.read_text(errors="replace")):
            found.setdefault(m.group(1), set()).add(log.parent.name)
    return {store: sorted(executors) for store, executors in sorted(found.items())}


def tasks_lost(worker_dir: Path, executor: str, stage: int) -> list[str]:
    """The tasks of `stage` that `executor` started and did not finish (yet), from its log."""
    log = "\n".join(p.read_text(errors="replace") for p in worker_dir.glob(f"app-*/{executor}/stderr"))
    started = set(re.findall(rf"Running task (\S+) in stage {stage}\.\d+ ", log))
    finished = set(re.findall(rf"Finished task (\S+) in stage {stage}\.\d+ ", log))
    return sorted(started - finished)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("work", type=Path)
    parser.add_argument("--kill-round", type=int, default=3)
    args = parser.parse_args()
    builder = (SparkSession.builder.master("local-cluster[2,1,1024]").appName("ttlstore-local-cluster")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", str(PARTITIONS))
               .config("spark.sql.streaming.stateStore.maintenanceInterval", "1s"))
    spark = ttlstore.configure(builder).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    result = {"app": spark.sparkContext.applicationId}
    for name in QUERIES:
        result[name] = {
            "hdfs": run_rounds(spark, HDFS_PROVIDER, name, args.work, None),
            "ttlstore": run_rounds(spark, ttlstore.settings.PROVIDER_CLASS, name, args.work,
                                   args.kill_round if name == "dedup" else None),
        }
    spark.stop()
    work = Path(os.environ["SPARK_HOME"]) / "work"
    result["executors_by_store"] = executors_by_store(work)
    killed = result["dedup"]["ttlstore"]["killed"]
    if killed:
        killed["tasks_lost"] = tasks_lost(work, killed["executor"], killed["stage"])
    print("RESULT " + json.dumps(result))


if __name__ == "__main__":
    sys.exit(main())
