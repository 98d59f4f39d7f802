"""Pre-passes (a footprint for a capacity given as a share, Belady's
next-access times, a warm-up share's count) read no further than the run,
report progress, stop on Ctrl-C, and hold bounded memory or say before
they start how much they need (issue 37, item 3).

Each case runs the real command in a subprocess under a deadline, its peak
resident size measured.
"""

from __future__ import annotations

import json
import signal
import sys
import time
from pathlib import Path

import tierlab
from conftest import interruptible
from measured import MAX_RSS_MIB, assert_one_line_error, run_measured

# A generator far longer than any test waits for.
LONG = 'type = "zipf"\nobjects = 1_000_000\nrequests = 2_000_000_000\n'


def config(
    tmp_path: Path,
    workload: str,
    capacity: str,
    extra: str = "",
    policy: str = "lru",
    name: str = "c.toml",
) -> Path:
    cfg = tmp_path / name
    cfg.write_text(
        f'[workload]\n{workload}\n[[tier]]\nname = "d"\ntech = "DRAM-DDR3"\n'
        f'capacity = "{capacity}"\npolicy = "{policy}"\n{extra}'
    )
    return cfg


def test_a_share_of_a_long_generator_reads_only_max_requests(tmp_path: Path) -> None:
    """`capacity = "50%"` of a 2-billion-request generator with
    `max_requests = 20000`: the footprint pass read all 2 billion (minutes);
    it reads the 20,000 the run reads, and the share is of their footprint."""
    cfg = config(tmp_path, LONG, "50%", "[run]\nmax_requests = 20_000\n")
    r = run_measured(["run", cfg, "--json"], timeout=60)
    assert r.code == 0 and not r.timed_out, (r.code, r.seconds, r.err[-2000:])
    assert r.rss_mib < MAX_RSS_MIB, f"peak resident size {r.rss_mib:.0f} MiB"
    got = json.loads(r.out)
    assert got["requests"] == 20_000
    # The same capacity as a run of a generator of those 20,000 requests.
    short = config(
        tmp_path, 'type = "zipf"\nobjects = 1_000_000\nrequests = 20_000\n', "50%", name="s.toml"
    )
    want = json.loads(run_measured(["run", short, "--json"], timeout=60).out)
    assert got["tiers"][0]["capacity"] == want["tiers"][0]["capacity"]


def test_belady_of_a_long_generator_with_max_requests_is_bounded(tmp_path: Path) -> None:
    """Belady's next-access pass under `max_requests = 20000` holds what
    those 20,000 requests need (it grew past 2 GB and aborted)."""
    small = 'type = "zipf"\nobjects = 1000\nrequests = 2_000_000_000\n'
    cfg = config(tmp_path, small, "64KiB", "[run]\nmax_requests = 20_000\n", policy="belady")
    r = run_measured(["run", cfg, "--json"], timeout=60)
    assert r.code == 0 and not r.timed_out, (r.code, r.seconds, r.err[-2000:])
    assert r.rss_mib < MAX_RSS_MIB, f"peak resident size {r.rss_mib:.0f} MiB"
    assert json.loads(r.out)["requests"] == 20_000


def test_belady_says_what_its_pre_pass_needs_before_starting(tmp_path: Path) -> None:
    """Without `max_requests` the next-access pass of a source that knows
    its length says what it needs (16 bytes a request) before it reads a
    request; one of unknown length (a CSV trace), as it grows."""
    cfg = config(tmp_path, LONG, "64KiB", policy="belady")
    r = run_measured(["run", cfg, "--json"], timeout=30)
    assert_one_line_error(
        r,
        "Belady's next-access pre-pass over 2000000000 requests",
        "needs 32000000000 bytes",
        "max_requests",
    )
    assert r.seconds < 20 and r.rss_mib < MAX_RSS_MIB, (r.seconds, r.rss_mib)
    # The bound is TIERLAB_MAX_PREPASS when it is set (else the memory the
    # system has available).
    t = tmp_path / "t.csv"
    t.write_text("".join(f"{i},{i % 5000},1\n" for i in range(200_000)))
    cfg = config(
        tmp_path, f'type = "trace"\npath = "{t}"\nformat = "csv"', "64KiB", policy="belady"
    )
    env = {"TIERLAB_MAX_PREPASS": "1MiB"}
    r = run_measured(["run", cfg, "--json"], timeout=30, env=env)
    line = assert_one_line_error(r, "Belady's next-access pre-pass", str(t), "TIERLAB_MAX_PREPASS")
    assert "more than the TIERLAB_MAX_PREPASS=1 MiB" in line, line
    r = run_measured(["run", cfg, "--json"], timeout=60, env={"TIERLAB_MAX_PREPASS": "64MiB"})
    assert r.code == 0, r.err


def interrupt_during_pre_pass(cfg: Path) -> tuple[int, str, float]:
    argv = [sys.executable, "-m", "tierlab.cli", "run", str(cfg), "--json"]
    with interruptible(argv) as p:
        time.sleep(3.0)
        assert p.poll() is None, "the run ended before it was interrupted"
        t0 = time.monotonic()
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=60)
    return p.returncode, err, time.monotonic() - t0


def test_ctrl_c_stops_the_footprint_pre_pass(tmp_path: Path) -> None:
    """A share of a long generator: SIGINT was ignored until the footprint
    pass ended (minutes)."""
    code, err, took = interrupt_during_pre_pass(config(tmp_path, LONG, "50%"))
    assert code == 130, (code, err)
    assert err.strip() == "interrupted", err
    assert took < 10, f"Ctrl-C took {took:.1f} s"


def test_ctrl_c_stops_the_next_access_pre_pass(tmp_path: Path) -> None:
    """Belady with `max_requests`: the pass reads on past the limit until
    every key of the run comes back (exact times), which on a long Zipf
    generator takes long; SIGINT stops it."""
    # Ten million objects: the rarest keys of the first 200,000 requests come
    # back only after about 100 s of pass on an idle 2-core machine. Over a
    # million objects the whole run took 3.0 s there, and ended before the
    # interrupt (a failed rehearsal, 2026-12-05).
    wide = LONG.replace("objects = 1_000_000", "objects = 10_000_000")
    cfg = config(tmp_path, wide, "64KiB", "[run]\nmax_requests = 200_000\n", policy="belady")
    code, err, took = interrupt_during_pre_pass(cfg)
    assert code == 130, (code, err)
    assert err.strip() == "interrupted", err
    assert took < 10, f"Ctrl-C took {took:.1f} s"


def test_pre_passes_report_progress() -> None:
    """The progress callback hears the pre-pass's count (the bar stayed at
    `0/?` until the run began), then the run's, with its total."""
    calls: list[tuple[int, int | None]] = []
    cfg = {
        "workload": {"type": "zipf", "objects": 1000, "requests": 3_000_000},
        "tier": [{"tech": "DRAM-DDR3", "capacity": "50%"}],
    }
    tierlab.simulate(cfg, progress=lambda done, total: calls.append((done, total)))
    pre = [c for c in calls if c[1] is None]
    assert pre and max(d for d, _ in pre) >= 2_000_000, calls
    first_run = next(i for i, c in enumerate(calls) if c[1] is not None)
    assert all(c[1] is None for c in calls[:first_run]), calls
    assert calls[-1] == (3_000_000, 3_000_000), calls
