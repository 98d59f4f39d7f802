"""The outcome of :func:`tierlab.simulate`.

Its own module, apart from tierlab.api: a dataclass needs dataclasses, which
imports inspect (~10 ms), and the command line's `run --json` and `mrc`
never build one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd


@dataclass
class RunResult:
    """The outcome of one run.

    Attributes
    ----------
    summary
        The JSON object of ``tierlab run --json``: whole-run figures and
        ``tiers``, a list of per-tier dicts, fastest first; ``warnings``,
        the engine's lines about figures to distrust (a tier that refused
        objects larger than its capacity: ``rejected`` in its dict), which
        ``tierlab run`` prints on stderr; ``vm``, the translation and fault
        figures of a ``[vm]`` run (None otherwise), and ``processes``, one
        dict per process of a ``[vm]`` run (docs/vm.md).
    timeline_data
        One point every ``run.interval`` requests: ``requests``, and
        ``lookups`` (reads and writes), ``miss_ratio`` and ``amat_ns`` over
        that interval, and ``cumulative_miss_ratio``.
    """

    summary: dict[str, Any]
    timeline_data: dict[str, list[float]] = field(repr=False)

    @property
    def tiers(self) -> pd.DataFrame:
        """Per-tier counters, one row per tier, fastest first, indexed by the
        tier's name: ``r.tiers.loc["dram", "miss_ratio"]``."""
        import pandas as pd

        return pd.DataFrame(self.summary["tiers"]).set_index("name")

    @property
    def vm(self) -> pd.DataFrame:
        """The ``[vm]`` figures (docs/vm.md) as a one-row DataFrame:
        ``r.vm.loc[0, "tlb_miss_ratio"]``; no rows without ``[vm]``."""
        import pandas as pd

        v = self.summary.get("vm")
        return pd.DataFrame([v] if v else [])

    @property
    def processes(self) -> pd.DataFrame:
        """One row per process (address space) of a ``[vm]`` run, indexed
        by pid: ``references``, ``runtime_ns``, ``minor_faults``,
        ``major_faults``, ``tlb_misses``; no rows without ``[vm]``."""
        import pandas as pd

        rows = self.summary.get("processes") or []
        cols = ["pid", "references", "runtime_ns", "minor_faults", "major_faults", "tlb_misses"]
        return pd.DataFrame(rows, columns=cols).set_index("pid")

    @property
    def timeline(self) -> pd.DataFrame:
        """The interval time series as a DataFrame."""
        import pandas as pd

        return pd.DataFrame(self.timeline_data)

    def to_json(self) -> str:
        """The summary as JSON (what ``tierlab run --json`` prints)."""
        from tierlab.api import summary_json

        return summary_json(self.summary)
