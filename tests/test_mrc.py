"""Miss-ratio curves (docs/mrc.md): the exact LRU curve equals simulated LRU
tiers and libCacheSim's LRU; SHARDS stays close to it; the per-size
simulation equals single runs; the command writes CSV and PNG, and refuses
bad input with one line.

libcachesim (PyPI, GPL) is a test dependency; tierlab never imports it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import libcachesim as lcs
import numpy as np
import pandas as pd
import pytest
import tierlab
from conftest import Ran, tiny_keys, write_oracle


def one_tier(trace: Path, capacity: int, policy: str = "lru") -> dict[str, Any]:
    return {
        "workload": {"type": "trace", "path": str(trace), "unit_size": True},
        "tier": [{"tech": "DRAM-DDR3", "capacity": capacity, "policy": policy}],
    }


@pytest.fixture
def zipf_trace(tmp_path: Path) -> Path:
    """20,000 Zipf(0.9) requests over 2,000 ids spread over the u64 range."""
    rng = np.random.default_rng(3)
    p = 1.0 / np.arange(1, 2001) ** 0.9
    ranks = rng.choice(2000, size=20_000, p=p / p.sum())
    ids = (np.arange(1, 2001, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)) | 1
    return write_oracle(tmp_path / "zipf.oracleGeneral.bin", ids[ranks], 4096)


SIZES = [1, 2, 17, 100, 450, 1000, 1999, 2000, 3000]


def test_exact_equals_simulated_lru(zipf_trace: Path) -> None:
    df = tierlab.mrc(zipf_trace, unit_size=True, sizes=SIZES)
    assert list(df.columns) == ["size", "label", "miss_ratio"]
    assert df["size"].tolist() == SIZES
    assert df["label"].tolist() == [str(s) for s in SIZES]
    for size, ratio in zip(df["size"], df["miss_ratio"], strict=True):
        sim = tierlab.simulate(one_tier(zipf_trace, int(size))).summary["miss_ratio"]
        assert ratio == sim, size
    # The whole curve (no sizes) has a point at every distance below 4096.
    whole = tierlab.mrc(zipf_trace, unit_size=True)
    steps = whole.set_index("size")["miss_ratio"]
    for size, ratio in zip(df["size"], df["miss_ratio"], strict=True):
        assert steps[steps.index <= size].iloc[-1] == ratio
    assert whole["miss_ratio"].is_monotonic_decreasing
    assert whole["miss_ratio"].iloc[0] == 1.0


def test_exact_equals_libcachesim_lru(zipf_trace: Path) -> None:
    """libCacheSim's LRU (object sizes ignored) at a few sizes, miss for miss."""
    n = 20_000
    df = tierlab.mrc(zipf_trace, unit_size=True, sizes=[10, 200, 1000, 1500])
    params = lcs.ReaderInitParam(ignore_obj_size=True, ignore_size_zero_req=False)
    for size, ratio in zip(df["size"], df["miss_ratio"], strict=True):
        reader = lcs.TraceReader(str(zipf_trace), lcs.TraceType.ORACLE_GENERAL_TRACE, params)
        theirs, _ = lcs.LRU(int(size), default_ttl=0).process_trace(reader)
        assert round(ratio * n) == round(theirs * n), size


def test_bytes_curve_equals_simulated_lru(oracle_trace: Path) -> None:
    """With sizes (512 B .. 16 KiB): exact for caches at least the largest object."""
    sizes = [16384, 50_000, 300_000, "1MiB"]
    df = tierlab.mrc(oracle_trace, sizes=sizes)
    for size, ratio in zip(df["size"], df["miss_ratio"], strict=True):
        cfg = one_tier(oracle_trace, int(size))
        cfg["workload"]["unit_size"] = False
        assert ratio == tierlab.simulate(cfg).summary["miss_ratio"], size


