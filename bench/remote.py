"""`make bench-remote`: remote mode's batches against fully local's, with the read-ahead and without (issue 70), into
docs/lazy-load.md (between its `bench-remote` markers) and docs/remote.png.

One state of ROWS rows (bench/recovery.py's deduplication of wide events over 16 stores, 0.7 GB) is built on the local
disk, then restarted by every arm `--repeats` times, interleaved and their order reversed every other round
(bench/recovery.py restart: `local-cluster[2,1,3072]`, the checkpoint read through `shaped://`, the emulated object
store, at `--latency-ms` a request; `--after` batches of 20,000 rows, half of them stored keys, after the restart and
after an executor is lost). The arms: fully local (every file fetched first), and remote mode with local caches of a
quarter and of half of the state, each with the read-ahead (the default) and without (`readAhead.rows=0`, as before
issue 70). Per arm: the median time of the batches after the restart and after the loss, the first of each left out
(it loads the stores; docs/recovery.md measures loads), and against fully local's in the same run.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import textwrap
import time

import ladder
import pyspark
import recoveries
import recovery

OUT = ladder.ROOT / "bench-output" / "remote"
PAGE = ladder.ROOT / "docs" / "lazy-load.md"
PLOT = ladder.ROOT / "docs" / "remote.png"
START, END = "<!-- bench-remote: written by make bench-remote -->", "<!-- bench-remote: end -->"
ROWS = 1_200_000
LOCAL = "ttlstore"
AHEAD = ["ttlstore-remote-quarter", "ttlstore-remote-half"]
BEFORE = ["ttlstore-remote-quarter-no-read-ahead", "ttlstore-remote-half-no-read-ahead"]
#: The goals (issue 70): a remote arm's batches after a restart at most this many times fully local's.
GOALS = {"ttlstore-remote-quarter": 2.0, "ttlstore-remote-half": 1.5}


def after_batches(run: dict, key: str) -> list[float]:
    """A run's batch times (s) after the restart or the loss (`key`), the first (the loads) left out."""
    return [ms / 1000 for ms in run[key][1:]]


def median_of(runs: list[dict], arm: str, key: str) -> float | None:
    times = [t for r in runs if r["arm"] == arm and "failed" not in r for t in after_batches(r, key)]
    return statistics.median(times) if times else None


def spread(runs: list[dict], arm: str, key: str) -> str:
    per_run = [statistics.median(after_batches(r, key)) for r in runs
               if r["arm"] == arm and "failed" not in r and len(r[key]) > 1]
    return f"{min(per_run):.2f}-{max(per_run):.2f}" if per_run else "n/a"


def checkpoint_reads(runs: list[dict], arm: str) -> float | None:
    reads = [m.get("ttlstoreCheckpointReads", 0) for r in runs if r["arm"] == arm and "failed" not in r
             for m in r.get("restart_reads", [])[1:]]
    return statistics.median(reads) if reads else None


def report(results: dict) -> str:
    runs = results["runs"]
    keys = ("restart_batches_ms", "loss_batches_ms")
    local = {k: median_of(runs, LOCAL, k) for k in keys}
    # Arms kept from an earlier run (--keep-before) compare with that run's fully local.
    earlier = results.get("before_from")
    local_before = {k: median_of(earlier["local_runs"], LOCAL, k) for k in keys} if earlier else local
    lines = [START, "", textwrap.fill(
             f"Measured on {results['measured']} ({results['commit']}, pyspark {results['spark']}, "
             f"{results['minutes']:.0f} minutes) by `make bench-remote` (bench/remote.py): {results['checkpoint_gb']:.2f} "
             f"GB of state in the checkpoint over {recovery.STORES} stores, `local-cluster[2,1,3072]`, the emulated object store at "
             f"{results['latency_ms']} ms a request, {results['after'] - 1} batches of "
             f"{recovery.AFTER_ROWS_PER_BATCH:,} rows measured after the restart and after the loss (the first, which "
             f"loads, left out), half of their rows stored keys; medians of {results['repeats']} interleaved runs "
             f"with the range of the runs' medians." + (
                 f" The arms without the read-ahead are {earlier['commit']}'s runs of {earlier['measured']} on the same "
                 f"setup, against that run's fully local ({local_before['restart_batches_ms']:.2f} s after the "
                 f"restart, {local_before['loss_batches_ms']:.2f} s after the loss)." if earlier else ""), 105), "",
             "| arm | batches after the restart (s) | against fully local | after the loss (s) | against fully local "
             "| checkpoint reads a batch |",
             "|---|---|---|---|---|---|"]
    for arm in [LOCAL, *AHEAD, *BEFORE]:
        if not any(r["arm"] == arm for r in runs):
            continue
        cells = [recovery.ARMS[arm][0]]
        base = local_before if arm in BEFORE else local
        for key in keys:
            m = median_of(runs, arm, key)
            cells += ["failed", "n/a"] if m is None else [
                f"{m:.2f} ({spread(runs, arm, key)})", f"{m / base[key]:.2f}x" if base[key] else "n/a"]
        reads = checkpoint_reads(runs, arm)
        cells.append("n/a" if reads is None else f"{reads:,.0f}")
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "| goal (issue 70) | measured | met |", "|---|---|---|"]
    for arm, goal in GOALS.items():
        m, base = median_of(runs, arm, "restart_batches_ms"), local["restart_batches_ms"]
        if m is not None and base:
            lines.append(f"| {recovery.ARMS[arm][0]}: batches after a restart at most {goal:g}x fully local's | "
                         f"{m:.2f} s / {base:.2f} s = {m / base:.2f}x | {'yes' if m / base <= goal else 'no'} |")
    failed = [r for r in runs if "failed" in r]
    if failed:
        lines += ["", textwrap.fill(f"{len(failed)} run(s) failed: " +
                                    "; ".join(f"{r['arm']}: {r['failed'][-200:]}" for r in failed), 105)]
    return "\n".join(lines + ["", f"![Batch times per arm]({PLOT.name})", "", END])


