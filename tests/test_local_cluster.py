"""ttlstore on real executors: Spark's local-cluster master runs two executors in JVMs of their own.

The queries run in a process of its own (tests/cluster/local_cluster.py), since a process holds one
SparkContext. Each round is a new query run on the same checkpoint, so the stores are loaded again
wherever Spark places them. In one round of the deduplication an executor JVM is killed with SIGKILL
while the stateful stage runs, and its stores load on the other executors from the checkpoint: on
every Spark line, so that they open at once on their snapshots' SST files through the lazy file system
(``lazyLoad.enabled=true``: ranged reads from the checkpoint) while they fetch them (``downloadThreads``
at a time) through that line's Hadoop and rocksdbjni. The aggregation is repartitioned (4 -> 7 -> 3 state partitions)
between rounds while the executors still hold its stores (on the development line). The output of
every round must equal that of Spark's HDFS provider on the same input, with no kill and no
repartition.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from cluster.executors import spark_home

from conftest import HAS_OPERATOR_METADATA, ROOT

#: The round of ttlstore's deduplication in which an executor is killed (of five).
KILL_ROUND = 3
MiB = 1 << 20


@pytest.fixture(scope="module")
def cluster_run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """One run of the script for the module: the aggregation too where its test was selected."""
    repartitioned = test_an_aggregation_repartitioned_while_executors_hold_its_stores_emits_what_spark_hdfs_provider_does
    queries = ["dedup"] + (["count"] if any(getattr(item, "function", None) is repartitioned
                                            for item in request.session.items) else [])
    work = tmp_path_factory.mktemp("local-cluster")
    env = {**os.environ, "SPARK_HOME": str(spark_home(work))}
    ran = subprocess.run([sys.executable, str(ROOT / "tests" / "cluster" / "local_cluster.py"), str(work / "work"),
                          "--kill-round", str(KILL_ROUND), "--queries", ",".join(queries),
                          *([] if HAS_OPERATOR_METADATA else ["--no-repartition"])],
                         capture_output=True, text=True, timeout=900, env=env, cwd=work)
    results = [x.removeprefix("RESULT ") for x in ran.stdout.splitlines() if x.startswith("RESULT ")]
    assert len(results) == 1, ran.stdout[-3000:] + ran.stderr[-5000:]
    return json.loads(results[0])


def assert_same_rows_every_round(result: dict, name: str) -> None:
    hdfs, ours = result[name]["hdfs"]["outputs"], result[name]["ttlstore"]["outputs"]
    assert len(ours) == len(hdfs) == 5
    for index, (theirs, mine) in enumerate(zip(hdfs, ours, strict=True)):
        assert mine == theirs, f"{name}, round {index}"


def stores_of(result: dict, name: str) -> dict[str, list[str]]:
    """The executors that initialized each of the query's ttlstore stores."""
    stores = result["executors_by_store"]
    return {store: executors for store, executors in stores.items() if f"/{name}-ttlstore-checkpoint/" in store}


@pytest.mark.every_line
def test_a_killed_executors_stores_load_where_they_move_fetching_their_snapshots_and_emit_what_spark_hdfs_provider_does(
    cluster_run: dict,
):
    assert_same_rows_every_round(cluster_run, "dedup")
    killed = cluster_run["dedup"]["ttlstore"]["killed"]
    assert killed.get("tasks_lost"), f"the killed executor was running tasks of the stateful stage: {killed}"
    fetched = cluster_run["dedup"]["ttlstore"]["files_fetched"]
    assert fetched[KILL_ROUND] > 0, f"the lost executor's stores fetched their snapshots where they moved: {fetched}"
    dedup = stores_of(cluster_run, "dedup")
    assert len(dedup) == 4, cluster_run["executors_by_store"]
    assert any(len(executors) > 1 for executors in dedup.values()), f"a store moved to another executor: {dedup}"


@pytest.mark.every_line
def test_executors_with_spark_default_overhead_get_a_memory_budget_that_fits_it_and_the_progress_shows_it(
        cluster_run: dict):
    # Executors of 1 GiB with Spark's default overhead (the larger of 384 MiB and a tenth of their memory) and no
    # budget set: each chose 64 MiB (half of 384 - 288 is below that floor) when its first store opened (its log says
    # so), not local mode's 512.
    assert set(cluster_run["memory_budgets_mib"].values()) == {64}, cluster_run["memory_budgets_mib"]
    assert len(cluster_run["memory_budgets_mib"]) >= 2, "both executors (and the one that replaced the killed one)"
    # The progress splits each executor's budget between the stores open there when each reports: a sum over the
    # operator's stores is about 64 MiB per executor that holds them, at most the whole budget for each store.
    budgets = cluster_run["dedup"]["ttlstore"]["memory_budget_bytes"]
    assert all(32 * MiB <= b <= 4 * 64 * MiB for b in budgets), [b / MiB for b in budgets]


def test_an_aggregation_repartitioned_while_executors_hold_its_stores_emits_what_spark_hdfs_provider_does(
    cluster_run: dict,
):
    assert_same_rows_every_round(cluster_run, "count")
    assert cluster_run["count"]["ttlstore"]["partitions"] == ([4, 4, 7, 7, 3] if HAS_OPERATOR_METADATA else [4] * 5)
    assert cluster_run["count"]["hdfs"]["partitions"] == [4] * 5
    executors = {e for stores in cluster_run["executors_by_store"].values() for e in stores}
    assert len(executors) == 3, f"two executors, and one after the kill: {cluster_run['executors_by_store']}"
