"""Analyses over sweep results: pure functions of DataFrames (``tierlab.load``).

- :func:`equivalent_capacity`: for each slowdown, the capacity of the slow
  tier that gives the throughput the baseline (DRAM, slowdown 1) gives at
  capacity C (S1, Koob et al., WMPI 2006, Table II).
- :func:`access_ns` and :func:`break_even_hits`: S5's break-even hit count
  ``n*t + Tm < (n+1)*T`` (Park & Bahn 2020) with figures from the catalog
  and the engine's timing model (docs/hierarchy.md).
- :func:`gain_over_baseline`: the gain of each configuration (LRU, an
  admission-controlled cache) over a baseline (no cache) in a metric such
  as storage access time, per storage type (S5 Figs. 3-5).

Every function averages repetitions (rows that differ only in ``rep`` and
``seed``) by the mean and drops failed points (``status != "ok"``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd


def _ok(df: pd.DataFrame) -> pd.DataFrame:
    if "status" in df.columns:
        return df[df["status"] == "ok"]
    return df


def _mean_over_reps(df: pd.DataFrame, keys: Sequence[str], metric: str) -> pd.DataFrame:
    missing = [c for c in (*keys, metric) if c not in df.columns]
    if missing:
        raise KeyError(
            f"no column {', '.join(map(repr, missing))}; the results have "
            f"{', '.join(map(str, df.columns))}"
        )
    d = _ok(df)
    return d.groupby(list(keys), sort=True, dropna=False)[metric].mean().reset_index()


def crossing(xs: Sequence[float], ys: Sequence[float], target: float) -> float:
    """The smallest ``x`` at which the piecewise-linear curve through
    ``(xs, ys)`` (``xs`` increasing) reaches ``target``; NaN when the curve
    stays below it, or starts above it (no extrapolation).

    Examples
    --------
    >>> crossing([100, 200, 300], [5, 15, 25], 10)
    150.0
    >>> crossing([100, 200, 300], [5, 15, 25], 15)
    200.0
    >>> crossing([100, 200, 300], [5, 15, 25], 30)
    nan
    """
    if not xs:
        return math.nan
    if ys[0] >= target:
        return float(xs[0]) if ys[0] == target else math.nan
    for i in range(1, len(xs)):
        y0, y1 = float(ys[i - 1]), float(ys[i])
        if y1 >= target > y0:
            x0, x1 = float(xs[i - 1]), float(xs[i])
            return x0 + (target - y0) * (x1 - x0) / (y1 - y0)
    return math.nan


def equivalent_capacity(
    df: pd.DataFrame,
    *,
    slowdown: str = "tier.0.slowdown",
    capacity: str = "tiers.0.capacity",
    metric: str = "throughput_rps",
    baseline: float = 1,
    by: Sequence[str] = (),
    group: str | None = None,
) -> pd.DataFrame:
    """For each slowdown s and each capacity C of the baseline's curve, the
    capacity C' at which the slow tier's ``metric`` equals the baseline's at C.

    The slow tier's curve (metric against capacity, repetitions averaged) is
    interpolated linearly between the swept capacities; C' is where it first
    reaches the baseline's value. Outside the swept capacities C' is NaN
    (no extrapolation). ``ratio = C' / C`` is S1 Table II's "file-memory
    capacity needed, as a ratio to DRAM capacity, for equal performance".

    Parameters
    ----------
    df
        Sweep results, one row per run (``tierlab.load``).
    slowdown, capacity, metric
        Columns: the slowdown axis, the tier's capacity in bytes (the run
        summary's ``tiers.0.capacity``, or the capacity axis when it holds
        numbers) and the figure to equal (higher is better).
    baseline
        The slowdown of the reference medium (1: DRAM).
    by
        Further columns whose values are compared separately (a workload axis).
    group
        The capacity axis, when ``capacity`` varies between repetitions of
        one point (a share of a footprint that depends on the seed): rows are
        averaged per value of ``group``, capacities included.

    Returns
    -------
    pandas.DataFrame
        Columns ``*by``, ``slowdown``, ``capacity`` (C), ``target`` (the
        baseline's metric at C), ``equivalent_capacity`` (C') and ``ratio``.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"tier.0.slowdown": [1, 1, 1, 2, 2, 2],
    ...                    "tiers.0.capacity": [100, 200, 300] * 2,
    ...                    "throughput_rps": [10, 20, 30, 5, 15, 25]})
    >>> equivalent_capacity(df)[["slowdown", "capacity", "equivalent_capacity", "ratio"]]
       slowdown  capacity  equivalent_capacity  ratio
    0         2       100                150.0   1.50
    1         2       200                250.0   1.25
    2         2       300                  NaN    NaN
    """
    import pandas as pd

    by = list(by)
    if group is None:
        m = _mean_over_reps(df, [*by, slowdown, capacity], metric)
    else:
        d = _ok(df)
        m = d.groupby([*by, slowdown, group], sort=True)[[capacity, metric]].mean().reset_index()
    rows: list[dict[str, Any]] = []
    groups: Iterable[tuple[Any, pd.DataFrame]] = (
        m.groupby(by, sort=True, dropna=False) if by else [((), m)]
    )
    for key, g in groups:
        key_t = key if isinstance(key, tuple) else (key,)
        base = g[g[slowdown] == baseline].sort_values(capacity)
        if base.empty:
            raise ValueError(f"no runs with {slowdown} = {baseline} to compare with")
        for s in sorted(v for v in g[slowdown].unique() if v != baseline):
            curve = g[g[slowdown] == s].sort_values(capacity)
            xs = [float(x) for x in curve[capacity]]
            ys = [float(y) for y in curve[metric]]
            for c, target in zip(base[capacity], base[metric], strict=True):
                eq = crossing(xs, ys, float(target))
                rows.append(
                    {
                        **dict(zip(by, key_t, strict=True)),
                        "slowdown": s,
                        "capacity": c,
                        "target": float(target),
                        "equivalent_capacity": eq,
                        "ratio": eq / float(c) if c else math.nan,
                    }
                )
    cols = [*by, "slowdown", "capacity", "target", "equivalent_capacity", "ratio"]
    return pd.DataFrame(rows, columns=cols)


def ratio_summary(eq: pd.DataFrame, by: Sequence[str] = ()) -> pd.DataFrame:
    """Per slowdown (and ``by``), the mean, minimum and maximum of the
    defined ratios of :func:`equivalent_capacity`, and how many there are.

    Examples
    --------
    >>> import pandas as pd
    >>> eq = pd.DataFrame({"slowdown": [2, 2, 2], "ratio": [1.5, 1.25, float("nan")]})
    >>> ratio_summary(eq)
       slowdown   mean   min  max  n
    0         2  1.375  1.25  1.5  2
    """
    d = eq.dropna(subset=["ratio"])
    g = d.groupby([*by, "slowdown"], sort=True)["ratio"]
    out = g.agg(["mean", "min", "max", "count"]).reset_index()
    return out.rename(columns={"count": "n"})


# --------------------------------------------------------------------------
# S5: break-even hits
# --------------------------------------------------------------------------


def _entries(catalog: Any) -> list[dict[str, Any]]:
    """A catalog given as a DataFrame (``tierlab.techs()``) or a sequence of
    entries, as plain entries without missing figures."""
    rows = catalog.to_dict("records") if hasattr(catalog, "to_dict") else list(catalog)
    return [_entry(r) for r in rows]


def _entry(t: Mapping[str, Any]) -> dict[str, Any]:
    """An entry as JSON can carry it: a DataFrame row holds NaN where an
    entry has no figure, numpy scalars, and floats in integer columns that
    have a gap (``burst_bytes`` 32.0)."""
    out: dict[str, Any] = {}
    for k, v in t.items():
        if hasattr(v, "item") and not isinstance(v, list | tuple | dict):
            v = v.item()
        if v is None or (isinstance(v, float) and v != v):
            continue
        if isinstance(v, float) and v.is_integer() and abs(v) < 2**53:
            v = int(v)
        out[k] = v
    return out


def _tech(
    name_or_tech: str | Mapping[str, Any],
    catalog: Sequence[Mapping[str, Any]] | pd.DataFrame | None,
) -> Mapping[str, Any]:
    """The entry of a name (any letter case), as the engine finds it."""
    import json

    from tierlab import _core

    if isinstance(name_or_tech, Mapping):
        return name_or_tech
    listed = None if catalog is None else json.dumps(_entries(catalog))
    return dict(json.loads(_core.tech(str(name_or_tech), listed)))


def access_ns(
    tech: str | Mapping[str, Any],
    size: int = 4096,
    op: str = "read",
    *,
    slowdown: float = 1.0,
    overhead_ns: float = 0.0,
    catalog: Sequence[Mapping[str, Any]] | pd.DataFrame | None = None,
) -> float:
    """The engine's cost of one access (docs/hierarchy.md, timing model),
    computed by the engine's own cost function: ``latency x slowdown +
    transfer x slowdown + overhead``, with ``read_ns`` or ``write_ns`` as
    latency and as transfer ``round_up(size, access_unit) x 1000 /
    bandwidth_mb_s``, or whole bursts of ``burst_bytes`` at ``burst_ns``
    each.

    Parameters
    ----------
    tech
        A catalog name (``tierlab.techs()``, any letter case) or an entry of
        the same shape.
    catalog
        Where to look the name up (entries, or a DataFrame as
        ``tierlab.techs()`` gives): the built-in catalog when None.

    Examples
    --------
    >>> access_ns("NAND-SLC", 4096)   # 25 us + 4,096 B at 50 MB/s
    106920.0
    >>> access_ns("NAND-SLC", 100)    # a whole 2 KiB page moves
    65960.0
    """
    import json

    from tierlab import _core

    if op not in ("read", "write"):
        raise ValueError(f"op {op!r}; expected read or write")
    t = _entry(_tech(tech, catalog))
    return float(_core.access_ns(json.dumps(t), int(size), op, float(slowdown), float(overhead_ns)))


def break_even_hits(t_ns: float, big_t_ns: float, tm_ns: float) -> float:
    """S5's break-even hit count: the least ``n`` with
    ``n*t + Tm < (n+1)*T`` (t: a cache hit, T: a storage access, Tm: a miss
    that reads storage and inserts into the cache). Caching a block pays
    only if it is hit at least ``n`` times while cached. ``inf`` when the
    cache is not faster than storage.

    Examples
    --------
    >>> break_even_hits(1.0, 1.3, 1.6)   # insertion costs 0.3: n*0.3 > 0.3
    2
    >>> break_even_hits(1.0, 100.0, 101.0)
    1
    >>> break_even_hits(1.0, 1.0, 2.0)
    inf
    """
    gap = big_t_ns - t_ns
    if gap <= 0:
        return math.inf
    # n*(T - t) > Tm - T, strictly.
    return max(1, math.floor((tm_ns - big_t_ns) / gap) + 1)


def break_even_table(
    caches: Sequence[str],
    storages: Sequence[str],
    *,
    size: int = 4096,
    catalog: Sequence[Mapping[str, Any]] | pd.DataFrame | None = None,
) -> pd.DataFrame:
    """:func:`break_even_hits` for each cache and storage technology pair,
    for a read of ``size`` bytes: ``t`` is the cache read, ``T`` the storage
    read, ``Tm = T +`` the cache write (the insertion), each as the engine
    charges it (:func:`access_ns`).

    Examples
    --------
    >>> break_even_table(["DRAM-DDR3"], ["HDD"])[["cache", "storage", "break_even_hits"]]
           cache storage  break_even_hits
    0  DRAM-DDR3     HDD              1.0
    """
    import pandas as pd

    if catalog is None:
        from tierlab.api import catalog_entries

        catalog = catalog_entries()
    rows = []
    for c in caches:
        for s in storages:
            t = access_ns(c, size, "read", catalog=catalog)
            big_t = access_ns(s, size, "read", catalog=catalog)
            tm = big_t + access_ns(c, size, "write", catalog=catalog)
            rows.append(
                {
                    "cache": c,
                    "storage": s,
                    "t_ns": t,
                    "T_ns": big_t,
                    "Tm_ns": tm,
                    "break_even_hits": float(break_even_hits(t, big_t, tm)),
                }
            )
    return pd.DataFrame(
        rows, columns=["cache", "storage", "t_ns", "T_ns", "Tm_ns", "break_even_hits"]
    )


# --------------------------------------------------------------------------
# S5: gains over no cache
# --------------------------------------------------------------------------


def gain_over_baseline(
    df: pd.DataFrame,
    *,
    config: str,
    baseline: Any,
    metric: str = "access_time_ns",
    by: Sequence[str] = (),
) -> pd.DataFrame:
    """The gain of each value of ``config`` over its ``baseline`` value, in a
    metric where lower is better: ``gain = 1 - metric / metric(baseline)``
    (0.25: a quarter of the baseline's storage access time saved; negative:
    worse than the baseline), within each combination of ``by``.

    Parameters
    ----------
    config
        The column naming the compared configurations (an admission axis:
        ``"no cache"``, ``"lru"``, ``"2nd-hit"``).
    baseline
        The value of ``config`` the others are compared with.
    by
        Columns compared separately (storage technology, workload, size).

    Returns
    -------
    pandas.DataFrame
        Columns ``*by``, ``config``, ``metric`` (the mean over repetitions),
        ``baseline`` (the baseline's) and ``gain``; the baseline's own rows
        have gain 0.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"storage": ["hdd"] * 3 + ["scm"] * 3,
    ...                    "cache": ["none", "lru", "adm"] * 2,
    ...                    "access_time_ns": [100.0, 30.0, 40.0, 10.0, 9.8, 7.0]})
    >>> g = gain_over_baseline(df, config="cache", baseline="none", by=["storage"])
    >>> [(r.storage, r.config, round(r.gain, 3)) for r in g.itertuples()][:3]
    [('hdd', 'adm', 0.6), ('hdd', 'lru', 0.7), ('hdd', 'none', 0.0)]
    >>> [(r.storage, r.config, round(r.gain, 3)) for r in g.itertuples()][3:]
    [('scm', 'adm', 0.3), ('scm', 'lru', 0.02), ('scm', 'none', 0.0)]
    """
    import pandas as pd

    by = list(by)
    m = _mean_over_reps(df, [*by, config], metric)
    rows = []
    groups: Iterable[tuple[Any, pd.DataFrame]] = (
        m.groupby(by, sort=True, dropna=False) if by else [((), m)]
    )
    for key, g in groups:
        key_t = key if isinstance(key, tuple) else (key,)
        base = g[g[config] == baseline]
        if base.empty:
            raise ValueError(f"no runs with {config} = {baseline!r} to compare with")
        b = float(base[metric].iloc[0])
        for c, v in zip(g[config], g[metric], strict=True):
            rows.append(
                {
                    **dict(zip(by, key_t, strict=True)),
                    "config": c,
                    "metric": float(v),
                    "baseline": b,
                    "gain": 1.0 - float(v) / b if b else math.nan,
                }
            )
    return pd.DataFrame(rows, columns=[*by, "config", "metric", "baseline", "gain"])
