"""What TTL costs when nothing expires, as Spark drives it (`make bench`).

Two runs of one query in two JVMs differ by 10-15% on this machine, so fresh-JVM pairs cannot show
a 5% cost. Here both sides run in one JVM, batch by batch in turn: per workload (dropDuplicates
whose rows are all duplicates, aggregation updating existing keys), a session (a fresh JVM,
local[2], 2 shuffle partitions) starts the same query twice on ttlstore, one with TTL off and one
with TTL 1 day (nothing expires; the setting is the session's at each query's start, and each
query's checkpoint is checked to record it). A file source feeds them: each query's input folder
receives one file at a time, and the next file goes to a query only when the last batch is done,
so they never run at the same time. After a fill to SIZE keys per store, WARMUP + PAIRS steady
batches of 200,000 rows whose keys are all stored; each pair is the same batch's input on both
queries, taken in ABBA order (which query goes first alternates) so a drift in the machine's
speed falls on both. Per pair: TTL on over TTL off, for the state operator's time per row
(`allUpdatesTimeMs`) and the query's rows/s. The cost is the median pair over SESSIONS sessions
(the first query started alternates too); its spread: the 95% confidence interval of that median
(order statistics, no assumption on the distribution), the interquartile range of the pairs and
each session's median.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SIZE = 250_000
ROWS_PER_BATCH = 200_000
PARTITIONS = 2
WARMUP = 4
PAIRS = 30
SESSIONS = 3
COST_WORKLOADS = ("dropDuplicates", "aggregation")
TTL_KEY = "spark.sql.streaming.stateStore.ttlstore.ttl"
TTL_ON = "1 day"
PROVIDER_CLASS = "io.ttlstore.TtlStateStoreProvider"
SIDES = ("off", "on")


def steady_windows(count: int, total: int) -> list[int]:
    """The first key of each steady batch: a different window of the stored keys each batch."""
    return [(i * 7919 * ROWS_PER_BATCH + 12_345) % total for i in range(count)]


def session(workload: str, pairs: int, on_first: bool, workdir: Path) -> dict:
    """One JVM: the query with TTL off and with TTL on, fed in turn; per steady batch, both sides' figures."""
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    import ttlstore

    log_conf = f"-Dlog4j2.configurationFile={ROOT / 'conf' / 'log4j2.properties'}"
    builder = (
        SparkSession.builder.master("local[2]").appName(f"ttl-cost-{workload}")
        .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", "8g").config("spark.sql.shuffle.partitions", str(PARTITIONS))
        .config("spark.driver.extraJavaOptions", log_conf)
    )
    spark = ttlstore.configure(builder).config(ttlstore.settings.PROVIDER_CLASS_KEY, PROVIDER_CLASS).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    root = Path(tempfile.mkdtemp(prefix="ttl-cost-", dir=workdir))
    total = SIZE * PARTITIONS
    try:
        # Every batch's input, written before any query starts: a fill file, then the steady batches.
        staged = root / "staged"
        inputs = [(0, total)] + [(start, ROWS_PER_BATCH) for start in steady_windows(WARMUP + pairs, total)]
        files = []
        for n, (start, rows) in enumerate(inputs):
            out = staged / f"{n:04d}"
            (spark.range(0, rows, numPartitions=1).select(((F.col("id") + start) % total).alias("key"))
             .write.parquet(str(out)))
            files.append(next(out.glob("part-*.parquet")))
        queries = {}
        order = ("on", "off") if on_first else ("off", "on")
        for side in order:
            if side == "on":
                spark.conf.set(TTL_KEY, TTL_ON)
            else:
                spark.conf.unset(TTL_KEY)
            source = root / f"in-{side}"
            source.mkdir()
            keys = (spark.readStream.schema("key long").option("maxFilesPerTrigger", 1).parquet(str(source)))
            if workload == "dropDuplicates":
                df, mode = keys.dropDuplicates(["key"]), "append"
            else:
                df, mode = keys.groupBy("key").count(), "update"
            queries[side] = (df.writeStream.format("noop").outputMode(mode)
                             .option("checkpointLocation", str(root / f"checkpoint-{side}"))
                             .trigger(processingTime="0 seconds").start(), source)
        spark.conf.unset(TTL_KEY)
        seen: dict[str, set] = {side: set() for side in SIDES}

        def one_batch(side: str, n: int) -> dict:
            query, source = queries[side]
            shutil.copyfile(files[n], source / f".{n:04d}.parquet.tmp")
            os.rename(source / f".{n:04d}.parquet.tmp", source / f"{n:04d}.parquet")
            query.processAllAvailable()
            done = [p for p in query.recentProgress if p["numInputRows"] > 0 and p["batchId"] not in seen[side]]
            if len(done) != 1 or done[0]["numInputRows"] != inputs[n][1]:
                raise RuntimeError(f"{side}: expected one batch of {inputs[n][1]} rows, got {done}")
            seen[side].add(done[0]["batchId"])
            op = done[0]["stateOperators"][0]
            return {"us_per_row": 1000.0 * op["allUpdatesTimeMs"] / done[0]["numInputRows"],
                    "rows_per_second": done[0]["numInputRows"] * 1000.0 / done[0]["durationMs"]["triggerExecution"],
                    "state_rows": op["numRowsTotal"]}

        batches = []
        for n in range(len(inputs)):
            first = order if n % 2 == 0 else order[::-1]
            batch = {side: one_batch(side, n) for side in first}
            if n > WARMUP:
                batches.append({side: batch[side] for side in SIDES})
        for query, _source in queries.values():
            query.stop()
        ttls = {side: [t["ttlMs"] for op in ttlstore.inspect_checkpoint(spark, root / f"checkpoint-{side}", scan=False)
                       ["operators"] for s in op["stores"] for t in s["ttl"]] for side in SIDES}
        if any(ms > 0 for ms in ttls["off"]) or not ttls["on"] or any(ms <= 0 for ms in ttls["on"]):
            raise RuntimeError(f"the checkpoints do not record TTL off / on as set: {ttls}")
        rows = {side: batches[-1][side]["state_rows"] for side in SIDES}
        if rows != {"off": total, "on": total}:
            raise RuntimeError(f"expected {total} stored keys on both sides (nothing expires), got {rows}")
        return {"workload": workload, "on_first": on_first, "pairs": batches}
    finally:
        spark.stop()
        shutil.rmtree(root, ignore_errors=True)


