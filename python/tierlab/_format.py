"""Terminal rendering (rich). Imported only when a table is printed, so that
``tierlab run --json`` starts fast."""

from __future__ import annotations

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
    if s.get("vm"):
        print_vm(c, s["vm"], s.get("processes") or [])


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
    c.print(
        f"faults: minor {v['minor_faults']:,}, major {v['major_faults']:,} "
        f"(rate {v['fault_rate']:.6f}); swap-outs {v['swap_outs']:,}, pages read "
        f"{v['pages_read']:,} ({v['read_ahead_pages']:,} read ahead)"
    )
    c.print(
        f"T_addr {human_ns(v['t_addr_ns'])} + T_data {human_ns(v['t_data_ns'])}; "
        f"AMAT {human_ns(v['amat_ns'])}"
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


def print_techs(techs: list[dict[str, Any]]) -> None:
    """The figures in a table that fits 80 columns, then each entry's source."""
    c = console()
    t = Table(title="technology catalog (tierlab techs --json: every field)", title_justify="left")
    t.add_column("name", no_wrap=True)
    # A burst medium's transfer (bytes per burst / its time) is in the MB/s column.
    for col in ("read", "write", "erase", "MB/s", "unit", "cycles", "$/Gbit"):
        t.add_column(col, justify="right", no_wrap=True)

    def opt(v: Any, fmt: str = "{}") -> str:
        return "" if v is None else fmt.format(v)

    for x in techs:
        t.add_row(
            x["name"], human_ns(x["read_ns"]), human_ns(x["write_ns"]),
            human_ns(x["erase_ns"]) if x.get("erase_ns") else "",
            opt(x.get("bandwidth_mb_s"), "{:g}")
            or f"{x['burst_bytes']}B/{x['burst_ns']:g}ns", f"{x['access_unit']}",
            opt(x.get("endurance"), "{:.0e}"), opt(x.get("price_usd_per_gbit"), "{:g}"),
        )  # fmt: skip
    c.print(t)
    c.print("sources:")
    for x in techs:
        c.print(f"  {x['name']}: {x['source']}")


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
