"""Running the command line under a deadline, with its peak resident size.

The hostile-input tests and the fuzzers run each case in a subprocess and
bound it two ways: a timeout (a case whose input is small and whose
``run.max_requests`` is capped must end quickly; a timeout is a failure,
not a skip) and the child's peak resident set, read from ``wait4`` when it
ends. Resident size, not an address-space limit: Dask and the allocator
reserve address space they never touch.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from conftest import tierlab_argv

# The largest peak resident size a bounded case may reach: the interpreter,
# numpy and the engine's buffers take about 100 MiB.
MAX_RSS_MIB = 512


@dataclass
class Measured:
    code: int
    out: str
    err: str
    #: Peak resident size of the child, MiB.
    rss_mib: float
    seconds: float
    timed_out: bool

    @property
    def err_lines(self) -> list[str]:
        return self.err.splitlines()


def run_measured(
    args: Sequence[object],
    *,
    timeout: float = 30,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    stdin: int | None = subprocess.DEVNULL,
    address_space_mib: int | None = None,
) -> Measured:
    """Runs ``tierlab ARGS``; kills it (and its process group) at ``timeout``.
    ``address_space_mib`` limits the child's address space (RLIMIT_AS), for
    the cases that check what a failed allocation does."""
    full_env = dict(os.environ)
    full_env.pop("COLUMNS", None)
    if env:
        full_env.update(env)
    t0 = time.monotonic()
    p = subprocess.Popen(
        [*tierlab_argv(), *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=stdin,
        cwd=cwd,
        env=full_env,
        start_new_session=True,
        preexec_fn=None if address_space_mib is None else _limit_as(address_space_mib),
    )
    if p.stdin is not None:
        p.stdin.close()  # a pipe with no writer: the child sees its end
    # Read both pipes in threads and reap the child with wait4, which
    # gives its peak resident size (Popen's own wait would reap it first).
    chunks: dict[str, bytes] = {}

    def drain(name: str, f: IO[bytes]) -> None:
        with f:
            chunks[name] = f.read()

    readers = [
        threading.Thread(target=drain, args=(n, f), daemon=True)
        for n, f in (("out", p.stdout), ("err", p.stderr))
        if f is not None
    ]
    for t in readers:
        t.start()
    timed_out = False
    deadline = t0 + timeout
    for t in readers:
        t.join(max(0.0, deadline - time.monotonic()))
        if t.is_alive():
            timed_out = True
            break
    if timed_out:
        # The whole group: the child's own children (a traced program, a
        # Dask worker) too.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGKILL)
        for t in readers:
            t.join()
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    return Measured(
        p.returncode,
        chunks.get("out", b"").decode(errors="replace"),
        chunks.get("err", b"").decode(errors="replace"),
        usage.ru_maxrss / 1024,  # KiB on Linux
        time.monotonic() - t0,
        timed_out,
    )


def _limit_as(mib: int) -> Callable[[], None]:
    def limit() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (mib << 20, mib << 20))

    return limit


def assert_one_line_error(r: Measured, *needles: str) -> str:
    """Exit 2, one ``error:`` line (and at most one ``hint:``), no traceback,
    nothing on stdout; returns the error line."""
    assert not r.timed_out, f"timed out after {r.seconds:.1f} s\nstderr:\n{r.err[-2000:]}"
    assert "Traceback" not in r.err, r.err[-3000:]
    assert "panicked" not in r.err, r.err[-3000:]
    assert r.code == 2, f"exit {r.code}\nstdout:\n{r.out[-2000:]}\nstderr:\n{r.err[-2000:]}"
    assert r.out == "", r.out[-2000:]
    lines = r.err_lines
    assert len(lines) in (1, 2), r.err[-3000:]
    assert lines[0].startswith("error: "), r.err
    if len(lines) == 2:
        assert lines[1].startswith("hint: "), r.err
    for n in needles:
        assert n in r.err, f"{n!r} not in:\n{r.err}"
    return lines[0]
