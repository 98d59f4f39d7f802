"""The S5 paging captures (docs/reproduce-s5.md, "Captures sized like S5's
Table 1" and rule P4, "The reference stream: below the caches"): the
window rule of ``s5_window.py``, the shipped traces against Table 1's
reference counts, and a capture of each stand-in program under
Valgrind through a FIFO, as ``make-s5-traces.sh`` runs it (skipped where
Valgrind or the program is missing: ``make deps`` installs them)."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import tierlab
from conftest import REPO
from tierlab.reproductions.s5_paging import TRACES

HERE = REPO / "python/tierlab/experiments/traces"
SCRIPT = HERE / "s5_window.py"
_spec = importlib.util.spec_from_file_location("s5_window", SCRIPT)
assert _spec is not None and _spec.loader is not None
s5_window = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(s5_window)

#: S5 Table 1: references and footprint (MiB) of each desktop program.
TABLE1 = {
    "freecell": (490_175, 9.84),
    "gedit": (1_733_763, 14.12),
    "gqview": (610_685, 7.26),
    "kghostview": (1_546_135, 16.98),
    "xmms": (1_168_939, 7.86),
}
#: The command each stand-in is captured with in the test (a short run).
PROGRAMS = {
    "fc-solve": ["fc-solve", "--version"],
    "vim": ["vim", "-u", "NONE", "-i", "NONE", "-n", "-es", "-c", "q!"],
    "djpeg": ["djpeg", "-version"],
    "pdftoppm": ["pdftoppm", "-v"],
    "flac": ["flac", "--version"],
}


def test_every_table1_program_has_a_stand_in() -> None:
    assert sorted(TRACES.values()) == sorted(TABLE1)
    assert set(PROGRAMS) == set(TRACES)


def _pages(*pairs: tuple[int, int]) -> np.ndarray:
    return np.array(pairs, dtype=np.uint64)


def test_window_rule_nearest_footprint_earliest_of_equals() -> None:
    # 16 references, N = 4: candidates start at 0, 1, ..., 12 (N/4 = 1).
    seq = [1, 1, 1, 1, 2, 3, 4, 5, 5, 5, 5, 5, 6, 7, 8, 9]
    pages = _pages(*[(p, p) for p in seq])
    skip, cands = s5_window.choose(pages, 4, 4)
    assert [k for k, _ in cands] == list(range(13))
    # Footprint 4 at 3 (pages 1-4), 4, ... and 12: the earliest is kept.
    assert skip == 3 and dict(cands)[3] == 4 and dict(cands)[12] == 4
    skip, _ = s5_window.choose(pages, 4, 1)
    assert skip == 0
    # A reference spanning two pages counts both.
    assert s5_window.footprint(_pages((1, 2), (2, 2))) == 2


def test_window_reads_at_most_eight_n(tmp_path: Path) -> None:
    log = tmp_path / "x.lackey"
    lines = ["==1== noise\n", "I  04000000,3\n"]
    lines += [f" {'LSM'[i % 3]} {0x10000 + 4096 * (i % 50):08x},8\n" for i in range(1000)]
    log.write_text("".join(lines))
    out = tmp_path / "w.lackey"
    r = subprocess.run(
        [sys.executable, SCRIPT, log, "--refs", "20", "--pages", "20", "-o", out],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    got = json.loads(r.stdout)
    assert got["read_refs"] == 160  # 8 N
    assert got["refs"] == 20 and got["pages"] == 20 and got["skip"] == 0
    kept = out.read_text().splitlines()
    assert len(kept) == 20 and all(x[1] in "LSM" for x in kept)
    assert not (tmp_path / "w.lackey.read").exists()


def test_window_of_a_memtrace(tmp_path: Path) -> None:
    # Rule P4's captures are memtraces of 64-byte lines: 1,000 records over
    # 50 pages, cut to 20 records.
    recs = np.zeros(1000, dtype=s5_window.RECORD)
    recs["addr"] = [0x10000 + 4096 * (i % 50) + 64 * (i % 7) for i in range(1000)]
    recs["size"] = 64
    recs["op"] = [i % 2 for i in range(1000)]
    trace = tmp_path / "x.memtrace"
    with trace.open("wb") as f:
        f.write(s5_window.MAGIC)
        recs.tofile(f)
    out = tmp_path / "w.memtrace"
    r = subprocess.run(
        [sys.executable, SCRIPT, trace, "--refs", "20", "--pages", "10", "-o", out],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    got = json.loads(r.stdout)
    assert got["read_refs"] == 160 and got["refs"] == 20
    # Every window of 20 consecutive records touches 20 pages: the first.
    assert got["skip"] == 0 and got["pages"] == 20
    s = tierlab.trace_stats(out)
    assert s["requests"] == 20 and s["writes"] == 10
    assert out.read_bytes() == s5_window.MAGIC + recs[:20].tobytes()
    # Rule P4 as amended: the first N records only (--prefix 1), whatever
    # the footprints of the later windows.
    first = tmp_path / "first.memtrace"
    r = subprocess.run(
        [sys.executable, SCRIPT, trace, "--refs", "20", "--pages", "1000", "--prefix", "1",
         "-o", first],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    got = json.loads(r.stdout)
    assert (got["read_refs"], got["skip"], got["candidates"]) == (20, 0, [[0, 20]])
    assert first.read_bytes() == s5_window.MAGIC + recs[:20].tobytes()
    bad = subprocess.run(
        [sys.executable, SCRIPT, trace, "--refs", "20", "--pages", "10", "--prefix", "0",
         "-o", tmp_path / "bad.memtrace"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert bad.returncode == 2 and "--prefix 0: must be at least 1" in bad.stderr


@pytest.mark.parametrize("name", list(TRACES))
def test_shipped_trace_has_table1_references(name: str) -> None:
    refs, mib = TABLE1[TRACES[name]]
    trace = HERE / f"{name}.memtrace.zst"
    assert trace.stat().st_size < 3_200_000, "keep each trace under ~3 MB"
    stats = tierlab.trace_stats(trace)
    window = json.loads((HERE / f"{name}.window.json").read_text())
    # Rule P4: the row's count, or all the misses of a run that made fewer.
    assert stats["requests"] == window["refs"] == min(refs, window["read_refs"])
    assert window["target_pages"] == round(mib * 256)
    # The chosen window is the candidate nearest the row's footprint.
    best = min(abs(p - window["target_pages"]) for _, p in window["candidates"])
    assert abs(window["pages"] - window["target_pages"]) == best


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="no valgrind (make deps)")
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_capture_through_a_fifo(name: str, tmp_path: Path) -> None:
    cmd = PROGRAMS[name]
    if shutil.which(cmd[0]) is None:
        pytest.skip(f"{cmd[0]} is not installed (make deps)")
    fifo = tmp_path / "log.fifo"
    os.mkfifo(fifo)
    vg = subprocess.Popen(
        ["valgrind", "--tool=lackey", "--trace-mem=yes", "-q", f"--log-file={fifo}", *cmd],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    out = tmp_path / "w.lackey"
    try:
        r = subprocess.run(
            [sys.executable, SCRIPT, fifo, "--refs", "2000", "--pages", "8", "-o", out],
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
    finally:
        vg.kill()
        vg.wait()
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert got["refs"] == 2000 and got["pages"] >= 1
    memtrace = tmp_path / "w.memtrace"
    s = tierlab.trace_convert(out, memtrace)
    assert s["requests"] == 2000
