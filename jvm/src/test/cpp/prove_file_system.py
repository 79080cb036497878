"""Proves that a RocksDB FileSystem of ttlstore's own works inside each Spark line's real librocksdbjni
(issue 51, `make test-native-fs`), and that ttlstore's lazy file system (jvm/src/main/cpp) works there.

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
   compaction served through ttlstore's file system, one RocksDB mapped, no sanitizer report;
4. the same for the lazy file system (libttlstore_lazy_fs: its vtables, then LazyFileSystemProbe.java): a DB
   opened with every SST file remote, read, its files brought down and switched to local while another
   thread reads, compacted; compacted with its inputs still remote; a damaged remote block and a failing
   ranged read each fail naming the file.
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

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "main" / "cpp"))
from rocksdb_headers import headers_for, include_dir, shipped_rocksdbjni  # noqa: E402

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[3]
# Headers that must NOT pass the slot check against 8.3.2's binary: if they passed, the check could not fail.
WRONG_HEADERS = ("8.3.2", "librocksdb-sys", "0.12.0+8.5.3")
# Per library built: (the binary's class, ours). Ours derives from the binary's class, or (RemoteFile) from its base
# FSRandomAccessFile, whose every virtual FSRandomAccessFileWrapper overrides: slot for slot the same methods.
VTABLES = {
    "libcounting_file_system.so": (("rocksdb::FileSystemWrapper", "CountingFileSystem"),
                                   ("rocksdb::FSRandomAccessFileWrapper", "CountingFile")),
    "libttlstore_lazy_fs.so": (("rocksdb::FileSystemWrapper", "ttlstore::LazyFileSystem"),
                               ("rocksdb::FSRandomAccessFileWrapper", "ttlstore::RemoteFile")),
}
LAZY_SOURCES = ("ranged_reads.cc", "lazy_file_system.cc", "lazy_file_system_jni.cc")
KEYS = 100_000


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
    # The product's C library: LazyFileSystem.load makes librocksdbjni's symbols global through it.
    subprocess.run(["cc", "-std=c11", *sanitize, *jni, "-I", str(native), *map(str, sorted(native.glob("*.c"))),
                    "-o", str(out / "libttlstore_filter.so"), "-ldl"], check=True)
    # As rocksdbjni is built: the old C++ ABI (std::string without __cxx11) and no RTTI.
    cxx = ["c++", "-std=c++17", *sanitize, "-fno-rtti", "-D_GLIBCXX_USE_CXX11_ABI=0", "-isystem", str(include), *jni]
    subprocess.run([*cxx, str(HERE / "counting_file_system.cc"), "-o", str(out / "libcounting_file_system.so")],
                   check=True)
    product = ROOT / "jvm" / "src" / "main" / "cpp"
    subprocess.run([*cxx, "-I", str(product), *(str(product / source) for source in LAZY_SOURCES),
                    "-o", str(out / "libttlstore_lazy_fs.so")], check=True)
    return out


def java_classes(out: Path, jar: Path) -> Path:
    """io.ttlstore.store.lazyfs's classes and LazyFileSystemProbe, compiled against `jar` (a rocksdbjni) into one
    directory: one class loader for both, which the native libraries the probe loads then serve."""
    classes = out / "classes"
    sources = sorted((ROOT / "jvm" / "src" / "main" / "java" / "io" / "ttlstore" / "store" / "lazyfs").glob("*.java"))
    subprocess.run(["javac", "--release", "17", "-cp", str(jar), "-d", str(classes), *map(str, sources),
                    str(HERE / "LazyFileSystemProbe.java")], check=True)
    return classes


def jar_member(into: Path, jar: Path, name: str) -> Path:
    """The member `name` of `jar`, written once into the directory `into` under its own file name."""
    target = into / name.split("/")[-1]
    if not target.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(jar) as z:
            target.write_bytes(z.read(name))
    return target


def rocksdbjni_library(out: Path, jar: Path, member: str = "librocksdbjni-linux64.so") -> Path:
    """A librocksdbjni of rocksdbjni's `jar` (this machine's by default), in a directory of that jar's under `out`."""
    return jar_member(out / jar.stem, jar, member)


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
    for theirs, mine in VTABLES[ours.name]:
        a, b = vtable_slots(binary, theirs), vtable_slots(ours, mine)
        if len(a) != len(b):
            found.append(f"{mine}: {len(b)} slots, {theirs} has {len(a)}")
        for n, (x, y) in enumerate(zip(a, b, strict=False)):  # a length apart is reported above
            if method(x) is not None and method(x) != method(y):
                found.append(f"{mine} slot {n}: {y} where the binary has {x}")
    return found


def sanitizer_runtime(name: str) -> str:
    return subprocess.run(["cc", f"-print-file-name={name}"], capture_output=True, text=True, check=True).stdout.strip()


def probe(program: str, libraries: Path, jar: Path, classes: Path | None = None) -> dict:
    """Runs `program` (a single-file Java program here, or a class of `classes`) on `jar` under the sanitizers; what
    it printed after RESULT."""
    env = dict(os.environ, LD_PRELOAD=f"{sanitizer_runtime('libasan.so')} {sanitizer_runtime('libubsan.so')}",
               ASAN_OPTIONS="handle_segv=0:detect_leaks=0:allow_user_segv_handler=1",
               UBSAN_OPTIONS="print_stacktrace=1")
    classpath = os.pathsep.join(str(p) for p in (jar, classes) if p is not None)
    ran = subprocess.run(["java", "-cp", classpath, program if classes else str(HERE / program), str(libraries),
                          str(KEYS)],
                         capture_output=True, text=True, env=env, timeout=600)
    results = [line.removeprefix("RESULT ") for line in ran.stdout.splitlines() if line.startswith("RESULT ")]
    reports = [line for line in ran.stderr.splitlines() if "Sanitizer" in line or "runtime error" in line]
    if ran.returncode != 0 or len(results) != 1 or reports:
        raise SystemExit(f"{program} on {jar.name} failed (exit {ran.returncode}):\n{ran.stdout}\n{ran.stderr[-4000:]}")
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


