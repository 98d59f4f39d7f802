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
from conftest import EXAMPLES, Ran
from tierlab._format import watts
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
    df = tierlab.load(store).set_index("tier.1.tech")
    assert df.loc["NAND-SLC", "tiers.1.cost_usd"] == pytest.approx(21 / 4)
    assert df.loc["NAND-SLC", "tiers.1.area_cm2"] == pytest.approx(0.25 / 1.42)
    assert df.loc["PCM-SLC", "tiers.0.cost_usd"] == pytest.approx(48 / 32)
    assert pd.isna(df.loc["PCM-SLC", "tiers.1.cost_usd"])


# --------------------------------------------------------------------------
# Energy and power (docs/device.md), and every device figure of a run
# --------------------------------------------------------------------------

EXAMPLE = EXAMPLES / "dram-nand-device.toml"
YEAR_S = 365.25 * 86_400
MIB = 1 << 20


def _ns(read: float, size: int, mb_s: float) -> float:
    """The serial charge of one access: latency plus transfer, whole ns
    (docs/hierarchy.md, timing model)."""
    return float(round(read + size * 1e3 / mb_s))


def test_device_figures_recomputed_by_hand(cli: Callable[..., Ran]) -> None:
    # The done-when check: `tierlab run` on a DRAM + NAND config, each tier's
    # wear, lifetime, area, cost, energy and power recomputed from the JSON
    # counters and `tierlab techs --json`.
    r = cli("run", str(EXAMPLE), "--json")
    assert r.code == 0, r.err
    s = json.loads(r.out)
    techs = _techs(cli)
    secs = s["total_time_ns"] / 1e9
    dram, flash = s["tiers"]
    b = s["backing"]
    d, f, h = techs["DRAM-DDR2"], techs["NAND-SLC"], techs["HDD-IDE"]
    assert (dram["tech"], flash["tech"], b["tech"]) == ("DRAM-DDR2", "NAND-SLC", "HDD-IDE")
    # Every access moves one 4 KiB page: the busy time of a serial run is
    # the sum of the charges (no overhead configured).
    for t, e in ((dram, d), (flash, f)):
        per_read = _ns(e["read_ns"], 4096, e["bandwidth_mb_s"])
        per_write = _ns(e["write_ns"], 4096, e["bandwidth_mb_s"])
        assert t["device_busy_ns"] == pytest.approx(t["reads"] * per_read + t["writes"] * per_write)
        unit = e["access_unit"]
        assert t["pages_read"] == t["reads"] * 4096 // unit
        assert t["pages_programmed"] == t["writes"] * 4096 // unit
        assert t["active_share"] == pytest.approx(t["device_busy_ns"] / s["total_time_ns"])
        gbit = t["capacity"] * 8 / GBIT
        assert t["area_cm2"] == pytest.approx(gbit / e["density_gbit_cm2"])
        assert t["cost_usd"] == pytest.approx(gbit * e["price_usd_per_gbit"])
        rate = t["bytes_programmed"] / secs
        assert t["lifetime_years"] == pytest.approx(e["endurance"] * t["capacity"] / rate / YEAR_S)
    hdd = _ns(h["read_ns"], 4096, h["bandwidth_mb_s"])
    assert b["device_busy_ns"] == pytest.approx((b["reads"] + b["writes"]) * hdd)

    # DRAM (S4 Table 1): no per-access energy, so reads and writes are
    # unknown and left out; busy time active, the rest in power-down (oracle).
    gbit = 4 * MIB * 8 / GBIT
    busy = dram["device_busy_ns"] / 1e9
    assert dram["power_down"] == "oracle"
    assert dram["energy_unknown"] == ["read", "write"]
    e = dram["energy"]
    assert (e["read_j"], e["write_j"], e["erase_j"], e["idle_j"]) == (None, None, 0.0, 0.0)
    assert e["active_j"] == pytest.approx(d["active_mw_per_gbit"] * 1e-3 * gbit * busy)
    assert e["powerdown_j"] == pytest.approx(
        d["powerdown_mw_per_gbit"] * 1e-3 * gbit * (secs - busy)
    )
    assert dram["energy_j"] == pytest.approx(e["active_j"] + e["powerdown_j"])
    assert dram["power_w"] == pytest.approx(dram["energy_j"] / secs)
    assert dram["erases"] is None

    # NAND: 10 nJ per page read or programmed, an erase per 128 KiB
    # programmed at its erase energy, active / idle by busy time.
    gbit = 16 * MIB * 8 / GBIT
    busy = flash["device_busy_ns"] / 1e9
    assert flash["erases"] == flash["bytes_programmed"] // f["erase_block_bytes"] > 0
    e = flash["energy"]
    assert e["read_j"] == pytest.approx(flash["pages_read"] * f["energy_read_pj"] * 1e-12)
    assert e["write_j"] == pytest.approx(flash["pages_programmed"] * f["energy_write_pj"] * 1e-12)
    assert e["erase_j"] == pytest.approx(flash["erases"] * f["energy_erase_pj"] * 1e-12)
    assert e["active_j"] == pytest.approx(f["active_mw_per_gbit"] * 1e-3 * gbit * busy)
    assert e["idle_j"] == pytest.approx(f["idle_mw_per_gbit"] * 1e-3 * gbit * (secs - busy))
    assert (e["powerdown_j"], flash["energy_unknown"]) == (0.0, [])
    parts = ("read_j", "write_j", "erase_j", "active_j", "idle_j")
    assert flash["energy_j"] == pytest.approx(sum(e[k] for k in parts))
    assert flash["power_w"] == pytest.approx(flash["energy_j"] / secs)

    # The disk: background power per Gbit of its 160 GB; no access energy.
    gbit = 160e9 * 8 / GBIT
    busy = b["device_busy_ns"] / 1e9
    e = b["energy"]
    assert b["energy_unknown"] == ["read", "write"]
    assert e["active_j"] == pytest.approx(h["active_mw_per_gbit"] * 1e-3 * gbit * busy)
    assert e["idle_j"] == pytest.approx(h["idle_mw_per_gbit"] * 1e-3 * gbit * (secs - busy))

    # The run: the known energies added up, over the counted time.
    total = dram["energy_j"] + flash["energy_j"] + b["energy_j"]
    assert s["energy_j"] == pytest.approx(total)
    assert s["power_w"] == pytest.approx(total / secs)
    assert s["energy_unknown"] == ["dram.read", "dram.write", "backing.read", "backing.write"]


