"""Soak: a TTL'd deduplication and an aggregation with steady churn on local-cluster executors, sampled
until it is clear whether anything grows that should not.

    python tests/chaos/soak.py WORKDIR --provider ttlstore|rocksdb --batches N [--out F.json]

With ``--remote-mb``, ttlstore runs in remote mode (``remote.localCacheMB``): the SST files beyond that many
MiB per executor stay in the checkpoint (``make soak-remote``).

Two queries run side by side on Spark's ``local-cluster`` (``--executors`` JVMs of ``--executor-memory``
MiB), with Spark's default maintenance, fed by Spark's rate source (``--rate`` new keys a second, a micro-batch
every ``--trigger``), so new keys come in and old ones go out and the live set stays about ``rate x ttl``:

- ttlstore: ``dropDuplicates(value)`` and a count per ``value / 2``, both with a processing-time TTL of
  ``--ttl`` seconds;
- Spark's RocksDB provider (changelog checkpointing on, TTL off): the same live set bounded by
  watermarks (``dropDuplicatesWithinWatermark`` with half of ``--ttl`` as its delay, as it keeps a key
  for twice the delay; a count per 1-second window and key with ``--ttl`` less a second).

Every ``--sample`` seconds it samples each executor JVM (resident memory, threads and open file
descriptors from /proc; how much of the resident memory is heap pages, from /proc/PID/smaps inside the
heap's address range, and so how much lies outside the heap; what the JVM itself committed outside its heap,
from Native Memory Tracking, and so the native memory the JVM does not know of (RSS outside the heap less it);
heap after a full GC from ``jcmd`` every 10th sample), the state's memory as
the providers report it (``memoryUsedBytes``), the local SST bytes under the local directory, the
checkpoints' bytes and file count, and the latest batches' latency. The verdict per figure: over the
second half of the run, the least-squares slope times the half's length (the drift a trend adds
across it) must not rise beyond the figure's band (``BANDS``). It prints ``RESULT {json}``.

Other shapes (``--shape``) serve ``make soak-memory`` and ``make soak-container`` (docs/memory.md). With
``--drop-after``, only a tenth of the keys come in after that many seconds, and the result's ``fall_back`` holds
the native memory before and 100 batches after; on ``local-cluster``, its ``limit`` holds each executor's
highest RSS against its heap plus the overhead its log names, the limit a container would set.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import hooks  # noqa: E402
from cluster.executors import executors, memory_overheads_mib, spark_home  # noqa: E402
from pyspark.sql import DataFrame, SparkSession  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402

import ttlstore  # noqa: E402

ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
MiB = 1 << 20

#: Per figure: (allowed growth over the second half, as a share of its median, and at least this much), or
#: None for a figure that is shown but not judged.
BANDS: dict[str, tuple[float, float] | None] = {
    "rss_bytes": (0.10, 64 * MiB),
    "heap_rss_bytes": None,  # the heap's pages, touched as G1 first uses its regions: up to -Xmx, not a leak
    "off_heap_rss_bytes": (0.10, 64 * MiB),
    "jvm_non_heap_bytes": None,  # the JVM's own outside the heap (Native Memory Tracking), as committed
    "native_bytes": (0.10, 64 * MiB),
    "heap_after_gc_bytes": (0.25, 32 * MiB),
    "threads": (0.10, 8),
    "open_fds": (0.15, 16),
    "state_memory_bytes": (0.25, 16 * MiB),
    "local_sst_bytes": (0.50, 16 * MiB),
    "checkpoint_bytes": (0.50, 32 * MiB),
    "checkpoint_files": (0.25, 100),
    "batch_ms": (0.50, 200),
}


#: ttlstore's memory figures in the progress (docs/deploying.md, "Memory"), by the sample's name for them.
MEMORY_METRICS = {"memory_budget_bytes": "ttlstoreMemoryBudgetBytes", "memory_cache_bytes": "ttlstoreMemoryCacheBytes",
                  "memory_memtable_bytes": "ttlstoreMemoryMemtableBytes",
                  "memory_resident_bytes": "ttlstoreMemoryResidentBytes"}


#: The cache-churn shape's key space: with a 128-character digest a row, some 300 MiB of state per executor of two,
#: several times a default budget, read and rewritten all over every batch.
CHURN_KEYS = 2_000_000


def queries(spark: SparkSession, provider: str, rate: int, ttl_s: int,
            shape: str = "soak", drop_after_s: int = 0) -> dict[str, tuple[str, DataFrame]]:
    events = spark.readStream.format("rate").option("rowsPerSecond", rate).load()
    if drop_after_s:  # the rate source numbers its rows from 0 at `rate` a second: after that, a tenth of the keys
        events = events.where((F.col("value") < rate * drop_after_s) | (F.col("value") % 10 == 0))
    # On both providers alike, or Spark's RocksDB provider's stand-in for the TTL: dropDuplicatesWithinWatermark keeps a
    # key until its event time plus the delay falls behind the watermark (the latest event time less the delay), so
    # for twice the delay, the TTL's live set.
    watermarked = (events.withWatermark("timestamp", f"{ttl_s * 500} milliseconds")
                   .dropDuplicatesWithinWatermark(["value"]))
    if shape == "watermarked-dedup":
        return {"dedup": ("append", watermarked)}
    dedup = events.dropDuplicates(["value"]) if provider == "ttlstore" else watermarked
    if shape == "cache-churn":  # every batch updates keys all over a fixed key space of CHURN_KEYS wide rows
        churn = (events.groupBy((F.col("value") % CHURN_KEYS).alias("k"))
                 .agg(F.max(F.sha2(F.col("value").cast("string"), 512)).alias("digest")))
        return {"dedup": ("append", dedup), "churn": ("update", churn)}
    key = (F.col("value") / 2).cast("long").alias("k")
    # Without a TTL, a 1-second window's counts stay until the watermark passes the window's end, the delay plus a second.
    count = (events.groupBy(key).count() if provider == "ttlstore" else
             events.withWatermark("timestamp", f"{ttl_s - 1} seconds").groupBy(F.window("timestamp", "1 second"), key)
             .count())
    return {"dedup": ("append", dedup), "count": ("update", count)}


def tree(path: Path, suffix: str = "") -> tuple[int, int]:
    """Bytes and files below `path` (those ending in `suffix`)."""
    size = files = 0
    for root, _, names in os.walk(path):
        for name in names:
            if name.endswith(suffix):
                try:
                    size += os.stat(os.path.join(root, name)).st_size
                    files += 1
                except FileNotFoundError:
                    pass
    return size, files


def proc(pid: int) -> dict[str, int]:
    status = Path(f"/proc/{pid}/status").read_text()
    rss = int(re.search(r"VmRSS:\s+(\d+) kB", status).group(1)) * 1024  # type: ignore[union-attr]
    threads = int(re.search(r"Threads:\s+(\d+)", status).group(1))  # type: ignore[union-attr]
    return {"rss_bytes": rss, "threads": threads, "open_fds": len(os.listdir(f"/proc/{pid}/fd"))}


def heap_range(pid: int) -> tuple[int, int] | None:
    """The Java heap's reserved address range, from jcmd GC.heap_info ("[0x..., 0x...)"), or None."""
    try:
        info = subprocess.run(["jcmd", str(pid), "GC.heap_info"], capture_output=True, text=True, timeout=60,
                              check=True).stdout
    except (subprocess.SubprocessError, OSError):
        return None
    found = re.search(r"\[(0x[0-9a-f]+), (0x[0-9a-f]+)\)", info)
    return (int(found.group(1), 16), int(found.group(2), 16)) if found else None


