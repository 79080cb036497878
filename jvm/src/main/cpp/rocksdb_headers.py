"""RocksDB's C++ headers for each rocksdbjni the Spark lines ship, for the native code that derives from RocksDB's
classes (the lazy file system, jvm/src/main/cpp). rocksdbjni carries no headers and nothing of RocksDB's source is
copied into this project: cargo fetches, with its default registry, the crate that jvm/spark/rocksdb-headers.tsv
names for that version (one that bundles RocksDB's source).

`python3 jvm/src/main/cpp/rocksdb_headers.py VERSION...` links .build/rocksdb-headers/<VERSION> to the include
directory of the headers for rocksdbjni VERSION (with no VERSION, for each rocksdbjni in .build/spark-*/jars): sbt
runs it when it builds a line's jar (build.sbt, lazyFileSystem). jvm/src/test/cpp/prove_file_system.py imports it.
Standard library only.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[4]
HEADERS_TSV = ROOT / "jvm" / "spark" / "rocksdb-headers.tsv"
LINKS = ROOT / ".build" / "rocksdb-headers"


def rows() -> list[tuple[str, str, str]]:
    """(rocksdbjni version, crate, crate version) per row of jvm/spark/rocksdb-headers.tsv."""
    lines = [line.split("\t") for line in HEADERS_TSV.read_text().splitlines() if line and not line.startswith("#")]
    return [(f[0], f[1], f[2]) for f in lines]


def shipped_rocksdbjni() -> dict[str, Path]:
    """Each rocksdbjni version the lines' jars hold, with one of its jars."""
    jars = sorted((ROOT / ".build").glob("spark-*/jars/rocksdbjni-*.jar"))
    if not jars:
        raise SystemExit("no Spark line's jars in .build/spark-*/jars: run `make spark-jars` first")
    return {re.sub(r"^rocksdbjni-|\.jar$", "", jar.name): jar for jar in jars}


def include_dir(work: Path, crate: str, version: str) -> Path:
    """RocksDB's include directory in `crate` at `version`, fetched by cargo through a manifest of its own in `work`."""
    project = work / f"headers-{crate}-{version}"
    project.mkdir(parents=True, exist_ok=True)
    (project / "lib.rs").write_text("")
    (project / "Cargo.toml").write_text(
        f'[package]\nname = "rocksdb-headers"\nversion = "0.0.0"\nedition = "2021"\npublish = false\n\n'
        f'[lib]\npath = "lib.rs"\n\n[dependencies]\n{crate} = {{ version = "={version}", default-features = false }}\n')
    manifest = str(project / "Cargo.toml")
    try:
        subprocess.run(["cargo", "fetch", "--quiet", "--manifest-path", manifest], check=True)
    except FileNotFoundError:
        raise SystemExit("cargo (Rust's) is needed to fetch RocksDB's headers from crates.io: install it "
                         "(docs/development.md, `What a machine needs`)") from None
    metadata = json.loads(subprocess.run(["cargo", "metadata", "--format-version", "1", "--manifest-path", manifest],
                                         check=True, capture_output=True, text=True).stdout)
    (package,) = [p for p in metadata["packages"] if p["name"] == crate and p["version"] == version]
    include = Path(package["manifest_path"]).parent / "rocksdb" / "include"
    if not (include / "rocksdb" / "file_system.h").is_file():
        raise SystemExit(f"{crate} {version} holds no RocksDB headers at {include}: fix its row in {HEADERS_TSV}")
    return include


def headers_for(version: str) -> tuple[str, str]:
    """The crate and its version that jvm/spark/rocksdb-headers.tsv names for rocksdbjni `version`."""
    named = {v: (crate, crate_version) for v, crate, crate_version in rows()}
    if version not in named:
        raise SystemExit(f"no headers named for rocksdbjni {version}: add a row to {HEADERS_TSV}")
    return named[version]


def main() -> None:
    LINKS.mkdir(parents=True, exist_ok=True)
    for version in sys.argv[1:] or sorted(shipped_rocksdbjni()):
        crate, crate_version = headers_for(version)
        include = include_dir(LINKS / "cargo", crate, crate_version)
        link = LINKS / version
        made = LINKS / f".{version}.new"
        made.unlink(missing_ok=True)
        made.symlink_to(include)
        made.replace(link)
        print(f"rocksdbjni {version}: RocksDB's headers from {crate} {crate_version} ({link} -> {include})")


if __name__ == "__main__":
    sys.exit(main())
