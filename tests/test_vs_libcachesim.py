"""tierlab must reproduce libCacheSim's LRU, FIFO and Clock exactly.

Small seeded traces are written as oracleGeneral files; both simulators replay
them with object sizes ignored (every object counts as 1) and must report the
same number of misses. The exact libCacheSim semantics are written down in
docs/notes/libcachesim-semantics.md; ``test_libcachesim_matches_documented_semantics``
guards that description against a change of the libcachesim package, so a
failure there points at libcachesim, not at tierlab.

libcachesim (PyPI, GPL) is a test dependency installed by CI; tierlab itself
never imports it.
"""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path

import libcachesim as lcs
import numpy as np
import pytest
import tierlab
from tierlab.capture import capture_files, capture_memory

RECORD = np.dtype([("time", "<u4"), ("obj_id", "<u8"), ("obj_size", "<u4"), ("next_access", "<i8")])

POLICIES = ("lru", "fifo", "clock")
FRACTIONS = (0.001, 0.01, 0.1, 0.5)


# --------------------------------------------------------------------------
# trace generation (seeded, numpy only)
# --------------------------------------------------------------------------


def _random_keys(rng: np.random.Generator, n: int) -> np.ndarray:
    """n distinct, nonzero 64-bit object ids spread over the whole u64 range."""
    keys = np.unique(rng.integers(1, 2**64 - 1, size=2 * n, dtype=np.uint64, endpoint=True))
    rng.shuffle(keys)
    assert keys.size >= n
    return keys[:n]


def _zipf_ranks(rng: np.random.Generator, n_obj: int, n_req: int, alpha: float) -> np.ndarray:
    p = 1.0 / np.arange(1, n_obj + 1, dtype=np.float64) ** alpha
    p /= p.sum()
    return rng.choice(n_obj, size=n_req, p=p)


def _zipf_trace(rng: np.random.Generator) -> np.ndarray:
    n_obj, n_req = 8_000, 40_000
    return _random_keys(rng, n_obj)[_zipf_ranks(rng, n_obj, n_req, 0.9)]


def _uniform_trace(rng: np.random.Generator) -> np.ndarray:
    n_obj, n_req = 5_000, 30_000
    return _random_keys(rng, n_obj)[rng.integers(0, n_obj, size=n_req)]


def _scan_mixed_trace(rng: np.random.Generator) -> np.ndarray:
    """A Zipf hot set interrupted by sequential scans.

    Scans revisit a fixed cold range (a loop, LRU's worst case) and sometimes
    touch never-seen ids (one-hit wonders); hot requests continue between them.
    """
    n_hot, n_loop = 2_000, 3_000
    keys = _random_keys(rng, n_hot + n_loop + 20_000)
    hot, loop, fresh = keys[:n_hot], keys[n_hot : n_hot + n_loop], keys[n_hot + n_loop :]
    parts, n_fresh_used, total = [], 0, 0
    while total < 50_000:
        burst = hot[_zipf_ranks(rng, n_hot, int(rng.integers(500, 4_000)), 1.0)]
        parts.append(burst)
        total += burst.size
        kind = rng.random()
        if kind < 0.5:  # loop scan over (part of) the cold range, in order
            start = int(rng.integers(0, n_loop))
            length = int(rng.integers(200, n_loop))
            scan = loop[(start + np.arange(length)) % n_loop]
        elif kind < 0.8:  # scan of new ids
            length = int(rng.integers(100, 1_500))
            scan = fresh[n_fresh_used : n_fresh_used + length]
            n_fresh_used += scan.size
        else:  # hot and loop ids interleaved one to one
            length = int(rng.integers(200, 1_000))
            scan = np.empty(2 * length, dtype=np.uint64)
            scan[0::2] = hot[_zipf_ranks(rng, n_hot, length, 1.0)]
            scan[1::2] = loop[rng.integers(0, n_loop, size=length)]
        parts.append(scan)
        total += scan.size
    return np.concatenate(parts)[:50_000]


GENERATORS = {
    "zipf": (_zipf_trace, 20240601),
    "uniform": (_uniform_trace, 7),
    "scan": (_scan_mixed_trace, 99),
}

