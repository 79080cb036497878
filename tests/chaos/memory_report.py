"""`make soak-memory`'s report (with ``--container``, `make soak-container`'s): each provider's memory on the
soak's shapes side by side, into docs/memory.md ("Measured (`make soak-memory`)") and its plot docs/memory.png,
from bench-output/soak-memory-<shape>-<run>.json (tests/chaos/soak.py --shape ... --out). A run is a provider
(``ttlstore``, ``rocksdb``) or a labelled variant of one (``ttlstore-before``, ``ttlstore-fall-back``).

Per run, the figures are per JVM that holds state (an executor; the driver in the one-JVM shape), the median over
the run's last quarter: RSS, the heap's resident pages, what the JVM itself committed outside its heap (Native
Memory Tracking), the native memory the JVM does not know of (RSS less those two: RocksDB and its allocator), the
state's memory as the provider reports it, and the local SST files. The goals (issue 72) are checked against Spark's RocksDB provider's run.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import textwrap
import time
from pathlib import Path

from report import commit, executors, replace_section  # type: ignore[import-not-found]

ROOT = Path(__file__).resolve().parents[2]
SECTION = "## Measured (`make soak-memory`)"
MiB = 1 << 20
SHAPES = {"soak": "the soak's deduplication and aggregation on two `local-cluster` executors of 1 GiB",
          "watermarked-dedup": "a watermarked deduplication (`dropDuplicatesWithinWatermark`) in one `local[2]` JVM"}
#: Per JVM, per figure: (label, where it comes from).
FIGURES = {"rss_bytes": "RSS", "heap_rss_bytes": "RSS: the heap's pages",
           "jvm_non_heap_bytes": "the JVM's own outside the heap (committed)",
           "native_bytes": "native (RSS less the heap's pages and the JVM's own)", "state_memory_bytes": "state memory (as reported)",
           "local_sst_bytes": "local SST files"}
#: What a labelled run was, where the report names it.
LABELS = {"ttlstore-before": "ttlstore as it was before it set RocksDB's `uncache_aggressiveness` (commit 2e0092b)",
          "ttlstore-fall-back": "ttlstore whose input falls tenfold mid-way (`--drop-after`); its last quarter is after "
                                "the fall"}
#: Goals against Spark's RocksDB provider: figure -> the largest ratio allowed.
RATIO_GOALS = {"native_bytes": 1.2, "rss_bytes": 1.1}
#: Goal on the soak's shape: ttlstore's native memory at most this far above its live SST bytes.
NATIVE_ABOVE_LIVE_SST = 128 * MiB


def wrap(prose: str, indent: str = "") -> str:
    """Prose at docs' width (110 characters), as the hand-written pages keep it."""
    return textwrap.fill(prose, 110, subsequent_indent=indent, break_on_hyphens=False, break_long_words=False)


def series(run: dict, figure: str) -> list[tuple[int, float]]:
    """(batch, the figure per JVM holding state) for each sample: a JVM figure averaged over the JVMs, a run's
    total divided among them."""
    points = []
    for s in run["samples"]:
        jvms = [e for e in s.get("executors", {}).values() if e.get("rss_bytes") is not None]
        found = [e[figure] for e in jvms if e.get(figure) is not None]
        if figure in s and jvms:
            points.append((s["batch"], s[figure] / len(jvms)))
        elif found:
            points.append((s["batch"], sum(found) / len(found)))
    return points


def per_jvm(run: dict, figure: str) -> float | None:
    """The figure per JVM holding state, the median over the run's last quarter."""
    last = run["samples"][-1]["batch"]
    values = [v for batch, v in series(run, figure) if batch >= 0.75 * last]
    return statistics.median(values) if values else None


def table(shape: str, runs: dict[str, dict]) -> list[str]:
    names = sorted(runs, key=lambda n: (n.startswith("rocksdb"), n))
    anchor = next((n for n in names if n == "rocksdb"), None)
    lines = [f"### {SHAPES[shape][0].upper()}{SHAPES[shape][1:]}", "",
             "| per JVM | " + " | ".join(names) + (" | ttlstore / rocksdb |" if anchor and "ttlstore" in runs else " |"),
             "|---|" + "---|" * (len(names) + (1 if anchor and "ttlstore" in runs else 0))]
    for figure, label in FIGURES.items():
        values = {n: per_jvm(runs[n], figure) for n in names}
        cells = ["" if v is None else f"{v / MiB:,.0f} MiB" for v in values.values()]
        if anchor and "ttlstore" in runs:
            ratio = (values["ttlstore"] / values[anchor]) if values["ttlstore"] and values[anchor] else None
            cells.append("" if ratio is None else f"{ratio:.2f}x")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append(wrap("Runs: " + "; ".join(f"{n} {r['batches']:,} batches in {r['seconds'] / 60:.0f} min, "
                                            f"{statistics.median(s['state_rows'] for s in r['samples']):,.0f} rows "
                                            "in state" for n, r in ((n, runs[n]) for n in names)) + "."))
    return lines + [""]


