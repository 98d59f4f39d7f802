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
        ``tierlab run`` prints on stderr; ``latency_ns`` and ``time``, the
        time model's figures (null without one; see :attr:`time`); ``vm``,
        the translation and fault figures of a ``[vm]`` run (None otherwise),
        and ``processes``, one dict per process of a ``[vm]`` run
        (docs/vm.md); ``memorage``, the borrowing pool's figures of a
        ``[vm.memorage]`` run (absent otherwise; docs/memorage.md);
        ``tiered``, multilevel main memory's nodes, migrations, overheads
        and slowdown (a run with ``[[vm.node]]`` only; docs/tiered-memory.md).
    timeline_data
        One point every ``run.interval`` requests: ``requests``, and
        ``lookups`` (reads and writes), ``miss_ratio`` and ``amat_ns`` over
        that interval, ``cumulative_miss_ratio``, and ``energy_j`` and
        ``power_w``, the devices' energy over the interval and its mean power
        (docs/device.md; not in a ``[vm]`` run's timeline); under
        ``[vm.pressure]`` (or ``[vm.memorage]``) also ``free_pages`` and
        ``borrowed_bytes`` at each point, and ``swap_out_pages`` and
        ``swap_in_pages`` over the interval (docs/memorage.md); with
        ``[[vm.node]]`` each node's ``accesses_<node>``, ``fast_share``,
        ``promotions``, ``demotions``, ``migration_bytes`` and
        ``overhead_ns`` over the interval (docs/tiered-memory.md).
    """

    summary: dict[str, Any]
    timeline_data: dict[str, list[float]] = field(repr=False)

    @property
    def tiers(self) -> pd.DataFrame:
        """Per-tier counters, one row per tier, fastest first, indexed by the
        tier's name: ``r.tiers.loc["dram", "miss_ratio"]``. Flat columns, as
        pandas has them: a tier's nested figures under dotted names
        (``energy.read_j``, ``wear_spread.std``), as the sweep store names
        them. The nested column (``r.tiers["energy"]``, a dict per row)
        still works, with a DeprecationWarning, until 0.3 (CHANGELOG.md)."""
        return _flat_tiers(self.summary["tiers"])

    @property
    def time(self) -> dict[str, Any] | None:
        """The time model's whole-run figures (``summary["time"]``: load,
        elapsed_ns, throughput_rps, latency_ns, the stack_ns / queue_ns /
        service_ns breakdown per request, ...), or None for a run without
        a time model (no ``[load]``, ``[server]``, ``[stack]`` or device
        keys)."""
        t: dict[str, Any] | None = self.summary.get("time")
        return t

    @property
    def latency(self) -> dict[str, float] | None:
        """Request latency in ns: ``mean``, ``p50``, ``p90``, ``p99``,
        ``p999``, ``max`` (``r.latency["p99"]``); None without a time model
        (the serial sum of latencies has no distribution)."""
        lat: dict[str, float] | None = self.summary.get("latency_ns")
        return lat

    @property
    def stations(self) -> pd.DataFrame:
        """Per station of the time model (each device, the CPU, the link),
        indexed by its name: ``servers``, ``utilization``, ``busy_ns``,
        ``mean_queue``, ``ops``, and per request ``queue_ns`` and
        ``service_ns``: ``r.stations.loc["flash", "utilization"]``. Empty
        without a time model."""
        import pandas as pd

        cols = ["servers", "utilization", "busy_ns", "mean_queue", "ops", "queue_ns", "service_ns"]
        rows = (self.time or {}).get("stations") or []
        df = pd.DataFrame(rows, columns=["name", *cols])
        return df.set_index("name")

    @property
    def clients(self) -> pd.DataFrame:
        """Per client of a closed or open load, indexed by the client
        (its number, or the trace's pid with ``deal = "pid"``):
        ``requests``, ``mean_latency_ns``, ``throughput_rps``. Empty
        without a time model."""
        import pandas as pd

        cols = ["requests", "mean_latency_ns", "throughput_rps"]
        rows = (self.time or {}).get("per_client") or []
        return pd.DataFrame(rows, columns=["client", *cols]).set_index("client")

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
    def memorage(self) -> pd.DataFrame:
        """The ``[vm.memorage]`` figures (docs/memorage.md) as a one-row
        DataFrame: ``r.memorage.loc[0, "borrowed_bytes_max"]``; no rows
        without ``[vm.memorage]`` (or with ``enabled = false``)."""
        import pandas as pd

        m = self.summary.get("memorage")
        return pd.DataFrame([m] if m else [])

    @property
    def timeline(self) -> pd.DataFrame:
        """The interval time series as a DataFrame."""
        import pandas as pd

        return pd.DataFrame(self.timeline_data)

    def to_json(self) -> str:
        """The summary as JSON (what ``tierlab run --json`` prints)."""
        from tierlab.api import summary_json

        return summary_json(self.summary)


def _flat_tiers(tiers: list[dict[str, Any]]) -> pd.DataFrame:
    import pandas as pd

    flat = pd.json_normalize(tiers, sep=".")
    nested = sorted({k for t in tiers for k, v in t.items() if isinstance(v, dict)})
    df = _Tiers(flat.set_index("name"))
    df.attrs["nested"] = nested
    return df


def _tiers_class() -> type:
    import pandas as pd

    class Tiers(pd.DataFrame):  # type: ignore[misc]
        """r.tiers: a DataFrame whose old nested columns still answer, with
        a DeprecationWarning (0.2 flattened them)."""

        @property
        def _constructor(self) -> type:
            frame: type = pd.DataFrame
            return frame

        def __getitem__(self, key: Any) -> Any:
            if (
                isinstance(key, str)
                and key not in self.columns
                and key in self.attrs.get("nested", ())
            ):
                import warnings

                warnings.warn(
                    f"r.tiers[{key!r}]: the nested column is deprecated and goes in 0.3; "
                    f"its figures are the flat columns {key}.* ({key}.{self._first(key)}, ...)",
                    DeprecationWarning,
                    stacklevel=2,
                )
                parts = [c for c in self.columns if str(c).startswith(f"{key}.")]
                rows = [
                    {str(c)[len(key) + 1 :]: row[c] for c in parts} for _, row in self.iterrows()
                ]
                return pd.Series(rows, index=self.index, name=key)
            return super().__getitem__(key)

        def _first(self, key: str) -> str:
            return next(
                str(c)[len(key) + 1 :] for c in self.columns if str(c).startswith(f"{key}.")
            )

    return Tiers


def _Tiers(df: pd.DataFrame) -> pd.DataFrame:
    global _TIERS
    if _TIERS is None:
        _TIERS = _tiers_class()
    out: pd.DataFrame = _TIERS(df)
    return out


_TIERS: type | None = None
