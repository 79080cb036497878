"""The JVM sources keep the shape docs/architecture.md draws: small files, no cycle between files,
and packages that depend on each other in one direction only; checked for every Spark line's
sources (the shared ones and that line's adapters)."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import pytest

from conftest import ROOT, SPARK_LINES, adapter_dirs, read_capabilities

JVM = ROOT / "jvm"
MAIN = JVM / "src" / "main" / "scala"
#: A main source file longer than this is flagged: it may hold two concepts (../shared/STYLE.md). A file that holds
#: one concept stays whole, named in LONG_BY_CONCEPT with that concept: the cap asks for a look, never a split.
MAX_LINES = 400
LONG_BY_CONCEPT: dict[str, str] = {}
#: An adapter holds what one or a few Spark lines do differently, and no more.
MAX_ADAPTER_LINES = 60
#: Every build: (Spark line, Scala binary version), as the rows of jvm/spark/lines.tsv.
BUILDS = [(line.line, line.scala) for line in SPARK_LINES]
LINES = list(dict.fromkeys(line for line, _ in BUILDS))

#: What every package of one store may use.
_STORE_BELOW = {"io.ttlstore.errors", "io.ttlstore.bytes", "io.ttlstore.ttl", "io.ttlstore.config",
                "io.ttlstore.checkpoint", "io.ttlstore.legacy", "io.ttlstore.spark", "io.ttlstore.threads"}
#: Each package and the packages it may use; anything else is a dependency the other way round.
_LAYERS: dict[str, set[str]] = {
    "io.ttlstore.errors": set(),
    "io.ttlstore.threads": set(),
    "io.ttlstore.bytes": set(),
    "io.ttlstore.spark": {"io.ttlstore.errors"},
    "io.ttlstore.ttl": {"io.ttlstore.errors"},
    "io.ttlstore.config": {"io.ttlstore.errors", "io.ttlstore.ttl"},
    "io.ttlstore.checkpoint": {"io.ttlstore.errors", "io.ttlstore.bytes", "io.ttlstore.ttl", "io.ttlstore.spark",
                               "io.ttlstore.threads"},
    "io.ttlstore.legacy": {"io.ttlstore.errors", "io.ttlstore.bytes", "io.ttlstore.checkpoint", "io.ttlstore.spark"},
    # One store, bottom up: its byte layouts, the native libraries, the RocksDB handle and its local
    # directories, the local instance and its loading, the version a task holds.
    "io.ttlstore.store.codec": _STORE_BELOW,
    "io.ttlstore.store.nativelib": _STORE_BELOW | {"io.ttlstore.store.codec"},
    "io.ttlstore.store.rocksdb": _STORE_BELOW | {"io.ttlstore.store.codec", "io.ttlstore.store.nativelib"},
    "io.ttlstore.store.local": _STORE_BELOW | {"io.ttlstore.store.codec", "io.ttlstore.store.nativelib",
                                               "io.ttlstore.store.rocksdb"},
    "io.ttlstore.store.version": _STORE_BELOW | {"io.ttlstore.store.codec", "io.ttlstore.store.rocksdb",
                                                 "io.ttlstore.store.local", "io.ttlstore.readahead"},
    # The read-ahead node and its rule, and what a store version offers it: above the settings, below the stores.
    "io.ttlstore.readahead": {"io.ttlstore.errors", "io.ttlstore.config", "io.ttlstore.spark"},
    "io.ttlstore.reader": {"io.ttlstore.errors", "io.ttlstore.ttl", "io.ttlstore.checkpoint", "io.ttlstore.spark",
                           "io.ttlstore.store.codec", "io.ttlstore.store.version"},
    "io.ttlstore.repartition": {"io.ttlstore.errors", "io.ttlstore.bytes", "io.ttlstore.ttl", "io.ttlstore.config",
                                "io.ttlstore.checkpoint", "io.ttlstore.spark", "io.ttlstore.store.codec",
                                "io.ttlstore.store.rocksdb", "io.ttlstore.store.local"},
    "io.ttlstore.migrate": {"io.ttlstore.errors", "io.ttlstore.config", "io.ttlstore.checkpoint", "io.ttlstore.spark"},
    "io.ttlstore.tools": {"io.ttlstore.errors", "io.ttlstore.spark"},
}
#: The names Scala 2.12 and 2.13 spell differently (jvm/scala-2.12, jvm/scala-2.13), below everything.
COMPAT = "io.ttlstore.compat"
LAYERS = {COMPAT: set()} | {package: uses | {COMPAT} for package, uses in _LAYERS.items()}

_DECLARATION = re.compile(
    r"^(?:(?:final|sealed|abstract|private\[\w+\]|private|case|implicit)\s+)*(?:class|object|trait)\s+(\w+)", re.M)


def _code(source: str) -> str:
    """The source without comments and string literals (interpolated names kept)."""
    source = re.sub(r"/\*.*?\*/", " ", source, flags=re.S)
    source = re.sub(r"//[^\n]*", " ", source)
    source = re.sub(r'"""(.*?)"""', " ", source, flags=re.S)
    return re.sub(r'"(?:[^"\\\n]|\\.)*"', lambda m: " ".join(re.findall(r"\$\{?(\w+)", m.group(0))), source)


def _sources(line: str, scala: str) -> dict[Path, str]:
    """ttlstore's own Scala sources of one build: the shared ones, those of its Scala version and its
    line's adapters."""
    roots = [MAIN, JVM / f"scala-{scala}", *adapter_dirs(line)]
    return {p: p.read_text() for r in roots for p in sorted(r.rglob("*.scala")) if "/io/ttlstore/" in p.as_posix()}


