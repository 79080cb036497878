"""`make bench`: the same streaming workloads on Spark's providers and on ttlstore, in one run.

Workloads (local[2], `rate-micro-batch` source, exactly ROWS_PER_BATCH rows per micro-batch):
- aggregation: count per key over AGG_KEYS distinct keys (update mode, no watermark);
- dropDuplicates: every row a new key (BATCHES x ROWS_PER_BATCH distinct keys).

Each (workload, provider) runs in a fresh SparkSession (a new JVM), so no provider inherits another's
warm caches. Figures come from Spark's own progress reports. Results go to docs/benchmarks.md as
ratios against Spark's RocksDB provider with default settings.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "bench-output"

PROVIDERS = {
    "hdfs": ("HDFS provider", "org.apache.spark.sql.execution.streaming.state.HDFSBackedStateStoreProvider", {}),
    "rocksdb": ("RocksDB provider", "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider", {}),
    "rocksdb-changelog": (
        "RocksDB provider + changelog",
        "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider",
        {"spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled": "true"},
    ),
    "ttlstore": ("ttlstore", "io.ttlstore.TtlStateStoreProvider", {}),
}
WORKLOADS = ("aggregation", "dropDuplicates")


def run_one(workload: str, provider: str, batches: int, rows_per_batch: int, agg_keys: int, partitions: int) -> dict:
    """Runs one workload on one provider in this process and returns its figures."""
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    import ttlstore

    _label, provider_class, extra = PROVIDERS[provider]
    workdir = OUT / f"{workload}-{provider}"
    subprocess.run(["rm", "-rf", str(workdir)], check=True)
    builder = (
        SparkSession.builder.master("local[2]")
        .appName(f"bench-{workload}-{provider}")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.memory", "6g")
        .config("spark.sql.shuffle.partitions", str(partitions))
        .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={ROOT / 'conf' / 'log4j2.properties'}")
    )
    spark = ttlstore.configure(builder).config(ttlstore.PROVIDER_CLASS_KEY, provider_class).getOrCreate()
    for key, value in extra.items():
        spark.conf.set(key, value)
    spark.sparkContext.setLogLevel("ERROR")
    source = spark.readStream.format("rate-micro-batch").option("rowsPerBatch", rows_per_batch).option("numPartitions", 2).load()
    if workload == "aggregation":
        query_df = source.select((F.col("value") % agg_keys).alias("key")).groupBy("key").count()
        mode = "update"
    else:
        query_df = source.select(F.col("value").alias("key")).dropDuplicates(["key"])
        mode = "append"
    query = (
        query_df.writeStream.format("noop")
        .outputMode(mode)
        .option("checkpointLocation", str(workdir / "checkpoint"))
        .trigger(processingTime="0 seconds")
        .start()
    )
    try:
        while True:
            progress = [p for p in query.recentProgress if p["numInputRows"] > 0]
            if len(progress) >= batches:
                break
            if query.exception() is not None:
                raise RuntimeError(str(query.exception()))
            time.sleep(0.5)
    finally:
        query.stop()
        spark.stop()
    progress = progress[:batches]
    durations = [p["durationMs"]["triggerExecution"] for p in progress]
    commits = [p["stateOperators"][0]["commitTimeMs"] for p in progress]
    memory = [p["stateOperators"][0]["memoryUsedBytes"] for p in progress]
    state_bytes = sum(f.stat().st_size for f in (workdir / "checkpoint" / "state").rglob("*") if f.is_file())
    total_rows = sum(p["numInputRows"] for p in progress)
    return {
        "workload": workload,
        "provider": provider,
        "rows_per_second": total_rows / (sum(durations) / 1000.0),
        "commit_p50_ms": statistics.median(commits),
        "commit_p95_ms": sorted(commits)[max(0, int(round(0.95 * len(commits))) - 1)],
        "peak_state_memory_bytes": max(memory),
        "checkpoint_bytes": state_bytes,
        "state_rows": progress[-1]["stateOperators"][0]["numRowsTotal"],
        "batches": len(progress),
        "rows": total_rows,
    }


def ratio(value: float, base: float) -> str:
    return f"{value / base:.2f}x" if base else "n/a"


def write_report(results: list[dict], args: argparse.Namespace) -> str:
    lines = [
        "# Benchmarks",
        "",
        "<!-- Written by `make bench` (tests/bench/run_bench.py); rerun it to refresh. -->",
        "",
        f"Measured {time.strftime('%Y-%m-%d')} on {platform.machine()}, {os.cpu_count()} cores, "
        f"Spark local[2], {args.partitions} shuffle partitions, {args.batches} micro-batches of "
        f"{args.rows_per_batch:,} rows each; aggregation over {args.agg_keys:,} distinct keys, "
        f"dropDuplicates over {args.batches * args.rows_per_batch:,} distinct keys. Every run is a fresh "
        "JVM; figures come from Spark's progress reports. Ratios are against Spark's RocksDB provider "
        "with default settings (throughput: higher is better; latency, memory, bytes: lower is better).",
        "",
    ]
    for workload in WORKLOADS:
        rows = {r["provider"]: r for r in results if r["workload"] == workload}
        base = rows.get("rocksdb")
        if not base:
            continue
        lines += [
            f"## {workload}",
            "",
            "| provider | rows/s | vs RocksDB | commit p50 ms | commit p95 ms | peak state memory MiB | checkpoint MiB | state rows |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for key in PROVIDERS:
            r = rows.get(key)
            if r is None:
                continue
            lines.append(
                f"| {PROVIDERS[key][0]} | {r['rows_per_second']:,.0f} | {ratio(r['rows_per_second'], base['rows_per_second'])} "
                f"| {r['commit_p50_ms']:.0f} | {r['commit_p95_ms']:.0f} | {r['peak_state_memory_bytes'] / 2**20:,.1f} "
                f"| {r['checkpoint_bytes'] / 2**20:,.1f} | {r['state_rows']:,} |"
            )
        ours = rows.get("ttlstore")
        if ours:
            lines += [
                "",
                f"ttlstore throughput: {ratio(ours['rows_per_second'], base['rows_per_second'])} of the RocksDB provider "
                f"(default), {ratio(ours['rows_per_second'], rows['rocksdb-changelog']['rows_per_second']) if 'rocksdb-changelog' in rows else 'n/a'} "
                f"of the RocksDB provider with changelog checkpointing, "
                f"{ratio(ours['rows_per_second'], rows['hdfs']['rows_per_second']) if 'hdfs' in rows else 'n/a'} of the HDFS provider.",
            ]
        lines.append("")
    lines += [
        "Memory is what each provider reports as `memoryUsedBytes`: the HDFS provider estimates its",
        "in-memory maps; the RocksDB-based providers report memtables and table readers (their block",
        "caches are shared and not counted). Checkpoint bytes are all files below `state/` at the end.",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batches", type=int, default=10)
    parser.add_argument("--rows-per-batch", type=int, default=200_000)
    parser.add_argument("--agg-keys", type=int, default=1_000_000)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--workloads", nargs="*", default=list(WORKLOADS))
    parser.add_argument("--providers", nargs="*", default=list(PROVIDERS))
    parser.add_argument("--one", nargs=2, metavar=("WORKLOAD", "PROVIDER"), help=argparse.SUPPRESS)
    parser.add_argument("--report", default=str(ROOT / "docs" / "benchmarks.md"))
    args = parser.parse_args()

    if args.one:
        result = run_one(args.one[0], args.one[1], args.batches, args.rows_per_batch, args.agg_keys, args.partitions)
        print("RESULT " + json.dumps(result))
        return

    OUT.mkdir(exist_ok=True)
    results = []
    for workload in args.workloads:
        for provider in args.providers:
            cmd = [sys.executable, __file__, "--one", workload, provider, "--batches", str(args.batches),
                   "--rows-per-batch", str(args.rows_per_batch), "--agg-keys", str(args.agg_keys),
                   "--partitions", str(args.partitions)]
            done = subprocess.run(cmd, capture_output=True, text=True)
            line = next((l for l in done.stdout.splitlines() if l.startswith("RESULT ")), None)
            if line is None:
                sys.stderr.write(done.stdout[-3000:] + done.stderr[-3000:])
                raise SystemExit(f"benchmark run {workload}/{provider} failed")
            result = json.loads(line[len("RESULT "):])
            results.append(result)
            print(f"{workload:15s} {PROVIDERS[provider][0]:30s} {result['rows_per_second']:>12,.0f} rows/s  "
                  f"commit p50 {result['commit_p50_ms']:>5.0f} ms  p95 {result['commit_p95_ms']:>5.0f} ms", flush=True)
    (OUT / "results.json").write_text(json.dumps(results, indent=2))
    report = write_report(results, args)
    Path(args.report).write_text(report)
    print(f"\nwrote {args.report}")


if __name__ == "__main__":
    main()
