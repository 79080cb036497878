"""Killed at random moments, restarted, and still exactly the results of a run without faults."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from chaos import crash_loop

SEED = 20261123
KILLS = 3
FILES, ROWS, KEYS = 12, 40, 15


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    """The four queries on Spark's HDFS provider, without faults."""
    work = tmp_path_factory.mktemp("reference")
    crash_loop.write_input(work / "input", SEED, FILES, ROWS, KEYS)
    crash_loop.run(work, crash_loop.HDFS_PROVIDER, [], kills=0, seed=SEED)
    assert list(work.glob("checkpoints/*/state/*/*/*.delta")), "the reference did not run on the HDFS provider"
    return crash_loop.results(work)


@pytest.mark.parametrize("confs", crash_loop.VARIANTS.values(), ids=crash_loop.VARIANTS.keys())
def test_a_driver_killed_with_sigkill_and_restarted_computes_what_a_run_without_faults_does(
    tmp_path: Path, reference: dict[str, list[str]], confs: list[str]
):
    crash_loop.write_input(tmp_path / "input", SEED, FILES, ROWS, KEYS)

    kills = crash_loop.run(tmp_path, crash_loop.TTL_PROVIDER, confs, kills=KILLS, seed=SEED + len(confs))

    assert kills["kills"] == KILLS, kills
    got = crash_loop.results(tmp_path)
    for query in crash_loop.QUERIES:
        assert reference[query], f"{query} produced nothing: the comparison would prove nothing"
        assert got[query] == reference[query], (query, kills)
    shutil.rmtree(tmp_path / "checkpoints", ignore_errors=True)
