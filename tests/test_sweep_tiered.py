"""The tiered-memory sweep (examples/sweep-tiered.toml, issue 40 item 7):
the fast node's share against the migration policy on a moving hot set and
a captured program, its store columns, and its report figure (slowdown
against the fast share, one line per policy, the oracles dashed) and table.

The experiment runs here at a small scale: the example's axes with three
shares and a short hot set, the shipped capture as it is.
"""

from __future__ import annotations

import copy
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import tierlab
from browser import LAYOUT, Browser, missing
from conftest import EXAMPLES
from tierlab.errors import ConfigError
from tierlab.experiment import load_experiment
from tierlab.report import build_sections
from tierlab.report_html import write_report
from tierlab.report_tiered import ORACLES, fast_share, tiered_section

EXAMPLE = EXAMPLES / "sweep-tiered.toml"
POLICIES = ["none", "linux", "tpp", "hemem", "memtis", "oracle-static", "oracle-epoch"]
SHARES = ["10%", "50%", "100%"]


def small_experiment() -> dict[str, Any]:
    """The example, at three fast shares and a hot set of 200,000 references
    over 2,048 pages (its trace path made absolute: the dict has no folder)."""
    raw = tomllib.loads(EXAMPLE.read_text())
    raw = copy.deepcopy(raw)
    for a in raw["axis"]:
        if a["key"] == "vm.node[0].capacity":
            a["values"] = SHARES
        if a["key"] == "workload":
            for v in a["values"]:
                if v["type"] == "hotset":
                    v["hotset"].update(pages=2048, requests=200_000, move_every=50_000)
                else:
                    v["path"] = str((EXAMPLE.parent / v["path"]).resolve())
    return raw


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    store = tmp_path_factory.mktemp("tiered") / "tiered.sqlite"
    rep = tierlab.sweep(small_experiment(), store=store, in_process=True)
    assert rep.failed == 0, rep.errors
    yield store


def test_example_expands_to_every_share_and_policy() -> None:
    e = load_experiment(EXAMPLE)
    keys = [a.key for a in e.axes]
    assert keys == ["workload", "vm.node[0].capacity", "vm.migration"]
    shares = e.axes[1].labels
    assert shares[0] == "5%" and shares[-1] == "100%"
    assert list(e.axes[2].labels) == POLICIES
    assert len(e.points) == 2 * len(shares) * len(POLICIES)
    # The capture's path is taken from the experiment file's folder.
    trace = next(v for v in e.axes[0].values if v["type"] == "trace")
    assert Path(trace["path"]).is_absolute() and Path(trace["path"]).is_file()
    # A trace point has no seed; a generated one has.
    by_workload = {p.labels["workload"]: p for p in e.points}
    assert "seed" not in by_workload["flac"].config["workload"]
    assert by_workload["hotset"].seed == 1


def test_relative_trace_path_in_an_axis_follows_the_file(tmp_path: Path) -> None:
    sub = tmp_path / "exp"
    sub.mkdir()
    trace = EXAMPLE.parent.parent / "python/tierlab/experiments/traces/flac.memtrace.zst"
    (sub / "t.memtrace.zst").write_bytes(trace.read_bytes())
    text = EXAMPLE.read_text().replace(
        "../python/tierlab/experiments/traces/flac.memtrace.zst", "t.memtrace.zst"
    )
    (sub / "e.toml").write_text(text)
    e = load_experiment(sub / "e.toml")
    got = next(v["path"] for v in e.axes[0].values if v["type"] == "trace")
    assert got == str((sub / "t.memtrace.zst").resolve())


def test_repetitions_refused_for_a_trace_point() -> None:
    raw = small_experiment()
    raw["experiment"]["repetitions"] = 2
    with pytest.raises(ConfigError, match=r"experiment\.repetitions: .*workload=flac"):
        load_experiment(raw)


