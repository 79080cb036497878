"""The write path (`make bench`): state being written, on every provider, against a stateless ceiling.

Workloads (local[2], `rate-micro-batch` source, ROWS_PER_BATCH rows per micro-batch, BATCHES batches):
- aggregation: count per key over AGG_KEYS keys (update mode, no watermark): the first half of the
  batches bring new keys, the second half update them;
- dropDuplicates: every row a new key;
- mixed: count per key, half the rows new keys, half keys of a pool of MIXED_POOL already stored;
- steady: dropDuplicates filled to STEADY_KEYS_PER_STORE keys per store, then batches whose every row
  is a key already stored (the steady state of a deduplication); its figures count the last
  STEADY_BATCHES batches only;
- ceiling: the same source, shuffle (by key, into the same partitions) and `noop` sink with no
  state: what the query costs without a state store, so that `1 - ceiling / batch` is the state's
  share of a provider's batch time.

Each (workload, provider) run is a fresh JVM. Runs are interleaved: every repeat runs every
workload on every provider in turn, the ceiling first, at each partition count. Figures come from
Spark's progress reports: rows/s over all batches (the first, which pays the JVM's warm-up,
included, as a user's query does), the median batch (the first left out), commit p50/p95 per batch
(`commitTimeMs`, summed over the stores, as Spark reports it) and its share of the batch time
summed over the stores' tasks, and the peak state memory (`memoryUsedBytes` over the stores).

Run as a script with `--one`, it runs one workload and prints one line `RESULT {json}`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import time
from pathlib import Path

import ladder

ROOT = Path(__file__).resolve().parents[1]
ROWS_PER_BATCH = 200_000
BATCHES = 10
AGG_KEYS = 1_000_000
MIXED_POOL = 100_000
STEADY_KEYS_PER_STORE = 1_000_000
STEADY_WARMUP = 2
STEADY_BATCHES = 8
PARTITIONS = (2, 8)
REPEATS = 3
WORKLOADS = ("aggregation", "dropDuplicates", "mixed")
STEADY = "steady"
CEILING = "ceiling"
WRITE_PATH_PROVIDERS = ("hdfs", "rocksdb", "rocksdb-changelog", "ttlstore", "ttlstore-ttl")
#: The headline's (make bench): ttlstore as the goals measure it, TTL on, against the two bases.
HEADLINE_PROVIDERS = ("hdfs", "rocksdb-changelog", "ttlstore-ttl")
# Rows/s are set against these two: Spark's RocksDB provider as its users run it for speed, and its
# in-memory provider, which keeps every row on the JVM heap.
BASES = ("rocksdb-changelog", "hdfs")


def query(spark, source, workload: str, partitions: int):  # type: ignore[no-untyped-def]
    """The streaming DataFrame of `workload` and its output mode."""
    from pyspark.sql import functions as F

    value = F.col("value")
    if workload == "aggregation":
        return source.select((value % AGG_KEYS).alias("key")).groupBy("key").count(), "update"
    if workload == "dropDuplicates":
        return source.select(value.alias("key")).dropDuplicates(["key"]), "append"
    if workload == "mixed":
        # Even values are new keys; odd ones fall into a pool (negative, so never a new key) that the
        # first batch fills.
        key = F.when(value % 2 == 0, value).otherwise(-(value % MIXED_POOL) - 1)
        return source.select(key.alias("key")).groupBy("key").count(), "update"
    if workload == STEADY:
        return source.select((value % (STEADY_KEYS_PER_STORE * partitions)).alias("key")).dropDuplicates(["key"]), "append"
    return source.select(value.alias("key")).repartition(partitions, "key"), "append"


def run_one(workload: str, provider_class: str, settings: list[str], partitions: int, checkpoint: Path) -> dict:
    from pyspark.sql import SparkSession

    import ttlstore

    subprocess.run(["rm", "-rf", str(checkpoint)], check=True)
    builder = (
        SparkSession.builder.master("local[2]").appName(f"write-path-{workload}")
        .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", "6g").config("spark.sql.shuffle.partitions", str(partitions))
        .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={ROOT / 'conf' / 'log4j2.properties'}")
    )
    for setting in settings:
        key, _, value = setting.partition("=")
        builder = builder.config(key, value)
    spark = ttlstore.configure(builder).config(ttlstore.settings.PROVIDER_CLASS_KEY, provider_class).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    source = (spark.readStream.format("rate-micro-batch").option("rowsPerBatch", ROWS_PER_BATCH)
              .option("numPartitions", 2).load())
    df, mode = query(spark, source, workload, partitions)
    q = (df.writeStream.format("noop").outputMode(mode).option("checkpointLocation", str(checkpoint))
         .trigger(processingTime="0 seconds").start())
    fill = STEADY_KEYS_PER_STORE * partitions // ROWS_PER_BATCH if workload == STEADY else 0
    total = fill + STEADY_WARMUP + STEADY_BATCHES if workload == STEADY else BATCHES
    try:
        while len([p for p in q.recentProgress if p["numInputRows"] > 0]) < total:
            if q.exception() is not None:
                raise RuntimeError(str(q.exception()))
            time.sleep(0.5)
    finally:
        q.stop()
        spark.stop()
    progress = [p for p in q.recentProgress if p["numInputRows"] > 0][:total]
    durations = [p["durationMs"]["triggerExecution"] for p in progress]
    ops = [(p.get("stateOperators") or [{}])[0] for p in progress]
    commits = [o.get("commitTimeMs", 0) for o in ops]
    state_ms = [o.get("allUpdatesTimeMs", 0) + o.get("allRemovalsTimeMs", 0) + o.get("commitTimeMs", 0) for o in ops]
    # rows/s over every batch, the first (JVM warm-up) included, as a user's query pays it; the rest over
    # the batches after the first. The steady state counts its last STEADY_BATCHES alone, for both.
    counted = slice(-STEADY_BATCHES, None) if workload == STEADY else slice(1, None)
    rated = counted if workload == STEADY else slice(None)
    return {
        "workload": workload,
        "partitions": partitions,
        "rows_per_second": sum(p["numInputRows"] for p in progress[rated]) / (sum(durations[rated]) / 1000.0),
        "batch_ms": statistics.median(durations[counted]),
        "commit_p50_ms": statistics.median(commits[counted]),
        "commit_p95_ms": sorted(commits[counted])[max(0, round(0.95 * len(commits[counted])) - 1)],
        "commit_share": sum(commits[counted]) / sum(state_ms[counted]) if sum(state_ms[counted]) else 0.0,
        "peak_state_memory_bytes": max(o.get("memoryUsedBytes", 0) for o in ops),
        "state_rows": ops[-1].get("numRowsTotal", 0),
    }


def measure(providers: dict, chosen: list[str], out: Path, partitions: tuple[int, ...] = PARTITIONS,
            repeats: int = REPEATS, steady: bool = False) -> list[dict]:
    """Every workload (and with `steady` the steady state) on the `chosen` providers, interleaved."""
    results = []
    names = [p for p in WRITE_PATH_PROVIDERS if p in chosen]
    for repeat in range(repeats):
        for n in partitions:
            for workload in (CEILING, *WORKLOADS, *([STEADY] if steady else [])):
                for provider in (["ttlstore"] if workload == CEILING else names):
                    _label, provider_class, settings = providers[provider]
                    argv = ["--one", workload, provider_class, str(n), str(out / f"{workload}-{provider}-{n}"),
                            *(f"{k}={v}" for k, v in settings.items())]
                    figures = ladder.run_in_subprocess(argv, timeout=1800, script=__file__)
                    result = {**figures, "provider": provider, "repeat": repeat}
                    results.append(result)
                    print(f"write path {n} partitions {workload:15s} {provider:18s} "
                          f"{result['rows_per_second']:>10,.0f} rows/s  batch {result['batch_ms']:>6.0f} ms", flush=True)
    return results


def _median(runs: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def _spread(runs: list[dict], key: str) -> str:
    """The median and the largest distance of a run from it, as a share of the median."""
    m = _median(runs, key)
    return f"{m:,.0f} ±{max(abs(r[key] - m) for r in runs) / m:.0%}" if m else "0"


def report(results: list[dict], providers: dict) -> list[str]:
    if not results:
        return []
    repeats = len({r["repeat"] for r in results})
    lines = [
        "## The write path: state being written",
        "",
        f"{BATCHES} micro-batches of {ROWS_PER_BATCH:,} rows, local[2] (bench/write_path.py): aggregation over "
        f"{AGG_KEYS:,} keys (the first half of the batches new keys, the second half updates), dropDuplicates with "
        f"every row a new key, mixed (count per key, half the rows new keys, half keys of {MIXED_POOL:,} already "
        f"stored), steady where measured (dropDuplicates filled to {STEADY_KEYS_PER_STORE:,} keys per store, then "
        f"every row a stored key; its figures are the last {STEADY_BATCHES} batches', after {STEADY_WARMUP} more). "
        "Ceiling: the same source, shuffle and sink without state. Every run a fresh JVM; "
        f"{repeats} runs per provider, interleaved; each figure is the median of the runs, ± the largest distance "
        "of a run from it. rows/s: all batches, the first (JVM warm-up) included. batch ms: the median batch, the "
        "first left out. State share: 1 - ceiling batch / batch. Commit share: commit time over the state "
        "operator's time (updates, removals, commit), summed over the stores. Memory: `memoryUsedBytes` over the "
        "stores, peak.",
        "",
    ]
    for n in sorted({r["partitions"] for r in results}):
        at_n = [r for r in results if r["partitions"] == n]
        ceiling = [r for r in at_n if r["workload"] == CEILING]
        ceiling_ms = _median(ceiling, "batch_ms") if ceiling else 0.0
        lines += [
            f"### {n} shuffle partitions",
            "",
            f"Ceiling (no state): {_spread(ceiling, 'rows_per_second')} rows/s, {ceiling_ms:,.0f} ms a batch."
            if ceiling else "",
            "",
            "| workload | provider | rows/s (± spread) | vs RocksDB + changelog | vs HDFS | batch ms | state share "
            "| commit p50 / p95 ms | commit share | peak state memory MiB |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for workload in (*WORKLOADS, STEADY):
            runs = {p: [r for r in at_n if r["workload"] == workload and r["provider"] == p] for p in WRITE_PATH_PROVIDERS}
            base = {b: _median(runs[b], "rows_per_second") if runs.get(b) else 0.0 for b in BASES}
            for provider, rs in runs.items():
                if not rs:
                    continue
                rate, batch = _median(rs, "rows_per_second"), _median(rs, "batch_ms")
                vs = [f"{rate / base[b]:.2f}x" if base[b] else "n/a" for b in BASES]
                share = f"{1 - ceiling_ms / batch:.0%}" if ceiling_ms and batch else "n/a"
                lines.append(
                    f"| {workload} | {providers[provider][0]} | {_spread(rs, 'rows_per_second')} | {vs[0]} | {vs[1]} "
                    f"| {batch:,.0f} | {share} | {_median(rs, 'commit_p50_ms'):,.0f} / {_median(rs, 'commit_p95_ms'):,.0f} "
                    f"| {_median(rs, 'commit_share'):.0%} | {_median(rs, 'peak_state_memory_bytes') / 2**20:,.1f} |")
        lines += ["", *ttl_cost_lines(at_n), ""]
    return lines


def ttl_cost_lines(results: list[dict]) -> list[str]:
    """TTL on against TTL off, pair by pair (the two ran one after the other in each repeat)."""
    out = []
    for workload in WORKLOADS:
        off = {r["repeat"]: r for r in results if r["workload"] == workload and r["provider"] == "ttlstore"}
        on = {r["repeat"]: r for r in results if r["workload"] == workload and r["provider"] == "ttlstore-ttl"}
        ratios = sorted(on[k]["rows_per_second"] / off[k]["rows_per_second"] for k in off if k in on)
        if ratios:
            m = statistics.median(ratios)
            out.append(f"- {workload}: TTL on (1 day, nothing expiring) / TTL off {m:.2f}x ({1 - m:+.0%} cost; pairs "
                       f"{', '.join(f'{x:.2f}x' for x in ratios)}).")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--one", nargs=4, metavar=("WORKLOAD", "PROVIDER_CLASS", "PARTITIONS", "CHECKPOINT"))
    parser.add_argument("settings", nargs="*")
    args = parser.parse_args()
    workload, provider_class, partitions, checkpoint = args.one
    print("RESULT " + json.dumps(run_one(workload, provider_class, args.settings, int(partitions), Path(checkpoint))))


if __name__ == "__main__":
    main()
