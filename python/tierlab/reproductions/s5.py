"""S5: file caching and paging over fast SCM storage. The file-caching half
is :mod:`tierlab.reproductions.s5_files`, the paging half
:mod:`tierlab.reproductions.s5_paging`."""

from __future__ import annotations

from tierlab.reproduce import Context, Outcome, System
from tierlab.reproductions import s5_files, s5_paging


def run(ctx: Context) -> Outcome:
    return s5_files.run(ctx) + s5_paging.run(ctx)


SYSTEM = System(
    "s5",
    '"Issues in File Caching and Virtual Memory Paging with Fast SCM Storage", '
    "Park and Bahn, ASTESJ 5(5), 2020",
    ("s5", "s5-paging", "s5-paging-tlb"),
    run,
    s5_files.NOTES,
)
