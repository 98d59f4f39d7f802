"""Hostile traces: every reader keeps bounded memory and time.

A small file may not make a reader hold or produce without bound: a line
longer than the line limit (``TIERLAB_MAX_LINE``, 1 MiB) and a record
covering more than the record limit (``TIERLAB_MAX_RECORD``, 4 GiB) stop
with exit 2, one line naming the file and where in it. Each case runs in a
subprocess under a deadline, its peak resident size measured.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from measured import MAX_RSS_MIB, Measured, assert_one_line_error, run_measured

STRACE_OPEN = '4242  1700000000.123456 openat(AT_FDCWD, "a", O_RDWR) = 3\n'


def bounded(r: Measured, *needles: str) -> str:
    line = assert_one_line_error(r, *needles)
    assert r.rss_mib < MAX_RSS_MIB, f"peak resident size {r.rss_mib:.0f} MiB"
    return line


def test_msr_record_of_huge_size_is_refused(tmp_path: Path) -> None:
    """A 56-byte MSR file whose size field is near 2^64 ran `trace stats` forever."""
    t = tmp_path / "huge.csv"
    t.write_text("128166372003061629,hm,1,Read,0,18446744073709551000,100\n")
    for cmd in (["trace", "stats", t], ["trace", "convert", t, tmp_path / "o.bin"]):
        r = run_measured(cmd, timeout=20)
        bounded(r, str(t), ":1:", "TIERLAB_MAX_RECORD", "more than the 4 GiB limit")
    assert not (tmp_path / "o.bin").exists()


def test_strace_read_of_4_tib_is_refused(tmp_path: Path) -> None:
    """A 113-byte strace file with a 4 TB `read` aborted the process
    (a failed allocation, SIGABRT)."""
    t = tmp_path / "huge.strace"
    t.write_text(STRACE_OPEN + '4242  1700000000.123460 read(3, ""..., 4096) = 4398046511104\n')
    bounded(run_measured(["trace", "stats", t], timeout=20), str(t), ":2:", "limit")


def test_strace_large_reads_hold_constant_memory(tmp_path: Path) -> None:
    """A call under the limit still becomes every page's request, without
    holding them all at once: 1 GiB at 4 KiB pages is 262,144 requests, and
    with 64-byte pages 16,777,216 (a billion bytes of requests if queued)."""
    t = tmp_path / "big.strace"
    t.write_text(STRACE_OPEN + '4242  1700000000.123460 read(3, ""..., 4096) = 1073741824\n')
    r = run_measured(["trace", "stats", t, "--json"], timeout=60)
    assert r.code == 0, r.err
    assert '"requests": 262144' in r.out.replace(" ", "").replace(":", ": "), r.out
    cfg = tmp_path / "c.toml"
    cfg.write_text(
        f'[workload]\ntype = "trace"\npath = "{t.name}"\nformat = "strace"\n'
        'page_size = 64\n[[tier]]\nname = "d"\ntech = "DRAM-DDR3"\ncapacity = "1MiB"\n'
        'policy = "fifo"\n'
    )
    r = run_measured(["run", cfg, "--json"], timeout=120, cwd=tmp_path)
    assert r.code == 0, r.err
    assert '"requests": 16777216' in r.out, r.out[:400]
    assert r.rss_mib < MAX_RSS_MIB, f"peak resident size {r.rss_mib:.0f} MiB"


def test_strace_sparse_write_then_unlink_is_refused(tmp_path: Path) -> None:
    """A one-byte write at offset 2^50 made the file's extent 2^50 bytes,
    and its unlink 2^38 deletes."""
    t = tmp_path / "sparse.strace"
    t.write_text(
        STRACE_OPEN
        + '4242  1700000000.123460 pwrite64(3, "x", 1, 1125899906842624) = 1\n'
        + '4242  1700000000.123470 unlink("a") = 0\n'
    )
    bounded(run_measured(["trace", "stats", t], timeout=20), str(t), ":3:", "sparse")


def test_lackey_access_of_huge_size_is_refused(tmp_path: Path) -> None:
    t = tmp_path / "huge.lackey"
    t.write_text("==1== Lackey\n L 7ff000,99999999999999\n")
    bounded(run_measured(["trace", "stats", t], timeout=20), str(t), ":2:", "limit")


def test_dev_zero_as_csv_is_refused() -> None:
    """`trace stats /dev/zero --format csv` aborted on a failed allocation."""
    r = run_measured(["trace", "stats", "/dev/zero", "--format", "csv"], timeout=20)
    bounded(r, "/dev/zero", "not a regular file")


def test_fifo_as_a_trace_is_refused_at_once(tmp_path: Path) -> None:
    """A FIFO as a trace blocked forever (read once for its format, then
    reopened) and ignored SIGINT; /dev/stdin was "the trace holds no
    requests"."""
    fifo = tmp_path / "t.fifo"
    os.mkfifo(fifo)
    bounded(run_measured(["trace", "stats", fifo], timeout=20), str(fifo), "not a regular file")
    cfg = tmp_path / "c.toml"
    cfg.write_text(
        f'[workload]\ntype = "trace"\npath = "{fifo}"\n[[tier]]\nname = "d"\n'
        'tech = "DRAM-DDR3"\ncapacity = "1MiB"\npolicy = "lru"\n'
    )
    bounded(run_measured(["run", cfg], timeout=20), str(fifo), "not a regular file")
    r = run_measured(["trace", "stats", "/dev/stdin"], timeout=20, stdin=subprocess.PIPE)
    bounded(r, "/dev/stdin", "not a regular file")


