"""The reference docs follow the code: docs/techs.md is what
docs/gen_techs.py makes of the catalog, and docs/config.md names every key
and every allowed name the engine accepts."""

from __future__ import annotations

import copy
import importlib.util
import re
from types import ModuleType
from typing import Any

import pytest
import tierlab
from conftest import REPO
from tierlab import _core

DOCS = REPO / "docs"


def gen_techs() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_techs", DOCS / "gen_techs.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_techs_md_is_up_to_date() -> None:
    gen = gen_techs()
    expected = gen.render(gen.load())
    actual = (DOCS / "techs.md").read_text(encoding="utf-8")
    assert actual == expected, "docs/techs.md is out of date: run python docs/gen_techs.py"


def test_techs_md_lists_every_entry_with_its_source() -> None:
    text = (DOCS / "techs.md").read_text(encoding="utf-8")
    for t in tierlab.techs().to_dict("records"):
        row = next((ln for ln in text.splitlines() if ln.startswith(f"| {t['name']} |")), None)
        assert row is not None, t["name"]
        assert t["source"].replace("$", "\\$") in row, t["name"]


def test_gen_techs_check_mode() -> None:
    assert gen_techs().main(["--check"]) == 0


# --------------------------------------------------------------------------
# docs/config.md against the schema
# --------------------------------------------------------------------------

BASE: dict[str, Any] = {
    "workload": {
        "type": "trace",
        "path": "x.csv",
        "csv": {"key": 2},
    },
    "hierarchy": {},
    "tier": [{"tech": "DRAM-DDR3", "capacity": 1}],
    "backing": {},
    "techs": {"X": {"base": "HDD"}},
    "run": {},
}


def schema_error(*path: str | int, key: str = "zz_not_a_key", value: Any = 1) -> str:
    cfg = copy.deepcopy(BASE)
    if path[:1] == ("workload",) and len(path) > 1 and path[1] in _core.workload_types():
        # A type's own keys, or (path[2] == "table") those of its table:
        # each type takes only its keys.
        kind = str(path[1])
        cfg["workload"] = {"type": kind, **({kind: {}} if path[2:] == ("table",) else {})}
        path = ("workload", kind) if path[2:] == ("table",) else ("workload",)
    node: Any = cfg
    for p in path:
        node = node[p]
    node[key] = value
    with pytest.raises(tierlab.ConfigError) as e:
        tierlab.simulate(cfg)
    return str(e.value)


def names_in(msg: str) -> set[str]:
    """The backticked names after "expected" in a serde message."""
    tail = msg.split("expected", 1)[1]
    tail = re.sub(r" at line \d+ column \d+$", "", tail)
    return set(re.findall(r"`([^`]+)`", tail))


TABLES = {
    "top level": (),
    "[workload]": ("workload",),
    "[workload.csv]": ("workload", "csv"),
    "[hierarchy]": ("hierarchy",),
    "[[tier]]": ("tier", 0),
    "[backing]": ("backing",),
    "[techs.NAME]": ("techs", "X"),
    "[run]": ("run",),
    **{f"[workload.{t}]": ("workload", t, "table") for t in _core.generators()},
    **{f"[workload] type = {t!r}": ("workload", t) for t in _core.workload_types()},
}


@pytest.mark.parametrize("table", TABLES)
def test_config_md_names_every_key(table: str) -> None:
    doc = (DOCS / "config.md").read_text(encoding="utf-8")
    keys = names_in(schema_error(*TABLES[table]))
    assert keys, table
    forms = ("`{}`", "[{}]", "[{}.")  # a key, or a table: [run], [[tier]], [techs.NAME]
    missing = sorted(k for k in keys if not any(f.format(k) in doc for f in forms))
    assert not missing, f"docs/config.md does not name {table} keys {missing}"


@pytest.mark.parametrize(
    ("path", "key"),
    [
        (("workload",), "type"),
        (("workload",), "format"),
        (("hierarchy",), "fill"),
        (("hierarchy",), "write"),
    ],
)
def test_config_md_names_every_variant(path: tuple[str, ...], key: str) -> None:
    doc = (DOCS / "config.md").read_text(encoding="utf-8")
    msg = schema_error(*path, key=key, value="zz-no-such-variant")
    # serde backticks its variants; the registries' messages list them bare.
    variants = names_in(msg) or set(re.findall(r"[\w-]+", msg.split("expected one of", 1)[1]))
    assert variants, key
    missing = sorted(v for v in variants if f'"{v}"' not in doc)
    assert not missing, f"docs/config.md does not name {key} values {missing}"


