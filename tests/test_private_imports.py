"""No module of the package imports another module's private name.

A name with a leading underscore (``_figure``, ``_scale_size``) is its
module's business: a second module that imports it ties the two together
without either saying so (issue 35, item 5). Private *modules* (``_core``,
``_sweep``, ``_format``, ``cli._common``) are the package's own and stay
importable inside it; their public names are imported as usual. Dunder
names (``__version__``) are public.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from conftest import REPO

PACKAGE = REPO / "python" / "tierlab"


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _module_of(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_module(dotted: str) -> bool:
    """Whether ``tierlab.x.y`` names a module or package of the package (a
    file, a folder, or the compiled ``_core``)."""
    rel = Path(*dotted.split(".")[1:]) if "." in dotted else Path()
    base = PACKAGE / rel
    return (
        base.with_suffix(".py").is_file()
        or (base / "__init__.py").is_file()
        or dotted == "tierlab._core"
    )


def _absolute(node: ast.ImportFrom, here: str, is_package: bool) -> str:
    if node.level == 0:
        return node.module or ""
    parts = here.split(".")
    if not is_package:
        parts = parts[:-1]
    parts = parts[: len(parts) - (node.level - 1)]
    return ".".join([*parts, *([node.module] if node.module else [])])


def violations(path: Path) -> list[str]:
    """Each import of another module's private name in ``path``, as
    ``file:line: from MODULE import NAME``; and each ``module._name`` read
    through a module of the package bound by an import."""
    here = _module_of(path)
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found: list[str] = []
    modules: dict[str, str] = {}  # local name -> module of the package
    rel = path.relative_to(REPO)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            source = _absolute(node, here, path.name == "__init__.py")
            if source.split(".")[0] != "tierlab" or source == here:
                continue
            for alias in node.names:
                full = f"{source}.{alias.name}"
                if _is_module(full):
                    modules[alias.asname or alias.name] = full
                    continue
                if _private(alias.name):
                    found.append(f"{rel}:{node.lineno}: from {source} import {alias.name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("tierlab.") and alias.asname:
                    modules[alias.asname] = alias.name
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in modules
            and modules[node.value.id] != here
            and _private(node.attr)
            and not _is_module(f"{modules[node.value.id]}.{node.attr}")
        ):
            found.append(f"{rel}:{node.lineno}: {modules[node.value.id]}.{node.attr}")
    return found


def test_no_module_imports_another_modules_private_names() -> None:
    files = sorted(PACKAGE.rglob("*.py"))
    assert len(files) > 30
    bad = [v for f in files for v in violations(f)]
    assert bad == [], "private names imported across modules:\n" + "\n".join(bad)


@pytest.mark.parametrize(
    ("source", "caught"),
    [
        ("from tierlab.report import Plot, _figure\n", "from tierlab.report import _figure"),
        ("from ..reproduce import _scale_size\n", "from tierlab.reproduce import _scale_size"),
        ("from tierlab import report as r\nr._slug('x')\n", "tierlab.report._slug"),
    ],
)
def test_the_check_catches_a_planted_private_import(
    tmp_path: Path, source: str, caught: str
) -> None:
    """The check fails on each form of the import it forbids (a file planted
    inside the package, removed after), and lets private modules through."""
    planted = PACKAGE / "reproductions" / "_planted_for_test.py"
    planted.write_text(
        source + "from tierlab._format import human_bytes\nfrom tierlab import _core\n",
        encoding="utf-8",
    )
    try:
        found = violations(planted)
    finally:
        planted.unlink()
    assert len(found) == 1 and found[0].endswith(caught), found
