"""`make bench-recovery`: recovery time against state size, per provider, into docs/recovery.md and docs/recovery.png.

Per rung (GB of state): each state (Spark's RocksDB provider with changelog, ttlstore) is built once
(bench/recovery.py build), then every arm restarts from it `--repeats` times, the arms interleaved and their order
reversed every other round (bench/recovery.py restart: a new cluster, then an executor lost). At the rungs of
`--hdfs-rungs` the states are then copied into HDFS (Hadoop's mini cluster on this machine) and every arm restarts
from there as well (the arm "<arm>@hdfs"). A rung's checkpoints are deleted once measured. The results go to
bench-output/recovery.json after every rung, and the page is written from that file (`--report-only` rewrites it
without running anything).
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import statistics
import subprocess
import time
from pathlib import Path

import ladder
import pyspark
import recovery
from mini_dfs import mini_dfs

OUT = ladder.ROOT / "bench-output" / "recovery"
REPORT = ladder.ROOT / "docs" / "recovery.md"
RUNGS_GB = (0.7, 3.0, 8.0)
HDFS_RUNGS_GB = (0.7,)
BASE = "rocksdb-changelog"
BYTES_PER_ROW = recovery.BYTES_PER_ROW


def rows_for(gb: float) -> int:
    """The rows that make `gb` GB of state, a whole number of build batches."""
    batches = math.ceil(gb * 1e9 / BYTES_PER_ROW / recovery.BUILD_ROWS_PER_BATCH)
    return batches * recovery.BUILD_ROWS_PER_BATCH


def script(argv: list[str]) -> dict:
    return ladder.run_in_subprocess(argv, timeout=3600, script=recovery.__file__)


def fits_at_once(gb: float, states: int) -> bool:
    """Whether every state's checkpoint fits the disk at once, with the local copies of one beside them: a checkpoint
    holds up to twice its state (the snapshots maintenance has not cleaned up yet), and a lost executor's copies stay
    on disk while its stores load again elsewhere."""
    return (2.3 * states + 2.2) * gb * 1e9 < shutil.disk_usage(OUT).free


def restarts(gb: float, work: Path, arms: list[str], repeats: int, before_jar: str | None,
             hdfs: str | None = None, after: int = recovery.AFTER, conf: list[str] | None = None) -> list[dict]:
    """Every arm restarted from its state `repeats` times, interleaved: from the checkpoints under `work` read
    through the emulated object store, or from their copies under the HDFS `hdfs`; `conf`: more settings (key=value)
    for every run."""
    runs = []
    for r in range(repeats):
        for arm in arms if r % 2 == 0 else arms[::-1]:
            state = recovery.ARMS[arm][1]
            checkpoint = f"{hdfs}/{state}/checkpoint" if hdfs else str(work / state / "checkpoint")
            argv = ["restart", "--work", str(work), "--arm", arm, "--stored", str(rows_for(gb)),
                    "--checkpoint", checkpoint, "--after", str(after), *(["--conf", *conf] if conf else [])]
            name = f"{arm}@hdfs" if hdfs else arm
            try:
                run = script(argv + (["--before-jar", before_jar] if before_jar else []))
            except RuntimeError as e:  # kept on the page, the rung goes on
                runs.append({"arm": name, "label": label(arm, hdfs), "failed": str(e)[-1500:]})
                print(f"{gb:g} GB {name:24s} FAILED: {str(e)[-300:]}", flush=True)
                continue
            runs.append({**run, "arm": name, "label": label(arm, hdfs)})
            print(f"{gb:g} GB {name:24s} restart {run['restart_s']:6.1f} s, loss {run['loss_s']:6.1f} s", flush=True)
    return runs


def label(arm: str, hdfs: str | None) -> str:
    return recovery.ARMS[arm][0] + (", checkpoint on HDFS" if hdfs else "")


def from_hdfs(arm: str) -> bool:
    """Whether the runs of `arm` (as the results name it) restarted from HDFS."""
    return arm.endswith("@hdfs")


def on_hdfs(gb: float, work: Path, arms: list[str], repeats: int, before_jar: str | None, after: int) -> list[dict]:
    """The arms restarted from copies of their states on a mini cluster (its data under `work`)."""
    with mini_dfs(work / "hdfs", Path(pyspark.__file__).parent / "jars") as hdfs:
        for state in dict.fromkeys(recovery.ARMS[a][1] for a in arms):
            put = script(["put", "--work", str(work), "--checkpoint", str(work / state / "checkpoint"),
                          "--to", f"{hdfs}/{state}/checkpoint"])
            print(f"{gb:g} GB: {put['bytes'] / 1e9:.2f} GB of {state} copied into HDFS in {put['put_s']:.0f} s",
                  flush=True)
        return restarts(gb, work, arms, repeats, before_jar, hdfs, after)


def run_rung(gb: float, arms: list[str], repeats: int, before_jar: str | None, hdfs: bool, after: int) -> dict:
    """Builds each state and restarts every arm from its state `repeats` times, interleaved (and from HDFS if
    `hdfs`). A rung whose checkpoints do not fit the disk at once runs one state after the other: its arms, then
    the next state's."""
    rows = rows_for(gb)
    work = OUT / f"rung-{gb:g}"
    shutil.rmtree(work, ignore_errors=True)
    states = list(dict.fromkeys(recovery.ARMS[a][1] for a in arms))
    groups = [arms] if fits_at_once(gb, len(states)) else [[a for a in arms if recovery.ARMS[a][1] == s] for s in states]
    builds, runs = {}, []
    for group in groups:
        for state in dict.fromkeys(recovery.ARMS[a][1] for a in group):
            builds[state] = script(["build", "--work", str(work / state), "--state", state, "--rows", str(rows)])
            print(f"{gb:g} GB: built {state} in {builds[state]['build_s']:.0f} s, "
                  f"{builds[state]['checkpoint_bytes'] / 1e9:.2f} GB in the checkpoint", flush=True)
        runs += restarts(gb, work, group, repeats, before_jar, after=after)
        if hdfs:
            runs += on_hdfs(gb, work, group, repeats, before_jar, after)
        shutil.rmtree(work, ignore_errors=True)
    return {"gb": gb, "rows": rows, "builds": builds, "runs": runs, "states_at_once": len(groups) == 1}


