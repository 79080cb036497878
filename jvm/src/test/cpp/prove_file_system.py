"""Proves that a RocksDB FileSystem of ttlstore's own works inside each Spark line's real librocksdbjni
(issue 51's first step, `make test-native-fs`), before any code of the product relies on it.

For each rocksdbjni the lines ship (their jars in .build/spark-<line>/jars), with the headers that
jvm/spark/rocksdb-headers.tsv names for it (fetched by cargo from its default registry):
1. counting_file_system.cc is built on the old C++ ABI without RTTI, as rocksdbjni is, with
   AddressSanitizer and UndefinedBehaviorSanitizer;
2. every slot of its two vtables (CountingFileSystem, CountingFile) must name the same function as the
   slot of the binary's FileSystemWrapper and FSRandomAccessFileWrapper it overrides or inherits: a
   vtable of the right size with slots in another order calls the wrong function (8.5.3's headers
   against 8.3.2's binary do exactly that, which this script checks that it sees);
3. CountingFileSystemProbe.java opens a DB through it on that rocksdbjni, writes and flushes four
   files, reads every key, compacts, reads again and closes: every answer right, the reads and the
   compaction served through ttlstore's file system, one RocksDB mapped, no sanitizer report.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[3]
HEADERS_TSV = ROOT / "jvm" / "spark" / "rocksdb-headers.tsv"
# Headers that must NOT pass the slot check against 8.3.2's binary: if they passed, the check could not fail.
WRONG_HEADERS = ("8.3.2", "librocksdb-sys", "0.12.0+8.5.3")
# (the binary's class, ours): each of ours derives from the binary's.
VTABLES = (("rocksdb::FileSystemWrapper", "CountingFileSystem"), ("rocksdb::FSRandomAccessFileWrapper", "CountingFile"))
KEYS = 100_000


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


def include_dir(out: Path, crate: str, version: str) -> Path:
    """RocksDB's include directory in `crate` at `version`, fetched by cargo through a manifest of its own."""
    project = out / f"headers-{crate}-{version}"
    project.mkdir(parents=True, exist_ok=True)
    (project / "lib.rs").write_text("")
    (project / "Cargo.toml").write_text(
        f'[package]\nname = "rocksdb-headers"\nversion = "0.0.0"\nedition = "2021"\npublish = false\n\n'
        f'[lib]\npath = "lib.rs"\n\n[dependencies]\n{crate} = {{ version = "={version}", default-features = false }}\n')
    manifest = str(project / "Cargo.toml")
    subprocess.run(["cargo", "fetch", "--quiet", "--manifest-path", manifest], check=True)
    metadata = json.loads(subprocess.run(["cargo", "metadata", "--format-version", "1", "--manifest-path", manifest],
                                         check=True, capture_output=True, text=True).stdout)
    (package,) = [p for p in metadata["packages"] if p["name"] == crate and p["version"] == version]
    include = Path(package["manifest_path"]).parent / "rocksdb" / "include"
    if not (include / "rocksdb" / "file_system.h").is_file():
        raise SystemExit(f"{crate} {version} holds no RocksDB headers at {include}: fix its row in {HEADERS_TSV}")
    return include


def build(out: Path, include: Path) -> Path:
    """The loader and counting_file_system.cc's library, with the sanitizers, into a directory of their own."""
    out.mkdir(parents=True, exist_ok=True)
    java_home = Path(os.path.realpath(subprocess.run(["which", "javac"], capture_output=True, text=True,
                                                     check=True).stdout.strip())).parents[1]
    jni = ["-I", str(java_home / "include"), "-I", str(java_home / "include" / "linux")]
    sanitize = ["-O1", "-g", "-fno-omit-frame-pointer", "-fsanitize=address,undefined", "-fno-sanitize=vptr",
                "-fno-sanitize-recover=all", "-fPIC", "-shared", "-Wall", "-Wextra", "-Werror"]
    native = ROOT / "jvm" / "src" / "main" / "c"
    subprocess.run(["cc", "-std=c11", *sanitize, *jni, "-I", str(native), str(HERE / "load_rocksdb_file_system.c"),
                    str(native / "rocksdbjni_symbols.c"), "-o", str(out / "libload_rocksdb_file_system.so"), "-ldl"],
                   check=True)
    # As rocksdbjni is built: the old C++ ABI (std::string without __cxx11) and no RTTI.
    subprocess.run(["c++", "-std=c++17", *sanitize, "-fno-rtti", "-D_GLIBCXX_USE_CXX11_ABI=0", "-isystem",
                    str(include), *jni, str(HERE / "counting_file_system.cc"),
                    "-o", str(out / "libcounting_file_system.so")], check=True)
    return out


