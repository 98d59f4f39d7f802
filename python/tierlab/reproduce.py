"""``tierlab reproduce NAME``: a source paper's experiment, side by side with
the paper's figures.

A reproduction is one module of :mod:`tierlab.reproductions` (``s1.py``,
``s2.py``, ``s5.py``, ...) holding its :class:`System`: the paper, the bundled
experiment files it runs (``tierlab/experiments/<stem>.toml``) and a
``run(ctx)`` function that runs them through a :class:`Context` (sweeps into
``<out>/<stem>.sqlite``) and returns an :class:`Outcome`: the paper's figures
beside tierlab's (:class:`Figure`), report sections with the curves they come
from, and notes on what drives each difference. :func:`reproduce` runs any
system the same way and writes the HTML report with the side-by-side table
first; ``tierlab reproduce NAME --json`` prints the figures as
``{"system", "figures": [{"id", "label", "paper", "tierlab", "unit"}]}``.
Adding a reproduction is one module and its name in
:data:`tierlab.reproductions.NAMES`.
docs/sources.md describes the papers; docs/reproduce-<name>.md gives each
reproduction's parameters, sources and measured tables.
"""

from __future__ import annotations

import copy
import json
import math
import os
import time
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import import_module, resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tierlab.errors import ConfigError
from tierlab.reproductions import NAMES

if TYPE_CHECKING:
    import pandas as pd

    from tierlab._sweep import SweepProgress, SweepReport
    from tierlab.report import Report, Section


@dataclass(frozen=True)
class Figure:
    """One figure of a paper beside tierlab's.

    Values are plain numbers: fractions (not percent), bytes, microseconds
    where the id ends in ``_us``. ``band`` is the range tierlab's figure is
    expected in (inclusive; an open end is ``None``), or ``None`` when the
    figure is reported without one.
    """

    id: str
    label: str
    paper: float | None
    tierlab: float | None
    unit: str
    band: tuple[float | None, float | None] | None = None

    @property
    def in_band(self) -> bool | None:
        """Whether tierlab's figure lies in the band (``None``: no band, or no figure)."""
        if self.band is None or self.tierlab is None or not math.isfinite(self.tierlab):
            return None
        lo, hi = self.band
        return (lo is None or self.tierlab >= lo) and (hi is None or self.tierlab <= hi)

    def as_json(self) -> dict[str, Any]:
        """The figure as ``--json`` prints it (NaN and infinities as null)."""

        def num(x: float | None) -> float | None:
            return None if x is None or not math.isfinite(x) else float(x)

        return {
            "id": self.id,
            "label": self.label,
            "paper": num(self.paper),
            "tierlab": num(self.tierlab),
            "unit": self.unit,
        }


@dataclass
class Outcome:
    """What a reproduction's ``run`` returns: its figures beside the paper's,
    report sections (tables and the curves the figures come from), and notes
    on what drives the differences, beyond the system's own."""

    figures: list[Figure]
    sections: list[Section] = field(default_factory=list)
    notes: tuple[str, ...] = ()
    #: (title, table) printed by ``tierlab reproduce`` under the side-by-side
    #: table (the report shows them in its sections).
    tables: list[tuple[str, pd.DataFrame]] = field(default_factory=list)

    def __add__(self, other: Outcome) -> Outcome:
        return Outcome(
            [*self.figures, *other.figures],
            [*self.sections, *other.sections],
            (*self.notes, *other.notes),
            [*self.tables, *other.tables],
        )