def test_run_table_prints_device_figures(cli: Callable[..., Ran]) -> None:
    r = cli("run", str(EXAMPLE))
    assert r.code == 0, r.err
    s = json.loads(cli("run", str(EXAMPLE), "--json").out)
    rows = {line.split("│")[1].strip(): line for line in r.out.splitlines() if line.count("│") > 2}
    for label in ("erases", "lifetime", "area", "cost", "energy", "power", "energy: active"):
        assert label in rows, label
    dram, flash = s["tiers"]
    assert f"{flash['erases']:,}" in rows["erases"]
    assert f"{flash['lifetime_years']:,.4g} y" in rows["lifetime"]
    assert watts(flash["power_w"]) in rows["power"]
    # Regression (issue 38, item 4): DRAM's read and write energies are not
    # in the catalog, and its known background parts were printed as its
    # power ("0.1177 uW"). A device with an unknown part has no total.
    assert dram["power_w"] is not None and watts(dram["power_w"]) not in rows["power"]
    assert rows["power"].count("unknown") == 2  # DRAM and the backing store
    assert watts(0.0125) == "12.5 mW" and watts(6.175e-4) == "617.5 µW"
    assert "oracle" in rows["power-down"]
    out = " ".join(r.out.split())
    assert (
        "energy unknown, power unknown: no catalog figure for dram.read, dram.write, "
        "backing.read, backing.write (the known parts: "
    ) in out
    # The device table fits 100 columns.
    assert max(len(line) for line in r.out.splitlines()) <= 100


def test_oracle_power_down_against_idle(write_config: Callable[[str], Path]) -> None:
    # The same run without power-down draws the idle power instead: more.
    text = DRAM_NAND.format(dram="4MiB", flash="32MiB")
    plain = tierlab.simulate(write_config(text)).summary["tiers"][0]
    text = text.replace('capacity = "4MiB"', 'capacity = "4MiB"\npower_down = "oracle"')
    oracle = tierlab.simulate(write_config(text, "o.toml")).summary["tiers"][0]
    assert plain["device_busy_ns"] == oracle["device_busy_ns"]
    assert plain["energy"]["powerdown_j"] == 0.0 and plain["energy"]["idle_j"] > 0
    assert oracle["energy"]["idle_j"] == 0.0
    # 18 against 80 mW per Gbit for the idle time (S4 Table 1).
    assert oracle["energy"]["powerdown_j"] == pytest.approx(plain["energy"]["idle_j"] * 18 / 80)


