"""The package's lazy import: ``import tierlab`` loads no submodule, the
public names load on first use, ``tierlab.sweep`` is the function whatever
was imported before it, and the command line's hot paths (``mrc --no-plot``,
``run --json``) import none of the heavy modules. Each check runs in a fresh
interpreter, since this test session has imported everything already."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import tierlab

# The tierlab this session imported, first on the child's path.
PACKAGE_ROOT = str(Path(tierlab.__file__).resolve().parent.parent)

# Modules that cost milliseconds to import and that the hot paths do not need.
HEAVY = {
    "pandas",
    "numpy",
    "matplotlib",
    "rich",
    "distributed",
    "dask",
    "sqlite3",
    "dataclasses",
    "inspect",
    "logging",
    "tierlab.store",
    "tierlab.experiment",
    "tierlab._sweep",
    "tierlab._result",
    "tierlab._format",
}


def fresh(code: str) -> object:
    """Runs ``code`` in a new interpreter; returns the JSON it printed last."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([PACKAGE_ROOT, env.get("PYTHONPATH", "")])
    r = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.splitlines()[-1])


# Imported by the child after it records what its start-up imported.
NEW_MODULES = """
import json, sys
before = set(sys.modules)
def new_modules():
    return sorted(m for m in set(sys.modules) - before if m.split(".")[0] in HEAVY_ROOTS
                  or m in HEAVY)
"""


def new_heavy(code: str) -> list[str]:
    """The heavy modules ``code`` imports in a fresh interpreter (those its
    start-up imported already left out)."""
    roots = {m for m in HEAVY if "." not in m}
    prelude = f"HEAVY = {sorted(HEAVY)!r}\nHEAVY_ROOTS = {sorted(roots)!r}\n" + NEW_MODULES
    out = fresh(prelude + textwrap.dedent(code) + "\nprint(json.dumps(new_modules()))\n")
    assert isinstance(out, list)
    return out


def test_import_tierlab_loads_no_submodule() -> None:
    out = fresh(
        """
        import json, sys
        import tierlab
        print(json.dumps(sorted(m for m in sys.modules if m.startswith("tierlab"))))
        """
    )
    assert out == ["tierlab"]


def test_public_names_resolve_and_are_listed() -> None:
    out = fresh(
        """
        import json, tierlab
        listed = set(dir(tierlab))
        names = {n: type(getattr(tierlab, n)).__name__ for n in tierlab.__all__}
        print(json.dumps([sorted(listed), names]))
        """
    )
    assert isinstance(out, list)
    listed, names = out
    assert set(tierlab.__all__) <= set(listed)
    assert {"api", "store", "experiment", "errors", "config"} <= set(listed)
    assert names["sweep"] == names["simulate"] == names["load"] == "function"
    assert names["RunResult"] == names["SweepReport"] == names["ConfigError"] == "type"
    assert names["__version__"] == "str"


def test_unknown_attribute_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        tierlab.nope  # noqa: B018
    assert not hasattr(tierlab, "cli_nope")


def test_submodules_imported_eagerly_before_stay_reachable() -> None:
    out = fresh(
        """
        import json, tierlab
        print(json.dumps([tierlab.store.load is tierlab.load,
                          tierlab.api.RunResult is tierlab.RunResult,
                          callable(tierlab.experiment.load_experiment)]))
        """
    )
    assert out == [True, True, True]


@pytest.mark.parametrize(
    "first",
    [
        "import tierlab.cli; from tierlab import _sweep",
        "import tierlab._sweep",
        "from tierlab._sweep import run_point",
        "import tierlab; tierlab.sweep; import tierlab._sweep",
        "from tierlab import sweep",
        "import tierlab.reproduce, tierlab.cli; tierlab.cli.build_parser()",
    ],
)
def test_sweep_is_the_function_whatever_was_imported_first(first: str) -> None:
    """``tierlab.sweep`` lives in ``tierlab._sweep``: importing that module
    sets the package attribute ``_sweep``, never ``sweep``."""
    out = fresh(
        f"""
        import json, types
        {first}
        import tierlab
        from tierlab import _sweep
        print(json.dumps([isinstance(tierlab.sweep, types.FunctionType),
                          tierlab.sweep is _sweep.sweep,
                          tierlab.SweepReport is _sweep.SweepReport]))
        """
    )
    assert out == [True, True, True]


def test_sweep_function_in_this_session() -> None:
    import tierlab.cli  # noqa: F401
    from tierlab import _sweep

    assert callable(tierlab.sweep)
    assert tierlab.sweep is _sweep.sweep


def test_cli_import_is_light() -> None:
    assert new_heavy("import tierlab.cli\ntierlab.cli.build_parser()") == []


def test_mrc_no_plot_imports_nothing_heavy(oracle_trace: Path, tmp_path: Path) -> None:
    out = tmp_path / "curve.csv"
    argv = ["mrc", str(oracle_trace), "--shards", "0.5", "--no-plot", "-o", str(out)]
    code = f"import tierlab.cli\nassert tierlab.cli.main({argv!r}) == 0\n"
    assert new_heavy(code) == []
    assert out.read_text().startswith("size,miss_ratio\n")


def test_run_json_imports_nothing_heavy(zipf_config: Path) -> None:
    argv = ["run", str(zipf_config), "--json"]
    code = f"import tierlab.cli\nassert tierlab.cli.main({argv!r}) == 0\n"
    assert new_heavy(code) == []


def test_a_named_command_loads_only_its_own_module(zipf_config: Path) -> None:
    """`tierlab run` builds the run parser alone: no other command's module
    (nor the reproductions' and models' lists their parsers read)."""
    argv = ["run", str(zipf_config), "--json"]
    out = fresh(
        f"""
        import json, sys
        import tierlab.cli
        assert tierlab.cli.main({argv!r}) == 0
        print(json.dumps(sorted(m for m in sys.modules if m.startswith(
            ("tierlab.cli.", "tierlab.reproductions", "tierlab.models")))))
        """
    )
    assert out == ["tierlab.cli._common", "tierlab.cli.run"]
    # Without a command first (here the help), every command is there.
    out = fresh(
        """
        import json, sys
        import tierlab.cli
        p = tierlab.cli.build_parser()
        print(json.dumps(sorted(m for m in sys.modules if m.startswith("tierlab.cli."))))
        """
    )
    from tierlab.cli import COMMANDS

    assert out == sorted(["tierlab.cli._common"] + [f"tierlab.cli.{c}" for c in COMMANDS])