def goals(shape: str, runs: dict[str, dict]) -> list[str]:
    """Each goal with its figure and whether it is met, for ttlstore's run against Spark's RocksDB provider's."""
    out = []
    ours, theirs = runs.get("ttlstore"), runs.get("rocksdb")
    if ours and theirs:
        for figure, most in RATIO_GOALS.items():
            a, b = per_jvm(ours, figure), per_jvm(theirs, figure)
            if a and b:
                out.append(wrap(f"- {FIGURES[figure]} at most {most}x Spark's RocksDB provider's ({shape}): "
                                f"{a / b:.2f}x, {'met' if a / b <= most else 'not met'}", "  "))
    for name, run in sorted(runs.items()):
        if run.get("fall_back"):
            out.append(fall_back_goal(name, run["fall_back"], len(run["samples"][-1]["executors"]) or 1))
    if ours and shape == "soak":
        native, sst = per_jvm(ours, "native_bytes"), per_jvm(ours, "local_sst_bytes")
        if native is not None and sst is not None:
            above = native - sst
            out.append(wrap(f"- native memory at most {NATIVE_ABOVE_LIVE_SST // MiB} MiB above the live SST bytes "
                            f"(soak): {above / MiB:,.0f} MiB above, "
                            f"{'met' if above <= NATIVE_ABOVE_LIVE_SST else 'not met'}", "  "))
    return out


def fall_back_goal(name: str, fall: dict, jvms: int) -> str:
    """Whether native memory, per JVM, fell back with the live set: 100 batches after the input fell tenfold, at most
    NATIVE_ABOVE_LIVE_SST above the live SST bytes then (the before and after figures show how much it gave back)."""
    before, after = fall["before"], fall["after"]
    if before["native_bytes"] is None or after["native_bytes"] is None:
        return f"- {name}: no samples {fall['drop_batch']} batches in and 100 after, to judge its fall back by"
    above = (after["native_bytes"] - after["local_sst_bytes"]) / jvms
    met = above <= NATIVE_ABOVE_LIVE_SST
    return wrap(f"- native memory falls back within 100 batches when the live set shrinks tenfold ({name}): per JVM "
                f"{before['native_bytes'] / jvms / MiB:,.0f} MiB with {before['local_sst_bytes'] / jvms / MiB:,.0f} "
                f"MiB of live SST before, {after['native_bytes'] / jvms / MiB:,.0f} MiB with "
                f"{after['local_sst_bytes'] / jvms / MiB:,.0f} MiB 100 batches after, {above / MiB:,.0f} MiB above "
                f"it, {'met' if met else 'not met'}", "  ")


CONTAINER_SECTION = "## Against a container's limit (`make soak-container`)"


