"""Reports: the files a report writes, for each kind of sweep, and the CLI's
answers to bad input."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import tierlab
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
