"""Killed at random moments, restarted, and still exactly the results of a run without faults."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from chaos import crash_loop, crash_queries
from crash_scenario import FILES, KEYS, ROWS, SEED, assert_computes_the_reference, run_without_faults

# One kill at a random moment, marked long: `make chaos` runs it and then long loops of every variant (make
# test-matrix runs it on the other lines). make test kills a driver once with its checkpoints on S3
# (test_object_store.py), and every line's core restarts its queries between batches.
KILLS = 1


@pytest.mark.long
def test_a_driver_killed_with_sigkill_while_rows_expire_and_restarted_computes_what_a_run_without_faults_does(
    tmp_path: Path,
):
    """The variant where rows expire. `make chaos` runs every variant with long loops,
    and test_distributed_fs and test_object_store kill the TTL-off variant's queries on HDFS and S3."""
    variant = crash_loop.VARIANTS["TTL expiring (event time, 2 seconds)"]
    reference = run_without_faults(tmp_path / "reference", variant)
    assert crash_queries.restarted_counts(tmp_path / "reference") > 0, "no row expired: the variant would prove nothing"
    work = tmp_path / "killed"
    crash_queries.write_input(work / "input", SEED, FILES, ROWS, KEYS)

    kills = crash_loop.run(work, crash_loop.TTL_PROVIDER, list(variant.confs), kills=KILLS,
                           seed=SEED + len(variant.confs), query_set=variant.query_set)

    assert kills["kills"] == KILLS, kills
    assert_computes_the_reference(work, variant, reference, kills)
    shutil.rmtree(work / "checkpoints", ignore_errors=True)
