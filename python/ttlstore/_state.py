"""Reading a ttlstore checkpoint's state back, with each row's timestamps."""

from __future__ import annotations

import os

from pyspark.sql import DataFrame, SparkSession

from ttlstore.settings import STATE_SOURCE


def read_state(
    spark: SparkSession,
    checkpoint: str | os.PathLike[str],
    *,
    batch_id: int | None = None,
    operator_id: int = 0,
    store_name: str | None = None,
    include_expired: bool = False,
) -> DataFrame:
    """Read the state a streaming query on ttlstore kept, as Spark's ``statestore`` reader does,
    with three more columns: ``written_at`` (the row's stored timestamp: its last write in
    processing time, its event time in event time), ``expires_at`` (``written_at`` + TTL, null when
    TTL is off) and ``expired``.

    Expiry is judged with the TTL settings and the time recorded with that batch in the checkpoint,
    so the answer is what the query itself saw, whatever the reading session sets. Reading never
    writes to the checkpoint and is safe while the query runs.

    :param spark: any session with the ttlstore jar (see :func:`ttlstore.configure`).
    :param checkpoint: the query's checkpoint location.
    :param batch_id: the state after this batch; the latest committed batch when None.
    :param operator_id: the stateful operator (see the query's progress, ``stateOperators``).
    :param store_name: the store of the operator; Spark's default store when None.
    :param include_expired: also return expired rows that are still stored (``expired`` true).
    :returns: columns ``key``, ``value``, ``partition_id``, ``written_at``, ``expires_at``,
        ``expired``.

    >>> import inspect, ttlstore
    >>> list(inspect.signature(ttlstore.read_state).parameters)[:2]
    ['spark', 'checkpoint']
    """
    if not isinstance(operator_id, int) or isinstance(operator_id, bool) or operator_id < 0:
        raise ValueError(f"operator_id must be a non-negative int, got {operator_id!r}")
    if batch_id is not None and (not isinstance(batch_id, int) or isinstance(batch_id, bool) or batch_id < 0):
        raise ValueError(f"batch_id must be a non-negative int or None, got {batch_id!r}")
    reader = (
        spark.read.format(STATE_SOURCE)
        .option("operatorId", operator_id)
        .option("includeExpired", str(bool(include_expired)).lower())
    )
    if batch_id is not None:
        reader = reader.option("batchId", batch_id)
    if store_name is not None:
        reader = reader.option("storeName", store_name)
    return reader.load(os.fspath(checkpoint))