# Small real traces, captured here from real programs (the only real traces
# this machine can obtain: it reaches no trace archive). Debian's `sort` on
# 200 seeded numbers under Valgrind lackey (its loads and stores, 64-byte
# lines: ~0.3M requests, mostly the dynamic loader's and libc's start; 20,000
# numbers made ~20M and a ten-minute test), and PostMark under strace (file
# I/O, 4 KiB pages). Written as
# oracleGeneral (every request a read), so both simulators replay one file.
REAL = ("sort-memory", "postmark-files")
TRACE_NAMES = [*GENERATORS, *REAL]


def _capture_real(name: str, d: Path, out: Path) -> None:
    if name == "sort-memory":
        src = d / "numbers.txt"
        nums = np.random.default_rng(5).integers(0, 10**9, size=200)
        src.write_text("\n".join(map(str, nums)) + "\n")
        c = capture_memory(["sort", "-n", str(src), "-o", str(d / "sorted.txt")], out, unit=64)
    else:
        loc = d / "postmark"
        loc.mkdir()
        script = d / "postmark.cfg"
        script.write_text(
            f"set location {loc}\nset number 300\nset transactions 1000\n"
            "set size 500 15000\nset seed 42\nrun\nquit\n"
        )
        c = capture_files(["sh", "-c", f"postmark < {script} > /dev/null"], out)
    assert c.exit_code == 0, (name, c)


def _write_oracle(path: Path, ids: np.ndarray, rng: np.random.Generator) -> None:
    rec = np.zeros(ids.size, dtype=RECORD)
    rec["obj_id"] = ids
    # non-decreasing timestamps in seconds, several requests per second
    rec["time"] = np.cumsum(rng.integers(0, 3, size=ids.size)).astype(np.uint32)
    # arbitrary nonzero sizes: unit_size / ignore_obj_size must ignore them
    rec["obj_size"] = rng.integers(1, 1 << 20, size=ids.size, dtype=np.uint32)
    rec["next_access"] = _next_access(ids)
    rec.tofile(path)


def _next_access(ids: np.ndarray) -> np.ndarray:
    """1-based position of each request's next request to the same id, -1 for
    none: what libCacheSim's oracleGeneral converter writes (Belady reads it;
    the other policies ignore it)."""
    nxt = np.full(ids.size, -1, dtype=np.int64)
    last: dict[int, int] = {}
    for i in range(ids.size - 1, -1, -1):
        k = int(ids[i])
        if k in last:
            nxt[i] = last[k] + 1
        last[k] = i
    return nxt


@pytest.fixture(scope="module")
def traces(tmp_path_factory) -> dict[str, tuple[Path, int, int]]:
    """name -> (path, number of requests, number of unique objects)."""
    d = tmp_path_factory.mktemp("vs_libcachesim")
    out = {}
    for name, (gen, seed) in GENERATORS.items():
        rng = np.random.default_rng(seed)
        ids = gen(rng)
        path = d / f"{name}.oracleGeneral.bin"
        _write_oracle(path, ids, rng)
        out[name] = (path, int(ids.size), int(np.unique(ids).size))
    for name in REAL:
        path = d / f"{name}.oracleGeneral.bin"
        _capture_real(name, d, path)
        ids = np.fromfile(path, dtype=RECORD)["obj_id"]
        out[name] = (path, int(ids.size), int(np.unique(ids).size))
    return out


# --------------------------------------------------------------------------
# the two simulators
# --------------------------------------------------------------------------


def _lcs_reader(path: Path) -> lcs.TraceReader:
    params = lcs.ReaderInitParam(ignore_obj_size=True, ignore_size_zero_req=False)
    return lcs.TraceReader(str(path), lcs.TraceType.ORACLE_GENERAL_TRACE, params)


def _lcs_cache(policy: str, capacity: int):
    if policy == "lru":
        return lcs.LRU(capacity, default_ttl=0)
    if policy == "fifo":
        return lcs.FIFO(capacity, default_ttl=0)
    if policy == "clock":
        return lcs.Clock(capacity, default_ttl=0, init_freq=0, n_bit_counter=1)
    raise ValueError(policy)


