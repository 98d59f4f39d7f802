"""The reports a new user meets first, rendered in a real browser.

Headless Chromium (Debian's ``chromium`` and ``chromium-driver``, installed
by ``make deps``) opens the quick start's sweep report, ``reproduce s1`` at
a small scale, a policy sweep and the over-provisioning sweep (its
lifetime-against-cost figure), at a wide and a narrow window, and
checks that each page fits its window (no horizontal scroll bar: the
table of all results overflowed at 1,400 px), that every figure loaded,
and that no element but a table's own scroll box sticks out. Screenshots
are left beside each report for a reader's look. Skips, saying why, where
the browser is absent.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser import LAYOUT, Browser, missing
from conftest import EXAMPLES, tierlab_argv

pytestmark = pytest.mark.skipif(missing() is not None, reason=str(missing()))

POLICIES = """\
[experiment]
name = "policies"
description = "Eleven policies at four sizes"

[base.workload]
type = "zipf"
alpha = 0.9
objects = 20_000
requests = 100_000
object_size = "4KiB"
seed = 3

[[base.tier]]
name = "dram"
tech = "DRAM-DDR3"
capacity = "10%"

[base.backing]
tech = "HDD"

[[axis]]
key = "tier[0].policy"
values = ["lru", "fifo", "clock", "arc", "2q", "s3-fifo", "sieve", "lfu", "lirs",
          "w-tinylfu", "random"]

[[axis]]
key = "tier[0].capacity"
values = ["2%", "5%", "10%", "20%"]
"""


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    b = Browser()
    try:
        yield b
    finally:
        b.close()


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The three reports, each an HTML file, made as the README makes them
    (the quick start's sweep at a tenth of its requests)."""

    def run_cli(*args: object) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*tierlab_argv(), *map(str, args)],
            capture_output=True,
            text=True,
            timeout=600,
            stdin=subprocess.DEVNULL,
        )

    tmp = tmp_path_factory.mktemp("browser")
    out: dict[str, Path] = {}
    store = tmp / "slowdown.sqlite"
    r = run_cli(
        "sweep", EXAMPLES / "sweep-slowdown.toml", "--store", store,
        "--set", "workload.requests=50000", "--no-progress",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    r = run_cli("report", store, "-o", tmp / "slowdown-report")
    assert r.returncode == 0, r.stderr
    out["quick start sweep"] = tmp / "slowdown-report" / "slowdown.html"
    r = run_cli("reproduce", "s1", "--scale", "0.02", "-o", tmp / "s1")
    assert r.returncode == 0, r.stderr
    out["reproduce s1"] = next((tmp / "s1").glob("*.html"))
    exp = tmp / "policies.toml"
    exp.write_text(POLICIES)
    r = run_cli("sweep", exp, "--store", tmp / "policies.sqlite", "--no-progress")
    assert r.returncode == 0, r.stderr
    r = run_cli("report", tmp / "policies.sqlite", "-o", tmp / "policies-report")
    assert r.returncode == 0, r.stderr
    out["policy sweep"] = tmp / "policies-report" / "policies.html"
    # The planner's over-provisioning sweep: its lifetime-against-cost figure.
    r = run_cli(
        "sweep", EXAMPLES / "sweep-op.toml", "--store", tmp / "op.sqlite",
        "--set", "workload.requests=60000", "--no-progress",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    r = run_cli("report", tmp / "op.sqlite", "-o", tmp / "op-report")
    assert r.returncode == 0, r.stderr
    out["over-provisioning sweep"] = tmp / "op-report" / "over-provisioning.html"
    return out


@pytest.mark.parametrize(
    "which", ["quick start sweep", "reproduce s1", "policy sweep", "over-provisioning sweep"]
)
@pytest.mark.parametrize("width", [1400, 1000])
def test_report_fits_the_window(
    browser: Browser, reports: dict[str, Path], which: str, width: int
) -> None:
    page = reports[which]
    browser._s("POST", "/window/rect", {"width": width, "height": 900})
    browser.open(page)
    got = browser.run(LAYOUT)
    browser.screenshot(page.with_name(f"{page.stem}-{width}px.png"))
    assert got["title"].startswith("tierlab: ")
    assert got["images"] > 0 and got["broken"] == 0, got
    assert got["scrollWidth"] <= got["clientWidth"], f"{which} at {width} px: {got}"
    assert got["overflowing"] == [], f"{which} at {width} px: {got}"


def test_missing_browser_is_a_stated_skip(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where Chromium is absent the browser tests skip and say what to install."""
    import browser as b

    monkeypatch.setattr(b.shutil, "which", lambda _name: None)
    assert "apt-get install chromium" in str(b.missing())
