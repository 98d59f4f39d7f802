"""The Python API: bulk calls over the engine, never a call per request."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from tierlab import _core
from tierlab.config import ConfigLike, load_config, set_path, to_json, with_trace
from tierlab.errors import ConfigError

if TYPE_CHECKING:
    import pandas as pd

    from tierlab._result import RunResult

Progress = Callable[[int, "int | None"], object]


def __getattr__(name: str) -> object:
    # RunResult is a dataclass, and dataclasses imports inspect (~10 ms, a
    # tenth of `tierlab run --json` on a small config): it lives in
    # tierlab._result, imported when a RunResult is made or asked for, and
    # stays reachable here for code that imported it from tierlab.api.
    if name == "RunResult":
        from tierlab._result import RunResult

        return RunResult
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def simulate(
    config: ConfigLike,
    trace: str | os.PathLike[str] | None = None,
    *,
    format: str | None = None,
    unit_size: bool | None = None,
    skip_bad: bool | None = None,
    progress: Progress | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> RunResult:
    """Runs a hierarchy config over its workload or a trace file.

    Parameters
    ----------
    config
        A path to a TOML file, TOML text, or a dict of the same schema.
    trace
        A trace file that replaces the config's ``[workload]``.
    format
        The format of ``trace``: one of ``"oracle"`` (libCacheSim's
        oracleGeneral), ``"csv"``, ``"strace"``, ``"lackey"``, ``"msr"``,
        ``"twitter"``, ``"memtrace"`` (``tierlab._core.trace_formats()``).
        When absent it is recognised from the file's content (then its
        name). Only with ``trace``: a config's own trace names its format in
        ``[workload]``, and ``format`` without ``trace`` is a ConfigError.
    unit_size
        Count every object as size 1 (capacities in objects).
    skip_bad
        Pass over malformed records of a text trace, counting them
        (``summary["skipped_records"]``), instead of stopping at the first.
    progress
        Called as ``progress(done, total)`` between chunks of a million requests.
        A pre-pass (the footprint for a capacity given as a share, Belady's
        next-access times) reports first, with ``total`` None; then the run
        counts its own requests from 0, with its total when known.
    overrides
        Config key paths to set before the run, as ``tierlab run --set`` does:
        ``{"vm.page_size": "8KiB", "tier[0].capacity": 4096}``. Tables on
        the way are created; a list index must exist in the config.

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
    from tierlab._result import RunResult

    out = simulate_raw(
        config,
        trace,
        format=format,
        unit_size=unit_size,
        skip_bad=skip_bad,
        progress=progress,
        overrides=overrides,
    )
    return RunResult(summary=out["summary"], timeline_data=out["timeline"])


