"""benches/migration_costs.c, built and run as its header says, with few rounds.

The benchmark is the source of the `[vm.migration.cost]` defaults that no
published figure gives (docs/tiered-memory.md, "How a default cost is
chosen", rule 2). Timings are not asserted (the machine is shared); what is
asserted is that each event it measures is the event it claims: a read of
the fault file takes exactly one minor fault (fault-around maps the one
cached page of its window, nothing else), and every figure it prints is
there, positive and well formed, or says why it could not be measured.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "benches" / "migration_costs.c"

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or shutil.which("cc") is None,
    reason="a Linux benchmark built with cc",
)


@pytest.fixture(scope="module")
def binary(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bench") / "migration_costs"
    cmd = ["cc", "-O2", "-Wall", "-Werror", "-pthread", "-o", str(out), str(SOURCE)]
    subprocess.run(cmd, check=True)
    return out


def figure(text: str, name: str) -> float:
    m = re.search(rf"^{name}\s+(\d+)\s+\(p10 (\d+), p90 (\d+)\)", text, re.M)
    assert m, f"{name} missing from:\n{text}"
    median, p10, p90 = (float(g) for g in m.groups())
    assert p10 <= median <= p90
    return median


def test_each_event_is_measured(binary: Path) -> None:
    out = subprocess.run([str(binary), "11"], capture_output=True, text=True, check=True).stdout
    assert "11 rounds" in out
    for name in ("pte_update_ns", "fault_read_ns", "hint_fault_ns", "scan_ns"):
        assert figure(out, name) > 0
    # One minor fault per read: the proxy maps one existing page per fault.
    faults = re.search(r"minor faults per read: ([\d.]+)", out)
    assert faults and float(faults.group(1)) == 1.0
    if (os.cpu_count() or 1) >= 2:
        figure(out, "two_threads_ns")
        assert re.search(r"^tlb_shootdown_ns\s+-?\d+ .*received [\d.]+ per pair", out, re.M)
    else:
        assert re.search(r"^tlb_shootdown_ns\s+not measured: one CPU", out, re.M)
    # The sample: a figure, or the reason this machine cannot give one.
    assert re.search(r"^sample_ns\s+(\d+ |not measured: \S)", out, re.M)


def test_rounds_out_of_range(binary: Path) -> None:
    run = subprocess.run([str(binary), "0"], capture_output=True, text=True)
    assert run.returncode == 2
    assert "rounds must be 1 to 1001" in run.stderr
