"""The report's lifetime-against-cost figure: for each flash tier with a
flash translation layer, its lifetime (write amplification included)
against what the tier costs, one point per run, labelled with the swept
values. A sweep over ``tier[i].ftl.op`` traces the planner's trade: more
spare flash costs more and lasts longer (docs/device.md, the flash
translation layer and the cost basis).

Both lifetimes the run reports are drawn: ``first_worn_years`` (when the
most-erased block wears out at the run's rate) and
``perfect_levelling_years`` (every block erased alike). The cost is the
tier's ``cost_usd``, its physical flash (over-provisioning included) at
the price of the year the run names (``price_year``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from tierlab.plotting import counted, figure, from_zero, param_name, param_value

if TYPE_CHECKING:
    import pandas as pd

    from tierlab.report import Section

_FTL_LIFE = re.compile(r"^tiers\.(\d+)\.ftl\.perfect_levelling_years$")

#: The lifetimes drawn, with their legend labels.
LIFETIMES = (
    ("perfect_levelling_years", "perfect levelling"),
    ("first_worn_years", "first block worn out"),
)


def _label(row: pd.Series, axes: Sequence[str]) -> str:
    # The key's last part names the value ("op 0.1"): the caption names
    # the whole key.
    return ", ".join(
        f"{a.rsplit('.', 1)[-1]} {param_value(a, row[a])}" for a in axes if a in row.index
    )


def _year(d: pd.DataFrame, tier: int) -> str:
    col = f"tiers.{tier}.price_year"
    if col not in d.columns:
        return ""
    years = sorted({int(y) for y in d[col].dropna()})
    return f", {'/'.join(map(str, years))} prices" if years else ""


def lifetime_cost_section(df: pd.DataFrame, axes: Sequence[str]) -> Section | None:
    """Lifetime against cost of each FTL tier, one point per run. None
    unless some tier has an FTL, a cost and a lifetime in two or more
    runs."""
    from tierlab.report import Plot, Section

    d = df[df["status"] == "ok"]
    tiers = sorted(int(m.group(1)) for c in d.columns if (m := _FTL_LIFE.match(str(c))))
    plots = []
    for tier in tiers:
        cost = f"tiers.{tier}.cost_usd"
        if cost not in d.columns:
            continue
        cols = [(f"tiers.{tier}.ftl.{k}", name) for k, name in LIFETIMES]
        cols = [(c, name) for c, name in cols if c in d.columns]
        g = d.dropna(subset=[cost])
        g = g[g[[c for c, _ in cols]].notna().any(axis=1)].sort_values(cost)
        if len(g) < 2:
            continue
        fig, (ax,) = figure(7.0, 4.5)
        xs = g[cost].astype(float)
        for c, name in cols:
            ax.plot(xs, g[c].astype(float), label=name)
        top = g[cols[0][0]].astype(float)
        for (_, row), x, y in zip(g.iterrows(), xs, top, strict=True):
            if axes and y == y:
                ax.annotate(
                    _label(row, axes), (x, y), textcoords="offset points",
                    xytext=(4, 4), fontsize=7,
                )  # fmt: skip
        ax.margins(x=0.1)  # room for the last point's label
        ax.set_xlabel(f"tier {tier} cost (US${_year(g, tier)})")
        ax.set_ylabel("lifetime (years)")
        from_zero(ax)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        swept = ", ".join(param_name(a) for a in axes) if axes else "run"
        plots.append(
            Plot(
                f"lifetime-cost-tier-{tier}",
                fig,
                f"Lifetime of tier {tier}'s flash (write amplification included) against "
                f"its cost, one point per run, labelled by {swept} "
                f"({counted(len(g), 'run')}).",
            )
        )
    if not plots:
        return None
    sec = Section(
        "Lifetime against cost",
        "Each flash tier with an FTL (docs/device.md): its lifetime from the "
        "pages it programmed, garbage collection's copies included, against "
        "its cost at its physical capacity (over-provisioning is flash to buy).",
    )
    sec.figures.extend(plots)
    return sec