def _package(source: str) -> str:
    return source.split("\n", 1)[0].split()[1]


def _dependencies(line: str, scala: str) -> dict[Path, set[Path]]:
    """Which files each file uses: the files that declare the top-level names its code mentions."""
    sources = _sources(line, scala)
    declared: dict[str, Path] = {}
    for path, source in sources.items():
        for name in _DECLARATION.findall(source):
            declared[name] = path
    graph: dict[Path, set[Path]] = defaultdict(set)
    for path, source in sources.items():
        for name in set(re.findall(r"\b([A-Z]\w*)\b", _code(source))):
            target = declared.get(name)
            if target is not None and target != path:
                graph[path].add(target)
    return graph


def _cycles(graph: dict[Path, set[Path]]) -> list[list[Path]]:
    """Strongly connected components of more than one file (Tarjan)."""
    index: dict[Path, int] = {}
    low: dict[Path, int] = {}
    stack: list[Path] = []
    found: list[list[Path]] = []

    def visit(node: Path) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in list(graph):
        if node not in index:
            visit(node)
    return found


def test_every_main_source_file_over_the_limit_is_named_as_one_concept():
    sources = {p: s for build in BUILDS for p, s in _sources(*build).items()}
    long_files = {p.relative_to(JVM).as_posix(): n for p, s in sources.items() if (n := s.count("\n")) > MAX_LINES}
    unnamed = {p: n for p, n in long_files.items() if p not in LONG_BY_CONCEPT}
    assert unnamed == {}, "look for two concepts in each; a file of one concept is named in LONG_BY_CONCEPT"
    assert set(LONG_BY_CONCEPT) <= set(long_files), "a file named in LONG_BY_CONCEPT is back under the limit"


def test_every_adapter_is_small_and_lives_in_a_directory_named_for_the_lines_it_serves():
    adapters = sorted((JVM / "spark").rglob("*.scala"))
    assert adapters, "the per-line adapters live in jvm/spark/<lines>/"
    long_files = {p.relative_to(JVM).as_posix(): n for p in adapters if (n := p.read_text().count("\n")) > MAX_ADAPTER_LINES}
    assert long_files == {}
    served = {d for line in LINES for d in adapter_dirs(line)}
    assert {d for d in (JVM / "spark").iterdir() if d.is_dir()} - served == set(), "an adapter directory no line compiles"


@pytest.mark.parametrize("line, scala", BUILDS)
def test_no_two_files_depend_on_each_other_even_through_others(line: str, scala: str):
    cycles = [[p.relative_to(JVM).as_posix() for p in c] for c in _cycles(_dependencies(line, scala))]
    assert cycles == []


