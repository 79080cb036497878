"""ttlstore: a Spark Structured Streaming state store that forgets on purpose.

One call configures a :class:`pyspark.sql.SparkSession.Builder` to run stateful queries on
ttlstore::

    from pyspark.sql import SparkSession
    import ttlstore

    spark = ttlstore.configure(SparkSession.builder.master("local[*]")).getOrCreate()
"""

from __future__ import annotations

from ttlstore._config import OPTIONS, PREFIX, PROVIDER_CLASS, PROVIDER_CLASS_KEY
from ttlstore._session import configure, jar_path, spark_options
from ttlstore._version import __version__

__all__ = [
    "OPTIONS",
    "PREFIX",
    "PROVIDER_CLASS",
    "PROVIDER_CLASS_KEY",
    "__version__",
    "configure",
    "jar_path",
    "spark_options",
]
