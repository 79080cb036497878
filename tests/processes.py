"""Scripts run in processes of their own, as the tests and the benchmarks run them: each in its own
process group, with its output in files, killed whole once done (bench/ladder.py, the crash loop, the
tests that kill a driver)."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def kill_group(child) -> None:  # type: ignore[no-untyped-def]
    """Kills a child started with `start_new_session` together with its process group (a Python driver
    and its JVM), and reaps it."""
    import signal

    try:
        os.killpg(child.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    child.wait()


def run_script(script: Path, argv: list[str], timeout: float | None = None) -> dict:
    """Runs `script` with `argv` in a new process (so a new JVM) and returns its `RESULT` line's JSON.

    The script runs in a process group of its own, with its output in files rather than pipes: once
    it is done (or past `timeout`), whatever is left of the group is killed. A Spark JVM has been
    seen to hang at exit after its Python driver had printed its result and exited, and a pipe it
    held open would have kept this call waiting for ever."""
    import subprocess

    # Measured with the full JIT, also inside the test suite (whose JVMs run on C1 alone: tests/conftest.py).
    env = {k: v for k, v in os.environ.items() if k != "JDK_JAVA_OPTIONS"}
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        child = subprocess.Popen([sys.executable, str(script), *argv], cwd=ROOT, stdout=out, stderr=err, text=True,
                                 start_new_session=True, env=env)
        try:
            child.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            pass
        finally:
            kill_group(child)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    line = next((o for o in stdout.splitlines() if o.startswith("RESULT ")), None)
    if line is None:
        raise RuntimeError(f"{Path(script).name} {' '.join(argv)} failed (exit {child.returncode}):\n"
                           f"{stdout[-2000:]}{stderr[-3000:]}")
    return json.loads(line[len("RESULT "):])
