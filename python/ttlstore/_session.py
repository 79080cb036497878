"""Setting up a SparkSession for ttlstore."""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

from pyspark import SparkContext
from pyspark.sql import SparkSession

from ttlstore._connect import is_remote_builder
from ttlstore._jars import MAVEN_COORDINATES, jar_path
from ttlstore._ttl import Duration, StateTtlConfig, StateVisibility, TimeCharacteristic, UpdateType, _enum, duration_ms
from ttlstore.settings import (
    CHOICES,
    EXTENSIONS_CLASS,
    EXTENSIONS_KEY,
    FORMS,
    OPTIONS,
    PROVIDER_CLASS,
    PROVIDER_CLASS_KEY,
    RANGES,
)

_JARS_KEY = "spark.jars"
_PACKAGES_KEY = "spark.jars.packages"



_COORDINATES = re.compile(r"[A-Za-z0-9_.\-]+:[A-Za-z0-9_.\-]+:[A-Za-z0-9_.\-]+")


_ENUMS: dict[str, type[UpdateType] | type[StateVisibility] | type[TimeCharacteristic]] = {
    "update_type": UpdateType,
    "state_visibility": StateVisibility,
    "time_characteristic": TimeCharacteristic,
}

#: configure()'s keyword for per-operator TTL configs: operator id, or (operator id, store name).
OperatorKey = int | tuple[int, str]


