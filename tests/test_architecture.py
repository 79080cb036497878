"""The JVM sources keep the shape docs/architecture.md draws: small files, no cycle between files,
and packages that depend on each other in one direction only."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

from conftest import ROOT

MAIN = ROOT / "jvm" / "src" / "main" / "scala"
MAX_LINES = 300

#: Each package and the packages it may use; anything else is a dependency the other way round.
LAYERS: dict[str, set[str]] = {
    "io.ttlstore.errors": set(),
    "io.ttlstore.bytes": set(),
    "io.ttlstore.ttl": {"io.ttlstore.errors"},
    "io.ttlstore.config": {"io.ttlstore.errors", "io.ttlstore.ttl"},
    "io.ttlstore.checkpoint": {"io.ttlstore.errors", "io.ttlstore.bytes", "io.ttlstore.ttl"},
    "io.ttlstore.legacy": {"io.ttlstore.errors", "io.ttlstore.bytes", "io.ttlstore.checkpoint"},
    "io.ttlstore.store": {"io.ttlstore.errors", "io.ttlstore.bytes", "io.ttlstore.ttl", "io.ttlstore.config",
                          "io.ttlstore.checkpoint", "io.ttlstore.legacy"},
    "io.ttlstore.reader": {"io.ttlstore.errors", "io.ttlstore.ttl", "io.ttlstore.checkpoint", "io.ttlstore.store"},
    "io.ttlstore.repartition": {"io.ttlstore.errors", "io.ttlstore.bytes", "io.ttlstore.ttl", "io.ttlstore.config",
                                "io.ttlstore.checkpoint", "io.ttlstore.store"},
    "io.ttlstore.migrate": {"io.ttlstore.errors", "io.ttlstore.config", "io.ttlstore.checkpoint"},
    "io.ttlstore.tools": set(),
}

_DECLARATION = re.compile(
    r"^(?:(?:final|sealed|abstract|private\[\w+\]|private|case|implicit)\s+)*(?:class|object|trait)\s+(\w+)", re.M)


def _code(source: str) -> str:
    """The source without comments and string literals (interpolated names kept)."""
    source = re.sub(r"/\*.*?\*/", " ", source, flags=re.S)
    source = re.sub(r"//[^\n]*", " ", source)
    source = re.sub(r'"""(.*?)"""', " ", source, flags=re.S)
    return re.sub(r'"(?:[^"\\\n]|\\.)*"', lambda m: " ".join(re.findall(r"\$\{?(\w+)", m.group(0))), source)


def _sources() -> dict[Path, str]:
    return {p: p.read_text() for p in sorted(MAIN.rglob("*.scala")) if "/io/ttlstore/" in p.as_posix()}


def _package(source: str) -> str:
    return source.split("\n", 1)[0].split()[1]


def _dependencies() -> dict[Path, set[Path]]:
    """Which files each file uses: the files that declare the top-level names its code mentions."""
    sources = _sources()
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


def test_no_main_source_file_is_longer_than_the_limit():
    long_files = {p.relative_to(MAIN).as_posix(): n for p, s in _sources().items() if (n := s.count("\n")) > MAX_LINES}
    assert long_files == {}


def test_no_two_files_depend_on_each_other_even_through_others():
    cycles = [[p.relative_to(MAIN).as_posix() for p in c] for c in _cycles(_dependencies())]
    assert cycles == []


def test_packages_only_use_the_layers_below_them():
    sources = _sources()
    wrong = set()
    for path, targets in _dependencies().items():
        source_pkg = _package(sources[path])
        for target in targets:
            target_pkg = _package(sources[target])
            if source_pkg != target_pkg and source_pkg in LAYERS and target_pkg not in LAYERS[source_pkg]:
                wrong.add(f"{path.relative_to(MAIN)} -> {target.relative_to(MAIN)}")
    assert sorted(wrong) == []


def test_the_root_package_keeps_only_the_names_spark_and_users_pin():
    root = {p.name for p, s in _sources().items() if _package(s) == "io.ttlstore"}
    assert root == {"TtlStateStoreProvider.scala", "TtlStoreExtensions.scala", "QueryStartCheck.scala",
                    "TtlStateSource.scala", "CheckpointInspector.scala", "InspectMain.scala",
                    "RepartitionMain.scala", "MigrateMain.scala"}


def test_the_checker_finds_a_cycle_when_there_is_one():
    a, b, c = Path("a"), Path("b"), Path("c")
    assert _cycles({a: {b}, b: {c}, c: {a}}) == [[a, b, c]]
    assert _cycles({a: {b}, b: {c}}) == []
