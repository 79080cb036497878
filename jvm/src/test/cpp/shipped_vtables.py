"""The lazy file system each line's jar ships, for every platform it carries, checked slot by slot against the
librocksdbjni of that platform in the rocksdbjni the line ships (part of `make test`, once the jars are built).

`make test-native-fs` (prove_file_system.py) builds the lazy file system for this machine and runs a DB
through it under sanitizers; a library for another architecture (linux-aarch64 on an x86_64 machine) cannot
run here, but its vtables can be read. A slot that names another function than the binary's calls the
wrong code on that platform, so this reads the libraries the jars carry, as users get them, and fails
naming the jar, the platform and the slot.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from prove_file_system import ROOT, jar_member, rocksdbjni_library, slot_mismatches  # noqa: E402

LAZY_FS = "libttlstore_lazy_fs.so"
#: ttlstore's platform directory in a jar, and the name of the same platform's library in rocksdbjni's jar.
ROCKSDBJNI_LIBRARY = {"linux-x86_64": "librocksdbjni-linux64.so", "linux-aarch64": "librocksdbjni-linux-aarch64.so"}


def rocksdbjni_of(jar: Path) -> Path:
    """The rocksdbjni jar of the Spark line `jar` is built for (each of a line's rows ships the same)."""
    line = re.fullmatch(r"ttlstore-spark-([0-9.]+)_.*\.jar", jar.name)
    if not line:
        raise SystemExit(f"{jar} is not named as a line's jar")
    found = sorted((ROOT / ".build").glob(f"spark-{line.group(1)}*/jars/rocksdbjni-*.jar"))
    if not found:
        raise SystemExit(f"no rocksdbjni for {jar.name} in .build/spark-{line.group(1)}*/jars: run `make spark-jars`")
    return found[0]


def lazy_file_systems(jar: Path, work: Path) -> dict[str, Path]:
    """The lazy file system `jar` carries, by platform."""
    with zipfile.ZipFile(jar) as z:
        members = [n for n in z.namelist() if n.endswith(f"/{LAZY_FS}")]
    return {m.split("/")[-2]: jar_member(work / jar.stem / m.split("/")[-2], jar, m) for m in members}


def binary(rocksdbjni: Path, platform: str, work: Path) -> Path:
    if platform not in ROCKSDBJNI_LIBRARY:
        raise SystemExit(f"no librocksdbjni is known for the platform {platform}")
    return rocksdbjni_library(work, rocksdbjni, ROCKSDBJNI_LIBRARY[platform])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--require", nargs="*", default=[], help="platforms every jar must carry")
    args = parser.parse_args()
    jars = sorted((ROOT / "jvm" / "target" / "jars").glob("ttlstore-spark-*.jar"))
    if not jars:
        raise SystemExit("no jars in jvm/target/jars: run `make jar` first")
    failed = []
    with tempfile.TemporaryDirectory() as temporary:
        work = Path(temporary)
        carried = {jar: lazy_file_systems(jar, work) for jar in jars}
        rocksdbjnis = {jar: rocksdbjni_of(jar) for jar in jars}
        for jar, libraries in carried.items():
            rocksdbjni = rocksdbjnis[jar]
            failed += [f"{jar.name} carries no lazy file system for {p}" for p in args.require if p not in libraries]
            for platform, library in sorted(libraries.items()):
                found = slot_mismatches(binary(rocksdbjni, platform, work), library)
                failed += [f"{jar.name}, {platform}, against {rocksdbjni.name}: {m}" for m in found]
            print(f"{jar.name}: the lazy file system's vtables against {rocksdbjni.name}'s, slot by slot: "
                  + (", ".join(sorted(libraries)) or "no platform carried"), flush=True)
        # The check can fail on every platform: a library built for one rocksdbjni, against another's binary.
        by_version = {rocksdbjni: jar for jar, rocksdbjni in rocksdbjnis.items()}
        if len(by_version) > 1:
            (first, jar), (other, _) = sorted(by_version.items())[:2]
            for platform, library in sorted(carried[jar].items()):
                if not slot_mismatches(binary(other, platform, work), library):
                    failed.append(f"{jar.name}'s {platform} library passed the slot check against {other.name}, built "
                                  f"for {first.name}: the check cannot fail there")
                else:
                    print(f"{jar.name}'s {platform} library against {other.name}'s binary: refused, as it must be")
    if failed:
        raise SystemExit("\n".join(failed))


if __name__ == "__main__":
    main()
