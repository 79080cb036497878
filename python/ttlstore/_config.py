"""ttlstore's Spark settings as Python constants.

The table of record is ``io.ttlstore.TtlStoreConfig`` (Scala); ``docs/configuration.md`` is
generated from it, and a test checks that this module names exactly the keys and defaults there.
"""

from __future__ import annotations

PREFIX = "spark.sql.streaming.stateStore.ttlstore."
PROVIDER_CLASS = "io.ttlstore.TtlStateStoreProvider"
PROVIDER_CLASS_KEY = "spark.sql.streaming.stateStore.providerClass"

#: Python option name -> (Spark key, default as Spark shows it, expected Python type)
OPTIONS: dict[str, tuple[str, str, type]] = {
    "local_dir": (PREFIX + "localDir", "(unset)", str),
    "block_cache_size_mb": (PREFIX + "blockCacheSizeMB", "64", int),
    "write_buffer_size_mb": (PREFIX + "writeBufferSizeMB", "16", int),
    "bloom_filter_bits_per_key": (PREFIX + "bloomFilterBitsPerKey", "10", int),
    "sst_compression": (PREFIX + "sstCompression", "lz4", str),
    "known_keys_capacity": (PREFIX + "knownKeysCapacity", "100000", int),
}
