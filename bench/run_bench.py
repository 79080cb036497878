"""`make bench`: the same streaming workloads on Spark's providers and on ttlstore, in one run.

Workloads (local[2], `rate-micro-batch` source, exactly ROWS_PER_BATCH rows per micro-batch):
- aggregation: count per key over AGG_KEYS distinct keys (update mode, no watermark);
- dropDuplicates: every row a new key (BATCHES x ROWS_PER_BATCH distinct keys);
- churn: dropDuplicates with every row a new key, over more, smaller batches; ttlstore with TTL
  keeps only the keys of the last CHURN_TTL while Spark's providers keep every key. ttlstore with
  TTL runs twice: with the native compaction filter (the default) and with the JVM sweep only;
  the table compares the state's disk bytes (local SST files and checkpoint);
- ladder: per workload (dropDuplicates, aggregation, flatMapGroupsWithState), the steady per-row cost
  as each provider's state grows from 100k to 4M keys per store (bench/ladders.py), with a plot;
- memory: 200 stores in one executor against a memory limit, bounded and not (bench/bounded_memory.py);
- latency: commit p50/p99 and the first batch after a restart, 1M keys per store (bench/latency.py);
- executorloss: recovery from a killed executor on local-cluster (bench/executor_loss.py);
- repartition: offline repartition of 1M keys, 4 -> 8 partitions, against Spark's own (bench/repartition_time.py);
- ttlcost: TTL on (nothing expiring) against TTL off, the same query twice in one JVM fed batch by
  batch in turn, over several JVMs, with the pairs' spread (bench/ttl_cost.py);
- writepath: aggregation, dropDuplicates and a mixed workload on all five providers, interleaved,
  against a stateless ceiling, at 2 and 8 shuffle partitions (bench/write_path.py).

`make bench` runs the headline alone, the write path at 2 shuffle partitions, into docs/benchmarks.md:
what a change is measured by while it is being made. `make bench-sweep` runs the rest (churn, memory,
latency, executor loss, repartition, TTL's cost, the write path at 8 partitions) into
docs/benchmarks-sweep.md, with the store-level figures it writes first; `make bench-ladder` the ladders
into docs/ladders.md. aggregation and dropDuplicates alone stay for `make bench-line`. Each page comes
whole from one run, dated, with the commit measured, and shows only what that run measured.

ttlstore runs on aggregation and dropDuplicates with TTL off and with TTL on but nothing expiring
(1 day), REPEATS times each, interleaved; the table shows the median run, since the difference
measured (TTL's cost) is smaller than the spread between two runs of one provider. Each (workload,
provider) runs in a fresh SparkSession (a new JVM), so no provider inherits another's warm caches. Figures come from Spark's own progress reports.
Results go to docs/benchmarks.md as ratios against Spark's RocksDB provider with default settings.
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

import bounded_memory
import executor_loss
import ladders
import latency
import pyspark
import repartition_time
import ttl_cost
import write_path
from bench_providers import DEV_LINE, LINE, ON_REQUEST, OUT, PROVIDERS, ROOT

REPORT = ROOT / "docs" / ("benchmarks.md" if LINE == DEV_LINE else f"benchmarks-spark-{LINE}.md")

WORKLOADS = ("aggregation", "dropDuplicates", "churn", "ladder", "memory", "latency", "executorloss", "repartition",
             "ttlcost", "writepath")
#: `make bench`, the headline to measure a change by while it is being made (under half an hour here):
#: the write path at 2 shuffle partitions against Spark's providers.
HEADLINE_WORKLOADS = ("writepath",)
HEADLINE_WRITE_PATH_PARTITIONS = (2,)
#: `make bench-sweep`: everything else the bench measures (its own page).
SWEEP_WORKLOADS = ("churn", "memory", "latency", "executorloss", "repartition", "ttlcost", "writepath")
SWEEP_WRITE_PATH_PARTITIONS = (8,)
SWEEP_REPORT = ROOT / "docs" / "benchmarks-sweep.md"
LADDER_REPORT = ROOT / "docs" / "ladders.md"
# Workloads with their own runner and result file (bench-output/<name>.json).
SEPARATE = ("ladder", "memory", "latency", "executorloss", "repartition", "ttlcost", "writepath")
CHURN_PROVIDERS = ("hdfs", "rocksdb", "ttlstore", "ttlstore-ttl", "ttlstore-sweep")
CHURN_ONLY = ("ttlstore-sweep",)
LATENCY_ONLY = ("rocksdb-changelog-v2", "ttlstore-v2")
# Churn runs with maintenance every 5 s for every provider (Spark's default is 60 s, longer than a
# run): maintenance uploads snapshots, and ttlstore compacts a store whose rows mostly expired.
CHURN_SETTINGS = {"spark.sql.streaming.stateStore.maintenanceInterval": "5s"}
REPEATED = ("ttlstore", "ttlstore-ttl")


def paired_ratios(results: list[dict], workload: str) -> list[float]:
    """TTL-on throughput over the TTL-off run just before it, for each interleaved pair (robust to drift)."""
    runs = [r for r in results if r["workload"] == workload and r["provider"] in REPEATED]
    return [on["rows_per_second"] / off["rows_per_second"]
            for off, on in zip(runs[::2], runs[1::2], strict=False)
            if off["provider"] == "ttlstore" and on["provider"] == "ttlstore-ttl"]


def medians(results: list[dict]) -> list[dict]:
    """One result per (workload, provider): the run with the median throughput, noting the spread."""
    groups: dict[tuple[str, str], list[dict]] = {}
    for r in results:
        groups.setdefault((r["workload"], r["provider"]), []).append(r)
    chosen = []
    for runs in groups.values():
        ordered = sorted(runs, key=lambda r: r["rows_per_second"])
        median = dict(ordered[len(ordered) // 2])
        median["runs"] = [r["rows_per_second"] for r in runs]
        chosen.append(median)
    return chosen


def settings_for(workload: str, provider: str, churn_ttl: str) -> dict[str, str]:
    """The provider's extra settings; in the churn workload ttlstore's TTL is short enough to expire."""
    extra = dict(PROVIDERS[provider][2])
    if workload == "churn":
        extra.update(CHURN_SETTINGS)
        if provider in ("ttlstore-ttl", "ttlstore-sweep"):
            extra["spark.sql.streaming.stateStore.ttlstore.ttl"] = churn_ttl
    return extra


def run_one(workload: str, provider: str, batches: int, rows_per_batch: int, agg_keys: int, partitions: int,
            churn_ttl: str) -> dict:
    """Runs one workload on one provider in this process and returns its figures."""
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F

    import ttlstore

    _label, provider_class, _extra = PROVIDERS[provider]
    extra = settings_for(workload, provider, churn_ttl)
    workdir = OUT / f"{workload}-{provider}"
    subprocess.run(["rm", "-rf", str(workdir)], check=True)
    builder = (
        SparkSession.builder.master("local[2]")
        .config("spark.sql.streaming.stateStore.maintenanceInterval",
                extra.pop("spark.sql.streaming.stateStore.maintenanceInterval", "60s"))
        .appName(f"bench-{workload}-{provider}")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.memory", "6g")
        .config("spark.sql.shuffle.partitions", str(partitions))
        .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile={ROOT / 'conf' / 'log4j2.properties'}")
    )
    spark = ttlstore.configure(builder).config(ttlstore.settings.PROVIDER_CLASS_KEY, provider_class).getOrCreate()
    for key, value in extra.items():
        spark.conf.set(key, value)
    spark.sparkContext.setLogLevel("ERROR")
    source = spark.readStream.format("rate-micro-batch").option("rowsPerBatch", rows_per_batch).option("numPartitions", 2).load()
    if workload == "aggregation":
        query_df = source.select((F.col("value") % agg_keys).alias("key")).groupBy("key").count()
        mode = "update"
    else:  # dropDuplicates and churn: every row a new key
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
    customs = [p["stateOperators"][0].get("customMetrics", {}) for p in progress]
    return {
        "rows_series": [p["stateOperators"][0]["numRowsTotal"] for p in progress],
        "expired_removed": sum(
            c.get(k, 0) for c in customs for k in (
                "ttlstoreExpiredRemovedOnAccess", "ttlstoreExpiredRemovedBySweep", "ttlstoreExpiredRemovedBeforeSnapshot")),
        "sweep_examined": sum(c.get("ttlstoreSweepRowsExamined", 0) for c in customs),
        "filter_removed": sum(c.get("ttlstoreExpiredRemovedByFilter", 0) for c in customs),
        "sst_series": [c.get("ttlstoreSstBytes", 0) for c in customs],
        "batch_seconds": statistics.median(durations) / 1000.0,
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


def throughput(result: dict) -> str:
    """The median run's rows/s and, over repeated runs, the spread: the largest distance of a run from it."""
    runs = result.get("runs", [])
    median = result["rows_per_second"]
    if len(runs) < 2 or not median:
        return f"{median:,.0f}"
    return f"{median:,.0f} ±{max(abs(r - median) for r in runs) / median:.0%}"


