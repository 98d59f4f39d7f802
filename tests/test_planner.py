"""What a capacity planner relies on (issue: answers a planner can trust):
the FTL under a flash tier, its refusals, the latency-basis and
infeasibility warnings, through the real command."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import Ran
from test_bad_input import assert_bad

ROOT = Path(__file__).resolve().parent.parent
FTL = ROOT / "examples" / "flash-ftl.toml"

SMALL = """\
[workload]
type = "zipf"
objects = 4000
requests = 40_000
object_size = "4KiB"
seed = 3
write_ratio = 0.5

[[tier]]
name = "dram"
tech = "{tech0}"
capacity = "5%"
policy = "lru"

[[tier]]
name = "flash"
tech = "{tech1}"
capacity = "8MiB"
policy = "{policy}"
{ftl}
[backing]
tech = "HDD"
"""


def config(tmp_path: Path, **kw: str) -> Path:
    v = {"tech0": "DRAM-DDR3", "tech1": "NAND-SLC", "policy": "lru", "ftl": ""}
    v.update(kw)
    p = tmp_path / "c.toml"
    p.write_text(SMALL.format(**v))
    return p


def test_ftl_example_reports_write_amplification_and_lifetimes(
    tierlab_cmd: Callable[..., Ran],
) -> None:
    r = tierlab_cmd("run", FTL, "--json", "--no-progress")
    assert r.code == 0, r.err
    s = json.loads(r.out)
    f = s["tiers"][1]["ftl"]
    assert f["write_amplification"] >= 1.0
    assert f["host_pages_written"] > 0
    assert f["op"] == 0.07 and f["victim"] == "greedy"
    assert "ftl" not in s["tiers"][0]
    # The levelled lifetime counts the amplified writes: never longer than
    # the tier's own figure without them.
    levelled = f["perfect_levelling_years"]
    assert levelled is not None and levelled > 0
    # The text table shows the FTL rows.
    t = tierlab_cmd("run", FTL, "--no-progress", columns=160)
    assert t.code == 0, t.err
    assert "FTL write amplification" in t.out


def test_more_over_provisioning_amplifies_less(
    tmp_path: Path, tierlab_cmd: Callable[..., Ran]
) -> None:
    was = []
    for op in (0.07, 0.4):
        c = config(tmp_path, ftl=f"ftl = {{ op = {op} }}")
        r = tierlab_cmd("run", c, "--json", "--no-progress")
        assert r.code == 0, r.err
        was.append(json.loads(r.out)["tiers"][1]["ftl"]["write_amplification"])
    assert was[0] > was[1] >= 1.0, was


@pytest.mark.parametrize(
    ("kw", "needles"),
    [
        ({"tech1": "SSD-NVME-TLC", "ftl": "ftl = { op = 0.1 }"}, ["tier[1].ftl", "own FTL"]),
        ({"policy": "flashcache", "ftl": "ftl = { op = 0.1 }"}, ["tier[1].ftl", "flashcache"]),
        ({"tech1": "DRAM-DDR3", "ftl": "ftl = { op = 0.1 }"}, ["tier[1].ftl", "erase blocks"]),
        ({"ftl": "ftl = { op = 0 }"}, ["tier[1].ftl.op", "less than 1"]),
        ({"ftl": "ftl = { op = 1.0 }"}, ["tier[1].ftl.op"]),
        (
            {"ftl": 'ftl = { op = 0.1, page = "4KiB", block = "2KiB" }'},
            ["tier[1].ftl.block", "smaller than a page"],
        ),
        ({"ftl": "ftl = { op = 0.1, colour = 1 }"}, ["colour"]),
        # 131,072 one-byte pages to a block: a list per valid count each.
        ({"ftl": 'ftl = { op = 0.1, page = "1B" }'}, ["tier[1].ftl.block", "per erase block"]),
    ],
)
def test_bad_ftl_keys_exit_2_with_the_key_path(
    tmp_path: Path, tierlab_cmd: Callable[..., Ran], kw: dict[str, str], needles: list[str]
) -> None:
    r = tierlab_cmd("run", config(tmp_path, **kw), "--no-progress")
    assert_bad(r, *needles)


def test_an_ftl_larger_than_its_tables_exits_2_naming_the_capacity(
    tmp_path: Path, tierlab_cmd: Callable[..., Ran]
) -> None:
    # 16 TiB of 2 KiB pages: the map alone asked for 34 GB and aborted.
    c = config(tmp_path, ftl="ftl = { op = 0.1 }")
    r = tierlab_cmd("run", c, "--set", 'tier[1].capacity="16TiB"', "--no-progress")
    assert_bad(r, "tier[1].capacity", "at most 268435456")
    r = tierlab_cmd("run", backing_config(tmp_path, capacity='capacity = "16TiB"'), "--no-progress")
    assert_bad(r, "backing.capacity", "at most 268435456")


def test_mixed_latency_bases_warn(tmp_path: Path, tierlab_cmd: Callable[..., Ran]) -> None:
    r = tierlab_cmd("run", config(tmp_path, tech1="CXL-DRAM"), "--json", "--no-progress")
    assert r.code == 0, r.err
    w = [x for x in json.loads(r.out)["warnings"] if x.startswith("latency bases mixed")]
    assert len(w) == 1 and "DRAM-DDR3" in w[0] and "CXL-DRAM" in w[0], w
    assert "latency bases mixed" in r.err
    # One basis: no warning.
    r = tierlab_cmd(
        "run", config(tmp_path, tech0="DRAM-DDR4", tech1="CXL-DRAM"), "--json", "--no-progress"
    )
    assert not [x for x in json.loads(r.out)["warnings"] if x.startswith("latency bases")]


def test_serial_background_work_beyond_the_run_warns(tierlab_cmd: Callable[..., Ran]) -> None:
    r = tierlab_cmd("run", ROOT / "examples" / "s1-postmark.toml", "--json", "--no-progress")
    assert r.code == 0, r.err
    s = json.loads(r.out)
    w = [x for x in s["warnings"] if x.startswith("device backing")]
    assert len(w) == 1 and "[load]" in w[0], s["warnings"]
    busy = s["backing"]["device_busy_ns"]
    assert busy > s["total_time_ns"]
    assert "device backing" in r.err


def test_gc_occupies_the_flash_device_and_shows_in_the_tail(
    tmp_path: Path, tierlab_cmd: Callable[..., Ran]
) -> None:
    # The same run without the FTL: GC's copies and erases are what adds.
    plain = tmp_path / "plain.toml"
    plain.write_text(
        "\n".join(ln for ln in FTL.read_text().splitlines() if not ln.startswith("ftl = "))
    )
    runs = {}
    for name, cfg in (("ftl", FTL), ("plain", plain)):
        r = tierlab_cmd("run", cfg, "--json", "--no-progress")
        assert r.code == 0, r.err
        runs[name] = json.loads(r.out)
    f = runs["ftl"]["tiers"][1]["ftl"]
    assert f["erases"] > 0 and f["gc_pages_written"] > 0
    assert runs["ftl"]["latency_ns"]["p99"] > runs["plain"]["latency_ns"]["p99"]
    busy = [s["tiers"][1]["device_busy_ns"] for s in (runs["ftl"], runs["plain"])]
    assert busy[0] > busy[1], busy


BACKING = """\
[workload]
type = "zipf"
alpha = 0.8
objects = 4000
requests = 40_000
object_size = "4KiB"
seed = 3
write_ratio = 0.5

