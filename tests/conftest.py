"""Shared fixtures: tiny traces written in the test's tmp_path, small configs,
and two ways to run the command line as a user would.

Traces are made here with numpy (seeded), never committed: a tiny
oracleGeneral file (24-byte little-endian records: u32 time in seconds, u64
object id, u32 size, i64 next-access) and the same requests as CSV.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"

ORACLE_RECORD = np.dtype(
    [("time", "<u4"), ("obj_id", "<u8"), ("obj_size", "<u4"), ("next_access", "<i8")]
)
assert ORACLE_RECORD.itemsize == 24

# The tiny trace: TINY_REQUESTS requests over TINY_KEYS keys, Zipf-like, seeded.
TINY_REQUESTS = 2_000
TINY_KEYS = 200


def next_access(keys: np.ndarray) -> np.ndarray:
    """libCacheSim's next-access virtual time as tierlab's converter writes it:
    the 1-based index of the key's next request, -1 when there is none."""
    out = np.full(keys.size, -1, dtype=np.int64)
    last: dict[int, int] = {}
    for i in range(keys.size - 1, -1, -1):
        k = int(keys[i])
        if k in last:
            out[i] = last[k] + 1
        last[k] = i
    return out


def write_oracle(
    path: Path,
    keys: Sequence[int] | np.ndarray,
    sizes: Sequence[int] | np.ndarray | int = 4096,
    times: Sequence[int] | np.ndarray | None = None,
) -> Path:
    """Writes an oracleGeneral file with correct next-access times."""
    k = np.asarray(keys, dtype=np.uint64)
    rec = np.zeros(k.size, dtype=ORACLE_RECORD)
    rec["time"] = np.arange(k.size) // 100 if times is None else np.asarray(times)
    rec["obj_id"] = k
    rec["obj_size"] = sizes
    rec["next_access"] = next_access(k)
    path.write_bytes(rec.tobytes())
    return path


def tiny_keys() -> np.ndarray:
    rng = np.random.default_rng(7)
    p = 1.0 / np.arange(1, TINY_KEYS + 1) ** 0.8
    ranks = rng.choice(TINY_KEYS, size=TINY_REQUESTS, p=p / p.sum())
    # Spread ids over the u64 range so nothing relies on small, dense ids.
    ids = (np.arange(1, TINY_KEYS + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)) | 1
    return ids[ranks]


def tiny_sizes(keys: np.ndarray) -> np.ndarray:
    """A fixed size per key, 512 B .. 16 KiB."""
    return (512 * (1 + (keys % np.uint64(32)))).astype(np.uint32)


@pytest.fixture
def make_oracle(tmp_path: Path) -> Callable[..., Path]:
    """``make_oracle(name, keys, sizes=4096, times=None)`` writes a trace in tmp_path."""

    def make(name: str, keys: Sequence[int] | np.ndarray, **kw: object) -> Path:
        return write_oracle(tmp_path / name, keys, **kw)  # type: ignore[arg-type]

    return make


@pytest.fixture
def oracle_trace(tmp_path: Path) -> Path:
    """The tiny trace as oracleGeneral: 2,000 requests, 200 keys, varied sizes."""
    keys = tiny_keys()
    return write_oracle(tmp_path / "tiny.oracleGeneral.bin", keys, tiny_sizes(keys))


@pytest.fixture
def csv_trace(tmp_path: Path) -> Path:
    """The same requests as ``oracle_trace``, as CSV ``time,key,size``."""
    keys = tiny_keys()
    sizes = tiny_sizes(keys)
    lines = [f"{i},{int(k)},{int(s)}" for i, (k, s) in enumerate(zip(keys, sizes, strict=True))]
    p = tmp_path / "tiny.csv"
    p.write_text("\n".join(lines) + "\n")
    return p


TWO_TIERS = """\
[hierarchy]
fill = "exclusive"
write = "write-back"

[[tier]]
name = "dram"
tech = "DRAM-DDR3"
capacity = "10%"
policy = "lru"

[[tier]]
name = "flash"
tech = "NAND-SLC"
capacity = "30%"
policy = { type = "clock", bits = 2 }

[backing]
tech = "HDD"

[run]
interval = 500
"""

ZIPF_WORKLOAD = """\
[workload]
type = "zipf"
alpha = 0.9
objects = 1000
requests = 5000
object_size = "4KiB"
write_ratio = 0.2
seed = 3
"""


