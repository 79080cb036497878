"""`make release`'s parts on what `make test` built: the sdist and the wheel built from it, the Maven
artifacts' poms, and the bundles python/_build/release.py makes of them (docs/releasing.md)."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
import tomllib

import ttlstore

from conftest import ROOT, SPARK_LINES

_spec = importlib.util.spec_from_file_location("release", ROOT / "python" / "_build" / "release.py")
assert _spec is not None and _spec.loader is not None
release = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(release)

MAVEN_REPO = ROOT / "jvm" / "target" / "maven-repo"
JARS = [f"ttlstore-spark-{line.line}_{line.scala}-{ttlstore.__version__}.jar" for line in SPARK_LINES]
URLS = tomllib.loads((ROOT / "python" / "pyproject.toml").read_text())["project"]["urls"]


def _published(tmp_path: Path) -> Path:
    """A copy of the Maven repository `make test` published (without the Scaladoc jars)."""
    assert release.artifacts(MAVEN_REPO), f"{MAVEN_REPO} holds no artifact: run `make publish-local` (make test does)"
    return Path(shutil.copytree(MAVEN_REPO, tmp_path / "repo"))


def test_the_sdist_holds_the_jars_and_its_backend_and_builds_the_wheel_both_passing_twine(tmp_path: Path):
    built = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--sdist", "--wheel", "--outdir",
                            str(tmp_path), str(ROOT / "python")], capture_output=True, text=True)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    (sdist,) = tmp_path.glob("ttlstore-*.tar.gz")
    (wheel,) = tmp_path.glob("ttlstore-*.whl")
    root = f"ttlstore-{ttlstore.__version__}"
    with tarfile.open(sdist) as t:
        names = set(t.getnames())
    assert {f"{root}/_build/backend.py", f"{root}/LICENSE"} | {f"{root}/ttlstore/jars/{j}" for j in JARS} <= names
    # python -m build makes the wheel from the sdist: what a user's pip does with the sdist alone.
    assert wheel.name == f"{root}-py3-none-any.whl", "pure Python: the jars carry every platform's library"
    with zipfile.ZipFile(wheel) as z:
        assert {f"ttlstore/jars/{j}" for j in JARS} <= set(z.namelist())
    twine = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", str(sdist), str(wheel)],
                           capture_output=True, text=True)
    assert twine.returncode == 0 and twine.stdout.count("PASSED") == 2, twine.stdout + twine.stderr


def test_the_package_metadata_and_every_pom_name_the_same_absolute_addresses():
    assert URLS and all(u.startswith("https://") for u in URLS.values()), URLS
    for directory in release.artifacts(MAVEN_REPO):
        pom = next(directory.glob("*.pom"))
        assert release.pom_problems(pom) == [], "every field Maven Central requires is there"
        text = pom.read_text()
        assert f"<url>{URLS['Homepage']}</url>" in text and f"<url>{URLS['Source']}</url>" in text, pom
    assert f"]({URLS['Documentation']})" in (ROOT / "python" / "README.md").read_text(), "PyPI's page links to the site"


def test_a_pom_without_the_scm_or_with_a_relative_address_is_named_with_what_it_lacks(tmp_path: Path):
    pom = next(release.artifacts(_published(tmp_path))[0].glob("*.pom"))
    text = pom.read_text()
    start, end = text.index("<scm>"), text.index("</scm>") + len("</scm>")
    pom.write_text(text[:start] + text[end:])
    assert release.pom_problems(pom) == [f"{pom} has no <scm><url>", f"{pom} has no <scm><connection>"]
    pom.write_text(text.replace(f"<url>{URLS['Homepage']}</url>", "<url>docs/usage.md</url>", 1))
    assert release.pom_problems(pom) == [f"{pom}'s <url> is 'docs/usage.md', not an absolute address"]


def test_artifacts_without_their_scaladoc_jar_or_with_a_stray_file_are_refused_naming_each_and_no_bundle_is_written(
        tmp_path: Path):
    repo = _published(tmp_path)
    stray = release.artifacts(repo)[0] / "ttlstore-tests-javadoc.jar"
    stray.write_bytes(b"")
    with pytest.raises(SystemExit) as refused:
        release.bundle(repo, tmp_path / "out")
    for directory in release.artifacts(repo):
        assert f"{directory} has no {directory.parent.name}-{directory.name}-javadoc.jar" in str(refused.value)
    assert f"{stray} is not part of the artifact" in str(refused.value)
    assert not (tmp_path / "out").exists()


def test_each_bundle_holds_an_artifact_signed_with_checksums_that_match_its_files(tmp_path: Path,
                                                                                  monkeypatch: pytest.MonkeyPatch):
    repo = _published(tmp_path)
    for directory in release.artifacts(repo):
        # The Scaladoc jar `make release` publishes (make test's publish leaves it out).
        with zipfile.ZipFile(directory / f"{directory.parent.name}-{directory.name}-javadoc.jar", "w") as z:
            z.writestr("index.html", "<html></html>")
    assert shutil.which("gpg"), "the signing test needs GnuPG's gpg (Debian's gnupg), which signs a release"
    home = tmp_path / "gnupg"
    home.mkdir(mode=0o700)
    env = {"GNUPGHOME": str(home), "PATH": "/usr/bin:/bin"}
    subprocess.run(["gpg", "--batch", "--passphrase", "", "--quick-gen-key", "ttlstore test <test@ttlstore.invalid>",
                    "ed25519", "sign", "never"], check=True, capture_output=True, env=env)
    monkeypatch.setenv("GNUPGHOME", str(home))
    bundles = release.bundle(repo, tmp_path / "out", key="test@ttlstore.invalid")
    assert sorted(b.name for b in bundles) == sorted(j.replace(".jar", "-bundle.zip") for j in JARS)
    for zipped, directory in zip(bundles, release.artifacts(repo), strict=True):
        with zipfile.ZipFile(zipped) as z:
            names = set(z.namelist())
        prefix = directory.relative_to(repo).as_posix()
        uploaded = [p.name for p in release.published_files(directory)]
        assert len(uploaded) == 4, "the pom, the jar and its sources and Scaladoc jars"
        assert names == {f"{prefix}/{n}{suffix}" for n in uploaded
                         for suffix in ["", ".asc"] + [f".{c}" for c in release.CHECKSUMS]}
        assert release.checksum_problems(directory) == []
    jar = next(release.artifacts(repo)[0].glob("*-sources.jar"))
    jar.write_bytes(jar.read_bytes() + b"\0")
    assert release.checksum_problems(jar.parent) == [f"{jar}.{c} does not match {jar.name}" for c in release.CHECKSUMS]