def commit() -> str:
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ladder.ROOT, capture_output=True, text=True)
    return head.stdout.strip() or "unknown"


def spread(values: list[float]) -> str:
    m = statistics.median(values)
    return f"{m:.1f} ({min(values):.1f}-{max(values):.1f})"


def ok(rung: dict) -> list[dict]:
    """The rung's runs that did not fail."""
    return [r for r in rung["runs"] if "failed" not in r]


def state_gb(rung: dict, hdfs: bool = False) -> float:
    """The rung's state: the bytes of ttlstore's snapshots as its restarts fetched them (every store fetches all of
    its snapshot), their median: each run adds the new ids of its batches to the state the next run restarts from.
    The runs on HDFS (`hdfs`) restart from copies taken after the others, so from more."""
    fetched = [b for r in ok(rung) if from_hdfs(r["arm"]) == hdfs
               and (b := r["restart_loads"].get("ttlstoreLoadBytesFetched"))]
    return statistics.median(fetched) / 1e9 if fetched else rung["gb"]


def per_store_load_s(run: dict) -> float | None:
    """A store's load time at the restart (every store loads): the progress's sum over the stores, per store."""
    loads = run["restart_loads"]
    total = loads.get("ttlstoreLoadLatencyMs", loads.get("rocksdbLoadLatencyMs"))
    return None if total is None else total / recovery.STORES / 1000


