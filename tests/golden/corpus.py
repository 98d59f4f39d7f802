"""The golden corpus: what tierlab printed for a fixed set of inputs, kept so
that a change of structure can prove it changed no output.

Each case produces one or more files (a run's ``--json`` summary and its
timeline CSV, an MRC's CSV, a reproduction's ``--json`` figures), made the
way the command line makes them. The engine's version is the one field
excluded: it is replaced by ``"<version>"`` before the comparison, and the
repository's folder, where a result names a trace file, by ``<repo>``.

``tests/test_golden.py`` replays every case and compares byte for byte;
``python tests/golden/regen.py`` rewrites ``tests/golden/expected/`` after an
intentional change of output (say in the commit message what changed and why).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
CONFIGS = HERE / "configs"
EXPECTED = HERE / "expected"
DATA = HERE / "data"
EXAMPLES = REPO / "examples"

# Each reproduction at a scale small enough for seconds, large enough that
# every point runs (as tests/test_reproduce.py's TINY).
REPRODUCE_SCALES = {"s1": "0.01", "s2": "0.02", "s3": "0.05", "s4": "0.002", "s5": "0.02"}


@dataclass(frozen=True)
class Case:
    """One input of the corpus. ``kind`` is ``run`` (a config, optionally
    with overrides), ``mrc`` (``tierlab mrc`` arguments) or ``reproduce``."""

    name: str
    kind: str
    config: Path | None = None
    overrides: dict[str, Any] = field(default_factory=dict)
    args: tuple[str, ...] = ()


def _no_version(x: Any) -> Any:
    """The document with every ``version`` value replaced (the one field that
    changes with every release)."""
    if isinstance(x, dict):
        return {k: ("<version>" if k == "version" else _no_version(v)) for k, v in x.items()}
    if isinstance(x, list):
        return [_no_version(v) for v in x]
    return x


def _no_repo(text: str) -> str:
    """The text with this checkout's folder replaced (results name the
    trace files they read by their full path)."""
    return text.replace(str(REPO), "<repo>")


def cases() -> list[Case]:
    out: list[Case] = []
    # Every example config as `tierlab run EXAMPLE --json --timeline`. The
    # sweep example runs two of its points (its base with the axes' ends);
    # the paging example reads the corpus's lackey trace instead of a capture.
    for p in sorted(EXAMPLES.glob("*.toml")):
        stem = p.stem
        if stem == "sweep-slowdown":
            for slow, cap in ((1, "32MiB"), (5, "256MiB")):
                out.append(
                    Case(
                        f"example-{stem}-{slow}x",
                        "run",
                        p,
                        {"tier[0].slowdown": slow, "tier[0].capacity": cap},
                    )
                )
        elif stem == "vm-paging":
            trace = str(DATA / "vm.lackey")
            out.append(Case(f"example-{stem}", "run", p, {"workload.path": trace}))
        else:
            out.append(Case(f"example-{stem}", "run", p))
    for p in sorted(CONFIGS.glob("*.toml")):
        out.append(Case(p.stem, "run", p))
    trace = str(REPO / "tests" / "data" / "zipf-small.oracleGeneral.bin")
    out += [
        Case("mrc-stack", "mrc", args=(trace,)),
        Case("mrc-shards", "mrc", args=(trace, "--shards", "0.5")),
        Case("mrc-policy-arc", "mrc", args=(trace, "--policy", "arc", "--sizes", "5%,20%,60%")),
        Case(
            "mrc-config",
            "mrc",
            args=(
                str(CONFIGS / "workload-web.toml"),
                "--config",
                str(CONFIGS / "fill-exclusive-flush.toml"),
                "--sizes",
                "1MiB,4MiB",
            ),
        ),
    ]
    for name, scale in REPRODUCE_SCALES.items():
        out.append(Case(f"reproduce-{name}", "reproduce", args=(name, "--scale", scale)))
    return out


def _cli(*args: str, cwd: Path) -> str:
    r = subprocess.run(
        [sys.executable, "-m", "tierlab.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )
    if r.returncode != 0:
        raise RuntimeError(f"tierlab {' '.join(args)}: exit {r.returncode}\n{r.stderr}")
    return r.stdout


def _run(case: Case) -> dict[str, str]:
    from tierlab._result import RunResult
    from tierlab.api import simulate_raw, summary_json

    assert case.config is not None
    cfg: Path | dict[str, Any] = case.config
    if case.config.parent == EXAMPLES and case.name.startswith("example-sweep-"):
        # A sweep file: its [base] is the config of every point.
        base = tomllib.loads(case.config.read_text())["base"]
        cfg = base
    if isinstance(cfg, dict):
        out = simulate_raw(cfg, overrides=case.overrides)
    else:
        out = simulate_raw(str(cfg), overrides=case.overrides)
    summary = _no_version(out["summary"])
    files = {f"{case.name}.json": _no_repo(summary_json(summary)) + "\n"}
    with tempfile.TemporaryDirectory() as d:
        csv = Path(d) / "timeline.csv"
        RunResult(out["summary"], out["timeline"]).timeline.to_csv(csv, index=False)
        files[f"{case.name}.timeline.csv"] = _no_repo(csv.read_text())
    return files


def _mrc(case: Case) -> dict[str, str]:
    with tempfile.TemporaryDirectory() as d:
        csv = Path(d) / "mrc.csv"
        _cli("mrc", *case.args, "-o", str(csv), "--no-plot", "--no-progress", cwd=Path(d))
        return {f"{case.name}.csv": _no_repo(csv.read_text())}


def _reproduce(case: Case) -> dict[str, str]:
    with tempfile.TemporaryDirectory() as d:
        text = _cli(
            "reproduce",
            *case.args,
            "-o",
            str(Path(d) / "out"),
            "--workers",
            "1",
            "--json",
            "--no-progress",
            cwd=Path(d),
        )
    doc = _no_version(json.loads(text))
    return {f"{case.name}.json": _no_repo(json.dumps(doc, indent=2)) + "\n"}


PRODUCERS: dict[str, Callable[[Case], dict[str, str]]] = {
    "run": _run,
    "mrc": _mrc,
    "reproduce": _reproduce,
}


def produce(case: Case) -> dict[str, str]:
    """The files a case makes: name -> text."""
    return PRODUCERS[case.kind](case)


def produce_all(selected: list[Case], workers: int = 2) -> Iterator[tuple[Case, dict[str, str]]]:
    """Every case's files, ``workers`` at a time (the engine releases the GIL;
    the command-line cases are processes of their own)."""
    # The slow cases (reproductions, subprocesses) first, so that the run
    # cases fill the gaps.
    order = sorted(selected, key=lambda c: c.kind == "run")
    with ThreadPoolExecutor(workers) as pool:
        yield from zip(order, pool.map(produce, order), strict=True)
