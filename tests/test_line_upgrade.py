"""A checkpoint ttlstore wrote on one Spark line continues on a later one: the same query, restarted
on Spark 3.5, then 4.0, then 4.2, then 4.3, computes what TTL says, with the rows written on the
older lines expiring when they should; and one that Spark 3.5's own provider wrote, moved to ttlstore
on 3.5 (``ttlstore migrate``), continues on 4.3."""

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


def run_on(python: Path | str, workdir: Path, first: int, count: int, provider: str = "ttlstore") -> dict:
    return run_script(python, SCRIPT, workdir, first, count, provider, cwd=workdir.parent)


def outputs(runs: list[dict], query: str) -> list:
    return [batch for run in runs for batch in run["outputs"][query]]


def test_a_checkpoint_written_on_spark_3_5_continues_on_4_0_4_2_and_4_3_with_its_ttl_kept(tmp_path: Path):
    work = tmp_path / "work"
    work.mkdir()
    runs = [run_on(line_python("3.5"), work, 0, 1), run_on(line_python("4.0"), work, 1, 1),
            run_on(line_python("4.2"), work, 2, 1), run_on(line_python("4.3"), work, 3, 2)]
    assert [run["spark"][:3] for run in runs] == ["3.5", "4.0", "4.2", "4.3"]

    # TTL 10 minutes. At 12: a and b (written at 0, on 3.5) expired, c (at 5, on 4.0) not; at 16 c expired.
    assert outputs(runs, "dropDuplicates") == [[["a"], ["b"]], [["c"]], [["a"], ["b"]], [["d"]], [["c"]]]
    # At 12 b (last written at 0, on 3.5) expired and counts from one again; a and c (written at 5) go on.
    assert outputs(runs, "aggregation") == [[["a", 1], ["b", 1]], [["a", 2], ["c", 1]], [["a", 3], ["b", 1], ["c", 2]],
                                            [["c", 3], ["d", 1]], [["a", 4], ["c", 4]]]
    state = work / "dropDuplicates" / "checkpoint" / "state"
    assert list(state.rglob("ttlstore/*.changelog")), "the rounds ran on ttlstore"


def test_a_checkpoint_of_spark_3_5_s_provider_moved_to_ttlstore_on_3_5_continues_on_4_3(tmp_path: Path):
    work = tmp_path / "work"
    work.mkdir()
    on_spark = run_on(line_python("3.5"), work, 0, 2, "hdfs")
    migrated = run_script(line_python("3.5"), SCRIPT, work, "migrate", cwd=tmp_path)
    assert migrated["spark"].startswith("3.5") and set(migrated["migrated"].values()) == {"migrated"}
    on_43 = run_on(line_python("4.3"), work, 2, 4)
    assert on_43["spark"].startswith("4.3")

    # Rounds 0 and 1 on Spark 3.5's HDFS provider, without TTL. The adopted rows are stamped with the
    # first load after the migration (12 min): none expires before 22, all do after it unless written.
    assert outputs([on_spark, on_43], "dropDuplicates") == [[["a"], ["b"]], [["c"]], [], [["d"]], [], [["a"], ["b"]]]
    assert outputs([on_spark, on_43], "aggregation") == [
        [["a", 1], ["b", 1]], [["a", 2], ["c", 1]], [["a", 3], ["b", 2], ["c", 2]], [["c", 3], ["d", 1]],
        [["a", 4], ["c", 4]], [["a", 5], ["b", 1]]]
