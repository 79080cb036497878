"""No cliff when a store outgrows the block cache: lookups stay near their in-cache cost.

A deduplication's steady state (every row a key already stored) is all point lookups. With the
block-based table's settings of an earlier ttlstore (16 KiB blocks, one Bloom filter block per SST
file, index and filter blocks cached at normal priority), a filter block larger than one shard of
the LRU block cache could never stay cached and was read again on most lookups: 15 s batches where
Spark's provider took 1 s, with a 1M-key store and the default 64 MiB cache (1 MiB shards). Here the
same steady deduplication runs twice, each in its own JVM (the block cache is sized once per
executor): with a block cache far larger than the store, and with a 1 MiB one (512 KiB shards, so
the old layout's filter blocks of ~750 KiB per 600k keys thrash). Memtables of 1 MiB put the rows in
SST files, as a store far larger than its memtables has them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from processes import ROOT, run_script

from conftest import TTL_PROVIDER

# Two JVMs filling 1.2M keys each, measured: `make chaos` runs it (the size ladders of `make bench-ladder` go to 4M).
pytestmark = pytest.mark.long

KEYS_PER_STORE = 600_000
PREFIX = "spark.sql.streaming.stateStore.ttlstore."


def steady_dedup(tmp_path: Path, cache_mb: int) -> dict:
    """The ladder's rung at KEYS_PER_STORE keys per store: per-row state time of its steady batches."""
    result = run_script(
        ROOT / "bench" / "ladder.py", ["dropDuplicates", TTL_PROVIDER, "--sizes", str(KEYS_PER_STORE), "--rows-per-batch", "200000", "--steady", "5",
         "--driver-memory", "2g", "--workdir", str(tmp_path / f"cache-{cache_mb}"),
         "--conf", f"{PREFIX}boundedMemoryUsage=false", "--conf", f"{PREFIX}blockCacheSizeMB={cache_mb}",
         "--conf", f"{PREFIX}writeBufferSizeMB=1"],
        timeout=900,
    )
    (rung,) = result["rungs"]
    return rung


def test_a_deduplication_whose_store_outgrows_a_tiny_block_cache_stays_near_its_in_cache_speed(tmp_path: Path):
    in_cache = steady_dedup(tmp_path, cache_mb=256)
    tiny = steady_dedup(tmp_path, cache_mb=1)

    assert in_cache["state_rows"] == tiny["state_rows"] == 2 * KEYS_PER_STORE
    # The stores' files are several times the tiny cache, and far below the large one.
    assert 4 * 2**20 < tiny["sst_bytes"] < 64 * 2**20
    # Measured: 1.3x with index and filters beside the cache (the default), 2.5x with them partitioned in
    # it (indexAndFiltersInCache=true); the layout of the cliff took 10x (filter blocks read again).
    ratio = tiny["median_us_per_row"] / in_cache["median_us_per_row"]
    assert ratio < 3.0, (ratio, tiny["us_per_row"], in_cache["us_per_row"])
