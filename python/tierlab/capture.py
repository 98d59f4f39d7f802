"""Capturing real programs as traces: file I/O under strace, memory accesses
under Valgrind's lackey tool.

The tracer writes its text log; the engine's strace and lackey readers turn
it into page- (or line-) granular requests. Name the output ``X.strace`` /
``X.lackey`` to keep that log as the trace, with reads, writes and deletes
intact (``tierlab run CONFIG --trace X.strace`` reads it directly); any other
name is converted to oracleGeneral, which has no operation field (writes and
deletes become reads, and the CLI says so).
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tierlab import _core
from tierlab.api import output_problem, trace_convert, trace_stats
from tierlab.config import to_json
from tierlab.errors import ConfigError, TierlabError, TraceError


@dataclass
class Capture:
    """What a capture produced."""

    output: Path
    #: The program's exit status (the capture of a program that ran and
    #: failed still stands; one that could not start is an error).
    exit_code: int
    #: Stats of the captured requests, as ``tierlab.trace_stats`` gives them.
    stats: dict[str, Any]
    #: The capture stopped the program at ``max_requests`` (then
    #: ``exit_code`` is the signal's, negative).
    stopped: bool = False


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise TierlabError(
            f"{name} is not installed\nhint: apt-get install {name} "
            "(the Makefile's `make deps` installs it)"
        )
    return path


def _checked(cmd: Sequence[str], out: str | os.PathLike[str], kind: str) -> Path:
    """OUT as a path, once the command and OUT are fit for a capture: a
    command to run that exists, and an output it does not name."""
    if not cmd:
        raise TierlabError(
            f"no command to capture\nhint: tierlab capture {kind} -o OUT -- CMD ARGS"
        )
    out = Path(out)
    problem = output_problem(out)
    if problem:
        raise TierlabError(problem)
    if shutil.which(cmd[0]) is None:
        # Checked here: the tracer's own message would come first, and ours
        # could only say that it logged nothing.
        raise TierlabError(f"{cmd[0]}: no such program")
    named = _named_in(cmd, out)
    if named is not None:
        raise TierlabError(
            f"{out}: the traced command names it ({named!r}); the capture would write over "
            "what the program reads: write the trace to another file"
        )
    return out


def _capture(
    fmt: str,
    tracer: Callable[[Path], list[str]],
    cmd: Sequence[str],
    out: str | os.PathLike[str],
    options: dict[str, Any],
) -> Capture:
    """Runs ``tracer(log) + cmd``, then reads the tracer's log as a trace."""
    out = _checked(cmd, out, FMT_KIND[fmt])
    keep = out.name.endswith(f".{fmt}")
    if keep and out.exists() and not out.is_file():
        # The log is read back once the program ends, and renamed over OUT:
        # neither works with a FIFO or a device.
        raise TierlabError(f"{out}: not a regular file; the tracer's log is kept as a file")
    # The tracer logs into a new file (beside OUT when the log is kept, to
    # be renamed over it): a capture that fails leaves OUT as it was.
    raw = _new_file(out.parent if keep else Path(tempfile.gettempdir()), out.name, fmt)
    kept = False
    try:
        try:
            proc = subprocess.run([*tracer(raw), *cmd], check=False)
        except FileNotFoundError as e:
            raise TierlabError(f"{e.filename}: no such program") from None
        # A program that could not start (`sh -c nosuch`) leaves a log of its
        # wrapper's few requests: an error, not a short trace (the rule,
        # from the status and the log's execs, is the engine's).
        failure = _core.capture_start_failure(fmt, str(raw), proc.returncode)
        if failure and not _full(raw.parent):
            raise TierlabError(f"{shlex.join(cmd)}: {failure}")
        # A full disk cuts the tracer's log short: say so, rather than blame
        # the tracer or read a partial log as the whole trace.
        if _full(raw.parent):
            raise TierlabError(
                f"{raw.parent}: no space left on the device while the tracer wrote its "
                "log; nothing was captured (free some space, or capture to another "
                "folder with -o)"
            )
        if raw.stat().st_size == 0:
            raise TierlabError(f"{cmd[0]}: the tracer logged nothing (exit {proc.returncode})")
        workload = {"workload": {"type": "trace", "path": str(raw), "format": fmt, **options}}
        try:
            stats = trace_stats(workload) if keep else trace_convert(workload, out)
        except TraceError as e:
            # The program ran, perhaps for long: its log is kept for a look
            # (at OUT when OUT is the log), and the message names where.
            log = out if keep else raw
            if keep:
                _put(raw, out)
            kept = True
            hint = f"the tracer's log is kept at {log}"
            if str(raw) in str(e):  # the log did not read (not OUT that failed)
                hint += "; --skip-bad reads past bad lines"
            msg = str(e).replace(str(raw), str(log))
            raise TraceError(f"{msg}\nhint: {hint}") from None
        if keep:
            _put(raw, out)
        return Capture(output=out, exit_code=proc.returncode, stats=stats)
    finally:
        if not kept:
            raw.unlink(missing_ok=True)