def lazy_failures(r: dict) -> list[str]:
    """What LazyFileSystemProbe's run must show. Counts: [remote files registered, remote opens, ranged reads,
    bytes they read, reads switched to local]."""
    keys, files = KEYS, r["sstFiles"]
    at_open, remotely = r["lazyOpen"], r["afterRemoteReads"]
    checks = {
        "one RocksDB mapped": r["rocksdbMapped"] == 1,
        "both sanitizers loaded": r["sanitizers"] == 2,
        "the DB opened with no SST file local, each opened remotely": r["localSstAtOpen"] == 0 and at_open[0] == files
        and at_open[1] == files and files >= 4,
        "every key's latest value read remotely": r["latestRemotely"] == keys and remotely[2] > at_open[2],
        "every key's latest value while the files came down": r["latestDuringHydration"] == keys,
        "every file switched to local": r["markedLocal"] == files,
        "after the switch, the readers opened remotely read locally": r["latestLocally"] == keys
        and r["rangedReadsAfterHydration"] == 0 and r["switchedReadsAfterHydration"] > 0,
        "the compaction after hydration emptied level 0, values kept": r["level0AfterCompaction"] == 0
        and r["latestAfterCompaction"] == keys,
        "a compaction of remote inputs kept the values and left the registry": r["latestAfterUnhydratedCompaction"]
        == keys and r["remoteAfterUnhydratedCompaction"] == 0 and r["localSstAfterUnhydratedCompaction"] == 1,
        "the checkpoint's copies were not deleted": r["checkpointSstIntact"],
        "a damaged remote block failed by its checksum, naming the file": r["damagedFile"] in r["damagedRead"]
        and "checksum" in r["damagedRead"],
        "a failing ranged read failed with its error, naming the file": r["failingFile"] in r["failingRead"]
        and "reset the connection" in r["failingRead"],
        "remote mode: every file RocksDB wrote demoted while another thread read, every read right": r[
            "remoteModeDemoted"] == 4 and r["remoteModeLatestDuringDemotion"] == 3 * keys
        and r["remoteModeLocalSstAfterDemotion"] == 0,
        "remote mode: the demoted files read remotely": r["remoteModeLatestRemotely"] == keys
        and r["remoteModeRangedReads"] > 0,
        "remote mode: a file RocksDB does not have is not demoted": r["remoteModeDemoteMissing"] is False,
        "remote mode: a checkpoint of the DB holds a marker for each remote file": r["remoteModeMarkers"] == 4,
        "remote mode: a compaction of remote files wrote one local file, values kept": r[
            "remoteModeLocalSstAfterCompaction"] == 1 and r["remoteModeLatestAfterCompaction"] == keys
        and r["remoteModeCheckpointIntact"] == 4,
    }
    return [name for name, ok in checks.items() if not ok]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=ROOT / "jvm" / "target" / "native-fs")
    args = parser.parse_args()
    shipped = shipped_rocksdbjni()
    failed = []
    for version, jar in sorted(shipped.items()):
        crate, crate_version = headers_for(version)
        binary = rocksdbjni_library(args.out, jar)
        libraries = build(args.out / f"rocksdbjni-{version}", include_dir(args.out, crate, crate_version))
        mismatches = slot_mismatches(binary, libraries / "libcounting_file_system.so")
        result = probe("CountingFileSystemProbe.java", libraries, jar) if not mismatches else {}
        problems = mismatches + (failures(result) if result else [])
        print(f"rocksdbjni {version} with {crate} {crate_version}'s headers: "
              + ("; ".join(problems) if problems else
                 f"vtables match slot by slot; {result['keys']:,} keys written, flushed, read, compacted, read again "
                 f"through ttlstore's file system ({result['afterCompaction'][0]} files opened, "
                 f"{result['afterCompaction'][1]:,} reads); one RocksDB mapped; no sanitizer report"), flush=True)
        lazy_mismatches = slot_mismatches(binary, libraries / "libttlstore_lazy_fs.so")
        lazy = {} if lazy_mismatches else probe("LazyFileSystemProbe", libraries, jar, java_classes(libraries, jar))
        lazy_problems = lazy_mismatches + (lazy_failures(lazy) if lazy else [])
        print(f"rocksdbjni {version}, the lazy file system: "
              + ("; ".join(lazy_problems) if lazy_problems else
                 f"vtables match slot by slot; {lazy['sstFiles']} SST files served remotely at open "
                 f"({lazy['afterRemoteReads'][2]:,} ranged reads for {KEYS:,} keys), switched to local while read, "
                 f"compacted; a damaged block and a failing read named the file; remote mode: "
                 f"{lazy['remoteModeDemoted']} written files demoted while read, read remotely, "
                 f"{lazy['remoteModeMarkers']} markers in a checkpoint, compacted; one RocksDB mapped; "
                 f"no sanitizer report"), flush=True)
        failed += [f"rocksdbjni {version}: {p}" for p in problems + lazy_problems]
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
