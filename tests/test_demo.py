"""The demo job (`make demo`) runs on ttlstore, prints one table row per batch and stops by itself."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import ROOT


def test_the_demo_prints_a_row_per_batch_and_stops_by_itself(tmp_path: Path):
    done = subprocess.run(
        [sys.executable, "-m", "ttlstore.demo", "--batches", "3", "--rows-per-batch", "2000",
         "--users", "3000", "--output", str(tmp_path / "demo")],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if "state rows" in line)
    rows = [line.split() for line in lines[header + 1 : header + 4]]
    assert [r[0] for r in rows] == ["0", "1", "2"]
    state_rows = [int(r[3].replace(",", "")) for r in rows]
    assert 0 < state_rows[0] < state_rows[1] < state_rows[2] <= 3000
    assert list((tmp_path / "demo" / "checkpoint" / "state").rglob("ttlstore/*.changelog"))
