"""Reports: the files a report writes, for each kind of sweep, and the CLI's
answers to bad input."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import tierlab
import tierlab.report
from conftest import Ran
from test_bad_input import assert_bad
from tierlab.report import write_report

PNG = b"\x89PNG\r\n\x1a\n"

SLOWDOWN = """
[experiment]
name = "tiny-s1"
metrics = ["throughput_rps", "miss_ratio", "tiers.0.capacity"]
[base.workload]
type = "zipf"
objects = 400
requests = 4000
object_size = "4KiB"
[[base.tier]]
tech = "FILE-MEMORY"
capacity = "10%"
[base.backing]
tech = "HDD"
[[axis]]
key = "tier[0].slowdown"
values = [1, 2]
[[axis]]
key = "tier[0].capacity"
values = ["20%", "40%", "60%"]
"""

GENERIC = """
[experiment]
name = "tiny-generic"
metrics = ["miss_ratio", "amat_ns"]
[base.workload]
type = "zipf"
objects = 400
requests = 4000
[[base.tier]]
tech = "DRAM-DDR3"
capacity = "10%"
[[axis]]
key = "workload.alpha"
values = [0.6, 1.0]
"""


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("stores")
    out = {}
    for name, text in (("slowdown", SLOWDOWN), ("generic", GENERIC)):
        p = d / f"{name}.sqlite"
        tierlab.sweep(text, store=p, workers=1)
        out[name] = p
    return out


def check_files(html: Path, plots: list[Path]) -> str:
    page = html.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert "<table" in page and "data:image/png;base64," in page
    pngs = [p for p in plots if p.suffix == ".png"]
    svgs = [p for p in plots if p.suffix == ".svg"]
    assert pngs and len(pngs) == len(svgs)
    for p in pngs:
        assert p.read_bytes()[:8] == PNG
    for p in svgs:
        assert b"<svg" in p.read_bytes()[:2000]
    return page


def test_slowdown_report_has_throughput_plot_and_equivalent_capacity(
    stores: dict[str, Path], tmp_path: Path
) -> None:
    r = write_report(stores["slowdown"], tmp_path / "rep")
    page = check_files(r.html, r.plots)
    assert r.html == tmp_path / "rep" / "tiny-s1.html"
    assert any("throughput" in p.name for p in r.plots)
    assert "Equivalent capacity" in page and "slowdown 2" not in page  # legends are in images
    titles = [s.title for s in r.sections]
    assert titles == ["Throughput against capacity, one line per slowdown"]
    # The equivalent-capacity table of the report is the analysis' own.
    summ = dict(r.sections[0].tables)["Equivalent capacity ratio per slowdown (mean, min, max)"]
    assert list(summ["slowdown"]) == [2]


def test_generic_report_plots_each_metric(stores: dict[str, Path], tmp_path: Path) -> None:
    r = write_report(stores["generic"], tmp_path)
    check_files(r.html, r.plots)
    names = sorted(p.name for p in r.plots)
    assert names == [
        "tiny-generic-amat-ns.png", "tiny-generic-amat-ns.svg",
        "tiny-generic-miss-ratio.png", "tiny-generic-miss-ratio.svg",
    ]  # fmt: skip
    page = r.html.read_text(encoding="utf-8")
    # The results table holds every point's axis value.
    assert "<td>0.6</td>" in page.replace(" ", "") or ">0.6<" in page


def test_cli_report(cli: Callable[..., Ran], stores: dict[str, Path], tmp_path: Path) -> None:
    r = cli("report", stores["generic"], "-o", tmp_path / "out")
    assert r.code == 0, r.err
    assert (tmp_path / "out" / "tiny-generic.html").is_file()
    assert "wrote" in r.out


def test_cli_report_bad_input(cli: Callable[..., Ran], tmp_path: Path) -> None:
    assert_bad(cli("report", tmp_path / "missing.sqlite"), "missing.sqlite")
    junk = tmp_path / "junk.sqlite"
    junk.write_text("not a database at all, just text " * 100)
    assert_bad(cli("report", junk), "not a tierlab results store")
    other = tmp_path / "other.sqlite"
    import sqlite3

    with sqlite3.connect(other) as db:
        db.execute("CREATE TABLE t (x)")
    assert_bad(cli("report", other), "not a tierlab results store")


def test_cli_report_into_a_file(
    cli: Callable[..., Ran], stores: dict[str, Path], tmp_path: Path
) -> None:
    """Regression: said only "File exists" (mkdir's error)."""
    f = tmp_path / "file.txt"
    f.write_text("mine")
    assert_bad(cli("report", stores["generic"], "-o", f), str(f), "is a file", "folder")
    assert f.read_text() == "mine"


# --------------------------------------------------------------------------
# The README's flagship sweep (defect 7) and the HTML page's niceties
# --------------------------------------------------------------------------


def cells(page: str) -> list[str]:
    import re

    return re.findall(r"<td>(.*?)</td>", page, flags=re.S)


@pytest.fixture(scope="module")
def flagship(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, tierlab.report.Report]:
    """examples/sweep-slowdown.toml as the README runs it, and its report."""
    from conftest import REPO

    d = tmp_path_factory.mktemp("flagship")
    store = d / "slowdown.sqlite"
    tierlab.sweep(REPO / "examples" / "sweep-slowdown.toml", store=store, workers=1)
    return store, write_report(store, d / "report")


def test_flagship_sweep_report_draws_the_equivalent_capacity_table(
    flagship: tuple[Path, tierlab.report.Report],
) -> None:
    """Regression: the report promised S1 Table II and drew none (the example
    kept no capacity metric), and its five slowdown lines overlapped (286.1 vs
    285.9 req/s behind a disk)."""
    _, r = flagship
    (sec,) = r.sections
    tables = dict(sec.tables)
    summ = tables["Equivalent capacity ratio per slowdown (mean, min, max)"]
    assert list(summ["slowdown"]) == [2, 3, 4, 5]
    # Sane ratios: above 1 (a slower medium needs more of it) and growing with
    # the slowdown, as in S1 Table II.
    assert (summ["n"] >= 4).all(), summ
    means = list(summ["mean"])
    assert all(1.0 < m < 3.0 for m in means), means
    assert means == sorted(means), means
    per_size = tables["Equivalent capacity at each swept capacity"]
    assert "capacity (MiB)" in per_size.columns and "equivalent (MiB)" in per_size.columns
    assert sorted(set(per_size["capacity (MiB)"])) == [32, 64, 96, 128, 160, 192, 224, 256]
    page = r.html.read_text(encoding="utf-8")
    assert "Equivalent capacity ratio per slowdown" in page


def test_flagship_sweep_lines_are_apart_and_sizes_in_mib(
    flagship: tuple[Path, tierlab.report.Report],
) -> None:
    store, r = flagship
    df = tierlab.load(store)
    top = df[df["tier.0.capacity"] == df["tier.0.capacity"].max()]
    tp = top.set_index("tier.0.slowdown")["throughput_rps"]
    # Slowdown 5 loses at least a tenth of slowdown 1's throughput: an effect
    # the plot shows, not two lines drawn over each other.
    assert tp[5] < 0.9 * tp[1], tp
    ax = r.sections[0].figures[0].figure.axes[0]
    assert ax.get_xlabel() == "tier 0 capacity (MiB)"
    assert ax.get_xlim()[1] < 1000  # MiB, not bytes with a 1e8 offset
    assert ax.xaxis.get_offset_text().get_text() == ""


def test_slowdown_sweep_without_capacity_metric_says_what_the_table_needs(
    tmp_path: Path,
) -> None:
    """Regression: the section promised the S1 Table II table it could not
    compute (no capacity in bytes among the kept metrics)."""
    text = SLOWDOWN.replace(', "tiers.0.capacity"]', "]").replace("tiny-s1", "no-cap")
    store = tmp_path / "s.sqlite"
    tierlab.sweep(text, store=store, workers=1)
    r = write_report(store, tmp_path / "rep")
    (sec,) = r.sections
    assert sec.tables == []
    assert "add 'tiers.0.capacity' to the experiment's metrics" in sec.text
    assert "The tables give" not in sec.text


def test_html_has_no_none_or_nan_cells(flagship: tuple[Path, tierlab.report.Report]) -> None:
    """Regression: the error column of ok points showed "None"; undefined
    ratios showed "nan"."""
    page = flagship[1].html.read_text(encoding="utf-8")
    found = [c for c in cells(page) if c.strip().lower() in ("none", "nan", "<na>", "nat")]
    assert not found


def test_html_one_number_format_per_column(flagship: tuple[Path, tierlab.report.Report]) -> None:
    """Regression: a column mixed 4-significant-digit, scientific and
    comma-grouped numbers (286,088.1 beside 2.861e+05)."""
    import re

    page = flagship[1].html.read_text(encoding="utf-8")
    for table in re.findall(r"<table.*?</table>", page, flags=re.S):
        rows = [cells(tr) for tr in re.findall(r"<tr.*?</tr>", table, flags=re.S)]
        rows = [r for r in rows if r]
        assert rows
        for col in zip(*rows, strict=True):
            assert not any("e+" in v or "e-" in v for v in col), col
            nums = [v for v in col if re.fullmatch(r"-?[\d,]+(\.\d+)?", v)]
            decimals = {len(v.split(".")[1]) if "." in v else 0 for v in nums}
            assert len(decimals) <= 1, (decimals, nums[:5])


def test_html_captions_describe_each_figure(flagship: tuple[Path, tierlab.report.Report]) -> None:
    import re

    page = flagship[1].html.read_text(encoding="utf-8")
    caps = re.findall(r"<figcaption>(.*?)</figcaption>", page, flags=re.S)
    assert caps
    for c in caps:
        assert "against" in c and "40 runs" in c, c


def test_html_says_1_point(tmp_path: Path) -> None:
    """Regression: "1 points ok"."""
    text = GENERIC.replace("values = [0.6, 1.0]", "values = [0.6]").replace("tiny-generic", "one")
    store = tmp_path / "one.sqlite"
    tierlab.sweep(text, store=store, workers=1)
    page = write_report(store, tmp_path / "rep").html.read_text(encoding="utf-8")
    assert "1 point ok" in page and "1 points" not in page
    assert "(1 run)" in page


def test_generic_capacity_axis_in_human_units(tmp_path: Path) -> None:
    """A capacity axis is drawn in the runs' bytes in a binary unit, not as
    raw bytes with an offset."""
    text = """
[experiment]
name = "cap"
metrics = ["miss_ratio", "tiers.0.capacity"]
[base.workload]
type = "zipf"
objects = 4000
requests = 20000
object_size = "4KiB"
[[base.tier]]
tech = "DRAM-DDR3"
capacity = "1MiB"
[[axis]]
key = "tier[0].capacity"
values = ["1MiB", "2MiB", "4MiB"]
"""
    store = tmp_path / "cap.sqlite"
    tierlab.sweep(text, store=store, workers=1)
    r = write_report(store, tmp_path / "rep")
    (sec,) = r.sections
    ax = sec.figures[0].figure.axes[0]
    assert ax.get_xlabel() == "tier 0 capacity (MiB)"
    xs = sorted(float(v) for v in ax.get_lines()[0].get_xdata())
    assert xs == [1.0, 2.0, 4.0]
    assert "against tier 0 capacity (MiB)" in sec.figures[0].caption


def test_unit_size_capacity_axis_counts_objects(tmp_path: Path) -> None:
    """With unit_size the runs' capacity counts objects: not drawn as bytes."""
    text = SLOWDOWN.replace('object_size = "4KiB"', "unit_size = true").replace("tiny-s1", "objs")
    store = tmp_path / "objs.sqlite"
    tierlab.sweep(text, store=store, workers=1)
    r = write_report(store, tmp_path / "rep")
    (sec,) = r.sections
    assert sec.figures[0].figure.axes[0].get_xlabel() == "tier 0 capacity (objects)"
    per_size = dict(sec.tables)["Equivalent capacity at each swept capacity"]
    assert "capacity (objects)" in per_size.columns
    assert per_size["capacity (objects)"].max() <= 400


DEVICE = """
[experiment]
name = "device"
[base.workload]
type = "zipf"
objects = 4000
requests = 20000
object_size = "4KiB"
write_ratio = 0.3
[[base.tier]]
name = "dram"
tech = "DRAM-DDR2"
capacity = "1MiB"
power_down = "oracle"
[[base.tier]]
name = "flash"
tech = "NAND-SLC"
capacity = "4MiB"
policy = "flashcache"
[[axis]]
key = "tier[1].capacity"
values = ["4MiB", "8MiB"]
"""


def test_device_report_draws_power_by_state_and_wear(tmp_path: Path) -> None:
    store = tmp_path / "device.sqlite"
    tierlab.sweep(DEVICE, store=store, workers=1)
    r = write_report(store, tmp_path / "rep")
    check_files(r.html, r.plots)
    sec = next(s for s in r.sections if s.title == "Power by device and state")
    power, *wear = sec.figures
    assert power.name == "power-by-state"
    ax = power.figure.axes[0]
    assert ax.get_ylabel() == "power (W)"
    labels = {t.get_text() for t in ax.get_legend().get_texts()}
    assert {"active", "power-down", "idle", "reads", "writes", "erases"} <= labels
    # The bars' tops are the runs' power: per device the parts add up to it.
    df = tierlab.load(store)
    tops = sorted(p.get_y() + p.get_height() for p in ax.patches)
    for i in range(2):
        w = float(df.loc[i, "tiers.1.power_w"])
        assert any(abs(t - w) <= 1e-9 * max(w, 1e-30) for t in tops), (w, tops)
    # Flashcache tiers: a wear histogram, erase blocks by erases.
    assert [p.name for p in wear] == ["wear-histogram-tier-1"]
    assert wear[0].figure.axes[0].get_xlabel() == "erases per erase block"
