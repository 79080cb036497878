"""`make bench`'s bounded-memory run: 200 stores in one executor, against a memory limit.

A deduplication on 200 shuffle partitions (so 200 stores in the one local JVM) brings 6,000 keys
per store in two batches, then two batches of duplicates (bench/ladder.py). It runs on
ttlstore and on Spark's RocksDB provider with changelog checkpointing, each with its memory bounded
to LIMIT_MB and without a bound. The report gives the largest `memoryUsedBytes` of any batch (all
stores together, as Spark reports it), the steady batches' rows/s, and the data files the stores
hold (ttlstore: written because the limit made a store flush its memtable).
"""

from __future__ import annotations

import time
from pathlib import Path

import ladder

PARTITIONS = 200
KEYS_PER_STORE = 6_000
LIMIT_MB = 64
TTL = "spark.sql.streaming.stateStore.ttlstore."
SPARK = "spark.sql.streaming.stateStore.rocksdb."

#: (label, provider key in bench_providers.PROVIDERS, memory settings)
RUNS = (
    ("ttlstore, bounded (the default)", "ttlstore", {TTL + "maxMemoryUsageMB": str(LIMIT_MB)}),
    ("ttlstore, unbounded", "ttlstore", {TTL + "boundedMemoryUsage": "false", TTL + "blockCacheSizeMB": str(LIMIT_MB // 2)}),
    ("RocksDB provider + changelog, bounded", "rocksdb-changelog",
     {SPARK + "boundedMemoryUsage": "true", SPARK + "maxMemoryUsageMB": str(LIMIT_MB)}),
    ("RocksDB provider + changelog, unbounded (its default)", "rocksdb-changelog", {}),
)


def argv(provider_class: str, confs: dict[str, str], workdir: Path) -> list[str]:
    out = ["dropDuplicates", provider_class, "--sizes", str(KEYS_PER_STORE), "--partitions", str(PARTITIONS),
           "--rows-per-batch", "600000", "--steady", "2", "--driver-memory", "2g", "--workdir", str(workdir)]
    for key, value in confs.items():
        out += ["--conf", f"{key}={value}"]
    return out


def run_all(providers: dict, out: Path) -> list[dict]:
    results = []
    for label, provider, confs in RUNS:
        _name, provider_class, extra = providers[provider]
        result = ladder.run_in_subprocess(argv(provider_class, {**extra, **confs}, out / "memory"))
        results.append({"label": label, "measured": time.strftime("%Y-%m-%d"), **result})
        print(f"memory {label:55s} peak {result['peak_memory_used_bytes'] / 2**20:7.1f} MiB", flush=True)
    return results


def report(results: list[dict]) -> list[str]:
    if not results:
        return []
    lines = [
        "## Bounded memory: 200 stores in one executor",
        "",
        f"Measured {results[0]['measured']}. bench/bounded_memory.py: a deduplication on {PARTITIONS} shuffle partitions "
        f"(local[2], so {PARTITIONS} stores in one JVM), {KEYS_PER_STORE:,} keys per store brought in two batches, then "
        f"two batches of duplicates; limit {LIMIT_MB} MiB where bounded. Peak memory: the largest `memoryUsedBytes` "
        "of any batch (all stores together, as each provider reports it). What the bound does and costs: "
        "[performance.md](performance.md#bounded-memory).",
        "",
        "| run | peak memoryUsedBytes | vs the limit | steady rows/s | data files (ttlstore) |",
        "|---|---|---|---|---|",
    ]
    for r in results:
        (rung,) = r["rungs"]
        peak = r["peak_memory_used_bytes"]
        sst = r.get("sst_bytes")
        lines.append(f"| {r['label']} | {peak / 2**20:.1f} MiB | {peak / (LIMIT_MB * 2**20):.2f}x | "
                     f"{rung['median_rows_per_second']:,.0f} | {'' if sst is None else f'{sst / 2**20:.1f} MiB'} |")
    lines.append("")
    return lines


if __name__ == "__main__":
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    from bench_providers import OUT, PROVIDERS

    for line in report(run_all(PROVIDERS, OUT)):
        print(line)
