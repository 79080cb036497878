"""ttlstore's internal test hooks (``io.ttlstore.config.TestHooks``): keys only ttlstore's own tests set.

They are not settings a user sees: neither ``docs/configuration.md`` nor ``ttlstore.settings.OPTIONS``
names them (tests/test_settings_table.py checks both, and that these are the JVM's keys).
"""

from __future__ import annotations

PREFIX = "spark.sql.streaming.stateStore.ttlstore.testHook."
#: The processing time, in epoch milliseconds, every store of a query judges and stamps by.
CLOCK_MS = PREFIX + "clockMs"
#: The jar resource the native filter loads from instead of this platform's.
NATIVE_FILTER_RESOURCE = PREFIX + "nativeFilterResource"
#: A native resource every store load leaks (``iterator`` or ``store``), for the soak to find.
LEAK = PREFIX + "leak"
#: ``true``: every store of the JVM counts its reads in RocksDB's statistics (bench/read_profile.py reads them).
ROCKSDB_STATISTICS = PREFIX + "rocksdbStatistics"