def simulate_raw(
    config: ConfigLike,
    trace: str | os.PathLike[str] | None = None,
    *,
    format: str | None = None,
    unit_size: bool | None = None,
    skip_bad: bool | None = None,
    progress: Progress | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """:func:`simulate` as the engine's JSON object, ``summary`` and
    ``timeline``, without a RunResult: ``tierlab run --json`` prints the
    summary from it and skips the import of dataclasses."""
    if trace is None and format is not None:
        # It used to be ignored without a word.
        raise ConfigError(
            f"format: {format!r} applies to a trace file given with it (trace=, --trace); "
            "a config's own trace names its format in [workload] format"
        )
    cfg = load_config(config)
    if trace is not None:
        cfg = with_trace(cfg, trace, format, unit_size, skip_bad)
    else:
        _override(cfg, unit_size=unit_size, skip_bad=skip_bad)
    for key, value in (overrides or {}).items():
        set_path(cfg, key, value, f"--set {key}")
    return dict(json.loads(_core.simulate(to_json(cfg), progress)))


def summary_json(summary: Mapping[str, Any]) -> str:
    """A run's summary as the JSON ``tierlab run --json`` prints and
    :meth:`RunResult.to_json` returns (one definition for both)."""
    return json.dumps(summary)


def _override(cfg: dict[str, Any], **keys: bool | None) -> None:
    """Sets workload keys given on the command line (None: keep the config's)."""
    w = cfg.get("workload")
    if isinstance(w, dict):
        w.update({k: v for k, v in keys.items() if v is not None})


def _workload(
    source: ConfigLike | str,
    format: str | None,
    *,
    unit_size: bool | None = None,
    skip_bad: bool | None = None,
) -> str:
    """A config for trace tools: a TOML config (its workload) or a trace file."""
    if isinstance(source, Mapping) or str(source).endswith(".toml") or "\n" in str(source):
        if format is not None:
            raise ConfigError(
                f"format: {format!r} applies to a trace file; a config's own trace "
                "names its format in [workload] format"
            )
        cfg = load_config(source)
        _override(cfg, unit_size=unit_size, skip_bad=skip_bad)
    else:
        cfg = with_trace({}, os.fspath(source), format, unit_size, skip_bad)
    return to_json(cfg)


def trace_stats(
    source: ConfigLike,
    format: str | None = None,
    *,
    skip_bad: bool | None = None,
    progress: Progress | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Requests, unique keys, footprint and read/write mix of a trace file or
    of a config's workload."""
    wl = _workload(source, format, skip_bad=skip_bad)
    return dict(json.loads(_core.trace_stats(wl, progress)))


def output_format(out: str | os.PathLike[str], given: str | None = None) -> str:
    """The format a trace is written in: ``given``, else ``"csv"`` for a
    name ending in ``.csv`` or ``.txt``, else ``"oracle"``."""
    if given is None:
        name = str(out).lower().removesuffix(".zst")
        if name.endswith(".memtrace"):
            return "memtrace"
        return "csv" if name.endswith((".csv", ".txt")) else "oracle"
    if given not in ("oracle", "csv", "memtrace"):
        raise ConfigError(f"output format {given!r}; expected oracle, csv or memtrace")
    return given


def output_problem(
    path: str | os.PathLike[str], reads: Iterable[object] = (), *, label: str | None = None
) -> str | None:
    """Why ``path`` cannot take a command's output (None: it can): a
    directory, a missing folder, or one of the files the command ``reads``.
    Commands check it before their work, which may take minutes, so that
    none ends in a result it cannot write, or written over its own input.
    ``label`` (an option such as ``--timeline``) starts the message."""
    from pathlib import Path

    out = Path(path)
    where = f"{label} {os.fspath(path)}" if label else os.fspath(path)
    if out.is_dir():
        return f"{where}: is a directory; name a file to write"
    if not out.parent.is_dir():
        return f"{where}: no such directory {str(out.parent)!r}"
    for r in reads:
        if isinstance(r, (str, os.PathLike)) and out.exists() and Path(r).is_file():
            if os.path.samefile(out, r):
                return f"{where}: is the input {os.fspath(r)}; write to another file"
    return None


def trace_convert(
    source: ConfigLike,
    out: str | os.PathLike[str],
    format: str | None = None,
    *,
    to: str | None = None,
    skip_bad: bool | None = None,
    progress: Progress | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Writes a trace file or a config's workload as oracleGeneral (with
    next-access times; no operation field), as CSV (``time,key,size,op``
    with a header, operations kept) or, from a memory trace, as memtrace
    (tierlab's binary memory trace by byte address, docs/vm.md); returns
    the trace's stats.

    ``format`` is the input's format; ``to`` the output's (``"oracle"``,
    ``"csv"`` or ``"memtrace"``; default ``"csv"`` when ``out`` ends in
    ``.csv`` or ``.txt``, ``"memtrace"`` for ``.memtrace``).
    """
    to = output_format(out, to)
    wl = _workload(source, format, skip_bad=skip_bad)
    raw = _core.trace_convert(wl, out, to == "csv", progress, to == "memtrace")
    return dict(json.loads(raw))


#: The benchmark generators ``trace_generate`` takes (the engine's registry).
GENERATORS = tuple(_core.generators())


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
    format = output_format(out, format)
    cfg = to_json({"workload": w})
    return dict(json.loads(_core.trace_convert(cfg, out, format == "csv", progress)))


def techs() -> pd.DataFrame:
    """The built-in technology catalog: one row per medium, one column per
    field (``tierlab techs --json`` gives the same entries), each with its
    ``source``. A figure the sources do not give is missing (NaN).

    Examples
    --------
    >>> t = techs().set_index("name")
    >>> float(t.loc["DRAM-DDR3", "read_ns"]), int(t.loc["NAND-SLC", "access_unit"])
    (10.0, 2048)
    """
    import pandas as pd

    entries = catalog_entries()
    return pd.DataFrame(entries, columns=_fields(entries))


def catalog_entries(overrides: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """The catalog as the engine serialises it (the entries of
    ``tierlab techs --json``; a field no source gives is left out), with a
    config's ``[techs]`` table applied when given."""
    raw = _core.techs(None if overrides is None else json.dumps(overrides))
    return list(json.loads(raw))


def _fields(entries: Sequence[Mapping[str, Any]]) -> list[str]:
    """Every field any entry has, in the engine's order: each entry lists
    its fields in that order, so the order is the one all entries agree on
    (a topological sort of their sequences; ties by first appearance)."""
    seen: dict[str, int] = {}
    after: dict[str, set[str]] = {}
    for e in entries:
        keys = list(e)
        for i, k in enumerate(keys):
            seen.setdefault(k, len(seen))
            after.setdefault(k, set()).update(keys[:i])
    cols: list[str] = []
    while len(cols) < len(seen):
        ready = [k for k in seen if k not in cols and after[k] <= set(cols)]
        cols.append(min(ready, key=seen.__getitem__))
    return cols


def mrc(
    trace_or_config: ConfigLike,
    *,
    format: str | None = None,
    unit_size: bool = False,
    policy: str | Mapping[str, Any] | None = None,
    sizes: Sequence[int | str] | None = None,
    shards: float | None = None,
    shards_size: int | None = None,
    config: ConfigLike | None = None,
    progress: Progress | None = None,
) -> pd.DataFrame:
    """A miss-ratio curve: the miss ratio at each cache size, in one pass.

    Parameters
    ----------
    trace_or_config
        A trace file, or a config (a ``.toml`` path, TOML text or a dict)
        whose ``[workload]`` is read; its tiers are not used.
    format
        The format of a trace file, as :func:`simulate` takes it (``"oracle"``,
        ``"csv"``, ``"strace"``, ``"lackey"``, ``"msr"``, ``"twitter"``,
        ``"memtrace"``), recognised from its content when absent. Only with
        a trace file: with a config it is a ConfigError.
    unit_size
        Count every object as size 1: sizes are in objects, not bytes. A
        config whose workload sets ``unit_size`` keeps it.
    policy
        A policy name (``"fifo"``) or table (``{"type": "clock", "bits": 2}``):
        simulate one tier of that policy at each of ``sizes`` instead of
        computing the LRU curve.
    sizes
        Cache sizes written as capacities are: counts (bytes, or objects with
        ``unit_size``), ``"1GiB"``, or a share of the footprint ``"10%"``.
        Required with ``policy`` or ``config``. Without them the curve is
        evaluated exactly at these sizes; when absent it has a point at every
        distance below 4096 and then every 1/2048 of the size (exact there).
    shards
        Sampling rate in (0, 1]: SHARDS (Waldspurger et al., FAST 2015) at a
        fixed rate instead of the exact curve; 0.01 reads 1% of the keys.
    shards_size
        Fixed-size SHARDS: track at most this many keys.
    config
        A hierarchy config (its tiers, fill rule, policies): simulate the
        whole hierarchy at each of ``sizes``, each tier's capacity scaled so
        that their sum is the size.
    progress
        Called as ``progress(done, None)`` about every million requests.

    Returns
    -------
    pandas.DataFrame
        Columns ``size`` (increasing) and ``miss_ratio`` (misses over reads
        and writes; deletes are not requests); with ``sizes`` given, also
        ``label``: each point's size as given (``"10%"``, ``"1MiB"``,
        ``"500"``), since the engine resolves, sorts and merges sizes.
        Sizes that resolve alike make one point, labelled by the first
        given. ``attrs["largest_object"]``
        is the largest object in the LRU stack (bytes, or 1 with
        ``unit_size``; 0 for a simulated curve): at sizes below it the
        one-pass curve counts an object that an LRU tier of that size
        refuses, and can read higher than the tier's (docs/mrc.md).
        A SHARDS curve leaves out the sizes holding fewer than 50 sampled
        objects (too few to trust; the engine's rule, the same as
        ``tierlab mrc``'s), warns with a ``ShardsWarning`` saying so, and
        keeps the note in ``attrs["left_out"]`` (None when nothing was left out).

    Examples
    --------
    >>> loop = {"workload": {"type": "loop", "objects": 10, "requests": 100,
    ...                      "unit_size": True}}
    >>> df = mrc(loop, sizes=[9, 10])  # LRU: a loop one larger than the cache always misses
    >>> df.miss_ratio.tolist()
    [1.0, 0.1]
    >>> df.label.tolist()
    ['9', '10']
    """
    import pandas as pd

    xs, ys, largest, method, labels, note = _mrc_curve(
        trace_or_config, format, unit_size, policy, sizes, shards, shards_size, config, progress
    )
    if note is not None:
        import warnings

        from tierlab.errors import ShardsWarning

        warnings.warn(note, ShardsWarning, stacklevel=2)
    cols: dict[str, Any] = {"size": pd.Series(xs, dtype="uint64")}
    if labels is not None:
        cols["label"] = labels
    cols["miss_ratio"] = ys
    df = pd.DataFrame(cols)
    df.attrs["largest_object"] = largest
    df.attrs["method"] = method
    df.attrs["left_out"] = note
    return df


def mrc_method(
    *,
    policy: str | Mapping[str, Any] | None = None,
    sizes: Sequence[int | str] | None = None,
    shards: float | None = None,
    shards_size: int | None = None,
    config: ConfigLike | None = None,
) -> str:
    """The method :func:`mrc` uses for these arguments, as a label for plots
    ("LRU (exact)", "LRU, SHARDS rate 0.01", "fifo (simulated)",
    "hierarchy (simulated)"); raises ConfigError when they do not go
    together. The engine's rule; nothing is read."""
    pol, hier, size_list = _mrc_args(policy, sizes, config)
    return _core.mrc_method(size_list, shards, _count("shards_size", shards_size), pol, hier)


def _count(key: str, n: int | None) -> int | None:
    """A count the engine takes as 64 bits: out of that range, a ConfigError
    naming the key (the binding would raise OverflowError)."""
    if n is not None and not isinstance(n, bool) and isinstance(n, int) and not 0 <= n < 2**64:
        shown = str(n) if n.bit_length() < 1000 else f"a {n.bit_length()}-bit integer"
        raise ConfigError(f"{key}: {shown[:40]} is out of range; from 0 to {2**64 - 1}")
    return n


def _mrc_args(
    policy: str | Mapping[str, Any] | None,
    sizes: Sequence[int | str] | None,
    config: ConfigLike | None,
) -> tuple[str | None, str | None, list[str] | None]:
    """mrc's policy, hierarchy and sizes as the engine takes them."""
    if isinstance(policy, Mapping):
        policy = dict(policy)
    pol = None if policy is None else json.dumps(policy)
    hier = None if config is None else to_json(load_config(config))
    return pol, hier, None if sizes is None else [str(s) for s in sizes]


def mrc_points(
    trace_or_config: ConfigLike,
    *,
    format: str | None = None,
    unit_size: bool = False,
    policy: str | Mapping[str, Any] | None = None,
    sizes: Sequence[int | str] | None = None,
    shards: float | None = None,
    shards_size: int | None = None,
    config: ConfigLike | None = None,
    progress: Progress | None = None,
) -> tuple[list[int], list[float], int, str | None]:
    """:func:`mrc` as two lists (sizes, miss ratios), the largest object
    in the stack (0 for a simulated curve; ``attrs["largest_object"]`` of
    :func:`mrc`'s frame) and the note on sizes a SHARDS sample left out
    (``attrs["left_out"]``), without pandas and without a warning: the
    command line writes its CSV from these, and skips pandas' import time."""
    xs, ys, largest, _method, _labels, note = _mrc_curve(
        trace_or_config, format, unit_size, policy, sizes, shards, shards_size, config, progress
    )
    return xs, ys, largest, note


def _mrc_curve(
    trace_or_config: ConfigLike,
    format: str | None,
    unit_size: bool,
    policy: str | Mapping[str, Any] | None,
    sizes: Sequence[int | str] | None,
    shards: float | None,
    shards_size: int | None,
    config: ConfigLike | None,
    progress: Progress | None,
) -> tuple[list[int], list[float], int, str, list[str] | None, str | None]:
    """The engine's curve: sizes, miss ratios, the largest object, the
    method's label, with sizes given each point's size as given, and the
    note on sizes a SHARDS sample was too small for (left out)."""
    # Which method (exact, SHARDS, simulated), whether the options go
    # together, and how sizes resolve and merge are the engine's rules
    # (tierlab_core::mrc::Ask, parse_sizes).
    cfg = _workload(trace_or_config, format, unit_size=True if unit_size else None)
    pol, hier, size_list = _mrc_args(policy, sizes, config)
    xs, ys, largest, method, labels, note = _core.mrc(
        cfg, size_list, shards, _count("shards_size", shards_size), pol, hier, progress
    )
    return list(xs), list(ys), largest, method, labels, note
