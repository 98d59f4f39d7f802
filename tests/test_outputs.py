"""No command writes over what it reads.

Regression (issue 21, defect 1): ``tierlab trace convert q.toml q.toml``
exited 0 and replaced the config with 48 MB of oracleGeneral, and the next
``tierlab run q.toml`` died with a traceback. Every command names its inputs
and outputs, and ``tierlab.cli`` checks them in one place before any work:
an output that is an input is refused with one line and exit 2, and the
input is left as it was.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import Ran, write_oracle
from test_bad_input import GOOD_TIER, assert_bad

ROOT = Path(__file__).resolve().parent.parent


def _files(tmp: Path) -> dict[str, Path]:
    """A config reading a trace, the quick start's config, an experiment
    whose base reads the same trace, a text file, and a file standing for a
    results store (the check runs before any command opens it)."""
    trace = write_oracle(tmp / "t.oracleGeneral.bin", [1, 2, 3, 1, 2, 4, 5, 1] * 4)
    csv = tmp / "t.csv"
    csv.write_text("1,2,3\n2,3,3\n3,2,3\n")
    cfg = tmp / "c.toml"
    cfg.write_text(f'[workload]\ntype = "trace"\npath = "{trace.name}"\n' + GOOD_TIER)
    exp = tmp / "e.toml"
    base = GOOD_TIER.replace("[[tier]]", "[[base.tier]]")
    exp.write_text(
        '[experiment]\nname = "e"\n'
        f'[base.workload]\ntype = "trace"\npath = "{trace.name}"\n{base}'
        '[[axis]]\nkey = "tier[0].capacity"\nvalues = ["10%", "20%"]\n'
    )
    q = tmp / "q.toml"
    shutil.copy(ROOT / "examples" / "quickstart.toml", q)
    store = tmp / "s.sqlite"
    store.write_bytes(b"SQLite format 3\x00" + bytes(84))
    return {"trace": trace, "csv": csv, "cfg": cfg, "exp": exp, "q": q, "store": store}


# Each case: the command line (names of _files' entries become their paths)
# and what the error line says.
CASES: dict[str, tuple[list[str], list[str]]] = {
    # The issue's own command: a config converted onto itself.
    "convert config onto itself": (["trace", "convert", "Q", "Q"], ["is the input config"]),
    "convert trace onto itself": (["trace", "convert", "CSV", "CSV"], ["is the input trace"]),
    "convert config onto its trace": (
        ["trace", "convert", "CFG", "TRACE"],
        ["is the input trace"],
    ),
    "run --timeline onto the config": (
        ["run", "CFG", "--timeline", "CFG"],
        ["--timeline", "is the input config"],
    ),
    "run --timeline onto --trace": (
        ["run", "Q", "--trace", "CSV", "--timeline", "CSV"],
        ["--timeline", "is the input trace"],
    ),
    "mrc -o onto the trace": (["mrc", "CSV", "-o", "CSV"], ["-o", "is the input trace"]),
    "mrc -o onto the config's trace": (["mrc", "CFG", "-o", "TRACE"], ["-o", "is the input trace"]),
    "mrc -o onto the --config's trace": (
        ["mrc", "CSV", "--config", "CFG", "--sizes", "4", "-o", "TRACE"],
        ["-o", "is the input trace"],
    ),
    "capture -o onto the program's file": (
        ["capture", "files", "-o", "CSV", "--", "cat", "CSV"],
        ["-o", "is the input file"],
    ),
    "capture -o onto the program": (
        ["capture", "files", "-o", "PROGRAM", "--", "PROGRAM"],
        ["-o", "is the input program"],
    ),
    "sweep --store onto the experiment": (
        ["sweep", "EXP", "--store", "EXP"],
        ["--store", "is the input experiment"],
    ),
    "sweep --store onto the base's trace": (
        ["sweep", "EXP", "--store", "TRACE"],
        ["--store", "is the input trace"],
    ),
    "export -o onto the store": (["export", "STORE", "-o", "STORE"], ["is the input store"]),
    "report -o onto the store": (["report", "STORE", "-o", "STORE"], ["is the input store"]),
    "reproduce -o onto a file": (["reproduce", "s1", "-o", "Q"], ["-o", "is a file"]),
    "generate -o onto a folder": (
        ["trace", "generate", "postmark", "-o", "."],
        ["-o", "is a directory"],
    ),
    "generate -o into no folder": (
        ["trace", "generate", "postmark", "-o", "nope/pm.bin"],
        ["-o", "no such directory"],
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_no_output_is_an_input(
    cli: Callable[..., Ran], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    monkeypatch.chdir(tmp_path)
    files = _files(tmp_path)
    # A program of our own in the folder, named by path (shutil.which finds it).
    program = tmp_path / "prog.sh"
    program.write_text("#!/bin/sh\ntrue\n")
    program.chmod(0o755)
    argv, needles = CASES[case]
    named = {**{k.upper(): str(v) for k, v in files.items()}, "PROGRAM": str(program)}
    args = [named.get(a, a) for a in argv]
    before = {p: p.read_bytes() for p in [*files.values(), program]}
    listing = sorted(p.name for p in tmp_path.iterdir())
    assert_bad(cli(*args), *needles)
    assert {p: p.read_bytes() for p in before} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == listing


def test_mrc_plot_onto_the_input(cli: Callable[..., Ran], tmp_path: Path) -> None:
    """The plot goes beside the CSV (OUT.png): it is an output too."""
    png = write_oracle(tmp_path / "t.png", [1, 2, 3, 1])
    before = png.read_bytes()
    assert_bad(cli("mrc", png, "-o", tmp_path / "t.csv"), "-o", "t.png", "is the input trace")
    assert png.read_bytes() == before
    assert not (tmp_path / "t.csv").exists()


def test_config_that_is_not_text(cli: Callable[..., Ran], tmp_path: Path) -> None:
    """Regression: `tierlab run q.toml` on the oracleGeneral file a convert
    had left there died with a UnicodeDecodeError traceback."""
    q = write_oracle(tmp_path / "q.toml", list(range(1000)))
    line = assert_bad(cli("run", q), "q.toml", "not a TOML config", "byte")
    assert line.startswith("error: "), line
    assert_bad(cli("trace", "stats", q), "q.toml", "not a TOML config")
    exp = write_oracle(tmp_path / "e.toml", list(range(1000)))
    assert_bad(cli("sweep", exp, "--dry-run"), "e.toml", "not a TOML experiment")