@dataclass
class Context:
    """What a reproduction runs with: the output folder, the scale, the sweep's
    scheduler and workers; :meth:`sweep` runs a bundled experiment."""

    out: Path
    scale: float = 1.0
    scheduler: str | None = None
    workers: int | None = None
    progress: SweepProgress | None = None
    #: (store, sweep report) of every experiment run, in order.
    sweeps: list[tuple[Path, SweepReport]] = field(default_factory=list)

    def experiment(self, stem: str) -> dict[str, Any]:
        """The bundled experiment ``stem``, scaled by :attr:`scale`."""
        return scaled_experiment(stem, self.scale)

    def sweep(self, stem: str | dict[str, Any], name: str | None = None) -> pd.DataFrame:
        """Runs a bundled experiment (``stem``), or an experiment dict named
        ``name``, through the sweep into ``<out>/<name>.sqlite`` and returns its
        results; fails if every point failed."""
        from tierlab._sweep import sweep
        from tierlab.store import load

        if isinstance(stem, str):
            exp, name = self.experiment(stem), name or stem
        else:
            exp, name = stem, name or str(stem["experiment"]["name"])
        store = self.out / f"{name}.sqlite"
        rep = sweep(
            exp,
            store=store,
            scheduler=self.scheduler,
            workers=self.workers,
            progress=self.progress,
        )
        self.sweeps.append((store, rep))
        df = load(store, str(exp["experiment"]["name"]))
        if not (df["status"] == "ok").any():
            first = df["error"].dropna().iloc[0] if df["error"].notna().any() else "unknown"
            raise ConfigError(f"reproduce {name}: every point failed; the first: {first}")
        return df


@dataclass(frozen=True)
class System:
    """One reproduction: the paper, the bundled experiments it runs, how it
    runs them and sets the results beside the paper's, and what drives the
    differences."""

    #: The name on the command line (``s1``); its first experiment has this stem.
    name: str
    #: The paper, cited by title, authors and venue.
    paper: str
    #: The bundled experiment files it runs (stems of ``experiments/*.toml``).
    experiments: tuple[str, ...]
    #: Runs the experiments and compares: ``run(ctx) -> Outcome``.
    run: Callable[[Context], Outcome]
    #: What drives the differences, one sentence group per note.
    notes: tuple[str, ...]

    @property
    def doc(self) -> str:
        """The reproduction's write-up, in the repository."""
        return f"docs/reproduce-{self.name}.md"


@dataclass
class Reproduction:
    """The outcome of :func:`reproduce`."""

    name: str
    system: System
    outcome: Outcome
    report: Report
    sweeps: list[tuple[Path, SweepReport]]
    elapsed_s: float

    @property
    def figures(self) -> list[Figure]:
        return self.outcome.figures

    @property
    def comparison(self) -> pd.DataFrame:
        """The side-by-side table."""
        return figure_table(self.outcome.figures)

    @property
    def notes(self) -> tuple[str, ...]:
        return (*self.system.notes, *self.outcome.notes)

    def as_json(self) -> dict[str, Any]:
        """``{"system", "figures"}`` as ``tierlab reproduce NAME --json`` prints it."""
        return {"system": self.name, "figures": [f.as_json() for f in self.outcome.figures]}


#: Every reproduction, by the module that holds it (tierlab.reproductions.NAMES).
#: Built on first use, so that a reproduction module may be imported first
#: (it imports this module, which would otherwise import it back half-made).
REPRODUCTIONS: tuple[str, ...] = NAMES
_systems: dict[str, System] = {}


def systems() -> dict[str, System]:
    """Every reproduction by name: each module's ``SYSTEM``."""
    if not _systems:
        _systems.update({m: import_module(f"tierlab.reproductions.{m}").SYSTEM for m in NAMES})
    return _systems


def __getattr__(name: str) -> Any:
    # ``SYSTEMS`` stays a module attribute, made on first access.
    if name == "SYSTEMS":
        return systems()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def system(name: str) -> System:
    """The reproduction called ``name``."""
    if name not in NAMES:
        raise ConfigError(f"unknown reproduction {name!r}; expected one of {', '.join(NAMES)}")
    return systems()[name]


def experiment_text(stem: str) -> str:
    """A bundled experiment file (``experiments/<stem>.toml``)."""
    f = resources.files("tierlab") / "experiments" / f"{stem}.toml"
    if not f.is_file():
        raise ConfigError(f"no bundled experiment {stem!r}")
    return f.read_text("utf-8")


def scale_size(v: Any, f: float) -> Any:
    """A capacity times ``f``: numbers and sizes scale, shares ("10%") do not."""
    if isinstance(v, bool):
        return v
    if isinstance(v, int | float):
        return max(1, round(v * f))
    if isinstance(v, str) and not v.strip().endswith("%"):
        from tierlab.experiment import size_value

        n, kind = size_value(v, "capacity")
        if kind == "size":
            return max(1, round(n * f))
    return v


