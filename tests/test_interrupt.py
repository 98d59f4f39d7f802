"""Long runs release the GIL and stop on Ctrl-C (Python API)."""

from __future__ import annotations

import signal
import sys
import threading
import time

import tierlab
from conftest import interruptible

LONG = {
    # Far longer than any test waits: only an interrupt ends it early.
    "workload": {"type": "zipf", "objects": 100_000, "requests": 2_000_000_000},
    "tier": [{"tech": "DRAM-DDR3", "capacity": "64MiB"}],
}


def test_ctrl_c_stops_the_cli_with_130_and_no_traceback(tmp_path) -> None:
    cfg = tmp_path / "long.toml"
    cfg.write_text(
        '[workload]\ntype = "zipf"\nobjects = 100_000\nrequests = 2_000_000_000\n'
        '[[tier]]\ntech = "DRAM-DDR3"\ncapacity = "64MiB"\n'
    )
    with interruptible([sys.executable, "-m", "tierlab.cli", "run", str(cfg), "--json"]) as p:
        time.sleep(2.0)
        assert p.poll() is None, "the run ended before it was interrupted"
        t0 = time.monotonic()
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=30)
    assert time.monotonic() - t0 < 10, "Ctrl-C took too long to stop the engine"
    assert p.returncode == 130, (p.returncode, err)
    assert err.strip() == "interrupted", err
    assert out == ""


def test_simulate_releases_the_gil() -> None:
    """A Python thread keeps running while the engine works in another."""
    ticks = 0
    stop = threading.Event()

    def count() -> None:
        nonlocal ticks
        while not stop.is_set():
            ticks += 1
            time.sleep(0.001)

    small = {**LONG, "workload": {**LONG["workload"], "requests": 3_000_000}}
    t = threading.Thread(target=count)
    t.start()
    t0 = time.monotonic()
    tierlab.simulate(small)
    elapsed = time.monotonic() - t0
    stop.set()
    t.join()
    # With the GIL held for the whole run the counter would barely move.
    assert elapsed > 0.05
    assert ticks > 0.3 * elapsed / 0.001 * 0.5, (ticks, elapsed)


def test_ctrl_c_during_convert_keeps_the_old_output(tmp_path) -> None:
    """A conversion writes a new file and renames it over OUT at the end:
    Ctrl-C half way leaves OUT as it was and no partial file."""
    cfg = tmp_path / "long.toml"
    cfg.write_text('[workload]\ntype = "zipf"\nobjects = 100_000\nrequests = 2_000_000_000\n')
    out = tmp_path / "out.csv"
    out.write_text("old\n")
    argv = [sys.executable, "-m", "tierlab.cli", "trace", "convert", str(cfg), str(out)]
    with interruptible(argv) as p:
        time.sleep(2.0)
        assert p.poll() is None, "the conversion ended before it was interrupted"
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=30)
    assert p.returncode == 130, (p.returncode, err)
    assert out.read_text() == "old\n"
    assert sorted(f.name for f in tmp_path.iterdir()) == ["long.toml", "out.csv"]