def heap_rss(pid: int, heap: tuple[int, int]) -> int:
    """The resident bytes of the mappings inside the heap's range (/proc/PID/smaps): the heap pages the JVM
    has touched. RSS minus this is the memory outside the heap (RocksDB, metaspace, threads, code)."""
    resident = 0
    inside = False
    with open(f"/proc/{pid}/smaps") as smaps:
        for line in smaps:
            head = line.split(" ", 1)[0]
            if "-" in head and ":" not in head:
                start, end = (int(x, 16) for x in head.split("-"))
                inside = start < heap[1] and end > heap[0]
            elif inside and line.startswith("Rss:"):
                resident += int(line.split()[1]) * 1024
    return resident


def jvm_non_heap(pid: int) -> int | None:
    """What the JVM itself has committed outside its heap (metaspace, code, threads, GC, direct buffers), from
    Native Memory Tracking (jcmd VM.native_memory summary), or None where it is off. RSS less the heap's
    resident pages and this is the memory the JVM does not know of: native libraries (RocksDB) and their
    allocator."""
    try:
        info = subprocess.run(["jcmd", str(pid), "VM.native_memory", "summary"], capture_output=True, text=True,
                              timeout=60, check=True).stdout
    except (subprocess.SubprocessError, OSError):
        return None
    total = re.search(r"Total: reserved=\d+KB, committed=(\d+)KB", info)
    heap = re.search(r"Java Heap \(reserved=\d+KB, committed=(\d+)KB\)", info)
    return (int(total.group(1)) - int(heap.group(1))) * 1024 if total and heap else None


