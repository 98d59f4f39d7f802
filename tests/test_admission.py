"""Admission policies from a config: every name and parameter form is
accepted, the counters reach the JSON output, and second-hit admission
actually keeps one-hit objects out (the engine's exact rules are tested in
crates/tierlab-core; here the path through the config, API and CLI)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import tierlab
from conftest import REPO, Ran, write_oracle

ADMISSIONS = {
    "always": '"always"',
    "second-hit": '{ type = "second-hit", window = 1_000 }',
    "bloom": '{ type = "bloom", window = 1_000, fp_rate = 0.001, splits = 2 }',
    "probabilistic": '{ type = "probabilistic", p = 0.5 }',
    "size": '{ type = "size", max_size = 4095 }',  # the zipf objects are 4096 B
    "write-budget": '{ type = "write-budget", bytes_per_day = "1TiB", initial = "1MiB" }',
}


def config(admission: str) -> str:
    return f"""\
[workload]
type = "zipf"
alpha = 0.9
objects = 5000
requests = 20000
object_size = "4KiB"
[[tier]]
name = "dram"
tech = "DRAM-DDR3"
capacity = "2MiB"
admission = {admission}
[backing]
tech = "SCM-OPTANE"
"""


def tier0(cfg: str) -> dict[str, Any]:
    t: dict[str, Any] = tierlab.simulate(cfg).summary["tiers"][0]
    return t


def test_every_admission_policy_is_tested_here() -> None:
    with pytest.raises(tierlab.ConfigError) as e:
        tierlab.simulate(config('"zz"'))
    names = re.search(r"expected one of ([\w, -]+)$", str(e.value))
    assert names, str(e.value)
    assert sorted(names.group(1).split(", ")) == sorted(ADMISSIONS)


@pytest.mark.parametrize("name", ADMISSIONS)
def test_counters_add_up(name: str) -> None:
    t = tier0(config(ADMISSIONS[name]))
    assert t["admission"] == name
    assert t["admitted"] == t["fills"]
    # Reads only: every miss of the tier was offered to it.
    assert t["admitted"] + t["rejected_admission"] == t["misses"]
    if name == "always":
        assert t["rejected_admission"] == 0
    else:
        assert t["rejected_admission"] > 0


def test_default_is_always() -> None:
    cfg = config('"always"').replace('admission = "always"\n', "")
    assert tier0(cfg) == tier0(config('"always"'))


def test_name_and_table_forms_agree() -> None:
    assert tier0(config('"second-hit"')) == tier0(
        config('{ type = "second-hit", window = 100_000 }')
    )


def test_second_hit_keeps_one_hit_objects_out(tmp_path: Path) -> None:
    # Keys 1..3 requested over and over among 50 keys requested once each.
    keys = [k for i in range(50) for k in (1, 2, 3, 1000 + i)]
    trace = write_oracle(tmp_path / "t.oracleGeneral.bin", keys)
    cfg = config('"second-hit"').replace('capacity = "2MiB"', "capacity = 3")
    s = tierlab.simulate(cfg, trace=trace, unit_size=True).summary["tiers"][0]
    assert s["admitted"] == 3, "only the keys requested twice"
    assert s["rejected_admission"] == 3 + 50
    assert s["hits"] == 3 * 50 - 6


def test_cli_json_and_table(tierlab_cmd: Callable[..., Ran], tmp_path: Path) -> None:
    p = tmp_path / "c.toml"
    p.write_text(config(ADMISSIONS["second-hit"]))
    r = tierlab_cmd("run", p, "--json")
    assert r.code == 0, r.err
    t = json.loads(r.out)["tiers"][0]
    assert (t["admission"], t["admitted"] > 0, t["rejected_admission"] > 0) == (
        "second-hit",
        True,
        True,
    )
    r = tierlab_cmd("run", p)
    assert r.code == 0, r.err
    assert "second-hit" in r.out and "refused (admission)" in r.out


def test_readme_config_block_with_admission_loads() -> None:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    block = text.split("```toml\n", 1)[1].split("```", 1)[0]
    assert "admission" in block
    cfg = block.replace("requests = 2_000_000", "requests = 1_000")
    assert tierlab.simulate(cfg).summary["tiers"][1]["admission"] == "second-hit"