def test_config_md_names_every_policy() -> None:
    doc = (DOCS / "config.md").read_text(encoding="utf-8")
    msg = schema_error("tier", 0, key="policy", value="zz-no-such-policy")
    names = re.search(r"expected one of ([\w, -]+?)(?: at line|$)", msg)
    assert names, msg
    for name in names.group(1).split(", "):
        assert f'`"{name}"`' in doc, name


def test_config_md_and_admission_md_name_every_admission_policy() -> None:
    msg = schema_error("tier", 0, key="admission", value="zz-no-such-admission")
    names = re.search(r"expected one of ([\w, -]+?)(?: at line|$)", msg)
    assert names, msg
    for doc in ("config.md", "admission.md"):
        text = (DOCS / doc).read_text(encoding="utf-8")
        for name in names.group(1).split(", "):
            assert f'`"{name}"`' in text, (doc, name)


def test_docs_link_targets_exist() -> None:
    for md in DOCS.glob("*.md"):
        for target in re.findall(r"\]\(([^)#]+)\)", md.read_text(encoding="utf-8")):
            if "://" not in target:
                assert (md.parent / target).exists(), f"{md.name} links to missing {target}"


# --------------------------------------------------------------------------
# the repository stands alone
# --------------------------------------------------------------------------

# Files of the team's working area that a user of the repository does not
# have (spelt in pieces so that this file does not name them itself).
OUTSIDE = [
    "SEEDS" + ".md",
    "DESIGN" + ".md",
    "STYLE" + ".md",
    "../" + "shared",
    "/work/" + "shared",
    "shared/" + "seeds",
]


def tracked_files() -> list[str]:
    import subprocess

    try:
        out = subprocess.run(
            ["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [f for f in out.decode().split("\0") if f]


def test_no_tracked_file_points_outside_the_repository() -> None:
    """Regression: docs, comments and `tierlab reproduce` cited the team's
    paper digest and design notes (OUTSIDE), which a user does not have; the
    papers are cited by title and described in docs/sources.md."""
    found = []
    for name in tracked_files():
        p = REPO / name
        if not p.is_file():
            continue  # deleted in the work tree, not yet committed
        data = p.read_bytes()
        if b"\0" in data[:8192]:
            continue  # binary
        text = data.decode("utf-8", "replace")
        for i, line in enumerate(text.splitlines(), 1):
            found += [f"{name}:{i}: {pat}" for pat in OUTSIDE if pat in line]
    assert not found, "\n".join(found)


def test_sources_md_cites_every_system_by_title() -> None:
    text = (DOCS / "sources.md").read_text(encoding="utf-8")
    for title in (
        "An Empirical Evaluation of Semiconductor File Memory as a Disk Cache",
        "Flash Memory for Buffer Caches",
        "Memorage: Emerging Persistent RAM based Malleable Main Memory and Storage Architecture",
        "FlashCache: A NAND Flash Memory File Cache for Low Power Web Servers",
        "Issues in File Caching and Virtual Memory Paging with Fast SCM Storage",
    ):
        assert title in text, title
    for s in ("S1", "S2", "S3", "S4", "S5"):
        assert f"## {s}. " in text, s


def test_config_md_says_which_catalog_fields_change_a_run() -> None:
    """Regression (issue 38, item 3): docs/config.md said the [techs] energy,
    power and endurance figures were "not yet part of any figure", while
    they change the device table. Each field the table marks "yes" changes
    the run's output when overridden; the example configs no longer wait
    for PostMark generators, which have landed."""
    import tomllib

    text = (REPO / "docs" / "config.md").read_text(encoding="utf-8")
    rows = {
        line.split("|")[1].strip(): line.split("|")[-2].strip()
        for line in text.splitlines()
        if line.startswith("| `")
    }
    base = tomllib.loads((REPO / "examples" / "dram-nand-device.toml").read_text())
    before = tierlab.simulate(base).summary
    for field, value in [
        ("energy_write_pj", 5000.0),
        ("energy_erase_pj", 1e9),
        ("active_mw_per_gbit", 500.0),
        ("endurance", 10.0),
    ]:
        row = next(v for k, v in rows.items() if f"`{field}`" in k)
        assert row.startswith("yes"), (field, row)
        cfg = copy.deepcopy(base)
        cfg["techs"] = {"NAND-SLC": {field: value}}
        after = tierlab.simulate(cfg).summary
        assert after["tiers"][1] != before["tiers"][1], field
    assert "not yet part of any figure" not in text
    for example in (REPO / "examples").glob("*.toml"):
        assert "until PostMark generators land" not in example.read_text(), example
