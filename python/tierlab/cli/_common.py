"""What every command shares: exit codes, the one-line error, progress bars,
notes, and the check that no output is one of the command's inputs.

Only the standard library's light modules are imported at the top: each
command imports what its work needs when it runs (see tierlab.cli).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, NamedTuple

from tierlab import _core

if TYPE_CHECKING:
    from pathlib import Path

EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130


class Files(NamedTuple):
    """What a command reads and writes, named before it does any work.

    ``inputs``: ``(kind, path)`` of each file read: a config, a trace, an
    experiment, a store, a program (a ``None`` path is left out).
    ``outputs``: ``(option, path, kind)`` with kind ``"file"`` (a file
    written or replaced) or ``"dir"`` (a folder written into)."""

    inputs: list[tuple[str, object]]
    outputs: list[tuple[str, object, str]]


class BadArg(Exception):
    """A command-line value the parser accepted but the command cannot use."""


def err(msg: str, hint: str | None = None) -> int:
    # Bounded: a message may echo a value of any length the user gave.
    print(f"error: {_core.bound_message(msg)}", file=sys.stderr)
    if hint:
        print(f"hint: {_core.bound_message(hint)}", file=sys.stderr)
    return EXIT_BAD_INPUT


def add_trace_opts(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--format",
        # The engine's format registry; the extension module is native and
        # cheap to import, unlike the package's pandas-using modules.
        choices=_core.trace_formats(),
        help="trace format (default: recognised from the file's content, else from its "
        "name; oracleGeneral when neither tells)",
    )
    p.add_argument(
        "--skip-bad",
        action="store_true",
        default=None,
        help="pass over malformed records of a text trace, counting them, instead of stopping",
    )


def number(flag: str, text: str | None, kind: type[int] | type[float]) -> int | float | None:
    if text is None:
        return None
    try:
        return kind(text)
    except ValueError:
        what = "an integer" if kind is int else "a number"
        raise BadArg(f"{flag} {text!r}: expected {what}") from None


def note_skipped(n: int) -> None:
    if n:
        print(f"note: skipped {n:,} malformed records (--skip-bad)", file=sys.stderr)


def warn(summary: dict[str, Any]) -> None:
    """The engine's warnings about a run's figures (a tier that refused
    objects larger than its capacity), one line each on stderr."""
    for w in summary.get("warnings", ()):
        print(f"warning: {w}", file=sys.stderr)


def source(path: object) -> list[tuple[str, object]]:
    """The inputs of a trace tool's INPUT: a trace file, or a config (a .toml
    file) and the trace its ``[workload]`` reads."""
    if isinstance(path, (str, os.PathLike)) and str(path).endswith(".toml"):
        return [("config", path), ("trace", config_trace(path))]
    return [("trace", path)]


def config_trace(config: object) -> str | None:
    """The trace file a config's ``[workload]`` reads (None: a generator, or
    a config that does not load: the command reports that itself)."""
    if not isinstance(config, (str, os.PathLike)) or not str(config).endswith(".toml"):
        return None
    from tierlab.config import load_config
    from tierlab.errors import TierlabError

    try:
        w = load_config(os.fspath(config)).get("workload")
    except TierlabError:
        return None
    path = w.get("path") if isinstance(w, dict) else None
    return path if isinstance(path, str) else None


def io_problem(files: Files) -> str | None:
    """Why a command cannot write its outputs (None: it can): an output is
    one of its inputs (the same file, through a link too), a folder is named
    where a file is written or a file where a folder is, or the folder it
    goes in does not exist. Every command's outputs pass here, from
    :func:`tierlab.cli.main`, before the command's work, which may take
    minutes: none ends having written over what it read, or with a result
    it cannot write. (The engine's trace writer keeps its own check, for
    callers of the API.)"""
    from pathlib import Path

    existing = [
        (kind, Path(os.fspath(i)))
        for kind, i in files.inputs
        if isinstance(i, (str, os.PathLike)) and os.path.exists(i)
    ]
    for option, value, kind in files.outputs:
        if not isinstance(value, (str, os.PathLike)):
            continue
        out = Path(os.fspath(value))
        where = f"{option} {os.fspath(value)}" if option else os.fspath(value)
        for what, i in existing:
            if _same(out, i):
                named = "" if out == i else f" {i}"
                return f"{where}: is the input {what}{named}; write to another file"
        if kind == "dir":
            for p in (out, *out.parents):
                if p.exists() and not p.is_dir():
                    return f"{where}: {p} is a file; the output is a folder (-o DIR)"
            continue
        if out.is_dir():
            return f"{where}: is a directory; name a file to write"
        if not out.parent.is_dir():
            return f"{where}: no such directory {str(out.parent)!r}"
    return None


def _same(a: Path, b: Path) -> bool:
    """The same file, by inode: hard links and symlinks too. An output not
    yet written is no input (``b`` exists)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def existing_files(args: Iterable[str]) -> list[str]:
    """The arguments of a traced command that name existing files: what the
    program may read, which a capture must not write over."""
    return [a for a in args if a and os.path.isfile(a)]


@contextmanager
def bar(enabled: bool, label: str, *, sweep: bool = False) -> Iterator[tuple[Any, Any] | None]:
    """A rich progress bar on stderr, only when stderr is a terminal; yields
    (bar, task) or None. ``sweep`` adds failed/left counts and time left."""
    if not (enabled and sys.stderr.isatty()):
        yield None
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        ProgressColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from tierlab._format import console

    columns: list[ProgressColumn] = [
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
    ]
    if sweep:
        columns.append(TextColumn("{task.fields[failed]} failed, {task.fields[left]} left"))
    columns.append(TimeElapsedColumn())
    if sweep:
        columns.append(TimeRemainingColumn())
    with Progress(*columns, console=console(stderr=True), transient=True) as b:
        if sweep:
            yield b, b.add_task(label, total=None, failed=0, left="?")
        else:
            yield b, b.add_task(label, total=None)


@contextmanager
def progress(enabled: bool, label: str) -> Iterator[Callable[[int, int | None], None] | None]:
    """Requests done (of a total when known)."""
    with bar(enabled, label) as b:
        if b is None:
            yield None
            return
        pb, task = b

        def update(done: int, total: int | None) -> None:
            pb.update(task, completed=done, total=total)

        yield update


@contextmanager
def sweep_progress(enabled: bool, label: str) -> Iterator[Callable[[int, int, int], None] | None]:
    """Points done, failed and left."""
    with bar(enabled, label, sweep=True) as b:
        if b is None:
            yield None
            return
        pb, task = b

        def update(done: int, failed: int, total: int) -> None:
            pb.update(task, completed=done, total=total, failed=failed, left=total - done)

        yield update


def hint(msg: str) -> str | None:
    if "unknown technology" in msg:
        return "`tierlab techs` lists the catalog; [techs.NAME] in a config adds one"
    if msg.startswith("workload: missing"):
        return "tierlab run CONFIG --trace FILE"
    return None


def overrides(pairs: list[str]) -> dict[str, object]:
    """`--set KEY=VALUE` pairs as key paths and values: a value is read as
    TOML (8, 0.5, "4KiB", [1, 2], true), a bare word as a string."""
    import tomllib

    out: dict[str, object] = {}
    for pair in pairs:
        key, eq, text = pair.partition("=")
        if not eq or not key.strip():
            raise BadArg(f"--set {pair!r}: expected KEY=VALUE, e.g. workload.scale=0.1")
        try:
            out[key.strip()] = tomllib.loads(f"v = {text}")["v"]
        except tomllib.TOMLDecodeError:
            out[key.strip()] = text  # a bare word: a string
    return out
