"""Writes what `make chaos` measured into docs/reliability.md: the damage matrix's outcome per case
(bench-output/damage.json, written by tests/test_damage_matrix.py), the fuzzed readers' outcomes
(bench-output/fuzz.json, written by ReaderFuzzSuite) and the crash loop's variants (crash_loop.py).
Each goes in its own section, replaced whole; a crash loop that ran only some variants keeps the
other variants' rows, each with the date it was measured.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DAMAGE = "## Damage matrix outcomes (`make chaos`)"
FUZZ = "## Fuzzed readers (`make chaos`)"
CRASH_LOOP = "## Crash loop (`make chaos`)"


def commit() -> str:
    """The commit measured: the short hash of the work tree's HEAD."""
    return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()


def executors(run: dict) -> str:
    """The run's executors as its `limit` figures name them (heap and the overhead each logged)."""
    limits = list(run.get("limit", {}).values())
    if not limits:
        return "`local-cluster` executors"
    count = {1: "one", 2: "two", 3: "three", 4: "four"}.get(len(limits), f"{len(limits):,}")
    return (f"{count} `local-cluster` executors of {limits[0]['heap_mib']:,} MiB (Spark's overhead: "
            f"{limits[0]['overhead_mib']:,} MiB)")


def replace_section(doc: Path, heading: str, text: str) -> None:
    """Replaces the section that starts with `heading` (up to the next `## `) with `text`, or appends it."""
    content = doc.read_text()
    start = content.find(heading)
    if start < 0:
        content = content.rstrip("\n") + "\n\n" + text
    else:
        end = content.find("\n## ", start + len(heading))
        content = content[:start] + text + (content[end:] if end >= 0 else "")
    doc.write_text(content)


def section_of(doc: Path, heading: str) -> str:
    """The section that starts with `heading`, up to the next `## ` (empty if there is none)."""
    content = doc.read_text()
    start = content.find(heading)
    if start < 0:
        return ""
    end = content.find("\n## ", start + len(heading))
    return content[start:end if end >= 0 else len(content)]


def damage_section(outcomes: dict[str, str]) -> str:
    faults = list(dict.fromkeys(k.split("|")[2] for k in outcomes))
    rows = list(dict.fromkeys(tuple(k.split("|")[:2]) for k in outcomes))
    lines = [DAMAGE, "",
             f"Measured {time.strftime('%Y-%m-%d')}. tests/test_damage_matrix.py: each kind of file in a store's "
             "`ttlstore/` folder damaged four ways, at the latest version and an older one, then the query restarted. "
             "\"recovered\": the restart computed what the undamaged checkpoint computes; \"named\": it failed with "
             "this error, naming the file, and with the file put back the checkpoint went on with the undamaged "
             "results. No case lost or changed committed state. Which SST is the latest, and whether the version "
             "loaded still needs it, depends on RocksDB's compactions, so its row can differ between runs. Damaged "
             "snapshots and SSTs are repaired around with Spark's default autoSnapshotRepair (an older snapshot "
             "plus changelogs); with that setting off they fail by name (SNAPSHOT_CORRUPTED, SST_CORRUPTED, "
             "SST_MISSING).", "",
             "| file | version | " + " | ".join(faults) + " |", "|---|---|" + "---|" * len(faults)]
    for kind, which in rows:
        cells = [outcomes.get(f"{kind}|{which}|{f}", "") for f in faults]
        lines.append(f"| {kind} | {which} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def fuzz_section(outcomes: dict[str, dict[str, int]]) -> str:
    total = sum(sum(c.values()) for c in outcomes.values())
    lines = [FUZZ, "",
             f"Measured {time.strftime('%Y-%m-%d')}. ReaderFuzzSuite (jvm/src/test/scala/io/ttlstore/fuzz): {total} "
             "damaged files (random bytes, flipped bits, cuts, huge or negative length fields, bytes inserted, "
             "removed or repeated), each loaded by a fresh ttlstore provider as a restarted query loads it. Every "
             "input loaded or failed with a named error: none raised another exception, hung, or allocated more "
             "than 256 MiB. \"loaded\": the load gave exactly the state the file held. \"loaded changed\": only "
             "Spark's files, which carry no checksum, can load so, and the test requires that Spark's own provider "
             "read the same changed rows from the same damaged checkpoint (damage no reader of the format can see; "
             "see \"What no reader can see\" above). \"inside its compression\": the records were damaged and "
             "compressed again, so that damaged length fields reach the reader.", "",
             "| file | inputs | loaded | loaded changed | named errors |", "|---|---|---|---|---|"]
    for kind, counts in outcomes.items():
        errors = ", ".join(f"{name} {n}" for name, n in counts.items() if name not in ("loaded", "loaded changed"))
        lines.append(f"| {kind} | {sum(counts.values())} | {counts.get('loaded', 0)} | "
                     f"{counts.get('loaded changed', 0)} | {errors} |")
    return "\n".join(lines) + "\n"


def crash_loop_section(report: dict, titles: list[str], earlier: str) -> str:
    """The crash loop's section: a row per variant of `titles`, from `report` for the variants it ran, else the
    variant's row as `earlier` (the section as it was) had it."""
    kept = {title: line for line in earlier.splitlines() for title in titles if line.startswith(f"| {title} |")}
    lines = [CRASH_LOOP, "",
             f"tests/chaos/crash_loop.py, seed {report['seed']}: the queries over input files of {report['rows']} "
             "events, the driver killed with SIGKILL after a random delay of 0-8 s once its queries "
             "had started, restarted until the input was done; results compared with the same queries run without "
             "faults on the reference provider (the TTL-expiring variant: ttlstore with the same settings, its running "
             "counts restarting where rows expired). On `local-cluster`, an executor is also killed after each start: "
             "0-3 s in, while the stores load, or (the variants on the emulated object store) the first to log that a "
             "store opened before its files were local, or that it brings files down into its remote-mode budget, "
             "0-1.5 s after it does; the executors' logs count the stores that opened so and those a kill met before "
             "all their files were local.", "",
             "| variant | measured | input files | kills survived (driver, executor) | reference | results equal to "
             "the run without faults | time |",
             "|---|---|---|---|---|---|---|"]
    for title in titles:
        v = report["variants"].get(title)
        if v is None:
            if title in kept:
                lines.append(kept[title])
            continue
        equal = f"all {len(v['equal'])} queries" if all(v["equal"].values()) else \
            "NOT " + ", ".join(q for q, ok in v["equal"].items() if not ok)
        if v.get("restarted_counts") is not None:
            equal += f"; {v['restarted_counts']} running counts restarted after expiry"
        if v.get("lazy_opens") and v["lazy_opens"][0]:
            equal += (f"; {v['lazy_opens'][0]} stores opened before their files were local, {v['lazy_opens'][1]} of "
                      "them killed before the files all were")
        files = f"{v['files']}" + (f" of {v['events']} events" if v.get("events", report["rows"]) != report["rows"] else "")
        lines.append(f"| {title} | {report['measured']} | {files} | {v['kills']}, {v['executor_kills']} | "
                     f"{v['reference']} | {equal} | {v['seconds'] // 60} min |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=ROOT / "bench-output")
    parser.add_argument("--report", type=Path, default=ROOT / "docs" / "reliability.md")
    args = parser.parse_args()
    replace_section(args.report, DAMAGE, damage_section(json.loads((args.out / "damage.json").read_text())))
    replace_section(args.report, FUZZ, fuzz_section(json.loads((args.out / "fuzz.json").read_text())))


if __name__ == "__main__":
    main()
