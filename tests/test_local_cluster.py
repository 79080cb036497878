"""ttlstore on real executors: Spark's local-cluster master runs two executors in JVMs of their own.

The query runs in a process of its own (tests/cluster/local_cluster.py), since a process holds one
SparkContext. Each round is a new query run on the same checkpoint, so the stores are loaded again
wherever Spark places them; in one round an executor JVM is killed with SIGKILL while the stateful
stage runs, and its stores are rebuilt on the other executors from the checkpoint. The aggregation
is repartitioned (4 -> 7 -> 3 state partitions) between rounds while the executors still hold its
stores (on lines that write operator metadata, 4.0 on; on Spark 3.5 it keeps its 4). The output of
every round must equal that of Spark's HDFS provider on the same input, with
no kill and no repartition.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from cluster.executors import spark_home

from conftest import HAS_OPERATOR_METADATA, ROOT


def run_cluster(tmp_path: Path) -> dict:
    env = {**os.environ, "SPARK_HOME": str(spark_home(tmp_path))}
    ran = subprocess.run([sys.executable, str(ROOT / "tests" / "cluster" / "local_cluster.py"), str(tmp_path / "work"),
                          *([] if HAS_OPERATOR_METADATA else ["--no-repartition"])],
                         capture_output=True, text=True, timeout=900, env=env, cwd=tmp_path)
    results = [x.removeprefix("RESULT ") for x in ran.stdout.splitlines() if x.startswith("RESULT ")]
    assert len(results) == 1, ran.stdout[-3000:] + ran.stderr[-5000:]
    return json.loads(results[0])


def test_on_separate_executor_jvms_killed_and_repartitioned_every_round_equals_spark_hdfs_provider(tmp_path: Path):
    result = run_cluster(tmp_path)
    for name in ("dedup", "count"):
        hdfs, ours = result[name]["hdfs"]["outputs"], result[name]["ttlstore"]["outputs"]
        assert len(ours) == len(hdfs) == 6
        for index, (theirs, mine) in enumerate(zip(hdfs, ours, strict=True)):
            assert mine == theirs, f"{name}, round {index}"
    assert result["count"]["ttlstore"]["partitions"] == ([4, 4, 7, 7, 3, 3] if HAS_OPERATOR_METADATA else [4] * 6)
    assert result["count"]["hdfs"]["partitions"] == [4] * 6
    killed = result["dedup"]["ttlstore"]["killed"]
    assert killed.get("tasks_lost"), f"the killed executor was running tasks of the stateful stage: {killed}"
    stores = result["executors_by_store"]
    dedup = {store: executors for store, executors in stores.items() if "/dedup-ttlstore-checkpoint/" in store}
    assert len(dedup) == 4, stores
    assert len({e for executors in stores.values() for e in executors}) == 3, f"two executors, and one after the kill: {stores}"
    assert any(len(executors) > 1 for executors in dedup.values()), f"a store moved to another executor: {stores}"
