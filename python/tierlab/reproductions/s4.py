"""S4: FlashCache, a NAND flash second-level file cache for web servers
(Kgil and Mudge, CASES 2006): throughput of 128 MiB DRAM + 1 GiB flash against
1 GiB DRAM (Fig. 5), the secondary-cache latency a web server tolerates
(Fig. 3), die area, flash accesses, lifetime and wear (Section 6).

The four experiments (``s4``: SURGE-like, ``s4-dram``: Fig. 5's other DRAM
sizes, ``s4-specweb``, ``s4-latency``)
keep the paper's fileset and cache sizes at every ``--scale``: the scale
multiplies the number of file requests only, so the caches stay as large
against the fileset as S4's (docs/reproduce-s4.md)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from tierlab.reproduce import Context, Figure, Outcome, System

if TYPE_CHECKING:
    import pandas as pd

    from tierlab.report import Plot

#: File requests of each experiment at scale 1 (the generators' s4 presets).
REQUESTS = {"s4": 200_000, "s4-dram": 200_000, "s4-specweb": 1_000_000, "s4-latency": 200_000}
DRAM_ONLY, FLASH = "dram-only", "flash+dram128"
CORES = ("4 cores", "8 cores", "12 cores")
HEAD = "8 cores"
#: The DRAM size of each configuration of the ``s4`` experiment's tier axis, MiB.
DRAM_MIB = {
    "flash+dram64": 64,
    "flash+dram128": 128,
    "flash+dram256": 256,
    "flash+dram512": 512,
    DRAM_ONLY: 1024,
}
#: S4's figures: Fig. 5 (equal throughput), 6.1 (40% less die area), Fig. 6
#: (> 2.5x less power), 3.2 (FCHT hits > 99%), 6.3 (< 2,000 accesses/s,
#: ~100 years at 10^6 cycles, wear levelling invoked twice).
PAPER = {
    "throughput_ratio": 1.0,
    "latency_tolerance_us": 100.0,
    "power_reduction_vs_powerdown": 2.5,
    "area_reduction": 0.40,
    "flash_accesses_per_s": 2000.0,
    "flash_hit_ratio": 0.99,
    "flash_lifetime_years_1e6": 100.0,
    "hot_set_swaps": 2.0,
}
#: S4 Table 3: NAND erase time, ns (the time model charges it on the flash).
ERASE_NS = 1_500_000
#: S4 Fig. 2b: "90% of requests are for 20% of the web content files".
FIG2B = (0.20, 0.90)
#: The seed of the ``s4`` experiments (their generators' traces).
SEED = 4
#: libCacheSim's oracleGeneral record, the format ``trace_generate`` writes.
ORACLE = [("t", "<u4"), ("id", "<u8"), ("size", "<u4"), ("next", "<i8")]


def web_files(seed: int = SEED) -> tuple[Any, int]:
    """The ``web`` generator's ``s4`` requests at full size: the number of
    whole-file requests each file got (index 0: file id 1) and the number of
    files in the fileset (the generator's description of a one-request run:
    the fileset is drawn before any request)."""
    import os
    import re
    import tempfile

    import numpy as np

    from tierlab.api import simulate_raw, trace_generate

    cfg = {
        "workload": {"type": "web", "preset": "s4", "seed": seed, "web": {"requests": 1}},
        "tier": [{"name": "m", "tech": "DRAM-DDR2", "capacity": "1MiB"}],
        "backing": {"tech": "HDD"},
    }
    desc = str(simulate_raw(cfg)["summary"]["workload"])
    m = re.search(r"([\d,]+) files", desc)
    if m is None:
        raise RuntimeError(f"reproduce s4: no file count in {desc!r}")
    n = int(m.group(1).replace(",", ""))
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "web.oracleGeneral")
        trace_generate("web", out, preset="s4", seed=seed, format="oracle")
        key = np.fromfile(out, dtype=np.dtype(ORACLE))["id"]
    # A whole-file request reads its file's page 0 once.
    files = (key[(key & 0xFFFFFFFF) == 0] >> 32).astype(np.int64)
    return np.bincount(files, minlength=n + 1)[1:], n


def top_share(counts: Any, files_share: float = FIG2B[0]) -> float:
    """The share of requests that go to the ``files_share`` most requested
    files (S4 Fig. 2b's axis)."""
    import numpy as np

    c = np.sort(np.asarray(counts))[::-1]
    k = math.ceil(files_share * len(c))
    return float(c[:k].sum() / c.sum()) if c.sum() else math.nan


def _sweep(ctx: Context, stem: str) -> pd.DataFrame:
    """Runs a bundled experiment with the fileset and caches at full size and
    the file requests times ``ctx.scale``."""
    from tierlab.reproduce import scaled_experiment

    exp = scaled_experiment(stem, 1.0)
    if ctx.scale != 1:
        w = exp["base"]["workload"]
        table = w.setdefault(str(w["type"]), {})
        table["requests"] = max(1, round(REQUESTS[stem] * ctx.scale))
        note = f" (reproduce --scale {ctx.scale:g}: file requests only)"
        exp["experiment"]["description"] += note
    df = ctx.sweep(exp, name=stem)
    return df[df["status"] == "ok"]


def _row(d: pd.DataFrame, tier: str, cores: str) -> pd.Series | None:
    r = d[(d["tier"] == tier) & (d["server"] == cores)]
    return None if r.empty else r.iloc[0]


def _num(r: pd.Series | None, key: str) -> float:
    if r is None or key not in r.index:
        return math.nan
    v = r[key]
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def _ratio(d: pd.DataFrame, cores: str) -> float:
    a = _num(_row(d, FLASH, cores), "throughput_bytes_per_s")
    b = _num(_row(d, DRAM_ONLY, cores), "throughput_bytes_per_s")
    return a / b if b > 0 else math.nan


def tolerance_us(latency_us: list[float], throughput: list[float], within: float = 0.05) -> float:
    """The largest latency at which throughput stays within ``within`` of its
    value at the first (DRAM) latency, linearly interpolated between swept
    latencies; the largest swept latency when none falls out.

    Examples
    --------
    >>> tolerance_us([0.05, 100, 200, 400], [10.0, 9.9, 9.0, 5.0])
    144.44...
    >>> tolerance_us([0.05, 100], [10.0, 9.8])
    100.0
    """
    pts = sorted(zip(latency_us, throughput, strict=True))
    limit = (1 - within) * pts[0][1]
    for (l0, t0), (l1, t1) in zip(pts, pts[1:], strict=False):
        if t1 < limit:
            return l0 + (t0 - limit) / (t0 - t1) * (l1 - l0) if t0 > t1 else l0
    return float(pts[-1][0])


def _stations(r: pd.Series) -> list[str]:
    """Station names in the engine's order: cpu, link, the tiers, backing."""
    tiers = ["dram", "flash"] if not math.isnan(_num(r, "tiers.1.hits")) else ["dram"]
    return ["cpu", "link", *tiers, "disk"]


def _busiest(r: pd.Series) -> str:
    names = _stations(r)
    u = [(_num(r, f"time.stations.{i}.utilization"), n) for i, n in enumerate(names)]
    u = [x for x in u if not math.isnan(x[0])]
    if not u:
        return ""
    val, name = max(u)
    return f"{name} {val:.0%}"


def _throughput_table(d: pd.DataFrame, workload: str) -> pd.DataFrame:
    import pandas as pd

    rows = []
    for tier in [t for t in DRAM_MIB if t in set(d["tier"])]:
        for cores in CORES:
            r = _row(d, tier, cores)
            if r is None:
                continue
            base = _num(_row(d, DRAM_ONLY, cores), "throughput_bytes_per_s")
            thr = _num(r, "throughput_bytes_per_s")
            rows.append(
                {
                    "workload": workload,
                    "memory": "1 GiB DRAM"
                    if tier == DRAM_ONLY
                    else f"{DRAM_MIB[tier]} MiB DRAM + 1 GiB flash",
                    "cores": cores,
                    "Gbit/s": round(thr * 8 / 1e9, 3),
                    "vs DRAM only": round(thr / base, 3) if base > 0 else math.nan,
                    "DRAM miss ratio": round(_num(r, "tiers.0.miss_ratio"), 4),
                    "flash miss ratio": round(_num(r, "tiers.1.miss_ratio"), 4),
                    "busiest station": _busiest(r),
                }
            )
    return pd.DataFrame(rows)


def _fig3(lat: pd.DataFrame) -> Plot:
    from tierlab.plotting import figure
    from tierlab.report import Plot

    fig, (ax,) = figure()
    for cores in CORES:
        g = lat[lat["server"] == cores].sort_values("lat_us")
        if g.empty:
            continue
        ax.plot(g["lat_us"], g["throughput_bytes_per_s"] * 8 / 1e9, marker="o", label=cores)
    ax.set_xscale("log")
    ax.set_xlabel("secondary page cache latency (us, log scale)")
    ax.set_ylabel("network throughput (Gbit/s)")
    ax.set_title("S4 Fig. 3: latency tolerance, 128 MiB DRAM + 1 GiB secondary cache")
    ax.legend()
    ax.grid(True, alpha=0.3)
    return Plot(
        "s4-fig3-latency",
        fig,
        "Network throughput against the secondary cache's read and write latency "
        "(s4-latency: SURGE-like load, 24 outstanding requests), one line per core count; "
        "the leftmost point is DRAM's 50 ns.",
    )


def _fig5(d: pd.DataFrame) -> Plot:
    from tierlab.plotting import figure
    from tierlab.report import Plot

    fig, (ax, ax2) = figure(ncols=2)
    for cores in CORES:
        g = d[(d["server"] == cores) & (d["tier"] != DRAM_ONLY)].copy()
        if g.empty:
            continue
        g["mib"] = g["tier"].map(DRAM_MIB)
        g = g.sort_values("mib")
        (line,) = ax.plot(g["mib"], g["throughput_bytes_per_s"] * 8 / 1e9, marker="o", label=cores)
        r = _row(d, DRAM_ONLY, cores)
        if r is not None:
            ax.plot(
                [1024],
                [_num(r, "throughput_bytes_per_s") * 8 / 1e9],
                marker="s",
                linestyle="none",
                color=line.get_color(),
            )
    ax.set_xscale("log", base=2)
    ax.set_xlabel("DRAM (MiB); circles: + 1 GiB flash, squares: 1 GiB DRAM alone")
    ax.set_ylabel("network throughput (Gbit/s)")
    ax.set_title("S4 Fig. 5(a): SURGE-like load")
    ax.legend()
    ax.grid(True, alpha=0.3)
    names, areas = [], []
    for tier in DRAM_MIB:
        r = _row(d, tier, HEAD)
        if r is None:
            continue
        names.append("1G DRAM" if tier == DRAM_ONLY else f"{DRAM_MIB[tier]}M+1G")
        a = _num(r, "tiers.0.area_cm2")
        b = _num(r, "tiers.1.area_cm2")
        areas.append(a + (0.0 if math.isnan(b) else b))
    ax2.bar(names, areas)
    ax2.set_ylabel("die area (cm^2, S4 Table 1 densities)")
    ax2.set_title("S4 Fig. 5(c): total die area")
    ax2.set_xlabel("DRAM + flash")
    fig.tight_layout()
    return Plot(
        "s4-fig5-dram-size",
        fig,
        "Left: network throughput against DRAM size with a 1 GiB flash cache (circles) "
        "and with 1 GiB of DRAM alone (squares), one colour per core count (experiment s4). "
        "Right: die area of each memory from S4 Table 1's densities.",
    )


def run(ctx: Context) -> Outcome:
    import pandas as pd

    from tierlab.report import Section

    surge = _sweep(ctx, "s4")
    sizes = _sweep(ctx, "s4-dram").assign(server=HEAD)
    spec = _sweep(ctx, "s4-specweb")
    lat = _sweep(ctx, "s4-latency").copy()
    lat["lat_us"] = lat["techs.SECONDARY"].map(_latency_us)

    head = lat[lat["server"] == HEAD]
    tol = (
        tolerance_us(list(head["lat_us"]), list(head["throughput_bytes_per_s"]))
        if len(head) > 1
        else math.nan
    )
    dram = _row(surge, DRAM_ONLY, HEAD)
    flash = _row(surge, FLASH, HEAD)
    area_dram = _num(dram, "tiers.0.area_cm2")
    area_flash = _num(flash, "tiers.0.area_cm2") + _num(flash, "tiers.1.area_cm2")
    secs = _num(flash, "time.elapsed_ns") / 1e9
    accesses = (_num(flash, "tiers.1.reads") + _num(flash, "tiers.1.writes")) / secs
    power = power_reduction(dram, flash)
    counts, _ = web_files()
    figures = [
        Figure(
            "throughput_ratio_surge",
            "SURGE: throughput of 128 MiB DRAM + 1 GiB flash over 1 GiB DRAM, 8 cores",
            PAPER["throughput_ratio"],
            _ratio(surge, HEAD),
            "ratio",
            (0.95, 1.05),
        ),
        Figure(
            "throughput_ratio_specweb",
            "SPECweb99: throughput of 128 MiB DRAM + 1 GiB flash over 1 GiB DRAM, 8 cores",
            PAPER["throughput_ratio"],
            _ratio(spec, HEAD),
            "ratio",
            (0.95, 1.05),
        ),
        Figure(
            "latency_tolerance_us_surge",
            "largest secondary-cache latency keeping throughput within 5% of DRAM's, 8 cores",
            PAPER["latency_tolerance_us"],
            tol,
            "us",
            (100.0, None),
        ),
        Figure(
            "power_reduction_vs_powerdown",
            "memory power of 1 GiB DRAM with oracle power-down over 128 MiB DRAM + 1 GiB flash",
            PAPER["power_reduction_vs_powerdown"],
            power,
            "ratio",
            (2.5, None),
        ),
        Figure(
            "area_reduction",
            "die area saved by 128 MiB DRAM + 1 GiB flash against 1 GiB DRAM",
            PAPER["area_reduction"],
            1 - area_flash / area_dram if area_dram > 0 else math.nan,
            "fraction",
            (0.30, 0.50),
        ),
        Figure(
            "flash_accesses_per_s",
            "flash reads + writes (4 KiB pages) per simulated second, SURGE, 8 cores",
            PAPER["flash_accesses_per_s"],
            accesses,
            "per s",
            (1.0, 2000.0),
        ),
        Figure(
            "flash_hit_ratio",
            "FCHT hits: the flash tier's hits over its lookups (pages DRAM missed), SURGE, "
            "8 cores (paper: more than 99%)",
            PAPER["flash_hit_ratio"],
            1 - _num(flash, "tiers.1.miss_ratio"),
            "fraction",
            (0.99, 1.0),
        ),
        Figure(
            "flash_lifetime_years_1e6",
            "lifetime of the 1 GiB flash at 10^6 cycles at the measured write rate",
            PAPER["flash_lifetime_years_1e6"],
            _num(flash, "tiers.1.lifetime_years"),
            "years",
            (30.0, None),
        ),
        Figure(
            "top20_request_share",
            "share of SURGE's file requests that go to its 20% most requested files "
            "(Fig. 2b: 90%), unbanded",
            FIG2B[1],
            top_share(counts),
            "fraction",
        ),
        Figure(
            "head_request_share",
            "share of SURGE's file requests that go to its most requested file "
            "(5.1.2: a ~16 KB page asked 50% of the time), unbanded",
            0.5,
            float(counts.max() / counts.sum()) if counts.sum() else math.nan,
            "fraction",
        ),
        Figure(
            "wear_spread",
            "standard deviation of erases per erase block (paper: small)",
            None,
            _num(flash, "tiers.1.wear_spread.std"),
            "erases",
        ),
        Figure(
            "hot_set_swaps",
            "wear-levelling set swaps in the measured run",
            PAPER["hot_set_swaps"],
            _num(flash, "tiers.1.hot_set_swaps"),
            "swaps",
        ),
    ]
    cores_tab = pd.DataFrame(
        [
            {
                "cores": c,
                "SURGE ratio": round(_ratio(surge, c), 3),
                "SPECweb99 ratio": round(_ratio(spec, c), 3),
                "latency tolerance (us)": round(
                    tolerance_us(
                        list(lat[lat["server"] == c]["lat_us"]),
                        list(lat[lat["server"] == c]["throughput_bytes_per_s"]),
                    ),
                    1,
                )
                if (lat["server"] == c).sum() > 1
                else math.nan,
            }
            for c in CORES
        ]
    )
    wear = pd.DataFrame(
        [
            {
                "workload": wl,
                "flash reads/s": round(_num(r, "tiers.1.reads") / s, 1),
                "flash writes/s": round(_num(r, "tiers.1.writes") / s, 1),
                "erases/s (32 KiB blocks)": round(_num(r, "tiers.1.erases") / s, 2),
                "erase share of the run": round(
                    _num(r, "tiers.1.erases") * ERASE_NS / (s * 1e9), 3
                ),
                "lifetime at 1e6 cycles (years)": round(_num(r, "tiers.1.lifetime_years"), 2),
                "wear std": round(_num(r, "tiers.1.wear_spread.std"), 3),
                "wear max/mean": round(_num(r, "tiers.1.wear_spread.max_over_mean"), 3),
                "hot-block evictions": _num(r, "tiers.1.hot_block_evictions"),
                "set swaps": _num(r, "tiers.1.hot_set_swaps"),
            }
            for wl, r, s in (
                ("SURGE", flash, secs),
                (
                    "SPECweb99",
                    _row(spec, FLASH, HEAD),
                    _num(_row(spec, FLASH, HEAD), "time.elapsed_ns") / 1e9,
                ),
            )
            if r is not None
        ]
    )
    power_rows = []
    for wl, d in (("SURGE", surge), ("SPECweb99", spec)):
        for tier, memory in (
            (DRAM_ONLY, "1 GiB DRAM, oracle power-down"),
            (FLASH, "128 MiB DRAM + 1 GiB flash"),
        ):
            r = _row(d, tier, HEAD)
            for i, name in enumerate(("dram", "flash")):
                if r is None or math.isnan(_num(r, f"tiers.{i}.hits")):
                    continue
                power_rows.append(
                    {
                        "workload": wl,
                        "memory": memory,
                        "tier": name,
                        "power (W)": round(_num(r, f"tiers.{i}.power_w"), 4),
                        "active share": round(_num(r, f"tiers.{i}.active_share"), 4),
                    }
                )
    power_tab = pd.DataFrame(power_rows)
    lat_tab = (
        lat.assign(Gbit_s=lat["throughput_bytes_per_s"] * 8 / 1e9)
        .pivot_table(index="lat_us", columns="server", values="Gbit_s")
        .reindex(columns=[c for c in CORES if c in set(lat["server"])])
        .round(3)
        .reset_index()
        .rename(columns={"lat_us": "secondary latency (us)"})
    )
    sections = [
        Section(
            "S4: throughput, 4, 8 and 12 cores",
            "Network throughput (bytes sent per simulated second, after the warm-up pass) "
            "of each memory, and the station that bounds it.",
            tables=[
                ("Flash against DRAM alone, by cores", cores_tab),
                (
                    "Throughput by memory and cores",
                    pd.concat(
                        [
                            _throughput_table(
                                pd.concat([surge, sizes], ignore_index=True), "SURGE"
                            ),
                            _throughput_table(spec, "SPECweb99"),
                        ],
                        ignore_index=True,
                    ),
                ),
            ],
            figures=[_fig5(pd.concat([surge, sizes], ignore_index=True))],
        ),
        Section(
            "S4: latency tolerance (Fig. 3)",
            "Throughput (Gbit/s) against the secondary cache's latency, 128 MiB DRAM over "
            "1 GiB of a memory that differs from DRAM only in latency.",
            tables=[("Throughput (Gbit/s) by secondary latency and cores", lat_tab)],
            figures=[_fig3(lat)],
        ),
        Section(
            "S4: flash accesses, lifetime and wear (8 cores)",
            "Rates per simulated second of the counted pass; erases of 32 KiB erase blocks; "
            "lifetime = 10^6 cycles x 1 GiB / bytes programmed per second.",
            tables=[("Flash wear", wear)],
        ),
        Section(
            "S4: memory power (8 cores)",
            "Average power of each memory tier over the counted pass (docs/device.md): "
            "background power per Gbit by state (S4 Table 1) plus the flash's access "
            "energy; the disk is not memory.",
            tables=[("Memory power by tier", power_tab)],
        ),
    ]
    notes = []
    if flash is not None and dram is not None:
        erase_share = _num(flash, "tiers.1.erases") * ERASE_NS / (secs * 1e9)
        notes.append(
            f"Measured bounds (SURGE, 8 cores): with 1 GiB of DRAM alone the disk is "
            f"{_num(dram, 'time.stations.3.utilization'):.0%} busy; with 128 MiB DRAM + "
            f"1 GiB flash the flash is {_num(flash, 'time.stations.3.utilization'):.0%} busy "
            f"and the CPUs {_num(flash, 'time.stations.0.utilization'):.0%}: the one 50 MB/s "
            f"flash interface bounds throughput. Its erases (1.5 ms each, on the flash's "
            f"channel) take {erase_share:.0%} of the run."
        )
    if math.isnan(power):
        notes.append(
            "power_reduction_vs_powerdown needs per-tier power with an oracle DRAM "
            "power-down, which this build's results do not carry yet: n/a."
        )
    return Outcome(figures, sections, tuple(notes))


def _latency_us(label: Any) -> float:
    """The secondary latency of a point of s4-latency: its axis label, in us."""
    return float(label)


def power_reduction(dram: pd.Series | None, flash: pd.Series | None) -> float:
    """Memory power of 1 GiB DRAM with oracle power-down over that of 128 MiB
    DRAM + 1 GiB flash, from the runs' per-tier average power (``power_w``,
    after warm-up); NaN when the results carry no power figures."""
    d = _num(dram, "tiers.0.power_w")
    f = _num(flash, "tiers.0.power_w") + _num(flash, "tiers.1.power_w")
    return d / f if f > 0 else math.nan


SYSTEM = System(
    "s4",
    '"FlashCache: A NAND Flash Memory File Cache for Low Power Web Servers", '
    "Kgil and Mudge, CASES 2006",
    ("s4", "s4-dram", "s4-specweb", "s4-latency"),
    run,
    (
        "The one 50 MB/s flash part S4's Table 3 describes serves a 4 KiB page read in "
        "107 us (25 us + 82 us of transfer), about 9,300 reads a second at most; "
        "tierlab's closed loop needs the flash for every DRAM miss, and with 128 MiB of "
        "DRAM about half of the SURGE-like load's pages miss, so the flash saturates and "
        "throughput falls below DRAM's. S4 reports its flash cache hit more than 99% of "
        "the time and read fewer than 2,000 times a second: its load reached the flash "
        "and the disk far less than the generator's Zipf(1) popularity over SURGE file "
        "sizes (a Pareto tail to 64 MiB) does here.",
        "The CPU demand per page (32.8 us: 8 cycles per byte of TCP) leaves out Apache's "
        "per-request work, for which S4 gives no figure; a larger demand would lower "
        "absolute throughput and the flash's load with it, raising the ratio.",
        "The same locality sets the flash's write rate (its misses fill it from disk), "
        "hence the lifetime: a flash miss ratio of ~0.17 against S4's < 0.01.",
        "Memory power follows the flash's load: a flash busy all the time draws Table 1's "
        "active 27 mW per Gbit, as much as 1 GiB of DRAM in oracle power-down with its "
        "accesses; S4's flash, read fewer than 2,000 times a second, idled at 6 uW per Gbit.",
        "Die area uses S4 Table 1's densities (DDR2 0.7, NAND 1.42 Gbit/cm^2), "
        "whole parts with their periphery.",
    ),
)
