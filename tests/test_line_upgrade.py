"""A checkpoint ttlstore wrote on one Spark line continues on a later one: the same query, restarted
on Spark 4.0, then 4.2, then 4.3, computes what TTL says, with the rows written on the older lines
expiring when they should."""

from __future__ import annotations

from pathlib import Path

from conftest import ROOT, SPARK_LINES, run_script

SCRIPT = ROOT / "tests" / "lines" / "upgrade_rounds.py"


def line_python(line: str) -> Path:
    """The interpreter of `line`'s environment: the project's own for the development line (whichever
    line this run tests), .build/spark-<line>/venv for the others."""
    venv = ROOT / ".venv" if line == SPARK_LINES[-1].line else ROOT / ".build" / f"spark-{line}" / "venv"
    python = venv / "bin" / "python"
    assert python.is_file(), f"{python} is missing: run `make line-venvs` (make test does)"
    return python


def run_on(python: Path | str, workdir: Path, first: int, count: int) -> dict:
    return run_script(python, SCRIPT, workdir, first, count, cwd=workdir.parent)


def test_a_checkpoint_written_on_spark_4_0_continues_on_4_2_and_on_4_3_with_its_ttl_kept(tmp_path: Path):
    work = tmp_path / "work"
    work.mkdir()
    on_40 = run_on(line_python("4.0"), work, 0, 2)
    on_42 = run_on(line_python("4.2"), work, 2, 1)
    on_43 = run_on(line_python("4.3"), work, 3, 2)
    assert [on_40["spark"][:3], on_42["spark"][:3], on_43["spark"][:3]] == ["4.0", "4.2", "4.3"]

    dedup = on_40["outputs"]["dropDuplicates"] + on_42["outputs"]["dropDuplicates"] + on_43["outputs"]["dropDuplicates"]
    # TTL 10 minutes. At 12: a and b (written at 0, on 4.0) expired, c (at 5) not; at 16 c expired.
    assert dedup == [[["a"], ["b"]], [["c"]], [["a"], ["b"]], [["d"]], [["c"]]]
    counts = on_40["outputs"]["aggregation"] + on_42["outputs"]["aggregation"] + on_43["outputs"]["aggregation"]
    # At 12 b (last written at 0, on 4.0) expired and counts from one again; a and c (written at 5) go on.
    assert counts == [[["a", 1], ["b", 1]], [["a", 2], ["c", 1]], [["a", 3], ["b", 1], ["c", 2]],
                      [["c", 3], ["d", 1]], [["a", 4], ["c", 4]]]
    state = work / "dropDuplicates" / "checkpoint" / "state"
    assert list(state.rglob("ttlstore/*.changelog")), "the rounds ran on ttlstore"
