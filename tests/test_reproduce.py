"""Each reproduction runs at a tiny scale through the real sweep (a local Dask
cluster of one worker), prints the side-by-side table and writes its report;
``--json`` gives its figures."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import tierlab
from conftest import Ran
from test_bad_input import assert_bad
from tierlab.reproduce import (
    REPRODUCTIONS,
    SYSTEMS,
    Figure,
    experiment_text,
    figure_table,
    scaled_experiment,
)
from tierlab.reproductions.s1 import S1_TABLE_II, table2_band
from tierlab.reproductions.s4 import tolerance_us

# Small enough for seconds per reproduction, large enough that every point runs.
TINY = {"s1": "0.01", "s2": "0.02", "s3": "0.05", "s4": "0.002", "s5": "0.02"}


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
    for fid in FIGURES[name]:
        assert fid in r.out, fid
    assert "in target" in r.out
    # --json over the same folder: every point is in the store already.
    j = tierlab_cmd("reproduce", name, "-o", out, "--scale", TINY[name], "--workers", "1", "--json")
    assert j.code == 0, j.err
    doc = json.loads(j.out)
    assert doc["system"] == name
    assert [f["id"] for f in doc["figures"]][: len(FIGURES[name])] == FIGURES[name]
    for f in doc["figures"]:
        assert set(f) == {"id", "label", "paper", "tierlab", "unit"}
        assert f["label"] and f["unit"]
        assert f["paper"] is None or math.isfinite(f["paper"])
        assert f["tierlab"] is None or math.isfinite(f["tierlab"])
    if name == "s5":
        check_s5_paging(doc["figures"])
    if name == "s3":
        check_s3(doc["figures"])
        # The pool's counters reach the store, the printout and the report.
        assert "The pool, reclaim and faults:" in r.out
        for col in ("borrows", "swap_outs_avoided", "kswapd_wakeups", "direct_reclaims"):
            assert col in r.out and col in page, col
        check_s3_counters(out / "s3.sqlite")
    if name == "s1":
        paper = {f["id"]: f["paper"] for f in doc["figures"]}
        for wl, row in S1_TABLE_II.items():
            for s, p in row.items():
                assert paper[f"table2_{wl}_s{s}"] == p


#: The figure ids each reproduction gives, in order (the issue's names).
FIGURES: dict[str, list[str]] = {
    "s1": [
        *(f"table2_{wl}_s{s}" for wl in ("postmark", "bonnie") for s in (2, 3, 4, 5)),
        "fig8_point_postmark_512_s3",
        "fig7_write_kb_s",
        "best_miss_rate_postmark",
        "best_miss_rate_postmark_disk_reads",
        "breakeven_price_postmark_s3",
        "breakeven_price_bonnie_s3",
    ],
    "s2": [
        "miss_ratio_page_cache",
        "miss_ratio_extended_buffer_cache",
        "miss_ratio_reduction",
        "read_miss_ratio_reduction",
        "runs_lower",
    ],
    "s3": [
        "relative_performance_gain_avg",
        "relative_performance_gain_max",
        "runtime_gain_avg",
        "runtime_gain_max",
        "runtime_gain_max_program",
        "major_fault_reduction",
        "lifetime_gain_240",
        "lifetime_gain_480",
    ],
    "s4": [
        "throughput_ratio_surge",
        "throughput_ratio_specweb",
        "latency_tolerance_us_surge",
        "power_reduction_vs_powerdown",
        "area_reduction",
        "flash_accesses_per_s",
        "flash_hit_ratio",
        "flash_lifetime_years_1e6",
        "top20_request_share",
        "head_request_share",
        "wear_spread",
        "hot_set_swaps",
    ],
    "s5": [
        "breakeven_hits_scm",
        "breakeven_hits_hdd",
        *(
            f"gain_{c}_{st}_{wl}"
            for wl in ("web", "proxy")
            for c, st in (("lru", "scm"), ("ac", "scm"), ("lru", "hdd"))
        ),
    ],
}


def check_s3(figures: list[dict[str, Any]]) -> None:
    """S3: eq. 1 at the paper's values; Memorage (6.4 GiB for 5.5 GiB of
    resident sets) never faults a page in from swap, the baseline does."""
    by_id = {f["id"]: f["tierlab"] for f in figures}
    assert by_id["lifetime_gain_240"] == pytest.approx(4 * 720 / 721)
    assert by_id["lifetime_gain_480"] == pytest.approx(7 * 720 / 721)
    assert by_id["major_fault_reduction"] > 100
    assert -1 < by_id["runtime_gain_avg"] < 1
    assert by_id["runtime_gain_max"] >= by_id["runtime_gain_avg"]
    # Figure 7's B/M - 1 is at least 1 - M/B for every program (C11).
    assert by_id["relative_performance_gain_avg"] >= by_id["runtime_gain_avg"] - 1e-12
    assert by_id["relative_performance_gain_max"] >= by_id["relative_performance_gain_avg"]
    assert by_id["runtime_gain_max_program"] in (0.0, 1.0)


def check_s3_counters(store: Path) -> None:
    """The `memorage` object's counters are stored for the Memorage points
    and missing (not zero) for the Baseline's, which has no pool."""
    df = tierlab.load(store, "s3")
    for _, r in df.iterrows():
        if r["vm.memorage.enabled"] == "memorage":
            assert r["memorage.borrows"] >= 1 and r["memorage.borrowed_bytes_max"] > 0
        else:
            assert math.isnan(r["memorage.borrows"])
            assert r["vm.kswapd_scans"] > 0


