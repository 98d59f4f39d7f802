"""The benchmark generators (crates/tierlab-core/src/workloads/) through the
command line: `tierlab trace generate`, its determinism, the statistics of
each preset as `tierlab trace stats` reports them, checked against the
generators' parameters, and the PostMark example configs.

Finer checks (Zipf slopes fitted over 2M requests, size quantiles, pattern
shapes) are the Rust unit tests beside each generator."""

from __future__ import annotations

import hashlib
import json
import math
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import EXAMPLES, Ran

KINDS = ["postmark", "bonnie", "web", "specweb", "proxy", "multiprogram", "hotset"]

# A preset of each kind and a scale that generates in well under a second.
SMALL = {
    "postmark": ("s1", 0.02),
    "bonnie": ("s1", 0.05),
    "web": ("s4", 0.01),
    "specweb": ("s4", 0.02),
    "proxy": ("s5", 0.01),
    "multiprogram": ("s3", 0.01),
    "hotset": ("default", 0.01),
}


def ok(r: Ran) -> Ran:
    assert r.code == 0, f"exit {r.code}\nstdout:\n{r.out}\nstderr:\n{r.err}"
    assert "Traceback" not in r.err
    return r


def sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def generate(cli: Callable[..., Ran], kind: str, out: Path, *extra: object) -> dict[str, int]:
    preset, scale = SMALL[kind]
    ok(cli("trace", "generate", kind, "-o", out, "--preset", preset, "--scale", scale, *extra))
    return dict(json.loads(ok(cli("trace", "stats", out, "--json")).out))


def read_csv(p: Path) -> list[tuple[int, int, str]]:
    """(key, size, op) of each line of a tierlab CSV."""
    lines = p.read_text().splitlines()
    assert lines[0] == "time,key,size,op"
    out = []
    for ln in lines[1:]:
        _, k, s, op = ln.split(",")
        out.append((int(k), int(s), op))
    return out


# --------------------------------------------------------------------------
# determinism
# --------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("fmt", ["oracle", "csv"])
def test_same_seed_same_bytes(cli: Callable[..., Ran], tmp_path: Path, kind: str, fmt: str):
    a, b, c = (tmp_path / f"{n}.{fmt}" for n in "abc")
    for out, seed in ((a, 7), (b, 7), (c, 8)):
        generate(cli, kind, out, "--seed", seed, "--format", fmt)
    assert a.stat().st_size > 0
    assert sha(a) == sha(b)
    assert sha(a) != sha(c), "another seed gave the same trace"


def test_same_bytes_across_processes(tierlab_cmd: Callable[..., Ran], tmp_path: Path) -> None:
    outs = [tmp_path / "one.bin", tmp_path / "two.bin"]
    for out in outs:
        ok(tierlab_cmd("trace", "generate", "postmark", "-o", out, "--preset", "s1", "--scale",
                       "0.01", "--seed", "3"))  # fmt: skip
    assert sha(outs[0]) == sha(outs[1])


# --------------------------------------------------------------------------
# statistics against the parameters
# --------------------------------------------------------------------------


def test_postmark_s1_stats(cli: Callable[..., Ran], tmp_path: Path) -> None:
    out = tmp_path / "pm.csv"
    ok(cli("trace", "generate", "postmark", "-o", out, "--preset", "s1", "--scale", "0.1"))
    s = json.loads(ok(cli("trace", "stats", out, "--json")).out)
    files = transactions = 10_000  # 100,000 x 0.1
    # Uniform sizes on 500..15,000 B in 4 KiB pages.
    mean_pages = sum(math.ceil(b / 4096) for b in range(500, 15_001)) / 14_501
    assert s["min_size"] == s["max_size"] == 4096
    assert s["footprint_bytes"] == 4096 * s["unique_keys"]
    # Every page written is deleted once: by a transaction or at the end.
    assert s["deletes"] == s["unique_keys"]
    # The pool alone is files x mean pages; creates and appends add more.
    assert s["writes"] >= 0.97 * files * mean_pages
    # Read bias 5 of 10: half the transactions read a whole file (a read
    # run starts at page 0).
    reads = sum(1 for k, _, op in read_csv(out) if op == "read" and k & 0xFFFFFFFF == 0)
    assert reads / transactions == pytest.approx(0.5, abs=0.02)