@pytest.mark.parametrize("line, scala", BUILDS)
def test_packages_only_use_the_layers_below_them(line: str, scala: str):
    sources = _sources(line, scala)
    wrong = set()
    for path, targets in _dependencies(line, scala).items():
        source_pkg = _package(sources[path])
        for target in targets:
            target_pkg = _package(sources[target])
            if source_pkg != target_pkg and source_pkg in LAYERS and target_pkg not in LAYERS[source_pkg]:
                wrong.add(f"{path.relative_to(JVM)} -> {target.relative_to(JVM)}")
    assert sorted(wrong) == []


@pytest.mark.parametrize("line, scala", BUILDS)
def test_every_package_has_its_place_in_the_layers(line: str, scala: str):
    packages = {_package(s) for s in _sources(line, scala).values()} - {"io.ttlstore"}
    assert packages - set(LAYERS) == set()


def test_the_root_package_keeps_only_the_names_spark_and_users_pin():
    root = {p.name for p, s in _sources(*BUILDS[-1]).items() if _package(s) == "io.ttlstore"}
    assert root == {"TtlStateStoreProvider.scala", "TtlStoreExtensions.scala", "QueryStartCheck.scala",
                    "CheckpointInspector.scala", "InspectMain.scala", "RepartitionMain.scala", "MigrateMain.scala"}


def test_every_line_has_a_capabilities_file_with_the_same_keys_as_every_other():
    keys = {line: list(read_capabilities(line)) for line in LINES}
    assert all(k == keys[LINES[-1]] for k in keys.values()), keys
    assert "checkpointFormatV2" in keys[LINES[-1]]
    assert sorted(p.stem for p in (JVM / "spark").glob("*.capabilities")) == sorted(LINES)


def makefile_test_files(name: str) -> set[str]:
    """The test files the Makefile's variable `name` lists, with those of the variables it names."""
    listing = re.search(rf"^{name} :=((?:.*\\\n)*.*)$", (ROOT / "Makefile").read_text(), re.M)
    assert listing is not None, f"the Makefile has no {name}"
    files = set(re.findall(r"tests/(test_\w+\.py)", listing.group(1)))
    return files.union(*(makefile_test_files(other) for other in re.findall(r"\$\((\w+)\)", listing.group(1))))


# The test files with a test marked every_line: by the marker, or through conftest's core_params.
MARKED_EVERY_LINE = {p.name for p in (ROOT / "tests").glob("test_*.py")
                     if re.search(r"pytest\.mark\.every_line\b|\bcore_params\(", p.read_text())}


def test_every_test_file_marked_for_every_line_is_one_the_other_lines_run():
    # The other lines run the marked tests of the Makefile's LINE_TESTS only: a file marked but not listed there
    # runs on the development line alone.
    listed = makefile_test_files("LINE_TESTS")
    assert "test_ttl.py" in listed and "test_ttl.py" in MARKED_EVERY_LINE
    assert MARKED_EVERY_LINE - listed == set()


def test_make_tests_line_check_is_part_of_the_core_and_the_development_guide_names_it():
    # make test runs LINE_CHECK_TESTS' marked tests on each other line: a file there without a marked test would
    # run nothing, and the guide's list of what make test runs is the Makefile's.
    check = makefile_test_files("LINE_CHECK_TESTS")
    assert "test_operators_differential.py" in check and "test_migrate.py" not in check
    assert check <= makefile_test_files("LINE_TESTS") and check <= MARKED_EVERY_LINE
    guide = (ROOT / "docs" / "development.md").read_text()
    bullet = re.search(r"^   - at a lower priority .*?(?=^   - |^\S|\n\n)", guide, re.M | re.S)
    assert bullet is not None, "docs/development.md says what make test runs on the other lines"
    assert set(re.findall(r"`(test_\w+\.py)`", bullet.group(0))) == check


def test_the_architecture_pages_adapter_table_names_every_adapter_and_the_directories_it_lives_in():
    rows = re.findall(r"^\| `((?:io\.ttlstore\.spark|state)\.\w+)`[^|]*\| ((?:`[^`]+`(?: · )?)+) \|",
                      (ROOT / "docs" / "architecture.md").read_text(), re.M)
    documented = {name.split(".")[-1]: sorted(re.findall(r"`([^`]+)`", dirs)) for name, dirs in rows}
    actual: dict[str, list[str]] = defaultdict(list)
    for path in (JVM / "spark").rglob("*.scala"):
        actual[path.stem].append(path.relative_to(JVM / "spark").parts[0])
    assert documented == {name: sorted(dirs) for name, dirs in actual.items()}


