"""Where a steady-state read goes: RocksDB's own figures per read, for ttlstore's stores, as Spark runs them.

For each workload (dropDuplicates, aggregation, flatMapGroupsWithState) one ladder run (bench/ladder.py
--read-profile, a fresh JVM, TTL on as `make bench` measures it) grows every store to each size of
`--sizes`, then runs steady batches whose rows are all stored keys; over each rung's counted batches
RocksDB's statistics (every store of the JVM counting into one) are divided by the point reads they
served: the SST files whose Bloom filter a read checked and the false positives among them, where the
key was found (memtable, L0, L1, deeper), the block cache's hits and misses for data, index and filter
blocks, the blocks read from files, and a read's mean time inside RocksDB. The state operator's µs per
input row sits beside them (its median over the counted batches).

    .venv/bin/python bench/read_profile.py [--workloads ...] [--sizes 1000000 4000000] [--out FILE]

prints the table (and writes it to FILE as Markdown); `--json` keeps every run's figures.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import ladder

TTLSTORE = "io.ttlstore.TtlStateStoreProvider"
# As `make bench` measures ttlstore (bench/run_bench.py's ttlstore-ttl).
TTL = {"spark.sql.streaming.stateStore.ttlstore.ttl": "1 day"}
WARMUP = 4
COUNTED = 6

# (column, what it counts per point read): RocksDB's tickers and histograms by RocksJava's names.
Figures = dict[str, float]
COLUMNS: list[tuple[str, Callable[[Figures], float]]] = [
    ("filters checked", lambda f: f["BLOOM_FILTER_USEFUL"] + f["BLOOM_FILTER_FULL_POSITIVE"]),
    ("filter false positives", lambda f: f["BLOOM_FILTER_FULL_POSITIVE"] - f["BLOOM_FILTER_FULL_TRUE_POSITIVE"]),
    ("found in memtable", lambda f: f["MEMTABLE_HIT"]),
    ("found in L0", lambda f: f["GET_HIT_L0"]),
    ("found in L1", lambda f: f["GET_HIT_L1"]),
    ("found deeper", lambda f: f["GET_HIT_L2_AND_UP"]),
    ("data blocks from cache", lambda f: f["BLOCK_CACHE_DATA_HIT"]),
    ("data blocks missed", lambda f: f["BLOCK_CACHE_DATA_MISS"]),
    ("index/filter blocks missed", lambda f: f["BLOCK_CACHE_INDEX_MISS"] + f["BLOCK_CACHE_FILTER_MISS"]),
    ("file reads", lambda f: f["SST_READ_MICROS.count"]),
    ("µs in RocksDB", lambda f: f["DB_GET.sum"]),
]


def per_read(figures: Figures, count: Callable[[Figures], float]) -> float:
    """What `count` counts over `figures` (a figure not counted is 0), per point read."""
    all_figures = defaultdict(float, figures)
    return count(all_figures) / max(all_figures["NUMBER_KEYS_READ"], 1.0)


def profile(workload: str, sizes: list[int], workdir: Path, conf: list[str]) -> dict:
    argv = [workload, TTLSTORE, "--sizes", *map(str, sizes), "--workdir", str(workdir), "--read-profile",
            "--steady", str(WARMUP + COUNTED), "--warmup", str(WARMUP)]
    for key, value in TTL.items():
        argv += ["--conf", f"{key}={value}"]
    for setting in conf:
        argv += ["--conf", setting]
    return ladder.run_in_subprocess(argv)


def table(results: list[dict]) -> list[str]:
    lines = ["| workload | keys per store | µs per row (state) | reads per row | "
             + " | ".join(c for c, _ in COLUMNS) + " |",
             "|---|---|---|---|" + "---|" * len(COLUMNS)]
    for result in results:
        for rung in result["rungs"]:
            figures = rung["reads"]
            cells = [f"{per_read(figures, f):.2f}" for _, f in COLUMNS]
            reads = figures.get("NUMBER_KEYS_READ", 0.0) / max(rung["input_rows"], 1)
            lines.append(f"| {result['workload']} | {rung['keys_per_store']:,} | {rung['median_us_per_row']:.2f} | "
                         f"{reads:.2f} | " + " | ".join(cells) + " |")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workloads", nargs="+", choices=ladder.WORKLOADS, default=list(ladder.WORKLOADS))
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 4_000_000])
    parser.add_argument("--conf", action="append", default=[], help="KEY=VALUE, a Spark setting for every run")
    parser.add_argument("--out", help="also write the table to this Markdown file")
    parser.add_argument("--json", help="also write every run's result to this file")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="read-profile-") as workdir:
        results = [profile(w, args.sizes, Path(workdir), args.conf) for w in args.workloads]
    lines = table(results)
    print("\n".join(lines))
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
