"""ttlstore: a Spark Structured Streaming state store that forgets on purpose.

One call configures a :class:`pyspark.sql.SparkSession.Builder` to run stateful queries on
ttlstore::

    from pyspark.sql import SparkSession
    import ttlstore

    spark = ttlstore.configure(SparkSession.builder.master("local[*]")).getOrCreate()

and state that forgets what was not written for an hour::

    spark = ttlstore.configure(SparkSession.builder, ttl=timedelta(hours=1)).getOrCreate()

The whole surface: :func:`configure` and :func:`apply_ttl` with :class:`StateTtlConfig` and its
enums; :func:`read_state` and :func:`inspect_checkpoint` to look at state, :class:`StoreWatch` to watch each
store's figures as queries run; :func:`migrate` to move a
query from Spark's providers; :func:`repartition` to change a stopped query's number of state
partitions; :func:`jar_path`, :func:`maven_coordinates` and :data:`MAVEN_COORDINATES` (ttlstore has one jar
per Spark line, :data:`SPARK_LINES`, and picks the installed pyspark's). :mod:`ttlstore.settings` names the Spark
settings. Over Spark Connect, :func:`connect_server_command` starts the server with ttlstore and the
same calls work from the client. Errors: :class:`TtlStoreError` and :func:`condition_of`
(:mod:`ttlstore.errors`), caught by condition as Spark's are.
"""

from __future__ import annotations

from ttlstore import errors, settings
from ttlstore._connect import connect_server_command
from ttlstore._inspect import InspectError, inspect_checkpoint, inspect_checkpoint_offline
from ttlstore._jars import MAVEN_COORDINATES, jar_path, maven_coordinates
from ttlstore._lines import SPARK_LINES, UnsupportedSparkError, spark_line
from ttlstore._migrate import MigrationError, MigrationReport, migrate
from ttlstore._repartition import RepartitionError, RepartitionReport, repartition
from ttlstore._session import apply_ttl, configure
from ttlstore._state import read_state
from ttlstore._ttl import StateTtlConfig, StateVisibility, TimeCharacteristic, UpdateType
from ttlstore._version import __version__
from ttlstore._watch import StoreWatch
from ttlstore.errors import TtlStoreError, condition_of

__all__ = [
    "InspectError",
    "MAVEN_COORDINATES",
    "MigrationError",
    "MigrationReport",
    "RepartitionError",
    "RepartitionReport",
    "SPARK_LINES",
    "StateTtlConfig",
    "StateVisibility",
    "StoreWatch",
    "TtlStoreError",
    "TimeCharacteristic",
    "UnsupportedSparkError",
    "UpdateType",
    "__version__",
    "apply_ttl",
    "condition_of",
    "configure",
    "connect_server_command",
    "errors",
    "inspect_checkpoint",
    "inspect_checkpoint_offline",
    "jar_path",
    "maven_coordinates",
    "migrate",
    "read_state",
    "repartition",
    "settings",
    "spark_line",
]
