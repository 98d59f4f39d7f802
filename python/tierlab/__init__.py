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

from tierlab._core import __version__
from tierlab.api import RunResult, mrc, simulate, techs, trace_generate, trace_stats
from tierlab.errors import ConfigError, StoreError, TierlabError, TraceError
from tierlab.store import load
from tierlab.sweep import SweepReport, sweep

__all__ = [
    "__version__",
    "simulate",
    "mrc",
    "techs",
    "trace_stats",
    "trace_generate",
    "RunResult",
    "sweep",
    "SweepReport",
    "load",
    "TierlabError",
    "ConfigError",
    "TraceError",
    "StoreError",
]
