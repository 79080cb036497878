"""A count per key run round by round, and what it must emit: the query the recovery tests restart."""

from __future__ import annotations

COUNT = lambda s: s.groupBy("key").count()  # noqa: E731


def counts(outputs: list) -> list[list[tuple]]:
    return [sorted((r["key"], r["count"]) for r in batch) for batch in outputs]


def running_counts(rounds: list[list[dict]]) -> list[list[tuple]]:
    """What a count per key emits in update mode, batch by batch: each key of the batch with its total so far
    (the same as Spark's HDFS provider emits: tests/test_operators_differential.py holds ttlstore to it)."""
    totals: dict[str, int] = {}
    emitted = []
    for batch in rounds:
        for row in batch:
            totals[row["key"]] = totals.get(row["key"], 0) + 1
        emitted.append(sorted((k, totals[k]) for k in {row["key"] for row in batch}))
    return emitted