def _full(folder: Path) -> bool:
    """Whether the file system of ``folder`` has no room left for a log
    line (less than one 4 KiB block free to an unprivileged writer)."""
    try:
        st = os.statvfs(folder)
    except OSError:
        return False
    return st.f_bavail * st.f_frsize < 4096


def _named_in(cmd: Sequence[str], out: Path) -> str | None:
    """The word of the traced command that names ``out``, if one does:
    an argument, or a word of one (``sh -c "cat t.csv"``)."""

    target = os.path.abspath(out)
    for arg in cmd[1:]:
        try:
            words = shlex.split(arg)
        except ValueError:
            words = arg.split()
        for w in {arg, *words}:
            if w and os.path.abspath(w) == target:
                return w
    return None


def _put(raw: Path, out: Path) -> None:
    """Renames the log over OUT, with the permissions OUT had."""
    if out.exists():
        shutil.copymode(out, raw)
    os.replace(raw, out)


def _new_file(folder: Path, name: str, fmt: str) -> Path:
    """Creates an empty file that did not exist in ``folder``, hidden, with
    the permissions a new file gets (``mkstemp``'s are 0600)."""
    for n in range(100):
        p = folder / f".{name}.tierlab-{os.getpid()}-{n}.{fmt}.part"
        try:
            os.close(os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
            return p
        except FileExistsError:
            continue
    raise TierlabError(f"{folder}: cannot create a file for the tracer's log")


FMT_KIND = {"strace": "files", "lackey": "memory"}


def check_unit(value: object, label: str, fmt: str) -> None:
    """Refuses a request size the engine's ``fmt`` reader would refuse,
    before the program runs (it may run for minutes) rather than when its
    log is read. ``label`` names it as the caller wrote it (``page_size``,
    ``--unit``); the rule is the engine's (``workload.page_size``)."""
    w = {"type": "trace", "path": "-", "format": fmt, "page_size": value}
    err = _core.workload_error(to_json({"workload": w}))
    if err:
        raise ConfigError(f"{label}: {err[1]}")


def capture_files(
    cmd: Sequence[str], out: str | os.PathLike[str], *, page_size: int = 4096
) -> Capture:
    """Runs ``cmd`` under strace (following forks) and records its file I/O
    as page-granular requests keyed by (file, page).

    Examples
    --------
    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> src = os.path.join(d, "a")
    >>> with open(src, "w") as f:
    ...     _ = f.write("x" * 10000)
    >>> c = capture_files(["cp", src, os.path.join(d, "b")], os.path.join(d, "t.strace"))
    >>> c.exit_code, c.stats["reads"] >= 3, c.stats["writes"] >= 3
    (0, True, True)
    """
    check_unit(page_size, "page_size", "strace")
    strace = _tool("strace")
    syscalls = f"trace={_core.STRACE_SYSCALLS}"

    def tracer(log: Path) -> list[str]:
        return [strace, "-f", "-qq", "-ttt", "-s", "0", "-e", syscalls, "-o", str(log), "--"]

    return _capture("strace", tracer, cmd, out, {"page_size": page_size})


#: Valgrind Cachegrind's caches for x86 and amd64 when it cannot read the
#: host's (Valgrind, cachegrind/cg-arch.c, ``configure_caches``): D1 and LL
#: as (size, ways, line) in bytes. S5's reading of its traces
#: (docs/reproduce-s5.md, rule P4) filters through these.
CACHEGRIND_DEFAULT: tuple[tuple[int, int, int], ...] = ((65536, 2, 64), (262144, 8, 64))


def cache_geometry(text: str, key: str = "--cache") -> tuple[int, int, int]:
    """A cache level ``SIZE,WAYS,LINE`` (bytes) as (size, ways, line),
    checked as Cachegrind checks its ``--D1``/``--LL`` (the engine's
    rule); a ``ConfigError`` naming ``key`` otherwise.

    Examples
    --------
    >>> cache_geometry("262144,8,64")
    (262144, 8, 64)
    """
    return _core.cache_geometry(text, key)


def capture_memory(
    cmd: Sequence[str],
    out: str | os.PathLike[str],
    *,
    unit: int = 4096,
    instructions: bool = False,
    caches: Sequence[tuple[int, int, int]] | None = None,
    max_requests: int | None = None,
) -> Capture:
    """Runs ``cmd`` under ``valgrind --tool=lackey --trace-mem=yes`` and
    records its loads, stores and modifies as requests of ``unit`` bytes
    (4096 for pages, 64 for cache lines), keyed by address / unit.

    With ``caches`` ((size, ways, line) per level, nearest the CPU first;
    :data:`CACHEGRIND_DEFAULT` is Cachegrind's own), the references are
    filtered through those caches as the program runs (Cachegrind's model:
    LRU, write-allocate, no write-backs) and the trace is the last level's
    misses, one request per missed line at its byte address, written as
    memtrace (``out`` named ``.memtrace`` or ``.memtrace.zst``); ``unit``
    does not apply. ``max_requests`` then stops the program once that many
    are written (a long run's first part, without its whole log).
    """
    if caches is not None:
        return _capture_below_caches(cmd, out, list(caches), instructions, max_requests)
    if max_requests is not None:
        raise ConfigError("max_requests: only with caches (a filtered capture)")
    check_unit(unit, "unit", "lackey")
    valgrind = _tool("valgrind")

    def tracer(log: Path) -> list[str]:
        return [valgrind, "--tool=lackey", "--trace-mem=yes", "-q", f"--log-file={log}"]

    options = {"page_size": unit, "instructions": instructions}
    return _capture("lackey", tracer, cmd, out, options)


def _capture_below_caches(
    cmd: Sequence[str],
    out: str | os.PathLike[str],
    caches: list[tuple[int, int, int]],
    instructions: bool,
    max_requests: int | None,
) -> Capture:
    """[capture_memory] with caches: Valgrind writes its log into a FIFO
    that the engine reads as the program runs, so no log is stored (a
    long run's log is tens of gigabytes; the misses are a few percent)."""
    if not caches:
        raise ConfigError("caches: at least one level")
    for i, c in enumerate(caches):
        cache_geometry(",".join(str(x) for x in c), f"caches[{i}]")
    if max_requests is not None and max_requests < 1:
        raise ConfigError(f"max_requests: {max_requests} is not a positive whole number")
    out = Path(out)
    if not out.name.endswith((".memtrace", ".memtrace.zst")):
        raise TierlabError(
            f"{out}: a capture below the caches is written as memtrace\n"
            "hint: name the output X.memtrace or X.memtrace.zst"
        )
    out = _checked(cmd, out, "memory")
    valgrind = _tool("valgrind")
    with tempfile.TemporaryDirectory(prefix="tierlab-capture-") as tmp:
        fifo = Path(tmp) / "lackey.fifo"
        os.mkfifo(fifo)
        proc = subprocess.Popen(
            [valgrind, "--tool=lackey", "--trace-mem=yes", "-q", f"--log-file={fifo}", *cmd]
        )

        def unblock() -> None:
            # Valgrind that ends before opening its log would leave the
            # engine waiting for a writer: open and close one.
            proc.wait()
            try:
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass  # no reader waits

        watch = threading.Thread(target=unblock, daemon=True)
        watch.start()
        try:
            _, written, ended = _core.filter_lackey(
                fifo,
                out,
                caches,
                fifo=True,
                instructions=instructions,
                limit=max_requests,
            )
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            watch.join()
    failure = _core.capture_start_failure("lackey", str(out), proc.returncode)
    if ended and (failure or written == 0):
        out.unlink(missing_ok=True)
        why = failure or f"no access missed the last cache level (exit {proc.returncode})"
        raise TierlabError(f"{shlex.join(cmd)}: {why}")
    stats = trace_stats({"workload": {"type": "trace", "path": str(out), "format": "memtrace"}})
    return Capture(output=out, exit_code=proc.returncode, stats=stats, stopped=not ended)
