"""``tierlab trace stats|convert|generate``: inspect, convert and generate traces."""

from __future__ import annotations

import argparse
import sys

from tierlab.cli._common import (
    BadArg,
    Files,
    add_trace_opts,
    err,
    note_skipped,
    number,
    progress,
    source,
)


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    trace = sub.add_parser(
        "trace", help="inspect and convert traces", description="Inspect and convert traces."
    )
    tsub = trace.add_subparsers(dest="trace_command", required=True, metavar="COMMAND")
    stats = tsub.add_parser(
        "stats",
        help="requests, unique keys, footprint, read/write mix",
        description="Print requests, unique keys, footprint bytes and read/write mix of a "
        "trace file, or of a config's [workload] (a .toml file).",
    )
    stats.add_argument("input", help="trace file, or a config whose [workload] to read")
    add_trace_opts(stats)
    stats.add_argument("--json", action="store_true", help="print JSON")
    conv = tsub.add_parser(
        "convert",
        help="write a trace or a workload as oracleGeneral",
        description="Write a trace file (any readable format), or a config's [workload] "
        "(a .toml file), as libCacheSim's oracleGeneral binary format with next-access "
        "times, or as CSV (time,key,size,op with a header; operations kept).",
    )
    conv.add_argument("input", help="trace file, or a config whose [workload] to write")
    conv.add_argument("output", help="oracleGeneral file to write")
    conv.add_argument(
        "--to",
        choices=["oracle", "csv", "memtrace"],
        help="output format (default: csv for an OUTPUT ending in .csv or .txt, memtrace for "
        ".memtrace, else oracle); memtrace: a memory trace (lackey) by byte address, binary",
    )
    add_trace_opts(conv)
    gen = tsub.add_parser(
        "generate",
        help="write a benchmark generator's trace (PostMark, Bonnie, web, ...)",
        description="Write the trace of a seeded benchmark generator: postmark, bonnie, web "
        "(SURGE-like), specweb (SPECweb99-like), proxy, multiprogram or hotset "
        "(docs/workloads.md). The same kind, preset, seed and scale write the same bytes.",
    )
    gen.add_argument(
        "kind", metavar="KIND", help="postmark, bonnie, web, specweb, proxy, multiprogram or hotset"
    )
    gen.add_argument("-o", "--output", required=True, metavar="OUT", help="trace file to write")
    gen.add_argument(
        "--preset", help="parameter set, e.g. s1 or s2 for postmark (default: default)"
    )
    gen.add_argument("--seed", metavar="N", help="random seed (default 42)")
    gen.add_argument(
        "--scale", metavar="F", help="multiply the preset's files, requests and sizes by F"
    )
    gen.add_argument(
        "--format",
        choices=["oracle", "csv"],
        help="oracle (oracleGeneral: no op field, writes and deletes become reads) or csv "
        "(time,key,size,op: ops kept); default: csv for a .csv/.txt OUT, else oracle",
    )


def files(a: argparse.Namespace) -> Files:
    if a.trace_command == "generate":
        return Files([], [("-o", a.output, "file")])
    if a.trace_command == "stats":
        return Files([], [])  # writes nothing: its input needs no reading here
    return Files(source(a.input), [("", a.output, "file")])


def handle(a: argparse.Namespace) -> int:
    if a.trace_command == "generate":
        return _generate(a)
    if a.trace_command == "stats":
        return _stats(a)
    return _convert(a)


def _stats(a: argparse.Namespace) -> int:
    import json

    from tierlab.api import trace_stats

    with progress(not a.json, "reading") as cb:
        s = trace_stats(a.input, a.format, skip_bad=a.skip_bad, progress=cb)
    note_skipped(s["skipped"])
    if a.json:
        print(json.dumps(s))
    else:
        from tierlab._format import print_stats

        print_stats(a.input, s)
    return 0


def _convert(a: argparse.Namespace) -> int:
    from tierlab.api import output_format, trace_convert

    # oracleGeneral needs next-access times: a first pass over the input.
    passes = "2 passes" if output_format(a.output, a.to) == "oracle" else "1 pass"
    with progress(True, f"converting ({passes})") as cb:
        s = trace_convert(a.input, a.output, a.format, to=a.to, skip_bad=a.skip_bad, progress=cb)
    note_skipped(s["skipped"])
    print(f"wrote {s['requests']:,} requests ({s['unique_keys']:,} keys) to {a.output}")
    if output_format(a.output, a.to) == "oracle" and (s["writes"] or s["deletes"]):
        print(
            f"note: oracleGeneral has no operation field: {s['writes']:,} writes and "
            f"{s['deletes']:,} deletes were written as reads",
            file=sys.stderr,
        )
    return 0


def _generate(a: argparse.Namespace) -> int:
    from tierlab.api import GENERATORS, output_format, trace_generate

    if a.kind not in GENERATORS:
        return err(f"unknown generator {a.kind!r}; expected one of {', '.join(GENERATORS)}")
    try:
        seed = number("--seed", a.seed, int)
        scale = number("--scale", a.scale, float)
    except BadArg as e:
        return err(str(e))
    with progress(True, f"generating {a.kind}") as cb:
        s = trace_generate(
            a.kind,
            a.output,
            preset=a.preset,
            seed=None if seed is None else int(seed),
            scale=scale,
            format=a.format,
            progress=cb,
        )
    print(
        f"wrote {s['requests']:,} requests ({s['reads']:,} reads, {s['writes']:,} writes, "
        f"{s['deletes']:,} deletes; {s['unique_keys']:,} keys) to {a.output}"
    )
    if output_format(a.output, a.format) == "oracle" and (s["writes"] or s["deletes"]):
        print(
            "note: oracleGeneral has no operation field: the writes and deletes were written "
            "as reads",
            file=sys.stderr,
        )
        print("hint: --format csv (or an OUT ending in .csv) keeps them", file=sys.stderr)
    return 0