def heap_after_gc(pid: int) -> int | None:
    """The used heap after a full GC (jcmd GC.run, then GC.heap_info), or None if jcmd failed."""
    try:
        subprocess.run(["jcmd", str(pid), "GC.run"], capture_output=True, timeout=60, check=True)
        info = subprocess.run(["jcmd", str(pid), "GC.heap_info"], capture_output=True, text=True, timeout=60,
                              check=True).stdout
    except (subprocess.SubprocessError, OSError):
        return None
    used = re.search(r"used (\d+)K", info)
    return int(used.group(1)) * 1024 if used else None


def slope_per_batch(points: list[tuple[float, float]]) -> float:
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    var = sum((x - mx) ** 2 for x, _ in points)
    return 0.0 if var == 0 else sum((x - mx) * (y - my) for x, y in points) / var


def verdicts(samples: list[dict], figures: dict[str, tuple[float, float] | None] = BANDS) -> dict[str, dict]:
    """Per figure (per executor where it is one): the second half's median, the drift a least-squares trend
    adds across it, the band, and whether the drift stays below it. Only growth is judged: what leaks rises,
    while a figure may fall with no fault (the read-ahead's readers end when idle, by 35-50 of ~180 threads in
    a remote soak's second half; a heap settles after its warm-up, by 36 MiB in a soak's 1,500 batches)."""
    last = samples[-1]["batch"]
    half = [s for s in samples if s["batch"] >= last / 2]
    out: dict[str, dict] = {}
    series: dict[str, list[tuple[float, float]]] = {}
    for s in half:
        for name in figures:
            if s.get(name) is not None:
                series.setdefault(name, []).append((s["batch"], s[name]))
        for executor, figs in s.get("executors", {}).items():
            for name, value in figs.items():
                if value is not None and name in figures:
                    series.setdefault(f"{name} (executor {executor})", []).append((s["batch"], value))
    for label, points in sorted(series.items()):
        if len(points) < 3:
            continue
        name = label.split(" (")[0]
        bounds = figures[name]
        median = statistics.median(y for _, y in points)
        drift = slope_per_batch(points) * (points[-1][0] - points[0][0])
        band = None if bounds is None else max(bounds[0] * abs(median), bounds[1])
        out[label] = {"median": median, "drift": drift, "slope_per_1000_batches": slope_per_batch(points) * 1000,
                      "band": band,
                      "within": None if band is None else drift <= band,
                      "first_batch": points[0][0],
                      "last_batch": points[-1][0]}
    return out


def container_limit(samples: list[dict], heap_mib: int, overheads_mib: dict[str, int]) -> dict[str, dict]:
    """Per executor: its highest RSS over the run against the limit YARN or Kubernetes would set its container,
    the heap plus the overhead it derived its budget from (its log), and whether it stayed below."""
    out: dict[str, dict] = {}
    for executor, overhead in overheads_mib.items():
        peak = max((s["executors"][executor]["rss_bytes"] for s in samples if executor in s["executors"]), default=0)
        limit = (heap_mib + overhead) * MiB
        out[executor] = {"peak_rss_bytes": peak, "heap_mib": heap_mib, "overhead_mib": overhead,
                         "limit_bytes": limit, "within": 0 < peak < limit}
    return out


#: After the live set shrinks, how many batches the memory has to fall back, and how many batches it is judged over.
FALL_BACK_BATCHES, FALL_BACK_WINDOW = 100, 20


def fall_back(samples: list[dict], drop_batch: int) -> dict:
    """The native memory (summed over the JVMs) and the local SST bytes, as medians over the 50 batches before the
    live set shrank and over the window FALL_BACK_BATCHES after it."""
    def window(first: int, last: int) -> dict:
        inside = [s for s in samples if first <= s["batch"] < last]
        native = [sum(e["native_bytes"] for e in s["executors"].values() if e.get("native_bytes") is not None)
                  for s in inside]
        sst = [s["local_sst_bytes"] for s in inside]
        return {"batches": [first, last], "samples": len(inside),
                "native_bytes": statistics.median(native) if native else None,
                "local_sst_bytes": statistics.median(sst) if sst else None}
    before = window(drop_batch - 50, drop_batch)
    after = window(drop_batch + FALL_BACK_BATCHES, drop_batch + FALL_BACK_BATCHES + FALL_BACK_WINDOW)
    return {"drop_batch": drop_batch, "before": before, "after": after}


