"""The docs site (`make site`, conf/mkdocs.yml): docs/ and the README as its home page, built by MkDocs
in strict mode, so that a link to a page or an anchor that is not there fails `make test`."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from conftest import ROOT


def build_site(root: Path, out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(root / "conf" / "mkdocs.yml"),
                           "-d", str(out)], capture_output=True, text=True)


def test_the_site_builds_with_every_link_and_anchor_of_the_docs_and_the_readme_resolved(tmp_path: Path):
    built = build_site(ROOT, tmp_path / "site")
    assert built.returncode == 0, built.stderr[-3000:]
    home = (tmp_path / "site" / "index.html").read_text()
    assert 'href="install/"' in home, "the README's links into docs/ are links between pages"
    assert (tmp_path / "site" / "ttl" / "index.html").is_file()


def test_a_link_to_an_anchor_no_page_has_fails_the_build_naming_the_page_and_the_anchor(tmp_path: Path):
    root = tmp_path / "repo"
    for part in ["conf", "docs"]:
        shutil.copytree(ROOT / part, root / part)
    shutil.copy(ROOT / "README.md", root)
    (root / "python").mkdir()
    shutil.copy(ROOT / "python" / "pyproject.toml", root / "python")
    page = root / "docs" / "usage.md"
    page.write_text(page.read_text() + "\nSee [the filter](native-filter.md#no-such-heading).\n")
    built = build_site(root, tmp_path / "site")
    assert built.returncode != 0
    assert "'usage.md'" in built.stderr and "'#no-such-heading'" in built.stderr, built.stderr[-3000:]
