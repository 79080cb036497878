"""An HDFS on this machine: Hadoop's mini cluster (one name node, one data node) in a JVM of its own.

Shared by tests/test_distributed_fs.py (checkpoints on HDFS) and bench/recoveries.py (`make bench-recovery`'s
rung on HDFS). `make test` fetches the mini cluster (hadoop-client-minicluster of the Hadoop version whose client
jars the development line's pyspark ships) into .build/minicluster.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from processes import kill_group

MINICLUSTER = Path(__file__).resolve().parents[2] / ".build" / "minicluster"


@contextmanager
def mini_dfs(work: Path, hadoop_jars: Path) -> Iterator[str]:
    """Runs the mini cluster with its data and log under `work` on the Hadoop of `hadoop_jars` (a Spark line's
    jars, which the mini cluster was fetched for), and yields its URI (hdfs://localhost:<port>). A client of
    another line's Hadoop talks to it over HDFS's RPC. The cluster is killed on exit."""
    assert (MINICLUSTER / ".fetched").is_file(), f"{MINICLUSTER} is missing: `make test` fetches it"
    work.mkdir(parents=True, exist_ok=True)
    details, log_path = work / "details.json", work / "minicluster.log"
    java = Path(os.environ["JAVA_HOME"], "bin", "java") if "JAVA_HOME" in os.environ else "java"
    with open(log_path, "w") as log:
        process = subprocess.Popen(
            [str(java), f"-Dtest.build.data={work / 'data'}", "-cp", f"{MINICLUSTER}/*:{hadoop_jars}/*",
             "org.apache.hadoop.test.MiniDFSClusterManager", "-format", "-writeDetails", str(details)],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        yield f"hdfs://localhost:{_details(process, details, log_path)['namenode_port']}"
    finally:
        kill_group(process)


def _details(process: subprocess.Popen, details: Path, log: Path, timeout: float = 180) -> dict:
    """What the mini cluster wrote to `details` once it is up. It writes the file in place, so the file can exist
    before it holds its JSON: read it until it parses."""
    deadline = time.monotonic() + timeout
    while True:
        assert process.poll() is None and time.monotonic() < deadline, log.read_text()[-3000:]
        try:
            return json.loads(details.read_text())
        except (FileNotFoundError, json.JSONDecodeError):
            time.sleep(0.2)
