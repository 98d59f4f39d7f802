"""Each reproduction runs at a tiny scale through the real sweep (a local Dask
cluster of one worker), prints the side-by-side table and writes its report."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import Ran
from test_bad_input import assert_bad
from tierlab.reproduce import REPRODUCTIONS, S1_TABLE_II, experiment_text, scaled_experiment

# Small enough for seconds per reproduction, large enough that every point runs.
TINY = {"s1": "0.01", "s2": "0.02", "s5": "0.02"}


@pytest.mark.parametrize("name", REPRODUCTIONS)
def test_reproduce_tiny(name: str, tierlab_cmd: Callable[..., Ran], tmp_path: Path) -> None:
    out = tmp_path / name
    r = tierlab_cmd(
        "reproduce", name, "-o", out, "--scale", TINY[name], "--workers", "1", timeout=300
    )
    assert r.code == 0, r.err
    assert "Traceback" not in r.out
    assert f"{name.upper()}: tierlab beside the paper" in r.out
    assert "What drives the differences" in r.out
    # Pointers into the repository, never to files a user does not have.
    assert f"docs/reproduce-{name}.md" in r.out and "docs/sources.md" in r.out
    assert "SEEDS" not in r.out and "SEEDS" not in (out / f"{name}.html").read_text()
    assert "0 failed" in r.out
    assert (out / f"{name}.sqlite").is_file()
    page = (out / f"{name}.html").read_text(encoding="utf-8")
    assert "tierlab beside the paper" in page and "data:image/png;base64," in page
    assert list(out.glob("*.png")) and list(out.glob("*.svg"))
    if name == "s1":
        for wl, row in S1_TABLE_II.items():
            for s, paper in row.items():
                assert f"{wl}" in r.out and f"{paper}" in r.out, (wl, s)
    if name == "s5":
        assert "break_even_hits" in r.out and "SCM-S5" in r.out
    if name == "s2":
        assert "extended buffer cache" in r.out and "same direction" in r.out


def test_scaled_experiment_scales_workloads_and_sizes() -> None:
    e = scaled_experiment("s5", 0.5)
    assert e["base"]["workload"]["scale"] == pytest.approx(0.1)
    assert [v["scale"] for v in e["axis"][0]["values"]] == [0.5, 0.1]
    # Shares of the footprint are left alone.
    assert e["base"]["tier"][0]["capacity"] == "10%"
    s2 = scaled_experiment("s2", 0.5)
    assert s2["base"]["tier"][1]["capacity"] == round(214_748_365 * 0.5)
    assert scaled_experiment("s1", 1) == scaled_experiment("s1")


def test_bundled_experiments_are_package_data() -> None:
    for name in REPRODUCTIONS:
        assert "[experiment]" in experiment_text(name)


def test_reproduce_bad_input(cli: Callable[..., Ran], tmp_path: Path) -> None:
    assert_bad(cli("reproduce", "s9", "-o", tmp_path), "unknown reproduction 's9'", "s1")
    assert_bad(cli("reproduce", "s1", "--scale", "-1", "-o", tmp_path), "--scale")
    assert_bad(cli("reproduce", "s1", "--scale", "x", "-o", tmp_path), "--scale")
    assert_bad(cli("reproduce", "s1", "--workers", "0", "-o", tmp_path), "--workers")
    # A file where the output folder (or one of its parents) would go.
    f = tmp_path / "file"
    f.write_text("mine")
    for out in (f, f / "sub"):
        assert_bad(cli("reproduce", "s1", "-o", out), str(f), "is a file")
    assert f.read_text() == "mine"


def test_every_reproduction_is_one_table_entry() -> None:
    """Consolidation: a reproduction is one entry of SYSTEMS (experiment file,
    comparison, notes), and each points into the repository's own docs."""
    from conftest import REPO
    from tierlab.reproduce import SYSTEMS

    assert tuple(SYSTEMS) == REPRODUCTIONS
    for name, s in SYSTEMS.items():
        assert s.name == name
        assert "[experiment]" in experiment_text(name)
        assert (REPO / s.doc).is_file(), s.doc
        assert s.notes and all(n.strip() for n in s.notes)
        assert '"' in s.paper, "the paper is cited by its title"
