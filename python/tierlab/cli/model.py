"""``tierlab model``: the closed-form models of :mod:`tierlab.models`."""

from __future__ import annotations

import argparse

from tierlab.cli._common import Files


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    # The registry is plain Python with no heavy imports: reading it to build
    # the parser costs nothing the other commands would notice.
    from tierlab.models import MODELS

    p = sub.add_parser(
        "model",
        help="evaluate an analytic model (Memorage lifetime, break-even hits or price)",
        description="Evaluate one of tierlab's closed-form models; docs/models.md gives "
        "each one's equation and source.",
    )
    models = p.add_subparsers(dest="model", required=True, metavar="NAME")
    for name, m in MODELS.items():
        mp = models.add_parser(name, help=m.result, description=m.func.__doc__)
        for prm in m.params:
            mp.add_argument(
                "--" + prm.name.replace("_", "-"),
                dest=prm.name,
                type=float,
                required=True,
                metavar="X",
                help=prm.help,
            )
        mp.add_argument("--json", action="store_true", help="print JSON")


def files(a: argparse.Namespace) -> Files:
    return Files([], [])


def handle(a: argparse.Namespace) -> int:
    import json

    from tierlab.models import MODELS

    m = MODELS[a.model]
    params = {prm.name: getattr(a, prm.name) for prm in m.params}
    value = m.func(**params)
    if a.json:
        # allow_nan=False: never a bare Infinity or NaN, which is not JSON.
        text = json.dumps(
            {"model": a.model, "params": params, "result": value}, indent=1, allow_nan=False
        )
        print(text)
    elif isinstance(value, dict):
        for k, v in value.items():
            print(f"{k} = {v:.6g}")
    else:
        print(f"{a.model} = {value:.6g}  ({m.result})")
    return 0