def test_no_two_python_modules_import_each_other_even_through_others():
    package = ROOT / "python" / "ttlstore"
    modules = {p.stem: p for p in package.glob("*.py")}
    graph: dict[Path, set[Path]] = defaultdict(set)
    for path in modules.values():
        for used in re.findall(r"^\s*(?:from ttlstore\.(\w+) import|from ttlstore import (\w+))", path.read_text(), re.M):
            target = modules.get(used[0] or used[1])
            if target is not None and target != path:
                graph[path].add(target)
    assert graph, "the package's modules import each other somewhere"
    assert [[p.name for p in c] for c in _cycles(graph)] == []


def test_no_test_module_imports_another_test_module():
    """Shared scenarios and streams live in helper modules (tests/operator_scenarios.py, ...)."""
    tests = ROOT / "tests"
    modules = {p.stem for p in tests.glob("test_*.py")}
    imports = {p.name: used for p in [*tests.glob("test_*.py"), tests / "conftest.py"]
               if (used := sorted(set(re.findall(r"^\s*(?:from|import) (test_\w+)", p.read_text(), re.M)) & modules))}
    assert imports == {}


def test_the_checker_finds_a_cycle_when_there_is_one():
    a, b, c = Path("a"), Path("b"), Path("c")
    assert _cycles({a: {b}, b: {c}, c: {a}}) == [[a, b, c]]
    assert _cycles({a: {b}, b: {c}}) == []


def test_every_name_the_glossary_points_to_is_in_the_code():
    glossary = (ROOT / "docs" / "architecture.md").read_text().split("## Glossary")[1].split("\n## ")[0]
    rows = [line.split("|")[-2] for line in glossary.splitlines() if line.startswith("| ") and "---" not in line][1:]
    names = {name for cell in rows for name in re.findall(r"`([^`]+)`", cell)}
    assert names, "the glossary names its words' code"
    sources = "\n".join(p.read_text() for ext in ("scala", "java") for p in (JVM / "src" / "main").rglob(f"*.{ext}"))
    defined = set(re.findall(r"\b(?:class|object|trait)\s+(\w+)", sources))
    missing = {n for n in names if not ((ROOT / n).exists() if "/" in n else n.split(".")[0] in defined)}
    assert missing == set(), "docs/architecture.md's glossary points to names the code does not have"


def test_no_two_bench_modules_import_each_other():
    bench = {p.stem: p for p in (ROOT / "bench").glob("*.py")}
    imports = {name: set(re.findall(r"^\s*(?:import|from)\s+(\w+)", path.read_text(), re.M)) & set(bench)
               for name, path in bench.items()}
    assert _cycles(imports) == []


#: reliability.md's sections are written by `make chaos` and `make soak`, whose lines the tools set.
_SECTIONS_WRITTEN_BY_TOOLS = {"reliability.md"}


def test_hand_written_pages_wrap_their_prose_at_110_characters():
    pages = [ROOT / "README.md"] + [p for p in sorted((ROOT / "docs").glob("*.md"))
                                    if p.name not in _SECTIONS_WRITTEN_BY_TOOLS
                                    and not re.search(r"<!-- (Written by|Generated from)", p.read_text())]
    long_lines = []
    for page in pages:
        code = False
        for number, line in enumerate(page.read_text().splitlines(), 1):
            code ^= line.startswith("```")
            if not code and not line.startswith(("|", "#", "```", "![")) and len(line) > 110:
                long_lines.append(f"{page.name}:{number}")
    assert long_lines == [], "a table row or a code block may run long; prose wraps"


def test_no_product_source_uses_the_test_module():
    sources = [p for ext in ("scala", "java") for p in (JVM / "src" / "main").rglob(f"*.{ext}")]
    assert [p.name for p in sources if "io.ttlstore.testkit" in p.read_text()] == []