def test_sizes_below_the_largest_object_are_flagged(
    cli: Callable[..., Ran], tmp_path: Path
) -> None:
    """Below the largest object the one-pass curve counts it in the stack
    while an LRU tier refuses it (here 0.6 against 0.2): the frame says
    how large that object is and the command line adds a note."""
    trace = tmp_path / "big.csv"
    trace.write_text(
        "".join(f"{i},{k},{s}\n" for i, (k, s) in enumerate([(1, 100), (2, 70000)] * 5))
    )
    exact = tierlab.mrc(trace, format="csv", sizes=["64KiB", "1MiB"])
    assert exact.attrs["largest_object"] == 70000
    assert exact["miss_ratio"].tolist() == [1.0, 0.2]
    lru = tierlab.mrc(trace, format="csv", sizes=["64KiB", "1MiB"], policy="lru")
    assert lru.attrs["largest_object"] == 0
    assert lru["miss_ratio"].tolist() == [0.6, 0.2]
    out = tmp_path / "c.csv"
    r = cli("mrc", trace, "--format", "csv", "--sizes", "64KiB", "-o", out, "--no-plot")
    assert r.code == 0, r.err
    assert r.err.startswith("note: below 70,000 B (the largest object)"), r.err
    r = cli("mrc", trace, "--format", "csv", "--sizes", "1MiB", "-o", out, "--no-plot")
    assert r.code == 0 and r.err == "", r.err


@pytest.mark.parametrize("policy", ["fifo", "clock"])
def test_sizes_simulation_equals_simulate(zipf_trace: Path, policy: str) -> None:
    df = tierlab.mrc(zipf_trace, unit_size=True, policy=policy, sizes=[5, "10%", 700])
    tenth = tierlab.trace_stats(zipf_trace)["unique_keys"] // 10  # objects the trace touches
    assert df["size"].tolist() == [5, tenth, 700]
    assert df["label"].tolist() == ["5", "10%", "700"]
    for size, ratio in zip(df["size"], df["miss_ratio"], strict=True):
        assert (
            ratio == tierlab.simulate(one_tier(zipf_trace, int(size), policy)).summary["miss_ratio"]
        )


@pytest.mark.parametrize("policy", [None, "fifo"])
def test_points_keep_the_sizes_as_given(zipf_trace: Path, policy: str | None) -> None:
    """The engine resolves, sorts and merges sizes; each point says which
    given size it is (it used to lose them: "10%" came back as a count)."""
    df = tierlab.mrc(zipf_trace, unit_size=True, policy=policy, sizes=["10%", "50%"])
    assert df["label"].tolist() == ["10%", "50%"]
    # Out of order and twice in two spellings: one point, the first label.
    df = tierlab.mrc(zipf_trace, unit_size=True, policy=policy, sizes=["1KiB", "5", "1024"])
    assert df["size"].tolist() == [5, 1024]
    assert df["label"].tolist() == ["5", "1KiB"]
    # Without sizes there is nothing to label.
    assert "label" not in tierlab.mrc(zipf_trace, unit_size=True).columns


ZIPF_GEN = """[workload]
type = "zipf"
alpha = 1.0
objects = 1000
requests = 20000
unit_size = true
seed = 42
"""


def test_belady_curve_equals_belady_runs(cli: Callable[..., Ran], tmp_path: Path) -> None:
    """A source without next-access times (a generator here; CSV alike):
    the curve gets them from the pre-pass a run has. It used to get none,
    and Belady evicted blindly (0.560 / 0.346 where the run gave 0.466 /
    0.246)."""
    gen = tmp_path / "zipf.toml"
    gen.write_text(ZIPF_GEN)
    runs = []
    for size in (100, 400):
        cfg = tierlab.config.load_config(gen)
        cfg["tier"] = [{"tech": "DRAM-DDR3", "capacity": size, "policy": "belady"}]
        runs.append(tierlab.simulate(cfg).summary["miss_ratio"])
    df = tierlab.mrc(gen, policy="belady", sizes=[100, 400])
    assert df["miss_ratio"].tolist() == runs
    assert df.attrs["method"] == "belady (simulated)"
    lru = tierlab.mrc(gen, sizes=[100, 400])
    assert all(b < lr for b, lr in zip(runs, lru["miss_ratio"], strict=True))
    out = tmp_path / "b.csv"
    r = cli("mrc", gen, "--policy", "belady", "--sizes", "100,400", "--no-plot", "-o", out)
    assert r.code == 0, r.err
    assert pd.read_csv(out)["miss_ratio"].tolist() == runs