def rocksdbjni_library(out: Path, jar: Path) -> Path:
    target = out / jar.stem / "librocksdbjni-linux64.so"
    if not target.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(zipfile.ZipFile(jar).read("librocksdbjni-linux64.so"))
    return target


def demangled(names: list[str]) -> list[str]:
    return subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True,
                          check=True).stdout.splitlines()


@functools.cache
def elf_tables(library: Path) -> tuple[dict[str, tuple[int, int]], dict[int, str], dict[str, str], list[list[str]]]:
    """A library's symbols (address and size by name), names by address, demangled names, and relocations
    (`readelf -rW` rows): read once per library, however many vtables are looked up in it."""
    symbols: dict[str, tuple[int, int]] = {}
    at: dict[int, str] = {}
    for args in (["-D", "--defined-only"], ["--defined-only"]):
        for line in subprocess.run(["nm", "-S", *args, str(library)], capture_output=True, text=True).stdout.splitlines():
            f = line.split()
            if len(f) == 4:
                symbols[f[3]] = (int(f[0], 16), int(f[1], 16))
                at.setdefault(int(f[0], 16), f[3])
    names = list(symbols)
    relocations = [f for line in subprocess.run(["readelf", "-rW", str(library)], capture_output=True, text=True,
                                                check=True).stdout.splitlines()
                   if len(f := line.split()) >= 4 and re.fullmatch(r"[0-9a-f]{16}", f[0])]
    return symbols, at, dict(zip(names, demangled(names), strict=True)), relocations


def vtable_slots(library: Path, vtable: str) -> list[str | None]:
    """The function each slot of `vtable` points to (demangled, None where no function is set), read from
    the library's symbols and relocations."""
    symbols, at, names, relocations = elf_tables(library)
    wanted = [n for n, d in names.items() if d.replace("(anonymous namespace)::", "") == f"vtable for {vtable}"]
    if not wanted:
        raise SystemExit(f"{library} has no vtable for {vtable}")
    start, size = symbols[wanted[0]]
    slots: dict[int, str] = {}
    for f in relocations:
        if start <= int(f[0], 16) < start + size:
            target = at.get(int(f[3], 16), f[3]) if "RELATIVE" in f[2] else f[4]
            slots[int(f[0], 16) - start] = target.split("@")[0]
    # The first two words are the offset to the top and the type info (none without RTTI).
    entries = [slots.get(offset) for offset in range(16, size, 8)]
    shown = demangled([e for e in entries if e])
    return [None if e is None else shown.pop(0) for e in entries]


def method(function: str | None) -> str | None:
    """A slot's function without its class: `Read(unsigned long, ...) const`, `~` for destructors, None where
    the slot has no function to compare (unset, or pure virtual in the binary)."""
    if function is None or function.startswith("__cxa_pure_virtual"):
        return None
    function = function.replace("(anonymous namespace)::", "")
    paren = function.index("(")
    name = function[:paren].split("::")[-1]
    return "~" if name.startswith("~") else name + function[paren:]


def slot_mismatches(binary: Path, ours: Path) -> list[str]:
    """Slots of our vtables whose function is not the one the binary's slot names."""
    found = []
    for theirs, mine in VTABLES:
        a, b = vtable_slots(binary, theirs), vtable_slots(ours, mine)
        if len(a) != len(b):
            found.append(f"{mine}: {len(b)} slots, {theirs} has {len(a)}")
        for n, (x, y) in enumerate(zip(a, b, strict=False)):  # a length apart is reported above
            if method(x) is not None and method(x) != method(y):
                found.append(f"{mine} slot {n}: {y} where the binary has {x}")
    return found


