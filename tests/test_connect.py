"""PySpark over Spark Connect: a real local Connect server of the installed pyspark, started as
docs/install.md says (``ttlstore connect-server``: its ``start-connect-server.sh`` with ttlstore's jar,
extension and provider), and a client in its own process (tests/connect/client.py) that runs a
``dropDuplicates`` with TTL through ``configure`` and ``apply_ttl``, reads its state back with
``read_state``, inspects the checkpoint, and catches a refused setting by ttlstore's condition."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import ttlstore

from conftest import CAPABILITIES, ROOT, run_script

pytestmark = pytest.mark.skipif(not CAPABILITIES["connectServer"],
                                reason="pyspark 3.5 ships no Connect server (its jar is a package of its own)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def connect_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    home = tmp_path_factory.mktemp("connect-server")
    port = free_port()
    env = {**os.environ, "SPARK_LOG_DIR": str(home / "logs"), "SPARK_PID_DIR": str(home / "pids"),
           "SPARK_IDENT_STRING": f"ttlstore-{port}"}
    command = ttlstore.connect_server_command(**{
        "spark.master": "local[2]",
        "spark.connect.grpc.binding.port": str(port),
        "spark.sql.shuffle.partitions": "2",
        "spark.ui.enabled": "false",
        "spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile={ROOT / 'conf' / 'log4j2.properties'}",
    })
    subprocess.run(command, env=env, check=True, capture_output=True, timeout=120)
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                socket.create_connection(("localhost", port), timeout=1).close()
                break
            except OSError:
                logs = "".join(p.read_text() for p in (home / "logs").glob("*.out")) if (home / "logs").exists() else ""
                assert time.monotonic() < deadline, f"the Connect server did not start: {logs[-3000:]}"
                time.sleep(1)
        yield f"sc://localhost:{port}"
    finally:
        stop = Path(command[0]).with_name("stop-connect-server.sh")
        subprocess.run([str(stop)], env=env, capture_output=True, timeout=120)


def test_a_connect_client_runs_a_query_with_ttl_reads_its_state_and_catches_ttlstore_s_errors(
    connect_url: str, tmp_path: Path
):
    result = run_script(sys.executable, ROOT / "tests" / "connect" / "client.py", connect_url, tmp_path)

    assert result["connect"], "the client ran over Spark Connect"
    assert result["output"] == 7 and result["numRowsTotal"] == 7
    assert "ttlstoreCommitLatencyMs" in result["metrics"] and "ttlstoreRowsExpired" in result["metrics"]
    assert result["state"] == {"rows": 7, "expiring": True}
    assert result["inspect"] == {"provider": ttlstore.settings.PROVIDER_CLASS, "rows": 7, "ttlMs": 3_600_000}
    assert result["refused"] is not None and result["refused"]["condition"] == "INVALID_CONFIG", result["refused"]
