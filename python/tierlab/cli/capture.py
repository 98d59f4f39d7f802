"""``tierlab capture files|memory``: a real program's accesses as a trace."""

from __future__ import annotations

import argparse
import shutil
import sys

from tierlab.cli._common import Files, err, existing_files


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    cap = sub.add_parser(
        "capture",
        help="capture a real program as a trace",
        description="Run a program under strace (files) or Valgrind lackey (memory) and "
        "write its accesses as a trace. Name the output X.strace / X.lackey to keep "
        "the tracer's log (reads, writes and deletes intact; tierlab run reads it); "
        "any other name is converted to oracleGeneral.",
    )
    csub = cap.add_subparsers(dest="capture_command", required=True, metavar="KIND")
    cf = csub.add_parser(
        "files",
        help="file I/O under strace, one request per page",
        description="Run CMD under strace -f and turn its file I/O (open, read, write, "
        "pread, pwrite, readv, writev, lseek, truncate, unlink, rename, close, dup, "
        "fork) into page-granular requests keyed by (file, page).",
    )
    cf.add_argument("-o", "--output", required=True, help="trace to write")
    cf.add_argument("--page-size", type=int, default=4096, help="bytes per page (default 4096)")
    cf.add_argument("cmd", nargs=argparse.REMAINDER, help="-- CMD ARGS...")
    cm = csub.add_parser(
        "memory",
        help="memory accesses under Valgrind lackey",
        description="Run CMD under valgrind --tool=lackey --trace-mem=yes and turn its "
        "loads, stores and modifies into requests of --unit bytes keyed by address/unit.",
    )
    cm.add_argument("-o", "--output", required=True, help="trace to write")
    cm.add_argument(
        "--unit", type=int, default=4096, help="bytes per request: 4096 pages, 64 lines"
    )
    cm.add_argument(
        "--instructions", action="store_true", help="count instruction fetches as reads"
    )
    cm.add_argument(
        "--cache",
        action="append",
        metavar="SIZE,WAYS,LINE",
        help="filter the references through a cache level (bytes; repeat, nearest the CPU "
        "first; Cachegrind's own: --cache 65536,2,64 --cache 262144,8,64): the trace is the "
        "last level's misses, one request per missed line, written as memtrace",
    )
    cm.add_argument(
        "--max-requests",
        type=int,
        metavar="N",
        help="with --cache: stop the program once N requests are written",
    )
    cm.add_argument("cmd", nargs=argparse.REMAINDER, help="-- CMD ARGS...")


def _cmd(a: argparse.Namespace) -> list[str]:
    return list(a.cmd[1:] if a.cmd[:1] == ["--"] else a.cmd)


def files(a: argparse.Namespace) -> Files:
    # The traced program and the files its arguments name: it reads them
    # while the tracer writes, so OUT must be none of them.
    cmd = _cmd(a)
    program = shutil.which(cmd[0]) if cmd else None
    inputs: list[tuple[str, object]] = [("program", program)]
    inputs += [("file", f) for f in existing_files(cmd[1:])]
    return Files(inputs, [("-o", a.output, "file")])


def handle(a: argparse.Namespace) -> int:
    from tierlab.capture import cache_geometry, capture_files, capture_memory, check_unit

    cmd = _cmd(a)
    caches = None
    if a.capture_command == "files":
        check_unit(a.page_size, "--page-size", "strace")
        c = capture_files(cmd, a.output, page_size=a.page_size)
    else:
        if a.cache is None and a.max_requests is not None:
            return err("--max-requests: only with --cache (a capture below the caches)")
        caches = None if a.cache is None else [cache_geometry(x) for x in a.cache]
        if caches is None:
            check_unit(a.unit, "--unit", "lackey")
        elif a.max_requests is not None and a.max_requests < 1:
            return err(f"--max-requests: {a.max_requests} is not a positive number")
        c = capture_memory(
            cmd,
            a.output,
            unit=a.unit,
            instructions=a.instructions,
            caches=caches,
            max_requests=a.max_requests,
        )
    s = c.stats
    print(
        f"captured {s['requests']:,} requests ({s['reads']:,} reads, {s['writes']:,} writes, "
        f"{s['deletes']:,} deletes; {s['unique_keys']:,} keys) to {c.output}",
        file=sys.stderr,
    )
    if c.stopped:
        print(f"note: the program was stopped at {a.max_requests:,} requests", file=sys.stderr)
    kept = caches is not None or str(c.output).endswith((".strace", ".lackey", ".memtrace"))
    if not kept and (s["writes"] or s["deletes"]):
        print(
            "note: oracleGeneral has no operation field: writes and deletes were written "
            "as reads (name the output .strace / .lackey to keep them)",
            file=sys.stderr,
        )
    if c.exit_code != 0 and not c.stopped:
        print(f"note: the program exited with status {c.exit_code}", file=sys.stderr)
    return 0
