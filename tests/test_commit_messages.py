"""The commit-msg hook (.ci/hooks/commit-msg) warns when a message departs from docs/development.md's commit
messages, and never refuses a commit."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conftest import ROOT

HOOK = ROOT / ".ci" / "hooks" / "commit-msg"


def warnings_for(tmp_path: Path, message: str) -> list[str]:
    path = tmp_path / "COMMIT_EDITMSG"
    path.write_text(message)
    ran = subprocess.run(["bash", str(HOOK), str(path)], capture_output=True, text=True, timeout=30)
    assert ran.returncode == 0, "the hook warns; it never refuses a commit"
    return [line.strip().removeprefix("- ") for line in ran.stderr.splitlines()[1:]]


def test_a_short_imperative_subject_with_a_body_passes_silently(tmp_path: Path):
    message = "Load SST files in parallel\n\nA restart waited for each file in turn.\n# a comment git strips\n"
    assert warnings_for(tmp_path, message) == []


@pytest.mark.parametrize(
    ("message", "warned"),
    [
        ("x" * 73 + "\n\nwhy\n", "73 characters"),
        ("Loaded SST files in parallel\n\nwhy\n", "imperative"),
        ("Load SST files in parallel.\n\nwhy\n", "full stop"),
        ("Load SST files in parallel\nwhy\n", "no blank line"),
        ("Load SST files in parallel\n", "no body"),
    ],
)
def test_a_message_off_the_style_is_warned_about_by_name(tmp_path: Path, message: str, warned: str):
    found = warnings_for(tmp_path, message)
    assert len(found) == 1 and warned in found[0], found


def test_a_merge_commit_is_left_alone(tmp_path: Path):
    assert warnings_for(tmp_path, "Merge branch 'x' into main with a subject longer than seventy-two characters\n") == []