def container(run: dict) -> tuple[list[str], bool]:
    """The container soak's section: per executor, its highest RSS against heap plus overhead; and whether all kept
    below."""
    limits = run.get("limit", {})
    lines = [CONTAINER_SECTION, "",
             wrap(f"Measured {time.strftime('%Y-%m-%d')} on commit {commit()}: ttlstore with its default settings, "
                  f"{run['batches']:,} batches in {run['seconds'] / 60:.0f} minutes on {executors(run)}, each with the "
                  "budget it derived "
                  "from Spark's default overhead; the soak's deduplication beside an aggregation over "
                  f"{statistics.median(s['state_rows'] for s in run['samples']):,.0f} rows in state (the median), "
                  "read and rewritten all over as the batches go by, so the cache fills again and again. The limit "
                  "is what YARN or Kubernetes would give each executor's container: its heap plus its overhead."), "",
             "| executor | highest RSS | limit: heap + overhead | below it | highest: the heap's pages | the JVM's "
             "own outside the heap | native | outside the heap (the JVM's own and native) |",
             "|---|---|---|---|---|---|---|---|"]
    outside = {}
    for executor, figures in sorted(limits.items()):
        def highest(figure: str, executor: str = executor) -> float:
            return max((e[figure] for s in run["samples"] if (e := s["executors"].get(executor))
                        and e.get(figure) is not None), default=0) / MiB
        outside[executor] = max((e["rss_bytes"] - e["heap_rss_bytes"] for s in run["samples"]
                                 if (e := s["executors"].get(executor)) and e.get("heap_rss_bytes") is not None),
                                default=0) / MiB
        lines.append(f"| {executor} | {figures['peak_rss_bytes'] / MiB:,.0f} MiB | {figures['limit_bytes'] / MiB:,.0f} "
                     f"MiB: {figures['heap_mib']:,} + {figures['overhead_mib']:,} | "
                     f"{'yes' if figures['within'] else 'no'} | {highest('heap_rss_bytes'):,.0f} MiB | "
                     f"{highest('jvm_non_heap_bytes'):,.0f} MiB | {highest('native_bytes'):,.0f} MiB | "
                     f"{outside[executor]:,.0f} MiB |")
    fine = bool(limits) and all(f["within"] for f in limits.values())
    overhead = next(iter(limits.values()), {}).get("overhead_mib", 0)
    most = max(outside.values(), default=0)
    held = "the overhead held it" if most <= overhead else "the heap's pages it never touched made up the rest"
    lines += ["", wrap(f"Outside the heap the executors held at most {most:,.0f} MiB against an overhead of "
                       f"{overhead:,} MiB: {held}.")]
    return lines + [""], fine


def plot(by_shape: dict[str, dict[str, dict]], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(by_shape), 2, figsize=(13, 4.5 * len(by_shape)), squeeze=False)
    for row, (shape, runs) in zip(axes, by_shape.items(), strict=True):
        for ax, figure in zip(row, ("native_bytes", "state_memory_bytes"), strict=True):
            for name, run in sorted(runs.items()):
                points = series(run, figure)
                ax.plot([p[0] for p in points], [p[1] / MiB for p in points], label=name)
            ax.set_title(f"{FIGURES[figure]} per JVM: {shape}")
            ax.set_xlabel("batch")
            ax.set_ylabel("MiB")
            ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=80)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=ROOT / "bench-output")
    parser.add_argument("--report", type=Path, default=ROOT / "docs" / "memory.md")
    parser.add_argument("--container", action="store_true",
                        help="`make soak-container`'s section (soak-container-ttlstore.json) instead")
    args = parser.parse_args()
    if args.container:
        found = args.out / "soak-container-ttlstore.json"
        if not found.exists():
            sys.exit(f"no {found}: run `make soak-container` first")
        lines, fine = container(json.loads(found.read_text()))
        print("\n".join(lines))
        replace_section(args.report, CONTAINER_SECTION, "\n".join(lines))
        if not fine:
            sys.exit(f"an executor's RSS reached the limit its container would have: see {args.report}")
        return
    by_shape: dict[str, dict[str, dict]] = {}
    for path in sorted(args.out.glob("soak-memory-*.json")):
        run = json.loads(path.read_text())
        shape = run.get("shape", "soak")
        name = path.stem.removeprefix(f"soak-memory-{shape}-")
        by_shape.setdefault(shape, {})[name] = run
    if not by_shape:
        sys.exit(f"no results in {args.out} (soak-memory-<shape>-<run>.json): run `make soak-memory` first")
    lines = [SECTION, "",
             wrap(f"Measured {time.strftime('%Y-%m-%d')} on commit {commit()}, each provider with its default "
                  "settings, Spark's rate source with keys living a fixed time (ttlstore's TTL, or watermarks), so the "
                  "live set stays constant. Per JVM that holds state, the median over each run's last quarter."
                  + ("".join(f" {n}: {LABELS[n]}." for n in sorted({n for r in by_shape.values() for n in r})
                             if n in LABELS))), "",
             "![native and state memory per JVM](memory.png)", ""]
    for shape, runs in by_shape.items():
        lines += table(shape, runs)
    met = [g for shape, runs in by_shape.items() for g in goals(shape, runs)]
    lines += ["Goals:", "", *met, ""] if met else []
    text = "\n".join(lines)
    print(text)
    replace_section(args.report, SECTION, text)
    plot(by_shape, args.report.parent / "memory.png")


if __name__ == "__main__":
    main()