def run_session(workload: str, pairs: int, on_first: bool, workdir: Path) -> dict:
    import ladder

    argv = ["--session", workload, "--pairs", str(pairs), "--workdir", str(workdir)] + (["--on-first"] if on_first else [])
    return ladder.run_in_subprocess(argv, timeout=1800, script=__file__)


def measure(out: Path, pairs: int = PAIRS, sessions: int = SESSIONS) -> list[dict]:
    out.mkdir(parents=True, exist_ok=True)
    results = []
    for workload in COST_WORKLOADS:
        runs = []
        for i in range(sessions):
            run = run_session(workload, pairs, on_first=i % 2 == 1, workdir=out)
            runs.append(run)
            s = summary([run])
            print(f"ttl cost {workload:15s} session {i + 1}: state time {s['us_per_row']['median']:.3f}x, "
                  f"rows/s {s['rows_per_second']['median']:.3f}x", flush=True)
        results.append({"workload": workload, "measured": time.strftime("%Y-%m-%d"), "size": SIZE,
                        "rows_per_batch": ROWS_PER_BATCH, "sessions": runs})
    return results


def median_interval(values: list[float]) -> tuple[float, float]:
    """A 95% confidence interval of the median: the order statistics the binomial(n, 1/2) puts 95% between."""
    xs = sorted(values)
    n = len(xs)
    k = max(0, math.floor(n / 2 - 0.98 * math.sqrt(n)))
    return xs[k], xs[min(n - 1, n - 1 - k)]


def summary(sessions: list[dict]) -> dict:
    """Per figure: the pairs' ratios (TTL on over off), their median, its interval, quartiles and session medians."""
    out = {}
    for figure in ("us_per_row", "rows_per_second"):
        per_session = [[p["on"][figure] / p["off"][figure] for p in s["pairs"]] for s in sessions]
        ratios = [r for rs in per_session for r in rs]
        q = statistics.quantiles(ratios, n=4, method="inclusive") if len(ratios) > 1 else [ratios[0]] * 3
        low, high = median_interval(ratios)
        out[figure] = {"pairs": len(ratios), "median": statistics.median(ratios), "ci_low": low, "ci_high": high,
                       "q1": q[0], "q3": q[2], "sessions": [statistics.median(rs) for rs in per_session]}
    return out


def report(results: list[dict]) -> list[str]:
    if not results or "sessions" not in results[0]:
        return []
    first = results[0]
    lines = [
        "## TTL's cost when nothing expires",
        "",
        f"Measured {first['measured']}. bench/ttl_cost.py: per workload, {len(first['sessions'])} sessions "
        "(fresh JVMs, local[2], 2 shuffle partitions), each running the same query on ttlstore twice, TTL off and "
        f"TTL 1 day (nothing expires), fed batch by batch in turn from files so they never run at once: a fill to "
        f"{first['size']:,} keys per store, then steady batches of {first['rows_per_batch']:,} rows whose keys are "
        "all stored, each given to both queries in ABBA order. Per pair (one batch on both): TTL on over TTL off, "
        "for the state operator's time per row (`allUpdatesTimeMs`) and the query's rows/s. Cost: the median pair; "
        "spread: its 95% confidence interval, the interquartile range of the pairs, and each session's median.",
        "",
        "| workload | pairs | state time per row, TTL on / off | cost (95% interval) | IQR | sessions "
        "| query rows/s, TTL on / off | cost (95% interval) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        s = summary(r["sessions"])
        t, q = s["us_per_row"], s["rows_per_second"]
        lines.append(
            f"| {r['workload']} | {t['pairs']} | {t['median']:.3f}x | {t['median'] - 1:+.1%} "
            f"({t['ci_low'] - 1:+.1%} to {t['ci_high'] - 1:+.1%}) | {t['q1']:.3f}-{t['q3']:.3f} "
            f"| {', '.join(f'{m:.3f}x' for m in t['sessions'])} | {q['median']:.3f}x "
            f"| {1 - q['median']:+.1%} ({1 - q['ci_high']:+.1%} to {1 - q['ci_low']:+.1%}) |")
    return lines + [""]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--session", choices=COST_WORKLOADS, help="run one session (in this process) and print RESULT")
    parser.add_argument("--pairs", type=int, default=PAIRS)
    parser.add_argument("--sessions", type=int, default=SESSIONS)
    parser.add_argument("--on-first", action="store_true")
    parser.add_argument("--workdir", default=str(ROOT / "bench-output" / "ttlcost"))
    args = parser.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    if args.session:
        print("RESULT " + json.dumps(session(args.session, args.pairs, args.on_first, Path(args.workdir))), flush=True)
        return
    results = measure(Path(args.workdir), args.pairs, args.sessions)
    (ROOT / "bench-output" / "ttlcost.json").write_text(json.dumps(results, indent=2))
    print("\n".join(report(results)))


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    main()
