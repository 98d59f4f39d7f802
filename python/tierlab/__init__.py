"""tierlab: a fast, trace-driven simulator for extended memory hierarchies.

Examples
--------
>>> import tierlab
>>> r = tierlab.simulate('''
... [workload]
... type = "zipf"
... objects = 1000
... requests = 20000
... [[tier]]
... tech = "DRAM-DDR3"
... capacity = "10%"
... ''')
>>> r.summary["requests"]
20000
>>> 0.0 < r.summary["miss_ratio"] < 1.0
True
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tierlab._core import __version__
    from tierlab._result import RunResult
    from tierlab._sweep import MetricWarning, SweepReport, sweep
    from tierlab.api import mrc, simulate, techs, trace_convert, trace_generate, trace_stats
    from tierlab.errors import (
        ConfigError,
        ModelError,
        ShardsWarning,
        StoreError,
        TierlabError,
        TraceError,
    )
    from tierlab.store import load

__all__ = [
    "__version__",
    "simulate",
    "mrc",
    "techs",
    "trace_stats",
    "trace_convert",
    "trace_generate",
    "RunResult",
    "sweep",
    "SweepReport",
    "MetricWarning",
    "load",
    "TierlabError",
    "ConfigError",
    "TraceError",
    "StoreError",
    "ModelError",
    "ShardsWarning",
]

# The public names are loaded on first use (PEP 562), so that the command
# line pays only for the modules its subcommand needs: importing them all
# (sqlite3, dataclasses, inspect, tomllib, logging...) cost ~55 ms, a fifth
# of a whole `tierlab mrc --shards 0.01 --no-plot` run on 20M requests.
# Name -> the module defining it.
_LAZY = {
    "__version__": "tierlab._core",
    "simulate": "tierlab.api",
    "mrc": "tierlab.api",
    "techs": "tierlab.api",
    "trace_stats": "tierlab.api",
    "trace_convert": "tierlab.api",
    "trace_generate": "tierlab.api",
    "RunResult": "tierlab._result",
    "sweep": "tierlab._sweep",
    "SweepReport": "tierlab._sweep",
    "MetricWarning": "tierlab._sweep",
    "load": "tierlab.store",
    "TierlabError": "tierlab.errors",
    "ConfigError": "tierlab.errors",
    "TraceError": "tierlab.errors",
    "StoreError": "tierlab.errors",
    "ModelError": "tierlab.errors",
    "ShardsWarning": "tierlab.errors",
}

# Submodules the package used to import eagerly: `import tierlab` then
# `tierlab.store.export(...)` kept working, so an attribute of that name
# imports the submodule; `tierlab.models` (the analytic models) is reached
# the same way.
_SUBMODULES = frozenset({"_core", "api", "config", "errors", "experiment", "models", "store"})


def __getattr__(name: str) -> object:
    from importlib import import_module

    if name in _LAZY:
        value = getattr(import_module(_LAZY[name]), name)
    elif name in _SUBMODULES:
        value = import_module(f"{__name__}.{name}")
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    # Bound once: later lookups are plain attribute reads. A name is never
    # the name of a submodule (the function `sweep` lives in `_sweep`), so
    # importing a submodule cannot rebind it.
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    # The names the eagerly importing package listed; not this machinery.
    helpers = {"TYPE_CHECKING", "_LAZY", "_SUBMODULES"}
    return sorted({*globals(), *__all__, *_SUBMODULES} - helpers)
