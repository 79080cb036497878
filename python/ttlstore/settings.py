"""ttlstore's Spark settings as Python constants: the keys :func:`ttlstore.configure` sets, and
:data:`OPTIONS`, the options it takes.

The table of record is ``io.ttlstore.config.TtlStoreConfig`` (Scala). The build writes it beside this
module as ``settings.json`` (``io.ttlstore.config.PythonSettings``, run by ``make``), from which the
options, their ranges and their allowed names below are read; ``docs/configuration.md`` is generated
from the same table.
"""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

PREFIX = "spark.sql.streaming.stateStore.ttlstore."
PROVIDER_CLASS = "io.ttlstore.TtlStateStoreProvider"
PROVIDER_CLASS_KEY = "spark.sql.streaming.stateStore.providerClass"
EXTENSIONS_CLASS = "io.ttlstore.TtlStoreExtensions"
EXTENSIONS_KEY = "spark.sql.extensions"

#: The data source of ttlstore's state reader (``io.ttlstore.TtlStateSource`` in the jar).
STATE_SOURCE = "ttlstore_state"

_TABLE = Path(__file__).with_name("settings.json")


def _read_table() -> list[dict[str, Any]]:
    try:
        table: list[dict[str, Any]] = json.loads(_TABLE.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ImportError(f"ttlstore's table of settings {_TABLE} is missing: the build writes it from the "
                          "JVM's (io.ttlstore.config.TtlStoreConfig) beside the jars. In a checkout, run `make`; "
                          "a wheel carries it.") from None
    return table


_ROWS = _read_table()

#: The Python types each form of value accepts.
_TYPES: dict[str, tuple[type, ...]] = {
    "flag": (bool,),
    "whole": (int,),
    "fraction": (float, int),
    "text": (str,),
    "duration": (timedelta, str, int),
    "one_of": (str,),
}


def _types(row: dict[str, Any]) -> tuple[type, ...]:
    # A choice between "true" and "false" among others (native_filter's auto) takes Python's booleans too.
    if row["form"] == "one_of" and {"true", "false"} <= set(row["names"]):
        return (bool, str)
    return _TYPES[row["form"]]


#: Python option name -> (Spark key, default as Spark shows it, accepted Python types)
OPTIONS: dict[str, tuple[str, str, tuple[type, ...]]] = {
    row["option"]: (row["key"], row["default"], _types(row)) for row in _ROWS
}

#: Each option's form of value: flag, whole, fraction, text, duration or one_of.
FORMS: dict[str, str] = {row["option"]: row["form"] for row in _ROWS}

#: The numeric options' allowed ranges, inclusive (the JVM refuses the same values).
RANGES: dict[str, tuple[float, float]] = {
    row["option"]: (row["min"], row["max"]) for row in _ROWS if row["form"] in ("whole", "fraction")
}

#: The names each option of a fixed choice takes (matched case-insensitively, as the JVM does).
CHOICES: dict[str, tuple[str, ...]] = {row["option"]: tuple(row["names"]) for row in _ROWS if row["form"] == "one_of"}

#: The values ``sst_compression`` takes.
SST_COMPRESSIONS = CHOICES["sst_compression"]

#: The values ``native_filter`` takes as strings (``True``/``False`` are accepted too).
NATIVE_FILTER_MODES = CHOICES["native_filter"]

#: The values of ``legacy_row_timestamp``.
LEGACY_ROW_TIMESTAMPS = CHOICES["legacy_row_timestamp"]
