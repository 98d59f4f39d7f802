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


# The address space a small run fits in (the interpreter, the engine and a
# 64-entry TLB take under 60 MiB), and each structure below needs more
# than this on its own. A failed allocation aborted the process (SIGABRT,
# "memory allocation of N bytes failed").
LIMIT_MIB = 64

_VM = (
    '[workload]\ntype = "trace"\npath = "{trace}"\n'
    '[[tier]]\nname = "dram"\ntech = "DRAM-DDR3"\ncapacity = "1MiB"\npolicy = "lru"\n'
    "[vm]\n{vm}\n"
)


@pytest.mark.parametrize(
    ("what", "small", "big", "key"),
    [
        ("tlb", "tlb = { entries = 64 }", "tlb = { entries = 1048576 }", "vm.tlb.entries"),
        (
            "walk cache",
            "walk = { cache = { entries = 64 } }",
            "walk = { cache = { entries = 1048576 } }",
            "vm.walk.cache.entries",
        ),
        (
            "bloom",
            'admission = { type = "bloom", window = 1000 }',
            'admission = { type = "bloom", window = 100000000 }',
            "tier[0].admission.window",
        ),
        (
            "clients",
            '[load]\ntype = "closed"\nclients = 4',
            '[load]\ntype = "closed"\nclients = 1048576',
            "load.clients",
        ),
        (
            "flashcache",
            'capacity = "16MiB"\npolicy = "flashcache"',
            'capacity = "4TiB"\npolicy = "flashcache"',
            "tier[0].policy.block",
        ),
        ("zipf", "objects = 1000", "objects = 67108864", "workload.objects"),
    ],
)
def test_memory_a_size_asks_for_is_one_line_when_refused(
    tmp_path: Path, what: str, small: str, big: str, key: str
) -> None:
    """Under a memory limit, each size-like key's structure is asked of the
    allocator before it is built: exit 2 naming the key and the bytes."""

    def write(v: str) -> Path:
        if what in ("tlb", "walk cache"):
            t = tmp_path / "m.lackey"
            t.write_text("==1== Lackey\n L 7ff000,8\n S 7ff008,4\n")
            c = tmp_path / "vm.toml"
            c.write_text(_VM.format(trace=t.name, vm=v))
            return c
        if what == "bloom":
            return config(tmp_path, tier=v)
        if what == "clients":
            return config(tmp_path, rest=v)
        if what == "flashcache":
            return config(tmp_path, **{'capacity = "1MiB"\npolicy = "lru"': v})
        return config(tmp_path, **{"objects = 1000": v})

    ok = run_measured(["run", write(small)], address_space_mib=LIMIT_MIB, timeout=60)
    if ok.code != 0:
        pytest.skip(f"a small run does not fit in {LIMIT_MIB} MiB of address space here")
    r = run_measured(["run", write(big)], address_space_mib=LIMIT_MIB, timeout=60)
    line = bounded(r, key, "bytes", "could not be allocated")
    assert "memory allocation" not in r.err
    assert line.startswith(f"error: {key}: "), line


def test_flashcache_blocks_have_a_maximum(tmp_path: Path) -> None:
    """A 1000 TiB FlashCache tier asked for 402 GB of tables and aborted."""
    c = config(
        tmp_path,
        **{'capacity = "1MiB"\npolicy = "lru"': 'capacity = "1000TiB"\npolicy = "flashcache"'},
    )
    bounded(run_measured(["run", c]), "tier[0].policy.block", "at most 134217728")


def test_a_long_key_is_clipped_once(tmp_path: Path) -> None:
    """A 5,000-character table name was clipped twice: `xxx... (203
    characters) (5000 characters)`."""
    c = config(tmp_path, rest="[" + "x" * 5000 + "]\n")
    line = bounded(run_measured(["run", c]), "(5000 characters)")
    assert line.count("characters)") == 2 and "(203 characters)" not in line, line
    assert len(line) < 600, line


def test_experiment_name_has_a_maximum(tmp_path: Path) -> None:
    """A 5,000-character experiment name was accepted and echoed whole (and
    could not name the report's folder)."""
    e = tmp_path / "e.toml"
    e.write_text(
        f'[experiment]\nname = "{"x" * 5000}"\n[base.workload]\ntype = "zipf"\nobjects = 10\n'
        'requests = 10\n[[base.tier]]\ntech = "DRAM-DDR3"\ncapacity = "1MiB"\n'
        '[[axis]]\nkey = "tier[0].capacity"\nvalues = ["1MiB"]\n'
    )
    r = run_measured(["sweep", e, "--store", tmp_path / "s.sqlite", "--dry-run"])
    line = bounded(r, "experiment.name", "5000 characters; at most 100")
    assert len(line) < 300, line


def test_timeline_points_have_a_maximum(tmp_path: Path) -> None:
    """`run.interval = 1` kept a timeline point per request: 2 million
    requests took 39 s and 880 MB, 2 billion would run out of memory."""
    c = config(
        tmp_path,
        rest="interval = 1\n",
        **{"requests = 5000": "requests = 2_000_000_000", "max_requests = 2000": ""},
    )
    bounded(run_measured(["run", c], timeout=30), "run.interval", "at most 1048576", "1908")
    # max_requests bounds the run, and so its points.
    ok = config(tmp_path, rest="interval = 1\n", **{"requests = 5000": "requests = 2_000_000_000"})
    ran(run_measured(["run", ok], timeout=60))
