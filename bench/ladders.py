"""`make bench`'s size ladders: per workload and provider, the steady per-row cost as the state grows.

Each (workload, provider) is one query in a fresh JVM (bench/ladder.py) that grows its stores
through every size of LADDER_SIZES; the report gives, per size, the steady batches' rows/s and the
state operator's microseconds per row, the ratios against Spark's RocksDB provider with changelog
checkpointing (the configuration Spark recommends), and the largest size's per-row cost against the
smallest's, as a ratio (the cliff check: at most 2x) and as the µs per row it adds (which compares
providers whose smallest sizes differ in speed). The plot (docs/ladder.png) shows rows/s against keys per
store, one line per provider, one panel per workload.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

import ladder

LADDER_SIZES = {
    "dropDuplicates": [100_000, 1_000_000, 4_000_000],
    "aggregation": [100_000, 1_000_000, 4_000_000],
    "flatMapGroupsWithState": [100_000, 1_000_000, 4_000_000],
}
# TTL on only: what TTL costs against TTL off is measured apart, in interleaved pairs (bench/ttl_cost.py).
LADDER_PROVIDERS = ("hdfs", "rocksdb-changelog", "ttlstore-ttl")
# Steady batches per rung, and how many of them are left out: after a fill to 4M keys per store both
# RocksDB providers spend up to 8 batches on what the fill left behind (the compactions it started;
# docs/performance.md, "Settled, not just warmed"), then level off. The counted batches span one
# snapshot period (spark.sql.streaming.stateStore.minDeltasForSnapshot, 10 by default), so that every
# provider's snapshot, and the flush and compaction it sets off, falls in them once per rung wherever
# it lands; with 4 counted batches it fell in or out by the count of fill batches (performance.md,
# "The 1M rung's slowdown: a compaction in the counted batches").
WARMUP = 8
SNAPSHOT_PERIOD = 10  # spark.sql.streaming.stateStore.minDeltasForSnapshot's default, on every provider here
STEADY = WARMUP + SNAPSHOT_PERIOD
# Runs per (workload, provider): a single run's 4M rung differs from the next run's by as much as two
# providers differ, so the counted batches of two runs are pooled.
ROUNDS = 2
BASE = "rocksdb-changelog"


def run_ladders(providers: dict, workloads: list[str], chosen: list[str], out: Path, partitions: int,
                rounds: int = ROUNDS) -> list[dict]:
    """Runs every (workload, provider) ladder `rounds` times, each run in its own process, the providers
    interleaved (round 1 of every provider, then round 2, ...), and returns one result per (workload,
    provider) whose rungs pool the counted batches of all its runs."""
    results = []
    for workload in workloads:
        runs: dict[str, list[dict]] = {}
        for _round in range(rounds):
            for provider in [p for p in LADDER_PROVIDERS if p in chosen]:
                _label, provider_class, extra = providers[provider]
                argv = [workload, provider_class, "--partitions", str(partitions),
                        "--sizes", *map(str, LADDER_SIZES[workload]), "--workdir", str(out / "ladder"),
                        "--steady", str(STEADY), "--warmup", str(WARMUP)]
                for key, value in extra.items():
                    argv += ["--conf", f"{key}={value}"]
                result = ladder.run_in_subprocess(argv)
                runs.setdefault(provider, []).append(result)
                print(f"ladder {workload:24s} {provider:18s} " + "  ".join(
                    f"{r['keys_per_store']:>9,}: {r['median_rows_per_second']:>9,.0f} rows/s "
                    f"{r['median_us_per_row']:6.1f} us/row" for r in result["rungs"]), flush=True)
        results += [dict(pooled(provider_runs), provider=provider, runs=len(provider_runs),
                         measured=time.strftime("%Y-%m-%d")) for provider, provider_runs in runs.items()]
    return results


def pooled(runs: list[dict]) -> dict:
    """One result from several runs of one ladder: per rung, the counted batches of every run together."""
    rungs = []
    for i, first in enumerate(runs[0]["rungs"]):
        rung = dict(first)
        for key in ("us_per_row", "rows_per_second"):
            rung[key] = [v for r in runs for v in r["rungs"][i][key]]
        rung["memory_used_bytes"] = max(r["rungs"][i]["memory_used_bytes"] for r in runs)
        rungs.append(ladder.with_medians(rung))
    return dict(runs[0], rungs=rungs)


def spread(values: list[float]) -> str:
    """The range of the steady batches around their median, as +-% of the median."""
    m = statistics.median(values)
    return f"±{max(abs(max(values) - m), abs(m - min(values))) / m:.0%}" if m else "n/a"


def report(results: list[dict], providers: dict, partitions: int) -> list[str]:
    if not results:
        return []
    lines = [
        "## Size ladders: the cost per row as the state grows",
        "",
        f"Measured {results[0].get('measured', 'n/a')}. One query per workload and provider, fresh JVM, local[2], "
        f"{partitions} shuffle partitions (so {partitions} "
        "stores), 200,000 rows per micro-batch (bench/ladder.py). The state grows through each size (keys per "
        "store); at each size come steady batches whose rows are all keys already stored (duplicates, updates of "
        f"existing groups): {STEADY} of them, the first {WARMUP} left out (what a fill leaves behind, its "
        "compactions still running beside the batches, slows up to 8 batches at 4M keys per store), "
        f"the other {STEADY - WARMUP} counted (one snapshot period, so each provider's snapshot and the compaction "
        "it sets off are counted once). Each ladder ran "
        f"{results[0].get('runs', 1)} times, the providers interleaved, and the counted batches of its runs are "
        "pooled. rows/s: the whole query; µs/row: the state operator's time (`allUpdatesTimeMs`, summed over "
        "partitions) per input row; both the median of the counted batches, ± the largest distance of a batch "
        "from it (so the spread includes the difference between runs). Ratios: rows/s against Spark's RocksDB provider with changelog "
        "checkpointing. Cliff: per-row cost at the largest size over the smallest's (target at most 2x); added: "
        "the per-row cost the largest size adds to the smallest's (of two providers that add the same, the one "
        "faster at the smallest size has the higher cliff). "
        "What was measured and changed: [performance.md](performance.md).",
        "",
        "![rows/s against keys per store](ladder.png)",
        "",
    ]
    for workload in dict.fromkeys(r["workload"] for r in results):
        rows = {r["provider"]: r for r in results if r["workload"] == workload}
        sizes = [g["keys_per_store"] for g in next(iter(rows.values()))["rungs"]]
        base = rows.get(BASE)
        lines += [f"### {workload}", "",
                  "| provider | " + " | ".join(f"{s:,} keys/store" for s in sizes) + " | cliff (largest / smallest µs/row) | added µs/row |",
                  "|---|" + "---|" * (len(sizes) + 2)]
        for provider, r in rows.items():
            cells = []
            for i, g in enumerate(r["rungs"]):
                vs = f", {g['median_rows_per_second'] / base['rungs'][i]['median_rows_per_second']:.2f}x" if base else ""
                cells.append(f"{g['median_rows_per_second']:,.0f} rows/s {spread(g['rows_per_second'])}{vs}; "
                             f"{g['median_us_per_row']:.1f} µs/row")
            largest, smallest = r["rungs"][-1]["median_us_per_row"], r["rungs"][0]["median_us_per_row"]
            lines.append(f"| {providers[provider][0]} | " + " | ".join(cells)
                         + f" | {largest / smallest:.2f}x | {largest - smallest:+.1f} |")
        lines.append("")
    return lines


def plot(results: list[dict], providers: dict, path: Path) -> None:
    """rows/s against keys per store (log scale), a panel per workload, a line per provider."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    workloads = list(dict.fromkeys(r["workload"] for r in results))
    fig, axes = plt.subplots(1, len(workloads), figsize=(5 * len(workloads), 4), squeeze=False)
    for ax, workload in zip(axes[0], workloads, strict=True):
        for r in (r for r in results if r["workload"] == workload):
            sizes = [g["keys_per_store"] for g in r["rungs"]]
            ax.plot(sizes, [g["median_rows_per_second"] for g in r["rungs"]], marker="o", label=providers[r["provider"]][0])
        ax.set_xscale("log")
        ax.set_ylim(bottom=0)
        ax.set_title(workload)
        ax.set_xlabel("keys per store")
        ax.set_ylabel("rows/s (counted steady batches)")
        ax.grid(True, alpha=0.3)
    axes[0][0].legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
