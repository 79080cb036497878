"""The demo job (`make demo`): the same job without and with TTL, side by side, and a chart."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import ROOT


def test_the_demo_shows_state_growing_without_ttl_and_bounded_with_it(tmp_path: Path):
    per_batch = 2000
    done = subprocess.run(
        [sys.executable, "-m", "ttlstore.demo", "--batches", "4", "--rows-per-batch", str(per_batch),
         "--users", "1000000", "--ttl", "1ms", "--output", str(tmp_path / "demo")],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if "state rows, TTL" in line)
    rows = [line.split() for line in lines[header + 1 : header + 5]]
    assert [r[0] for r in rows] == ["0", "1", "2", "3"]
    plain = [int(r[2].replace(",", "")) for r in rows]
    ttl = [int(r[3].replace(",", "")) for r in rows]
    assert 0 < plain[0] < plain[1] < plain[2] < plain[3]
    # With a 1 ms TTL each batch's rows have expired by the next commit: only one batch is kept.
    assert all(0 < n <= per_batch for n in ttl) and ttl[3] < plain[3] / 2
    # Its columns add up: each batch's state rows are the last batch's, plus new rows, minus expired ones.
    new, expired = ([int(r[i].replace(",", "")) for r in rows] for i in (4, 5))
    for batch in range(4):
        assert ttl[batch] == (ttl[batch - 1] if batch else 0) + new[batch] - expired[batch], (batch, rows)
    assert sum(expired) > 0
    assert (tmp_path / "demo" / "state-rows.png").stat().st_size > 1000
    assert list((tmp_path / "demo" / "checkpoint-ttl" / "state").rglob("ttlstore/*.changelog"))


def _dry_run(*goals: str) -> str:
    """What `make <goals>` would run on a fresh shell (no platform choice or make flags inherited)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("TTLSTORE_NATIVE_PLATFORMS", "MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    return subprocess.run(["make", "-n", *goals], cwd=ROOT, env=env, capture_output=True, text=True,
                          check=True).stdout


def test_make_and_make_demo_install_nothing_while_make_test_brings_the_cross_toolchain():
    for goals in ((), ("demo",)):
        assert "apt-get" not in _dry_run(*goals) and "sudo" not in _dry_run(*goals), goals
    assert "apt-get install" in _dry_run("test")