def trigger_seconds(trigger: str) -> int:
    """A processing-time trigger's interval in whole seconds ("1 second", "2 seconds"), at least 1."""
    found = re.match(r"\s*(\d+)\s*seconds?\s*$", trigger)
    if not found:
        raise SystemExit(f"--drop-after needs a trigger in whole seconds, not {trigger!r}")
    return max(1, int(found.group(1)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("work", type=Path)
    parser.add_argument("--provider", choices=("ttlstore", "rocksdb"), default="ttlstore")
    parser.add_argument("--batches", type=int, default=3000)
    parser.add_argument("--rate", type=int, default=10_000, help="new keys a second")
    parser.add_argument("--ttl", type=int, default=25, help="seconds a key lives (TTL or watermark delay)")
    parser.add_argument("--trigger", default="1 second")
    parser.add_argument("--sample", type=float, default=5.0, help="seconds between samples")
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--executors", type=int, default=2)
    parser.add_argument("--remote-mb", type=int, default=0,
                        help="ttlstore in remote mode: MiB of local SST files per executor (remote.localCacheMB)")
    parser.add_argument("--conf", action="append", default=[], help="KEY=VALUE, a Spark setting more")
    parser.add_argument("--shape", choices=("soak", "watermarked-dedup", "cache-churn"), default="soak",
                        help="the soak's two queries on local-cluster executors; a watermarked deduplication "
                             "(dropDuplicatesWithinWatermark, the same query on both providers, ttlstore without a TTL) "
                             "in one local[2] JVM; or the soak's deduplication beside an aggregation over CHURN_KEYS "
                             "keys of wide rows, all of them read and rewritten as the batches go by (local-cluster)")
    parser.add_argument("--executor-memory", type=int, default=1024, help="MiB of heap per executor (local-cluster)")
    parser.add_argument("--drop-after", type=int, default=0,
                        help="seconds of events after which only a tenth of the keys come in (the live set shrinks "
                             "tenfold); the result's fall_back compares the memory before and after")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()

    args.work = args.work.resolve()  # the executors run in directories of their own
    local, checkpoints = args.work / "local", args.work / "checkpoints"
    local.mkdir(parents=True, exist_ok=True)
    if not (Path(os.environ.get("SPARK_HOME", "/nonexistent")) / "jars").is_dir():
        os.environ["SPARK_HOME"] = str(spark_home(args.work))  # local-cluster starts its executors from it
    one_jvm = args.shape == "watermarked-dedup"
    # local-cluster's worker holds the executor's heap and some room beside it
    master = "local[2]" if one_jvm else f"local-cluster[{args.executors},1,{args.executor_memory + 512}]"
    builder = (SparkSession.builder.master(master).appName(f"ttlstore-soak-{args.provider}")
               .config("spark.executor.memory", f"{args.executor_memory}m")
               .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
               .config("spark.local.dir", str(local))
               .config(f"spark.{'driver' if one_jvm else 'executor'}.extraJavaOptions",
                       "-XX:NativeMemoryTracking=summary")
               .config("spark.sql.shuffle.partitions", str(args.partitions)))
    for setting in args.conf:
        key, _, value = setting.partition("=")
        builder = builder.config(key, value)
    if any(setting.startswith(hooks.PREFIX) for setting in args.conf):
        builder = hooks.with_testkit(builder)
    if args.provider == "ttlstore":
        remote = {"local_cache_mb": args.remote_mb} if args.remote_mb else {}
        ttl = {} if one_jvm else {"ttl": f"{args.ttl} seconds"}
        spark = ttlstore.configure(builder, local_dir=str(local), **ttl, **remote).getOrCreate()
    else:
        builder = builder.config("spark.sql.streaming.stateStore.providerClass", ROCKSDB)
        if not one_jvm:  # the soak's anchor has changelog checkpointing on; the one-JVM shape takes Spark's defaults
            builder = builder.config("spark.sql.streaming.stateStore.rocksdb.changelogCheckpointing.enabled", "true")
        spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    app = spark.sparkContext.applicationId
    running = {name: df.writeStream.outputMode(mode).format("noop").trigger(processingTime=args.trigger)
               .option("checkpointLocation", str(checkpoints / name)).queryName(name).start()
               for name, (mode, df) in queries(spark, args.provider, args.rate, args.ttl, args.shape,
                                             args.drop_after).items()}
    driver = (int(spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()),  # type: ignore[union-attr]
              "driver")
    samples: list[dict] = []
    heaps: dict[int, tuple[int, int] | None] = {}
    started = time.time()
    try:
        while True:
            time.sleep(args.sample)
            progress = {name: q.lastProgress for name, q in running.items()}
            for name, q in running.items():
                if q.exception() is not None:
                    raise RuntimeError(f"{name} failed: {q.exception()}")
            if any(p is None for p in progress.values()):
                continue
            recent = {name: q.recentProgress[-5:] for name, q in running.items()}
            batch = min(p["batchId"] for p in progress.values())
            sample: dict = {"batch": batch, "seconds": round(time.time() - started, 1), "executors": {}}
            for pid, executor in ([driver] if one_jvm else executors(app)):
                try:
                    figures: dict = proc(pid)
                except (FileNotFoundError, AttributeError):
                    continue
                if pid not in heaps:  # once per JVM: the heap's range stays reserved (a failed jcmd is not retried)
                    heaps[pid] = heap_range(pid)
                heap = heaps[pid]
                if heap is not None:
                    try:
                        figures["heap_rss_bytes"] = heap_rss(pid, heap)
                        figures["off_heap_rss_bytes"] = figures["rss_bytes"] - figures["heap_rss_bytes"]
                    except FileNotFoundError:
                        pass
                non_heap = jvm_non_heap(pid)
                if non_heap is not None and "heap_rss_bytes" in figures:
                    figures["jvm_non_heap_bytes"] = non_heap
                    figures["native_bytes"] = figures["off_heap_rss_bytes"] - non_heap
                # Last: the full GC gives heap pages back, so the figures above are taken before it.
                figures["heap_after_gc_bytes"] = heap_after_gc(pid) if len(samples) % 10 == 0 else None
                sample["executors"][executor] = figures
            sample["state_memory_bytes"] = sum(op["memoryUsedBytes"] for p in progress.values()
                                               for op in p["stateOperators"])
            sample["state_rows"] = sum(op["numRowsTotal"] for p in progress.values() for op in p["stateOperators"])
            for figure in MEMORY_METRICS:  # ttlstore's memory section of the progress: each executor's, over its stores
                sample[figure] = sum(op.get("customMetrics", {}).get(MEMORY_METRICS[figure], 0)
                                     for p in progress.values() for op in p["stateOperators"])
            sample["local_sst_bytes"] = tree(local, ".sst")[0]
            sample["checkpoint_bytes"], sample["checkpoint_files"] = tree(checkpoints)
            sample["batch_ms"] = statistics.median(r["durationMs"].get("triggerExecution", 0)
                                                   for rs in recent.values() for r in rs)
            samples.append(sample)
            print(json.dumps({k: v for k, v in sample.items() if k != "executors"}), flush=True)
            if batch >= args.batches:
                break
    finally:
        for q in running.values():
            q.stop()
        spark.stop()
    result = {"provider": args.provider, "shape": args.shape, "remote_mb": args.remote_mb, "batches": args.batches,
              "rate": args.rate, "ttl_s": args.ttl,
              "trigger": args.trigger, "seconds": round(time.time() - started), "samples": samples,
              "verdicts": verdicts(samples),
              # The progress's memory figures at the last sample, beside the RSS the soak measured of each JVM then.
              "memory": {**{figure: samples[-1].get(figure, 0) for figure in MEMORY_METRICS},
                         "rss_bytes": sum(e.get("rss_bytes", 0) for e in samples[-1]["executors"].values())}
              if samples else {}}
    if not one_jvm:
        result["limit"] = container_limit(samples, args.executor_memory, memory_overheads_mib())
    if args.drop_after and samples:
        result["fall_back"] = fall_back(samples, args.drop_after // trigger_seconds(args.trigger))
    if args.out:
        args.out.write_text(json.dumps(result, indent=1))
    print("RESULT " + json.dumps({k: v for k, v in result.items() if k != "samples"}))


if __name__ == "__main__":
    main()
