"""Closed-form models of the source systems, beside the simulator.

Each is a function of a few numbers, and ``tierlab model NAME --param value``
prints it. They live in Python, not in the Rust core that owns every
per-request rule, because they are not per-request work: each is one
formula evaluated once, which no run uses and no other language repeats.

- :func:`memorage_lifetime`: main-memory lifetime gain from wear levelling
  across memory and storage (Jung and Cho, "Memorage: Emerging Persistent
  RAM based Malleable Main Memory and Storage Architecture", ICS 2013, eq. 1).
- :func:`memorage_lending`: the gain and the storage's loss when main memory
  borrows storage capacity for a period (the same paper, eq. 2 as printed).
- :func:`breakeven_hits`: the hits a cached block needs before caching
  pays (Park and Bahn, "Issues in File Caching and Virtual Memory Paging
  with Fast SCM Storage", ASTESJ 2020).
- :func:`equivalent_capacity` and :func:`breakeven_price`: the capacity of a
  slower memory that performs as a given DRAM capacity, and the discount
  that makes it pay (Koob, Elliott and Cockburn, "An Empirical Evaluation
  of Semiconductor File Memory as a Disk Cache", WMPI 2006).

Examples
--------
>>> round(memorage_lifetime(alpha=30, beta=1, gamma=10), 2)
2.0
>>> memorage_lending(h=0.5, tau_days=1, cm_gb=8, bs_gb_per_day=12, beta=10)["memory_gain"]
2.0
>>> breakeven_hits(cache_ns=1.0, storage_ns=10_000_000.0, cached_miss_ns=10_000_001.0)
1
>>> round(breakeven_price(1.37), 2)
0.27
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any, NamedTuple

from tierlab.errors import ModelError

__all__ = [
    "MODELS",
    "Model",
    "Param",
    "breakeven_hits",
    "breakeven_price",
    "equivalent_capacity",
    "memorage_lending",
    "memorage_lifetime",
]


def _check(model: str, name: str, value: float, ok: bool, allowed: str) -> None:
    if not (math.isfinite(value) and ok):
        raise ModelError(f"{model}: {name} = {value:g} is out of range: {allowed}")


def _finite(f: Callable[..., Any]) -> Callable[..., Any]:
    """A model whose result overflows (a ratio of 1e-320 makes 1/ratio
    infinite) raises ModelError rather than return an infinity or a NaN,
    which JSON cannot carry."""
    name = f.__name__.replace("_", "-")

    @functools.wraps(f)
    def checked(*args: Any, **kwargs: Any) -> Any:
        value = f(*args, **kwargs)
        parts = value.values() if isinstance(value, dict) else (value,)
        if not all(math.isfinite(v) for v in parts):
            given = ", ".join(f"{k} = {v!r}" for k, v in kwargs.items()) or ", ".join(
                repr(v) for v in args
            )
            raise ModelError(
                f"{name}: the result is not a finite number for {given}: "
                "a parameter is too close to a bound of its range"
            )
        return value

    return checked


@_finite
def memorage_lifetime(alpha: float, beta: float, gamma: float) -> float:
    """L_new / L_m, Memorage's eq. 1: main-memory lifetime with wear levelled
    over memory and storage, over its lifetime alone.

    ``alpha`` = Cs/Cm (storage over memory capacity), ``beta`` = Bm/Bs
    (memory over storage write bandwidth), ``gamma`` = Em/Es (memory over
    storage endurance): (1 + alpha/gamma) * beta / (1 + beta).
    """
    m = "memorage-lifetime"
    _check(m, "alpha", alpha, alpha >= 0, "must be 0 or more (storage capacity / memory capacity)")
    _check(m, "beta", beta, beta > 0, "must be positive (memory / storage write bandwidth)")
    _check(m, "gamma", gamma, gamma > 0, "must be positive (memory / storage endurance)")
    return (1.0 + alpha / gamma) * beta / (1.0 + beta)


@_finite
def memorage_lending(
    h: float, tau_days: float, cm_gb: float, bs_gb_per_day: float, beta: float
) -> dict[str, float]:
    """Memorage's eq. 2 as printed: main memory borrows eta = h * Cm of
    storage for ``tau_days`` at a time and rests as much of its own.

    ``memory_gain`` = L'_m / L_m = 1 / (1 - h); ``storage_degradation`` =
    L_s / L'_s = 1 + beta * h + 2 * h * Cm / (tau * Bs), with Cm in GB, Bs
    the storage's write rate in GB per day and beta = Bm / Bs. The paper's
    prose around Figure 11 does not always follow from the equation; the
    equation is what is computed.
    """
    m = "memorage-lending"
    _check(m, "h", h, 0 <= h < 1, "must be at least 0 and less than 1 (borrowed / memory capacity)")
    _check(m, "tau_days", tau_days, tau_days > 0, "must be positive (days a loan lasts)")
    _check(m, "cm_gb", cm_gb, cm_gb > 0, "must be positive (main memory capacity, GB)")
    _check(m, "bs_gb_per_day", bs_gb_per_day, bs_gb_per_day > 0, "must be positive (GB/day)")
    _check(m, "beta", beta, beta >= 0, "must be 0 or more (memory / storage write bandwidth)")
    return {
        "memory_gain": 1.0 / (1.0 - h),
        "storage_degradation": 1.0 + beta * h + 2.0 * h * cm_gb / (tau_days * bs_gb_per_day),
    }


@_finite
def breakeven_hits(cache_ns: float, storage_ns: float, cached_miss_ns: float) -> int:
    """The fewest hits n for which caching a block pays: n*t + Tm < (n+1)*T,
    with t = ``cache_ns`` (a hit), T = ``storage_ns`` (an access without the
    cache) and Tm = ``cached_miss_ns`` (a storage access plus the copy into
    the cache); at least 1. With T close to t (storage-class memory), n
    grows: a block needs several hits before caching it pays.

    The rule is :func:`tierlab.analysis.break_even_hits` (which the S5
    reproduction applies to the catalog's media); this checks the
    parameters, so that one from the command line fails with its name.
    """
    from tierlab.analysis import break_even_hits

    m = "breakeven-hits"
    _check(m, "cache_ns", cache_ns, cache_ns >= 0, "must be 0 or more")
    _check(
        m,
        "storage_ns",
        storage_ns,
        storage_ns > cache_ns,
        f"must exceed cache_ns ({cache_ns:g}): otherwise no number of hits pays",
    )
    _check(m, "cached_miss_ns", cached_miss_ns, cached_miss_ns >= 0, "must be 0 or more")
    return int(break_even_hits(cache_ns, storage_ns, cached_miss_ns))


@_finite
def equivalent_capacity(dram_capacity: float, ratio: float) -> float:
    """The capacity of a slower memory that performs as ``dram_capacity`` of
    DRAM, given the capacity ratio measured for it (the file-memory paper's
    Table II: e.g. 1.37 for PostMark at slowdown 3)."""
    m = "equivalent-capacity"
    _check(m, "dram_capacity", dram_capacity, dram_capacity > 0, "must be positive")
    _check(m, "ratio", ratio, ratio > 0, "must be positive (slower / DRAM capacity)")
    return dram_capacity * ratio


@_finite
def breakeven_price(ratio: float) -> float:
    """The discount per bit, as a fraction of DRAM's price, at which a memory
    needing ``ratio`` times DRAM's capacity for equal performance costs the
    same: 1 - 1/ratio (a negative discount, for a ratio below 1, is the
    premium it may carry)."""
    m = "breakeven-price"
    _check(m, "ratio", ratio, ratio > 0, "must be positive (slower / DRAM capacity)")
    return 1.0 - 1.0 / ratio


class Param(NamedTuple):
    name: str
    help: str


class Model(NamedTuple):
    func: Callable[..., Any]
    params: tuple[Param, ...]
    # What the result is, for the command's text output.
    result: str


# One line per model: `tierlab model NAME` takes its options from here.
MODELS: dict[str, Model] = {
    "memorage-lifetime": Model(
        memorage_lifetime,
        (
            Param("alpha", "storage capacity / memory capacity (Cs/Cm)"),
            Param("beta", "memory write bandwidth / storage write bandwidth (Bm/Bs)"),
            Param("gamma", "memory endurance / storage endurance (Em/Es)"),
        ),
        "lifetime gain L_new/L_m",
    ),
    "memorage-lending": Model(
        memorage_lending,
        (
            Param("h", "borrowed capacity / memory capacity (eta/Cm), below 1"),
            Param("tau_days", "days each loan lasts"),
            Param("cm_gb", "main memory capacity (GB)"),
            Param("bs_gb_per_day", "storage write rate (GB/day)"),
            Param("beta", "memory write bandwidth / storage write bandwidth (Bm/Bs)"),
        ),
        "memory lifetime gain and storage lifetime degradation",
    ),
    "breakeven-hits": Model(
        breakeven_hits,
        (
            Param("cache_ns", "time of a cache hit (t)"),
            Param("storage_ns", "time of a storage access without the cache (T)"),
            Param("cached_miss_ns", "time of a storage access plus the copy into the cache (Tm)"),
        ),
        "hits a cached block needs before caching pays",
    ),
    "equivalent-capacity": Model(
        equivalent_capacity,
        (
            Param("dram_capacity", "DRAM capacity (any unit; the result is in the same)"),
            Param("ratio", "capacity ratio for equal performance (slower / DRAM)"),
        ),
        "capacity of the slower memory",
    ),
    "breakeven-price": Model(
        breakeven_price,
        (Param("ratio", "capacity ratio for equal performance (slower / DRAM)"),),
        "discount per bit, as a fraction of DRAM's price",
    ),
}
