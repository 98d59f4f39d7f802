"""benches/vs_libcachesim.py, run as a user runs it, on a small trace.

The script is the issue's yardstick for speed: it must run end to end, agree
on miss ratios, and time a whole hierarchy (``--hierarchy``) against
libCacheSim's LRU loop in the same run. Timings themselves are not asserted
(the machine is noisy); that the figures are there and well formed is.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benches" / "vs_libcachesim.py"

GEN = """\
[workload]
type = "zipf"
alpha = 1.0
objects = 3000
requests = 30000
seed = 5
"""

HIERARCHY = """\
[workload]
type = "trace"
path = "{trace}"
unit_size = true
[hierarchy]
fill = "exclusive"
[[tier]]
name = "dram"
tech = "DRAM-DDR3"
capacity = 100
policy = "lru"
[[tier]]
name = "nand"
tech = "NAND-SLC"
capacity = 200
policy = "lru"
"""


def _bench(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    # The `tierlab` command installed beside this interpreter, as a user's
    # shell would find it.
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    gen = tmp_path / "gen.toml"
    gen.write_text(GEN)
    trace = tmp_path / "t.oracleGeneral.bin"
    subprocess.run(["tierlab", "trace", "convert", str(gen), str(trace)], check=True, env=env)
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--trace", str(trace), "--repeat", "2", *extra],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
    )


def test_hierarchy_is_timed_against_libcachesim_lru(tmp_path: Path) -> None:
    cfg = tmp_path / "h.toml"
    cfg.write_text(HIERARCHY.format(trace=tmp_path / "t.oracleGeneral.bin"))
    r = _bench(tmp_path, "--policies", "lru", "--hierarchy", str(cfg))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "RESULT: OK" in r.stdout
    lines = r.stdout.splitlines()
    assert any(line.startswith("hierarchy (whole process)") for line in lines)
    row = next(line for line in lines if line.startswith(str(cfg)))
    # config, lcs req/s (value, unit), tierlab req/s (value, unit), ratio,
    # the two repetitions' ratios, the rate at the reference (value, unit).
    cols = row[len(str(cfg)) :].split()
    assert len(cols) == 9, row
    ratio, per_rep = float(cols[4]), [float(c) for c in cols[5:7]]
    assert ratio > 0 and all(r > 0 for r in per_rep)
    assert min(per_rep) <= ratio <= max(per_rep)
    assert "warning" not in r.stderr


def test_hierarchy_on_another_trace_is_flagged(tmp_path: Path) -> None:
    cfg = tmp_path / "h.toml"
    # The same trace, capped: the script times it but says the counts differ.
    cfg.write_text(
        HIERARCHY.format(trace=tmp_path / "t.oracleGeneral.bin") + "[run]\nmax_requests = 1000\n"
    )
    r = _bench(tmp_path, "--policies", "lru", "--hierarchy", str(cfg))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "ran [1000] requests, --trace has 30000" in r.stderr


def test_shards_is_timed_and_compared_with_the_exact_curve(tmp_path: Path) -> None:
    r = _bench(tmp_path, "--policies", "lru", "--shards", "0.5")
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert any(line.startswith("mrc (whole process, --no-plot)") for line in lines)
    exact = next(line for line in lines if line.startswith("exact LRU (1 run)"))
    assert float(exact.split()[5]) > 0  # its rate, in M req/s (after "-")
    row = next(line for line in lines if line.startswith("SHARDS 0.5"))
    # lcs req/s (value, unit), tierlab req/s (value, unit), ratio, the two
    # repetitions' ratios, the rate at the reference (value, unit), the MAE
    # and "(max X)".
    cols = row[len("SHARDS 0.5") :].split()
    assert len(cols) == 12, row
    ratio, per_rep = float(cols[4]), [float(c) for c in cols[5:7]]
    assert min(per_rep) <= ratio <= max(per_rep)
    # A half sample of 3,000 objects: close to the exact curve, not equal.
    assert 0 < float(cols[9]) < 0.08
    assert "error" not in r.stderr


def test_vm_case_generates_its_trace_and_agrees_with_libcachesim_clock(tmp_path: Path) -> None:
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    memtrace = tmp_path / "vm.memtrace"
    r = subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--vm",
            str(memtrace),
            "--generate",
            "--vm-references",
            "30000",
            "--vm-pages",
            "400",
            "--repeat",
            "1",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert memtrace.stat().st_size == 8 + 16 * 30000
    row = next(line for line in r.stdout.splitlines() if line.startswith("4KiB, tlb 64"))
    cols = row.split()
    # ... ratio, per repetition, tlb miss ratio, faults, lcs clock misses.
    assert float(cols[-5]) > 0
    assert 0 < float(cols[-3]) < 1
    assert cols[-2] == cols[-1], "faults are CLOCK's misses on the page stream"
    assert "RESULT: OK" in r.stdout
