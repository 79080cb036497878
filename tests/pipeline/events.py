"""The pipeline's events, round by round, and what a deduplication with an event-time TTL must keep of them.

Round ``r`` holds ``NEW`` new events, stamped ``r`` hours after ``START`` (a second apart), and redeliveries (the
same id and event time again, as a producer retrying or a source replaying sends them): ``EARLY`` of round ``r - 1``,
which a deduplication forgetting after ``TTL`` (2 hours) still remembers and drops, and, from round ``LATE_AFTER``
on, ``LATE`` of round ``r - LATE_AFTER``, which it has forgotten by then and keeps. Redeliveries are that far from
their TTL's edge (an hour either side) so that where a batch begins or ends changes nothing.
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime, timedelta, timezone

START = datetime(2026, 1, 1, tzinfo=timezone.utc)
TTL = timedelta(hours=2)
#: The TTL as the driver's ``--ttl`` takes it.
TTL_OPTION = f"{int(TTL.total_seconds())}s"
NEW, EARLY, LATE, LATE_AFTER = 400, 40, 40, 6
#: The topic, and the rounds a run sends.
TOPIC, ROUNDS = "events", 12

Event = tuple[str, datetime]


def _new(r: int) -> list[Event]:
    return [(f"e{r}-{i}", START + timedelta(hours=r, seconds=i)) for i in range(NEW)]


def early(r: int) -> list[Event]:
    """The redeliveries within the TTL sent in round ``r``."""
    return _new(r - 1)[::NEW // EARLY][:EARLY] if r >= 1 else []


def late(r: int) -> list[Event]:
    """The redeliveries after the TTL sent in round ``r``."""
    return _new(r - LATE_AFTER)[1::NEW // LATE][:LATE] if r >= LATE_AFTER else []


def round_events(r: int) -> list[Event]:
    return _new(r) + early(r) + late(r)


def record(event: Event) -> tuple[str, str]:
    """A Kafka record (key, JSON value) of an event."""
    key, at = event
    return key, json.dumps({"id": key, "event_time": at.isoformat(), "payload": "x" * 64})


def expected(rounds: int) -> Counter[Event]:
    """What the table holds after ``rounds`` rounds: each event once, and each late redelivery once more."""
    kept: Counter[Event] = Counter()
    for r in range(rounds):
        kept.update(_new(r))
        kept.update(late(r))
    return kept
