"""Writes what `make chaos` measured into docs/reliability.md: the damage matrix's outcome per case
(bench-output/damage.json, written by tests/test_damage_matrix.py) and the fuzzed readers' outcomes
(bench-output/fuzz.json, written by ReaderFuzzSuite). Each goes in its own section, replaced whole.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DAMAGE = "## Damage matrix outcomes (`make chaos`)"
FUZZ = "## Fuzzed readers (`make chaos`)"


def replace_section(doc: Path, heading: str, text: str) -> None:
    """Replaces the section that starts with `heading` (up to the next `## `) with `text`, or appends it."""
    content = doc.read_text()
    start = content.find(heading)
    if start < 0:
        content = content.rstrip("\n") + "\n\n" + text
    else:
        end = content.find("\n## ", start + len(heading))
        content = content[:start] + text + (content[end + 1:] if end >= 0 else "")
    doc.write_text(content)


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=ROOT / "bench-output")
    parser.add_argument("--report", type=Path, default=ROOT / "docs" / "reliability.md")
    args = parser.parse_args()
    replace_section(args.report, DAMAGE, damage_section(json.loads((args.out / "damage.json").read_text())))
    replace_section(args.report, FUZZ, fuzz_section(json.loads((args.out / "fuzz.json").read_text())))


if __name__ == "__main__":
    main()
