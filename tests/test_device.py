"""Area and cost per tier: recomputed by hand from the catalog for a DRAM +
NAND run, shown by `tierlab run`, carried by RunResult.tiers and the sweep
store, and null (not wrong) when capacities count objects."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest
import tierlab
from conftest import Ran
from tierlab.store import flatten

GBIT = 2**30  # bits

DRAM_NAND = """\
[workload]
type = "zipf"
objects = 2000
requests = 20000
object_size = 4096

[[tier]]
name = "dram"
tech = "DRAM-DDR2"
capacity = "{dram}"

[[tier]]
name = "flash"
tech = "NAND-SLC"
capacity = "{flash}"
"""


def _techs(cli: Callable[..., Ran]) -> dict[str, dict[str, object]]:
    r = cli("techs", "--json")
    assert r.code == 0, r.err
    return {t["name"]: t for t in json.loads(r.out)}


def test_area_and_cost_recomputed_from_the_catalog(
    cli: Callable[..., Ran], write_config: Callable[[str], Path]
) -> None:
    cfg = write_config(DRAM_NAND.format(dram="4MiB", flash="32MiB"))
    r = cli("run", cfg, "--json")
    assert r.code == 0, r.err
    tiers = json.loads(r.out)["tiers"]
    techs = _techs(cli)
    for t, cap in zip(tiers, (4 << 20, 32 << 20), strict=True):
        e = techs[t["tech"]]
        gbit = cap * 8 / GBIT
        assert t["capacity"] == cap
        assert t["area_basis"] == "density"
        assert t["area_cm2"] == pytest.approx(gbit / e["density_gbit_cm2"])
        assert t["cost_usd"] == pytest.approx(gbit * e["price_usd_per_gbit"])
        good = e.get("good_block_fraction", 1.0)
        assert t["cost_per_usable_gbit"] == pytest.approx(e["price_usd_per_gbit"] / good)
    # The figures themselves (S4 Table 1, S1's bad blocks): 4 MiB of DDR2 at
    # 0.7 Gbit/cm^2 and $48/Gbit; 32 MiB of NAND at 1.42 Gbit/cm^2, $21/Gbit,
    # 8,032 of 8,192 blocks good.
    dram, flash = tiers
    assert dram["area_cm2"] == pytest.approx((1 / 32) / 0.7)
    assert dram["cost_usd"] == pytest.approx(48 / 32)
    assert dram["cost_per_usable_gbit"] == pytest.approx(48.0)
    assert flash["area_cm2"] == pytest.approx(0.25 / 1.42)
    assert flash["cost_usd"] == pytest.approx(21 / 4)
    assert flash["cost_per_usable_gbit"] == pytest.approx(21 * 8192 / 8032)


def test_run_table_prints_area_and_cost(
    cli: Callable[..., Ran], write_config: Callable[[str], Path]
) -> None:
    cfg = write_config(DRAM_NAND.format(dram="4MiB", flash="32MiB"))
    r = cli("run", cfg)
    assert r.code == 0, r.err
    rows = {line.split("│")[1].strip(): line for line in r.out.splitlines() if line.count("│") > 2}
    assert "0.04464 cm²" in rows["area"]  # 1/32 Gbit at 0.7 Gbit/cm^2
    assert "0.1761 cm²" in rows["area"]  # 1/4 Gbit at 1.42
    assert "$1.5" in rows["cost"] and "$5.25" in rows["cost"]
    assert "$21.42" in rows["cost per usable Gbit"]


def test_unknown_figures_are_null_and_printed_as_dashes(
    cli: Callable[..., Ran], write_config: Callable[[str], Path]
) -> None:
    # PCM-SLC has neither density nor price; its cell area alone (no feature
    # size) gives no area.
    text = DRAM_NAND.format(dram="4MiB", flash="32MiB").replace("NAND-SLC", "PCM-SLC")
    cfg = write_config(text)
    t = json.loads(cli("run", cfg, "--json").out)["tiers"][1]
    assert (t["area_cm2"], t["area_basis"], t["cost_usd"], t["cost_per_usable_gbit"]) == (
        None,
        None,
        None,
        None,
    )
    # With a feature size the cell area gives the cell array's area.
    cfg = write_config(text + "\n[techs.PCM-SLC]\nfeature_nm = 45\n", "f.toml")
    t = json.loads(cli("run", cfg, "--json").out)["tiers"][1]
    assert t["area_basis"] == "cell-area"
    assert t["area_cm2"] == pytest.approx((32 << 20) * 8 * 5 * (45e-7) ** 2)
    out = cli("run", cfg).out
    assert "(cells)" in out


def test_unit_size_gives_no_area_or_cost(
    cli: Callable[..., Ran], write_config: Callable[[str], Path]
) -> None:
    text = DRAM_NAND.format(dram="100", flash="800").replace(
        "object_size = 4096", "unit_size = true"
    )
    cfg = write_config(text)
    r = cli("run", cfg, "--json")
    assert r.code == 0, r.err
    for t in json.loads(r.out)["tiers"]:
        assert t["area_cm2"] is None and t["cost_usd"] is None
        assert t["cost_per_usable_gbit"] is None


def test_dataframe_carries_the_figures(write_config: Callable[[str], Path]) -> None:
    r = tierlab.simulate(write_config(DRAM_NAND.format(dram="4MiB", flash="32MiB")))
    df = r.tiers
    assert df.loc["flash", "cost_usd"] == pytest.approx(21 / 4)
    assert df.loc["dram", "area_basis"] == "density"
    flat = flatten(r.summary)
    assert flat["tiers.1.cost_usd"] == pytest.approx(21 / 4)
    assert flat["tiers.1.area_cm2"] == pytest.approx(0.25 / 1.42)


SWEEP = """\
[experiment]
name = "price"
metrics = ["tiers.0.cost_usd", "tiers.1.cost_usd", "tiers.1.area_cm2"]

[base.workload]
type = "zipf"
objects = 2000
requests = 5000
object_size = 4096

[[base.tier]]
tech = "DRAM-DDR2"
capacity = "4MiB"

[[base.tier]]
tech = "NAND-SLC"
capacity = "32MiB"

[[axis]]
key = "tier[1].tech"
values = ["NAND-SLC", "PCM-SLC"]
"""


def test_sweep_store_keeps_figures_and_unknowns(tmp_path: Path) -> None:
    # Regression: a metric the run gives as null (PCM-SLC has no price)
    # failed the point as an "unknown metric"; it is stored as unknown.
    store = tmp_path / "r.sqlite"
    r = tierlab.sweep(SWEEP, store=store, workers=1)
    assert (r.done, r.failed) == (2, 0)
    df = tierlab.load(store).set_index("tier[1].tech")
    assert df.loc["NAND-SLC", "tiers.1.cost_usd"] == pytest.approx(21 / 4)
    assert df.loc["NAND-SLC", "tiers.1.area_cm2"] == pytest.approx(0.25 / 1.42)
    assert df.loc["PCM-SLC", "tiers.0.cost_usd"] == pytest.approx(48 / 32)
    assert pd.isna(df.loc["PCM-SLC", "tiers.1.cost_usd"])