def test_tiered_metrics_reach_the_store(swept: Path) -> None:
    df = tierlab.load(swept)
    assert (df["status"] == "ok").all() and len(df) == 2 * len(SHARES) * len(POLICIES)
    for col in ("tiered.slowdown", "tiered.promotions", "tiered.ping_pong_share",
                "tiered.overhead.total_ns", "tiered.fast_share_of_accesses"):  # fmt: skip
        assert df[col].notna().all(), col
    # A fast node holding the whole footprint, no migration: no slowdown.
    full = df[(df["vm.node.0.capacity"] == "100%") & (df["vm.migration"] == "none")]
    assert list(full["tiered.slowdown"]) == [1.0, 1.0]
    # The static oracle is no worse than static first-touch at every share.
    for (w, s), g in df.groupby(["workload", "vm.node.0.capacity"]):
        by = dict(zip(g["vm.migration"], g["tiered.slowdown"], strict=True))
        assert by["oracle-static"] <= by["none"] + 1e-12, (w, s, by)


def test_report_figure_and_table(swept: Path) -> None:
    _meta, _df, sections = build_sections(swept)
    (sec,) = [s for s in sections if s.title == "Slowdown against the fast node's share"]
    assert len(sec.figures) == 2 and len(sec.tables) == 2
    for plot, (caption, table) in zip(sec.figures, sec.tables, strict=True):
        ax = plot.figure.axes[0]
        lines = {ln.get_label(): ln for ln in ax.get_lines() if not ln.get_label().startswith("_")}
        assert list(lines) == POLICIES
        for name, ln in lines.items():
            assert ln.get_linestyle() == ("--" if name in ORACLES else "-"), name
            assert list(ln.get_xdata()) == [10.0, 50.0, 100.0]
        assert "slowdown" in ax.get_ylabel() and "%" in ax.get_xlabel()
        workload = "hotset" if "hotset" in ax.get_title() else "flac"
        assert workload in caption
        assert list(table.columns) == [
            "fast share", "policy", "slowdown", "migrations", "ping-pong share",
            "overhead (ms)", "fast share of accesses",
        ]  # fmt: skip
        assert len(table) == len(SHARES) * len(POLICIES)
        assert list(table["fast share"][: len(POLICIES)]) == ["10%"] * len(POLICIES)
        assert list(table["policy"][: len(POLICIES)]) == POLICIES
    # The specific section replaces the generic metric-by-metric plots.
    assert not any(s.title.startswith("Results") for s in sections[1:])


def test_report_html_holds_the_figures(swept: Path, tmp_path: Path) -> None:
    rep = write_report(swept, tmp_path / "r")
    html = rep.html.read_text()
    assert "Slowdown against the fast node&#x27;s share" in html or (
        "Slowdown against the fast node's share" in html
    )
    names = sorted(p.name for p in rep.plots)
    assert names == [f"tiered-slowdown-{i}.{x}" for i in (0, 1) for x in ("png", "svg")]


def test_section_needs_both_axes(swept: Path) -> None:
    df = tierlab.load(swept)
    assert tiered_section(df, ["workload", "vm.node.0.capacity"]) is None
    assert tiered_section(df.drop(columns=["tiered.slowdown"]), list(df.columns)) is None
    one = df[df["workload"] == "hotset"]
    sec = tiered_section(one, ["vm.node.0.capacity", "vm.migration"])
    assert sec is not None and len(sec.figures) == 1 and sec.figures[0].name == "tiered-slowdown"


def test_fast_share() -> None:
    assert fast_share("5%") == 0.05 and fast_share("100%") == 1.0
    assert fast_share(1 << 20) == float(1 << 20)
    assert fast_share(True) != fast_share(True)  # NaN: a flag is no capacity


@pytest.mark.skipif(missing() is not None, reason=str(missing()))
@pytest.mark.parametrize("width", [1400, 1000])
def test_report_renders_in_a_browser(swept: Path, tmp_path: Path, width: int) -> None:
    """The report in headless Chromium, as tests/test_report_browser.py
    looks at the others: every figure loads, the page fits its window."""
    page = write_report(swept, tmp_path / "r").html
    b = Browser()
    try:
        b._s("POST", "/window/rect", {"width": width, "height": 900})
        b.open(page)
        got = b.run(LAYOUT)
        b.screenshot(page.with_name(f"{page.stem}-{width}px.png"))
    finally:
        b.close()
    assert got["title"].startswith("tierlab: ")
    assert got["images"] >= 2 and got["broken"] == 0, got
    assert got["scrollWidth"] <= got["clientWidth"], got
    assert got["overflowing"] == [], got