[hierarchy]
fill = "exclusive"

[[tier]]
name = "dram"
tech = "DRAM-DDR3"
capacity = "2MiB"
policy = "lru"

[backing]
tech = "{tech}"
{capacity}
{ftl}
{load}
"""


def backing_config(tmp_path: Path, name: str = "b.toml", **kw: str) -> Path:
    v = {
        "tech": "NAND-SLC",
        "capacity": 'capacity = "20MiB"',
        "ftl": "ftl = { op = 0.1 }",
        "load": "",
    }
    v.update(kw)
    p = tmp_path / name
    p.write_text(BACKING.format(**v))
    return p


def test_an_ftl_on_the_backing_store_reports_as_a_tiers_does(
    tmp_path: Path, tierlab_cmd: Callable[..., Ran]
) -> None:
    r = tierlab_cmd("run", backing_config(tmp_path), "--json", "--no-progress")
    assert r.code == 0, r.err
    s = json.loads(r.out)
    f = s["backing"]["ftl"]
    # Only write-backs reach the store: its host pages are its pages written.
    assert f["host_pages_written"] == s["backing"]["pages_written"] > 0
    # The logical space starts full (the store holds the data set), so GC
    # copies from the first erase on: random writes amplify.
    assert f["write_amplification"] > 1.0 and f["gc_pages_written"] > 0
    assert f["erases"] > 0 and f["erases_per_block_max"] >= f["erases_per_block_mean"]
    assert f["perfect_levelling_years"] > 0 and f["first_worn_years"] > 0
    # 20 MiB at op 0.1: the physical space is capacity / (1 - op).
    assert f["physical_bytes"] >= 20 * 2**20 / 0.9
    assert s["backing"]["energy"]["erase_j"] > 0
    # Without the key, the result has no `ftl` (outputs stay as they were).
    r = tierlab_cmd("run", backing_config(tmp_path, ftl=""), "--json", "--no-progress")
    assert r.code == 0, r.err
    assert "ftl" not in json.loads(r.out)["backing"]
    # The text table shows the FTL rows in the backing column.
    t = tierlab_cmd("run", backing_config(tmp_path), "--no-progress", columns=160)
    assert t.code == 0, t.err
    row = next(ln for ln in t.out.splitlines() if "FTL write amplification" in ln)
    assert f"{f['write_amplification']:.3f}" in row


def test_gc_occupies_the_backing_device_under_a_time_model(
    tmp_path: Path, tierlab_cmd: Callable[..., Ran]
) -> None:
    load = '[load]\ntype = "closed"\nclients = 4'
    runs = []
    for name, ftl in (("ftl.toml", "ftl = { op = 0.1 }"), ("plain.toml", "")):
        r = tierlab_cmd(
            "run", backing_config(tmp_path, name, ftl=ftl, load=load), "--json", "--no-progress"
        )
        assert r.code == 0, r.err
        runs.append(json.loads(r.out))
    busy = [s["backing"]["device_busy_ns"] for s in runs]
    assert busy[0] > busy[1], busy
    assert runs[0]["latency_ns"]["p99"] > runs[1]["latency_ns"]["p99"]


@pytest.mark.parametrize(
    ("kw", "needles"),
    [
        ({"tech": "SSD-NVME-TLC"}, ["backing.ftl", "own FTL"]),
        ({"tech": "HDD"}, ["backing.ftl", "erase blocks"]),
        ({"capacity": ""}, ["backing.capacity", "logical space"]),
        ({"ftl": "ftl = { op = 0.1, trim = true }"}, ["backing.ftl.trim"]),
        ({"ftl": "ftl = { op = 1.0 }"}, ["backing.ftl.op", "less than 1"]),
    ],
)
def test_bad_backing_ftl_keys_exit_2_with_the_key_path(
    tmp_path: Path, tierlab_cmd: Callable[..., Ran], kw: dict[str, str], needles: list[str]
) -> None:
    r = tierlab_cmd("run", backing_config(tmp_path, **kw), "--no-progress")
    assert_bad(r, *needles)


def test_a_backing_ftl_is_refused_with_vm(tierlab_cmd: Callable[..., Ran]) -> None:
    r = tierlab_cmd(
        "run", ROOT / "examples" / "vm-paging.toml",
        "--set", 'backing.tech="NAND-SLC"', "--set", 'backing.capacity="1GiB"',
        "--set", "backing.ftl.op=0.1", "--no-progress",
    )  # fmt: skip
    assert_bad(r, "backing.ftl", "[vm]")


def test_a_tier_ftl_is_refused_with_vm(tierlab_cmd: Callable[..., Ran]) -> None:
    # The [vm] run builds its memory tier without an FTL: refused, not ignored.
    r = tierlab_cmd(
        "run", ROOT / "examples" / "vm-paging.toml",
        "--set", 'tier[0].tech="NAND-SLC"', "--set", "tier[0].ftl.op=0.1", "--no-progress",
    )  # fmt: skip
    assert_bad(r, "tier[0].ftl", "[vm]")


def test_the_over_provisioning_report_plots_lifetime_against_cost(
    tmp_path: Path, tierlab_cmd: Callable[..., Ran]
) -> None:
    from tierlab.report import build_sections
    from tierlab.report_lifetime import lifetime_cost_section

    store = tmp_path / "op.sqlite"
    r = tierlab_cmd(
        "sweep", ROOT / "examples" / "sweep-op.toml", "--store", store,
        "--set", "workload.requests=60000", "--no-progress",
    )  # fmt: skip
    assert r.code == 0, r.err
    r = tierlab_cmd("report", store, "-o", tmp_path / "rep")
    assert r.code == 0, r.err
    assert (tmp_path / "rep" / "over-provisioning-lifetime-cost-tier-1.png").stat().st_size > 0
    assert "Lifetime against cost" in (tmp_path / "rep" / "over-provisioning.html").read_text()
    _, df, sections = build_sections(store)
    sec = next(s for s in sections if s.title == "Lifetime against cost")
    (plot,) = sec.figures
    ax = plot.figure.axes[0]
    assert "2006 prices" in ax.get_xlabel()
    lines = {ln.get_label(): ln for ln in ax.get_lines()}
    levelled = lines["perfect levelling"]
    costs, years = list(levelled.get_xdata()), list(levelled.get_ydata())
    # One point per run; more spare flash costs more and lasts longer.
    assert len(costs) == 5
    assert costs == sorted(costs) and years == sorted(years), (costs, years)
    want = df.sort_values("tiers.1.cost_usd")["tiers.1.ftl.perfect_levelling_years"]
    assert years == pytest.approx(list(want))
    assert [t.get_text() for t in ax.texts][0] == "op 0.05"
    # Runs without an FTL have no such section.
    assert (
        lifetime_cost_section(
            df.drop(
                columns=["tiers.1.ftl.perfect_levelling_years", "tiers.1.ftl.first_worn_years"]
            ),
            [],
        )
        is None
    )


@pytest.mark.parametrize(
    ("tech0", "tech1", "year", "needles"),
    [
        # A year no point of the medium covers.
        ("DRAM-DDR4", "NAND-SLC", 1999, ["cost.year", "tier[0]", "no price in 1999", "2023"]),
        # DDR5 and QLC have points for 2025 (and QLC 2018), none for 2023.
        ("DRAM-DDR5", "NAND-SLC", 2023, ["cost.year", "tier[0]", "DRAM-DDR5", "2025"]),
        ("DRAM-DDR4", "NAND-QLC", 2023, ["cost.year", "tier[1]", "NAND-QLC", "2018, 2025"]),
        # A medium with no price at all.
        ("DRAM-DDR4", "SSD-SATA", 2023, ["cost.year", "tier[1]", "SSD-SATA", "has none"]),
    ],
)
def test_a_year_no_price_covers_exits_2_with_the_key_path(
    tmp_path: Path,
    tierlab_cmd: Callable[..., Ran],
    tech0: str,
    tech1: str,
    year: int,
    needles: list[str],
) -> None:
    c = config(tmp_path, tech0=tech0, tech1=tech1)
    c.write_text(c.read_text() + f"\n[cost]\nyear = {year}\n")
    r = tierlab_cmd("run", c, "--no-progress")
    assert_bad(r, *needles)


def test_a_year_with_a_point_prices_ddr5_and_qlc(
    tmp_path: Path, tierlab_cmd: Callable[..., Ran]
) -> None:
    c = config(tmp_path, tech0="DRAM-DDR5", tech1="NAND-QLC")
    c.write_text(c.read_text() + "\n[cost]\nyear = 2025\n")
    r = tierlab_cmd("run", c, "--json", "--no-progress")
    assert r.code == 0, r.err
    s = json.loads(r.out)
    assert s["cost"]["year"] == 2025
    # US$6.01 per 16 Gb DDR5 chip; US$69 per 10^12 bytes of QLC drive.
    want = {"DRAM-DDR5": 6.01 / 16, "NAND-QLC": 69 / (1e12 * 8 / 2**30)}
    for t in s["tiers"]:
        assert t["price_year"] == 2025
        gbit = t["capacity"] * 8 / 2**30
        assert t["cost_usd"] == pytest.approx(gbit * want[t["tech"]], rel=1e-4), t
    assert s["cost"]["total_usd"] == pytest.approx(sum(t["cost_usd"] for t in s["tiers"]))
