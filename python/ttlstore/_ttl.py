"""State TTL settings: :class:`StateTtlConfig`, its enums, and their Spark settings."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import timedelta
from enum import Enum
from typing import TypeVar

from ttlstore.settings import PREFIX

Duration = timedelta | str | int


class UpdateType(str, Enum):
    """When a row's timestamp is renewed."""

    #: A write renews it (the default).
    ON_CREATE_AND_WRITE = "OnCreateAndWrite"
    #: Point reads in the query's write stores renew it too.
    ON_READ_AND_WRITE = "OnReadAndWrite"


class StateVisibility(str, Enum):
    """Whether an expired row that is still stored is returned."""

    #: Expired rows are never returned (the default).
    NEVER_RETURN_EXPIRED = "NeverReturnExpired"
    #: Expired rows are returned until the sweep removes them.
    RETURN_EXPIRED_IF_NOT_CLEANED_UP = "ReturnExpiredIfNotCleanedUp"


class TimeCharacteristic(str, Enum):
    """What time a row's timestamp and "now" are measured in."""

    #: The batch's timestamp from Spark's offset log: one per batch, kept on replay (the default).
    PROCESSING_TIME = "ProcessingTime"
    #: A timestamp or long column of the state row; "now" is the largest event time seen.
    EVENT_TIME = "EventTime"


_UNITS = {
    **dict.fromkeys(("", "ms", "milli", "millis", "millisecond", "milliseconds"), 1),
    **dict.fromkeys(("s", "sec", "secs", "second", "seconds"), 1000),
    **dict.fromkeys(("m", "min", "mins", "minute", "minutes"), 60_000),
    **dict.fromkeys(("h", "hour", "hours"), 3_600_000),
    **dict.fromkeys(("d", "day", "days"), 86_400_000),
    **dict.fromkeys(("w", "week", "weeks"), 604_800_000),
}
_PART = re.compile(r"(\d+)\s*([a-z]*)\s*")
_LONG_MAX = 2**63 - 1


def duration_ms(value: Duration) -> int:
    """Convert a TTL to whole milliseconds, as the JVM side parses it.

    :param value: a :class:`~datetime.timedelta`, a string in Spark's interval words such as
        ``"10 minutes"``, ``"30s"``, ``"1 hour 30 minutes"`` or ``"interval 1 week"`` (months and
        years have no fixed length and are refused), or a number of milliseconds. ``0`` turns TTL off.
    :raises ValueError: for a negative, fractional-millisecond or unparsable duration.

    >>> duration_ms(timedelta(minutes=10)), duration_ms("1 hour 30 minutes"), duration_ms(1500)
    (600000, 5400000, 1500)
    """
    if isinstance(value, bool):
        raise ValueError(f"a TTL must be a duration, not a boolean: {value!r}")
    if isinstance(value, timedelta):
        micros = (value.days * 86_400 + value.seconds) * 1_000_000 + value.microseconds
        if micros < 0 or micros % 1000:
            raise ValueError(f"a TTL must be a non-negative whole number of milliseconds, got {value!r}")
        return micros // 1000
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"a TTL must not be negative, got {value} ms")
        return value
    if isinstance(value, str):
        parsed = _parse_duration(value)
        if parsed is not None:
            return parsed
        raise ValueError(
            f"cannot read {value!r} as a TTL: write a duration such as '10 minutes', '30s', "
            "'1 hour 30 minutes', 'interval 1 week' or a number of milliseconds"
        )
    raise ValueError(f"a TTL must be a timedelta, a string or milliseconds, got {type(value).__name__}")


def _parse_duration(text: str) -> int | None:
    """Milliseconds, or None: the JVM's grammar (io.ttlstore.ttl.Durations), part by part."""
    lower = text.strip().lower()
    body = lower[len("interval"):].strip() if lower.startswith("interval ") else lower
    parts: list[tuple[str, str]] = []
    pos = 0
    while pos < len(body):
        match = _PART.match(body, pos)
        if match is None:
            return None
        parts.append((match.group(1), match.group(2)))
        pos = match.end()
    if not parts or (len(parts) > 1 and any(unit == "" for _, unit in parts)):
        return None
    total = 0
    for amount, unit in parts:
        factor = _UNITS.get(unit)
        if factor is None:
            return None
        total += int(amount) * factor
    return total if total <= _LONG_MAX else None


