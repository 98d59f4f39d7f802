"""The text of a run's `tiered` object: multilevel main memory's nodes,
migrations, overheads and slowdown (docs/tiered-memory.md#outputs)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table


def print_tiered(c: Console, t: dict[str, Any]) -> None:
    """A row per memory node, then the policy's moves and what they cost."""
    from tierlab._format import human_bytes, human_ns

    kernel = f" (Linux {t['kernel']})" if t.get("kernel") else ""
    table = Table(
        title=f"memory nodes: placement {t['placement']}, migration {t['policy']}{kernel}",
        title_justify="left",
    )
    cols = ("node", "tech", "capacity", "accesses", "share", "mean access", "time share")
    for col in cols:
        table.add_column(col, justify="left" if col in ("node", "tech") else "right")
    for n in t["nodes"]:
        table.add_row(
            n["name"], n["tech"], human_bytes(n["capacity"]), f"{n['accesses']:,}",
            f"{100 * n['access_share']:.1f}%", human_ns(n["mean_access_ns"]),
            f"{100 * n['time_share']:.1f}%",
        )  # fmt: skip
    c.print(table)
    # With [vm.cpu] each node is a server of its bandwidth that the
    # processes queue on: how much of the run it was held, and the waits.
    timed = t["nodes"][0].get("wait_ns") is not None
    if timed:
        print_node_bandwidth(c, t)
    print_node_devices(c, t["nodes"])
    c.print(
        f"fast node's share of accesses {100 * t['fast_share_of_accesses']:.1f}% "
        f"(static oracle {100 * t['oracle_fast_share_of_accesses']:.1f}%)"
    )
    c.print(
        f"migrations: {t['promotions']:,} promotions, {t['demotions']:,} demotions, "
        f"{human_bytes(t['migration_bytes'])} moved; ping-pong {t['ping_pong']:,} "
        f"({100 * t['ping_pong_share']:.1f}% of demotions, epoch "
        f"{t['ping_pong_epoch']:,} references)"
    )
    o = t["overhead"]
    parts = [
        f"{label} {human_ns(o[k])}"
        for k, label in (
            ("migrations_ns", "migrations"),
            ("hint_faults_ns", "hint faults"),
            ("samples_ns", "samples"),
            ("scans_ns", "scans"),
        )
        if o[k] > 0
    ]
    uncharged = f"; not charged: {', '.join(t['uncharged'])}" if t["uncharged"] else ""
    c.print(
        f"overhead {human_ns(o['total_ns'])}"
        + (f" ({', '.join(parts)})" if parts else "")
        + uncharged
    )
    how = "a second pass on the same cores" if timed else "same references, same pass"
    c.print(
        f"slowdown {t['slowdown']:.4f}: {human_ns(t['time_ns'])} against "
        f"{human_ns(t['all_fast_time_ns'])} with every page on {t['nodes'][0]['name']} "
        f"({how})"
    )


def print_node_bandwidth(c: Console, t: dict[str, Any]) -> None:
    """[vm.cpu]: each node's bandwidth held by its accesses and the
    migrations' copies, as a share of the run, and the time they waited."""
    from tierlab._format import human_ns

    table = Table(
        title="memory nodes: bandwidth (one server each; processes at once)",
        title_justify="left",
    )
    for col in ("node", "held", "share of run", "waited", "wait per access"):
        table.add_column(col, justify="left" if col == "node" else "right")
    run = t["time_ns"]
    for n in t["nodes"]:
        held, wait = n["bandwidth_busy_ns"], n["wait_ns"]
        table.add_row(
            n["name"], human_ns(held), f"{100 * held / run:.1f}%" if run > 0 else "-",
            human_ns(wait), human_ns(wait / n["accesses"]) if n["accesses"] else "-",
        )  # fmt: skip
    c.print(table)


def print_node_devices(c: Console, nodes: list[dict[str, Any]]) -> None:
    """Each node's energy, wear and cost from the device layer: its
    references', migrations' and fills' work at its medium's figures."""
    from tierlab._format import cost_cell, human_bytes, human_ns, joules, watts, years

    table = Table(title="memory nodes: device", title_justify="left")
    for col in ("node", "busy", "written", "lifetime", "cost", "energy", "power"):
        table.add_column(col, justify="left" if col == "node" else "right")
    for n in nodes:
        table.add_row(
            n["name"], human_ns(n.get("device_busy_ns") or 0.0),
            human_bytes(n.get("bytes_programmed") or 0), years(n.get("lifetime_years")),
            cost_cell(n), joules(n.get("energy_j")), watts(n.get("power_w")),
        )  # fmt: skip
    c.print(table)
    unknown = [
        f"{n['name']} ({', '.join(n['energy_unknown'])})" for n in nodes if n.get("energy_unknown")
    ]
    if unknown:
        c.print("energy parts with no catalog figure (left out): " + "; ".join(unknown))
