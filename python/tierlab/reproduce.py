"""``tierlab reproduce s1|s2|s5``: a source paper's experiment, run through the
sweep at a scale this machine affords, side by side with the paper's figures.

Each reproduction is one entry of :data:`SYSTEMS`: a bundled experiment file
(``tierlab/experiments/<name>.toml``, which states its scaling and
assumptions), run by :func:`tierlab.sweep` into ``<out>/<name>.sqlite``; a
comparison of its results with the paper's figures; and the notes on what
drives the differences. :func:`reproduce` runs any entry the same way and
:func:`tierlab.report.write_report` writes it up with the comparison first.
Adding a reproduction is one experiment file, one comparison function and
one entry. docs/sources.md describes the papers; docs/reproduce-s1.md,
-s2.md and -s5.md give the measured tables.
"""

from __future__ import annotations

import copy
import math
import os
import time
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tierlab.errors import ConfigError

if TYPE_CHECKING:
    import pandas as pd

    from tierlab._sweep import SweepProgress, SweepReport
    from tierlab.report import Report

#: S1 Table II: file-memory capacity for equal performance, as a ratio to DRAM's.
S1_TABLE_II: dict[str, dict[int, float]] = {
    "postmark": {2: 1.19, 3: 1.37, 4: 1.63, 5: 2.03},
    "bonnie": {2: 1.13, 3: 1.32, 4: 1.66, 5: 2.33},
}

#: S5's claims: (what, storage techs, cache config, paper's range of the gain, as printed).
S5_CLAIMS: list[tuple[str, tuple[str, ...], str, tuple[float, float], str]] = [
    # "gains < 3%": a small gain, so a loss is outside the claim, not inside it.
    ("LRU cache on SCM", ("SCM-S5", "SCM-OPTANE"), "lru", (0.0, 0.03), "0-3%"),
    ("second-hit admission on SCM", ("SCM-S5", "SCM-OPTANE"), "2nd-hit", (0.20, 0.40), "20-40%"),
    ("LRU cache on HDD", ("HDD",), "lru", (0.70, 0.70), "~70%"),
    ("second-hit admission on HDD", ("HDD",), "2nd-hit", (0.70, 0.70), "~70%"),
]

#: S5: a block must be hit this many times to pay for caching it.
S5_BREAK_EVEN = {"SCM": 2, "HDD": 1}


@dataclass
class Reproduction:
    """The outcome of :func:`reproduce`."""

    name: str
    store: Path
    sweep: SweepReport
    comparison: pd.DataFrame
    notes: tuple[str, ...]
    report: Report
    elapsed_s: float
    extra_tables: list[tuple[str, pd.DataFrame]] = field(default_factory=list)


def experiment_text(name: str) -> str:
    """The bundled experiment file of a reproduction."""
    return (resources.files("tierlab") / system(name).experiment).read_text("utf-8")


def system(name: str) -> System:
    """The reproduction called ``name``."""
    if name not in SYSTEMS:
        raise ConfigError(f"unknown reproduction {name!r}; expected one of {', '.join(SYSTEMS)}")
    return SYSTEMS[name]


def _scale_size(v: Any, f: float) -> Any:
    """A capacity times ``f``: numbers and sizes scale, shares ("10%") do not."""
    if isinstance(v, bool):
        return v
    if isinstance(v, int | float):
        return max(1, round(v * f))
    if isinstance(v, str) and not v.strip().endswith("%"):
        from tierlab.experiment import _size

        n, kind = _size(v, "capacity")
        if kind == "size":
            return max(1, round(n * f))
    return v


def scaled_experiment(name: str, scale: float = 1.0) -> dict[str, Any]:
    """The bundled experiment as a dict, with ``scale`` applied: workload
    scales (the base's and any whole-workload axis value's) and absolute tier
    capacities are multiplied by it; shares of the footprint scale by
    themselves.

    Examples
    --------
    >>> e = scaled_experiment("s2", 0.5)
    >>> e["base"]["workload"]["scale"], e["base"]["tier"][0]["capacity"]
    (0.1, 53687091)
    """
    if not (isinstance(scale, int | float) and math.isfinite(scale) and scale > 0):
        raise ConfigError(f"--scale {scale!r}: must be a positive number")
    exp = tomllib.loads(experiment_text(name))
    if scale == 1:
        return exp
    exp = copy.deepcopy(exp)
    w = exp["base"]["workload"]
    w["scale"] = float(w.get("scale", 1.0)) * scale
    for t in exp["base"].get("tier", []):
        if "capacity" in t:
            t["capacity"] = _scale_size(t["capacity"], scale)
    for a in exp.get("axis", []):
        if a.get("key") == "workload" and "values" in a:
            for v in a["values"]:
                if isinstance(v, dict):
                    v["scale"] = float(v.get("scale", 1.0)) * scale
    exp["experiment"]["description"] += f" (reproduce --scale {scale:g})"
    return exp


