"""Spark's local-cluster master from pyspark's package, and killing one of its executors mid-task.

Shared by tests/cluster/local_cluster.py (the test) and bench/executor_loss.py (`make bench`).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pyspark


def spark_home(parent: Path) -> Path:
    """A Spark home for a local cluster: pyspark's bin/ and jars/, linked, and a work/ directory of its
    own, where the worker keeps each executor's logs (in pyspark's package they would pile up)."""
    home = parent / "spark-home"
    home.mkdir(parents=True)
    for part in ("bin", "jars"):
        (home / part).symlink_to(Path(pyspark.__file__).parent / part)
    return home


def worker_dir() -> Path:
    """Where this process's local cluster keeps its executors' logs (SPARK_HOME must be a spark_home)."""
    return Path(os.environ["SPARK_HOME"]) / "work"


def executors(app_id: str) -> list[tuple[int, str]]:
    """The executor JVMs of the application: (pid, executor id)."""
    out = subprocess.run(["ps", "-eo", "pid=,args="], capture_output=True, text=True, check=True).stdout
    found = []
    for line in out.splitlines():
        executor = re.search(r"--executor-id (\S+)", line)
        if "CoarseGrainedExecutorBackend" in line and app_id in line and executor:
            found.append((int(line.split()[0]), executor.group(1)))
    return found


def tasks_unfinished(executor: str, stage: int) -> list[str]:
    """The tasks of `stage` that `executor` started and did not finish (yet), from its log."""
    log = "\n".join(p.read_text(errors="replace") for p in worker_dir().glob(f"app-*/{executor}/stderr"))
    started = set(re.findall(rf"Running task (\S+) in stage {stage}\.\d+ ", log))
    finished = set(re.findall(rf"Finished task (\S+) in stage {stage}\.\d+ ", log))
    return sorted(started - finished)


def kill_during_stage(spark, tasks: int, after: float = 0.5, timeout: float = 300) -> dict:  # type: ignore[no-untyped-def]
    """Kills -9 an executor that runs a task of a stage of `tasks` tasks (the stateful one), as its
    log shows, `after` seconds after it started; returns what it killed and when."""
    tracker = spark.sparkContext.statusTracker()
    app = spark.sparkContext.applicationId
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for stage in tracker.getActiveStageIds():
            info = tracker.getStageInfo(stage)
            if not info or info.numTasks != tasks:
                continue
            for pid, executor in executors(app):
                if tasks_unfinished(executor, stage):
                    time.sleep(after)
                    os.kill(pid, signal.SIGKILL)
                    return {"pid": pid, "executor": executor, "stage": stage, "at": time.time()}
        time.sleep(0.05)
    raise TimeoutError(f"no stage of {tasks} tasks ran on an executor within {timeout} s")


def executors_by_store() -> dict[str, list[str]]:
    """The executors that initialized each ttlstore store (by its checkpoint directory), from their logs."""
    found: dict[str, set[str]] = {}
    for log in worker_dir().glob("app-*/*/stderr"):
        for m in re.finditer(r"Initialized ttlstore for StateStoreId\[[^\]]*\] in \S+ \(checkpoint (\S+)\)",
                             log.read_text(errors="replace")):
            found.setdefault(m.group(1), set()).add(log.parent.name)
    return {store: sorted(executors) for store, executors in sorted(found.items())}


def memory_overheads_mib() -> dict[str, int]:
    """The memory overhead each executor derived its ttlstore budget from (Spark's rule, as ttlstore's
    ExecutorOverhead works it out), from their logs; executors given an explicit budget are left out."""
    return _memory_logged(r"derived from the executors' memory overhead of (\d+) MiB")


def memory_budgets_mib() -> dict[str, int]:
    """The RocksDB memory budget each executor chose when its first ttlstore store opened, from their logs."""
    return _memory_logged(r"ttlstore's RocksDB memory in this executor: bounded: (\d+) MiB")


def _memory_logged(pattern: str) -> dict[str, int]:
    """Per executor, the MiB its log gives in the first match of `pattern`."""
    found: dict[str, int] = {}
    for log in worker_dir().glob("app-*/*/stderr"):
        m = re.search(pattern, log.read_text(errors="replace"))
        if m:
            found[log.parent.name] = int(m.group(1))
    return dict(sorted(found.items()))
