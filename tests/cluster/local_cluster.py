"""A stateful query on Spark's local-cluster master, its executors in JVMs of their own.

Run by tests/test_local_cluster.py in a process of its own (one SparkContext per process):

    python tests/cluster/local_cluster.py WORKDIR [--kill-round N] [--queries dedup,count] [--no-repartition]

For each of Spark's HDFS provider and ttlstore it runs the same deduplication and aggregation
round by round, each round a new query run on the same checkpoint (so stores are loaded again,
wherever Spark places them). In ttlstore's dedup it kills -9 one executor JVM while round N's
stateful stage runs; Spark retries the lost tasks on the other executor and its standalone worker
starts a new executor. Its aggregation is repartitioned between rounds (``ttlstore repartition``,
4 -> 7 -> 3 partitions) while the executors that ran it still hold its stores. It prints one line,
``RESULT {json}``: the rows of every round per provider and query, the state partitions each round
ran with and the files its stores fetched from the checkpoint to load (ttlstore's
``ttlstoreLoadFilesFetched``), the executor that initialized each ttlstore store (from the executors'
logs), and the kill.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from pathlib import Path

from executors import executors_by_store, kill_during_stage, memory_budgets_mib, tasks_unfinished
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

import ttlstore

HDFS_PROVIDER = "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider"
PARTITIONS = 4
ROUNDS = 5
#: ttlstore's aggregation is repartitioned to n before round r.
REPARTITIONS = {2: 7, 4: 3}


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


LAZY_LOAD = ttlstore.settings.PREFIX + "lazyLoad.enabled"


def run_rounds(spark: SparkSession, provider: str, name: str, work: Path, kill_round: int | None,
               repartitions: dict[int, int]) -> dict:
    mode, build = QUERIES[name]
    label = "ttlstore" if provider == ttlstore.settings.PROVIDER_CLASS else "hdfs"
    source, checkpoint = work / f"{name}-{label}-input", work / f"{name}-{label}-checkpoint"
    source.mkdir(parents=True)
    spark.conf.set(ttlstore.settings.PROVIDER_CLASS_KEY, provider)
    # ttlstore's stores open before their SST files are local, reading them from the checkpoint meanwhile (issue
    # 51); a checkpoint of Spark's provider refuses a session that sets ttlstore's settings.
    if label == "ttlstore":
        spark.conf.set(LAZY_LOAD, "true")
    else:
        spark.conf.unset(LAZY_LOAD)
    outputs, killed, seconds, partitions, fetched, budgets = [], {}, [], [], [], []
    for r in range(ROUNDS):
        if r in repartitions:
            ttlstore.repartition(checkpoint, repartitions[r])
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
            killer = threading.Thread(target=lambda: killed.update(kill_during_stage(spark, PARTITIONS)))
            killer.start()
        start = time.monotonic()
        query.awaitTermination()
        seconds.append(time.monotonic() - start)
        if killer:
            killer.join()
            killed["batch_seconds"] = time.monotonic() - start
        outputs.append(sorted(emitted))
        operator = query.lastProgress["stateOperators"][0]
        partitions.append(operator["numShufflePartitions"])
        fetched.append(operator["customMetrics"].get("ttlstoreLoadFilesFetched", 0))
        budgets.append(operator["customMetrics"].get("ttlstoreMemoryBudgetBytes", 0))
    return {"outputs": outputs, "killed": killed, "seconds": seconds, "partitions": partitions,
            "files_fetched": fetched, "memory_budget_bytes": budgets}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("work", type=Path)
    parser.add_argument("--kill-round", type=int, default=3)
    parser.add_argument("--queries", default=",".join(QUERIES), help="which of the queries to run, by name")
    parser.add_argument("--no-repartition", action="store_true",
                        help="keep the aggregation's partitions (Spark 3.5 writes no operator metadata to repartition by)")
    args = parser.parse_args()
    builder = (SparkSession.builder.master("local-cluster[2,1,1024]").appName("ttlstore-local-cluster")
               .config("spark.ui.enabled", "false")
               .config("spark.sql.shuffle.partitions", str(PARTITIONS))
               .config("spark.sql.streaming.stateStore.maintenanceInterval", "1s")
               # A snapshot at every version: a store that moves fetches its SST files, not only changelogs.
               .config("spark.sql.streaming.stateStore.minDeltasForSnapshot", "1"))
    spark = ttlstore.configure(builder).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    result = {"app": spark.sparkContext.applicationId}
    for name in args.queries.split(","):
        result[name] = {
            "hdfs": run_rounds(spark, HDFS_PROVIDER, name, args.work, None, {}),
            "ttlstore": run_rounds(spark, ttlstore.settings.PROVIDER_CLASS, name, args.work,
                                   args.kill_round if name == "dedup" else None,
                                   REPARTITIONS if name == "count" and not args.no_repartition else {}),
        }
    spark.stop()
    result["executors_by_store"] = executors_by_store()
    result["memory_budgets_mib"] = memory_budgets_mib()
    killed = result["dedup"]["ttlstore"]["killed"]
    if killed:
        killed["tasks_lost"] = tasks_unfinished(killed["executor"], killed["stage"])
    print("RESULT " + json.dumps(result))


if __name__ == "__main__":
    sys.exit(main())
