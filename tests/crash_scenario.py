"""The crash loop's scenario as the tests run it: its input, a run without faults (the reference), and
the check that a killed run computed exactly the reference (test_crash_loop.py, and the same loop with
checkpoints on HDFS and S3).
"""

from __future__ import annotations

from pathlib import Path

from chaos import crash_loop, crash_queries

SEED = 20261123
FILES, ROWS, KEYS = 12, 40, 15


def run_without_faults(work: Path, variant: crash_loop.Variant) -> dict[str, list[str]]:
    crash_queries.write_input(work / "input", SEED, FILES, ROWS, KEYS)
    crash_loop.run(work, variant.reference, variant.reference_confs, kills=0, seed=SEED, query_set=variant.query_set)
    return crash_queries.results(work, variant.query_set)


def assert_computes_the_reference(work: Path, variant: crash_loop.Variant, reference: dict[str, list[str]],
                                  kills: dict) -> dict[str, list[str]]:
    """Every query of the killed run emitted what the reference did (and the reference emitted something)."""
    got = crash_queries.results(work, variant.query_set)
    assert set(got) == set(reference)
    for query in reference:
        assert reference[query], f"{query} produced nothing: the comparison would prove nothing"
        assert got[query] == reference[query], (query, kills)
    return got