def report(results: dict) -> str:
    rungs = results["rungs"]
    after = results.get("after", recovery.AFTER)
    arms = list(dict.fromkeys(r["arm"] for rung in rungs for r in rung["runs"]))
    labels = {r["arm"]: r["label"] for rung in rungs for r in rung["runs"]}

    def of(rung: dict, arm: str) -> list[dict]:
        return [r for r in rung["runs"] if r["arm"] == arm and "failed" not in r]

    lines = [
        "# Recovery against state size",
        "",
        "<!-- Written by `make bench-recovery` (bench/recoveries.py, bench/recovery.py); rerun it to refresh. -->",
        "",
        f"Measured {results['measured']} with commit {results['commit']} on x86_64, 2 cores, Spark {results['spark']}, "
        f"in {results['minutes']:.0f} minutes. Every table on this page comes from that one run.",
        "",
        f"The query: `dropDuplicates` of wide events (an id and {recovery.PAYLOAD_HASHES * 64} random bytes in base64 per "
        f"row; TTL {recovery.TTL} for ttlstore) over {recovery.STORES} stores (shuffle partitions), built to each rung "
        "on the local disk, then restarted from it on `local-cluster[2,1,3072]`: two executor JVMs with fresh local "
        "directories, one core each, so each executor loads its stores one after another. The checkpoint is read "
        f"through `shaped://`, an object store emulated over the same files (ShapedFileSystem, test code): "
        f"{recovery.LATENCY_MS} ms per request (open, list, status, create, rename, delete), {recovery.STREAM_MBPS} MB/s "
        f"per stream, {recovery.PROCESS_MBPS} MB/s per executor for all its streams. After the restart, "
        f"{after} batches of {recovery.AFTER_ROWS_PER_BATCH:,} rows (half new ids, half stored ones); then an "
        "executor running a task of the stateful stage is killed (SIGKILL), its stores move, and "
        f"{after} batches more. Each run restarts from its own copy of the built checkpoint (hard links), so every "
        "run of a rung restarts from the same versions; the runs from HDFS share one copy, whose later runs restart "
        "from a little more (the new ids of the runs before). The state column is the median of what ttlstore's "
        "restarts fetched.",
        "",
        *hdfs_note(rungs),
        "- **Restart**: from the query's start (its executors up) until its first batch commits; every store fetches "
        "its snapshot and replays the changelogs after it.",
        "- **Loss**: from the kill until the batch it hit commits (the lost stores load on the surviving executor "
        "or the one the worker starts anew).",
        "- **Load per store**: the progress's load time (`ttlstoreLoadLatencyMs`, Spark's `rocksdbLoadLatencyMs`) of "
        "the restart's first batch, over the stores. The bound: a store's share of the state at the executor's "
        f"{recovery.PROCESS_MBPS} MB/s.",
        "",
        f"Medians of {max(len(of(rungs[0], a)) for a in arms)} runs per arm and rung, interleaved, with their range; "
        "seconds.",
        "",
        f"| state | arm | restart | loss | load per store (bound) | the next {after - 1} batches after the restart, "
        f"median / max | the next {after - 1} after the loss, median / max |",
        "|---|---|---|---|---|---|---|",
    ]
    for rung in rungs:
        for arm in arms:
            runs = of(rung, arm)
            if not runs:
                continue
            gb = state_gb(rung, from_hdfs(arm))
            # The bound is the emulated object store's; HDFS here is a local disk behind a protocol.
            share = gb * 1e9 / recovery.STORES / (recovery.PROCESS_MBPS * 1e6)
            bound = "" if from_hdfs(arm) else f" ({share:.2f})"
            load = [s for s in (per_store_load_s(r) for r in runs) if s is not None]
            restarted = [ms for r in runs for ms in r["restart_batches_ms"][1:]]
            lost = [ms for r in runs for ms in r["loss_batches_ms"][1:]]
            lines.append(
                f"| {gb:.2f} GB | {labels[arm]} | {spread([r['restart_s'] for r in runs])} | "
                f"{spread([r['loss_s'] for r in runs])} | "
                f"{(spread(load) if load else '-')}{bound} | "
                f"{statistics.median(restarted) / 1000:.2f} / {max(restarted) / 1000:.2f} | "
                f"{statistics.median(lost) / 1000:.2f} / {max(lost) / 1000:.2f} |")
    failed = [(rung, r) for rung in rungs for r in rung["runs"] if "failed" in r]
    for rung, r in failed:
        reason = r["failed"].strip().splitlines()[-1][:300]
        lines += ["", f"A run of {r['label']} at {rung['gb']:g} GB failed and is left out: {reason}"]
    apart = [f"{r['gb']:g} GB" for r in rungs if not r.get("states_at_once", True)]
    if apart:
        lines += ["", f"At {', '.join(apart)} the two checkpoints did not fit the disk at once: Spark's provider's arm "
                  "ran first, then ttlstore's arms (interleaved with each other) on a state built after it."]
    lines += ["", "![restart and loss time against state size](recovery.png)", ""]
    lines += goals(rungs, arms)
    lines += ["## The builds", "", "| state | provider | rows | build | checkpoint bytes |", "|---|---|---|---|---|"]
    for rung in rungs:
        for state, b in rung["builds"].items():
            lines.append(f"| {rung['gb']:g} GB | {state} | {b['rows']:,} | {b['build_s']:.0f} s | "
                         f"{b['checkpoint_bytes'] / 1e9:.2f} GB |")
    return "\n".join(lines) + "\n"


