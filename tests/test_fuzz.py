"""The config fuzzer and the trace fuzzer: property tests over the CLI.

Each case is a config or a trace made from a seeded random draw (a valid
one mutated: a key given a hostile value, a record's field set huge, bytes
flipped, lines cut or stretched) and run through a reader and a writer in a
subprocess. The property: every case ends with exit 0, or exit 2 and one
``error:`` line (and at most a ``hint:``); never a traceback, a panic, a
signal, a timeout or a peak resident size above ``MAX_RSS_MIB``. Inputs
are bounded (``run.max_requests`` capped, traces of a few kilobytes), so a
timeout is a failure, not a slow machine's excuse.

A few cases of each run by default (seconds); with ``TIERLAB_FUZZ_CASES=N``
the long tests run N of each, and write the table of outcomes and the
largest resident size seen to ``TIERLAB_FUZZ_REPORT`` (a JSON line per
fuzzer) when set. Case ``i`` of a kind is the same on every run (seed ``i``).
"""

from __future__ import annotations

import json
import os
import random
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from measured import MAX_RSS_MIB, Measured, run_measured

TIMEOUT_S = 30

BASE = {
    "workload": {
        "type": "zipf",
        "alpha": 0.9,
        "objects": 2000,
        "requests": 20000,
        "object_size": "4KiB",
        "seed": 7,
    },
    "hierarchy": {"fill": "exclusive", "write": "write-back"},
    "tier": [
        {"name": "dram", "tech": "DRAM-DDR3", "capacity": "256KiB", "policy": "lru"},
        {
            "name": "flash",
            "tech": "NAND-SLC",
            "capacity": "1MiB",
            "policy": {"type": "clock"},
            "admission": {"type": "second-hit", "window": 1000},
        },
    ],
    "backing": {"tech": "HDD"},
    "run": {"max_requests": 5000, "interval": 1000},
}

# Key paths worth a hostile value: the size-like ones, the ones that pick
# a model, and a few chosen at random from the base.
KEYS = [
    "workload.objects",
    "workload.requests",
    "workload.alpha",
    "workload.seed",
    "workload.object_size",
    "workload.type",
    "workload.write_ratio",
    "tier[0].capacity",
    "tier[0].policy",
    "tier[0].channels",
    "tier[1].admission.window",
    "tier[1].admission",
    "tier[0].admission",
    "tier[0].flush_interval",
    "tier[0].slowdown",
    "hierarchy.fill",
    "backing.tech",
    "run.interval",
    "run.warmup",
    "load",
    "load.type",
    "load.clients",
    "load.think",
    "load.rate",
    "server.cpus",
    "server.cpu",
    "server.link",
    "vm",
    "vm.tlb.entries",
    "vm.walk.cache.entries",
    "techs.X.read_ns",
    "stack",
]

POLICIES = ["lru", "fifo", "clock", "arc", "2q", "s3fifo", "sieve", "lfu", "random", "belady"]
POLICIES += ["flashcache"]
ADMISSIONS = [
    {"type": "bloom", "window": 1000},
    {"type": "bloom", "window": 4294967295, "fp_rate": 0.5},
    {"type": "probabilistic", "p": 0.5},
    {"type": "size", "max": "64KiB"},
    {"type": "second-hit", "window": 10},
]


def hostile_value(rng: random.Random) -> object:
    """A value of any type and magnitude a user (or an attacker) may write."""
    ints = [0, 1, -1, 2, 7, 1000, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**53 + 1]
    ints += [2**62, 2**63 - 1, 2**63, 2**64 - 1, 2**64, -(2**63), 10**30]
    floats = [0.0, -0.0, 0.5, 1e-320, 1e-12, 1e308, -1.0, float("nan"), float("inf")]
    strings = ["", "lru", "4KiB", "1e300GiB", "50%", "101%", "-4KiB", "0.5ns", "x" * 5000]
    strings += ["∞", "\x00", "NaN%", "1.5.5MiB", "18446744073709551616", "9" * 400 + "B"]
    kind = rng.randrange(8)
    if kind <= 1:
        return rng.choice(ints)
    if kind == 2:
        return rng.choice(floats)
    if kind == 3:
        return rng.choice(strings)
    if kind == 4:
        return rng.choice(POLICIES + [p.upper() for p in POLICIES])
    if kind == 5:
        return rng.choice([True, False, [], {}, [1, [2, [3]]], {"type": rng.choice(POLICIES)}])
    if kind == 6:
        return dict(rng.choice(ADMISSIONS))
    depth = rng.choice([3, 40, 200])
    v: object = 1
    for _ in range(depth):
        v = [v]
    return v


def set_path(cfg: dict[str, object], path: str, value: object) -> None:
    """Sets a key path (``tier[0].policy``), making tables on the way."""
    node: object = cfg
    parts = path.replace("]", "").replace("[", ".").split(".")
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if isinstance(node, list):
            idx = int(part)
            if idx >= len(node):
                return
            if last:
                node[idx] = value
            else:
                node = node[idx]
            continue
        assert isinstance(node, dict)
        if last:
            node[part] = value
        else:
            nxt = node.get(part)
            if not isinstance(nxt, (dict, list)):
                nxt = {}
                node[part] = nxt
            node = nxt