def test_long_line_in_every_text_format_is_refused(tmp_path: Path) -> None:
    for fmt in ("csv", "msr", "twitter", "strace", "lackey"):
        t = tmp_path / f"long.{fmt}"
        t.write_bytes(b"\n" + b"9" * (3 << 20) + b"\n")
        r = run_measured(["trace", "stats", t, "--format", fmt], timeout=20)
        bounded(r, str(t), "byte offset 1", "line 2 is longer", "TIERLAB_MAX_LINE")


@pytest.mark.skipif(shutil.which("zstd") is None, reason="needs the zstd command")
def test_small_zst_expanding_to_a_huge_line_is_refused(tmp_path: Path) -> None:
    """A small `.zst` whose one line expands to 3 GB aborted the process."""
    t = tmp_path / "bomb.csv.zst"
    src = tmp_path / "line"
    with src.open("wb") as f:
        f.write(b"7" * (64 << 20))
    subprocess.run(["zstd", "-q", "-19", str(src), "-o", str(t)], check=True)
    assert t.stat().st_size < 64 << 10
    bounded(run_measured(["trace", "stats", t], timeout=30), str(t), "line 1 is longer")


def test_the_limits_can_be_raised_and_lowered(tmp_path: Path) -> None:
    t = tmp_path / "t.csv"
    t.write_text("0,1,10\n1,1," + "8192\n" + "2," + " " * 200 + "3,10\n")
    # The defaults read it.
    assert run_measured(["trace", "stats", t]).code == 0
    bounded(
        run_measured(["trace", "stats", t], env={"TIERLAB_MAX_RECORD": "4KiB"}),
        str(t),
        ":2:",
        "8192 bytes",
    )
    bounded(
        run_measured(["trace", "stats", t], env={"TIERLAB_MAX_LINE": "100"}),
        str(t),
        "line 3 is longer than the 100 B limit",
    )
    bounded(
        run_measured(["trace", "stats", t], env={"TIERLAB_MAX_LINE": "lots" * 1000}),
        "TIERLAB_MAX_LINE",
        "is not a size",
    )
    big = tmp_path / "huge.csv"
    big.write_text("128166372003061629,hm,1,Read,0,8589934592,100\n")
    r = run_measured(
        ["trace", "stats", big, "--json"], env={"TIERLAB_MAX_RECORD": "8GiB"}, timeout=60
    )
    assert r.code == 0, r.err
    assert '"requests": 2097152' in r.out, r.out


def test_corrupt_zstd_names_the_offset(tmp_path: Path) -> None:
    """A corrupt zstd frame gave the decoder's message and no offset; a
    damaged block of a frame without a checksum (as tierlab wrote them)
    decoded into other records without a word."""
    src = tmp_path / "t.csv"
    src.write_text("".join(f"{i},{i * 7919 % 1000},4096\n" for i in range(200_000)))
    z = tmp_path / "t.csv.zst"
    r = run_measured(["trace", "convert", src, z])
    assert r.code == 0, r.err
    data = bytearray(z.read_bytes())
    mid = len(data) // 2
    data[mid : mid + 64] = b"\xff" * 64
    z.write_bytes(bytes(data))
    bounded(run_measured(["trace", "stats", z, "--format", "csv"]), str(z), "byte offset")
    z.write_bytes(bytes(data[: len(data) // 3]))
    bounded(
        run_measured(["trace", "stats", z, "--format", "csv"]),
        str(z),
        "zstd data unreadable after decompressed byte offset",
        "incomplete frame",
    )


TRUNCATE_WHILE_READING = """
import os, sys
import numpy as np
import tierlab
from tierlab.errors import TraceError

path = sys.argv[1]
rec = np.zeros(3_000_000, dtype=[("t", "<u4"), ("k", "<u8"), ("s", "<u4"), ("n", "<i8")])
rec["k"] = np.arange(len(rec))
rec["s"] = 1
rec["n"] = -1
rec.tofile(path)

def cut(done, total):
    # The first report comes after a million requests: the reader is past
    # them, the rest of the file still to read.
    os.truncate(path, 1_500_000 * 24)

try:
    tierlab.trace_stats(path, "oracle", progress=cut)
except TraceError as e:
    print(e)
    sys.exit(2)
"""


def test_oracle_file_truncated_while_read_names_the_file(tmp_path: Path) -> None:
    """A trace truncated under a running (memory-mapped) read killed the
    process with SIGBUS and no message; read, it is an error naming the
    file and where it now ends."""
    t = tmp_path / "t.bin"
    r = subprocess.run(
        [sys.executable, "-c", TRUNCATE_WHILE_READING, str(t)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr[-2000:])
    assert r.stdout.strip() == (
        f"{t}: the file ends at byte offset 36000000, but it was 72000000 bytes when it "
        "was opened: it was truncated while being read"
    ), r.stdout
