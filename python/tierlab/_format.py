"""Terminal rendering (rich). Imported only when a table is printed, so that
``tierlab run --json`` starts fast."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.table import Table


def console(stderr: bool = False) -> Console:
    return Console(stderr=stderr, highlight=False)


def human_bytes(n: float) -> str:
    """A byte count as the engine writes it (rates may be fractional: they
    are rounded to whole bytes first)."""
    from tierlab import _core

    return _core.human_bytes(max(0, round(n)))


def human_ns(ns: float) -> str:
    for unit, f in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ns >= f:
            return f"{ns / f:.4g} {unit}"
    return f"{ns:.4g} ns"


def _cap(t: dict[str, Any], unit: bool) -> str:
    return f"{t['capacity']:,} obj" if unit else human_bytes(t["capacity"])


def _usd(v: float | None) -> str:
    """A price, or "-" when the catalog has none (or capacity counts objects)."""
    return "-" if v is None else f"${v:,.4g}"


def _area(r: dict[str, Any]) -> str:
    """Die area; "(cells)" when it is the cell array only (from F^2 and the
    feature size: no periphery), "-" when unknown."""
    a = r.get("area_cm2")
    if a is None:
        return "-"
    cells = " (cells)" if r.get("area_basis") == "cell-area" else ""
    return f"{a:.4g} cm²{cells}"


def print_run(s: dict[str, Any]) -> None:
    """One column per tier (fastest first) and the backing store, one row per
    figure: fits a terminal whatever the number of counters."""
    c = console()
    unit = bool(s["unit_size"])
    tiers = s["tiers"]
    b = s["backing"]
    t = Table(title=f"tierlab {s['version']}: {s['workload']}", title_justify="left")
    t.add_column("")
    for r in tiers:
        t.add_column(r["name"], justify="right")
    t.add_column("backing", justify="right")

    def row(label: str, fmt: Any, backing: str = "") -> None:
        t.add_row(label, *[fmt(r) for r in tiers], backing)

    row("tech", lambda r: r["tech"], b["tech"])
    row("policy", lambda r: r["policy"])
    row("admission", lambda r: r["admission"])
    row("capacity", lambda r: _cap(r, unit))
    row("write policy", lambda r: r["write"])
    row("hits", lambda r: f"{r['hits']:,}")
    row("misses", lambda r: f"{r['misses']:,}")
    row("miss ratio", lambda r: f"{r['miss_ratio']:.4f}")
    row("byte miss ratio", lambda r: f"{r['byte_miss_ratio']:.4f}")
    row("reads", lambda r: f"{r['reads']:,}", f"{b['reads']:,}")
    row("writes", lambda r: f"{r['writes']:,}", f"{b['writes']:,}")
    row("refused (too large)", lambda r: f"{r['rejected']:,}")
    row("refused (admission)", lambda r: f"{r['rejected_admission']:,}")
    row("evictions", lambda r: f"{r['evictions']:,}")
    row("write-backs", lambda r: f"{r['writebacks']:,}")
    row("promotions", lambda r: f"{r['promotions']:,}")
    row("demotions", lambda r: f"{r['demotions']:,}")
    row("bytes in", lambda r: human_bytes(r["bytes_in"]), human_bytes(b["bytes_written"]))
    row("bytes out", lambda r: human_bytes(r["bytes_out"]), human_bytes(b["bytes_read"]))
    c.print(t)
    c.print(
        f"{s['fill']} hierarchy; requests {s['requests']:,} (reads {s['reads']:,}, "
        f"writes {s['writes']:,}, deletes {s['deletes']:,})"
    )
    c.print(
        f"miss ratio {s['miss_ratio']:.6f}  byte miss ratio {s['byte_miss_ratio']:.6f}  "
        f"AMAT {human_ns(s['amat_ns'])}"
    )
    c.print(
        f"simulated time {human_ns(s['total_time_ns'])}  throughput "
        f"{s['throughput_rps']:,.0f} req/s, {human_bytes(s['throughput_bytes_per_s'])}/s"
    )
    print_device(c, s)
    if s.get("time"):
        print_time(s["time"])
    if s.get("vm"):
        print_vm(console(), s["vm"], s.get("processes") or [])
    if s.get("tiered"):
        from tierlab._format_tiered import print_tiered

        print_tiered(console(), s["tiered"])
    # The run's `memorage` object (top level; inside `vm` if the engine puts it there).
    m = s.get("memorage") or (s.get("vm") or {}).get("memorage")
    if m:
        print_memorage(console(), m)


def _scaled(x: float | None, unit: str, prefixes: str) -> str:
    """``x`` in ``unit`` with the largest of ``prefixes`` (from none down,
    by thousands) that keeps it at least 1; "-" when unknown."""
    if x is None:
        return "-"
    if x == 0:
        return f"0 {unit}"
    f = 1.0
    for p in ("", *prefixes[:-1]):
        if abs(x) >= f:
            return f"{x / f:.4g} {p}{unit}"
        f /= 1000
    return f"{x / f:.4g} {prefixes[-1]}{unit}"


def joules(j: float | None) -> str:
    """Energy in J (mJ, µJ, nJ below 1 J); "-" when unknown."""
    return _scaled(j, "J", "mµn")


def watts(w: float | None) -> str:
    """Power in W (mW, µW below 1 W); "-" when unknown."""
    return _scaled(w, "W", "mµ")


#: Lifetimes beyond this many years print as "> 1,000 y": DRAM's rated
#: endurance (about 1e16 writes) gave "2.092e+10 y", a figure no reader
#: needs to the digit (--json has it).
LONG_LIFE_YEARS = 1000.0


def years(y: float | None) -> str:
    if y is None:
        return "-"
    if y == float("inf"):
        return "never"
    return f"> {LONG_LIFE_YEARS:,.0f} y" if y > LONG_LIFE_YEARS else f"{y:,.4g} y"


def cost_cell(r: dict[str, Any]) -> str:
    """A tier's cost with the year its price is from (prices of
    different years are not comparable)."""
    usd = _usd(r.get("cost_usd"))
    year = r.get("price_year")
    return usd if year is None else f"{usd} ({year})"


def _spread(r: dict[str, Any]) -> str:
    w = r.get("wear_spread")
    return "-" if w is None else f"{w['std']:.3g} ({w['max_over_mean']:.3g}x)"


def _energy_part(part: str) -> Callable[[dict[str, Any]], str]:
    return lambda r: joules((r.get("energy") or {}).get(part))


def print_device(c: Console, s: dict[str, Any]) -> None:
    """What each device wears, draws and costs (docs/device.md): a second
    table under the counters, same columns, so both fit 100 columns."""
    tiers = s["tiers"]
    b = s["backing"]
    t = Table(title="device: wear, energy (after warm-up), area, cost", title_justify="left")
    t.add_column("")
    for r in tiers:
        t.add_column(r["name"], justify="right")
    t.add_column("backing", justify="right")

    def row(label: str, fmt: Callable[[dict[str, Any]], str], backing: bool = False) -> None:
        t.add_row(label, *[fmt(r) for r in tiers], fmt(b) if backing else "")

    unknown = s.get("energy_unknown") or []
    # Multilevel memory with several nodes has its memory's energy: its
    # nodes' (docs/tiered-memory.md#outputs).
    nodes = (s.get("tiered") or {}).get("nodes", [])
    vm = s.get("vm") is not None and len(nodes) < 2
    # With several nodes the memory tier's unknown parts are named by node
    # (`dram.read`): the memory is unknown when any of its nodes is.
    node_names = {n.get("name") for n in nodes} if len(nodes) >= 2 else set()

    def whole(r: dict[str, Any], fmt: Callable[[float | None], str], key: str) -> str:
        # A device with a part the catalog lacks (DRAM's background power)
        # has no total: its known parts are not its energy or its power.
        names = {"backing"} if r is b else {r.get("name")} | node_names
        if (vm and r is not b) or any(u.split(".", 1)[0] in names for u in unknown):
            return "unknown"
        return fmt(r.get(key))

    row("erases", lambda r: "-" if r.get("erases") is None else f"{r['erases']:,}")
    row("wear spread (max/mean)", _spread)
    row("lifetime", lambda r: years(r.get("lifetime_years")))
    if any(r.get("ftl") for r in [*tiers, b]):
        _ftl_rows(row)
    row("area", _area)
    row("cost", cost_cell)
    row("cost per usable Gbit", lambda r: _usd(r.get("cost_per_usable_gbit")))
    # A paging run does not track its memory's device time yet: "-", not
    # "0 ns" (the swap device's is counted).
    row(
        "busy",
        lambda r: "-" if vm and r is not b else human_ns(r.get("device_busy_ns") or 0.0),
        True,
    )
    row("power-down", lambda r: r.get("power_down") or "none", True)
    row("energy: reads", _energy_part("read_j"), True)
    row("energy: writes", _energy_part("write_j"), True)
    row("energy: erases", _energy_part("erase_j"), True)
    row("energy: active", _energy_part("active_j"), True)
    row("energy: idle", _energy_part("idle_j"), True)
    row("energy: power-down", _energy_part("powerdown_j"), True)
    row("energy", lambda r: whole(r, joules, "energy_j"), True)
    row("power", lambda r: whole(r, watts, "power_w"), True)
    c.print(t)
    money = s.get("cost")
    if money:
        c.print(
            f"cost in {money['year']} prices: tiers {_usd(money['total_usd'])}, "
            f"{money['throughput_rps_per_usd']:,.4g} req/s per US$, "
            f"{_usd(money['usd_per_million_rps'])} per million req/s"
        )
    if vm:
        # The paging run tracks no busy time for its memory yet (docs/vm.md).
        c.print(
            "energy unknown, power unknown: paging runs (\\[vm]) compute no energy for "
            f"the memory yet (the swap device: {joules(b.get('energy_j'))})"
        )
    elif unknown:
        c.print(
            "energy unknown, power unknown: no catalog figure for "
            + ", ".join(unknown)
            + f" (the known parts: {joules(s.get('energy_j'))}, {watts(s.get('power_w'))})"
        )
    else:
        c.print(f"energy {joules(s.get('energy_j'))}, power {watts(s.get('power_w'))}")


def _ftl_rows(row: Callable[..., None]) -> None:
    """A flash tier's or backing store's FTL figures
    (docs/device.md#flash-translation-layer): blank for devices without one."""

    def of(fmt: Callable[[dict[str, Any]], str]) -> Callable[[dict[str, Any]], str]:
        return lambda r: fmt(r["ftl"]) if r.get("ftl") else ""

    row("FTL write amplification", of(lambda f: f"{f['write_amplification']:.3f}"), True)
    row("FTL GC pages copied", of(lambda f: f"{f['gc_pages_written']:,}"), True)
    row(
        "FTL erases/block mean/max",
        of(lambda f: f"{f['erases_per_block_mean']:.3g}/{f['erases_per_block_max']:,}"),
        True,
    )
    row("lifetime, first block worn", of(lambda f: years(f.get("first_worn_years"))), True)
    row(
        "lifetime, levelled, with WA",
        of(lambda f: years(f.get("perfect_levelling_years"))),
        True,
    )


#: Per-client rows printed; the rest are summed up in one line (`--json`
#: has them all).
CLIENT_ROWS = 16


def print_time(tm: dict[str, Any]) -> None:
    """The time model's figures: load, throughput, latency percentiles, where
    the time went, each station's load, and the clients."""
    c = console()
    clients = f", {tm['clients']:,} clients" if tm.get("clients") is not None else ""
    c.print(
        f"time model: {tm['load']} load{clients}; {tm['completed']:,} requests "
        f"in {human_ns(tm['elapsed_ns'])}"
    )
    if tm["warmup_requests"]:
        c.print(
            f"warm-up (not counted): {tm['warmup_requests']:,} requests, "
            f"{human_ns(tm['warmup_ns'])}"
        )
    c.print(
        f"throughput {tm['throughput_rps']:,.0f} req/s, "
        f"{human_bytes(tm['throughput_bytes_per_s'])}/s; "
        f"mean in system {tm['mean_in_system']:.3g}"
    )
    lat = tm["latency_ns"]
    # Two lines: six figures in one do not fit 80 columns.
    for head, keys in (
        ("latency", ("mean", "p50", "p90")),
        ("tail latency", ("p99", "p999", "max")),
    ):
        c.print(head + " " + "  ".join(f"{k} {human_ns(lat[k])}" for k in keys))
    total = tm["stack_ns"] + tm["queue_ns"] + tm["service_ns"]

    def share(x: float) -> str:
        return f"{human_ns(x)} ({100 * x / total:.0f}%)" if total > 0 else human_ns(x)

    c.print(
        f"per request: stack {share(tm['stack_ns'])}  queue {share(tm['queue_ns'])}  "
        f"service {share(tm['service_ns'])}"
    )
    if tm["background_ops"] or tm["blocked_writes"]:
        c.print(
            f"background device operations {tm['background_ops']:,}; "
            f"writes blocked on a full buffer {tm['blocked_writes']:,}"
        )
    t = Table(title="stations (queue and service: mean per request)", title_justify="left")
    for col in ("station", "servers", "utilization", "mean queue", "ops", "queue", "service"):
        t.add_column(col, justify="left" if col == "station" else "right")
    for st in tm["stations"]:
        u = st["utilization"]
        t.add_row(
            st["name"], "unlimited" if st["servers"] is None else f"{st['servers']:,}",
            "" if u is None else f"{u:.3f}", f"{st['mean_queue']:.3g}", f"{st['ops']:,}",
            human_ns(st["queue_ns"]), human_ns(st["service_ns"]),
        )  # fmt: skip
    c.print(t)
    per = tm.get("per_client") or []
    if len(per) > 1:
        t = Table(title="clients", title_justify="left")
        for col in ("client", "requests", "mean latency", "req/s"):
            t.add_column(col, justify="right")
        for r in per[:CLIENT_ROWS]:
            t.add_row(
                str(r["client"]), f"{r['requests']:,}", human_ns(r["mean_latency_ns"]),
                f"{r['throughput_rps']:,.0f}",
            )  # fmt: skip
        c.print(t)
        if len(per) > CLIENT_ROWS:
            rest = per[CLIENT_ROWS:]
            n = sum(r["requests"] for r in rest)
            lat_sum = sum(r["mean_latency_ns"] * r["requests"] for r in rest)
            c.print(
                f"+ {len(rest):,} more clients (--json has each): {n:,} requests, "
                f"{human_ns(lat_sum / n if n else 0.0)} mean, "
                f"{sum(r['throughput_rps'] for r in rest):,.0f} req/s"
            )


def print_vm(c: Console, v: dict[str, Any], procs: list[dict[str, Any]]) -> None:
    """The translation and fault lines of a [vm] run, and a row per process."""
    c.print(
        f"vm: page {human_bytes(v['page_size'])}, {v['frames']:,} frames; "
        f"references {v['references']:,}, translations {v['translations']:,}, "
        f"pages touched {v['pages_touched']:,}"
    )
    c.print(
        f"TLB misses {v['tlb_misses']:,} (ratio {v['tlb_miss_ratio']:.6f}), walks "
        f"{v['walks']:,} ({v['walk_references']:,} memory references)"
    )
    # Adaptive read-ahead only: how many pages read ahead were used.
    used = f", {v['read_ahead_hits']:,} used" if v.get("read_ahead_hits") is not None else ""
    c.print(
        f"faults: minor {v['minor_faults']:,}, major {v['major_faults']:,} "
        f"(rate {v['fault_rate']:.6f}); swap-outs {v['swap_outs']:,}, pages read "
        f"{v['pages_read']:,} ({v['read_ahead_pages']:,} read ahead{used})"
    )
    c.print(
        f"T_addr {human_ns(v['t_addr_ns'])} + T_data {human_ns(v['t_data_ns'])}; "
        f"AMAT {human_ns(v['amat_ns'])}"
    )
    if v.get("kswapd_scans") is not None:
        # [vm.pressure]: what reclaim did (the README promised these lines;
        # only --json had them).
        c.print(
            f"pressure: kswapd passes {v['kswapd_scans']:,} ({v.get('kswapd_pages', 0):,} "
            + (
                f"pages, {human_ns(v['kswapd_cpu_ns'])} of CPU"
                if v.get("kswapd_cpu_ns")
                else "pages"
            )
            + f"), direct reclaims {v.get('direct_reclaims', 0):,} "
            + f"({v.get('direct_reclaim_pages', 0):,} pages); "
            + f"fewest free pages {v.get('min_free_pages', 0):,}"
            + (
                " (watermarks min/low/high " + "/".join(f"{w:,}" for w in v["watermarks"]) + ")"
                if v.get("watermarks")
                else ""
            )
        )
    t = Table(title="processes", title_justify="left")
    for col in ("pid", "references", "runtime", "minor faults", "major faults", "TLB misses"):
        t.add_column(col, justify="right")
    for p in procs:
        t.add_row(
            str(p["pid"]),
            f"{p['references']:,}",
            human_ns(p["runtime_ns"]),
            f"{p['minor_faults']:,}",
            f"{p['major_faults']:,}",
            f"{p['tlb_misses']:,}",
        )
    c.print(t)
    if any(p.get("user_ns") is not None for p in procs):
        print_process_times(c, procs)


def _per_fault(p: dict[str, Any], kind: str) -> str:
    """References per fault; "none" when the process took no such fault
    (the engine then divides by 1)."""
    if not p[f"{kind}_faults"]:
        return "no fault"
    return f"{p[f'references_per_{kind}_fault']:,.1f}"


def print_process_times(c: Console, procs: list[dict[str, Any]]) -> None:
    """A timed ([vm.cpu]) run: each process's wall clock, the shares of it
    in user mode, in the kernel and blocked on the swap device (`--json` has
    the times), and references per major and per minor fault
    (docs/memorage.md)."""
    t = Table(
        title="processes on hardware threads: runtime = user + system + blocked",
        title_justify="left",
    )
    for col in ("pid", "runtime", "user", "system", "blocked", "refs/major", "refs/minor"):
        t.add_column(col, justify="right", no_wrap=True)
    for p in procs:
        run = p["runtime_ns"]

        def share(k: str, p: dict[str, Any] = p, run: float = run) -> str:
            return f"{100 * (p.get(k) or 0.0) / run:.1f}%" if run > 0 else "-"

        t.add_row(
            str(p["pid"]), human_ns(run), share("user_ns"), share("system_ns"),
            share("blocked_ns"), _per_fault(p, "major"), _per_fault(p, "minor"),
        )  # fmt: skip
    c.print(t)


#: The `memorage` object's keys, in print order, with their labels.
MEMORAGE_KEYS = (
    ("borrowed_bytes_max", "borrowed at most"),
    ("borrows", "borrows"),
    ("returns", "returns"),
    ("transfer_ns", "transfer time"),
    ("swap_outs_avoided", "swap-outs avoided"),
)


def print_memorage(c: Console, m: dict[str, Any]) -> None:
    """The Memorage pool of a run with [vm.memorage]: how much memory it
    borrowed from the storage device, how often, and what that saved."""
    parts = []
    for k, label in MEMORAGE_KEYS:
        x = m.get(k)
        if x is None:
            continue
        if k == "borrowed_bytes_max":
            parts.append(f"{label} {human_bytes(x)}")
        elif k == "transfer_ns":
            parts.append(f"{label} {human_ns(x)}")
        else:
            parts.append(f"{label} {x:,}")
    c.print("memorage: " + ", ".join(parts))


def print_techs(techs: list[dict[str, Any]]) -> None:
    """The figures in a table that fits 80 columns, then each entry's source."""
    c = console()
    t = Table(title="technology catalog (tierlab techs --json: every field)", title_justify="left")
    t.add_column("name", no_wrap=True)
    # A burst medium's transfer (bytes per burst / its time) is in the MB/s column.
    for col in ("read", "write", "basis", "erase", "MB/s", "unit", "cycles", "$/Gbit"):
        t.add_column(col, justify="right", no_wrap=True)

    def opt(v: Any, fmt: str = "{}") -> str:
        return "" if v is None else fmt.format(v)

    for x in techs:
        t.add_row(
            x["name"], human_ns(x["read_ns"]), human_ns(x["write_ns"]),
            basis_cell(x), human_ns(x["erase_ns"]) if x.get("erase_ns") else "",
            opt(x.get("bandwidth_mb_s"), "{:g}")
            or f"{x['burst_bytes']}B/{x['burst_ns']:g}ns", f"{x['access_unit']}",
            opt(x.get("endurance"), "{:.0e}"), opt(x.get("price_usd_per_gbit"), "{:g}"),
        )  # fmt: skip
    c.print(t)
    # Energy, power, area and price: the device figures (blank where no
    # source gives one), short enough for 80 columns.
    d = Table(
        title="device figures: energy per read/write/erase (J), power per Gbit "
        "active/idle/power-down (mW), density, cell area at feature size, good "
        "blocks, price year",
        title_justify="left",
    )
    d.add_column("name", no_wrap=True)
    for col in ("J r/w/e", "mW a/i/pd", "Gb/cm²", "F²@nm", "good", "year"):
        d.add_column(col, justify="right", no_wrap=True)

    def joules(pj: float | None) -> str:
        if pj is None:
            return "-"
        for unit, f in (("m", 1e9), ("µ", 1e6), ("n", 1e3), ("p", 1.0)):
            if pj >= f:
                return f"{pj / f:.3g}{unit}"
        return f"{pj * 1e3:.3g}f"

    def join(vs: list[Any], fmt: Callable[[Any], str]) -> str:
        return "" if all(v is None for v in vs) else "/".join(fmt(v) for v in vs)

    for x in techs:
        f2 = x.get("cell_area_f2")
        cell = "" if f2 is None else (f"{f2[0]:g}" if f2[0] == f2[1] else f"{f2[0]:g}-{f2[1]:g}")
        if cell and x.get("feature_nm") is not None:
            cell += f"@{x['feature_nm']:g}"
        energy = [x.get(k) for k in ("energy_read_pj", "energy_write_pj", "energy_erase_pj")]
        power = [x.get(k) for k in ("active_mw_per_gbit", "idle_mw_per_gbit",
                                    "powerdown_mw_per_gbit")]  # fmt: skip
        d.add_row(
            x["name"], join(energy, joules), join(power, lambda v: opt(v, "{:.3g}") or "-"),
            opt(x.get("density_gbit_cm2"), "{:g}"), cell,
            opt(x.get("good_block_fraction"), "{:.2f}"), opt(x.get("price_year")),
        )  # fmt: skip
    c.print(d)
    c.print(
        "latency basis: device = the medium's own access time, loaded = as a load "
        "from the CPU (or a drive's host) sees it (docs/techs.md#latency-basis):"
    )
    for x in techs:
        if x.get("latency_source"):
            c.print(f"  {x['name']}: {x['latency_source']}")
    c.print("sources:")
    for x in techs:
        c.print(f"  {x['name']}: {x['source']}")


def basis_cell(x: dict[str, Any]) -> str:
    """A latency's basis for the catalog table: `device`, `loaded`, or
    `2x DRAM-DDR4` for an entry computed from another."""
    rel = x.get("latency_relative_to")
    if rel:
        return f"{x.get('latency_factor', 1):g}x {rel}"
    return str(x.get("latency_basis") or "-")


def print_stats(name: str, s: dict[str, Any]) -> None:
    c = console()
    t = Table(title=f"trace stats: {name}", title_justify="left", show_header=False)
    t.add_column("what")
    t.add_column("value", justify="right")
    n = max(s["requests"], 1)
    rows = [
        ("requests", f"{s['requests']:,}"),
        ("unique keys", f"{s['unique_keys']:,}"),
        ("footprint", f"{human_bytes(s['footprint_bytes'])} ({s['footprint_bytes']:,} B)"),
        ("bytes requested", human_bytes(s["bytes_requested"])),
        ("object size", f"{s['min_size']:,} .. {s['max_size']:,} B"),
        ("reads", f"{s['reads']:,} ({100 * s['reads'] / n:.1f}%)"),
        ("writes", f"{s['writes']:,} ({100 * s['writes'] / n:.1f}%)"),
        ("deletes", f"{s['deletes']:,} ({100 * s['deletes'] / n:.1f}%)"),
    ]
    for k, v in rows:
        t.add_row(k, v)
    c.print(t)
