"""ttlstore: a Spark Structured Streaming state store that forgets on purpose.

One call configures a :class:`pyspark.sql.SparkSession.Builder` to run stateful queries on
ttlstore::

    from pyspark.sql import SparkSession
    import ttlstore

    spark = ttlstore.configure(SparkSession.builder.master("local[*]")).getOrCreate()

and state that forgets what was not written for an hour::

    spark = ttlstore.configure(SparkSession.builder, ttl=timedelta(hours=1)).getOrCreate()
"""

from __future__ import annotations

from ttlstore._config import OPTIONS, PREFIX, PROVIDER_CLASS, PROVIDER_CLASS_KEY
from ttlstore._inspect import InspectError, format_report, inspect_checkpoint
from ttlstore._migrate import MigrationError, MigrationReport, migrate
from ttlstore._session import apply_ttl, configure, jar_path, operator_options, spark_options
from ttlstore._state import STATE_SOURCE, read_state
from ttlstore._ttl import StateTtlConfig, StateVisibility, TimeCharacteristic, UpdateType, duration_ms
from ttlstore._version import __version__

__all__ = [
    "InspectError",
    "MigrationError",
    "MigrationReport",
    "OPTIONS",
    "PREFIX",
    "PROVIDER_CLASS",
    "PROVIDER_CLASS_KEY",
    "STATE_SOURCE",
    "StateTtlConfig",
    "StateVisibility",
    "TimeCharacteristic",
    "UpdateType",
    "__version__",
    "apply_ttl",
    "configure",
    "duration_ms",
    "format_report",
    "inspect_checkpoint",
    "jar_path",
    "migrate",
    "operator_options",
    "read_state",
    "spark_options",
]