def plot(results: dict) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = results["runs"]
    arms = [a for a in [LOCAL, *AHEAD, *BEFORE] if median_of(runs, a, "restart_batches_ms") is not None]
    fig, ax = plt.subplots(figsize=(10, 4))
    width = 0.4
    for i, (key, title) in enumerate((("restart_batches_ms", "after the restart"), ("loss_batches_ms", "after the loss"))):
        values = [median_of(runs, a, key) or 0 for a in arms]
        ax.bar([x + i * width for x in range(len(arms))], values, width, label=title)
    ax.set_xticks([x + width / 2 for x in range(len(arms))])
    ax.set_xticklabels([recovery.ARMS[a][0].replace("ttlstore, ", "").replace(", ", ",\n") for a in arms], fontsize=7)
    ax.set_yscale("log")
    ax.set_ylabel("median batch time (s, log scale)")
    ax.set_title(f"Remote mode against fully local, {results['latency_ms']} ms a request")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3, axis="y")
    fig.tight_layout()
    fig.savefig(PLOT, dpi=100)


def write(results: dict) -> None:
    (OUT.parent / "remote.json").write_text(json.dumps(results, indent=1))
    page = PAGE.read_text()
    if START not in page or END not in page:
        raise SystemExit(f"{PAGE} has no section between {START!r} and {END!r} to write")
    head, rest = page.split(START, 1)
    PAGE.write_text(head + report(results) + rest.split(END, 1)[1])
    plot(results)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=ROWS)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--before-repeats", type=int, default=1,
                        help="runs of the arms without the read-ahead (each batch waits minutes)")
    parser.add_argument("--after", type=int, default=5, help="batches after the restart and after the loss")
    parser.add_argument("--latency-ms", type=int, default=recovery.LATENCY_MS)
    parser.add_argument("--report-only", action="store_true", help="rewrite the page from bench-output/remote.json")
    parser.add_argument("--keep-before", action="store_true",
                        help="run fully local and the read-ahead's arms only, keeping the arms without it from "
                             "bench-output/remote.json (the same state and settings: its code path is unchanged)")
    args = parser.parse_args()
    if args.report_only:
        write(json.loads((OUT.parent / "remote.json").read_text()))
        return
    earlier = json.loads((OUT.parent / "remote.json").read_text()) if args.keep_before else None
    kept = [r for r in earlier["runs"] if r["arm"] in BEFORE] if earlier else []
    shutil.rmtree(OUT, ignore_errors=True)
    OUT.mkdir(parents=True)
    started = time.monotonic()
    built = recoveries.script(["build", "--work", str(OUT / "ttlstore"), "--state", "ttlstore", "--rows", str(args.rows)])
    print(f"built {built['checkpoint_bytes'] / 1e9:.2f} GB in {built['build_s']:.0f} s", flush=True)
    # The state's size as recoveries.restarts takes it back to rows (ROWS is a whole number of build batches).
    gb = args.rows * recovery.BYTES_PER_ROW / 1e9
    conf = [f"spark.hadoop.fs.shaped.latencyMs={args.latency_ms}"]
    runs = recoveries.restarts(gb, OUT, [LOCAL, *AHEAD], args.repeats, None, after=args.after, conf=conf)
    runs += kept or recoveries.restarts(gb, OUT, BEFORE, args.before_repeats, None, after=args.after, conf=conf)
    shutil.rmtree(OUT, ignore_errors=True)
    write({"measured": time.strftime("%Y-%m-%d"), "commit": recoveries.commit(), "spark": pyspark.__version__,
           "checkpoint_gb": built["checkpoint_bytes"] / 1e9, "latency_ms": args.latency_ms, "after": args.after,
           "repeats": args.repeats, "runs": runs,
           **({"before_from": {"commit": earlier["commit"], "measured": earlier["measured"],
                               "local_runs": [r for r in earlier["runs"] if r["arm"] == LOCAL]}} if earlier else {}),
           "minutes": (time.monotonic() - started) / 60})


if __name__ == "__main__":
    main()
