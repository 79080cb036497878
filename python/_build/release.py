"""The Maven half of `make release`: one bundle per Spark line, checked as Maven Central checks it.

    python python/_build/release.py MAVEN_REPO OUT [--gpg-key KEY]

For every artifact that `sbt publish` wrote into MAVEN_REPO (io/ttlstore/<artifact>/<version>/), it
checks what Central requires before it takes a release (the pom's name, description, url, licenses,
developers and scm; a -sources and a -javadoc jar beside the jar), writes the md5, sha1, sha256 and
sha512 of every file, signs each with KEY (`gpg --detach-sign --armor`) when one is given, and zips
the directory as OUT/<artifact>-<version>-bundle.zip, laid out as Central's Portal takes an upload.
Nothing is uploaded. A problem stops it, naming the file and what it lacks.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from xml.etree import ElementTree

_POM = "{http://maven.apache.org/POM/4.0.0}"
# What Central refuses a pom without, as paths below <project>; the addresses must be absolute.
_REQUIRED = ["groupId", "artifactId", "version", "name", "description", "url", "licenses/license/name",
             "licenses/license/url", "developers/developer/name", "scm/url", "scm/connection"]
_ADDRESSES = {"url", "licenses/license/url", "scm/url"}
CHECKSUMS = ("md5", "sha1", "sha256", "sha512")
_DERIVED = tuple(f".{c}" for c in CHECKSUMS) + (".asc",)


def pom_problems(pom: Path) -> list[str]:
    """What the pom lacks that Central requires, each naming the pom and the element."""
    project = ElementTree.parse(pom).getroot()
    problems = []
    for path in _REQUIRED:
        element = project.find("/".join(_POM + step for step in path.split("/")))
        text = (element.text or "").strip() if element is not None else ""
        if not text:
            problems.append(f"{pom} has no <{path.replace('/', '><')}>")
        elif path in _ADDRESSES and not text.startswith(("https://", "http://")):
            problems.append(f"{pom}'s <{path.replace('/', '><')}> is {text!r}, not an absolute address")
    connection = project.find(f"{_POM}scm/{_POM}connection")
    if connection is not None and connection.text and not connection.text.startswith("scm:"):
        problems.append(f"{pom}'s <scm><connection> is {connection.text!r}, not an scm: address")
    return problems


def artifact_problems(directory: Path) -> list[str]:
    """What the artifact's directory (<artifact>/<version>/) lacks (its pom's fields, and the jar's
    sources and javadoc jars) or holds beyond them."""
    version, artifact = directory.name, directory.parent.name
    expected = [f"{artifact}-{version}{suffix}" for suffix in (".pom", ".jar", "-sources.jar", "-javadoc.jar")]
    problems = [f"{directory} has no {name}" for name in expected if not (directory / name).is_file()]
    problems += [f"{path} is not part of the artifact" for path in published_files(directory) if path.name not in expected]
    if (directory / expected[0]).is_file():
        problems += pom_problems(directory / expected[0])
    return problems


def published_files(directory: Path) -> list[Path]:
    """The files of an artifact that are uploaded, without their checksums and signatures."""
    return sorted(p for p in directory.iterdir()
                  if p.is_file() and not p.name.endswith(_DERIVED) and not p.name.startswith("maven-metadata"))


def write_checksums(directory: Path) -> None:
    for path in published_files(directory):
        data = path.read_bytes()
        for name in CHECKSUMS:
            Path(f"{path}.{name}").write_text(hashlib.new(name, data).hexdigest())


def checksum_problems(directory: Path) -> list[str]:
    """Each published file's checksums that are missing or do not match it."""
    problems = []
    for path in published_files(directory):
        data = path.read_bytes()
        for name in CHECKSUMS:
            written = Path(f"{path}.{name}")
            if not written.is_file():
                problems.append(f"{written} is missing")
            elif written.read_text().split()[0] != hashlib.new(name, data).hexdigest():
                problems.append(f"{written} does not match {path.name}")
    return problems


def sign(directory: Path, key: str) -> None:
    """Signs every published file with `key` and checks each signature."""
    if shutil.which("gpg") is None:
        raise SystemExit("release: GPG_KEY asks for signatures, and gpg is not on the PATH: install GnuPG "
                         "(Debian's gnupg) or leave GPG_KEY out to check the bundles unsigned")
    for path in published_files(directory):
        signature = Path(f"{path}.asc")
        subprocess.run(["gpg", "--batch", "--yes", "--armor", "--local-user", key, "--output", str(signature),
                        "--detach-sign", str(path)], check=True)
        subprocess.run(["gpg", "--batch", "--verify", str(signature), str(path)], check=True, capture_output=True)


def artifacts(repo: Path) -> list[Path]:
    """The <artifact>/<version>/ directories of the Maven repository on disk."""
    return sorted(pom.parent for pom in repo.glob("*/*/*/*/*.pom"))


def bundle(repo: Path, out: Path, key: str | None = None) -> list[Path]:
    """Checks, checksums, signs (with a key) and zips every artifact of `repo` into `out`; returns the bundles.
    Raises SystemExit naming every problem before it writes a bundle."""
    found = artifacts(repo)
    if not found:
        raise SystemExit(f"release: {repo} holds no artifact: run `make release`, which publishes them first")
    problems = [p for directory in found for p in artifact_problems(directory)]
    if problems:
        raise SystemExit("release: Maven Central would refuse these artifacts:\n  " + "\n  ".join(problems))
    out.mkdir(parents=True, exist_ok=True)
    bundles = []
    for directory in found:
        for stale in [p for p in directory.iterdir() if p.name.endswith(_DERIVED)]:
            stale.unlink()  # sbt's checksums, or an earlier run's signatures of files since published again
        write_checksums(directory)
        if key:
            sign(directory, key)
        assert not checksum_problems(directory), checksum_problems(directory)
        zipped = out / f"{directory.parent.name}-{directory.name}-bundle.zip"
        with zipfile.ZipFile(zipped, "w", zipfile.ZIP_DEFLATED) as z:
            for path in sorted(p for p in directory.iterdir() if not p.name.startswith("maven-metadata")):
                z.write(path, path.relative_to(repo).as_posix())
        bundles.append(zipped)
    return bundles


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo", type=Path, help="the Maven repository sbt publish wrote")
    parser.add_argument("out", type=Path, help="where the bundles go")
    parser.add_argument("--gpg-key", help="the key that signs every file (Central requires signatures)")
    args = parser.parse_args(argv)
    for zipped in bundle(args.repo, args.out, args.gpg_key):
        print(f"{zipped}: {len(zipfile.ZipFile(zipped).namelist())} files"
              + ("" if args.gpg_key else " (not signed: Central takes it signed, make release GPG_KEY=<key>)"))


if __name__ == "__main__":
    main(sys.argv[1:])
