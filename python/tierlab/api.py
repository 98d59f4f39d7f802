"""The Python API: bulk calls over the engine, never a call per request."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tierlab import _core
from tierlab.config import ConfigLike, load_config, to_json, with_trace
from tierlab.errors import ConfigError

if TYPE_CHECKING:
    import pandas as pd

Progress = Callable[[int, "int | None"], object]


@dataclass
class RunResult:
    """The outcome of one run.

    Attributes
    ----------
    summary
        The JSON object of ``tierlab run --json``: whole-run figures and
        ``tiers``, a list of per-tier dicts, fastest first.
    timeline_data
        One point every ``run.interval`` requests: ``requests``,
        ``miss_ratio`` and ``amat_ns`` over that interval, and
        ``cumulative_miss_ratio``.
    """

    summary: dict[str, Any]
    timeline_data: dict[str, list[float]] = field(repr=False)

    @property
    def tiers(self) -> pd.DataFrame:
        """Per-tier counters, one row per tier, fastest first."""
        import pandas as pd

        return pd.DataFrame(self.summary["tiers"])

    @property
    def timeline(self) -> pd.DataFrame:
        """The interval time series as a DataFrame."""
        import pandas as pd

        return pd.DataFrame(self.timeline_data)

    def to_json(self) -> str:
        """The summary as JSON (what ``tierlab run --json`` prints)."""
        return json.dumps(self.summary)


def simulate(
    config: ConfigLike,
    trace: str | os.PathLike[str] | None = None,
    *,
    format: str | None = None,
    unit_size: bool | None = None,
    progress: Progress | None = None,
) -> RunResult:
    """Runs a hierarchy config over its workload or a trace file.

    Parameters
    ----------
    config
        A path to a TOML file, TOML text, or a dict of the same schema.
    trace
        A trace file that replaces the config's ``[workload]``.
    format
        ``"oracle"`` or ``"csv"`` for ``trace`` (guessed from its name when absent).
    unit_size
        Count every object as size 1 (capacities in objects).
    progress
        Called as ``progress(done, total)`` between chunks of a million requests.

    The engine releases the GIL while it runs and stops on Ctrl-C
    (``KeyboardInterrupt``).

    Examples
    --------
    >>> r = simulate({"workload": {"type": "loop", "objects": 10, "requests": 100,
    ...                            "unit_size": True},
    ...               "tier": [{"tech": "DRAM-DDR3", "capacity": 9, "policy": "lru"}]})
    >>> r.summary["misses"]  # LRU on a loop one larger than the cache always misses
    100
    """
    cfg = load_config(config)
    if trace is not None:
        cfg = with_trace(cfg, trace, format, unit_size)
    elif unit_size is not None and isinstance(cfg.get("workload"), dict):
        cfg["workload"]["unit_size"] = unit_size
    out = json.loads(_core.simulate(to_json(cfg), progress))
    return RunResult(summary=out["summary"], timeline_data=out["timeline"])


def _workload(source: ConfigLike | str, format: str | None, unit_size: bool | None) -> str:
    """A config for trace tools: a TOML config (its workload) or a trace file."""
    if isinstance(source, Mapping) or str(source).endswith(".toml") or "\n" in str(source):
        cfg = load_config(source)
        if unit_size is not None and isinstance(cfg.get("workload"), dict):
            cfg["workload"]["unit_size"] = unit_size
    else:
        cfg = with_trace({}, os.fspath(source), format, unit_size)
    return to_json(cfg)


def trace_stats(
    source: ConfigLike,
    format: str | None = None,
    *,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Requests, unique keys, footprint and read/write mix of a trace file or
    of a config's workload."""
    return dict(json.loads(_core.trace_stats(_workload(source, format, None), progress)))


def trace_convert(
    source: ConfigLike,
    out: str | os.PathLike[str],
    format: str | None = None,
    *,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Writes a trace file or a config's workload as oracleGeneral (with
    next-access times); returns the trace's stats."""
    return dict(json.loads(_core.trace_convert(_workload(source, format, None), out, progress)))


GENERATORS = ("postmark", "bonnie", "web", "specweb", "proxy", "multiprogram")


def trace_generate(
    kind: str,
    out: str | os.PathLike[str],
    *,
    preset: str | None = None,
    seed: int | None = None,
    scale: float | None = None,
    format: str | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Writes a benchmark generator's trace and returns its stats.

    Parameters
    ----------
    kind
        One of ``GENERATORS`` (docs/workloads.md).
    out
        The file to write.
    preset, seed, scale
        ``[workload]`` keys of the same names (defaults: ``"default"``, 42, 1).
    format
        ``"oracle"`` (libCacheSim's oracleGeneral: no operation field, writes
        and deletes become reads) or ``"csv"`` (``time,key,size,op`` with a
        header: operations kept). Default: ``"csv"`` when ``out`` ends in
        ``.csv`` or ``.txt``, else ``"oracle"``.

    The same arguments write the same bytes.

    Examples
    --------
    >>> import os, tempfile
    >>> out = os.path.join(tempfile.mkdtemp(), "pm.csv")
    >>> s = trace_generate("postmark", out, preset="s1", scale=0.001, seed=1)
    >>> s["writes"] > 0 and s["deletes"] > 0 and s["reads"] > 0
    True
    """
    if kind not in GENERATORS:
        raise ConfigError(
            f"workload.type: unknown generator {kind!r}; expected one of {', '.join(GENERATORS)}"
        )
    w: dict[str, Any] = {"type": kind}
    for k, v in (("preset", preset), ("seed", seed), ("scale", scale)):
        if v is not None:
            w[k] = v
    if format is None:
        format = "csv" if str(out).lower().endswith((".csv", ".txt")) else "oracle"
    if format not in ("oracle", "csv"):
        raise ConfigError(f"format: {format!r}; expected oracle or csv")
    cfg = to_json({"workload": w})
    write = _core.trace_write_csv if format == "csv" else _core.trace_convert
    return dict(json.loads(write(cfg, out, progress)))


def techs() -> list[dict[str, Any]]:
    """The built-in technology catalog, each entry with its source."""
    return list(json.loads(_core.techs()))
