"""The soak, bounded: some tens of batches of steady churn on a local-cluster executor find a leak that
the test injects, and find none without it.

tests/chaos/soak.py runs a TTL'd deduplication and an aggregation on Spark's rate source (new keys in,
expired keys out, the live set constant) and samples the executor JVM. Here it runs three times: for 70
batches as shipped, and for 40 with the test hook ``leak=store`` (every load opens a RocksDB instance and never
closes it, as an unclosed store leaks). The run as shipped keeps its open files and threads within the
soak's bands over its second half; the leaking run's open files drift far past theirs. A third run, in remote mode
(1 MiB of local SST files, the rest read from the checkpoint), is judged as the first. Memory is not
judged in so short a run (the heap and the block cache are still warming up); ``make soak`` runs
thousands of batches and judges every figure (docs/reliability.md, "Soak"), ``make soak-remote`` in remote
mode ("Soak in remote mode").
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import hooks
import pytest
from cluster.executors import spark_home

from conftest import ROOT

BATCHES = 70
MiB = 1 << 20
# Two runs of a local-cluster executor for tens of batches: `make chaos` runs them, `make soak` the long soak.
pytestmark = pytest.mark.long


def soak(tmp_path: Path, *conf: str, batches: int = BATCHES, remote_mb: int = 0) -> dict:
    env = {**os.environ, "SPARK_HOME": str(spark_home(tmp_path))}
    args = [sys.executable, str(ROOT / "tests" / "chaos" / "soak.py"), str(tmp_path / "work"), "--batches",
            str(batches), "--rate", "2000", "--ttl", "5", "--trigger", "250 milliseconds", "--sample", "1",
            "--executors", "1", "--partitions", "2", "--remote-mb", str(remote_mb), *(f"--conf={c}" for c in conf)]
    ran = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    results = [line.removeprefix("RESULT ") for line in ran.stdout.splitlines() if line.startswith("RESULT ")]
    assert ran.returncode == 0 and len(results) == 1, ran.stdout[-3000:] + ran.stderr[-4000:]
    return json.loads(results[0])


def judged(result: dict, figure: str) -> list[dict]:
    found = [v for k, v in result["verdicts"].items() if k.startswith(f"{figure} (executor")]
    assert found, f"no {figure} samples: {sorted(result['verdicts'])}"
    return found


@pytest.fixture(scope="module")
def shipped(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return soak(tmp_path_factory.mktemp("soak"))


def test_a_bounded_soak_of_ttlstore_as_shipped_keeps_its_open_files_and_threads_flat(shipped: dict):
    for figure in ("open_fds", "threads"):
        for verdict in judged(shipped, figure):
            assert verdict["within"], (figure, verdict)


def test_a_bounded_soak_in_remote_mode_keeps_its_open_files_and_threads_flat_and_its_budget_follows_the_overhead(
        tmp_path: Path):
    # 1 MiB of local SST files: most of the live set's files are read from the checkpoint, as `make soak-remote` runs it.
    # The executor's overhead set to 640 MiB: the budget is half of what it leaves after 288 MiB, 176 MiB.
    remote = soak(tmp_path, "spark.executor.memoryOverhead=640m", remote_mb=1)
    for figure in ("open_fds", "threads"):
        for verdict in judged(remote, figure):
            assert verdict["within"], (figure, verdict)
    assert_budget_reported(remote["memory"], 176 * MiB)


def assert_budget_reported(memory: dict, budget: int) -> None:
    """The progress's memory figures: each executor's split between its stores, all of which the progress reports
    (give or take a store opening or closing between the queries' progress), so their sums are the executor's."""
    assert budget // 2 <= memory["memory_budget_bytes"] <= budget, memory
    assert 0 < memory["memory_cache_bytes"] <= 1.1 * memory["memory_budget_bytes"], memory
    assert memory["memory_memtable_bytes"] > 0, memory
    # The executor's resident memory as the provider read it, against what the soak measured of its JVM.
    assert 0.5 * memory["rss_bytes"] <= memory["memory_resident_bytes"] <= 1.3 * memory["rss_bytes"], memory


def test_a_bounded_soak_reports_the_executors_memory_with_a_budget_derived_from_their_overhead(shipped: dict):
    # One executor of 1 GiB with Spark's default overhead, the larger of 384 MiB and a tenth of its memory: half of
    # 384 - 288 is 48 MiB, so the budget is the floor of 64 MiB (not local mode's 512).
    assert_budget_reported(shipped["memory"], 64 * MiB)
    # The limit a container would set it, heap plus the overhead its log names, which it stays below.
    (limit,) = shipped["limit"].values()
    assert (limit["heap_mib"], limit["overhead_mib"]) == (1024, 384), limit
    assert limit["within"] and limit["peak_rss_bytes"] > limit["heap_mib"] * MiB // 4, limit


def test_a_bounded_soak_finds_a_store_that_is_never_closed(tmp_path: Path, shipped: dict):
    # Shorter: every load leaks an instance (a few open files each), so the drift is plain within 40 batches.
    leaking = soak(tmp_path, f"{hooks.LEAK}=store", batches=40)
    fds = judged(leaking, "open_fds")
    assert not all(v["within"] for v in fds), fds
    assert max(v["drift"] for v in fds) > 5 * max(abs(v["drift"]) for v in judged(shipped, "open_fds")), fds