def scaled_run(cfg: dict[str, Any], f: float) -> dict[str, Any]:
    """The key paths and values that scale a run config by ``f``
    (``tierlab run --scale F``): a generated workload's footprint
    (``objects`` and ``requests``, or a benchmark generator's ``scale``,
    which scales both) and the absolute capacities of the tiers and the
    backing store are multiplied by ``f``: each object is requested as
    often as before, so the footprint the run touches (what shares such as
    "10%" are shares of) scales with it.

    Examples
    --------
    >>> cfg = {"workload": {"type": "zipf", "objects": 1000, "requests": 5000},
    ...        "tier": [{"capacity": "5%"}, {"capacity": "1MiB"}]}
    >>> scaled_run(cfg, 10)
    {'workload.objects': 10000, 'workload.requests': 50000, 'tier[1].capacity': 10485760}
    """
    if not (isinstance(f, int | float) and math.isfinite(f) and f > 0):
        raise ConfigError(f"--scale {f!r}: must be a positive number")
    if "vm" in cfg:
        raise ConfigError("--scale: a [vm] run has no generated footprint to scale")
    w = cfg.get("workload")
    if not isinstance(w, dict):
        raise ConfigError(
            "--scale: the config has no [workload] to scale (a --trace is not scaled)"
        )
    out: dict[str, Any] = {}
    kind = w.get("type")
    if "objects" in w:
        out["workload.objects"] = max(1, round(int(w["objects"]) * f))
        if "requests" in w:
            out["workload.requests"] = max(1, round(int(w["requests"]) * f))
    elif kind in ("zipf", "uniform", "loop", "scan", "trace", None):
        raise ConfigError(
            f"--scale: workload type {kind!r} has no objects to scale; "
            "--scale applies to a generated workload (objects, or a benchmark preset's scale)"
        )
    else:
        out["workload.scale"] = float(w.get("scale", 1.0)) * f
    for i, t in enumerate(cfg.get("tier", [])):
        if isinstance(t, dict) and "capacity" in t:
            v = scale_size(t["capacity"], f)
            if v != t["capacity"]:
                out[f"tier[{i}].capacity"] = v
    b = cfg.get("backing")
    if isinstance(b, dict) and "capacity" in b:
        v = scale_size(b["capacity"], f)
        if v != b["capacity"]:
            out["backing.capacity"] = v
    return out


def scaled_experiment(stem: str, scale: float = 1.0) -> dict[str, Any]:
    """A bundled experiment as a dict, with ``scale`` applied: workload
    scales (the base's and any whole-workload axis value's) and absolute tier
    capacities are multiplied by it; shares of the footprint scale by
    themselves.

    Examples
    --------
    >>> e = scaled_experiment("s2", 0.5)
    >>> e["base"]["workload"]["scale"], e["base"]["tier"][0]["capacity"]
    (0.1, 53687091)
    """
    if not (isinstance(scale, int | float) and math.isfinite(scale) and scale > 0):
        raise ConfigError(f"--scale {scale!r}: must be a positive number")
    exp = tomllib.loads(experiment_text(stem))
    if scale == 1:
        return exp
    exp = copy.deepcopy(exp)
    w = exp["base"]["workload"]
    w["scale"] = float(w.get("scale", 1.0)) * scale
    for t in exp["base"].get("tier", []):
        if "capacity" in t:
            t["capacity"] = scale_size(t["capacity"], scale)
    for a in exp.get("axis", []):
        if a.get("key") == "workload" and "values" in a:
            for v in a["values"]:
                if isinstance(v, dict):
                    v["scale"] = float(v.get("scale", 1.0)) * scale
    exp["experiment"]["description"] += f" (reproduce --scale {scale:g})"
    return exp


def _show(x: float | None, unit: str) -> str:
    if x is None or not math.isfinite(x):
        return "n/a"
    if unit == "fraction":
        return f"{x:.3f}"
    if abs(x) >= 1000:
        return f"{x:,.0f}"
    return f"{x:.3g}" if abs(x) < 10 else f"{x:.1f}"


