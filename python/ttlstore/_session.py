"""Setting up a SparkSession for ttlstore."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

from ttlstore._config import OPTIONS, PROVIDER_CLASS, PROVIDER_CLASS_KEY
from ttlstore._version import __version__

_JARS_KEY = "spark.jars"


def jar_path() -> str:
    """Return the path of the ttlstore jar bundled with this package.

    :raises FileNotFoundError: if the package was installed without its jar (a source checkout
        where ``make`` has not run yet).

    >>> import ttlstore
    >>> ttlstore.jar_path().endswith(f"ttlstore-{ttlstore.__version__}.jar")
    True
    """
    jar = Path(__file__).resolve().parent / "jars" / f"ttlstore-{__version__}.jar"
    if not jar.is_file():
        raise FileNotFoundError(
            f"The ttlstore jar is missing: {jar}. In a source checkout, run `make` to build it; "
            "otherwise reinstall the ttlstore package."
        )
    return str(jar)


def spark_options(**options: Any) -> dict[str, str]:
    """Translate ttlstore's Python options into Spark settings.

    :param options: any of :data:`ttlstore.OPTIONS` (for example ``block_cache_size_mb=128``).
    :raises TypeError: for an unknown option or a value of the wrong type.

    >>> spark_options(sst_compression="zstd")
    {'spark.sql.streaming.stateStore.ttlstore.sstCompression': 'zstd'}
    """
    settings: dict[str, str] = {}
    for name, value in options.items():
        if name not in OPTIONS:
            known = ", ".join(sorted(OPTIONS))
            raise TypeError(f"ttlstore.configure() got an unknown option '{name}'; known: {known}")
        key, _default, expected = OPTIONS[name]
        if isinstance(value, bool) or not isinstance(value, expected):
            raise TypeError(
                f"ttlstore option '{name}' ({key}) must be a {expected.__name__}, "
                f"got {type(value).__name__}: {value!r}"
            )
        settings[key] = str(value)
    return settings


def configure(builder: SparkSession.Builder, **options: Any) -> SparkSession.Builder:
    """Configure a SparkSession builder to keep streaming state in ttlstore.

    Adds the bundled jar to ``spark.jars`` (keeping jars already set there), sets
    ``spark.sql.streaming.stateStore.providerClass`` to ttlstore's provider, and sets any ttlstore
    options given. JVM settings only take effect before the session's JVM starts, so call this
    before ``getOrCreate()``.

    :param builder: the builder to configure; it is returned, so calls chain.
    :param options: ttlstore options, see :data:`ttlstore.OPTIONS`.
    :raises TypeError: if ``builder`` is not a ``SparkSession.Builder``, or an option is unknown
        or has the wrong type.

    Example::

        spark = ttlstore.configure(
            SparkSession.builder.master("local[2]").appName("dedup"),
            block_cache_size_mb=128,
        ).getOrCreate()
    """
    if not isinstance(builder, SparkSession.Builder):
        raise TypeError(
            "ttlstore.configure() takes a SparkSession.Builder (SparkSession.builder), "
            f"got {type(builder).__name__}"
        )
    settings = spark_options(**options)
    jar = jar_path()
    existing = [j.strip() for j in str(builder._options.get(_JARS_KEY, "")).split(",") if j.strip()]
    jars = existing + ([jar] if jar not in existing else [])
    builder = builder.config(_JARS_KEY, ",".join(jars)).config(PROVIDER_CLASS_KEY, PROVIDER_CLASS)
    for key, value in settings.items():
        builder = builder.config(key, value)
    return builder
