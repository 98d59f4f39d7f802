"""Cuts S5's window out of a memory trace (docs/reproduce-s5.md,
"Paging", the window rule): of the windows of N references that start at
a multiple of N/4 within the trace's first 8 N references, the one whose
footprint in distinct 4 KiB pages is nearest to the row's footprint (the
earliest of equals). ``--prefix 1`` (rule P4's amendment) reads only the
first N references: the window is the program's first N.

    python3 s5_window.py TRACE.memtrace --refs N --pages P [--prefix K] -o WINDOW.memtrace
    python3 s5_window.py LOG --refs N --pages P -o WINDOW.lackey

A memtrace (rule P4: the last-level cache's misses, as ``tierlab capture
memory --cache`` writes them) is cut record by record. A lackey log (rule
P3, the captures before P4) is read as follows.

LOG may be a FIFO that Valgrind writes (``--log-file=FIFO``): it is read
once, up to its first 8 N data references, and the script then stops
reading (the caller ends Valgrind). A data reference is a lackey ``L``,
``S`` or ``M`` line (one request each in tierlab's lackey reader;
instruction lines are not kept, as ``tierlab capture memory`` keeps
none); a reference that spans two pages counts both. Prints one JSON
line: the data references read, the chosen skip K, the window's
references and pages, and every candidate's pages. Uses numpy (a tierlab
dependency).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

PAGE_SHIFT = 12
CHUNK = 1 << 20
#: Windows start within the first PREFIX x N references (rule P3; rule P4
#: as amended reads the first N only, ``--prefix 1``).
PREFIX = 8


def _read(log: Path, keep: Path, limit: int) -> np.ndarray:
    """Reads up to ``limit`` data references of the log, writes their lines
    to ``keep``, and returns the first and last page of each, in order: an
    array of shape (refs, 2)."""
    parts: list[np.ndarray] = []
    first: list[int] = []
    last: list[int] = []
    n = 0
    with log.open("rb") as f, keep.open("wb") as w:
        for line in f:
            # " L 04222cac,4": a space, the kind, a space, hex address, size.
            if len(line) < 5 or line[0] != 32 or line[1] not in b"LSM":
                continue
            addr, _, size = line[3:].partition(b",")
            a = int(addr, 16)
            first.append(a >> PAGE_SHIFT)
            last.append((a + max(int(size), 1) - 1) >> PAGE_SHIFT)
            w.write(line)
            n += 1
            if len(first) == CHUNK:
                parts.append(np.array([first, last], dtype=np.uint64).T)
                first, last = [], []
            if n >= limit:
                break
    if first:
        parts.append(np.array([first, last], dtype=np.uint64).T)
    return np.concatenate(parts) if parts else np.zeros((0, 2), dtype=np.uint64)


#: tierlab's memtrace: an 8-byte magic, then 16-byte records (byte
#: address u64, pid u32, size u16, op u8, a zero byte), little-endian.
MAGIC = b"TLMEMTR1"
RECORD = np.dtype([("addr", "<u8"), ("pid", "<u4"), ("size", "<u2"), ("op", "u1"), ("pad", "u1")])


def is_memtrace(path: Path) -> bool:
    with path.open("rb") as f:
        return f.read(len(MAGIC)) == MAGIC


def read_memtrace(path: Path, limit: int) -> tuple[np.ndarray, np.ndarray]:
    """The first ``limit`` records of a memtrace and the first and last
    page of each (shape (refs, 2))."""
    recs = np.fromfile(path, dtype=RECORD, count=limit, offset=len(MAGIC))
    first = recs["addr"] >> np.uint64(PAGE_SHIFT)
    end = recs["addr"] + np.maximum(recs["size"], 1).astype(np.uint64) - np.uint64(1)
    return recs, np.stack([first, end >> np.uint64(PAGE_SHIFT)], axis=1)


def footprint(pages: np.ndarray) -> int:
    """Distinct pages of a window (both pages of a spanning reference)."""
    return int(np.unique(pages.ravel()).size)


def choose(pages: np.ndarray, refs: int, target: int) -> tuple[int, list[tuple[int, int]]]:
    """The skip K of the rule, and (K, pages) of every candidate window."""
    total = len(pages)
    step = max(1, refs // 4)
    starts = list(range(0, max(total - refs, 0) + 1, step))
    cands = [(k, footprint(pages[k : k + refs])) for k in starts]
    best = min(cands, key=lambda c: (abs(c[1] - target), c[0]))
    return best[0], cands


def cut(kept: Path, out: Path, skip: int, refs: int) -> None:
    """Writes the data lines skip .. skip + refs - 1 of the kept lines."""
    n = 0
    with kept.open("rb") as f, out.open("wb") as w:
        for line in f:
            if n >= skip:
                w.write(line)
            n += 1
            if n >= skip + refs:
                break


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("log", type=Path)
    ap.add_argument("--refs", type=int, required=True, help="N: the row's references")
    ap.add_argument("--pages", type=int, required=True, help="the row's footprint, 4 KiB pages")
    ap.add_argument(
        "--prefix", type=int, default=PREFIX, help="windows within the first K x N references"
    )
    ap.add_argument("-o", "--out", type=Path, required=True)
    a = ap.parse_args(argv)
    if a.prefix < 1:
        ap.error(f"--prefix {a.prefix}: must be at least 1")
    if is_memtrace(a.log):
        recs, pages = read_memtrace(a.log, a.prefix * a.refs)
        skip, cands = choose(pages, a.refs, a.pages)
        window = pages[skip : skip + a.refs]
        with a.out.open("wb") as w:
            w.write(MAGIC)
            recs[skip : skip + a.refs].tofile(w)
    else:
        kept = a.out.with_name(a.out.name + ".read")
        try:
            pages = _read(a.log, kept, a.prefix * a.refs)
            skip, cands = choose(pages, a.refs, a.pages)
            window = pages[skip : skip + a.refs]
            cut(kept, a.out, skip, a.refs)
        finally:
            kept.unlink(missing_ok=True)
    print(
        json.dumps(
            {
                "read_refs": len(pages),
                "read_pages": footprint(pages),
                "skip": skip,
                "refs": len(window),
                "pages": footprint(window),
                "target_pages": a.pages,
                "candidates": cands,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
