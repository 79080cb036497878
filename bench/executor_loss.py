"""Executor loss on Spark's local-cluster master: how long a store of 1M keys takes to come back (`make bench`).

One aggregation (count per key, update mode) per provider on `local-cluster[2,1,3072]` (two executor
JVMs) with 2 shuffle partitions and Spark's default maintenance: batches of ROWS_PER_BATCH new keys
until each store holds KEYS_PER_STORE keys, then STEADY batches that update keys already stored.
During batch KILL_AT of those, an executor that its log shows running a task of the stateful stage is
killed with SIGKILL a tenth of a second after the task started. Spark reruns the lost tasks on the other
executor, which loads the lost store from the checkpoint (snapshot download and changelog replay).

Figures: that batch's time (`triggerExecution`) against the median of the steady batches before it;
the difference is the recovery. Run as a script, it prints one line `RESULT {json}`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from datetime import datetime
from pathlib import Path

import ladder

sys.path.insert(0, str(ladder.ROOT / "tests" / "cluster"))
from executors import kill_during_stage, spark_home, tasks_unfinished  # noqa: E402

KEYS_PER_STORE = 1_000_000
PARTITIONS = 2
ROWS_PER_BATCH = 50_000
STEADY = 12
KILL_AT = 8
LOSS_PROVIDERS = ("rocksdb", "rocksdb-changelog", "ttlstore")


def run(args: argparse.Namespace) -> dict:
    from pyspark.sql import SparkSession

    import ttlstore

    os.environ["SPARK_HOME"] = str(spark_home(Path(tempfile.mkdtemp(prefix="executor-loss-", dir=args.work))))
    plan = ladder.schedule([KEYS_PER_STORE], PARTITIONS, ROWS_PER_BATCH, STEADY + 2)
    fill = sum(1 for b in plan if b[0] == "fill")
    builder = (
        SparkSession.builder.master("local-cluster[2,1,3072]").appName("executor-loss")
        .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", "2g").config("spark.executor.memory", "2g")
        # ttlstore's budget follows the overhead: 1 GiB gives the 512 MiB these figures were first measured with.
        .config("spark.executor.memoryOverhead", "1g")
        .config("spark.sql.shuffle.partitions", str(PARTITIONS))
    )
    for setting in args.conf:
        key, _, value = setting.partition("=")
        builder = builder.config(key, value)
    spark = ttlstore.configure(builder).config(ttlstore.settings.PROVIDER_CLASS_KEY, args.provider_class).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    source = (spark.readStream.format("rate-micro-batch").option("rowsPerBatch", ROWS_PER_BATCH)
              .option("numPartitions", 1).load())  # one source task: the stateful stage is the one of 2
    counts = source.select(ladder.key_column(plan, ROWS_PER_BATCH).alias("key")).groupBy("key").count()
    query = (counts.writeStream.format("noop").outputMode("update")
             .option("checkpointLocation", str(Path(os.environ["SPARK_HOME"]) / "checkpoint"))
             .trigger(processingTime="0 seconds").start())

    def done() -> list[dict]:
        if query.exception() is not None:
            raise RuntimeError(str(query.exception()))
        return [p for p in query.recentProgress if p["numInputRows"] > 0]

    killed: dict = {}
    try:
        while len(done()) < fill + KILL_AT:
            time.sleep(0.1)
        killer = threading.Thread(target=lambda: killed.update(kill_during_stage(spark, PARTITIONS, after=0.1, timeout=600)))
        killer.start()
        killer.join()
        while len(done()) < fill + STEADY:
            time.sleep(0.1)
    finally:
        query.stop()
        progress = done() if query.exception() is None else []
        spark.stop()
    killed["tasks_lost"] = tasks_unfinished(killed["executor"], killed["stage"])
    starts = [datetime.fromisoformat(p["timestamp"].replace("Z", "+00:00")).timestamp() for p in progress]
    hit = max(i for i, s in enumerate(starts) if s <= killed["at"])
    batch_ms = [p["durationMs"]["triggerExecution"] for p in progress]
    return {"killed_batch_ms": batch_ms[hit], "steady_before_ms": statistics.median(batch_ms[fill:hit]),
            "next_batch_ms": batch_ms[hit + 1] if hit + 1 < len(batch_ms) else None,
            "rows": progress[-1]["stateOperators"][0]["numRowsTotal"], "killed": killed,
            "batch_ms": batch_ms[fill:]}


def measure(providers: dict, chosen: list[str], out: Path, repeats: int = 3) -> list[dict]:
    """`repeats` runs per provider, interleaved, each in its own process; returns every run's figures."""
    results = []
    out.mkdir(parents=True, exist_ok=True)
    for _ in range(repeats):
        for provider in [p for p in LOSS_PROVIDERS if p in chosen]:
            _label, provider_class, extra = providers[provider]
            argv = [provider_class, "--work", str(out)] + ladder.conf_args(extra)
            r = ladder.run_in_subprocess(argv, script=__file__)
            r.update(provider=provider, measured=time.strftime("%Y-%m-%d"),
                     recovery_ms=r["killed_batch_ms"] - r["steady_before_ms"])
            results.append(r)
            print(f"executor loss {provider:18s} killed batch {r['killed_batch_ms']} ms, "
                  f"steady {r['steady_before_ms']:.0f} ms, recovery {r['recovery_ms']:.0f} ms", flush=True)
    return results


def report(results: list[dict], providers: dict) -> list[str]:
    if not results:
        return []
    runs: dict[str, list[dict]] = {}
    for r in results:
        runs.setdefault(r["provider"], []).append(r)

    def median(provider: str, key: str) -> float:
        return statistics.median(r[key] for r in runs[provider])

    lines = [
        "## Executor loss",
        "",
        f"Measured {results[0]['measured']}. bench/executor_loss.py: aggregation (count per key, update mode) on "
        f"`local-cluster[2,1,3072]` (two executor JVMs), {PARTITIONS} shuffle partitions, Spark's default maintenance, "
        f"{KEYS_PER_STORE:,} keys per store, then batches of {ROWS_PER_BATCH:,} updates of existing keys. In steady "
        f"batch {KILL_AT} an executor running a task of the stateful stage is killed with SIGKILL; Spark reruns the "
        "lost tasks on the other executor, which loads the lost store from the checkpoint. Recovery: that batch's "
        "time minus the median steady batch before it. Medians of the runs (interleaved), with their range.",
        "",
        "| provider | runs | steady batch | batch with the kill | recovery (range) | vs Spark's RocksDB provider |",
        "|---|---|---|---|---|---|",
    ]
    for provider, rs in runs.items():
        recoveries = [r["recovery_ms"] for r in rs]
        versus = (f"{median(provider, 'recovery_ms') / median('rocksdb', 'recovery_ms'):.2f}x"
                  if "rocksdb" in runs else "-")
        lines.append(f"| {providers[provider][0]} | {len(rs)} | {median(provider, 'steady_before_ms'):.0f} ms | "
                     f"{median(provider, 'killed_batch_ms'):.0f} ms | {median(provider, 'recovery_ms'):.0f} ms "
                     f"({min(recoveries):.0f}-{max(recoveries):.0f}) | {versus} |")
    return lines + [""]


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("provider_class")
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--conf", action="append", default=[])
    print("RESULT " + json.dumps(run(parser.parse_args())))