def _spark_value(name: str, value: Any) -> str:
    """One option's value as Spark reads it; raises TypeError/ValueError naming the option."""
    key, _default, expected = OPTIONS[name]
    if value is None or (isinstance(value, bool) and bool not in expected) or not isinstance(value, expected):
        kinds = " or ".join(t.__name__ for t in expected)
        raise TypeError(f"ttlstore option '{name}' ({key}) must be a {kinds}, got {type(value).__name__}: {value!r}")
    if FORMS[name] == "duration":
        return str(duration_ms(cast(Duration, value)))
    if name in RANGES and not RANGES[name][0] <= cast(float, value) <= RANGES[name][1]:
        low, high = RANGES[name]
        raise ValueError(f"ttlstore option '{name}' ({key}) must be from {low} to {high}, got {value!r}")
    if name in _ENUMS:
        return str(_enum(_ENUMS[name], value, name).value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if name in CHOICES:
        named = [choice for choice in CHOICES[name] if choice.lower() == str(value).lower()]
        if not named:
            flags = "True, False or " if bool in expected else ""
            raise ValueError(f"ttlstore option '{name}' ({key}) must be {flags}one of {', '.join(CHOICES[name])}, "
                             f"got {value!r}")
        return named[0]
    return str(value)


def spark_options(**options: Any) -> dict[str, str]:
    """Translate ttlstore's Python options into Spark settings.

    :param options: any of :data:`ttlstore.settings.OPTIONS` (for example ``max_memory_usage_mb=1024`` or
        ``ttl=timedelta(hours=1)``).
    :raises TypeError: for an unknown option or a value of the wrong type.
    :raises ValueError: for a value of the right type that is not allowed (a negative TTL, an
        unknown update type).

    >>> spark_options(sst_compression="zstd", ttl="10 minutes")
    {'spark.sql.streaming.stateStore.ttlstore.sstCompression': 'zstd', 'spark.sql.streaming.stateStore.ttlstore.ttl': '600000'}
    """
    settings: dict[str, str] = {}
    for name, value in options.items():
        if name not in OPTIONS:
            close = difflib.get_close_matches(name, OPTIONS, n=1)
            hint = f"did you mean '{close[0]}'? " if close else ""
            known = ", ".join(sorted(OPTIONS))
            raise TypeError(f"ttlstore.configure() got an unknown option '{name}'; {hint}known: {known}")
        settings[OPTIONS[name][0]] = _spark_value(name, value)
    _check_memory_mode(options)
    return settings


def _check_memory_mode(options: Mapping[str, Any]) -> None:
    """Refuses a size of the memory mode that is off, as the JVM does (it would size nothing)."""
    bounded = options.get("bounded_memory_usage", True)
    other = ("block_cache_size_mb",) if bounded else ("max_memory_usage_mb", "write_buffer_cache_ratio")
    for name in (n for n in other if n in options):
        if bounded:
            raise ValueError(f"ttlstore option '{name}' applies only with bounded_memory_usage=False; with bounded "
                             "memory (the default) the executor's stores share max_memory_usage_mb: set that instead, "
                             "or bounded_memory_usage=False")
        raise ValueError(f"ttlstore option '{name}' applies only with bounded memory; remove it, or drop "
                         "bounded_memory_usage=False (block_cache_size_mb sizes the cache without bounded memory)")


def operator_options(operators: Mapping[OperatorKey, StateTtlConfig]) -> dict[str, str]:
    """The Spark settings of per-operator (or per-store) TTL configs.

    :param operators: ``{operator_id: StateTtlConfig}``, or ``{(operator_id, store_name): ...}``
        for one store of an operator.
    :raises TypeError: for a key or value of the wrong kind.

    >>> operator_options({0: StateTtlConfig("1h")})["spark.sql.streaming.stateStore.ttlstore.operator.0.ttl"]
    '3600000'
    """
    settings: dict[str, str] = {}
    for scope, config in operators.items():
        if not isinstance(config, StateTtlConfig):
            raise TypeError(f"operators[{scope!r}] must be a ttlstore.StateTtlConfig, got {type(config).__name__}")
        if isinstance(scope, tuple) and len(scope) == 2:
            settings.update(config.to_spark_conf(operator_id=scope[0], store_name=scope[1]))
        elif isinstance(scope, int) and not isinstance(scope, bool):
            settings.update(config.to_spark_conf(operator_id=scope))
        else:
            raise TypeError(f"operators keys are operator ids or (operator id, store name), got {scope!r}")
    return settings


def apply_ttl(
    spark: SparkSession,
    config: StateTtlConfig,
    operator_id: int | None = None,
    store_name: str | None = None,
) -> None:
    """Set a TTL config on a running session; queries started afterwards use it.

    ttlstore's settings are read when a query starts (and again at each restart), so call this
    before ``start()``. A restart with another config applies it to the rows already stored.

    :param spark: the session the query will start from.
    :param config: the TTL to apply; ``StateTtlConfig(0)`` turns TTL off.
    :param operator_id: apply to one stateful operator only (its id in the query's progress).
    :param store_name: apply to one store of that operator only.

    Example::

        ttlstore.apply_ttl(spark, ttlstore.StateTtlConfig(timedelta(hours=1)))
        query = events.dropDuplicates(["id"]).writeStream.format("console").start()
    """
    if not isinstance(config, StateTtlConfig):
        raise TypeError(f"apply_ttl() takes a ttlstore.StateTtlConfig, got {type(config).__name__}")
    for key, value in config.to_spark_conf(operator_id, store_name).items():
        spark.conf.set(key, value)


def configure(
    builder: SparkSession.Builder,
    *,
    operators: Mapping[OperatorKey, StateTtlConfig] | None = None,
    jar: str | None = None,
    **options: Any,
) -> SparkSession.Builder:
    """Configure a SparkSession builder to keep streaming state in ttlstore.

    Adds the bundled jar to ``spark.jars`` (keeping jars already set there; ``jar`` picks another), sets
    ``spark.sql.streaming.stateStore.providerClass`` to ttlstore's provider, adds ttlstore's
    session extension (which checks TTL settings against each query's operators when it starts)
    to ``spark.sql.extensions``, and sets any ttlstore options given. JVM settings only take
    effect before the session's JVM starts, so call this before ``getOrCreate()``.

    Over Spark Connect (a builder with ``.remote(...)``) the server loads the jar and the extension when
    it starts (:func:`connect_server_command`); configure() then sets the provider and the options only.

    The provider is the session's default: a query started after ``spark.conf.set(
    "spark.sql.streaming.stateStore.providerClass", ...)`` names another provider (Spark's RocksDB
    provider for ``transformWithStateInPandas``) runs on that one, beside ttlstore's queries, and
    ignores the ttlstore options (docs/usage.md, "One provider per query").

    :param builder: the builder to configure; it is returned, so calls chain.
    :param operators: TTL per stateful operator, ``{operator_id: StateTtlConfig}``, or per store,
        ``{(operator_id, store_name): StateTtlConfig}``; these win over the global options.
    :param jar: where Spark loads ttlstore from: the path of a ttlstore jar (added to
        ``spark.jars``), or Maven coordinates such as :data:`MAVEN_COORDINATES` (added to
        ``spark.jars.packages``; set ``spark.jars.repositories`` on the builder for a repository
        other than Spark's defaults). Default: the jar bundled with this package.
    :param options: ttlstore options, see :data:`ttlstore.settings.OPTIONS`: ``ttl`` (``timedelta``,
        ``"10 minutes"`` or milliseconds), ``update_type``, ``state_visibility``,
        ``time_characteristic``, ``event_time_column``, and the storage settings.
    :raises TypeError: if ``builder`` is not a ``SparkSession.Builder``, or an option is unknown
        or has the wrong type.
    :raises ValueError: if an option's value is not allowed (a negative TTL, an unknown enum name).
    :raises FileNotFoundError: if ``jar`` is a path with no file.

    Example::

        spark = ttlstore.configure(
            SparkSession.builder.master("local[2]").appName("dedup"),
            ttl=timedelta(hours=1),
            operators={1: ttlstore.StateTtlConfig("10 minutes")},
        ).getOrCreate()
    """
    if not isinstance(builder, SparkSession.Builder):
        raise TypeError(
            "ttlstore.configure() takes a SparkSession.Builder (SparkSession.builder), "
            f"got {type(builder).__name__}"
        )
    if is_remote_builder(builder):
        # Spark Connect: the server already runs ttlstore's jar and extension (connect_server_command);
        # the client sets what a session may set, the provider and ttlstore's settings.
        if jar is not None:
            raise ValueError("configure(jar=...) has no effect over Spark Connect: the server loads ttlstore's jar "
                             "when it starts (`ttlstore connect-server` prints its command). Leave jar out.")
        builder = builder.config(PROVIDER_CLASS_KEY, PROVIDER_CLASS)
        for key, value in {**spark_options(**options), **operator_options(operators or {})}.items():
            builder = builder.config(key, value)
        return builder
    jar_key, jar_source = _jar_setting(jar)
    _check_no_session_without_the_jar(jar_key, jar_source)
    settings = spark_options(**options)
    settings.update(operator_options(operators or {}))
    builder = builder.config(jar_key, _append(builder, jar_key, jar_source))
    builder = builder.config(EXTENSIONS_KEY, _append(builder, EXTENSIONS_KEY, EXTENSIONS_CLASS))
    builder = builder.config(PROVIDER_CLASS_KEY, PROVIDER_CLASS)
    for key, value in settings.items():
        builder = builder.config(key, value)
    return builder


def _jar_setting(jar: str | None) -> tuple[str, str]:
    """The Spark setting that loads ttlstore from ``jar`` (see :func:`configure`), and its item."""
    if jar is None:
        return _JARS_KEY, jar_path()
    if not isinstance(jar, str):
        raise TypeError(f"configure(jar=...) takes a path or Maven coordinates, got {type(jar).__name__}: {jar!r}")
    if _COORDINATES.fullmatch(jar) and "/" not in jar:
        return _PACKAGES_KEY, jar
    path = Path(jar.removeprefix("file:")).expanduser()
    if not path.is_file():
        raise FileNotFoundError(
            f"configure(jar=...): no jar at {jar}. Pass the path of a ttlstore jar (`ttlstore jar` prints the "
            f"bundled one), Maven coordinates such as {MAVEN_COORDINATES}, or leave jar out for the bundled jar."
        )
    return _JARS_KEY, str(path.resolve())


def _check_no_session_without_the_jar(key: str, source: str) -> None:
    """Refuse to configure a builder whose getOrCreate() would return a running session that lacks
    the jar: Spark reads ``spark.jars`` (and ``spark.jars.packages``) only when its JVM starts, so
    every stateful query would then fail with a bare ClassNotFoundException for the provider."""
    context = SparkContext._active_spark_context
    if context is None:
        return
    jars = context.getConf().get(key, "") or ""
    if source not in [j.strip() for j in jars.split(",")]:
        raise RuntimeError(
            "A SparkSession is already running in this process without the ttlstore jar, and Spark "
            "loads jars only when its JVM starts, so ttlstore.configure() cannot take effect. Call "
            "spark.stop() first (or, in a notebook, restart the kernel), then call "
            "ttlstore.configure(SparkSession.builder, ...).getOrCreate() before anything else starts "
            "a session."
        )


def _append(builder: SparkSession.Builder, key: str, item: str) -> str:
    """The comma-separated list setting ``key`` with ``item`` added once, keeping what was there."""
    existing = [j.strip() for j in str(builder._options.get(key, "")).split(",") if j.strip()]
    return ",".join(existing + ([item] if item not in existing else []))
