"""`make soak`'s report: the soak's figures per run into docs/reliability.md ("Soak (make soak)") and its
plot into docs/soak.png, from bench-output/soak-<run>.json (tests/chaos/soak.py --out); with `--remote`,
remote mode's soak (`make soak-remote`) into its own section and docs/soak-remote.png. It exits with 1 if
a figure of ttlstore's grew beyond its band."""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

from memory_report import goals  # type: ignore[import-not-found]
from report import commit, executors, replace_section  # type: ignore[import-not-found]

ROOT = Path(__file__).resolve().parents[2]
SECTION = "## Soak (`make soak`)"
REMOTE_SECTION = "## Soak in remote mode (`make soak-remote`)"
MiB = 1 << 20
#: Figures in the table and the plot: (label, unit divisor, unit).
FIGURES = {"rss_bytes": ("RSS", MiB, "MiB"), "heap_rss_bytes": ("RSS: heap pages", MiB, "MiB"),
           "off_heap_rss_bytes": ("RSS: outside the heap", MiB, "MiB"),
           "jvm_non_heap_bytes": ("the JVM's own outside the heap", MiB, "MiB"),
           "native_bytes": ("native (outside the heap, not the JVM's)", MiB, "MiB"), "heap_after_gc_bytes": ("heap after GC", MiB, "MiB"),
           "threads": ("threads", 1, ""), "open_fds": ("open files", 1, ""),
           "state_memory_bytes": ("state memory", MiB, "MiB"), "local_sst_bytes": ("local SST", MiB, "MiB"),
           "checkpoint_bytes": ("checkpoint", MiB, "MiB"), "checkpoint_files": ("checkpoint files", 1, ""),
           "batch_ms": ("batch", 1, "ms")}
NAMES = {"ttlstore": "ttlstore, TTL on", "rocksdb": "Spark's RocksDB provider + changelog, watermark",
         "ttlstore-remote": "ttlstore, TTL on, remote mode"}


def section(runs: dict[str, dict], title: str = SECTION, image: str = "soak.png") -> str:
    first = next(iter(runs.values()))
    remote = [f"{r['remote_mb']} MiB of local SST files per executor (`remote.localCacheMB`), the rest read from the "
              "checkpoint" for r in runs.values() if r.get("remote_mb")]
    lines = [title, "",
             f"Measured {time.strftime('%Y-%m-%d')} on commit {commit()}. tests/chaos/soak.py: a deduplication and an "
             f"aggregation side by side on {executors(first)}, each provider with its default settings (ttlstore: "
             f"{budget(runs)}{''.join(f'; in remote mode, {r}' for r in remote)}), Spark's "
             f"default maintenance, {first['rate']:,} new keys a second from "
             f"Spark's rate source, a batch every {first['trigger']}, keys living {first['ttl_s']} s (ttlstore's TTL; "
             "the RocksDB provider's watermarks, each set so that its operator keeps a key as long), so the live set "
             "stays constant and the same on both. Per figure: the median over the "
             "second half of the run, and the drift a least-squares trend adds across that half against the band "
             f"it must not rise beyond (per executor where the figure is one). ![the soak's figures]({image})", "",
             "| figure | " + " | ".join(f"{NAMES.get(p, p)}: median, drift (band)" for p in runs) + " |",
             "|---|" + "---|" * len(runs)]
    order = list(FIGURES)
    labels = sorted({k for r in runs.values() for k in r["verdicts"]},
                    key=lambda k: (order.index(k.split(" (")[0]) if k.split(" (")[0] in order else len(order), k))
    for label in labels:
        base = label.split(" (")[0]
        name, div, unit = FIGURES.get(base, (base, 1, ""))
        cells = []
        for run in runs.values():
            v = run["verdicts"].get(label)
            digits = 1 if unit else 0
            cells.append("" if v is None else
                         f"{v['median'] / div:,.{digits}f}{' ' + unit if unit else ''}, {v['drift'] / div:+,.{digits}f} "
                         + ("(not judged)" if v["band"] is None else f"({v['band'] / div:,.{digits}f})")
                         + (" **out of band**" if v["within"] is False else ""))
        lines.append(f"| {name}{label[len(base):]} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("Runs: " + "; ".join(f"{NAMES.get(p, p)} {r['batches']:,} batches in {r['seconds'] / 60:.0f} min, "
                                       f"{live_rows(r):,.0f} rows in state (median)" for p, r in runs.items()) + ".")
    memory_goals = goals("soak", runs)
    if memory_goals:  # docs/memory.md's goals, judged per executor over each run's last quarter
        lines += ["", "Memory, per executor over each run's last quarter ([memory.md](memory.md)):", "", *memory_goals]
    return "\n".join(lines) + "\n"


