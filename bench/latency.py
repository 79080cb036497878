"""Commit latency and the first batch after a restart, for stores of 1M keys (`make bench`).

One aggregation (count per key, update mode) per provider on 2 shuffle partitions: batches of
ROWS_PER_BATCH new keys until each store holds KEYS_PER_STORE keys, then STEADY batches that update
keys already stored. The first JVM stops there; a second JVM (new local directories, so every store
is rebuilt from the checkpoint: snapshot download and changelog replay) restarts the query on the
same checkpoint and runs AFTER_RESTART batches.

Figures: commit time per store (`commitTimeMs` over the partitions) of the steady batches, p50 and
p99; the first batch after the restart (`triggerExecution`) against the median of the batches that
follow it, which pay no load.

Run as a script with a phase (`build` or `restart`), it prints one line `RESULT {json}`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import ladder

KEYS_PER_STORE = 1_000_000
PARTITIONS = 2
ROWS_PER_BATCH = 50_000
STEADY = 40
AFTER_RESTART = 6
LATENCY_PROVIDERS = ("rocksdb", "rocksdb-changelog", "rocksdb-changelog-v2", "ttlstore", "ttlstore-ttl", "ttlstore-v2")


def batches() -> list[tuple[str, int, int]]:
    return ladder.schedule([KEYS_PER_STORE], PARTITIONS, ROWS_PER_BATCH, STEADY + AFTER_RESTART + 2)


def run(args: argparse.Namespace) -> dict:
    from pyspark.sql import SparkSession

    import ttlstore

    plan = batches()
    build_batches = len(plan) - AFTER_RESTART - 2
    builder = (
        SparkSession.builder.master("local[2]").appName(f"latency-{args.phase}")
        .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", "4g").config("spark.sql.shuffle.partitions", str(PARTITIONS))
        .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={ladder.ROOT / 'conf' / 'log4j2.properties'}")
    )
    for setting in args.conf:
        key, _, value = setting.partition("=")
        builder = builder.config(key, value)
    spark = ttlstore.configure(builder).config(ttlstore.settings.PROVIDER_CLASS_KEY, args.provider_class).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    source = (spark.readStream.format("rate-micro-batch").option("rowsPerBatch", ROWS_PER_BATCH)
              .option("numPartitions", 2).load())
    counts = source.select(ladder.key_column(plan, ROWS_PER_BATCH).alias("key")).groupBy("key").count()
    query = (counts.writeStream.format("noop").outputMode("update").option("checkpointLocation", args.checkpoint)
             .trigger(processingTime="0 seconds").start())
    wanted = build_batches if args.phase == "build" else AFTER_RESTART
    try:
        while len([p for p in query.recentProgress if p["numInputRows"] > 0]) < wanted:
            if query.exception() is not None:
                raise RuntimeError(str(query.exception()))
            time.sleep(0.1)
    finally:
        query.stop()
        progress = [p for p in query.recentProgress if p["numInputRows"] > 0][:wanted]
        spark.stop()
    ops = [p["stateOperators"][0] for p in progress]
    return {"phase": args.phase, "batch_ms": [p["durationMs"]["triggerExecution"] for p in progress],
            "commit_ms_per_store": [o["commitTimeMs"] / PARTITIONS for o in ops],
            # The provider's own figures of the first batch (ttlstore: load time, changelogs replayed).
            "first_custom_metrics": ops[0].get("customMetrics", {}),
            "rows": ops[-1]["numRowsTotal"], "steady": STEADY}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def measure(providers: dict, chosen: list[str], out: Path) -> list[dict]:
    """Both phases per provider, each in its own process; returns the figures per provider."""
    import shutil
    import tempfile

    results = []
    for provider in [p for p in LATENCY_PROVIDERS if p in chosen]:
        _label, provider_class, extra = providers[provider]
        out.mkdir(parents=True, exist_ok=True)
        checkpoint = tempfile.mkdtemp(prefix="latency-", dir=out)
        common = [provider_class, "--checkpoint", checkpoint] + ladder.conf_args(extra)
        build = ladder.run_in_subprocess(["build", *common], script=__file__)
        restart = ladder.run_in_subprocess(["restart", *common], script=__file__)
        shutil.rmtree(checkpoint, ignore_errors=True)
        commits = build["commit_ms_per_store"][-STEADY:]
        after = restart["batch_ms"]
        results.append({
            "provider": provider, "measured": time.strftime("%Y-%m-%d"), "rows": build["rows"],
            "commit_p50_ms": percentile(commits, 0.5), "commit_p99_ms": percentile(commits, 0.99),
            "commit_ms": commits, "first_batch_after_restart_ms": after[0],
            "later_batches_median_ms": statistics.median(after[2:]), "restart_batch_ms": after,
            "steady_batch_median_ms": statistics.median(build["batch_ms"][-STEADY:]),
            "restart_custom_metrics": restart["first_custom_metrics"],
        })
        r = results[-1]
        print(f"latency {provider:18s} commit p50 {r['commit_p50_ms']:.0f} ms p99 {r['commit_p99_ms']:.0f} ms, "
              f"first batch after restart {after[0]} ms (later {r['later_batches_median_ms']:.0f} ms)", flush=True)
    return results


def report(results: list[dict], providers: dict) -> list[str]:
    if not results:
        return []
    lines = [
        "## Commit latency and restart",
        "",
        f"Measured {results[0]['measured']}. bench/latency.py: aggregation (count per key, update mode), local[2], "
        f"{PARTITIONS} shuffle partitions, {KEYS_PER_STORE:,} keys per store, then {STEADY} batches of "
        f"{ROWS_PER_BATCH:,} updates of existing keys. Commit: `commitTimeMs` per store of those batches. Restart: a new "
        "JVM on the same checkpoint (no local files, so each store downloads its snapshot and replays changelogs); "
        "its first batch against the median of the batches after the second.",
        "",
        "| provider | commit p50 | commit p99 | steady batch | first batch after restart | later batches |",
        "|---|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(f"| {providers[r['provider']][0]} | {r['commit_p50_ms']:.0f} ms | {r['commit_p99_ms']:.0f} ms | "
                     f"{r['steady_batch_median_ms']:.0f} ms | {r['first_batch_after_restart_ms']:,} ms | "
                     f"{r['later_batches_median_ms']:.0f} ms |")
    lines.append("")
    by = {r["provider"]: r for r in results}
    if {"ttlstore", "ttlstore-v2", "rocksdb-changelog-v2"} <= by.keys():
        v1, v2, spark = by["ttlstore"], by["ttlstore-v2"], by["rocksdb-changelog-v2"]
        restart = lambda r: r["first_batch_after_restart_ms"] / 1000  # noqa: E731
        lines += [
            "Checkpoint format v2 (`checkpointFormatVersion=2`: checkpoint ids, a lineage in every changelog) against "
            f"format v1 on ttlstore: commit p50 {v2['commit_p50_ms']:.0f} against {v1['commit_p50_ms']:.0f} ms, p99 "
            f"{v2['commit_p99_ms']:.0f} against {v1['commit_p99_ms']:.0f} ms, first batch after a restart "
            f"{restart(v2):.1f} against {restart(v1):.1f} s (one run each; runs of one provider differ by 10-15%). "
            "Against Spark's RocksDB provider in format v2: commit p50 "
            f"{v2['commit_p50_ms'] / spark['commit_p50_ms']:.2f}x, p99 {v2['commit_p99_ms'] / spark['commit_p99_ms']:.2f}x, "
            f"first batch after a restart {restart(v2) / restart(spark):.2f}x.",
            "",
        ]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("phase", choices=("build", "restart"))
    parser.add_argument("provider_class")
    parser.add_argument("--checkpoint", required=True)
    parser.add_argument("--conf", action="append", default=[], help="KEY=VALUE, a Spark setting")
    print("RESULT " + json.dumps(run(parser.parse_args())), flush=True)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--all":
        sys.path.insert(0, str(Path(__file__).parent))
        from bench_providers import OUT, PROVIDERS

        for line in report(measure(PROVIDERS, list(LATENCY_PROVIDERS), OUT / "latency"), PROVIDERS):
            print(line)
    else:
        main()