def sanitizer_runtime(name: str) -> str:
    return subprocess.run(["cc", f"-print-file-name={name}"], capture_output=True, text=True, check=True).stdout.strip()


def probe(libraries: Path, jar: Path) -> dict:
    env = dict(os.environ, LD_PRELOAD=f"{sanitizer_runtime('libasan.so')} {sanitizer_runtime('libubsan.so')}",
               ASAN_OPTIONS="handle_segv=0:detect_leaks=0:allow_user_segv_handler=1",
               UBSAN_OPTIONS="print_stacktrace=1")
    ran = subprocess.run(["java", "-cp", str(jar), str(HERE / "CountingFileSystemProbe.java"), str(libraries),
                          str(KEYS)], capture_output=True, text=True, env=env, timeout=600)
    results = [line.removeprefix("RESULT ") for line in ran.stdout.splitlines() if line.startswith("RESULT ")]
    reports = [line for line in ran.stderr.splitlines() if "Sanitizer" in line or "runtime error" in line]
    if ran.returncode != 0 or len(results) != 1 or reports:
        raise SystemExit(f"the probe on {jar.name} failed (exit {ran.returncode}):\n{ran.stdout}\n{ran.stderr[-4000:]}")
    return json.loads(results[0])


def failures(r: dict) -> list[str]:
    """What the probe's run must show."""
    opened, read, compacted = r["afterFlushes"], r["afterReads"], r["afterCompaction"]
    checks = {
        "one RocksDB mapped": r["rocksdbMapped"] == 1,
        "both sanitizers loaded": r["sanitizers"] == 2,
        "every key found": r["found"] == r["keys"],
        "every key's latest value after the compaction": r["latestAfterCompaction"] == r["keys"],
        "the compaction emptied level 0": r["level0AfterCompaction"] == 0,
        "the flushed files opened through ttlstore's file system": opened[0] >= 4,
        "the reads served through it": read[1] > opened[1] and read[2] > opened[2],
        "the compaction's output opened and read through it": compacted[0] > read[0] and compacted[1] > read[1],
    }
    return [name for name, ok in checks.items() if not ok]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=ROOT / "jvm" / "target" / "native-fs")
    args = parser.parse_args()
    shipped = shipped_rocksdbjni()
    headers = {version: (crate, crate_version) for version, crate, crate_version in rows()}
    missing = sorted(set(shipped) - set(headers))
    if missing:
        raise SystemExit(f"no headers named for rocksdbjni {', '.join(missing)}: add a row to {HEADERS_TSV}")
    failed = []
    for version, jar in sorted(shipped.items()):
        crate, crate_version = headers[version]
        binary = rocksdbjni_library(args.out, jar)
        libraries = build(args.out / f"rocksdbjni-{version}", include_dir(args.out, crate, crate_version))
        mismatches = slot_mismatches(binary, libraries / "libcounting_file_system.so")
        result = probe(libraries, jar) if not mismatches else {}
        problems = mismatches + (failures(result) if result else [])
        print(f"rocksdbjni {version} with {crate} {crate_version}'s headers: "
              + ("; ".join(problems) if problems else
                 f"vtables match slot by slot; {result['keys']:,} keys written, flushed, read, compacted, read again "
                 f"through ttlstore's file system ({result['afterCompaction'][0]} files opened, "
                 f"{result['afterCompaction'][1]:,} reads); one RocksDB mapped; no sanitizer report"), flush=True)
        failed += [f"rocksdbjni {version}: {p}" for p in problems]
    version, crate, crate_version = WRONG_HEADERS
    if version in shipped:
        wrong = build(args.out / "wrong-headers", include_dir(args.out, crate, crate_version))
        if not slot_mismatches(rocksdbjni_library(args.out, shipped[version]), wrong / "libcounting_file_system.so"):
            failed.append(f"the slot check passed {crate} {crate_version}'s headers against rocksdbjni {version}, "
                          "whose slots differ: it cannot fail")
        else:
            print(f"rocksdbjni {version} with {crate} {crate_version}'s headers: refused by the slot check, as it must be")
    if failed:
        raise SystemExit("\n".join(failed))


if __name__ == "__main__":
    sys.exit(main())