def check_s5_paging(figures: list[dict[str, Any]]) -> None:
    """S5's paging half: every figure the issue names, finite, after the
    file-caching half's."""
    by_id = {f["id"]: f["tierlab"] for f in figures}
    for lat in ("1x", "10x", "100x", "1000x"):
        for v in ("", "linux_", "adaptive_"):
            fid = f"best_page_size_{v}{lat}"
            assert by_id[fid] in {512, 1024, 2048, 4096, 8192, 16384, 32768, 65536}, fid
        for page in (512, 4096, 65536):
            for part in ("addr", "data"):
                assert math.isfinite(by_id[f"t_{part}_ns_{lat}_page_{page}"])
    for page in (512, 1024, 2048, 4096, 8192, 16384, 32768, 65536):
        assert 0 <= by_id[f"tlb_hit_ratio_page_{page}"] <= 1
        assert 0 <= by_id[f"fault_rate_page_{page}"] <= 1
    # More entries never lower an LRU TLB's hit ratio (inclusion).
    hits = [by_id[f"tlb_hit_ratio_entries_{n}"] for n in (1, 2, 4, 8, 16, 32, 64, 128)]
    assert hits == sorted(hits)
    # The unbanded memory-size sweep: every share, both read-aheads.
    for mode in ("fixed", "adaptive"):
        for share in ("25pct", "50pct", "100pct", "200pct", "all"):
            assert by_id[f"memory_best_page_size_{mode}_{share}"] in {512 << i for i in range(8)}
            assert 0 <= by_id[f"memory_tlb_hit_ratio_{mode}_{share}"] <= 1
            assert 0 <= by_id[f"memory_fault_rate_{mode}_{share}"] <= 1
    # The insertion-cost axis: n never falls as the insertion grows.
    axis = [by_id[f"breakeven_hits_scm_insert_{i}"] for i in ("ddr3", "memorage", "run1")]
    axis += [by_id["breakeven_hits_scm_insert_model"], by_id["breakeven_hits_scm_insert_run3"]]
    assert axis == sorted(axis) and axis[0] >= 1


def test_figure_bands_and_table() -> None:
    f = Figure("x", "a ratio", 1.37, 1.3, "ratio", table2_band(1.37))
    assert f.band == pytest.approx((1.2405, 1.4995))
    assert f.in_band is True
    assert Figure("x", "y", 0.09, 0.2, "fraction", (0.04, 0.15)).in_band is False
    assert Figure("x", "y", 0.09, 0.2, "fraction").in_band is None
    assert Figure("x", "y", None, float("nan"), "fraction", (0.0, None)).in_band is None
    assert Figure("x", "y", 2.0, 100.0, "us", (100.0, None)).in_band is True
    # NaN is null in the JSON; the table says n/a.
    assert Figure("x", "y", None, float("nan"), "ratio").as_json()["tierlab"] is None
    t = figure_table([f, Figure("z", "w", 2.0, float("nan"), "hits", (2.0, 2.0))])
    assert list(t["in target"]) == ["yes", ""]
    assert list(t["tierlab"]) == ["1.3", "n/a"]
    assert list(t["target"]) == ["1.24..1.5", "2..2"]


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
    for s in SYSTEMS.values():
        assert s.experiments[0] == s.name
        for stem in s.experiments:
            assert "[experiment]" in experiment_text(stem)


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
    """Consolidation: a reproduction is one module with one SYSTEM (experiment
    files, run, notes), registered in SYSTEMS, and each points into the
    repository's own docs."""
    from conftest import REPO

    assert tuple(SYSTEMS) == REPRODUCTIONS
    for name, s in SYSTEMS.items():
        assert s.name == name
        assert (REPO / "python" / "tierlab" / "reproductions" / f"{name}.py").is_file()
        assert (REPO / s.doc).is_file(), s.doc
        assert s.notes and all(n.strip() for n in s.notes)
        assert '"' in s.paper, "the paper is cited by its title"