E = TypeVar("E", bound=Enum)


def _enum(kind: type[E], value: object, field: str) -> E:
    if isinstance(value, kind):
        return value
    for member in kind:
        if isinstance(value, str) and value.lower() in (str(member.value).lower(), member.name.lower()):
            return member
    allowed = ", ".join(str(m.value) for m in kind)
    raise ValueError(f"{field} must be one of {allowed}, got {value!r}")


@dataclass(frozen=True)
class StateTtlConfig:
    """State TTL for ttlstore, after Flink's ``StateTtlConfig``.

    A row whose timestamp is ``ts`` expires once ``ts + ttl <= now``. Values are checked when the
    config is made; enum fields also accept their names as strings.

    :param ttl: time to live (``timedelta``, ``"10 minutes"``, or milliseconds); 0 turns TTL off.
    :param update_type: when a row's timestamp is renewed.
    :param state_visibility: whether expired rows still stored are returned.
    :param time_characteristic: processing time (the batch's timestamp) or event time.
    :param event_time_column: with event time, the timestamp/long field of the state's key or value
        that stamps a row, such as ``"window.end"``.
    :raises ValueError: for a bad duration, an unknown enum value, or event time without a column.

    >>> StateTtlConfig(timedelta(minutes=10)).to_spark_conf(operator_id=1)["spark.sql.streaming.stateStore.ttlstore.operator.1.ttl"]
    '600000'
    """

    ttl: Duration
    update_type: UpdateType = UpdateType.ON_CREATE_AND_WRITE
    state_visibility: StateVisibility = StateVisibility.NEVER_RETURN_EXPIRED
    time_characteristic: TimeCharacteristic = TimeCharacteristic.PROCESSING_TIME
    event_time_column: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "update_type", _enum(UpdateType, self.update_type, "update_type"))
        object.__setattr__(
            self, "state_visibility", _enum(StateVisibility, self.state_visibility, "state_visibility")
        )
        object.__setattr__(
            self,
            "time_characteristic",
            _enum(TimeCharacteristic, self.time_characteristic, "time_characteristic"),
        )
        duration_ms(self.ttl)
        column = self.event_time_column
        if column is not None and (not isinstance(column, str) or not all(column.split("."))):
            raise ValueError(f"event_time_column must be a field path such as 'window.end', got {column!r}")
        if self.time_characteristic is TimeCharacteristic.EVENT_TIME and not column:
            raise ValueError("event time needs event_time_column: the timestamp or long field that stamps rows")

    @property
    def ttl_ms(self) -> int:
        """The TTL in milliseconds."""
        return duration_ms(self.ttl)

    def to_spark_conf(self, operator_id: int | None = None, store_name: str | None = None) -> dict[str, str]:
        """The Spark settings for this config: global, for one operator, or one store of it.

        :param operator_id: the stateful operator's id, as the query's progress shows it.
        :param store_name: a store of that operator (``"default"``, or a join's store names).
        :raises ValueError: if ``store_name`` is given without ``operator_id``.
        """
        if store_name is not None and operator_id is None:
            raise ValueError("store_name needs operator_id: stores are named per operator")
        if operator_id is None:
            scope = PREFIX
        elif isinstance(operator_id, bool) or not isinstance(operator_id, int) or operator_id < 0:
            raise ValueError(f"operator_id must be a non-negative int, got {operator_id!r}")
        elif store_name is None:
            scope = f"{PREFIX}operator.{operator_id}."
        else:
            scope = f"{PREFIX}operator.{operator_id}.store.{store_name}."
        conf = {
            scope + "ttl": str(self.ttl_ms),
            scope + "updateType": self.update_type.value,
            scope + "stateVisibility": self.state_visibility.value,
            scope + "timeCharacteristic": self.time_characteristic.value,
        }
        if self.event_time_column:
            conf[scope + "eventTimeColumn"] = self.event_time_column
        return conf