def fuzz_config(seed: int) -> dict[str, object]:
    rng = random.Random(seed)
    cfg = json.loads(json.dumps(BASE))
    for _ in range(rng.choice([1, 1, 2, 3])):
        set_path(cfg, rng.choice(KEYS), hostile_value(rng))
    if rng.random() < 0.2:
        cfg["tier"][0]["policy"] = rng.choice(POLICIES)  # type: ignore[index]
    # Bounded input: whatever else changed, the run stops at 5,000 requests.
    run = cfg.get("run")
    if isinstance(run, dict):
        run["max_requests"] = 5000
    else:
        cfg["run"] = {"max_requests": 5000}
    return cfg


def to_toml(v: object, key: str = "") -> str:
    """TOML text of a config, written as inline values (numbers TOML cannot
    hold, nan and inf written as TOML writes them)."""
    assert isinstance(v, dict)
    return "".join(f"{toml_key(k)} = {toml_value(x)}\n" for k, x in v.items())


def toml_key(k: str) -> str:
    return k if k.replace("_", "").replace("-", "").isalnum() and k.isascii() else json.dumps(k)


def toml_value(v: object) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if v != v:
            return "nan"
        if v in (float("inf"), float("-inf")):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{toml_key(k)} = {toml_value(x)}" for k, x in v.items()) + "}"
    raise TypeError(type(v))


# --------------------------------------------------------------------------
# traces
# --------------------------------------------------------------------------


def oracle(rng: random.Random, n: int) -> bytes:
    out = bytearray()
    for i in range(n):
        out += struct.pack("<IQIq", i // 10, rng.randrange(50), rng.choice([512, 4096]), -1)
    return bytes(out)


def text_trace(fmt: str, rng: random.Random, n: int) -> bytes:
    lines: list[str] = []
    for i in range(n):
        k, size = rng.randrange(50), rng.choice([512, 4096, 8192])
        if fmt == "csv":
            lines.append(f"{i},{k},{size}")
        elif fmt == "msr":
            lines.append(
                f"{128166372003061629 + i},hm,1,{rng.choice(['Read', 'Write'])},{k * 4096},{size},1"
            )
        elif fmt == "twitter":
            lines.append(f"{i},key{k},12,{size},3,{rng.choice(['get', 'set', 'delete'])},0")
        elif fmt == "lackey":
            lines.append(f" {rng.choice('LSM')} {0x7FF000 + k * 64:x},{rng.choice([1, 4, 8])}")
        else:  # strace
            if i == 0:
                lines.append('42  1700000000.000001 openat(AT_FDCWD, "a", O_RDWR|O_CREAT) = 3')
            call = rng.choice(["read", "write", "pread64", "lseek"])
            if call == "pread64":
                lines.append(
                    f'42  1700000000.{i + 2:06d} pread64(3, "", {size}, {k * 4096}) = {size}'
                )
            elif call == "lseek":
                lines.append(
                    f"42  1700000000.{i + 2:06d} lseek(3, {k * 4096}, SEEK_SET) = {k * 4096}"
                )
            else:
                lines.append(f'42  1700000000.{i + 2:06d} {call}(3, ""..., {size}) = {size}')
    return ("\n".join(lines) + "\n").encode()


FORMATS = ["oracle", "csv", "msr", "twitter", "lackey", "strace", "memtrace"]
HUGE = [2**32, 2**40, 2**63, 2**64 - 1, 10**25, -1, 4398046511104]


def memtrace(rng: random.Random, n: int) -> bytes:
    out = bytearray(b"TLMEMTR1")
    for _ in range(n):
        out += struct.pack("<QIHBB", 0x7FF000 + rng.randrange(64) * 8, 1, 8, rng.randrange(3), 0)
    return bytes(out)


def mutate_text(data: bytes, rng: random.Random) -> bytes:
    lines = data.split(b"\n")
    for _ in range(rng.choice([1, 2, 3])):
        i = rng.randrange(len(lines))
        how = rng.randrange(6)
        fields = lines[i].split(b",")
        if how == 0 and fields:
            j = rng.randrange(len(fields))
            fields[j] = str(rng.choice(HUGE)).encode()
            lines[i] = b",".join(fields)
        elif how == 1:
            lines[i] = lines[i] + b"9" * rng.choice([100, 3 << 20])
        elif how == 2:
            lines[i] = lines[i][: rng.randrange(len(lines[i]) + 1)]
        elif how == 3:
            lines[i] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 40)))
        elif how == 4:
            lines[i] = lines[i].replace(b"= ", b"= " + str(rng.choice(HUGE)).encode() + b" #", 1)
        else:
            lines.insert(i, b"")
    return b"\n".join(lines)


def mutate_binary(data: bytes, rng: random.Random) -> bytes:
    b = bytearray(data)
    how = rng.randrange(4)
    if how == 0:
        for _ in range(rng.randrange(1, 20)):
            b[rng.randrange(len(b))] = rng.randrange(256)
    elif how == 1:
        del b[rng.randrange(len(b)) :]
    elif how == 2:
        at = rng.randrange(8, max(9, len(b) - 8))
        b[at : at + 8] = struct.pack("<Q", rng.choice([2**64 - 1, 2**63, 2**32]))
    else:
        b += bytes(rng.randrange(256) for _ in range(rng.randrange(1, 30)))
    return bytes(b)


