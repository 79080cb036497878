"""What TTL costs when nothing expires, as Spark drives it (`make bench`).

Per workload (dropDuplicates whose rows are all duplicates, aggregation updating existing keys),
PAIRS interleaved pairs of the same query on ttlstore: TTL off, then TTL 1 day (nothing expires).
Every run is a fresh JVM running tests/bench/ladder.py at one size (SIZE keys per store, STEADY
steady batches, the first left out). Per run: the state operator's time per row and the query's
rows/s, each the median of the steady batches. Per pair: TTL on over TTL off. The cost is the
median over the pairs; its spread is given by the lowest and highest pair and the interquartile
range, since one run against another differs by 10-15% on this machine: a cost smaller than the
spread is not a measured cost.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

import ladder

SIZE = 250_000
STEADY = 8
PAIRS = 12
COST_WORKLOADS = ("dropDuplicates", "aggregation")
TTL_ON = "spark.sql.streaming.stateStore.ttlstore.ttl=1 day"
PROVIDER_CLASS = "io.ttlstore.TtlStateStoreProvider"


def one_run(workload: str, ttl: bool, workdir: Path) -> dict:
    argv = [workload, PROVIDER_CLASS, "--sizes", str(SIZE), "--steady", str(STEADY), "--workdir", str(workdir)]
    if ttl:
        argv += ["--conf", TTL_ON]
    rung = ladder.run_in_subprocess(argv)["rungs"][0]
    return {"us_per_row": rung["median_us_per_row"], "rows_per_second": rung["median_rows_per_second"]}


def quartiles(values: list[float]) -> tuple[float, float]:
    q = statistics.quantiles(values, n=4, method="inclusive")
    return q[0], q[2]


def measure(out: Path, pairs: int = PAIRS) -> list[dict]:
    out.mkdir(parents=True, exist_ok=True)
    results = []
    for workload in COST_WORKLOADS:
        runs = []
        for i in range(pairs):
            off = one_run(workload, False, out)
            on = one_run(workload, True, out)
            runs.append({"off": off, "on": on})
            print(f"ttl cost {workload:15s} pair {i + 1}: state time {on['us_per_row'] / off['us_per_row']:.3f}x, "
                  f"rows/s {on['rows_per_second'] / off['rows_per_second']:.3f}x", flush=True)
        results.append({"workload": workload, "measured": time.strftime("%Y-%m-%d"), "size": SIZE,
                        "steady": STEADY, "pairs": runs})
    return results


def summary(result: dict) -> dict:
    """Per figure: the pairs' ratios (TTL on over off), their median, quartiles and extremes."""
    out = {}
    for figure in ("us_per_row", "rows_per_second"):
        ratios = [p["on"][figure] / p["off"][figure] for p in result["pairs"]]
        low, high = quartiles(ratios)
        out[figure] = {"ratios": ratios, "median": statistics.median(ratios), "q1": low, "q3": high,
                       "min": min(ratios), "max": max(ratios)}
    return out


def report(results: list[dict]) -> list[str]:
    if not results:
        return []
    first = results[0]
    lines = [
        "## TTL's cost when nothing expires",
        "",
        f"Measured {first['measured']}. tests/bench/ttl_cost.py: {len(first['pairs'])} interleaved pairs per workload "
        f"of the same query on ttlstore, TTL off then TTL 1 day (nothing expires), every run a fresh JVM "
        f"(tests/bench/ladder.py: local[2], 2 shuffle partitions, {first['size']:,} keys per store, "
        f"{first['steady']} steady batches of 200,000 rows whose keys are all stored). Per run: the state "
        "operator's time per row and the query's rows/s, medians of the steady batches. Per pair: TTL on over "
        "TTL off. Cost: the median pair; spread: the interquartile range of the pairs and, in brackets, the "
        "lowest and highest pair.",
        "",
        "| workload | state time per row, TTL on / off | cost | query rows/s, TTL on / off | cost |",
        "|---|---|---|---|---|",
    ]
    for r in results:
        s = summary(r)
        t, q = s["us_per_row"], s["rows_per_second"]
        lines.append(
            f"| {r['workload']} | {t['median']:.3f}x, IQR {t['q1']:.3f}-{t['q3']:.3f} [{t['min']:.3f}-{t['max']:.3f}] "
            f"| {t['median'] - 1:+.1%} | {q['median']:.3f}x, IQR {q['q1']:.3f}-{q['q3']:.3f} "
            f"[{q['min']:.3f}-{q['max']:.3f}] | {1 - q['median']:+.1%} |")
    return lines + [""]
