"""A store that opens where it holds no local copy (a lost executor's stores moving, a query restarted on new
machines) fetches its snapshot's SST files from the checkpoint, several at once within the executor's bound
(``downloadThreads``), checks each before RocksDB opens it, and counts on as if nothing had been lost.

Here the session's stores are unloaded between two runs of a query, as an executor that lost them would
have them: the restart must fetch every SST of each store's newest snapshot, and its progress says how many
files and bytes it fetched. ``jvm/.../SstDownloadsSuite`` proves the bound and the clean failure;
``tests/test_local_cluster.py`` kills an executor.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from counted_rounds import COUNT, counts, running_counts
from pyspark.sql import SparkSession
from ttl_rounds import EVENTS, rows

import ttlstore

from conftest import TTL_PROVIDER, run_rounds, unload_state_stores

pytestmark = pytest.mark.every_line

ROUNDS = [rows(*(f"k{i % 50}" for i in range(r * 40, r * 40 + 120))) for r in range(4)]
AFTER = [rows("k1", "k2", "new")]
# A snapshot every two versions, so that three rounds leave one to fetch.
CONF = {"spark.sql.streaming.stateStore.minDeltasForSnapshot": "2"}


@pytest.mark.parametrize("lazy_load", ["false", "true"], ids=["fetch first", "open first"])
def test_stores_loaded_where_they_have_no_local_copy_fetch_their_snapshot_and_count_on_as_if_never_lost(
    spark: SparkSession, tmp_path: Path, lazy_load: str
):
    """With ``lazyLoad.enabled=true`` the stores open before the files are local, reading them from the checkpoint
    through the lazy file system while the same downloads bring them down (docs/lazy-load.md)."""
    conf = {**CONF, ttlstore.settings.PREFIX + "lazyLoad.enabled": lazy_load}
    ours = run_rounds(spark, TTL_PROVIDER, tmp_path / "ours", EVENTS, COUNT, ROUNDS, "update", extra_conf=conf)
    assert ours.checkpoint is not None
    deadline = time.monotonic() + 60  # maintenance (every second here) uploads the snapshots
    while len(list((ours.checkpoint / "state").rglob("ttlstore/*.snapshot"))) < 2:
        assert time.monotonic() < deadline, "no snapshot uploaded for both stores"
        time.sleep(0.5)
    unload_state_stores(spark)
    after = run_rounds(spark, TTL_PROVIDER, tmp_path / "ours", EVENTS, COUNT, AFTER, "update", extra_conf=conf,
                       first_round=len(ROUNDS))

    assert after.last_progress is not None
    metrics = after.last_progress["stateOperators"][0]["customMetrics"]
    sst_files = list((ours.checkpoint / "state").rglob("ttlstore/sst/*.sst"))
    assert metrics["ttlstoreLoadFilesFetched"] >= 2, "each of the two stores fetched its snapshot's files"
    assert 0 < metrics["ttlstoreLoadBytesFetched"] <= sum(f.stat().st_size for f in sst_files)
    assert metrics["ttlstoreLoadFilesReused"] == 0, "nothing was local to reuse"
    assert counts(ours.outputs + after.outputs) == running_counts(ROUNDS + AFTER)