def test_postmark_s2_read_and_create_bias(cli: Callable[..., Ran], tmp_path: Path) -> None:
    out = tmp_path / "pm2.csv"
    ok(cli("trace", "generate", "postmark", "-o", out, "--preset", "s2", "--scale", "0.02"))
    reqs = read_csv(out)
    # Runs: a change of (file, op) starts a new one. Files are >= 400,000 B,
    # so an append never writes page 0 and a create always starts there.
    runs = []
    prev = None
    for k, _, op in reqs:
        if (k >> 32, op) != prev or (k & 0xFFFFFFFF) == 0:
            runs.append((k >> 32, k & 0xFFFFFFFF, op))
        prev = (k >> 32, op)
    files, transactions = 200, 1_000
    tx = runs[files : files + 2 * transactions]
    reads = sum(1 for r in tx if r[2] == "read")
    creates = sum(1 for r in tx if r[2] == "write" and r[1] == 0)
    assert reads / transactions == pytest.approx(0.7, abs=0.05)
    assert creates / transactions == pytest.approx(0.7, abs=0.05)


def test_bonnie_stats(cli: Callable[..., Ran], tmp_path: Path) -> None:
    out = tmp_path / "bonnie.csv"
    ok(cli("trace", "generate", "bonnie", "-o", out, "--preset", "s1", "--scale", "0.5"))
    s = json.loads(ok(cli("trace", "stats", out, "--json")).out)
    pages = (512 << 20) // 4096  # 1 GiB x 0.5
    seeks = 3 * 2_000  # three seekers, 4,000 x 0.5 seeks each
    assert s["unique_keys"] == pages
    assert s["reads"] == 2 * seeks  # an 8 KiB chunk is two pages
    assert s["deletes"] == 0
    rewrites = (s["writes"] - pages) / s["reads"]
    assert rewrites == pytest.approx(0.1, abs=0.02)  # UpdateSeek = 10


def test_web_stats(cli: Callable[..., Ran], tmp_path: Path) -> None:
    s = generate(cli, "web", tmp_path / "web.csv")
    assert s["reads"] == s["requests"] and s["writes"] == s["deletes"] == 0
    fileset = 15_000_000  # 1.5 GB x 0.01
    # Pages of the files requested: at most the fileset in whole pages (plus
    # one file beyond it and a page per file of rounding), and Zipf makes
    # most of it requested.
    assert 0.3 * fileset < s["footprint_bytes"] < 1.5 * fileset + (64 << 20)
    # 2,000 whole-file requests of ~18 pages on average (SURGE sizes).
    assert 5 * 2_000 < s["requests"] < 60 * 2_000


