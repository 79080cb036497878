"""ttlstore's build backend: setuptools', except that a wheel is never built without the jar it bundles.

The wheel's whole point is the jars (`ttlstore/jars/ttlstore-spark-<line>_<scala>-<version>.jar`, one
per Spark line of `ttlstore._lines.JARS`, built by `make jar`): a wheel without one installs cleanly
and then fails at `configure()` on that line. So `build_wheel` checks that every jar is there, is this
version's, and holds the provider, and fails naming the fix otherwise.
Editable installs (`make venv` installs one before any jar exists) and sdists are left alone.
"""

from __future__ import annotations

import ast
import re
import zipfile
from pathlib import Path
from typing import Any

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F403  (every other hook is setuptools')

_PACKAGE = Path(__file__).resolve().parent.parent / "ttlstore"
_PROVIDER = "io/ttlstore/TtlStateStoreProvider.class"


def bundled_jars(package: Path = _PACKAGE) -> list[tuple[str, str]]:
    """The (line, Scala) pairs of ttlstore._lines.JARS, read without importing the package."""
    tree = ast.parse((package / "_lines.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == "JARS":
            assert node.value is not None
            return list(ast.literal_eval(node.value))
    raise SystemExit(f"ttlstore: {package / '_lines.py'} declares no JARS")


def bundled_jar_problem(package: Path = _PACKAGE) -> str | None:
    """Why the package directory cannot make a wheel, or None."""
    version = re.search(r'__version__ = "([^"]+)"', (package / "_version.py").read_text(encoding="utf-8"))
    if version is None:
        return f"{package / '_version.py'} names no __version__"
    for line, scala in bundled_jars(package):
        problem = _jar_problem(package / "jars" / f"ttlstore-spark-{line}_{scala}-{version.group(1)}.jar")
        if problem:
            return problem
    return None


def _jar_problem(jar: Path) -> str | None:
    if not jar.is_file():
        return f"the jar it bundles, {jar}, is missing"
    try:
        with zipfile.ZipFile(jar) as z:
            names = set(z.namelist())
    except zipfile.BadZipFile:
        return f"the jar it bundles, {jar}, is not a jar"
    missing = [n for n in (_PROVIDER, "META-INF/LICENSE") if n not in names]
    return f"the jar it bundles, {jar}, lacks {', '.join(missing)}" if missing else None


def build_wheel(wheel_directory: str, config_settings: dict[str, Any] | None = None,
                metadata_directory: str | None = None) -> str:
    problem = bundled_jar_problem()
    if problem:
        raise SystemExit(f"ttlstore: cannot build the wheel: {problem}. Run `make jar` (or `make dist`) at the "
                         "repository root first; a wheel without the jar would install and then fail at configure().")
    return str(_setuptools.build_wheel(wheel_directory, config_settings, metadata_directory))