def hdfs_note(rungs: list[dict]) -> list[str]:
    at = [f"{r['gb']:g} GB" for r in rungs if any(from_hdfs(run["arm"]) for run in r["runs"])]
    if not at:
        return []
    return [f"At {', '.join(at)} every arm also restarted from a copy of its state on HDFS (the rows \"checkpoint on "
            "HDFS\"): Hadoop's mini cluster, one name node and one data node in a JVM on this machine, copied there "
            "through Hadoop's FileSystem API after the arms' runs on the emulated object store (so with the ids those "
            "runs added: the state column). It shares the machine's 2 cores and its disk with the cluster and no "
            "network lies between them, so these rows measure what HDFS's protocol and each provider's reads cost, "
            "not a data center's bandwidth.", ""]


def goals(rungs: list[dict], arms: list[str]) -> list[str]:
    """Issue 50's goals, from the smallest and the largest rung."""
    small, large = rungs[0], rungs[-1]

    def med(rung: dict, arm: str, key: str) -> float | None:
        values = [r[key] for r in ok(rung) if r["arm"] == arm]
        return statistics.median(values) if values else None

    def load(rung: dict, arm: str) -> float | None:
        values = [s for r in ok(rung) if r["arm"] == arm for s in [per_store_load_s(r)] if s is not None]
        return statistics.median(values) if values else None

    lines = ["## Against the goals", "", "| goal | figure |", "|---|---|"]
    before = next((a for a in ("ttlstore-before", "ttlstore-sequential") if a in arms), None)
    ours, theirs = load(large, "ttlstore"), load(large, before) if before else None
    if ours and theirs:
        lines.append(f"| a store's load at {state_gb(large):.2f} GB, before over after (at least 3x) | "
                     f"{theirs:.2f} s / {ours:.2f} s = {theirs / ours:.1f}x |")
    if ours:
        bound = state_gb(large) * 1e9 / recovery.STORES / (recovery.PROCESS_MBPS * 1e6)
        lines.append(f"| a store's load over the bandwidth bound (at most 1.5x) | {ours:.2f} s / {bound:.2f} s = "
                     f"{ours / bound:.1f}x |")
    added = {a: (med(large, a, "restart_s") or 0) - (med(small, a, "restart_s") or 0) for a in arms}
    if "ttlstore" in added and BASE in added and added[BASE] > 0 and len(rungs) > 1:
        lines.append(f"| what the state adds to a restart ({state_gb(large):.2f} GB minus {state_gb(small):.2f} GB), "
                     f"ttlstore over Spark's RocksDB provider (at most 1/3) | {added['ttlstore']:.1f} s / "
                     f"{added[BASE]:.1f} s = {added['ttlstore'] / added[BASE]:.2f} |")
    return lines + lazy_goals(small, large, added, med) + remote_goals(large) + [""]


def remote_goals(rung: dict) -> list[str]:
    """Issue 51's remote mode: the batches after a restart, each cache size against fully local, at `rung`."""
    def after(arm: str) -> list[float]:
        return [ms for r in ok(rung) if r["arm"] == arm for ms in r["restart_batches_ms"][1:]]

    local = after("ttlstore")
    lines = []
    for arm, share in recovery.REMOTE_SHARES.items():
        remote = after(arm)
        if local and remote:
            lines.append(f"| remote mode, local caches of {share:g} of the state at {state_gb(rung):.2f} GB: the "
                         f"batches after the restart, median, over fully local (stated) | "
                         f"{statistics.median(remote) / 1000:.2f} s / {statistics.median(local) / 1000:.2f} s = "
                         f"{statistics.median(remote) / statistics.median(local):.2f}x |")
    return lines


