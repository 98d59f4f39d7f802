"""Trace formats: each reader rejects malformed input with the file and line,
`--skip-bad` passes over bad records and reports how many, zstd-compressed
input is read directly (`make test` installs the zstd command the tests
compress with), and `trace convert` turns any of them into oracleGeneral."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

GOOD = {
    "csv": "1,10,4096\n2,11,4096\n3,10,4096\n",
    "msr": "128166372003061629,hm,1,Read,4096,8192,100\n128166372003061639,hm,1,Write,0,10,50\n",
    "twitter": "0,k1,10,100,1,get,0\n1,k1,10,200,1,set,3600\n2,k2,5,0,2,delete,0\n",
    "strace": '1 0.5 openat(AT_FDCWD, "/f", O_RDWR|O_CREAT, 0644) = 3\n'
    '1 0.6 write(3, ""..., 8192) = 8192\n',
    "lackey": "==1== Lackey\n L 1000,8\n S 2000,8\n",
}
# A malformed record on line 2 of each format, and what the error says of it.
BAD = {
    "csv": ("1,10,4096\n2,x,4096\n3,11,4096\n", 'column 2 (key) is "x"'),
    "msr": (
        "128166372003061629,hm,1,Read,4096,8192,100\n1,hm,1,Erase,0,1,1\n"
        "128166372003061639,hm,1,Write,0,10,50\n",
        'field 4 (Type) is "Erase"',
    ),
    "twitter": ("0,k1,10,100,1,get,0\n1,k1,ten,1,1,get,0\n2,k2,5,0,2,delete,0\n", "field 3"),
    "strace": (
        '1 0.5 openat(AT_FDCWD, "/f", O_RDWR|O_CREAT, 0644) = 3\ngarbage\n'
        '1 0.6 write(3, ""..., 8192) = 8192\n',
        "expected `PID SECONDS.MICROS call(...)`",
    ),
    "lackey": (" L 1000,8\n Q 1,1\n S 2000,8\n", "is not a lackey record"),
}
EXPECT = {"csv": 3, "msr": 3, "twitter": 3, "strace": 2, "lackey": 2}


def cli(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tierlab.cli", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=REPO,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )


def stats(path: Path, fmt: str, *extra: str) -> dict[str, int]:
    r = cli("trace", "stats", path, "--format", fmt, "--json", *extra)
    assert r.returncode == 0, r.stderr
    return dict(json.loads(r.stdout))


@pytest.mark.parametrize("fmt", sorted(GOOD))
def test_reads_each_format(tmp_path: Path, fmt: str) -> None:
    p = tmp_path / f"t.{fmt}"
    p.write_text(GOOD[fmt])
    assert stats(p, fmt)["requests"] == EXPECT[fmt]


@pytest.mark.parametrize("fmt", sorted(BAD))
def test_malformed_record_names_file_and_line(tmp_path: Path, fmt: str) -> None:
    text, says = BAD[fmt]
    p = tmp_path / f"bad.{fmt}"
    p.write_text(text)
    r = cli("trace", "stats", p, "--format", fmt)
    assert r.returncode == 2
    first = r.stderr.splitlines()[0]
    assert first.startswith(f"error: {p}:2: "), first
    assert says in first, first
    assert "Traceback" not in r.stderr and r.stdout == ""


@pytest.mark.parametrize("fmt", sorted(BAD))
def test_skip_bad_counts_what_it_skipped(tmp_path: Path, fmt: str) -> None:
    text, _ = BAD[fmt]
    p = tmp_path / f"bad.{fmt}"
    p.write_text(text)
    r = cli("trace", "stats", p, "--format", fmt, "--json", "--skip-bad")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["skipped"] == 1
    assert "note: skipped 1 malformed records" in r.stderr
    run = cli(
        "run", "examples/quickstart.toml", "--trace", p, "--format", fmt, "--skip-bad", "--json"
    )
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["skipped_records"] == 1


@pytest.mark.parametrize("fmt", ["csv", "strace", "oracle"])
def test_zstd_input_is_read_directly(tmp_path: Path, fmt: str) -> None:
    if fmt == "oracle":
        plain = REPO / "tests/data/zipf-small.oracleGeneral.bin"
    else:
        plain = tmp_path / f"t.{fmt}"
        plain.write_text(GOOD[fmt])
    z = tmp_path / (plain.name + ".zst")
    subprocess.run(["zstd", "-q", "-f", str(plain), "-o", str(z)], check=True)
    # The format is guessed from the name with .zst stripped.
    r = cli("trace", "stats", z, "--json")
    assert r.returncode == 0, r.stderr
    r2 = cli("trace", "stats", plain, "--json")
    assert json.loads(r.stdout) == json.loads(r2.stdout)


def test_truncated_zstd_oracle_is_an_error(tmp_path: Path) -> None:
    z = tmp_path / "t.oracleGeneral.bin.zst"
    src = REPO / "tests/data/zipf-small.oracleGeneral.bin"
    subprocess.run(["zstd", "-q", "-f", str(src), "-o", str(z)], check=True)
    z.write_bytes(z.read_bytes()[:1000])
    r = cli("trace", "stats", z)
    assert r.returncode == 2
    assert r.stderr.startswith(f"error: {z}: ")


@pytest.mark.parametrize("fmt", sorted(GOOD))
def test_convert_any_format_to_oracle(tmp_path: Path, fmt: str) -> None:
    p = tmp_path / f"t.{fmt}"
    p.write_text(GOOD[fmt])
    out = tmp_path / "t.oracleGeneral.bin"
    r = cli("trace", "convert", p, out, "--format", fmt)
    assert r.returncode == 0, r.stderr
    back = stats(out, "oracle")
    src = stats(p, fmt)
    assert back["requests"] == src["requests"]
    assert back["unique_keys"] == src["unique_keys"]
    assert back["bytes_requested"] == src["bytes_requested"]


def test_convert_to_csv_keeps_operations(tmp_path: Path) -> None:
    p = tmp_path / "t.twitter"
    p.write_text(GOOD["twitter"])
    out = tmp_path / "t.csv"
    r = cli("trace", "convert", p, out, "--format", "twitter")
    assert r.returncode == 0, r.stderr
    assert "no operation field" not in r.stderr
    back = stats(out, "csv")
    assert (back["reads"], back["writes"], back["deletes"]) == (1, 1, 1)
    # --to overrides the name.
    r = cli("trace", "convert", p, tmp_path / "t.out", "--format", "twitter", "--to", "csv")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "t.out").read_text().splitlines()[0] == (out.read_text().splitlines()[0])
