#!/usr/bin/env python3
"""Side-by-side benchmark: tierlab vs libCacheSim on one oracleGeneral trace.

Object sizes are ignored (every object counts as 1; libCacheSim's
ignore_obj_size, tierlab's ``unit_size = true``), so the cache size is an
object count. For each policy and repetition the script times

* libCacheSim: ``cache.process_trace(reader)`` alone (reader and cache are
  created before the clock starts), and
* tierlab: the whole process ``tierlab run CFG.toml --json`` (interpreter
  start-up, config load, trace mapping, simulation, JSON output),

and prints median requests/second, their ratio and both miss ratios. It exits
with status 1 if the miss ratios of lru, fifo or clock differ by more than
1e-9 (exact agreement is expected; see docs/notes/libcachesim-semantics.md),
or if a tierlab run fails.

``--vm MEMTRACE`` times virtual memory: a whole ``tierlab run --json`` of a
``[vm]`` config (4 KiB pages, a 64-entry TLB, memory at half the footprint,
CLOCK) on a memory trace, against libCacheSim's LRU loop over the same
references' page numbers with the frame count as its cache size (the trace is
generated, seeded, when it does not exist; its page-number stream is written
beside it as oracleGeneral). Fault counts are checked against libCacheSim's
Clock on the same stream.

``--tiered MEMTRACE`` times multilevel main memory the same way: a ``[vm]``
config with two nodes (DRAM-DDR4 at a quarter of the footprint over
CXL-DRAM holding the rest) and a sampled migration policy (Memtis at its
defaults), whole ``tierlab run --json``, against libCacheSim's LRU loop over
the page numbers at the fast node's frame count; tierlab's references must
equal the trace's, its faults the cold misses of libCacheSim's Clock at all
the frames, and its nodes' accesses the references.

``--hierarchy CONFIG`` also times a whole ``tierlab run CONFIG --json``, and
``--shards RATE`` whole ``tierlab mrc --no-plot`` processes (the exact LRU
curve once, SHARDS at RATE repeatedly, with SHARDS' mean absolute error
against the exact curve at 100 sizes), each against libCacheSim's LRU loop
run alternately in the same repetitions, a gauge of the machine's speed.

libcachesim (PyPI, GPL) is a benchmark/test dependency only; tierlab itself
never imports it.

Example:
    python benches/vs_libcachesim.py --trace /tmp/zipf.oracleGeneral.bin --generate
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import libcachesim as lcs
import numpy as np

RECORD = np.dtype([("time", "<u4"), ("obj_id", "<u8"), ("obj_size", "<u4"), ("next_access", "<i8")])
assert RECORD.itemsize == 24

# Policies whose results must agree exactly with libCacheSim (see
# docs/policies.md and tests/test_vs_libcachesim.py for the others' variants).
EXACT_POLICIES = {"lru", "fifo", "clock", "arc", "2q", "sieve", "lfu", "lru-k", "belady", "s3-fifo"}

# libCacheSim's LRU loop from Python on the 20M-request bench trace, as
# measured on this kind of machine when the speed targets were set (req/s,
# BENCHMARKS.md): the absolute targets (15M req/s for the 3-tier hierarchy)
# are ratios to this rate.
REFERENCE_LRU = 5.7e6

# tierlab policy name -> libCacheSim constructor (cache size in objects).
LCS_POLICIES = {
    "lru": lambda n: lcs.LRU(n, default_ttl=0),
    "fifo": lambda n: lcs.FIFO(n, default_ttl=0),
    "clock": lambda n: lcs.Clock(n, default_ttl=0, init_freq=0, n_bit_counter=1),
    "sieve": lambda n: lcs.Sieve(n, default_ttl=0),
    "s3-fifo": lambda n: lcs.S3FIFO(n, default_ttl=0),
    "arc": lambda n: lcs.ARC(n, default_ttl=0),
    "2q": lambda n: lcs.TwoQ(n, default_ttl=0),
    "lfu": lambda n: lcs.LFU(n, default_ttl=0),
    "lru-k": lambda n: lcs.LRUK(n, default_ttl=0),
    "belady": lambda n: lcs.Belady(n, default_ttl=0),
    # Reported, not required to agree (documented variants):
    "lirs": lambda n: lcs.LIRS(n, default_ttl=0),
    "w-tinylfu": lambda n: lcs.WTinyLFU(n, default_ttl=0),
}

GEN_WORKLOAD = """\
[workload]
type = "zipf"
alpha = 1.0
objects = 1000000
requests = 20000000
object_size = "4KiB"
seed = 42
"""

TOLERANCE = 1e-9


# memtrace (docs/vm.md): magic, then 16-byte records (address, pid, size, op, 0).
MEMTRACE_MAGIC = b"TLMEMTR1"
MEMREC = np.dtype([("addr", "<u8"), ("pid", "<u4"), ("size", "<u2"), ("op", "u1"), ("pad", "u1")])
assert MEMREC.itemsize == 16
VM_PAGE = 4096
VM_TLB = 64


def generate_memtrace(path: Path, references: int, pages: int, seed: int = 42) -> None:
    """A seeded synthetic memory trace of `references` 8-byte references.

    Runs of consecutive words in one page (run length geometric, mean 8, as a
    loop walks an array); a run's page is drawn Zipf(0.9) over `pages` pages
    placed at random in the address space, or (30% of runs) is the page after
    the previous run's (a sequential sweep); a quarter of the references are
    writes. One process. Written in chunks, so memory stays small.
    """
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, pages + 1) ** 0.9
    cdf = np.cumsum(weights)
    cdf /= cdf[-1]
    perm = rng.permutation(pages).astype(np.uint64)
    base = np.uint64(0x5555_0000_0000)
    path.parent.mkdir(parents=True, exist_ok=True)
    written = 0
    prev_page = np.uint64(0)
    with path.open("wb") as f:
        f.write(MEMTRACE_MAGIC)
        while written < references:
            runs = 1 << 18
            lens = rng.geometric(1 / 8, runs)
            page = perm[np.minimum(np.searchsorted(cdf, rng.random(runs)), pages - 1)]
            seq = rng.random(runs) < 0.3
            prev = np.concatenate(([prev_page], page[:-1]))
            page = np.where(seq, (prev + np.uint64(1)) % np.uint64(pages), page)
            prev_page = page[-1]
            start = rng.integers(0, VM_PAGE // 8, runs)
            n = int(min(lens.sum(), references - written))
            run_of = np.repeat(np.arange(runs), lens)[:n]
            first = np.concatenate(([0], np.cumsum(lens)[:-1]))
            j = np.arange(n) - first[run_of]
            word = (start[run_of] + j) % (VM_PAGE // 8)
            rec = np.zeros(n, dtype=MEMREC)
            rec["addr"] = base + page[run_of] * np.uint64(VM_PAGE) + word.astype(np.uint64) * 8
            rec["pid"] = 1
            rec["size"] = 8
            rec["op"] = rng.random(n) < 0.25
            f.write(rec.tobytes())
            written += n


def memtrace_pages(memtrace: Path, oracle: Path) -> tuple[int, int]:
    """Writes `memtrace`'s page-number stream (4 KiB pages, references that
    stay within a page) as oracleGeneral; returns (references, pages touched)."""
    raw = np.memmap(memtrace, dtype=np.uint8, mode="r")
    if bytes(raw[:8]) != MEMTRACE_MAGIC or (raw.size - 8) % MEMREC.itemsize:
        sys.exit(f"error: {memtrace}: not a plain memtrace (TLMEMTR1 + 16-byte records)")
    rec = np.frombuffer(raw[8:], dtype=MEMREC)
    last = rec["addr"] + rec["size"].astype(np.uint64) - np.uint64(1)
    if np.any((rec["addr"] >> np.uint64(12)) != (last >> np.uint64(12))):
        sys.exit(f"error: {memtrace}: a reference straddles two pages; --vm needs one page each")
    out = np.zeros(rec.size, dtype=RECORD)
    out["time"] = np.arange(rec.size, dtype=np.uint64) // 1000
    out["obj_id"] = (rec["pid"].astype(np.uint64) << np.uint64(40)) | (rec["addr"] >> np.uint64(12))
    out["obj_size"] = VM_PAGE
    out["next_access"] = -1
    out.tofile(oracle)
    pages = int(np.unique(out["obj_id"]).size)
    return int(rec.size), pages


def vm_config(memtrace: Path, frames: int) -> str:
    return (
        "[workload]\n"
        'type = "trace"\n'
        f"path = {toml_str(str(memtrace.resolve()))}\n"
        'format = "memtrace"\n'
        "\n"
        "[[tier]]\n"
        'name = "memory"\n'
        'tech = "DRAM-DDR3"\n'
        f"capacity = {frames * VM_PAGE}\n"
        "\n"
        "[backing]\n"
        'tech = "PCM-SLC"\n'
        "\n"
        "[vm]\n"
        f"page_size = {VM_PAGE}\n"
        f"tlb = {{ entries = {VM_TLB} }}\n"
    )


def toml_str(s: str) -> str:
    """A TOML basic string (JSON escaping is a valid subset)."""
    return json.dumps(s)


def tierlab_config(trace: Path, capacity: int, policy: str) -> str:
    return (
        "[workload]\n"
        'type = "trace"\n'
        f"path = {toml_str(str(trace.resolve()))}\n"
        'format = "oracle"\n'
        "unit_size = true\n"
        "\n"
        "[[tier]]\n"
        'name = "cache"\n'
        'tech = "DRAM-DDR3"\n'
        f"capacity = {int(capacity)}\n"
        f"policy = {toml_str(policy)}\n"
        "\n"
        "[backing]\n"
        'tech = "HDD"\n'
    )


def trace_stats(trace: Path) -> tuple[int, int, int]:
    """(records, unique ids, size-0 records) of an oracleGeneral file."""
    size = trace.stat().st_size
    if size % RECORD.itemsize:
        sys.exit(f"error: {trace}: size {size} is not a multiple of 24 bytes")
    n = size // RECORD.itemsize
    if n == 0:
        sys.exit(f"error: {trace}: empty trace")
    rec = np.memmap(trace, dtype=RECORD, mode="r")
    unique = int(np.unique(np.ascontiguousarray(rec["obj_id"])).size)
    zero = int(np.count_nonzero(rec["obj_size"] == 0))
    del rec
    return n, unique, zero


def lcs_reader(trace: Path) -> lcs.TraceReader:
    params = lcs.ReaderInitParam(ignore_obj_size=True, ignore_size_zero_req=False)
    return lcs.TraceReader(str(trace), lcs.TraceType.ORACLE_GENERAL_TRACE, params)


def run_libcachesim(trace: Path, policy: str, capacity: int) -> tuple[float, float, int]:
    """(seconds of process_trace, object miss ratio, objects cached at end)."""
    reader = lcs_reader(trace)
    cache = LCS_POLICIES[policy](capacity)
    t0 = time.perf_counter()
    miss_ratio, _byte_miss_ratio = cache.process_trace(reader)
    elapsed = time.perf_counter() - t0
    n_obj = cache.get_n_obj()
    # No reader.close(): the binding's destructor closes the reader, and an
    # explicit close() leads to a double free in libcachesim 0.3.5.
    del cache, reader
    return elapsed, float(miss_ratio), int(n_obj)


def run_timed(argv: list[str]) -> tuple[float, str]:
    """(wall seconds of the whole process, its stdout); RuntimeError if it fails."""
    t0 = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True)
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(
            f"{shlex.join(argv)} exited with {proc.returncode}:\n{proc.stderr.strip()}"
        )
    return elapsed, proc.stdout


def run_tierlab(cmd: list[str], cfg: Path) -> tuple[float, dict]:
    """(wall seconds of the whole `tierlab run` process, parsed JSON)."""
    argv = [*cmd, "run", str(cfg), "--json"]
    elapsed, stdout = run_timed(argv)
    try:
        out = json.loads(stdout)
    except json.JSONDecodeError as e:
        raise RuntimeError(f"{shlex.join(argv)}: stdout is not one JSON object: {e}") from e
    return elapsed, out


def run_tierlab_mrc(
    cmd: list[str], trace: Path, out: Path, sizes: list[int], shards: float | None
) -> tuple[float, list[float]]:
    """(wall seconds of the whole `tierlab mrc --no-plot` process, miss ratio
    at each of `sizes`): the exact LRU curve, or SHARDS at rate `shards`."""
    argv = [*cmd, "mrc", str(trace), "--format", "oracle", "--unit-size", "--no-plot"]
    argv += ["--no-progress", "--sizes", ",".join(map(str, sizes)), "-o", str(out)]
    if shards is not None:
        argv += ["--shards", str(shards)]
    elapsed, _ = run_timed(argv)
    with out.open(newline="") as f:
        rows = [(int(r["size"]), float(r["miss_ratio"])) for r in csv.DictReader(f)]
    listed = [size for size, _ in rows]
    # SHARDS leaves out the smallest sizes, those its sample is too small for
    # (docs/mrc.md): what it lists must be the largest of the sizes asked.
    if not listed or listed != sizes[len(sizes) - len(listed) :]:
        raise RuntimeError(f"{shlex.join(argv)}: {out} does not list the sizes asked for")
    if shards is None and listed != sizes:
        raise RuntimeError(f"{shlex.join(argv)}: {out} does not list the sizes asked for")
    return elapsed, [mr for _, mr in rows]


def generate(cmd: list[str], trace: Path) -> None:
    trace.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="tierlab-gen-") as d:
        gen = Path(d) / "gen.toml"
        gen.write_text(GEN_WORKLOAD)
        argv = [*cmd, "trace", "convert", str(gen), str(trace)]
        print(f"generating trace: {shlex.join(argv)}", file=sys.stderr)
        print(GEN_WORKLOAD, file=sys.stderr)
        t0 = time.perf_counter()
        proc = subprocess.run(argv)
        if proc.returncode != 0 or not trace.exists():
            sys.exit(f"error: trace generation failed (exit {proc.returncode})")
        print(f"generated in {time.perf_counter() - t0:.1f} s", file=sys.stderr)


def fmt_rate(x: float) -> str:
    return f"{x / 1e6:.2f} M"


def print_table(header: tuple[str, ...], rows: list[tuple]) -> None:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    line = "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=False))
    print(line)
    print("-" * len(line))
    for r in rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=False)))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description="Benchmark tierlab against libCacheSim (LRU/FIFO/Clock, unit object "
        "sizes) on one oracleGeneral trace; checks that miss ratios agree.",
    )
    ap.add_argument(
        "--trace", type=Path, help="oracleGeneral binary trace file (required unless --vm)"
    )
    ap.add_argument(
        "--generate",
        action="store_true",
        help="if --trace does not exist, create it with `tierlab trace convert` from a "
        "Zipf(1.0) workload: 1M objects, 20M requests, 4KiB, seed 42",
    )
    ap.add_argument(
        "--policies",
        default="lru,fifo,clock",
        help="comma-separated policies (default: lru,fifo,clock; also: "
        + ",".join(sorted(set(LCS_POLICIES) - EXACT_POLICIES))
        + ", reported without the equality check)",
    )
    size = ap.add_mutually_exclusive_group()
    size.add_argument(
        "--cache-fraction",
        type=float,
        default=0.1,
        help="cache size as a fraction of the unique-object footprint, floored like "
        "libCacheSim (default: 0.1)",
    )
    size.add_argument(
        "--cache-objects", type=int, default=None, help="absolute cache size in objects"
    )
    ap.add_argument("--repeat", type=int, default=5, help="repetitions per policy (default: 5)")
    ap.add_argument(
        "--hierarchy",
        action="append",
        type=Path,
        default=[],
        metavar="CONFIG",
        help="also time the whole process `tierlab run CONFIG --json` (a hierarchy on its "
        "own workload, which should read --trace; e.g. benches/exclusive-3tier.toml) "
        "against libCacheSim's LRU loop on --trace, alternating, --repeat times; repeatable",
    )
    ap.add_argument(
        "--shards",
        type=float,
        default=None,
        metavar="RATE",
        help="also time miss-ratio curves, whole process `tierlab mrc --unit-size "
        "--no-plot` on --trace at 100 sizes (1%%..100%% of the unique objects): the "
        "exact LRU curve once, then SHARDS at RATE --repeat times, alternating with "
        "libCacheSim's LRU loop; prints both rates and SHARDS' mean absolute error "
        "against the exact curve",
    )
    ap.add_argument(
        "--vm",
        type=Path,
        default=None,
        metavar="MEMTRACE",
        help="time virtual memory: `tierlab run` of a [vm] config (4 KiB pages, 64-entry "
        "TLB, memory at half the footprint, CLOCK) on this memtrace against libCacheSim's "
        "LRU loop over its page numbers (frames as the cache size), --repeat times; "
        "with --generate, a missing MEMTRACE is generated (--vm-references, --vm-pages)",
    )
    ap.add_argument(
        "--tiered",
        type=Path,
        default=None,
        metavar="MEMTRACE",
        help="time multilevel main memory: `tierlab run` of a [vm] config with two nodes "
        "(DRAM-DDR4 at 25%% of the footprint, CXL-DRAM) and Memtis on this memtrace against "
        "libCacheSim's LRU loop over its page numbers at the fast node's frames; with "
        "--generate, a missing MEMTRACE is generated (--vm-references, --vm-pages)",
    )
    ap.add_argument(
        "--vm-references",
        type=int,
        default=20_000_000,
        help="references of a generated --vm trace (default: 20M)",
    )
    ap.add_argument(
        "--vm-pages",
        type=int,
        default=1 << 16,
        help="pages (4 KiB) a generated --vm trace draws from (default: 65536, 256 MiB)",
    )
    ap.add_argument(
        "--tierlab",
        default=None,
        help="tierlab command (split like a shell would; default: the `tierlab` script "
        "installed beside this Python, else `tierlab` on PATH)",
    )
    args = ap.parse_args(argv)

    if args.repeat < 1:
        ap.error("--repeat must be >= 1")
    if args.trace is None and args.vm is None and args.tiered is None:
        ap.error("--trace is required (unless --vm or --tiered is given)")
    if args.vm_references < 1 or args.vm_pages < 2:
        ap.error("--vm-references must be >= 1 and --vm-pages >= 2")
    if args.shards is not None and not (0.0 < args.shards <= 1.0):
        ap.error("--shards must be in (0, 1]")
    if args.cache_objects is None and not (0.0 < args.cache_fraction <= 1.0):
        ap.error("--cache-fraction must be in (0, 1]")
    if args.cache_objects is not None and args.cache_objects < 1:
        ap.error("--cache-objects must be >= 1")
    policies = [p.strip().lower() for p in args.policies.split(",") if p.strip()]
    unknown = [p for p in policies if p not in LCS_POLICIES]
    if unknown or not policies:
        ap.error(f"unknown policies {unknown}; known: {', '.join(LCS_POLICIES)}")

    cmd = shlex.split(args.tierlab) if args.tierlab is not None else [default_tierlab()]
    if shutil.which(cmd[0]) is None:
        print(f"error: tierlab command {cmd[0]!r} not found on PATH", file=sys.stderr)
        return 2
    if args.tiered is not None:
        return run_tiered(args, cmd)

    if args.trace is None:
        return run_vm(args, cmd)

    trace: Path = args.trace
    if not trace.exists():
        if not args.generate:
            print(f"error: {trace} does not exist (use --generate to create it)", file=sys.stderr)
            return 2
        generate(cmd, trace)

    n_req, n_unique, n_zero = trace_stats(trace)
    if args.cache_objects is not None:
        capacity = args.cache_objects
        size_desc = f"{capacity} objects (given)"
    else:
        capacity = max(1, int(args.cache_fraction * n_unique))
        size_desc = f"{capacity} objects = floor({args.cache_fraction} x {n_unique} unique)"

    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cpus = os.cpu_count() or 0

    print("tierlab vs libCacheSim")
    print(f"command:   {shlex.join([sys.executable, *sys.argv])}")
    print(f"machine:   nproc={cpus} {platform.machine()} {platform.platform()}")
    print(f"python:    {platform.python_implementation()} {sys.version.split()[0]}")
    print(f"libcachesim {lcs.__version__}; tierlab command: {shlex.join(cmd)}")
    print(f"trace:     {trace.resolve()} ({trace.stat().st_size / 2**20:.1f} MiB)")
    print(f"requests:  {n_req}   unique objects: {n_unique}   size-0 records: {n_zero}")
    print(f"cache:     {size_desc}; object sizes ignored (unit size)")
    print(
        f"timing:    libCacheSim = process_trace loop only; tierlab = whole "
        f"`tierlab run --json` process; median of {args.repeat}"
    )
    if n_zero:
        print(
            "note:      size-0 records are counted as requests by both "
            "(libCacheSim: ignore_size_zero_req=False)"
        )
    print(flush=True)

    rows = []
    failed = False
    with tempfile.TemporaryDirectory(prefix="tierlab-bench-") as d:
        for policy in policies:
            cfg = Path(d) / f"{policy}.toml"
            cfg.write_text(tierlab_config(trace, capacity, policy))
            lcs_t, tl_t, lcs_mr, tl_mr, lcs_nobj = [], [], set(), set(), set()
            tl_req = set()
            error = None
            for rep in range(args.repeat):
                t, mr, nobj = run_libcachesim(trace, policy, capacity)
                lcs_t.append(t)
                lcs_mr.add(mr)
                lcs_nobj.add(nobj)
                if error is None:
                    try:
                        t2, out = run_tierlab(cmd, cfg)
                    except RuntimeError as e:
                        error = str(e)
                    else:
                        tl_t.append(t2)
                        tl_mr.add(float(out["miss_ratio"]))
                        tl_req.add(int(out["requests"]))
                print(
                    f"  {policy} rep {rep + 1}/{args.repeat}: libCacheSim {t:.3f} s"
                    + (f", tierlab {tl_t[-1]:.3f} s" if error is None else ", tierlab FAILED"),
                    file=sys.stderr,
                    flush=True,
                )
            if error is not None:
                print(f"error: {error}", file=sys.stderr)
                failed = True
            if len(lcs_mr) > 1 or len(tl_mr) > 1:
                print(
                    f"warning: {policy}: miss ratio varies between repetitions "
                    f"(libCacheSim {sorted(lcs_mr)}, tierlab {sorted(tl_mr)})",
                    file=sys.stderr,
                )
                failed = True
            lmr = next(iter(lcs_mr))
            tmr = next(iter(tl_mr)) if tl_mr else float("nan")
            diff = abs(lmr - tmr) if tl_mr else float("inf")
            if tl_req and tl_req != {n_req}:
                print(
                    f"error: {policy}: tierlab counted {sorted(tl_req)} requests, "
                    f"trace has {n_req}",
                    file=sys.stderr,
                )
                failed = True
            agree = diff <= TOLERANCE
            if policy in EXACT_POLICIES and not agree:
                failed = True
            lrate = n_req / statistics.median(lcs_t)
            trate = n_req / statistics.median(tl_t) if tl_t else float("nan")
            rows.append(
                (
                    policy,
                    capacity,
                    max(lcs_nobj),
                    fmt_rate(lrate),
                    fmt_rate(trate) if tl_t else "-",
                    f"{trate / lrate:.2f}" if tl_t else "-",
                    f"{lmr:.9f}",
                    f"{tmr:.9f}" if tl_mr else "-",
                    ("yes" if agree else f"NO ({diff:.2e})")
                    + ("" if policy in EXACT_POLICIES else " (info)"),
                )
            )

    hier_rows = []
    for config in args.hierarchy:
        lcs_t, tl_t, ratios, reqs = [], [], [], set()
        for rep in range(args.repeat):
            t, _mr, _nobj = run_libcachesim(trace, "lru", capacity)
            try:
                t2, out = run_tierlab(cmd, config)
            except RuntimeError as e:
                print(f"error: {e}", file=sys.stderr)
                failed = True
                break
            lcs_t.append(t)
            tl_t.append(t2)
            reqs.add(int(out["requests"]))
            # Rates, not times: the config may cap its requests.
            ratios.append((int(out["requests"]) / t2) / (n_req / t))
            print(
                f"  {config} rep {rep + 1}/{args.repeat}: libCacheSim lru {t:.3f} s, "
                f"tierlab {t2:.3f} s",
                file=sys.stderr,
                flush=True,
            )
        if not tl_t:
            continue
        if reqs != {n_req}:
            print(
                f"warning: {config}: ran {sorted(reqs)} requests, --trace has {n_req}: "
                "is it reading the same trace?",
                file=sys.stderr,
            )
        ratio = statistics.median(ratios)
        hier_rows.append(
            (
                str(config),
                fmt_rate(n_req / statistics.median(lcs_t)),
                fmt_rate(max(reqs) / statistics.median(tl_t)),
                f"{ratio:.2f}",
                " ".join(f"{r:.2f}" for r in ratios),
                fmt_rate(ratio * REFERENCE_LRU),
            )
        )

    mrc_rows = []
    if args.shards is not None:
        grid = sorted({max(1, n_unique * i // 100) for i in range(1, 101)})
        with tempfile.TemporaryDirectory(prefix="tierlab-mrc-") as d:
            try:
                t_exact, exact = run_tierlab_mrc(cmd, trace, Path(d) / "exact.csv", grid, None)
                print(f"  exact LRU curve: tierlab {t_exact:.3f} s", file=sys.stderr, flush=True)
                lcs_t, sh_t, ratios, curves = [], [], [], set()
                for rep in range(args.repeat):
                    t, _mr, _nobj = run_libcachesim(trace, "lru", capacity)
                    t2, curve = run_tierlab_mrc(
                        cmd, trace, Path(d) / "shards.csv", grid, args.shards
                    )
                    lcs_t.append(t)
                    sh_t.append(t2)
                    curves.add(tuple(curve))
                    ratios.append(t / t2)
                    print(
                        f"  SHARDS {args.shards} rep {rep + 1}/{args.repeat}: libCacheSim lru "
                        f"{t:.3f} s, tierlab {t2:.3f} s",
                        file=sys.stderr,
                        flush=True,
                    )
            except RuntimeError as e:
                print(f"error: {e}", file=sys.stderr)
                failed = True
            else:
                if len(curves) > 1:
                    print("error: SHARDS curves differ between repetitions", file=sys.stderr)
                    failed = True
                curve = next(iter(curves))
                # Over the sizes SHARDS lists (the largest ones of the grid).
                tail = exact[len(exact) - len(curve) :]
                errors = [abs(a - b) for a, b in zip(curve, tail, strict=True)]
                lrate = n_req / statistics.median(lcs_t)
                ratio = statistics.median(ratios)
                mrc_rows.append(
                    (
                        "exact LRU (1 run)",
                        "-",
                        fmt_rate(n_req / t_exact),
                        "-",
                        "-",
                        "-",
                        "-",
                    )
                )
                mrc_rows.append(
                    (
                        f"SHARDS {args.shards}",
                        fmt_rate(lrate),
                        fmt_rate(n_req / statistics.median(sh_t)),
                        f"{ratio:.2f}",
                        " ".join(f"{r:.2f}" for r in ratios),
                        fmt_rate(ratio * REFERENCE_LRU),
                        f"{statistics.fmean(errors):.4f} (max {max(errors):.4f})",
                    )
                )

    header = (
        "policy",
        "cache objs",
        "lcs cached",
        "libCacheSim req/s",
        "tierlab req/s",
        "tierlab/lcs",
        "lcs miss ratio",
        "tierlab miss ratio",
        "agree",
    )
    print_table(header, rows)
    print()
    print(
        "req/s are medians over repetitions; tierlab/lcs > 1 means tierlab is faster "
        "(despite timing its whole process)."
    )
    if hier_rows:
        print()
        print_table(
            (
                "hierarchy (whole process)",
                "libCacheSim lru req/s",
                "tierlab req/s",
                "tierlab/lcs lru",
                "per repetition",
                "at 5.7M lcs ref",
            ),
            hier_rows,
        )
        print()
        print(
            "tierlab/lcs lru is the median of each repetition's ratio of rates; "
            "'at 5.7M lcs ref' scales it to the libCacheSim LRU rate measured on this kind "
            "of machine when the speed targets were set (5.7M req/s, BENCHMARKS.md)."
        )
    if mrc_rows:
        print()
        print_table(
            (
                "mrc (whole process, --no-plot)",
                "libCacheSim lru req/s",
                "tierlab req/s",
                "tierlab/lcs lru",
                "per repetition",
                "at 5.7M lcs ref",
                "MAE vs exact",
            ),
            mrc_rows,
        )
        print()
        print(
            "Curves at 100 sizes, 1%..100% of the unique objects. tierlab/lcs lru: each "
            "repetition's SHARDS rate over libCacheSim's LRU loop rate in the same "
            "repetition (a gauge of the machine's speed at that moment; the median is "
            "shown); 'at 5.7M lcs ref' scales it as for the hierarchies."
        )
    if args.vm is not None:
        print()
        vm_status = run_vm(args, cmd)
        failed = failed or vm_status != 0
    if failed:
        print("RESULT: FAIL (miss ratios disagree or a run failed)")
        return 1
    print("RESULT: OK (miss ratios agree)")
    return 0


def default_tierlab() -> str:
    """The `tierlab` script of the Python running this script (its bin
    directory), else `tierlab` on PATH. A version manager's shim found first
    on PATH (pyenv's is a bash script that runs `pyenv exec`, 50-70 ms per
    process on the project's machine) is the environment's cost, not
    tierlab's process, which is what the whole-process timings measure."""
    beside = Path(sys.executable).parent / "tierlab"
    return str(beside) if os.access(beside, os.X_OK) else "tierlab"


def run_vm(args: argparse.Namespace, cmd: list[str]) -> int:
    """The --vm case: prints its table and a RESULT line; returns the exit status."""
    memtrace: Path = args.vm
    if not memtrace.exists():
        if not args.generate:
            print(
                f"error: {memtrace} does not exist (use --generate to create it)", file=sys.stderr
            )
            return 2
        print(
            f"generating memory trace {memtrace}: {args.vm_references} references over "
            f"{args.vm_pages} pages, seed 42",
            file=sys.stderr,
        )
        t0 = time.perf_counter()
        generate_memtrace(memtrace, args.vm_references, args.vm_pages)
        print(f"generated in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    failed = False
    with tempfile.TemporaryDirectory(prefix="tierlab-vm-") as d:
        oracle = Path(d) / "pages.oracleGeneral.bin"
        n_ref, n_pages = memtrace_pages(memtrace, oracle)
        frames = max(1, n_pages // 2)
        cfg = Path(d) / "vm.toml"
        cfg.write_text(vm_config(memtrace, frames))
        print("virtual memory: tierlab [vm] vs libCacheSim LRU on the page-number stream")
        print(f"tierlab command: {shlex.join(cmd)}")
        print(f"memtrace:  {memtrace.resolve()} ({memtrace.stat().st_size / 2**20:.1f} MiB)")
        print(f"references: {n_ref}   pages touched (4 KiB): {n_pages}   frames: {frames}")
        print(
            f"tierlab:   page_size {VM_PAGE}, tlb {VM_TLB} entries (fully associative, LRU), "
            "CLOCK frames, no read-ahead; whole `tierlab run --json` process"
        )
        print(f"timing:    libCacheSim = LRU process_trace loop only; median of {args.repeat}")
        print(flush=True)
        lcs_t, tl_t, ratios, outs = [], [], [], []
        for rep in range(args.repeat):
            t, _mr, _nobj = run_libcachesim(oracle, "lru", frames)
            try:
                t2, out = run_tierlab(cmd, cfg)
            except RuntimeError as e:
                print(f"error: {e}", file=sys.stderr)
                return 1
            lcs_t.append(t)
            tl_t.append(t2)
            outs.append(out)
            ratios.append(t / t2)
            print(
                f"  vm rep {rep + 1}/{args.repeat}: libCacheSim lru {t:.3f} s, tierlab {t2:.3f} s",
                file=sys.stderr,
                flush=True,
            )
        vm = outs[0]["vm"]
        faults = int(vm["minor_faults"]) + int(vm["major_faults"])
        if any(o["vm"] != vm for o in outs):
            print("error: tierlab's vm results differ between repetitions", file=sys.stderr)
            failed = True
        if int(vm["references"]) != n_ref:
            print(f"error: tierlab counted {vm['references']} references, trace has {n_ref}")
            failed = True
        # The fault sequence is CLOCK's miss sequence on the page numbers
        # (read-ahead off): the counts must agree with libCacheSim's Clock.
        _t, clock_mr, _n = run_libcachesim(oracle, "clock", frames)
        clock_misses = round(clock_mr * n_ref)
        agree = clock_misses == faults
        failed = failed or not agree
        ratio = statistics.median(ratios)
        print_table(
            (
                "vm (whole process)",
                "libCacheSim lru req/s",
                "tierlab req/s",
                "tierlab/lcs lru",
                "per repetition",
                "tlb miss ratio",
                "faults",
                "lcs clock misses",
            ),
            [
                (
                    "4KiB, tlb 64, 50%",
                    fmt_rate(n_ref / statistics.median(lcs_t)),
                    fmt_rate(n_ref / statistics.median(tl_t)),
                    f"{ratio:.2f}",
                    " ".join(f"{r:.2f}" for r in ratios),
                    f"{float(vm['tlb_miss_ratio']):.5f}",
                    str(faults),
                    str(clock_misses) + ("" if agree else " (DIFFER)"),
                ),
            ],
        )
        print()
        print(
            "tierlab/lcs lru: each repetition's libCacheSim LRU loop time over the whole "
            "tierlab process's time (same references); the median is shown."
        )
    if args.trace is None:
        print("RESULT: FAIL (faults disagree or a run failed)" if failed else "RESULT: OK")
    return 1 if failed else 0


def tiered_config(memtrace: Path, fast: int, slow: int) -> str:
    """Two memory nodes of `fast` and `slow` frames, Memtis at its defaults."""
    return (
        "[workload]\n"
        'type = "trace"\n'
        f"path = {toml_str(str(memtrace.resolve()))}\n"
        'format = "memtrace"\n'
        "\n"
        "[backing]\n"
        'tech = "PCM-SLC"\n'
        "\n"
        "[vm]\n"
        f"page_size = {VM_PAGE}\n"
        f"tlb = {{ entries = {VM_TLB} }}\n"
        "\n"
        "[[vm.node]]\n"
        'name = "dram"\n'
        'tech = "DRAM-DDR4"\n'
        f"capacity = {fast * VM_PAGE}\n"
        "\n"
        "[[vm.node]]\n"
        'name = "cxl"\n'
        'tech = "CXL-DRAM"\n'
        f"capacity = {slow * VM_PAGE}\n"
        "\n"
        "[vm.migration]\n"
        'type = "memtis"\n'
    )


def run_tiered(args: argparse.Namespace, cmd: list[str]) -> int:
    """The --tiered case: prints its table and a RESULT line; returns the exit status."""
    memtrace: Path = args.tiered
    if not memtrace.exists():
        if not args.generate:
            print(
                f"error: {memtrace} does not exist (use --generate to create it)", file=sys.stderr
            )
            return 2
        generate_memtrace(memtrace, args.vm_references, args.vm_pages)
    failed = False
    with tempfile.TemporaryDirectory(prefix="tierlab-tiered-") as d:
        oracle = Path(d) / "pages.oracleGeneral.bin"
        n_ref, n_pages = memtrace_pages(memtrace, oracle)
        fast = max(1, n_pages // 4)
        slow = n_pages
        cfg = Path(d) / "tiered.toml"
        cfg.write_text(tiered_config(memtrace, fast, slow))
        print("multilevel main memory: tierlab [[vm.node]] + memtis vs libCacheSim LRU")
        print(f"tierlab command: {shlex.join(cmd)}")
        print(f"references: {n_ref}   pages touched (4 KiB): {n_pages}   fast frames: {fast}")
        print(f"timing:    libCacheSim = LRU process_trace loop only; median of {args.repeat}")
        print(flush=True)
        lcs_t, tl_t, ratios, outs = [], [], [], []
        for rep in range(args.repeat):
            t, _mr, _nobj = run_libcachesim(oracle, "lru", fast)
            try:
                t2, out = run_tierlab(cmd, cfg)
            except RuntimeError as e:
                print(f"error: {e}", file=sys.stderr)
                return 1
            lcs_t.append(t)
            tl_t.append(t2)
            outs.append(out)
            ratios.append(t / t2)
            print(
                f"  tiered rep {rep + 1}/{args.repeat}: libCacheSim lru {t:.3f} s, "
                f"tierlab {t2:.3f} s",
                file=sys.stderr,
                flush=True,
            )
        vm, tiered = outs[0]["vm"], outs[0]["tiered"]
        if any(o["tiered"] != tiered for o in outs):
            print("error: tierlab's tiered results differ between repetitions", file=sys.stderr)
            failed = True
        if int(vm["references"]) != n_ref or sum(n["accesses"] for n in tiered["nodes"]) != n_ref:
            print(f"error: tierlab counted {vm['references']} references, trace has {n_ref}")
            failed = True
        # All pages fit the two nodes: the faults are the cold misses.
        faults = int(vm["minor_faults"]) + int(vm["major_faults"])
        _t, clock_mr, _n = run_libcachesim(oracle, "clock", fast + slow)
        clock_misses = round(clock_mr * n_ref)
        failed = failed or clock_misses != faults
        ratio = statistics.median(ratios)
        print_table(
            (
                "tiered (whole process)",
                "libCacheSim lru req/s",
                "tierlab req/s",
                "tierlab/lcs lru",
                "per repetition",
                "promotions",
                "samples",
                "slowdown",
            ),
            [
                (
                    "memtis, dram 25%",
                    fmt_rate(n_ref / statistics.median(lcs_t)),
                    fmt_rate(n_ref / statistics.median(tl_t)),
                    f"{ratio:.2f}",
                    " ".join(f"{r:.2f}" for r in ratios),
                    str(tiered["promotions"]),
                    str(tiered["policy_report"]["samples"]),
                    f"{float(tiered['slowdown']):.4f}",
                ),
            ],
        )
    print("RESULT: FAIL (faults disagree or a run failed)" if failed else "RESULT: OK")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