def lazy_goals(small: dict, large: dict, added: dict[str, float], med) -> list[str]:  # type: ignore[no-untyped-def]
    """Issue 51's goals for the arm that opens first and fetches lazily, and issue 70's for it and the default
    settings, from the smallest and the largest rung."""
    lines = []
    if "ttlstore-lazy" not in added or small is large:
        return lines
    if BASE in added and added[BASE] > 0:
        lines.append(f"| lazily: what the state adds to a restart, over what it adds to Spark's RocksDB provider "
                     f"(at most 1/10) | {added['ttlstore-lazy']:.1f} s / {added[BASE]:.1f} s = "
                     f"{added['ttlstore-lazy'] / added[BASE]:.2f} |")
    # The first batch at the largest rung at most 1.3x the smallest's: lazily after a loss (issue 51), and after a
    # restart and with the default settings too (issue 70).
    for arm, key, what in (("ttlstore-lazy", "loss_s", "lazily: an executor lost"),
                           ("ttlstore-lazy", "restart_s", "lazily: a restart"),
                           ("ttlstore", "restart_s", "with the default settings: a restart"),
                           ("ttlstore", "loss_s", "with the default settings: an executor lost")):
        first, last = med(small, arm, key), med(large, arm, key)
        if first and last:
            lines.append(f"| {what} at {state_gb(large):.2f} GB over at {state_gb(small):.2f} GB (at most 1.3x) | "
                         f"{last:.1f} s / {first:.1f} s = {last / first:.2f}x |")
    return lines


def plot(results: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rungs = results["rungs"]
    arms = list(dict.fromkeys(r["arm"] for rung in rungs for r in rung["runs"]))
    labels = {r["arm"]: r["label"] for rung in rungs for r in rung["runs"]}
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, key, title in ((axes[0], "restart_s", "restart on a new cluster"), (axes[1], "loss_s", "executor lost")):
        for arm in arms:
            points = [(state_gb(rung, from_hdfs(arm)), statistics.median(r[key] for r in ok(rung) if r["arm"] == arm))
                      for rung in rungs if any(r["arm"] == arm for r in ok(rung))]
            ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=labels[arm])
        ax.set_title(title)
        ax.set_xlabel("state (GB)")
        ax.set_ylabel("seconds until a batch commits")
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def write(results: dict) -> None:
    (OUT.parent / "recovery.json").write_text(json.dumps(results, indent=1))
    if results["rungs"]:
        REPORT.write_text(report(results))
        plot(results, REPORT.parent / "recovery.png")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rungs", type=float, nargs="+", default=list(RUNGS_GB), help="GB of state at each rung")
    parser.add_argument("--arms", nargs="+", choices=tuple(recovery.ARMS),
                        default=["rocksdb-changelog", "ttlstore-sequential", "ttlstore", "ttlstore-lazy"])
    parser.add_argument("--hdfs-rungs", type=float, nargs="*", default=list(HDFS_RUNGS_GB),
                        help="the rungs whose arms also restart from HDFS")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--after", type=int, default=recovery.AFTER,
                        help="the batches each run measures after the restart and after the loss")
    parser.add_argument("--before-jar", help="a ttlstore jar of before issue 50, for the arm ttlstore-before")
    parser.add_argument("--report-only", action="store_true", help="rewrite the page from bench-output/recovery.json")
    parser.add_argument("--resume", action="store_true",
                        help="keep the rungs bench-output/recovery.json holds and run the others")
    args = parser.parse_args()
    if args.report_only:
        write(json.loads((OUT.parent / "recovery.json").read_text()))
        return
    if "ttlstore-before" in args.arms and not args.before_jar:
        parser.error("the arm ttlstore-before needs --before-jar")
    results = {"measured": time.strftime("%Y-%m-%d"), "commit": commit(), "spark": pyspark.__version__, "rungs": [],
               "minutes": 0.0, "after": args.after}
    if args.resume:
        results = json.loads((OUT.parent / "recovery.json").read_text())
    OUT.mkdir(parents=True, exist_ok=True)
    started = time.monotonic() - results["minutes"] * 60
    for gb in sorted(set(args.rungs) - {r["gb"] for r in results["rungs"]}):
        results["rungs"].append(run_rung(gb, args.arms, args.repeats, args.before_jar, gb in args.hdfs_rungs,
                                         results["after"]))
        results["rungs"].sort(key=lambda r: r["gb"])
        results["minutes"] = (time.monotonic() - started) / 60
        write(results)


if __name__ == "__main__":
    main()