def test_s4_latency_tolerance() -> None:
    # Within 5% of the first point's throughput up to where the curve crosses
    # 95% of it, linearly between the swept latencies.
    assert tolerance_us([0.05, 100, 200, 400], [10.0, 9.9, 9.0, 5.0]) == pytest.approx(1300 / 9)
    # Unordered input is sorted by latency first.
    assert tolerance_us([200, 0.05, 100], [9.0, 10.0, 9.9]) == pytest.approx(1300 / 9)
    # Never out of the band: the largest latency swept (a lower bound).
    assert tolerance_us([0.05, 100], [10.0, 9.8]) == 100.0
    # Out at once: between DRAM's latency and the first step.
    assert tolerance_us([0.05, 10.05], [10.0, 0.0]) == pytest.approx(0.55)


def test_s4_scale_keeps_fileset_and_caches(tmp_path: Path) -> None:
    from tierlab.reproduce import Context
    from tierlab.reproductions import s4

    seen: list[dict[str, object]] = []

    class Spy(Context):
        def sweep(self, stem, name=None):  # type: ignore[no-untyped-def,override]
            seen.append(stem)
            raise RuntimeError("stop")

    with pytest.raises(RuntimeError):
        s4._sweep(Spy(tmp_path, 0.01), "s4-specweb")
    (exp,) = seen
    base = exp["base"]  # type: ignore[index]
    assert base["workload"]["specweb"]["requests"] == 10_000
    assert "scale" not in base["workload"]
    assert base["tier"][0]["capacity"] == "1GiB"


def test_s5_block_times_follow_the_documented_costs() -> None:
    # The engine's t, T and Tm of one 4 KiB block with the bundled S5
    # experiment's costs (docs/reproduce-s5.md): the storage path is 30%
    # slower than a hit on DRAM-speed SCM (S5 section 2), an insertion is
    # its software plus one more page copy, and the break-even follows.
    from tierlab.analysis import break_even_hits
    from tierlab.reproductions.s5_files import block_times

    base = scaled_experiment("s5")["base"]
    s, copy, insert, storage_sw = 1985, 1430, 915, 1025
    t, big_t, tm = block_times(base, "SCM-S5")
    assert (t, big_t) == (s + copy, s + storage_sw + copy)
    assert tm == big_t + insert + copy
    assert big_t / t == pytest.approx(1.3, abs=0.001)
    assert break_even_hits(t, big_t, tm) == 3
    t, big_t, tm = block_times(base, "HDD")
    assert t == s + copy and tm - big_t == insert + copy
    assert big_t > 8.5e6 and break_even_hits(t, big_t, tm) == 1


def test_s1_experiments_scale_sizes_and_bonnie_warmup(tmp_path: Path) -> None:
    """S1's capacity axis scales with `--scale`, and Bonnie's warm-up is its
    first pass over the file: every page of it, the seeks counted."""
    from tierlab.reproduce import Context
    from tierlab.reproductions.s1 import experiment

    full = experiment(Context(tmp_path, 1.0), "s1")
    small = experiment(Context(tmp_path, 0.01), "s1")
    assert full["axis"][1]["range"] == {"from": "128MiB", "to": "1408MiB", "step": "128MiB"}
    assert small["axis"][1]["range"] == {
        "from": round(128 * 2**20 * 0.01),
        "to": round(1408 * 2**20 * 0.01),
        "step": round(128 * 2**20 * 0.01),
    }
    assert full["base"]["run"] == {"passes": 6, "warmup": "1 pass"}
    b = experiment(Context(tmp_path, 1.0), "s1-bonnie")
    assert b["base"]["run"]["warmup"] == 2**30 // 4096
    assert b["base"]["workload"]["bonnie"] == {"read_first": True}
    assert experiment(Context(tmp_path, 0.01), "s1-bonnie")["base"]["run"]["warmup"] == -(
        -round(2**30 * 0.01) // 4096
    )


def test_s3_lifetimes_follow_the_papers_example() -> None:
    # S3 4.4: 8 GB of PRAM memory at Em 1e6 written at 100 MB/s lasts "only
    # 2.5 years"; a 480 GB PSD at Es 1e5 written at 12 GB/day "over 10,000".
    from tierlab.reproductions.s3 import lending

    d = lending(100e6)
    assert d["Lm_years"] == pytest.approx(2.535, abs=0.005)
    assert 10_000 < d["Ls_years"] < 11_000
    assert d["memory_gain"] == pytest.approx(1 / (1 - 2 / 4.4))
    assert d["Lm_lending_years"] == pytest.approx(d["Lm_years"] * d["memory_gain"])
    # beta = 100 MB/s over 12 GB/day = 720: S3's own beta.
    assert d["beta"] == pytest.approx(720, rel=1e-3)