def _fmt_pct(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{100 * x:.1f}%"


def _diff_to_range(x: float, lo: float, hi: float) -> float:
    """0 inside [lo, hi], else the signed distance to the nearer end."""
    if math.isnan(x):
        return math.nan
    if x < lo:
        return x - lo
    if x > hi:
        return x - hi
    return 0.0


# --------------------------------------------------------------------------
# per reproduction: the comparison with the paper
# --------------------------------------------------------------------------


#: A comparison's side-by-side table and further (title, table) pairs.
Comparison = tuple["pd.DataFrame", list[tuple[str, "pd.DataFrame"]]]


def compare_s1(df: pd.DataFrame, exp: dict[str, Any], store: Path) -> Comparison:
    """Table II side by side: tierlab's mean ratio over the swept capacities
    where it is defined, its range, the paper's, and the difference."""
    import pandas as pd

    from tierlab.analysis import equivalent_capacity, ratio_summary

    eq = equivalent_capacity(
        df,
        slowdown="tier[0].slowdown",
        capacity="tiers.0.capacity",
        by=["workload.type"],
        group="tier[0].capacity",
    )
    summ = ratio_summary(eq, by=["workload.type"])
    rows = []
    for wl, paper in S1_TABLE_II.items():
        for s, p in paper.items():
            r = summ[(summ["workload.type"] == wl) & (summ["slowdown"] == s)]
            mean = float(r["mean"].iloc[0]) if len(r) else math.nan
            lo = float(r["min"].iloc[0]) if len(r) else math.nan
            hi = float(r["max"].iloc[0]) if len(r) else math.nan
            n = int(r["n"].iloc[0]) if len(r) else 0
            rows.append(
                {
                    "workload": wl,
                    "slowdown": s,
                    "paper": p,
                    "tierlab (mean)": round(mean, 3),
                    "tierlab (min..max)": "n/a" if n == 0 else f"{lo:.3f}..{hi:.3f}",
                    "capacities": n,
                    "difference": round(mean - p, 3),
                }
            )
    return pd.DataFrame(rows), [("Equivalent capacity at each swept capacity", eq)]


def compare_s5(df: pd.DataFrame, exp: dict[str, Any], store: Path) -> Comparison:
    """S5's claims against tierlab's gains in storage access time over no
    cache (mean over the cache sizes), per workload; the break-even table."""
    import pandas as pd

    from tierlab.analysis import break_even_table, gain_over_baseline
    from tierlab.api import catalog_entries

    g = gain_over_baseline(
        df,
        config="tier[0].admission",
        baseline="no cache",
        metric="access_time_ns",
        by=["workload", "backing.tech", "tier[0].capacity"],
    )
    mean = g.groupby(["workload", "backing.tech", "config"], sort=False)["gain"].agg(
        ["mean", "min", "max"]
    )
    rows = []
    for what, storages, cfg, (lo, hi), shown in S5_CLAIMS:
        for wl in dict.fromkeys(df["workload"]):
            for st in storages:
                key = (wl, st, cfg)
                if key not in mean.index:
                    continue
                m, mn, mx = (float(v) for v in mean.loc[key])
                rows.append(
                    {
                        "claim": what,
                        "workload": wl,
                        "storage": st,
                        "paper": shown,
                        "tierlab (mean)": _fmt_pct(m),
                        "tierlab (min..max)": f"{_fmt_pct(mn)}..{_fmt_pct(mx)}",
                        "difference (pts)": round(100 * _diff_to_range(m, lo, hi), 1),
                    }
                )
    # The engine applies the config's [techs] (bases, units, checks).
    catalog = catalog_entries(exp["base"].get("techs", {}))
    techs_used = [str(s) for s in dict.fromkeys(df["backing.tech"])]
    be = break_even_table(["DRAM-DDR3"], techs_used, catalog=catalog)
    be["paper"] = [
        S5_BREAK_EVEN["SCM"] if "SCM" in s else S5_BREAK_EVEN["HDD"] if s == "HDD" else None
        for s in be["storage"]
    ]
    full = g[g["config"] != "no cache"]
    return pd.DataFrame(rows), [
        ("Break-even hits (S5: n*t + Tm < (n+1)*T), 4 KiB blocks", be),
        ("Gain over no cache at each cache size", full),
    ]


def compare_s2(df: pd.DataFrame, exp: dict[str, Any], store: Path) -> Comparison:
    """S2's qualitative result (the extended buffer cache lowers the miss
    rate, run after run) against tierlab's whole-run and per-run figures.

    The points with k = 1..5 runs share their first runs, so run k's own
    miss ratio is (misses_k - misses_{k-1}) / (lookups_k - lookups_{k-1})."""
    import pandas as pd

    ax, runs_ax = "tier[1].admission", "workload.postmark.runs"
    d = df[df["status"] == "ok"].copy()
    d["lookups"] = d["reads"] + d["writes"]
    cols = ["misses", "lookups", "backing.reads", "reads"]
    m = d.groupby([ax, runs_ax], sort=True)[cols].mean().reset_index()
    per_run: dict[str, list[float]] = {}
    per_run_read: dict[str, list[float]] = {}
    whole: dict[str, tuple[float, float]] = {}
    for label in ("page cache alone", "extended buffer cache"):
        g = m[m[ax] == label].sort_values(runs_ax)
        diff = g[cols].diff().fillna(g[cols])
        per_run[label] = list(diff["misses"] / diff["lookups"])
        per_run_read[label] = list(diff["backing.reads"] / diff["reads"])
        last = g.iloc[-1]
        whole[label] = (
            float(last["misses"] / last["lookups"]),
            float(last["backing.reads"] / last["reads"]),
        )
    (a, ra), (e, re_) = whole["page cache alone"], whole["extended buffer cache"]
    n = len(per_run["page cache alone"])
    lower = sum(
        1
        for x, y in zip(per_run["page cache alone"], per_run["extended buffer cache"], strict=True)
        if y < x
    )
    rows = [
        {
            "figure": "miss ratio, all runs (page cache alone -> extended buffer cache)",
            "paper": "lower with the extended buffer cache",
            "tierlab": f"{a:.3f} -> {e:.3f}",
            "same direction": "yes" if e < a else "no",
        },
        {
            "figure": "read miss ratio, all runs (disk reads / reads)",
            "paper": "lower with the extended buffer cache",
            "tierlab": f"{ra:.3f} -> {re_:.3f}",
            "same direction": "yes" if re_ < ra else "no",
        },
        {
            "figure": f"runs (of {n}) with a lower miss ratio",
            "paper": "every run",
            "tierlab": f"{lower} of {n}",
            "same direction": "yes" if lower == n else "no",
        },
    ]
    runs = pd.DataFrame(
        {
            "run": list(range(1, n + 1)),
            **{f"miss ratio: {k}": [round(x, 4) for x in v] for k, v in per_run.items()},
            **{f"read miss ratio: {k}": [round(x, 4) for x in v] for k, v in per_run_read.items()},
        }
    )
    return pd.DataFrame(rows), [("Miss ratio of each PostMark run", runs)]


@dataclass(frozen=True)
class System:
    """One reproduction: which paper, which bundled experiment, how its
    results are set beside the paper's, and what drives the differences."""

    #: The name on the command line, and the experiment file's and store's stem.
    name: str
    #: The paper, cited by title, authors and venue.
    paper: str
    #: ``compare(results, experiment, store)`` -> the side-by-side table and
    #: further (title, table) pairs for the report.
    compare: Callable[[pd.DataFrame, dict[str, Any], Path], Comparison]
    #: What drives the differences, one sentence group per note.
    notes: tuple[str, ...]

    @property
    def doc(self) -> str:
        """The reproduction's write-up, in the repository."""
        return f"docs/reproduce-{self.name}.md"

    @property
    def experiment(self) -> str:
        """The bundled experiment file, in the package."""
        return f"experiments/{self.name}.toml"


#: Every reproduction; ``tierlab reproduce NAME`` runs ``SYSTEMS[NAME]``.
SYSTEMS: dict[str, System] = {
    s.name: s
    for s in (
        System(
            "s1",
            '"An Empirical Evaluation of Semiconductor File Memory as a Disk Cache", '
            "Koob, Elliott and Cockburn, WMPI 2006",
            compare_s1,
            (
                "tierlab charges every access on the request's critical path, with no overlap "
                "(docs/hierarchy.md): a disk read costs 8.5 ms plus the transfer, while a 4 KiB "
                "copy from file memory costs 0.7 us times the slowdown. Wherever the ESDC misses, "
                "the disk dominates the time and a slower file memory changes throughput very "
                "little, so the capacity that compensates a slowdown is close to the same "
                "capacity (ratio near 1). S1's machine overlapped disk I/O with computation "
                "(read-ahead, asynchronous write-back, PostMark's CPU work), which makes the "
                "memory copies a larger share of the time and the ratios larger. Behind an SSD "
                "the file memory's cost shows (examples/sweep-slowdown.toml).",
                "Where the ESDC holds everything (the largest sizes), no faster throughput exists "
                "on the slow curves within the sweep, and the ratio is undefined there (n/a or "
                "fewer capacities).",
                "A write of a new page counts as a miss (write-allocate without fetch), and "
                "tierlab's throughput covers the whole run, including PostMark's pool creation "
                "and Bonnie's write phase; S1 reports throughput of the measured phase after a "
                "discarded cold run.",
            ),
        ),
        System(
            "s2",
            '"Flash Memory for Buffer Caches: Emulating Memory Hierarchies Using a '
            'Modified Linux Kernel", Koob, Elliott and Cockburn, slides',
            compare_s2,
            (
                "PostMark's creates and appends write new pages; each counts as a miss of the "
                "hierarchy (write-allocate without fetch) whatever the cache, which keeps the "
                "whole-run miss ratio high; the read miss ratio shows the victim tier's effect.",
                "Each PostMark run deletes its files at the end and the next creates new ones, so "
                "nothing is reused across runs: every run starts cold, in tierlab as in S2.",
                "Tier sizes are assumptions (S2's slides give none): 512 MiB of DRAM and 1 GiB of "
                "flash at full scale.",
            ),
        ),
        System(
            "s5",
            '"Issues in File Caching and Virtual Memory Paging with Fast SCM Storage", '
            "Park and Bahn, ASTESJ 5(5), 2020",
            compare_s5,
            (
                "SCM-S5 takes S5's statement that SCM storage is ~30% slower than the cache "
                "(T = 1.3 t for a 4 KiB block); SCM-OPTANE is the catalog's Optane SSD (~35 times "
                "a DRAM access), on which caching gains like on flash.",
                "The engine charges an insertion as a full cache write of the block "
                "(Tm = T + t_w), so on SCM-S5 a block must be hit more often than S5's two "
                "times to pay "
                "(break-even table). S5's measured system had software costs (page-cache "
                "management, system calls) on both paths that tierlab does not model.",
                "Workloads are tierlab's generators, not S5's traces: gains depend on their hit "
                "ratios and share of one-timers.",
            ),
        ),
    )
}

REPRODUCTIONS = tuple(SYSTEMS)


def reproduce(
    name: str,
    out_dir: str | os.PathLike[str] | None = None,
    *,
    scale: float = 1.0,
    scheduler: str | None = None,
    workers: int | None = None,
    progress: SweepProgress | None = None,
) -> Reproduction:
    """Runs a reproduction: its sweep, the comparison with the paper, the report.

    Parameters
    ----------
    name
        A key of :data:`SYSTEMS`: ``"s1"``, ``"s2"`` or ``"s5"``.
    out_dir
        Where the store (``<name>.sqlite``) and the report go (default
        ``tierlab-<name>`` in the current folder).
    scale
        Multiplies the bundled experiment's workload scale and absolute tier
        sizes (a tiny value for tests).
    scheduler, workers, progress
        As for :func:`tierlab.sweep`.
    """
    from tierlab._sweep import sweep
    from tierlab.report import Section, make_folder, write_report
    from tierlab.store import load

    t0 = time.perf_counter()
    exp = scaled_experiment(name, scale)  # an unknown name fails here
    out = Path(out_dir) if out_dir is not None else Path(f"tierlab-{name}")
    make_folder(out)
    store = out / f"{name}.sqlite"
    rep = sweep(exp, store=store, scheduler=scheduler, workers=workers, progress=progress)
    df = load(store, name)
    if not (df["status"] == "ok").any():
        first = df["error"].dropna().iloc[0] if df["error"].notna().any() else "unknown"
        raise ConfigError(f"reproduce {name}: every point failed; the first: {first}")
    sys_ = system(name)
    comparison, extra = sys_.compare(df, exp, store)
    sec = Section(
        f"{name.upper()}: tierlab beside the paper",
        f"The paper: {sys_.paper} (docs/sources.md describes it; {sys_.doc} discusses "
        "this reproduction). What drives the differences: " + " ".join(sys_.notes),
        tables=[("Side by side", comparison), *extra],
    )
    report = write_report(store, out, experiment=name, extra=[sec])
    return Reproduction(
        name, store, rep, comparison, sys_.notes, report, time.perf_counter() - t0, extra
    )


def print_reproduction(r: Reproduction) -> None:
    """The side-by-side table and the notes on stdout."""
    from tierlab._format import console
    from tierlab.report import formatted

    c = console()
    sys_ = SYSTEMS[r.name]
    c.print(f"{r.name.upper()}: tierlab beside the paper")
    c.print(f"The paper: {sys_.paper} (docs/sources.md); discussion: {sys_.doc}")
    print(formatted(r.comparison, na="n/a").to_string(index=False))
    for title, table in r.extra_tables[:1]:
        if len(table) <= 12:
            c.print(f"\n{title}")
            print(formatted(table).to_string(index=False))
    c.print("\nWhat drives the differences:")
    for n in r.notes:
        c.print(f"- {n}")
    s = r.sweep
    points = f"{s.total} point" + ("" if s.total == 1 else "s")
    c.print(
        f"\n{points} ({s.done} run, {s.skipped} already in the store, {s.failed} "
        f"failed) in {r.elapsed_s:.1f} s; results in {r.store}; report {r.report.html}"
    )