def budget(runs: dict[str, dict]) -> str:
    """ttlstore's memory budget per executor, as its progress reported it."""
    run = next((r for p, r in runs.items() if p.startswith("ttlstore")), None)
    total, count = (run or {}).get("memory", {}).get("memory_budget_bytes"), len((run or {}).get("limit", {}))
    if not total or not count:
        return "the memory budget it derives"
    return f"a memory budget of {total / count / MiB:,.0f} MiB per executor, derived from the overhead"


def live_rows(run: dict) -> float:
    return statistics.median(s["state_rows"] for s in run["samples"])


def plot(runs: dict[str, dict], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = ["rss_bytes", "heap_rss_bytes", "off_heap_rss_bytes", "state_memory_bytes", "open_fds",
             "local_sst_bytes", "checkpoint_bytes", "checkpoint_files", "batch_ms"]
    fig, axes = plt.subplots(3, 3, figsize=(15, 12))
    for ax, figure in zip(axes.flat, shown, strict=True):
        name, div, unit = FIGURES[figure]
        for provider, run in runs.items():
            points = []
            for s in run["samples"]:
                per_executor = [e.get(figure) for e in s.get("executors", {}).values() if e.get(figure) is not None]
                value = max(per_executor) if per_executor else s.get(figure)
                if value is not None:
                    points.append((s["batch"], value / div))
            ax.plot([p[0] for p in points], [p[1] for p in points], label=NAMES.get(provider, provider))
        if figure == "batch_ms":  # the first batches (the JVMs' warm-up) would flatten the rest
            steady = sorted(s.get(figure) or 0 for run in runs.values() for s in run["samples"])
            ax.set_ylim(0, 1.5 * steady[int(0.99 * (len(steady) - 1))])
        ax.set_title(f"{name}{' per executor (largest)' if figure in ('rss_bytes', 'heap_rss_bytes', 'off_heap_rss_bytes', 'open_fds') else ''}")
        ax.set_xlabel("batch")
        ax.set_ylabel(unit)
    axes.flat[0].legend()
    fig.tight_layout()
    fig.savefig(out, dpi=80)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=ROOT / "bench-output")
    parser.add_argument("--report", type=Path, default=ROOT / "docs" / "reliability.md")
    parser.add_argument("--remote", action="store_true", help="remote mode's soak (soak-ttlstore-remote.json)")
    args = parser.parse_args()
    names, title, image = ((["ttlstore-remote"], REMOTE_SECTION, "soak-remote.png") if args.remote
                           else (["ttlstore", "rocksdb"], SECTION, "soak.png"))
    runs = {p: json.loads((args.out / f"soak-{p}.json").read_text()) for p in names
            if (args.out / f"soak-{p}.json").is_file()}
    if not runs:
        sys.exit(f"no soak results in {args.out} (soak-{'/'.join(names)}.json): run the soak first")
    replace_section(args.report, title, section(runs, title, image))
    plot(runs, args.report.parent / image)
    out_of_band = [f"{p}: {k}" for p, r in runs.items() if p.startswith("ttlstore")
                   for k, v in r["verdicts"].items() if v["within"] is False]
    if out_of_band:
        print(f"ttlstore's figures out of band: {out_of_band}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