def fuzz_trace(seed: int, folder: Path) -> tuple[Path, str]:
    rng = random.Random(seed)
    fmt = FORMATS[seed % len(FORMATS)]
    n = rng.choice([1, 5, 50, 200])
    if fmt == "oracle":
        data = mutate_binary(oracle(rng, n), rng)
    elif fmt == "memtrace":
        data = mutate_binary(memtrace(rng, n), rng)
    else:
        data = mutate_text(text_trace(fmt, rng, n), rng)
    p = folder / f"case{seed}.{fmt}"
    p.write_bytes(data)
    return p, fmt


# --------------------------------------------------------------------------
# outcomes
# --------------------------------------------------------------------------


@dataclass
class Tally:
    cases: int = 0
    ok: int = 0
    one_line: int = 0
    other: list[str] = field(default_factory=list)
    max_rss_mib: float = 0.0
    max_rss_case: str = ""

    def add(self, case: str, r: Measured) -> None:
        self.cases += 1
        if r.rss_mib > self.max_rss_mib:
            self.max_rss_mib, self.max_rss_case = r.rss_mib, case
        lines = r.err_lines
        shape_ok = (
            len(lines) in (1, 2)
            and lines[0].startswith("error: ")
            and (len(lines) == 1 or lines[1].startswith("hint: "))
            and "Traceback" not in r.err
            and "panicked" not in r.err
        )
        if r.timed_out:
            self.other.append(f"{case}: timed out after {r.seconds:.0f} s")
        elif r.rss_mib > MAX_RSS_MIB:
            self.other.append(f"{case}: peak resident size {r.rss_mib:.0f} MiB")
        elif r.code == 0 and "Traceback" not in r.err and "panicked" not in r.err:
            self.ok += 1
        elif r.code == 2 and shape_ok:
            self.one_line += 1
        else:
            self.other.append(f"{case}: exit {r.code}: {r.err[-600:]}")

    def row(self, name: str) -> dict[str, object]:
        return {
            "fuzzer": name,
            "cases": self.cases,
            "exit 0": self.ok,
            "exit 2, one line": self.one_line,
            "anything else": len(self.other),
            "max_rss_mib": round(self.max_rss_mib, 1),
            "max_rss_case": self.max_rss_case,
        }


def config_case(seed: int, folder: Path, tally: Tally) -> None:
    cfg = fuzz_config(seed)
    p = folder / f"config{seed}.toml"
    p.write_text(to_toml(cfg))
    r = run_measured(["run", p, "--json", "--timeline", folder / f"t{seed}.csv"], timeout=TIMEOUT_S)
    tally.add(f"config {seed} ({p.read_text()[:300]!r})", r)


def trace_case(seed: int, folder: Path, tally: Tally) -> None:
    p, fmt = fuzz_trace(seed, folder)
    fmt_args = [] if seed % 3 == 0 else ["--format", fmt]
    for args in (
        ["trace", "stats", p, *fmt_args],
        ["trace", "convert", p, folder / f"o{seed}.{'csv' if seed % 2 else 'bin'}", *fmt_args],
        ["mrc", p, "-o", folder / f"m{seed}.csv", "--no-plot", *fmt_args],
    ):
        r = run_measured(args, timeout=TIMEOUT_S)
        tally.add(f"trace {seed} {fmt} {args[0]} {args[1]}", r)


def run_fuzzer(name: str, case: Callable[[int, Path, Tally], None], n: int, folder: Path) -> Tally:
    tally = Tally()
    for seed in range(n):
        case(seed, folder, tally)
    report = os.environ.get("TIERLAB_FUZZ_REPORT")
    if report:
        with open(report, "a") as f:
            f.write(json.dumps(tally.row(name)) + "\n")
    assert not tally.other, "\n\n".join(tally.other[:5])
    return tally


QUICK = 6


def test_config_fuzzer_quick(tmp_path: Path) -> None:
    run_fuzzer("config", config_case, QUICK, tmp_path)


def test_trace_fuzzer_quick(tmp_path: Path) -> None:
    run_fuzzer("trace", trace_case, QUICK, tmp_path)


LONG = pytest.mark.skipif(
    not os.environ.get("TIERLAB_FUZZ_CASES"),
    reason="the long fuzz run: set TIERLAB_FUZZ_CASES=N (cases of each fuzzer)",
)


@pytest.mark.slow
@LONG
def test_config_fuzzer_long(tmp_path: Path) -> None:
    run_fuzzer("config", config_case, int(os.environ.get("TIERLAB_FUZZ_CASES", "300")), tmp_path)


@pytest.mark.slow
@LONG
def test_trace_fuzzer_long(tmp_path: Path) -> None:
    run_fuzzer("trace", trace_case, int(os.environ.get("TIERLAB_FUZZ_CASES", "300")), tmp_path)
