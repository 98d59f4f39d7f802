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
Dask.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Protocol

from tierlab.cli import (
    bench,
    capture,
    export,
    model,
    mrc,
    report,
    reproduce,
    run,
    sweep,
    techs,
    trace,
)
from tierlab.cli._common import EXIT_BAD_INPUT, EXIT_INTERRUPTED, Files, err, hint, io_problem

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["COMMANDS", "EXIT_BAD_INPUT", "EXIT_INTERRUPTED", "build_parser", "main"]


class Command(Protocol):
    def add(self, sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None: ...
    def files(self, a: argparse.Namespace) -> Files: ...
    def handle(self, a: argparse.Namespace) -> int: ...


# In the order `tierlab --help` lists them.
COMMANDS: dict[str, Command] = {
    "run": run,
    "techs": techs,
    "trace": trace,
    "capture": capture,
    "mrc": mrc,
    "sweep": sweep,
    "export": export,
    "report": report,
    "reproduce": reproduce,
    "model": model,
    "bench": bench,
}


def build_parser() -> argparse.ArgumentParser:
    from tierlab import __version__

    p = argparse.ArgumentParser(
        prog="tierlab",
        description="Simulate extended memory hierarchies (DRAM, file memory, flash, "
        "SCM, disk) over traces and synthetic workloads.",
    )
    p.add_argument("--version", action="version", version=f"tierlab {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS.values():
        command.add(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``tierlab`` command."""
    from tierlab.errors import ConfigError, TierlabError

    args = build_parser().parse_args(argv)
    command = COMMANDS[args.command]
    try:
        problem = io_problem(command.files(args))
        if problem:
            return err(problem)
        return command.handle(args)
    except ConfigError as e:
        return err(str(e), hint(str(e)))
    except TierlabError as e:
        return err(str(e))
    except OSError as e:
        where = f"{e.filename}: " if e.filename else ""
        return err(f"{where}{e.strerror or e}")
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return 0
