"""The rounds the TTL tests run: a stream of keyed events and the test clock each round runs at.

Every round is one micro-batch at ``T0`` plus some minutes, set through the test hook ``hooks.CLOCK_MS``.
"""

from __future__ import annotations

import hooks
from pyspark.sql.types import LongType, StringType, StructField, StructType

EVENTS = StructType([StructField("key", StringType()), StructField("t", LongType())])
T0 = 1_763_800_000_000  # epoch ms: the rounds' clock starts here
MINUTE = 60_000
CLOCK_KEY = hooks.CLOCK_MS


def clock_at(minutes: list[float]):
    """Round i runs at T0 + minutes[i]."""
    return lambda i: {CLOCK_KEY: str(int(T0 + minutes[i] * MINUTE))}


def rows(*keys: str, t: int = 0) -> list[dict]:
    return [{"key": k, "t": t} for k in keys]