def lcs_misses(path: Path, policy: str, capacity: int, n_req: int) -> int:
    cache = _lcs_cache(policy, int(capacity))
    miss_ratio, _ = cache.process_trace(_lcs_reader(path))
    # process_trace returns 1 - hits/requests as a double; recover the count.
    misses = round(miss_ratio * n_req)
    assert abs(misses / n_req - miss_ratio) < 1e-9
    return misses


def tierlab_summary(path: Path, policy: str, capacity: int) -> dict:
    cfg = {
        "workload": {
            "type": "trace",
            "path": str(path.resolve()),
            "format": "oracle",
            "unit_size": True,
        },
        "tier": [
            {
                "name": "cache",
                "tech": "DRAM-DDR3",
                "capacity": int(capacity),
                "policy": policy,
            }
        ],
        "backing": {"tech": "HDD"},
    }
    return tierlab.simulate(cfg).summary


def _capacity(fraction: float, n_unique: int) -> int:
    return max(1, int(fraction * n_unique))  # floor, like libCacheSim


# --------------------------------------------------------------------------
# tests
# --------------------------------------------------------------------------


@pytest.mark.parametrize("fraction", FRACTIONS, ids=lambda f: f"{f:g}")
@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("trace_name", TRACE_NAMES)
def test_same_misses_as_libcachesim(traces, trace_name, policy, fraction):
    path, n_req, n_unique = traces[trace_name]
    capacity = _capacity(fraction, n_unique)

    expected = lcs_misses(path, policy, capacity, n_req)
    s = tierlab_summary(path, policy, capacity)

    assert s["requests"] == n_req
    assert s["misses"] == expected, (
        f"{trace_name}/{policy}/capacity={capacity}: tierlab {s['misses']} misses "
        f"(ratio {s['miss_ratio']}), libCacheSim {expected} (ratio {expected / n_req})"
    )
    assert s["miss_ratio"] == pytest.approx(expected / n_req, rel=0, abs=1e-12)


def test_traces_are_not_degenerate(traces):
    """The comparison means something only if hits and evictions both happen."""
    for name, (path, n_req, n_unique) in traces.items():
        for fraction in (FRACTIONS[0], FRACTIONS[-1]):
            m = lcs_misses(path, "lru", _capacity(fraction, n_unique), n_req)
            assert n_unique < m < n_req, (name, fraction, m)


# --- libcachesim's own behaviour, as documented ----------------------------


def _model(policy: str, ids, capacity: int) -> list[bool]:
    """Independent model of docs/notes/libcachesim-semantics.md (hit per request).

    The OrderedDict runs from the tail (first, oldest / next victim) to the
    head (last, newest insertion or most recent use).
    """
    q: OrderedDict[int, int] = OrderedDict()  # id -> clock reference bit
    hits = []
    for k in ids:
        if k in q:
            hits.append(True)
            if policy == "lru":
                q.move_to_end(k)
            elif policy == "clock":
                q[k] = 1  # saturating 1-bit counter; the object does not move
            continue
        hits.append(False)
        if len(q) >= capacity:
            if policy == "clock":
                while True:
                    victim, ref = next(iter(q.items()))
                    if ref == 0:
                        break
                    q[victim] = 0  # second chance: clear and reinsert at head
                    q.move_to_end(victim)
            q.popitem(last=False)
        q[k] = 0  # new object at the head, reference bit 0 (init_freq = 0)
    return hits


@pytest.mark.parametrize("policy", POLICIES)
def test_libcachesim_matches_documented_semantics(tmp_path, policy):
    rng = np.random.default_rng(3)
    keys = _random_keys(rng, 300)
    ids = keys[_zipf_ranks(rng, 300, 5_000, 0.8)]
    path = tmp_path / "small.oracleGeneral.bin"
    _write_oracle(path, ids, rng)
    for capacity in (1, 2, 7, 30, 150):
        cache = _lcs_cache(policy, capacity)
        got = [bool(cache.get(req)) for req in _lcs_reader(path)]
        want = _model(policy, [int(k) for k in ids], capacity)
        assert got == want, (policy, capacity)