def _band(f: Figure) -> str:
    if f.band is None:
        return ""
    lo, hi = f.band
    if hi is None and lo is not None and 0 < lo < 1e-6:
        return "> 0"  # "above zero": a direction, not a level
    if lo is not None and hi is not None:
        return f"{_show(lo, f.unit)}..{_show(hi, f.unit)}"
    if lo is not None:
        return f">= {_show(lo, f.unit)}"
    return f"<= {_show(hi, f.unit)}"


def figure_table(figures: list[Figure]) -> pd.DataFrame:
    """The side-by-side table: one row per figure."""
    import pandas as pd

    rows = []
    for f in figures:
        ok = f.in_band
        rows.append(
            {
                "id": f.id,
                "figure": f.label,
                "paper": _show(f.paper, f.unit),
                "tierlab": _show(f.tierlab, f.unit),
                "unit": f.unit,
                "target": _band(f),
                "in target": "" if ok is None else ("yes" if ok else "no"),
            }
        )
    return pd.DataFrame(rows)


def reproduce(
    name: str,
    out_dir: str | os.PathLike[str] | None = None,
    *,
    scale: float = 1.0,
    scheduler: str | None = None,
    workers: int | None = None,
    progress: SweepProgress | None = None,
) -> Reproduction:
    """Runs a reproduction: its experiments, the comparison with the paper, the report.

    Parameters
    ----------
    name
        A name of :data:`REPRODUCTIONS` (``"s1"``, ...).
    out_dir
        Where the stores (``<stem>.sqlite``) and the report go (default
        ``tierlab-<name>`` in the current folder).
    scale
        Multiplies the bundled experiments' workload scale and absolute tier
        sizes (a tiny value for tests).
    scheduler, workers, progress
        As for :func:`tierlab.sweep`.
    """
    from tierlab.report import Section, make_folder, write_report

    t0 = time.perf_counter()
    sys_ = system(name)  # an unknown name fails here
    scaled_experiment(sys_.experiments[0], scale)  # and a bad scale here, before any folder
    out = Path(out_dir) if out_dir is not None else Path(f"tierlab-{name}")
    make_folder(out)
    ctx = Context(out, scale, scheduler, workers, progress)
    outcome = sys_.run(ctx)
    notes = (*sys_.notes, *outcome.notes)
    sec = Section(
        f"{name.upper()}: tierlab beside the paper",
        f"The paper: {sys_.paper} (docs/sources.md describes it; {sys_.doc} discusses "
        "this reproduction). What drives the differences: " + " ".join(notes),
        tables=[("Side by side", figure_table(outcome.figures))],
    )
    if not ctx.sweeps:
        raise ConfigError(f"reproduce {name}: ran no experiment")
    store = ctx.sweeps[0][0]
    report = write_report(store, out, experiment=name, extra=[sec, *outcome.sections])
    return Reproduction(name, sys_, outcome, report, ctx.sweeps, time.perf_counter() - t0)


def print_reproduction(r: Reproduction, *, as_json: bool = False) -> None:
    """The side-by-side table and the notes on stdout (or the figures as JSON)."""
    from tierlab._format import console

    if as_json:
        print(json.dumps(r.as_json(), indent=2))
        return
    c = console()
    sys_ = r.system
    c.print(f"{r.name.upper()}: tierlab beside the paper")
    c.print(f"The paper: {sys_.paper} (docs/sources.md); discussion: {sys_.doc}")
    print(r.comparison.to_string(index=False))
    from tierlab.report import formatted

    for title, table in r.outcome.tables:
        c.print(f"\n{title}:")
        print(formatted(table, na="-").to_string(index=False))
    c.print("\nWhat drives the differences:")
    for n in r.notes:
        c.print(f"- {n}")
    total = sum(s.total for _, s in r.sweeps)
    done = sum(s.done for _, s in r.sweeps)
    skipped = sum(s.skipped for _, s in r.sweeps)
    failed = sum(s.failed for _, s in r.sweeps)
    stores = ", ".join(str(p) for p, _ in r.sweeps)
    points = f"{total} point" + ("" if total == 1 else "s")
    c.print(
        f"\n{points} ({done} run, {skipped} already in the store, {failed} "
        f"failed) in {r.elapsed_s:.1f} s; results in {stores}; report {r.report.html}"
    )
