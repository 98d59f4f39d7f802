"""S5: file caching and paging over fast SCM storage. The file-caching half
is :mod:`tierlab.reproductions.s5_files`."""

from __future__ import annotations

from tierlab.reproduce import Context, Outcome, System
from tierlab.reproductions import s5_files


def run(ctx: Context) -> Outcome:
    return s5_files.run(ctx)


SYSTEM = System(
    "s5",
    '"Issues in File Caching and Virtual Memory Paging with Fast SCM Storage", '
    "Park and Bahn, ASTESJ 5(5), 2020",
    ("s5",),
    run,
    s5_files.NOTES,
)
