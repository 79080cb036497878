"""ttlstore's Spark settings as Python constants: the keys :func:`ttlstore.configure` sets, and
:data:`OPTIONS`, the options it takes.

The table of record is ``io.ttlstore.config.TtlStoreConfig`` (Scala); ``docs/configuration.md`` is
generated from it, and tests check that this module names exactly the keys, defaults and allowed
names the JVM declares.
"""

from __future__ import annotations

from datetime import timedelta

PREFIX = "spark.sql.streaming.stateStore.ttlstore."
PROVIDER_CLASS = "io.ttlstore.TtlStateStoreProvider"
PROVIDER_CLASS_KEY = "spark.sql.streaming.stateStore.providerClass"
EXTENSIONS_CLASS = "io.ttlstore.TtlStoreExtensions"
EXTENSIONS_KEY = "spark.sql.extensions"

#: Python option name -> (Spark key, default as Spark shows it, accepted Python types)
OPTIONS: dict[str, tuple[str, str, tuple[type, ...]]] = {
    "local_dir": (PREFIX + "localDir", "(unset)", (str,)),
    "bounded_memory_usage": (PREFIX + "boundedMemoryUsage", "true", (bool,)),
    "max_memory_usage_mb": (PREFIX + "maxMemoryUsageMB", "512", (int,)),
    "write_buffer_cache_ratio": (PREFIX + "writeBufferCacheRatio", "0.5", (float, int)),
    "block_cache_size_mb": (PREFIX + "blockCacheSizeMB", "64", (int,)),
    "write_buffer_size_mb": (PREFIX + "writeBufferSizeMB", "64", (int,)),
    "bloom_filter_bits_per_key": (PREFIX + "bloomFilterBitsPerKey", "10", (int,)),
    "index_and_filters_in_cache": (PREFIX + "indexAndFiltersInCache", "false", (bool,)),
    "sst_compression": (PREFIX + "sstCompression", "lz4", (str,)),
    "known_keys_capacity": (PREFIX + "knownKeysCapacity", "200000", (int,)),
    "ttl": (PREFIX + "ttl", "0", (timedelta, str, int)),
    "update_type": (PREFIX + "updateType", "OnCreateAndWrite", (str,)),
    "state_visibility": (PREFIX + "stateVisibility", "NeverReturnExpired", (str,)),
    "time_characteristic": (PREFIX + "timeCharacteristic", "ProcessingTime", (str,)),
    "event_time_column": (PREFIX + "eventTimeColumn", "(unset)", (str,)),
    "allow_ttl_on_stream_stream_join": (PREFIX + "allowTtlOnStreamStreamJoin", "false", (bool,)),
    "sweep_rows_per_commit": (PREFIX + "sweepRowsPerCommit", "100000", (int,)),
    "native_filter": (PREFIX + "nativeFilter.enabled", "auto", (bool, str)),
    "periodic_compaction": (PREFIX + "nativeFilter.periodicCompaction", "(unset)", (timedelta, str, int)),
    "compact_expired_share": (PREFIX + "nativeFilter.compactExpiredShare", "0.5", (float, int)),
    "legacy_row_timestamp": (PREFIX + "legacyRowTimestamp", "migration", (str,)),
    "upgrade_rows_per_commit": (PREFIX + "upgradeRowsPerCommit", "10000", (int,)),
}

#: The numeric options' allowed ranges, inclusive (the JVM refuses the same values).
RANGES: dict[str, tuple[float, float]] = {
    "max_memory_usage_mb": (1, 1 << 20),
    "write_buffer_cache_ratio": (0.05, 0.95),
    "block_cache_size_mb": (0, 1 << 20),
    "write_buffer_size_mb": (1, 1024),
    "bloom_filter_bits_per_key": (0, 64),
    "known_keys_capacity": (0, 10_000_000),
    "sweep_rows_per_commit": (0, 100_000_000),
    "compact_expired_share": (0.0, 1.0),
    "upgrade_rows_per_commit": (0, 100_000_000),
}

#: The values ``sst_compression`` takes.
SST_COMPRESSIONS = ("lz4", "zstd", "snappy", "none")

#: The values ``native_filter`` takes as strings (``True``/``False`` are accepted too).
NATIVE_FILTER_MODES = ("auto", "true", "false")

#: The values of ``legacy_row_timestamp``.
LEGACY_ROW_TIMESTAMPS = ("migration", "unknown", "expired")

#: The data source of ttlstore's state reader (``io.ttlstore.TtlStateSource`` in the jar).
STATE_SOURCE = "ttlstore_state"