def measured_commit() -> str:
    """The commit measured and, where the working tree differs from it, the files that differ."""
    def git(*argv: str) -> str:
        return subprocess.run(["git", *argv], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    head = git("rev-parse", "--short", "HEAD") or "unknown"
    changed = git("diff", "HEAD", "--name-only").split()
    return head + (f" with local changes to {', '.join(changed)}" if changed else "")


def page_header(title: str, target: str) -> list[str]:
    """A page's title, what writes it, and when and what it measured."""
    return [
        f"# {title}",
        "",
        f"<!-- Written by `{target}` (bench/run_bench.py); rerun it to refresh. -->",
        "",
        f"Measured {time.strftime('%Y-%m-%d')} with commit {measured_commit()} on {platform.machine()}, "
        f"{os.cpu_count()} cores, Spark {pyspark.__version__}, every run a fresh JVM, figures from Spark's progress "
        "reports. Every table on this page comes from that one run.",
        "",
    ]


def write_report(results: list[dict], args: argparse.Namespace, pairs: dict[str, list[float]]) -> str:
    if list(args.workloads) == ["ladder"]:
        return "\n".join(page_header("Size ladders", "make bench-ladder") + ladder_report(args)) + "\n"
    target = ("make bench-sweep" if args.sweep else "make bench") if LINE == DEV_LINE else f"make bench-line BENCH_LINE={LINE}"
    others = [f"[{p.stem.removeprefix('benchmarks-spark-')}]({p.name})"
              for p in sorted((ROOT / "docs").glob("benchmarks-spark-*.md"))] if LINE == DEV_LINE else []
    title = "Benchmarks: the sweep" if args.sweep else "Benchmarks"
    lines = [
        *page_header(title + ("" if LINE == DEV_LINE else f" on Spark {LINE}"), target),
        *([("The headline, the write path at 2 shuffle partitions: [benchmarks.md](benchmarks.md) (`make bench`)."
            if args.sweep else "Everything else `make bench-sweep` measures: [benchmarks-sweep.md](benchmarks-sweep.md)."),
           "",
           f"The other Spark lines: {', '.join(others)} (`make bench-line`). The size ladders, as the state grows "
           "to 4M keys per store: [ladders.md](ladders.md) (`make bench-ladder`).", ""] if LINE == DEV_LINE else []),
    ]
    if any(r["workload"] in ("aggregation", "dropDuplicates") for r in results):
        lines += [
            f"aggregation and dropDuplicates: local[2], {args.partitions} shuffle partitions, {args.batches} "
            f"micro-batches of {args.rows_per_batch:,} rows each; aggregation over {args.agg_keys:,} distinct keys, "
            f"dropDuplicates over {args.batches * args.rows_per_batch:,} distinct keys. A provider run more than once "
            "shows its median run, with the spread (the largest distance of a run from the median) beside its rows/s. "
            "Ratios are against Spark's RocksDB provider with default settings (throughput: higher is better; "
            "latency, memory, bytes: lower is better).",
            "",
        ]
    lines += separate_report("writepath", lambda results: write_path.report(results, PROVIDERS), args)
    for workload in ("aggregation", "dropDuplicates"):
        rows = {r["provider"]: r for r in results if r["workload"] == workload}
        base = rows.get("rocksdb")
        if not base:
            continue
        lines += [
            f"## {workload}",
            "",
            "| provider | rows/s (± spread) | vs RocksDB | commit p50 ms | commit p95 ms | peak state memory MiB | checkpoint MiB | state rows |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for key in PROVIDERS:
            r = rows.get(key)
            if r is None:
                continue
            lines.append(
                f"| {PROVIDERS[key][0]} | {throughput(r)} | {ratio(r['rows_per_second'], base['rows_per_second'])} "
                f"| {r['commit_p50_ms']:.0f} | {r['commit_p95_ms']:.0f} | {r['peak_state_memory_bytes'] / 2**20:,.1f} "
                f"| {r['checkpoint_bytes'] / 2**20:,.1f} | {r['state_rows']:,} |"
            )
        ours = rows.get("ttlstore")
        if ours:
            def ratio_to(provider: str, ours: dict = ours, rows: dict = rows) -> str:
                return ratio(ours["rows_per_second"], rows[provider]["rows_per_second"]) if provider in rows else "n/a"

            lines += [
                "",
                f"ttlstore throughput: {ratio(ours['rows_per_second'], base['rows_per_second'])} of the RocksDB provider "
                f"(default), {ratio_to('rocksdb-changelog')} "
                f"of the RocksDB provider with changelog checkpointing, "
                f"{ratio_to('hdfs')} of the HDFS provider.",
            ]
        ratios = pairs.get(workload, [])
        if ratios:
            paired = statistics.median(ratios)
            lines += [
                "",
                f"TTL on (1 day, nothing expiring) vs TTL off: {paired:.2f}x of the throughput, {1 - paired:+.1%} cost "
                f"(target at most 5%): the median of {len(ratios)} interleaved pairs, each TTL-on run against the "
                f"TTL-off run just before it (pairs: {', '.join(f'{x:.2f}x' for x in ratios)}). Two runs of one "
                "provider differ by up to 10% on this machine, so single runs cannot show a 5% difference.",
            ]
        lines.append("")
    lines += ladder_report(args) if "ladder" in args.workloads else []
    lines += separate_report("memory", bounded_memory.report, args)
    lines += separate_report("latency", lambda results: latency.report(results, PROVIDERS), args)
    lines += separate_report("executorloss", lambda results: executor_loss.report(results, PROVIDERS), args)
    lines += separate_report("repartition", lambda results: repartition_time.report(results, PROVIDERS), args)
    lines += separate_report("ttlcost", ttl_cost.report, args)
    # The store-level benches run before the sweep (make bench-sweep), into bench-output/.
    lines += overhead_report() if args.sweep else []
    lines += churn_report(results, args)
    lines += disk_churn_report() + expiry_cpu_report() + adoption_report() if args.sweep else []
    lines += [
        "Memory is what each provider reports as `memoryUsedBytes`: the HDFS provider estimates its",
        "in-memory maps; Spark's RocksDB provider reports memtables and table readers (its block cache",
        "is not counted unless its memory is bounded); ttlstore reports table readers and each store's",
        "share of the executor's one block cache, to which its memtables are charged (bounded, the",
        "default). Checkpoint bytes are all files below `state/` at the end.",
        "",
    ]
    return "\n".join(lines)


def ladder_report(args: argparse.Namespace) -> list[str]:
    """The size ladders (bench/ladders.py), from bench-output/ladder.json; also draws docs/ladder.png."""
    path = OUT / "ladder.json"
    if not path.is_file():
        return []
    results = json.loads(path.read_text())
    ladders.plot(results, PROVIDERS, Path(args.report).parent / "ladder.png")
    return ladders.report(results, PROVIDERS, results[0]["partitions"])


def separate_report(name: str, report, args: argparse.Namespace) -> list[str]:  # type: ignore[no-untyped-def]
    """A section from bench-output/<name>.json, if this run ran that workload."""
    path = OUT / f"{name}.json"
    return report(json.loads(path.read_text())) if name in args.workloads and path.is_file() else []


def overhead_report() -> list[str]:
    """The store-level TTL overhead measured by io.ttlstore.bench.TtlOverheadBench (`make bench` runs it first)."""
    path = OUT / "ttl-overhead.json"
    if not path.is_file():
        return []
    figures = json.loads(path.read_text())
    lines = [
        "## TTL overhead at the store level",
        "",
        "The same operations on the provider alone, without Spark around it (io.ttlstore.bench.TtlOverheadBench): "
        "8 versions of 100,000 operations, aggregation's pattern (read store `get`, write store `put`, 300,000 keys) "
        "and deduplication's (`keyExists`, `put` of a new key); TTL off against TTL 1 day with nothing expiring, "
        f"{len(next(iter(figures.values()))['off_ops_per_s'])} interleaved pairs after a warm-up pair.",
        "",
        "| pattern | TTL on / TTL off (median of pairs) | cost | ops/s TTL off (median) | ops/s TTL on (median) |",
        "|---|---|---|---|---|",
    ]
    for pattern, f in figures.items():
        lines.append(
            f"| {pattern} | {f['median_ratio']:.3f}x | {1 - f['median_ratio']:+.1%} "
            f"| {statistics.median(f['off_ops_per_s']):,.0f} | {statistics.median(f['on_ops_per_s']):,.0f} |"
        )
    return lines + [""]


def churn_report(results: list[dict], args: argparse.Namespace) -> list[str]:
    rows = {r["provider"]: r for r in results if r["workload"] == "churn"}
    if not rows:
        return []
    n = args.churn_batches
    marks = sorted({max(1, n // 3), max(1, 2 * n // 3), n})
    lines = [
        "## churn",
        "",
        f"dropDuplicates with every row a new key, {n} micro-batches of {args.churn_rows_per_batch:,} rows; "
        f"ttlstore with TTL {args.churn_ttl} (processing time), with the native compaction filter (the default) "
        "and with the JVM sweep only. Spark's providers keep every key ever seen; with TTL the state holds the "
        "keys of the last TTL and stays flat. Maintenance runs every 5 s for every provider.",
        "",
        "| provider | " + " | ".join(f"state rows after batch {m}" for m in marks)
        + " | local SST MiB at end | checkpoint MiB | rows/s | median batch s | removed by sweep/access | removed by filter |",
        "|---|" + "---|" * (len(marks) + 6),
    ]
    for key in CHURN_PROVIDERS:
        r = rows.get(key)
        if r is None:
            continue
        label = PROVIDERS[key][0] + (f" {args.churn_ttl}" if key in ("ttlstore-ttl", "ttlstore-sweep") else "")
        series = r["rows_series"]
        sst = f"{r['sst_series'][-1] / 2**20:,.1f}" if key.startswith("ttlstore") and "sst_series" in r else "n/a"
        lines.append(
            f"| {label} | " + " | ".join(f"{series[m - 1]:,}" for m in marks)
            + f" | {sst} | {r['checkpoint_bytes'] / 2**20:,.1f} | {r['rows_per_second']:,.0f} | {r['batch_seconds']:.1f} "
            f"| {r['expired_removed']:,} | {r.get('filter_removed', 0):,} |"
        )
    with_ttl, sweep, rocksdb = (rows.get(k) for k in ("ttlstore-ttl", "ttlstore-sweep", "rocksdb"))
    if with_ttl and rocksdb:
        third = with_ttl["rows_series"][n // 3:]
        lines += [
            "",
            f"Steady state with TTL: {min(third):,} to {max(third):,} rows over the last two thirds of the run, "
            f"against {rocksdb['rows_series'][-1]:,} on the RocksDB provider at the end; checkpoint "
            f"{ratio(with_ttl['checkpoint_bytes'], rocksdb['checkpoint_bytes'])} of the RocksDB provider's.",
        ]
    if with_ttl and sweep and "sst_series" in with_ttl and "sst_series" in sweep:
        f_sst, s_sst = with_ttl["sst_series"][n // 3:], sweep["sst_series"][n // 3:]
        lines += [
            "",
            f"Local SST bytes over the last two thirds (median): {statistics.median(f_sst) / 2**20:,.1f} MiB with the "
            f"native filter, {statistics.median(s_sst) / 2**20:,.1f} MiB with the JVM sweep only "
            f"({ratio(statistics.median(f_sst), statistics.median(s_sst))}).",
        ]
        lines += [
            "",
            "Local SST bytes leave out the memtables (RAM, not disk), which hold a large part of these small "
            "stores, so they cannot be set against the live rows here; the store-level churn below can.",
        ]
    return lines + [""]


def disk_churn_report() -> list[str]:
    """Local disk vs live data under churn, at the store level (io.ttlstore.bench.DiskChurnBench)."""
    path = OUT / "disk-churn.json"
    if not path.is_file():
        return []
    f = json.loads(path.read_text())
    return [
        "## Disk under churn vs live data (store level)",
        "",
        f"One store, {f['versions']} versions of {f['rows_per_version']:,} new keys, TTL {f['ttl_versions']} versions "
        "(so about "
        f"{f['live_rows']:,} rows alive), maintenance after every commit, a snapshot every 10 versions "
        "(io.ttlstore.bench.DiskChurnBench). Live data: the same store compacted in full at the end, which keeps "
        f"exactly the live rows: {f['live_bytes'] / 2**20:,.1f} MiB of SST. Steady state: the median local SST "
        "bytes over the last two thirds of the versions.",
        "",
        "| path | steady SST MiB | vs live data (target at most 1.5x) |",
        "|---|---|---|",
        f"| native filter | {f['filter']['steady_sst_bytes'] / 2**20:,.1f} | {f['filter']['vs_live']:.2f}x |",
        f"| JVM sweep only | {f['sweep']['steady_sst_bytes'] / 2**20:,.1f} | {f['sweep']['vs_live']:.2f}x |",
        "",
    ]


def expiry_cpu_report() -> list[str]:
    """CPU per expired row, JVM sweep vs native filter (io.ttlstore.bench.ExpiryCpuBench, run by `make bench`)."""
    path = OUT / "expiry-cpu.json"
    if not path.is_file():
        return []
    f = json.loads(path.read_text())
    sweep, native = f["sweep"], f["filter"]
    return [
        "## CPU per expired row: native filter vs JVM sweep",
        "",
        f"One store with {sweep['rows_removed']:,} rows that all expire, taken off the disk by each path "
        "(io.ttlstore.bench.ExpiryCpuBench; process CPU, median of 3 alternating rounds after a warm-up): the sweep "
        "scans and deletes every row in the commit, then a full compaction drops rows and tombstones; with the "
        "filter the commit only uncounts them and the same compaction drops them.",
        "",
        "| path | commit ns/row | compaction ns/row | total ns/row |",
        "|---|---|---|---|",
        f"| JVM sweep | {sweep['commit_ns_per_row']:,.0f} | {sweep['compaction_ns_per_row']:,.0f} | {sweep['total_ns_per_row']:,.0f} |",
        f"| native filter | {native['commit_ns_per_row']:,.1f} | {native['compaction_ns_per_row']:,.0f} | {native['total_ns_per_row']:,.0f} |",
        "",
        f"The filter takes {sweep['total_ns_per_row'] / native['total_ns_per_row']:.1f}x less CPU per expired row "
        f"in all, and {sweep['commit_ns_per_row'] / max(native['commit_ns_per_row'], 0.01):,.0f}x less in the "
        "batch's own commit (target: at least 10x).",
        "",
    ]


def adoption_report() -> list[str]:
    """Adopting Spark's state after `ttlstore migrate` (io.ttlstore.bench.AdoptionBench, run by `make bench`)."""
    path = OUT / "adoption.json"
    if not path.is_file():
        return []
    f = json.loads(path.read_text())
    rows = []
    for label, name in (("rocksdb", "RocksDB provider"), ("rocksdb_changelog", "RocksDB provider + changelog"),
                        ("hdfs", "HDFS provider")):
        r = f[label]
        rows.append(
            f"| {name} | {r['state_bytes'] / 2**20:,.1f} | {r['spark_normal_batch_ms']:,.0f} | "
            f"{r['spark_first_batch_after_restart_ms']:,.0f} | {r['first_batch_ms']:,.0f} | {r['normal_batch_ms']:,.0f} | "
            f"{r['first_batch_ms'] / r['normal_batch_ms']:.1f}x | {r['bytes_written_by_first_batch'] / 2**10:,.0f} KiB "
            f"({100 * r['written_share']:.1f}%) |")
    keys = f["rocksdb"]["keys"]
    return [
        "## Adopting a store after `ttlstore migrate`",
        "",
        f"One store of {keys:,} keys written by each of Spark's providers, then adopted by ttlstore as the first load "
        "after a migration does (io.ttlstore.bench.AdoptionBench). A batch is "
        f"{f['batch_ops']:,} reads and updates of existing keys. The first batch on ttlstore includes the adoption: "
        "Spark's files are read and their rows put into the local legacy column family. Bytes written: everything "
        "the first batch added below the checkpoint, against the size of Spark's state (target: under 5% for the "
        "RocksDB provider).",
        "",
        "| adopted from | Spark's state MiB | Spark normal batch ms | Spark first batch after restart ms | "
        "ttlstore first batch ms | ttlstore normal batch ms | first / normal | bytes written by the first batch |",
        "|---|---|---|---|---|---|---|---|",
        *rows,
        "",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batches", type=int, default=10)
    parser.add_argument("--rows-per-batch", type=int, default=200_000)
    parser.add_argument("--agg-keys", type=int, default=1_000_000)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3, help="runs of ttlstore with TTL off and on, interleaved")
    parser.add_argument("--repeated", nargs="*", default=list(REPEATED),
                        help="the providers run --repeats times, interleaved (the others run once, first)")
    parser.add_argument("--churn-batches", type=int, default=45)
    parser.add_argument("--churn-rows-per-batch", type=int, default=50_000)
    parser.add_argument("--churn-ttl", default="8 seconds")
    parser.add_argument("--workloads", nargs="*", choices=WORKLOADS,
                        help=f"default: {' '.join(HEADLINE_WORKLOADS)} (with --sweep: {' '.join(SWEEP_WORKLOADS)})")
    parser.add_argument("--sweep", action="store_true",
                        help=f"everything but the headline, into {SWEEP_REPORT.relative_to(ROOT)} (make bench-sweep)")
    parser.add_argument("--write-path-partitions", nargs="*", type=int,
                        help=f"default: {HEADLINE_WRITE_PATH_PARTITIONS} (with --sweep: {SWEEP_WRITE_PATH_PARTITIONS})")
    parser.add_argument("--write-path-repeats", type=int, default=write_path.REPEATS)
    parser.add_argument("--ladder-workloads", nargs="*", default=list(ladders.LADDER_SIZES))
    parser.add_argument("--ladder-partitions", type=int, default=2)
    parser.add_argument("--providers", nargs="*", default=[p for p in PROVIDERS if p not in ON_REQUEST])
    parser.add_argument("--one", nargs=2, metavar=("WORKLOAD", "PROVIDER"), help=argparse.SUPPRESS)
    parser.add_argument("--report", help=f"the page to write (default {REPORT.relative_to(ROOT)}; with --workloads "
                        f"ladder alone, {LADDER_REPORT.relative_to(ROOT)})")
    parser.add_argument("--report-only", action="store_true", help="rewrite the report from bench-output/results.json")
    parser.add_argument("--merge", action="store_true",
                        help="keep bench-output/results.json's results of the workloads not run now")
    args = parser.parse_args()
    args.workloads = args.workloads or list(SWEEP_WORKLOADS if args.sweep else HEADLINE_WORKLOADS)
    args.write_path_partitions = args.write_path_partitions or list(
        SWEEP_WRITE_PATH_PARTITIONS if args.sweep else HEADLINE_WRITE_PATH_PARTITIONS)
    sweep_report = SWEEP_REPORT if LINE == DEV_LINE else REPORT
    args.report = args.report or str(LADDER_REPORT if args.workloads == ["ladder"] else
                                     sweep_report if args.sweep else REPORT)

    if args.one:
        result = run_one(args.one[0], args.one[1], args.batches, args.rows_per_batch, args.agg_keys, args.partitions,
                         args.churn_ttl)
        print("RESULT " + json.dumps(result))
        return

    if args.report_only:
        results = json.loads((OUT / "results.json").read_text())
        pairs = {w: paired_ratios(results, w) for w in WORKLOADS}
        Path(args.report).write_text(write_report(medians(results), args, pairs))
        print(f"wrote {args.report}")
        return

    OUT.mkdir(parents=True, exist_ok=True)
    results = []
    if args.merge and (OUT / "results.json").is_file():
        results = [r for r in json.loads((OUT / "results.json").read_text()) if r["workload"] not in args.workloads]
    if "ladder" in args.workloads:
        ladder_results = ladders.run_ladders(PROVIDERS, args.ladder_workloads, args.providers, OUT, args.ladder_partitions)
        (OUT / "ladder.json").write_text(json.dumps(ladder_results, indent=2))
    if "memory" in args.workloads:
        (OUT / "memory.json").write_text(json.dumps(bounded_memory.run_all(PROVIDERS, OUT), indent=2))
    if "latency" in args.workloads:
        (OUT / "latency.json").write_text(json.dumps(latency.measure(PROVIDERS, args.providers, OUT / "latency"), indent=2))
    if "executorloss" in args.workloads:
        (OUT / "executorloss.json").write_text(
            json.dumps(executor_loss.measure(PROVIDERS, args.providers, OUT / "executorloss"), indent=2))
    if "repartition" in args.workloads:
        (OUT / "repartition.json").write_text(
            json.dumps(repartition_time.measure(PROVIDERS, args.providers, OUT / "repartition"), indent=2))
    if "writepath" in args.workloads:
        # The headline measures ttlstore as the goals do (TTL on) against the two bases, with the steady state.
        chosen = args.providers if args.sweep or LINE != DEV_LINE else [
            p for p in args.providers if p in write_path.HEADLINE_PROVIDERS]
        (OUT / "writepath.json").write_text(json.dumps(write_path.measure(
            PROVIDERS, chosen, OUT / "writepath", tuple(args.write_path_partitions), args.write_path_repeats,
            steady=not args.sweep), indent=2))
    if "ttlcost" in args.workloads:
        (OUT / "ttlcost.json").write_text(json.dumps(ttl_cost.measure(OUT / "ttlcost"), indent=2))
    for workload in (w for w in args.workloads if w not in SEPARATE):
        churn = workload == "churn"
        providers = [p for p in args.providers
                     if (p in CHURN_PROVIDERS if churn else p not in CHURN_ONLY) and p not in LATENCY_ONLY]
        repeated = [] if churn else [p for p in providers if p in args.repeated]
        order = [p for p in providers if p not in repeated] + repeated * args.repeats
        for provider in order:
            batches = args.churn_batches if churn else args.batches
            per_batch = args.churn_rows_per_batch if churn else args.rows_per_batch
            cmd = [sys.executable, __file__, "--one", workload, provider, "--batches", str(batches),
                   "--rows-per-batch", str(per_batch), "--agg-keys", str(args.agg_keys),
                   "--partitions", str(args.partitions), "--churn-ttl", args.churn_ttl]
            done = subprocess.run(cmd, capture_output=True, text=True)
            line = next((out for out in done.stdout.splitlines() if out.startswith("RESULT ")), None)
            if line is None:
                sys.stderr.write(done.stdout[-3000:] + done.stderr[-3000:])
                raise SystemExit(f"benchmark run {workload}/{provider} failed")
            result = json.loads(line[len("RESULT "):])
            results.append(result)
            print(f"{workload:15s} {PROVIDERS[provider][0]:30s} {result['rows_per_second']:>12,.0f} rows/s  "
                  f"commit p50 {result['commit_p50_ms']:>5.0f} ms  p95 {result['commit_p95_ms']:>5.0f} ms", flush=True)
    if any(w not in SEPARATE for w in args.workloads):
        (OUT / "results.json").write_text(json.dumps(results, indent=2))
    pairs = {w: paired_ratios(results, w) for w in WORKLOADS}
    report = write_report(medians(results), args, pairs)
    Path(args.report).write_text(report)
    print(f"\nwrote {args.report}")


if __name__ == "__main__":
    main()