# --- the policies beyond LRU, FIFO and CLOCK ------------------------------
#
# name -> (libCacheSim constructor, tolerance on the miss ratio, smallest
# capacity libCacheSim can run, why the tolerance is not 0). Tolerance 0
# means the same miss count. Variants and sources: docs/policies.md.

NEW_POLICIES = {
    "arc": (lambda c: lcs.ARC(c, default_ttl=0), 0.0, 1, None),
    "2q": (lambda c: lcs.TwoQ(c, default_ttl=0), 0.0, 4, None),
    "sieve": (lambda c: lcs.Sieve(c, default_ttl=0), 0.0, 1, None),
    "lfu": (lambda c: lcs.LFU(c, default_ttl=0), 0.0, 1, None),
    "lru-k": (lambda c: lcs.LRUK(c, default_ttl=0, k=2), 0.0, 1, None),
    "belady": (lambda c: lcs.Belady(c, default_ttl=0), 0.0, 1, None),
    # S3FIFO.c exits when the small queue (10%) is 0 objects and stores
    # nothing while it is 1 object (it refuses objects not smaller than the
    # small queue): it runs from 20 objects on; tierlab stores at any size.
    "s3-fifo": (lambda c: lcs.S3FIFO(c, default_ttl=0), 0.0, 20, None),
    # LIRS.c decides each eviction from the incoming request's state in its
    # stacks and bounds stack S its own way; tierlab follows the paper and
    # keeps at most `capacity` ghosts, oldest dropped first. Same 1% HIR
    # share. Measured worst difference 0.0015 (scan trace, 9 objects).
    "lirs": (
        lambda c: lcs.LIRS(c, default_ttl=0),
        0.002,
        1,
        "different stack-S bound and eviction timing (libCacheSim LIRS.c)",
    ),
    # WTinyLFU.c has a window of floor(1%) (nothing is stored below 100
    # objects) and an SLRU main cache of its own segment sizes, and its
    # count-min sketch uses other hashes and widths: single runs differ.
    # Measured worst difference 0.014 (scan trace, 924 objects).
    "w-tinylfu": (
        lambda c: lcs.WTinyLFU(c, default_ttl=0),
        0.02,
        100,
        "other sketch hashes and widths, other SLRU segments (WTinyLFU.c)",
    ),
    # Random draws from another generator: only expectations agree.
    # Measured worst difference 0.0095 (zipf, 63 objects).
    "random": (
        lambda c: lcs.Random(c, default_ttl=0),
        0.02,
        1,
        "independent random generators",
    ),
}


@pytest.mark.parametrize("fraction", FRACTIONS, ids=lambda f: f"{f:g}")
@pytest.mark.parametrize("policy", list(NEW_POLICIES))
@pytest.mark.parametrize("trace_name", TRACE_NAMES)
def test_new_policies_vs_libcachesim(traces, trace_name, policy, fraction):
    path, n_req, n_unique = traces[trace_name]
    capacity = _capacity(fraction, n_unique)
    make, tol, smallest, why = NEW_POLICIES[policy]
    s = tierlab_summary(path, policy, capacity)
    assert s["requests"] == n_req
    if capacity < smallest:
        # libCacheSim cannot run this size (see NEW_POLICIES): check tierlab
        # against bounds that hold for any policy instead of skipping.
        opt, _ = lcs.Belady(capacity, default_ttl=0).process_trace(_lcs_reader(path))
        assert opt - 1e-12 <= s["miss_ratio"] < 1.0, (policy, capacity)
        return
    expected, _ = make(capacity).process_trace(_lcs_reader(path))
    diff = abs(s["miss_ratio"] - expected)
    if tol == 0.0:
        assert s["misses"] == round(expected * n_req), (
            f"{trace_name}/{policy}/capacity={capacity}: tierlab {s['miss_ratio']}, "
            f"libCacheSim {expected}"
        )
    else:
        if policy == "lirs" and capacity < 10:
            # The two LIRS variants part most in a cache of a few objects
            # (1 LIR and 1 HIR block at 2): 0.051 at 2 objects on the
            # sort-memory trace, which reuses a few lines in long runs.
            tol = 0.06
        assert diff <= tol, f"{policy} differs by design ({why}): {diff} > {tol}"
