"""The ``tierlab`` command line.

Data goes to stdout, diagnostics to stderr. Bad input of any kind ends in one
line ``error: ...`` and exit code 2; never a traceback.

One module per command, each with its parser (``add``), the files it reads
and writes (``files``) and its handler (``handle``); what they share is in
``_common``. :func:`main` checks every command's outputs against its inputs
(``_common.io_problem``) before the command does any work.

Only what building the parser needs is imported here and in the command
modules' tops; each handler imports its own modules, so that `tierlab mrc
--no-plot` and `tierlab run --json` do not pay for pandas, rich, sqlite3 or
Dask. A command line that names its command builds that command's parser
only: the other command modules (and what their parsers import, such as
the reproductions' and models' lists) are never loaded.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import TYPE_CHECKING, Protocol, cast

from tierlab.cli._common import EXIT_BAD_INPUT, EXIT_INTERRUPTED, Files, err, hint, io_problem

# SIGTERM handled (see Terminated): 128 + 15, as a shell reports a process it ended.
EXIT_TERMINATED = 143

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["COMMANDS", "EXIT_BAD_INPUT", "EXIT_INTERRUPTED", "build_parser", "command", "main"]


class Command(Protocol):
    def add(self, sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None: ...
    def files(self, a: argparse.Namespace) -> Files: ...
    def handle(self, a: argparse.Namespace) -> int: ...


# In the order `tierlab --help` lists them: each command's module in
# tierlab.cli, imported when its parser is built (`command`).
COMMANDS: tuple[str, ...] = (
    "run",
    "techs",
    "trace",
    "capture",
    "mrc",
    "sweep",
    "export",
    "report",
    "reproduce",
    "model",
    "bench",
)


def command(name: str) -> Command:
    """The module of command `name` (one of COMMANDS)."""
    return cast("Command", importlib.import_module(f"tierlab.cli.{name}"))


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser: every command's, or only command `only`'s
    (for a command line that names it first; its parsing is the same)."""
    from tierlab import __version__

    p = argparse.ArgumentParser(
        prog="tierlab",
        description="Simulate extended memory hierarchies (DRAM, file memory, flash, "
        "SCM, disk) over traces and synthetic workloads.",
    )
    p.add_argument("--version", action="version", version=f"tierlab {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS if only is None else (only,):
        command(name).add(sub)
    return p


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where Ctrl-C's KeyboardInterrupt would be, so that it
    cleans up as Ctrl-C does: the engine stops at its next progress report
    and removes the output it was writing, ``_atomic`` writers remove their
    hidden files, and an existing output stays as it was (SIGTERM's default,
    an immediate exit, left a hidden ``.part`` file of hundreds of MB)."""


def _terminate(signum: int, frame: object) -> None:
    raise Terminated


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``tierlab`` command."""
    import signal

    from tierlab.errors import ConfigError, TierlabError

    if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _terminate)
    words = sys.argv[1:] if argv is None else list(argv)
    first = words[0] if words else None
    args = build_parser(first if first in COMMANDS else None).parse_args(words)
    cmd = command(args.command)
    try:
        problem = io_problem(cmd.files(args))
        if problem:
            return err(problem)
        return cmd.handle(args)
    except ConfigError as e:
        return err(str(e), hint(str(e)))
    except TierlabError as e:
        return err(str(e))
    except OSError as e:
        where = f"{e.filename}: " if e.filename else ""
        return err(f"{where}{e.strerror or e}")
    except Terminated:
        print("terminated", file=sys.stderr)
        return EXIT_TERMINATED
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return 0