def test_timed_run_uses_the_stations_busy_time(write_config: Callable[[str], Path]) -> None:
    text = DRAM_NAND.format(dram="4MiB", flash="32MiB") + (
        '\nchannels = 4\n\n[load]\ntype = "closed"\nclients = 8\n'
    )
    s = tierlab.simulate(write_config(text)).summary
    elapsed = s["time"]["elapsed_ns"]
    stations = {st["name"]: st for st in s["time"]["stations"]}
    for t in s["tiers"]:
        st = stations[t["name"]]
        assert t["device_busy_ns"] == st["busy_ns"]
        assert t["active_share"] == pytest.approx(st["busy_ns"] / (st["servers"] * elapsed))
        assert t["active_share"] == pytest.approx(st["utilization"])
        assert t["power_w"] == pytest.approx(t["energy_j"] / (elapsed / 1e9))
    assert s["power_w"] == pytest.approx(s["energy_j"] / (elapsed / 1e9))


def test_unknown_energy_is_null_not_zero(write_config: Callable[[str], Path]) -> None:
    # Objects have no size in bits: no background power; PCM-SLC has access
    # energies but no power figures; the default HDD has none at all.
    text = DRAM_NAND.format(dram="100", flash="800").replace(
        "object_size = 4096", "unit_size = true"
    )
    s = tierlab.simulate(write_config(text)).summary
    for t in s["tiers"]:
        assert t["energy"]["background_j"] is None
        assert "background" in t["energy_unknown"]
    assert s["backing"]["energy_j"] is None
    assert s["backing"]["power_w"] is None
    text = DRAM_NAND.format(dram="4MiB", flash="32MiB").replace("NAND-SLC", "PCM-SLC")
    t = tierlab.simulate(write_config(text, "p.toml")).summary["tiers"][1]
    assert t["energy"]["read_j"] > 0 and t["energy"]["active_j"] is None
    assert t["energy_unknown"] == ["background"]
    assert t["energy_j"] == pytest.approx(t["energy"]["read_j"] + t["energy"]["write_j"])


def test_store_and_dataframe_carry_energy(write_config: Callable[[str], Path]) -> None:
    r = tierlab.simulate(str(EXAMPLE))
    df = r.tiers
    assert df.loc["flash", "energy_j"] == pytest.approx(r.summary["tiers"][1]["energy_j"])
    assert df.loc["dram", "power_down"] == "oracle"
    flat = flatten(r.summary)
    for key in ("energy_j", "power_w", "tiers.1.energy.erase_j", "tiers.0.energy.powerdown_j",
                "backing.energy.idle_j", "tiers.1.lifetime_years", "tiers.1.erases"):  # fmt: skip
        assert key in flat, key
    assert flat["tiers.0.energy.read_j"] is None


def test_timeline_carries_energy_per_interval(write_config: Callable[[str], Path]) -> None:
    # Each interval's energy is the devices' known energy over it: in a
    # serial run they add up to the run's (counted after warm-up).
    text = EXAMPLE.read_text().replace("[run]\n", "[run]\ninterval = 5_000\n")
    r = tierlab.simulate(write_config(text, "tl.toml"))
    tl = r.timeline
    assert len(tl) > 3
    assert tl["energy_j"].sum() == pytest.approx(r.summary["energy_j"], rel=1e-9)
    # Power is energy over each interval's simulated time, which adds up to
    # the run's.
    secs = tl["energy_j"] / tl["power_w"]
    assert secs.sum() == pytest.approx(r.summary["total_time_ns"] / 1e9, rel=1e-9)
    # With a time model too, one value per point.
    text = DRAM_NAND.format(dram="4MiB", flash="32MiB") + (
        '\n[load]\ntype = "closed"\nclients = 4\n\n[run]\ninterval = 5_000\n'
    )
    t = tierlab.simulate(write_config(text)).timeline
    assert len(t) > 1
    assert len(t) > 0 and t["energy_j"].notna().all() and (t["power_w"] > 0).all()
