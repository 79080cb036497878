"""ttlstore's internal test hooks: keys only ttlstore's own tests set, read by the test module
(``io.ttlstore.testkit.ConfTestHooks``, the testkit jar), never by the product.

They are not settings a user sees: neither ``docs/configuration.md`` nor ``ttlstore.settings.OPTIONS``
names them (tests/test_settings_table.py checks both, and that these are the JVM's keys). A session takes
them only with the testkit jar of its Spark line on its ``spark.jars`` (:func:`with_testkit`).
"""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import SparkSession

from ttlstore import __version__
from ttlstore._lines import installed_line

PREFIX = "spark.sql.streaming.stateStore.ttlstore.testHook."
#: The processing time, in epoch milliseconds, every store of a query judges and stamps by.
CLOCK_MS = PREFIX + "clockMs"
#: The jar resource the native filter loads from instead of this platform's.
NATIVE_FILTER_RESOURCE = PREFIX + "nativeFilterResource"
#: ``store``: every store load opens a RocksDB instance and never closes it, for the soak to find.
LEAK = PREFIX + "leak"
#: ``true``: every store of the JVM counts its reads in RocksDB's statistics (bench/read_profile.py reads them).
ROCKSDB_STATISTICS = PREFIX + "rocksdbStatistics"
#: ``wrong``, ``none`` or ``fail``: the read-ahead reads another key than each it is asked, none, or fails each read.
READ_AHEAD = PREFIX + "readAhead"

ROOT = Path(__file__).resolve().parents[1]


def testkit_jar() -> Path:
    """The testkit jar of the installed pyspark's line, as the build writes it beside the line's jar."""
    line, scala = installed_line()
    return ROOT / "jvm" / "target" / "jars" / f"ttlstore-testkit-{line}_{scala}-{__version__}.jar"


def with_testkit(builder: SparkSession.Builder) -> SparkSession.Builder:
    """`builder` with the testkit jar on ``spark.jars`` (before ``ttlstore.configure``, which keeps it)."""
    jar = testkit_jar()
    if not jar.is_file():
        raise FileNotFoundError(f"no testkit jar at {jar}: `make jar` builds it beside the line's jar")
    return builder.config("spark.jars", str(jar))