def test_hierarchy_curve_scales_tiers(zipf_trace: Path, tiers_config: Path) -> None:
    """Two tiers sized 10% and 30%: at size S they get S/4 and 3S/4."""
    df = tierlab.mrc(zipf_trace, unit_size=True, config=tiers_config, sizes=[400])
    cfg = tierlab.config.load_config(tiers_config)
    cfg["tier"][0]["capacity"], cfg["tier"][1]["capacity"] = 100, 300
    want = tierlab.simulate(cfg, zipf_trace, unit_size=True).summary["miss_ratio"]
    assert df["miss_ratio"].tolist() == [want]


def mae(a: pd.DataFrame, b: pd.DataFrame) -> float:
    assert a["size"].tolist() == b["size"].tolist()
    return float(np.abs(a["miss_ratio"].to_numpy() - b["miss_ratio"].to_numpy()).mean())


@pytest.mark.slow
def test_shards_close_to_exact_on_zipf() -> None:
    """SHARDS at rate 0.01 on 10M Zipf(1.0) requests over 1M objects (about
    10,000 sampled keys; on 4M requests the MAE was 0.003-0.004: the error
    falls as the sample grows)."""
    objects = 1_000_000
    workload = {
        "workload": {
            "type": "zipf",
            "alpha": 1.0,
            "objects": objects,
            "requests": 10_000_000,
            "seed": 42,
            "unit_size": True,
        }
    }
    grid = [objects * i // 100 for i in range(1, 101)]
    exact = tierlab.mrc(workload, sizes=grid)
    sampled = tierlab.mrc(workload, sizes=grid, shards=0.01)
    err = mae(sampled, exact)
    assert err <= 0.002, err
    fixed = tierlab.mrc(workload, sizes=grid, shards_size=8192)
    assert mae(fixed, exact) <= 0.002
    # Not trivially close: the curve spans a wide range of miss ratios.
    assert exact["miss_ratio"].iloc[0] - exact["miss_ratio"].iloc[-1] > 0.2


def test_shards_small_sample_is_close(zipf_trace: Path) -> None:
    """Fast check: a half sample of 2,000 keys stays within a few percent."""
    exact = tierlab.mrc(zipf_trace, unit_size=True, sizes=[100, 500, 1000, 1500])
    half = tierlab.mrc(zipf_trace, unit_size=True, sizes=[100, 500, 1000, 1500], shards=0.5)
    assert 0 < mae(half, exact) < 0.08


def test_cli_writes_csv_and_png(tierlab_cmd: Callable[..., Ran], zipf_trace: Path) -> None:
    out = zipf_trace.parent / "curve.csv"
    r = tierlab_cmd("mrc", zipf_trace, "--unit-size", "-o", out)
    assert r.code == 0, r.err
    df = pd.read_csv(out)
    assert list(df.columns) == ["size", "miss_ratio"]
    assert df["miss_ratio"].iloc[0] == 1.0 and df["miss_ratio"].iloc[-1] < 0.2
    png = out.with_suffix(".png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(png) > 10_000  # axes, labels and a curve, not an empty canvas
    assert str(out) in r.out


def test_cli_no_plot_writes_the_csv_alone(cli: Callable[..., Ran], zipf_trace: Path) -> None:
    out = zipf_trace.parent / "np.csv"
    r = cli("mrc", zipf_trace, "--unit-size", "--shards", "0.5", "--no-plot", "-o", out)
    assert r.code == 0, r.err
    assert not out.with_suffix(".png").exists()
    with pytest.warns(tierlab.ShardsWarning, match="sizes below 100 objects"):
        api = tierlab.mrc(zipf_trace, unit_size=True, shards=0.5)
    df = pd.read_csv(out)
    # Sizes below 100 objects hold fewer than 50 sampled objects at rate 0.5:
    # the engine leaves them out of both.
    assert df["size"].tolist() == api["size"].tolist()
    assert api["size"].min() >= 100
    assert r.out.strip() == f"wrote {len(df):,} points to {out}"
    assert "sizes below 100 objects hold fewer than 50 sampled objects" in r.err


def test_cli_sizes_and_shards(cli: Callable[..., Ran], zipf_trace: Path) -> None:
    out = zipf_trace.parent / "s.csv"
    r = cli("mrc", zipf_trace, "--unit-size", "--shards", "0.5", "--sizes", "100,1000", "-o", out)
    assert r.code == 0, r.err
    df = pd.read_csv(out)
    assert df["size"].tolist() == [100, 1000]
    api = tierlab.mrc(zipf_trace, unit_size=True, sizes=[100, 1000], shards=0.5)
    assert df["miss_ratio"].tolist() == pytest.approx(api["miss_ratio"].tolist(), rel=1e-12)
    r = cli("mrc", zipf_trace, "--unit-size", "--policy", "fifo", "--sizes", "50", "5%", "-o", out)
    assert r.code == 0, r.err
    share = tierlab.trace_stats(zipf_trace)["unique_keys"] * 5 // 100
    assert pd.read_csv(out)["size"].tolist() == [50, share]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--shards", "0"], "shards: 0 is out of range"),
        (["--shards", "1.5"], "must be in (0, 1]"),
        (["--shards-size", "0"], "shards_size: must be at least 1"),
        (["--shards", "0.1", "--shards-size", "10"], "not both"),
        (["--sizes", "ten"], 'sizes[0]: "ten" is not a size'),
        (["--sizes", "0"], "sizes[0]: must be greater than zero"),
        (["--policy", "fifo"], "give sizes"),
        (["--policy", "nosuch", "--sizes", "5"], "unknown policy"),
        (["--policy", "lru", "--shards", "0.1", "--sizes", "5"], "cannot be combined"),
    ],
)
def test_bad_input(cli: Callable[..., Ran], zipf_trace: Path, args: list[str], needle: str) -> None:
    r = cli("mrc", zipf_trace, *args, "-o", zipf_trace.parent / "x.csv")
    assert r.code == 2, r.err
    assert r.out == ""
    assert len(r.err_lines) in (1, 2) and r.err_lines[0].startswith("error: "), r.err
    assert needle in r.err_lines[0], r.err
    assert not (zipf_trace.parent / "x.csv").exists()


