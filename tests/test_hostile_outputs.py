"""Outputs are written whole or not at all; stores are never mixed or lost.

Every writer goes through one helper (``tierlab._atomic``: a hidden file
beside the output, fsync, rename): on a full or read-only file system an
existing output stays as it was, no partial file is left, and the one
error line names the output. The full-disk cases run on a small tmpfs,
mounted where the machine allows it (as root), and are skipped with the
reason elsewhere.
"""

from __future__ import annotations

import multiprocessing
import os
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from measured import assert_one_line_error, run_measured

ZIPF = """\
[workload]
type = "zipf"
alpha = 0.9
objects = 500
requests = 3000
object_size = "4KiB"
seed = 3

[[tier]]
name = "dram"
tech = "DRAM-DDR3"
capacity = "256KiB"
policy = "lru"

[run]
interval = 100
"""

EXPERIMENT = """\
[experiment]
name = "{name}"

[base.workload]
type = "zipf"
alpha = 0.9
objects = 500
requests = 2000
seed = 3

[[base.tier]]
name = "dram"
tech = "DRAM-DDR3"
capacity = "256KiB"
policy = "lru"

[[axis]]
key = "{axis}"
values = {values}
"""


def _mount(folder: Path, size: str) -> str | None:
    """Mounts a tmpfs of ``size`` on ``folder``; None, or why it could not."""
    if os.geteuid() != 0:
        return "mounting a tmpfs needs root"
    folder.mkdir(parents=True, exist_ok=True)
    r = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
        capture_output=True,
        text=True,
    )
    return None if r.returncode == 0 else f"cannot mount a tmpfs: {r.stderr.strip()}"


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Path]:
    """A 2 MiB tmpfs, unmounted after the test."""
    mnt = tmp_path / "mnt"
    why = _mount(mnt, "2m")
    if why:
        pytest.skip(why)
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def fill(folder: Path) -> None:
    """Fills the file system of ``folder`` to the last byte."""
    fd = os.open(folder / "filler", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        for chunk in (65536, 1):
            try:
                while True:
                    os.write(fd, b"\0" * chunk)
            except OSError:
                pass
    finally:
        os.close(fd)


def no_partial_files(folder: Path) -> None:
    left = [p.name for p in folder.iterdir() if ".part" in p.name or ".new" in p.name]
    assert not left, left


def test_full_disk_keeps_existing_outputs(tmp_path: Path, small_fs: Path) -> None:
    """`run --timeline`, `mrc -o` on a full disk replaced an existing file by
    a truncated copy, and the message named no file."""
    cfg = tmp_path / "c.toml"
    cfg.write_text(ZIPF)
    timeline = small_fs / "timeline.csv"
    curve = small_fs / "curve.csv"
    for p in (timeline, curve):
        p.write_text("precious\n" * 100)
    fill(small_fs)
    r = run_measured(["run", cfg, "--timeline", timeline, "--json"])
    assert_one_line_error(r, str(timeline), "No space left on device")
    r = run_measured(["mrc", cfg, "-o", curve, "--no-plot"])
    assert_one_line_error(r, str(curve), "No space left on device")
    for p in (timeline, curve):
        assert p.read_text() == "precious\n" * 100
    no_partial_files(small_fs)


def test_read_only_folder_names_the_output(tmp_path: Path, small_fs: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text(ZIPF)
    out = small_fs / "curve.csv"
    out.write_text("precious\n")
    subprocess.run(["mount", "-o", "remount,ro", str(small_fs)], check=True)
    r = run_measured(["mrc", cfg, "-o", out, "--no-plot"])
    assert_one_line_error(r, str(out), "Read-only file system")
    assert out.read_text() == "precious\n"


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store of one small sweep (two points)."""
    d = tmp_path_factory.mktemp("store")
    exp = d / "e.toml"
    exp.write_text(EXPERIMENT.format(name="demo", axis="tier[0].policy", values='["lru", "fifo"]'))
    r = run_measured(["sweep", exp, "--store", d / "r.sqlite", "--workers", "1"], timeout=180)
    assert r.code == 0, r.err
    return d / "r.sqlite"


def copy_store(store: Path, to: Path) -> Path:
    src = sqlite3.connect(store)
    dst = sqlite3.connect(to)
    src.backup(dst)
    src.close()
    dst.close()
    return to


def test_export_and_report_on_a_full_disk(store: Path, small_fs: Path) -> None:
    """`export -o` replaced an existing file by a truncated one; `report`
    left a 0-byte PNG."""
    out = small_fs / "e.csv"
    out.write_text("precious\n")
    fill(small_fs)
    assert_one_line_error(run_measured(["export", store, "-o", out]), str(out))
    assert out.read_text() == "precious\n"
    (small_fs / "filler").unlink()
    (small_fs / "rep").mkdir()
    fill(small_fs)
    r = run_measured(["report", store, "-o", small_fs / "rep"], timeout=120)
    assert_one_line_error(r, str(small_fs / "rep"))
    assert not [p for p in (small_fs / "rep").iterdir() if p.stat().st_size == 0]
    no_partial_files(small_fs / "rep")


def test_sweep_whose_store_fills_the_disk(small_fs: Path, tmp_path: Path) -> None:
    """A sweep whose store filled the disk ended in a traceback."""
    exp = tmp_path / "e.toml"
    exp.write_text(EXPERIMENT.format(name="full", axis="tier[0].policy", values='["lru"]'))
    fill(small_fs)
    r = run_measured(
        ["sweep", exp, "--store", small_fs / "r.sqlite", "--workers", "1"], timeout=180
    )
    assert_one_line_error(r, str(small_fs / "r.sqlite"))


def test_report_refuses_to_overwrite_its_store(store: Path, tmp_path: Path) -> None:
    """`report STORE -o DIR` with DIR holding a file of the store's name
    overwrote the store with HTML."""
    d = tmp_path / "rep"
    d.mkdir()
    named = copy_store(store, d / "demo.html")
    before = named.read_bytes()
    r = run_measured(["report", named, "-o", d], timeout=120)
    assert_one_line_error(r, str(named), "is the results store")
    assert named.read_bytes() == before


def _open_new_store(path: str) -> str:
    from tierlab.store import Store

    try:
        Store(path).close()
        return "ok"
    except Exception as e:  # noqa: BLE001 - the test reports what any attempt raised
        return f"{type(e).__name__}: {e}"


def test_two_sweeps_creating_one_store_at_once(tmp_path: Path) -> None:
    """Two sweeps starting at once on a new store raced (`UNIQUE constraint
    failed: meta.key` in about 30% of tries)."""
    # Spawned, not forked: a fork copies the test process's other threads'
    # locks (an in-process sweep's pool, held at the moment of the fork), and
    # a forked worker once waited on one of them for ever (the suite hung).
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(4) as pool:
        for i in range(15):
            p = str(tmp_path / f"s{i}.sqlite")
            got = pool.map(_open_new_store, [p] * 4)
            assert got == ["ok"] * 4, got
    no_partial_files(tmp_path)


def test_store_of_another_experiment_with_the_same_name(store: Path, tmp_path: Path) -> None:
    """A store of another experiment with the same name but other axes was
    merged silently (mixed rows, lost axis columns)."""
    s = copy_store(store, tmp_path / "r.sqlite")
    exp = tmp_path / "other.toml"
    exp.write_text(
        EXPERIMENT.format(name="demo", axis="tier[0].capacity", values='["128KiB", "512KiB"]')
    )
    r = run_measured(["sweep", exp, "--store", s, "--workers", "1"], timeout=180)
    assert_one_line_error(
        r, "another experiment named 'demo'", "tier[0].policy", "tier[0].capacity"
    )


@pytest.mark.parametrize(
    ("column", "value"),
    [("metrics", b"{not json"), ("labels", b'{"tier[0].policy": "\xff\xfe"}')],
)
def test_damaged_rows_are_one_line_naming_the_point(
    store: Path, tmp_path: Path, column: str, value: bytes
) -> None:
    """Damaged rows (bad JSON, bad UTF-8) gave tracebacks in export, report
    and sweep --dry-run."""
    s = copy_store(store, tmp_path / "r.sqlite")
    db = sqlite3.connect(s)
    with db:
        db.execute(f"UPDATE runs SET {column} = CAST(? AS TEXT) WHERE point = 1", (value,))
    db.close()
    exp = tmp_path / "e.toml"
    exp.write_text(EXPERIMENT.format(name="demo", axis="tier[0].policy", values='["lru", "fifo"]'))
    for args in (
        ["export", s, "-o", tmp_path / "x.csv"],
        ["report", s, "-o", tmp_path / "rep"],
        ["sweep", exp, "--store", s, "--dry-run"],
    ):
        r = run_measured(args, timeout=120)
        assert_one_line_error(r, str(s), "point 1 of experiment 'demo'", column)


def test_empty_store_file_is_refused(tmp_path: Path) -> None:
    """A 0-byte store was accepted by a real sweep."""
    s = tmp_path / "r.sqlite"
    s.write_bytes(b"")
    exp = tmp_path / "e.toml"
    exp.write_text(EXPERIMENT.format(name="demo", axis="tier[0].policy", values='["lru"]'))
    r = run_measured(["sweep", exp, "--store", s, "--workers", "1"], timeout=120)
    assert_one_line_error(r, str(s), "an empty file")
    assert s.read_bytes() == b""


def test_capture_refuses_an_output_the_program_reads(tmp_path: Path) -> None:
    """`capture files -o t.csv -- sh -c "cat t.csv"` overwrote the file the
    traced program reads."""
    t = tmp_path / "t.csv"
    t.write_text("precious\n")
    r = run_measured(
        ["capture", "files", "-o", "t.csv", "--", "sh", "-c", "cat t.csv"], cwd=tmp_path
    )
    assert_one_line_error(r, "t.csv", "names it")
    assert t.read_text() == "precious\n"


@pytest.mark.skipif(not os.path.exists("/usr/bin/strace"), reason="needs strace")
def test_capture_on_a_full_disk_says_so(tmp_path: Path, small_fs: Path) -> None:
    """`capture` on a full disk blamed the tracer."""
    fill(small_fs)
    out = small_fs / "t.strace"
    r = run_measured(["capture", "files", "-o", out, "--", "ls", str(tmp_path)], timeout=60)
    # The program's own output and strace's complaint come first: the
    # capture's verdict is the last line.
    assert r.code == 2 and "Traceback" not in r.err, r.err
    line = r.err_lines[-1]
    assert line.startswith("error: ") and str(small_fs) in line and "no space left" in line, r.err
    assert "tracer logged nothing" not in line and "cannot start" not in line
