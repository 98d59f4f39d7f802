"""Hostile configs and arguments: bounded memory and time, one line, exit 2.

Size-like keys have documented maxima and cost what they must, not a unit
of work per request per unit configured; values JSON cannot carry, nesting
no schema has and values of any length end in one line naming the key.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from measured import MAX_RSS_MIB, Measured, assert_one_line_error, run_measured

ZIPF = """\
[workload]
type = "zipf"
alpha = 0.9
objects = 1000
requests = 5000
object_size = "4KiB"
seed = 3

[[tier]]
name = "dram"
tech = "DRAM-DDR3"
capacity = "1MiB"
policy = "lru"
{tier}
[run]
max_requests = 2000
{rest}
"""


def config(tmp: Path, tier: str = "", rest: str = "", **swap: str) -> Path:
    text = ZIPF.format(tier=tier, rest=rest)
    for old, new in swap.items():
        text = text.replace(old, new)
    p = tmp / "c.toml"
    p.write_text(text)
    return p


def bounded(r: Measured, *needles: str) -> str:
    line = assert_one_line_error(r, *needles)
    assert r.rss_mib < MAX_RSS_MIB, f"peak resident size {r.rss_mib:.0f} MiB"
    return line


def ran(r: Measured) -> None:
    assert not r.timed_out, f"timed out after {r.seconds:.1f} s"
    assert r.code == 0, r.err[-2000:]
    assert r.rss_mib < MAX_RSS_MIB, f"peak resident size {r.rss_mib:.0f} MiB"


def test_channels_and_cpus_cost_what_is_used(tmp_path: Path) -> None:
    """4e9 channels aborted on a 32 GB allocation; so did server.cpus, which
    is documented as unlimited when absent. The answer is the same as with
    as many channels as requests overlap."""
    closed = '[load]\ntype = "closed"\nclients = 4\n'
    big = run_measured(
        ["run", config(tmp_path, tier="channels = 4000000000", rest=closed), "--json"],
        timeout=60,
    )
    ran(big)
    small = run_measured(
        ["run", config(tmp_path, tier="channels = 1000", rest=closed), "--json"], timeout=60
    )
    ran(small)
    b, s = json.loads(big.out), json.loads(small.out)
    # The same queueing: no operation waited for a channel in either.
    for k in ("requests", "miss_ratio", "amat_ns", "total_time_ns"):
        assert b[k] == s[k], k
    assert _no_util(b["time"]) == _no_util(s["time"])
    cpus = closed + '[server]\ncpus = 4294967294\ncpu = "2us"\n'
    ran(run_measured(["run", config(tmp_path, rest=cpus), "--json"], timeout=60))


def _no_util(v: object) -> object:
    """A result without its utilisations (busy time over channels x time)."""
    if isinstance(v, dict):
        return {
            k: _no_util(x)
            for k, x in v.items()
            if "util" not in k and k not in ("channels", "servers")
        }
    if isinstance(v, list):
        return [_no_util(x) for x in v]
    return v


def test_clients_have_a_documented_maximum(tmp_path: Path) -> None:
    """1,073,741,823 clients (the old maximum) aborted on a failed allocation."""
    rest = '[load]\ntype = "closed"\nclients = 1073741823\n'
    bounded(
        run_measured(["run", config(tmp_path, rest=rest)], timeout=30),
        "load.clients",
        "at most 1048576 clients",
    )


def test_zipf_objects_at_the_old_maximum_are_refused(tmp_path: Path) -> None:
    """objects = 4294967295, the documented maximum, aborted building the table."""
    c = config(tmp_path, **{"objects = 1000": "objects = 4294967295"})
    bounded(run_measured(["run", c], timeout=30), "workload.objects", "at most 67108864")


def test_bloom_window_that_cannot_fit_is_refused(tmp_path: Path) -> None:
    tier = 'admission = { type = "bloom", window = 4294967295, fp_rate = 1e-12 }'
    bounded(
        run_measured(["run", config(tmp_path, tier=tier)], timeout=30),
        "tier[0].admission",
        "window",
        "more than the 1 GiB allowed",
    )


def test_tlb_entries_have_a_maximum(tmp_path: Path) -> None:
    t = tmp_path / "m.lackey"
    t.write_text("==1== Lackey\n L 7ff000,8\n S 7ff008,4\n")
    c = tmp_path / "vm.toml"
    c.write_text(
        f'[workload]\ntype = "trace"\npath = "{t.name}"\n'
        '[[tier]]\nname = "dram"\ntech = "DRAM-DDR3"\ncapacity = "1MiB"\npolicy = "lru"\n'
        "[vm]\ntlb = { entries = 4000000000, ways = 1 }\n"
    )
    bounded(run_measured(["run", c], timeout=30), "vm.tlb.entries", "at most 1048576")


def test_seed_of_2_to_the_64_names_the_key(tmp_path: Path) -> None:
    """A seed of 2^64 was "invalid type: floating point"."""
    c = config(tmp_path, **{"seed = 3": "seed = 18446744073709551616"})
    line = bounded(run_measured(["run", c]), "workload.seed", "out of range")
    assert "floating point" not in line


def test_deep_nesting_is_refused(tmp_path: Path) -> None:
    """An array 1,000 deep in 2 KB raised RecursionError (a traceback, exit 1)."""
    c = tmp_path / "deep.toml"
    c.write_text('[workload]\ntype = "zipf"\nx = ' + "[" * 1000 + "]" * 1000 + "\n")
    bounded(run_measured(["run", c]), str(c), "deep")
    c.write_text('[workload]\ntype = "zipf"\nx = ' + "[" * 60 + "]" * 60 + "\n")
    bounded(run_measured(["run", c]), "workload.x", "nested more than 32")


def test_config_that_is_a_device_is_refused() -> None:
    """A config given as /dev/zero ended in MemoryError."""
    bounded(run_measured(["run", "/dev/zero"], timeout=30), "/dev/zero", "not a config file")


@pytest.mark.parametrize(
    ("swap", "key"),
    [
        ({'policy = "lru"': 'policy = "' + "x" * 5000 + '"'}, "tier[0].policy"),
        ({'capacity = "1MiB"': 'capacity = "' + "9" * 5000 + 'KiB"'}, "tier[0].capacity"),
        ({'name = "dram"': 'name = "dram"\n' + "k" * 5000 + " = 1"}, "tier[0]"),
    ],
)
def test_errors_echo_long_values_clipped(tmp_path: Path, swap: dict[str, str], key: str) -> None:
    """Config errors echoed a 5,000-character value in full."""
    line = bounded(run_measured(["run", config(tmp_path, **swap)]), key, "characters)")
    assert len(line) < 600, line


def test_shards_size_beyond_64_bits(tmp_path: Path) -> None:
    """`--shards-size 99999999999999999999` was an OverflowError traceback."""
    t = tmp_path / "t.csv"
    t.write_text("0,1,10\n1,2,10\n")
    r = run_measured(
        ["mrc", t, "--shards-size", "99999999999999999999", "-o", tmp_path / "m.csv", "--no-plot"]
    )
    bounded(r, "shards_size", "out of range")


def test_model_result_that_overflows_is_an_error_not_infinity() -> None:
    """`model breakeven-price --ratio 1e-320 --json` printed -Infinity (not JSON)."""
    r = run_measured(["model", "breakeven-price", "--ratio", "1e-320", "--json"])
    bounded(r, "breakeven-price", "not a finite number", "ratio = 1e-320")