def test_specweb_mix(cli: Callable[..., Ran], tmp_path: Path) -> None:
    out = tmp_path / "specweb.csv"
    generate(cli, "specweb", out)
    reqs = read_csv(out)
    dirs = 36_000_000 // 5_119_470  # 1.8 GB x 0.02
    runs = [k >> 32 for k, _, _ in reqs if k & 0xFFFFFFFF == 0 or k >> 32 > dirs * 36]
    requests = 20_000
    posts = sum(1 for _, _, op in reqs if op == "write")
    ads = sum(1 for f in runs if f == dirs * 36 + 1)
    assert posts / requests == pytest.approx(0.048, abs=0.02)
    assert ads / requests == pytest.approx(0.126, abs=0.02)
    # Class 3 files (100..900 KiB) are 1% of file requests.
    file_runs = [f for f in runs if f <= dirs * 36]
    class3 = sum(1 for f in file_runs if (f - 1) % 36 // 9 == 3) / len(file_runs)
    assert class3 == pytest.approx(0.01, abs=0.005)


def test_proxy_one_hit_objects(cli: Callable[..., Ran], tmp_path: Path) -> None:
    out = tmp_path / "proxy.csv"
    generate(cli, "proxy", out)
    objects = 1_000  # 100,000 x 0.01
    runs = [k >> 32 for k, _, _ in read_csv(out) if k & 0xFFFFFFFF == 0]
    assert len(runs) == 10_000
    one_hit = [f for f in runs if f > objects]
    assert len(one_hit) / len(runs) == pytest.approx(0.3, abs=0.02)
    assert max(Counter(one_hit).values()) == 1
    counts = Counter(runs)
    assert sum(1 for n in counts.values() if n == 1) / len(counts) > 0.5


def test_multiprogram_s3_stats(cli: Callable[..., Ran], tmp_path: Path) -> None:
    s = generate(cli, "multiprogram", tmp_path / "mp.csv")
    mib = [873, 1600, 679, 501, 623, 123, 409, 828]
    pages = sum(round(m * 256 * 0.01) for m in mib)
    assert s["requests"] == 4 * pages
    assert 0.8 * pages < s["unique_keys"] <= pages
    write_ratio = (0.3 * 6 + 0.2 + 0.45) / 8
    assert s["writes"] / s["requests"] == pytest.approx(write_ratio, abs=0.02)
    assert s["deletes"] == 0


def test_hotset_moves(cli: Callable[..., Ran], tmp_path: Path) -> None:
    """The hot set takes its share of each period's references, then moves
    on: the window it left gets only its share of the cold references."""
    out = tmp_path / "hot.csv"
    s = generate(cli, "hotset", out, "--format", "csv")
    pages, requests, every = 655, 20_000, 2_000  # the default preset x 0.01
    hot = 66  # round(655 x 0.1) pages, moving by 66 (shift_share 1)
    assert s["requests"] == requests and s["writes"] == 0
    seen = [k & 0xFFFFFFFF for k, _, _ in read_csv(out)]
    assert {k >> 32 for k, _, _ in read_csv(out)} == {1}

    def in_window(page: int, epoch: int) -> bool:
        return (page - epoch * hot) % pages < hot

    now = sum(in_window(p, i // every) for i, p in enumerate(seen)) / requests
    assert now == pytest.approx(0.9, abs=0.01)
    left = [in_window(p, i // every - 1) for i, p in enumerate(seen) if i >= every]
    assert sum(left) / len(left) == pytest.approx(0.1 * hot / (pages - hot), abs=0.005)


def test_hotset_bad_share_names_its_key(tierlab_cmd: Callable[..., Ran], tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(
        '[workload]\ntype = "hotset"\nscale = 0.01\n[workload.hotset]\nhot_share = 0\n'
        '[[tier]]\ntech = "DRAM-DDR3"\ncapacity = "1MiB"\n'
    )
    r = tierlab_cmd("run", bad)
    assert r.code == 2 and r.out == "" and "Traceback" not in r.err
    assert r.err_lines[0].startswith("error: workload.hotset.hot_share: 0 is out of range")


def test_oracle_output_notes_lost_ops(cli: Callable[..., Ran], tmp_path: Path) -> None:
    out = tmp_path / "pm.bin"
    r = ok(cli("trace", "generate", "postmark", "-o", out, "--scale", "0.5"))
    assert "note: oracleGeneral has no operation field" in r.err
    assert r.err_lines[-1].startswith("hint: --format csv")
    s = json.loads(ok(cli("trace", "stats", out, "--json")).out)
    assert s["writes"] == s["deletes"] == 0
    assert out.stat().st_size == 24 * s["requests"]
    # The CSV of the same generator keeps the mix.
    c = generate(cli, "postmark", tmp_path / "pm.csv")
    assert c["writes"] > 0 and c["deletes"] > 0


# --------------------------------------------------------------------------
# bad input
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["postmarc"], "error: unknown generator 'postmarc'; expected one of postmark, bonnie"),
        (["postmark", "--preset", "s9"], 'error: workload.preset: unknown preset "s9"'),
        (["web", "--scale", "0"], "error: workload.scale: 0 is out of range"),
        (["web", "--scale", "big"], "error: --scale 'big': expected a number"),
        (["bonnie", "--seed", "-1"], "error: workload.seed:"),
        (["bonnie", "--seed", "x"], "error: --seed 'x': expected an integer"),
    ],
)
def test_bad_input_one_line(
    tierlab_cmd: Callable[..., Ran], tmp_path: Path, args: list[str], message: str
) -> None:
    r = tierlab_cmd("trace", "generate", *args, "-o", tmp_path / "x.bin")
    assert r.code == 2, r
    assert "Traceback" not in r.err
    assert len([ln for ln in r.err_lines if ln.startswith("error:")]) == 1, r.err
    assert r.err_lines[0].startswith(message), r.err
    assert r.out == ""


def test_unwritable_output(tierlab_cmd: Callable[..., Ran], tmp_path: Path) -> None:
    r = tierlab_cmd("trace", "generate", "web", "-o", tmp_path / "no" / "x.csv", "--scale", "0.01")
    assert r.code == 2 and r.err_lines[0].startswith("error: ") and "x.csv" in r.err_lines[0]


# --------------------------------------------------------------------------
# the PostMark example configs
# --------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["s1-postmark.toml", "s2-postmark.toml"])
def test_postmark_examples_run(tierlab_cmd: Callable[..., Ran], name: str) -> None:
    s = json.loads(ok(tierlab_cmd("run", EXAMPLES / name, "--json")).out)
    assert "postmark" in s["workload"]
    assert s["requests"] == s["reads"] + s["writes"] + s["deletes"]
    assert s["writes"] > 0 and s["deletes"] > 0 and s["reads"] > 0
    assert 0.0 < s["miss_ratio"] < 1.0
    top = s["tiers"][0]
    # Deletes are neither hits nor misses.
    assert top["hits"] + top["misses"] == s["reads"] + s["writes"]


def test_bonnie_read_first(tierlab_cmd: Callable[..., Ran], tmp_path: Path) -> None:
    """`read_first` reads the file in its first pass (S1's reproduction: the
    seeks start with the file's pages clean in the cache); it needs that pass."""
    base = '[workload]\ntype = "bonnie"\npreset = "s1"\nscale = 0.01\n[workload.bonnie]\n{}\n'
    tier = '[[tier]]\ntech = "DRAM-DDR3"\ncapacity = "1MiB"\n'
    runs = {}
    for name, keys in (("w", ""), ("r", "read_first = true")):
        f = tmp_path / f"{name}.toml"
        f.write_text(base.format(keys) + tier)
        r = tierlab_cmd("run", f, "--json")
        assert r.code == 0, r.err
        runs[name] = json.loads(r.out)
    pages = -(-round((1 << 30) * 0.01) // 4096)
    # The same requests; the first pass's `pages` writes became reads, each a
    # miss read from the store (a written page is allocated without one), and
    # the cache holds the same pages when the seeks start.
    assert runs["r"]["requests"] == runs["w"]["requests"]
    assert runs["r"]["backing"]["reads"] - runs["w"]["backing"]["reads"] == pages
    bad = tmp_path / "bad.toml"
    bad.write_text(base.format("read_first = true\nwrite_first = false") + tier)
    r = tierlab_cmd("run", bad)
    assert r.code == 2 and r.out == "" and "Traceback" not in r.err
    assert r.err_lines[0].startswith("error: workload.bonnie.read_first: needs the first pass")