@pytest.fixture
def write_config(tmp_path: Path) -> Callable[[str, str], Path]:
    """``write_config(text, name="config.toml")`` writes a TOML file in tmp_path."""

    def write(text: str, name: str = "config.toml") -> Path:
        p = tmp_path / name
        p.write_text(text)
        return p

    return write


@pytest.fixture
def tiers_config(write_config: Callable[[str, str], Path]) -> Path:
    """Two tiers and a disk, no [workload]: run it with --trace."""
    return write_config(TWO_TIERS, "tiers.toml")


@pytest.fixture
def zipf_config(write_config: Callable[[str, str], Path]) -> Path:
    """A small seeded Zipf workload (5,000 requests, 20% writes) over two tiers."""
    return write_config(ZIPF_WORKLOAD + "\n" + TWO_TIERS, "zipf.toml")


@pytest.fixture
def trace_config(write_config: Callable[[str, str], Path], oracle_trace: Path) -> Path:
    """Two tiers over the tiny oracle trace, given by a path relative to the config."""
    w = f'[workload]\ntype = "trace"\npath = "{oracle_trace.name}"\nformat = "oracle"\n\n'
    return write_config(w + TWO_TIERS, "trace.toml")


# --------------------------------------------------------------------------
# running the command line
# --------------------------------------------------------------------------


@dataclass
class Ran:
    code: int
    out: str
    err: str

    @property
    def err_lines(self) -> list[str]:
        return self.err.splitlines()


@contextmanager
def interruptible(
    argv: Sequence[str], cwd: Path | None = None, *, new_session: bool = False
) -> Iterator[subprocess.Popen[str]]:
    """Starts ``argv`` (stdout and stderr pipes) for a test that presses Ctrl-C, and
    kills it if it is still running when the test ends, failed or not (a leaked
    child's warnings would fail a later test).

    SIGINT reaches the child as in a terminal's foreground job, even when this suite
    runs in the background of a non-interactive shell (``make test &``): such a job
    inherits SIGINT ignored, an ignored signal stays ignored across exec, and Python
    then installs no KeyboardInterrupt handler, so Ctrl-C could not be tested (it
    failed a CI rehearsal that way). The child must not inherit the ignore: a
    handler, unlike an ignore, is reset to the default by exec. ``new_session``: the
    child leads its own process group, which ``os.killpg`` signals as a terminal's
    Ctrl-C does (the child's own children too)."""
    old = signal.getsignal(signal.SIGINT)
    if old == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        p = subprocess.Popen(
            list(argv),
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=new_session,
        )
    finally:
        if old == signal.SIG_IGN:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield p
    finally:
        if p.poll() is None:
            if new_session:
                os.killpg(p.pid, signal.SIGKILL)
            else:
                p.kill()
        # Also when the child ended before the test read its pipes: an
        # unclosed pipe's ResourceWarning failed the next test instead.
        p.communicate()


def tierlab_argv() -> list[str]:
    """The installed ``tierlab`` command, or the module when it is not on PATH."""
    exe = shutil.which("tierlab")
    return [exe] if exe else [sys.executable, "-m", "tierlab.cli"]


@pytest.fixture
def tierlab_cmd() -> Callable[..., Ran]:
    """``tierlab_cmd("run", "x.toml", cwd=..., columns=...)`` runs the real command in a
    subprocess (stdout a pipe, as in a script; ``columns`` sets the terminal width)."""

    def run(
        *args: object, cwd: Path | None = None, timeout: float = 120, columns: int | None = None
    ) -> Ran:
        env = dict(os.environ)
        env.pop("COLUMNS", None)
        if columns is not None:
            env["COLUMNS"] = str(columns)
        p = subprocess.run(
            [*tierlab_argv(), *map(str, args)],
            capture_output=True,
            text=True,
            cwd=cwd,
            timeout=timeout,
            env=env,
            stdin=subprocess.DEVNULL,
        )
        return Ran(p.returncode, p.stdout, p.stderr)

    return run


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., Ran]:
    """``cli("run", "x.toml")`` calls ``tierlab.cli.main`` in process."""
    from tierlab.cli import main

    def run(*args: object) -> Ran:
        capsys.readouterr()
        try:
            code = main([str(a) for a in args])
        except SystemExit as e:  # argparse: --help, usage errors
            code = e.code if isinstance(e.code, int) else 1
        c = capsys.readouterr()
        return Ran(code, c.out, c.err)

    return run
