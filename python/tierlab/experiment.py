"""Experiment files: a base hierarchy config, parameter axes, repetitions.

An experiment expands into *points*: the cartesian product of its axes,
times its repetitions (each with its own seed). Every point is a complete
run config, identified by a hash of that config (plus the size and
modification time of a trace file it reads), so a results store can tell
which points are finished whatever order they ran in.

The engine still checks every point's config: this module only checks the
experiment's own keys, the axis key paths and the value lists, and names
the key path of anything wrong (``axis[1].range.num: ...``).
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import product
from pathlib import Path
from typing import Any

from tierlab import _core
from tierlab.config import (
    Config,
    ConfigLike,
    load_config,
    read_toml,
    set_path,
    to_json,
)
from tierlab.errors import ConfigError

EXPERIMENT_KEYS = {
    "name",
    "description",
    "base",
    "repetitions",
    "seed",
    "metrics",
    "timeline",
    "store",
}
AXIS_KEYS = {"key", "values", "labels", "range"}
RANGE_KEYS = {"from", "to", "step", "num", "scale"}
TOP_KEYS = {"experiment", "base", "axis"}


@dataclass(frozen=True)
class Axis:
    """One swept parameter: a config key path and its values.

    ``labels`` name the values in results (the values themselves when no
    labels were given; tables are then shown as compact JSON).
    """

    key: str
    values: tuple[Any, ...]
    labels: tuple[Any, ...]


@dataclass(frozen=True)
class Point:
    """One run of an experiment."""

    hash: str
    index: int
    labels: dict[str, Any]
    rep: int
    seed: int | None
    config: Config = field(repr=False)


@dataclass
class Experiment:
    """An experiment file, loaded and expanded.

    Attributes
    ----------
    name, description
        From ``[experiment]``.
    axes
        The swept parameters, in file order.
    points
        Every run: the product of the axes, times the repetitions.
    metrics
        The summary fields to keep (dotted paths such as ``tiers.0.hits``),
        or None for every numeric field.
    timeline
        Whether each run's interval timeline is kept.
    store
        The default results store (``<name>.sqlite`` in the current folder
        unless the file says otherwise; relative to the experiment file).
    """

    name: str
    description: str
    axes: list[Axis]
    points: list[Point]
    metrics: list[str] | None
    timeline: bool
    store: Path
    repetitions: int

    def meta(self) -> dict[str, Any]:
        """What a results store keeps about the experiment itself."""
        return {
            "name": self.name,
            "description": self.description,
            "axes": [{"key": a.key, "labels": list(a.labels)} for a in self.axes],
            "metrics": self.metrics,
            "timeline": self.timeline,
            "repetitions": self.repetitions,
            "points": len(self.points),
        }


#: The longest experiment name.
MAX_NAME = 100


def load_experiment(
    experiment: ConfigLike, overrides: Mapping[str, Any] | None = None
) -> Experiment:
    """Loads an experiment from a path, TOML text or a dict and expands it.

    ``overrides`` sets config key paths in the base config of every point
    (e.g. ``{"workload.scale": 0.01}``); they are part of each point's hash.

    Examples
    --------
    >>> e = load_experiment('''
    ... [experiment]
    ... name = "demo"
    ... repetitions = 2
    ... [base.workload]
    ... type = "zipf"
    ... objects = 100
    ... requests = 1000
    ... [[base.tier]]
    ... tech = "FILE-MEMORY"
    ... capacity = "10%"
    ... [[axis]]
    ... key = "tier[0].slowdown"
    ... values = [1, 3]
    ... ''')
    >>> [(p.labels["tier[0].slowdown"], p.seed) for p in e.points]
    [(1, 42), (1, 43), (3, 42), (3, 43)]
    """
    raw, folder = read_toml(experiment, "experiment")
    _no_unknown(raw, TOP_KEYS, "")
    exp = raw.get("experiment")
    if not isinstance(exp, dict):
        raise ConfigError("experiment: missing [experiment] table (with at least name = ...)")
    _no_unknown(exp, EXPERIMENT_KEYS, "experiment.")
    name = exp.get("name")
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", name):
        raise ConfigError(
            "experiment.name: required; letters, digits, '-', '_' and '.' (it names the "
            "results in the store)"
        )
    if len(name) > MAX_NAME:
        # It names the report's folder and figures too: a file name of
        # more than 255 bytes cannot be made.
        raise ConfigError(
            f"experiment.name: {len(name)} characters; at most {MAX_NAME} (it names the "
            "results in the store, the report's folder and its figures)"
        )
    description = exp.get("description", "")
    if not isinstance(description, str):
        raise ConfigError("experiment.description: expected a string")

    base = _base(raw, exp, folder)
    for key, value in (overrides or {}).items():
        set_path(base, key, value, f"override {key}")
    # An unknown key or a wrong type fails every point alike: stop here, as
    # for the experiment's own keys. (A value out of range fails its point.)
    err = _core.config_schema_error(to_json(base))
    if err:
        raise ConfigError(f"base.{err[0]}: {err[1]}")

    reps = exp.get("repetitions", 1)
    if not isinstance(reps, int) or isinstance(reps, bool) or reps < 1:
        raise ConfigError(f"experiment.repetitions: {reps!r}; expected an integer of 1 or more")
    seed0 = exp.get("seed")
    if seed0 is not None and (not isinstance(seed0, int) or isinstance(seed0, bool) or seed0 < 0):
        raise ConfigError(f"experiment.seed: {seed0!r}; expected an integer of 0 or more")

    metrics = exp.get("metrics")
    if metrics is not None and (
        not isinstance(metrics, list)
        or not metrics
        or not all(isinstance(m, str) and m for m in metrics)
    ):
        raise ConfigError(
            "experiment.metrics: expected a non-empty list of summary paths such as "
            '["miss_ratio", "throughput_rps", "tiers.0.hits"]'
        )
    timeline = exp.get("timeline", False)
    if not isinstance(timeline, bool):
        raise ConfigError("experiment.timeline: expected true or false")
    store = exp.get("store")
    if store is None:
        store_path = Path(f"{name}.sqlite")
    elif isinstance(store, str) and store:
        store_path = Path(store).expanduser()
        if not store_path.is_absolute() and folder is not None:
            store_path = folder / store_path
    else:
        raise ConfigError("experiment.store: expected a file path")

    axes = [_trace_paths(a, folder) for a in _axes(raw.get("axis", []), base)]
    points = _points(name, base, axes, reps, seed0)
    return Experiment(
        name=name,
        description=description,
        axes=axes,
        points=points,
        metrics=metrics,
        timeline=timeline,
        store=store_path,
        repetitions=reps,
    )


def _no_unknown(table: Mapping[str, Any], allowed: set[str], prefix: str) -> None:
    for k in table:
        if k not in allowed:
            raise ConfigError(
                f"{prefix}{k}: unknown key; expected one of {', '.join(sorted(allowed))}"
            )


def _base(raw: dict[str, Any], exp: dict[str, Any], folder: Path | None) -> Config:
    inline = raw.get("base")
    ref = exp.get("base")
    if inline is not None and ref is not None:
        raise ConfigError(
            "experiment.base: give a base config file or an inline [base] table, not both"
        )
    if ref is not None:
        if not isinstance(ref, str):
            raise ConfigError("experiment.base: expected the path of a hierarchy config (TOML)")
        p = Path(ref).expanduser()
        if not p.is_absolute() and folder is not None:
            p = folder / p
        try:
            cfg = load_config(p)
        except ConfigError as e:
            raise ConfigError(f"experiment.base: {e}") from None
    elif isinstance(inline, dict):
        cfg = load_config(inline)
        w = cfg.get("workload")
        if folder is not None and isinstance(w, dict) and isinstance(w.get("path"), str):
            tp = Path(w["path"]).expanduser()
            if not tp.is_absolute():
                w["path"] = str(folder / tp)
    else:
        raise ConfigError(
            'base: missing; give experiment.base = "config.toml" or an inline [base] table'
        )
    w = cfg.get("workload")
    if isinstance(w, dict) and isinstance(w.get("path"), str):
        # Absolute, so that a point means the same file wherever it runs.
        w["path"] = str(Path(w["path"]).expanduser().resolve())
    return cfg


# --------------------------------------------------------------------------
# key paths: tier[0].capacity, workload.alpha, techs.MY-TECH.read_ns
# --------------------------------------------------------------------------

# --------------------------------------------------------------------------
# axes
# --------------------------------------------------------------------------


def _axes(raw: Any, base: Config) -> list[Axis]:
    if isinstance(raw, dict):
        raw = [raw]
    if not isinstance(raw, list):
        raise ConfigError("axis: expected [[axis]] tables")
    axes: list[Axis] = []
    seen: set[str] = set()
    for i, a in enumerate(raw):
        at = f"axis[{i}]"
        if not isinstance(a, dict):
            raise ConfigError(f"{at}: expected a table with key and values (or range)")
        _no_unknown(a, AXIS_KEYS, f"{at}.")
        key = a.get("key")
        if not isinstance(key, str) or not key:
            raise ConfigError(
                f"{at}.key: required: the config key path to sweep, e.g. tier[0].capacity"
            )
        if key in seen:
            raise ConfigError(f"{at}.key: {key} is swept by two axes")
        seen.add(key)
        # Check the path against the base config now, not once per point.
        set_path(copy.deepcopy(base), key, 0, f"{at}.key")
        if ("values" in a) == ("range" in a):
            raise ConfigError(f"{at}: give values = [...] or range = {{...}}, one of them")
        if "values" in a:
            values = a["values"]
            if not isinstance(values, list) or not values:
                raise ConfigError(f"{at}.values: expected a non-empty list")
        else:
            values = _range(a["range"], f"{at}.range")
        labels = a.get("labels")
        if labels is None:
            labels = [_label(v) for v in values]
        elif not isinstance(labels, list) or len(labels) != len(values):
            raise ConfigError(
                f"{at}.labels: expected a list of {len(values)} labels, one per value"
            )
        elif not all(isinstance(x, str | int | float) and not isinstance(x, bool) for x in labels):
            raise ConfigError(f"{at}.labels: expected strings or numbers")
        if len(set(map(json.dumps, labels))) != len(labels):
            raise ConfigError(f"{at}.labels: two values have the same label")
        axes.append(Axis(key, tuple(values), tuple(labels)))
    return axes


def _trace_paths(a: Axis, folder: Path | None) -> Axis:
    """An axis that sets the trace a point reads (``workload`` tables with a
    ``path``, or ``workload.path``): a relative path is taken from the
    experiment file's folder, as the base config's is, and made absolute,
    so that a point means the same file wherever the sweep is started."""

    def fix(p: Any) -> Any:
        if not isinstance(p, str) or not p:
            return p
        tp = Path(p).expanduser()
        if not tp.is_absolute() and folder is not None:
            tp = folder / tp
        return str(tp.resolve())

    if a.key == "workload.path":
        return Axis(a.key, tuple(fix(v) for v in a.values), a.labels)
    if a.key == "workload":
        values = tuple(
            {**v, "path": fix(v["path"])} if isinstance(v, dict) and "path" in v else v
            for v in a.values
        )
        return Axis(a.key, values, a.labels)
    return a


def _label(v: Any) -> Any:
    if isinstance(v, dict | list):
        return json.dumps(v, sort_keys=True, separators=(",", ":"))
    return v


def size_value(v: Any, where: str) -> tuple[float, str]:
    """A range end (or any capacity): a number, a size or a share, as the
    engine parses sizes (``_core.parse_size``: "64MiB", "4KB", "10%"), with
    its kind (``"number"``, ``"size"``, ``"percent"``); ``where`` names the
    key in the error."""
    if isinstance(v, int | float) and not isinstance(v, bool):
        return float(v), "number"
    if isinstance(v, str):
        try:
            kind, n = _core.parse_size(v)
        except ConfigError as e:
            raise ConfigError(f"{where}: {v!r}: {e}") from None
        return n, "size" if kind == "bytes" else "percent"
    raise ConfigError(
        f'{where}: {v!r}; expected a number, a size such as "64MiB" or a share such as "10%"'
    )


def _range(r: Any, at: str) -> list[Any]:
    if not isinstance(r, dict):
        raise ConfigError(f"{at}: expected a table {{ from, to, step or num [, scale] }}")
    _no_unknown(r, RANGE_KEYS, f"{at}.")
    if "from" not in r or "to" not in r:
        raise ConfigError(f"{at}: from and to are required")
    lo, kind_lo = size_value(r["from"], f"{at}.from")
    hi, kind_hi = size_value(r["to"], f"{at}.to")
    if kind_lo != kind_hi and "number" not in (kind_lo, kind_hi):
        raise ConfigError(f"{at}: from and to must be of one kind (sizes, shares or numbers)")
    kind = kind_lo if kind_lo != "number" else kind_hi
    if hi < lo:
        raise ConfigError(f"{at}.to: {r['to']!r} is below from = {r['from']!r}")
    scale = r.get("scale", "linear")
    if scale not in ("linear", "log"):
        raise ConfigError(f'{at}.scale: {scale!r}; expected "linear" or "log"')
    if ("step" in r) == ("num" in r):
        raise ConfigError(f"{at}: give step or num, one of them")
    if "num" in r:
        n = r["num"]
        if not isinstance(n, int) or isinstance(n, bool) or n < 1 or n > 100_000:
            raise ConfigError(f"{at}.num: {n!r}; expected an integer from 1 to 100000")
        if n == 1:
            xs = [lo]
        elif scale == "log":
            if lo <= 0:
                raise ConfigError(f"{at}.from: a log scale starts above zero")
            xs = [lo * (hi / lo) ** (i / (n - 1)) for i in range(n)]
        else:
            xs = [lo + (hi - lo) * i / (n - 1) for i in range(n)]
    else:
        if scale == "log":
            raise ConfigError(f"{at}.scale: a log scale takes num, not step")
        step, _ = size_value(r["step"], f"{at}.step")
        if step <= 0:
            raise ConfigError(f"{at}.step: must be greater than zero")
        count = math.floor((hi - lo) / step + 1e-9) + 1
        if count > 100_000:
            raise ConfigError(f"{at}.step: gives {count} values; at most 100000")
        xs = [lo + i * step for i in range(count)]
    integral = kind == "size" or all(
        isinstance(r.get(k), int) and not isinstance(r.get(k), bool)
        for k in ("from", "to", "step")
        if k in r
    )
    if kind == "percent":
        return [f"{_tidy(x)}%" for x in xs]
    if integral and scale == "linear":
        return [round(x) for x in xs]
    if integral:
        out = sorted({round(x) for x in xs})
        return out
    return [_tidy(x) for x in xs]


def _tidy(x: float) -> float | int:
    """Drops binary noise (0.30000000000000004) so labels and configs read well;
    a whole number stays a whole number ("5%", not "5.0%")."""
    y = float(f"{x:.10g}")
    return int(y) if y.is_integer() else y


# --------------------------------------------------------------------------
# points
# --------------------------------------------------------------------------


def _points(
    name: str, base: Config, axes: Sequence[Axis], reps: int, seed0: int | None
) -> list[Point]:
    w = base.get("workload")
    seeded = isinstance(w, dict) and w.get("type") not in (None, "trace")
    if reps > 1 and not seeded:
        raise ConfigError(
            "experiment.repetitions: repetitions vary the seed of a generated workload; "
            "this base config reads a trace (or has no [workload])"
        )
    if seed0 is None:
        seed0 = int(w.get("seed", 42)) if seeded and isinstance(w, dict) else 42
    out: list[Point] = []
    combos = product(*[range(len(a.values)) for a in axes])
    for combo in combos:
        cfg_axes = copy.deepcopy(base)
        labels: dict[str, Any] = {}
        for a, i in zip(axes, combo, strict=True):
            set_path(cfg_axes, a.key, a.values[i], f"axis {a.key}")
            labels[a.key] = a.labels[i]
        err = _core.config_schema_error(to_json(cfg_axes))
        if err:
            raise ConfigError(_axis_error(axes, labels, *err))
        # A workload axis may swap the generator for a trace, which has no
        # seed (workload.seed: not used by type = "trace").
        wa = cfg_axes.get("workload")
        point_seeded = seeded and isinstance(wa, dict) and wa.get("type") not in (None, "trace")
        if reps > 1 and not point_seeded:
            shown = ", ".join(f"{k}={v}" for k, v in labels.items())
            raise ConfigError(
                "experiment.repetitions: repetitions vary the seed of a generated workload; "
                f"the point {shown} reads a trace"
            )
        for rep in range(reps):
            cfg = copy.deepcopy(cfg_axes)
            seed: int | None = None
            if point_seeded:
                seed = seed0 + rep
                cfg["workload"]["seed"] = seed
            out.append(Point(point_hash(cfg), len(out), labels, rep, seed, cfg))
    return out


def _axis_error(axes: Sequence[Axis], labels: Mapping[str, Any], path: str, msg: str) -> str:
    """A schema error of a point whose base config passed: an axis's key
    the schema does not have, or a value of the wrong type."""
    for j, a in enumerate(axes):
        if path == a.key or path.startswith((f"{a.key}.", f"{a.key}[")):
            # The key itself is unknown, or a field inside its value is.
            if f"unknown field `{a.key.rsplit('.', 1)[-1]}`" in msg:
                return f"axis[{j}].key: {path}: {msg}"
            return f"axis[{j}].values: {a.key} = {labels[a.key]!r}: {msg}"
    shown = ", ".join(f"{k}={v}" for k, v in labels.items())
    return f"{path}: {msg} (at the point {shown})"


def point_hash(cfg: Config) -> str:
    """sha256 of the config's canonical JSON, and of the size and modification
    time of the trace file it reads (a changed file is a new point)."""
    h = hashlib.sha256(json.dumps(cfg, sort_keys=True, separators=(",", ":")).encode())
    w = cfg.get("workload")
    if isinstance(w, dict) and isinstance(w.get("path"), str):
        try:
            st = os.stat(w["path"])
            h.update(f"|{st.st_size}|{st.st_mtime_ns}".encode())
        except OSError:
            h.update(b"|missing")
    return h.hexdigest()