def test_bad_files(cli: Callable[..., Ran], tmp_path: Path) -> None:
    trunc = tmp_path / "t.oracleGeneral.bin"
    trunc.write_bytes(b"\0" * 30)
    r = cli("mrc", trunc, "-o", tmp_path / "x.csv")
    assert r.code == 2 and "truncated record at byte offset 24" in r.err_lines[0]
    r = cli("mrc", tmp_path / "missing.bin", "-o", tmp_path / "x.csv")
    assert r.code == 2 and r.err_lines[0].startswith("error: ")
    good = write_oracle(tmp_path / "g.oracleGeneral.bin", tiny_keys())
    r = cli("mrc", good, "-o", tmp_path / "x.png")
    assert r.code == 2 and ".csv" in r.err_lines[0]
    r = cli("mrc", good, "-o", tmp_path / "nodir" / "x.csv")
    assert r.code == 2 and "no such directory" in r.err_lines[0]


def test_shards_leaves_out_sizes_its_sample_cannot_support(
    cli: Callable[..., Ran], tmp_path: Path
) -> None:
    """Regression (issue 21, defect 9): at rate 0.01 the SHARDS curve read 1.0
    below ~500 objects and 0.69 at 1,000 where the exact curve reads 0.53,
    with no word. Sizes holding fewer than 50 sampled objects (5,000 objects
    at rate 0.01) are left out, and the command says so; the sizes kept are
    close to the exact curve."""
    wl = tmp_path / "z.toml"
    wl.write_text(
        '[workload]\ntype = "zipf"\nalpha = 1.0\nobjects = 200_000\n'
        "requests = 1_000_000\nunit_size = true\nseed = 42\n"
    )
    out = tmp_path / "s.csv"
    sizes = "500,1000,2000,5000,10000,50000"
    r = cli("mrc", wl, "--shards", "0.01", "--sizes", sizes, "-o", out, "--no-plot")
    assert r.code == 0, r.err
    df = pd.read_csv(out)
    assert df["size"].tolist() == [5000, 10000, 50000]
    assert r.err_lines == [
        "note: SHARDS at rate 0.01: sizes below 5,000 objects hold fewer than 50 sampled "
        "objects, too few to trust: 3 points left out (the exact curve, without SHARDS, "
        "has them)"
    ]
    exact = tierlab.mrc(wl, sizes=[5000, 10000, 50000])
    assert np.abs(df["miss_ratio"].to_numpy() - exact["miss_ratio"].to_numpy()).max() < 0.03
    # Fixed-size SHARDS: 2,000 keys over the curve's last size (the distinct
    # objects): room for 50 of them from 50 * footprint / 2,000 objects.
    r = cli("mrc", wl, "--shards-size", "2000", "-o", out, "--no-plot")
    assert r.code == 0, r.err
    df = pd.read_csv(out)
    with pytest.warns(tierlab.ShardsWarning) as caught:
        whole = tierlab.mrc(wl, shards_size=2000)
    bound = -(-50 * int(whole["size"].iloc[-1]) // 2000)
    assert df["size"].tolist() == whole["size"].tolist()
    assert whole["size"].min() >= bound
    assert f"SHARDS with 2,000 keys: sizes below {bound:,} objects" in r.err
    assert r.err_lines == [f"note: {caught[0].message}"]
    first = tierlab.mrc(wl, sizes=[int(df["size"].iloc[0])])["miss_ratio"].iloc[0]
    assert abs(df["miss_ratio"].iloc[0] - first) < 0.05


def test_api_shards_leaves_out_what_the_cli_leaves_out(tmp_path: Path) -> None:
    """Regression (issue 38, item 1): tierlab.mrc(trace, shards=0.01) kept
    the sizes its sample is too small for (a miss ratio of 1.0 at a size
    where the exact curve reads 0.73) with no warning, while the CLI dropped
    them. One rule in the engine: the API drops the same points, warns with
    the CLI's note and keeps it in attrs."""
    wl = {
        "workload": {
            "type": "zipf",
            "alpha": 1.0,
            "objects": 200_000,
            "requests": 1_000_000,
            "unit_size": True,
            "seed": 42,
        }
    }
    with pytest.warns(tierlab.ShardsWarning) as caught:
        df = tierlab.mrc(wl, sizes=[500, 1000, 2000, 5000, 10000, 50000], shards=0.01)
    assert df["size"].tolist() == [5000, 10000, 50000]
    assert df["label"].tolist() == ["5000", "10000", "50000"]
    note = (
        "SHARDS at rate 0.01: sizes below 5,000 objects hold fewer than 50 sampled "
        "objects, too few to trust: 3 points left out (the exact curve, without SHARDS, "
        "has them)"
    )
    assert [str(w.message) for w in caught] == [note]
    assert df.attrs["left_out"] == note
    # Nothing left out: no warning, and attrs say None.
    exact = tierlab.mrc(wl, sizes=[5000, 50000])
    assert exact.attrs["left_out"] is None


def _drawn(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The figures the command saves, kept for a look at what they draw."""
    from matplotlib.figure import Figure

    figures: list[Any] = []
    save = Figure.savefig

    def keep(self: Figure, *args: Any, **kwargs: Any) -> None:
        figures.append(self)
        save(self, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", keep)
    return figures


def test_simulated_points_plot_as_points_in_human_units(
    cli: Callable[..., Ran],
    zipf_trace: Path,
    tiers_config: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Regression (issue 21, defect 9): simulated sizes were drawn as steps,
    in raw bytes, titled "hierarchy (simulated)". They are points joined by
    lines, on an axis in MiB, under the config's name."""
    figures = _drawn(monkeypatch)
    out = zipf_trace.parent / "h.csv"
    sizes = ["1MiB", "2MiB", "4MiB", "8MiB"]
    r = cli("mrc", zipf_trace, "--config", tiers_config, "--sizes", *sizes, "-o", out)
    assert r.code == 0, r.err
    (ax,) = figures[0].axes
    assert ax.get_title() == f"{zipf_trace.name}: {tiers_config.name} (simulated)"
    assert ax.get_xlabel() == "cache size (MiB)"
    (line,) = ax.get_lines()
    assert line.get_drawstyle() == "default" and line.get_marker() == "o"
    assert list(line.get_xdata()) == [1, 2, 4, 8]
    # The one-pass curve keeps its steps (its miss ratio holds between sizes).
    r = cli("mrc", zipf_trace, "--unit-size", "-o", out)
    assert r.code == 0, r.err
    (ax,) = figures[1].axes
    assert ax.get_lines()[0].get_drawstyle() == "steps-post"
    assert ax.get_xlabel() == "cache size (objects)"
