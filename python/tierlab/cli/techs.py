"""``tierlab techs``: the technology catalog."""

from __future__ import annotations

import argparse

from tierlab.cli._common import Files


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    techs = sub.add_parser(
        "techs",
        help="list the technology catalog",
        description="List the built-in technologies with their figures and sources.",
    )
    techs.add_argument("--json", action="store_true", help="print JSON")


def files(a: argparse.Namespace) -> Files:
    return Files([], [])


def handle(a: argparse.Namespace) -> int:
    import json

    from tierlab.api import catalog_entries

    t = catalog_entries()
    if a.json:
        print(json.dumps(t, indent=1))
    else:
        from tierlab._format import print_techs

        print_techs(t)
    return 0
