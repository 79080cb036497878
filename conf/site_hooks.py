"""The docs site's two additions to MkDocs (conf/mkdocs.yml): the project's addresses and the README.

- The site's address and its repository's are python/pyproject.toml's `Documentation` and `Source`
  (the one source of the project's addresses).
- The repository's README.md is the home page: its links into docs/ become links between pages, and
  its links to other files of the repository point into the repository, so that the strict
  build checks the README's links as it checks the pages'.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import tomllib
from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parent.parent
_LINK = re.compile(r"\]\((?!https?://|#|mailto:)([^)\s]+)\)")


def project_urls(root: Path = ROOT) -> dict[str, str]:
    """The [project.urls] of python/pyproject.toml."""
    with open(root / "python" / "pyproject.toml", "rb") as f:
        urls: dict[str, str] = tomllib.load(f)["project"]["urls"]
    return urls


def home_page(readme: str, source: str) -> str:
    """The README as the site's index.md: links into docs/ are made relative to docs/, others point into
    the repository at `source`."""

    def relink(match: re.Match[str]) -> str:
        target = match.group(1)
        if target.startswith("docs/"):
            return f"]({target.removeprefix('docs/')})"
        return f"]({source}/blob/main/{target})"

    return _LINK.sub(relink, readme)


def on_config(config: Any) -> Any:
    urls = project_urls()
    config.site_url = urls["Documentation"]
    config.repo_url = urls["Source"]
    return config


def on_files(files: Files, config: Any) -> Files:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    files.append(File.generated(config, "index.md", content=home_page(readme, project_urls()["Source"])))
    return files
