"""The analytic models against the papers' own numbers, through the API and
`tierlab model`, and the examples docs/models.md shows."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable
from pathlib import Path

import pytest
import tierlab
from conftest import Ran
from tierlab.models import (
    MODELS,
    breakeven_hits,
    breakeven_price,
    equivalent_capacity,
    memorage_lending,
    memorage_lifetime,
)

DOCS = Path(__file__).resolve().parent.parent / "docs"


def test_memorage_eq1_gives_the_papers_gains() -> None:
    # Memorage (ICS 2013), Sec. 4.4: 8 GB of memory, a 240 GB or 480 GB
    # PSD (alpha 30 or 60), gamma = 10: 3.9x and 6.9x with beta large, and
    # 2x and 3.5x in the worst case beta = 1.
    assert round(memorage_lifetime(alpha=240 / 8, beta=50, gamma=10), 1) == 3.9
    assert round(memorage_lifetime(alpha=480 / 8, beta=50, gamma=10), 1) == 6.9
    assert memorage_lifetime(alpha=30, beta=1, gamma=10) == pytest.approx(2.0)
    assert memorage_lifetime(alpha=60, beta=1, gamma=10) == pytest.approx(3.5)
    # The limits as beta grows: 1 + alpha/gamma.
    assert memorage_lifetime(alpha=30, beta=1e12, gamma=10) == pytest.approx(4.0)


def test_memorage_eq2_as_printed() -> None:
    # "if the user desires at least 2x main memory lifetime improvement, h
    # need to be 0.5 or larger".
    r = memorage_lending(h=0.5, tau_days=1, cm_gb=8, bs_gb_per_day=12, beta=10)
    assert r["memory_gain"] == pytest.approx(2.0)
    assert r["storage_degradation"] == pytest.approx(1 + 10 * 0.5 + 2 * 0.5 * 8 / (1 * 12))
    # Degradation grows as loans turn over faster (tau smaller), by the
    # exchange term 2*h*Cm/(tau*Bs), ten times for tau ten times smaller.
    fast = memorage_lending(h=0.5, tau_days=0.1, cm_gb=8, bs_gb_per_day=12, beta=10)
    exchange = fast["storage_degradation"] - (1 + 10 * 0.5)
    assert exchange == pytest.approx(10 * (r["storage_degradation"] - (1 + 10 * 0.5)))
    assert memorage_lending(h=0, tau_days=1, cm_gb=8, bs_gb_per_day=12, beta=10) == {
        "memory_gain": 1.0,
        "storage_degradation": 1.0,
    }


def test_breakeven_hits() -> None:
    # S5: over a hard disk a single hit pays.
    assert breakeven_hits(cache_ns=1_000, storage_ns=10_000_000, cached_miss_ns=10_001_000) == 1
    # Storage 30% slower than the cache: two hits when the copy costs 0.3t
    # to 0.6t, four when it costs a whole cache access.
    assert breakeven_hits(cache_ns=1.0, storage_ns=1.3, cached_miss_ns=1.3 + 0.45) == 2
    assert breakeven_hits(cache_ns=1.0, storage_ns=1.3, cached_miss_ns=2.3) == 4
    # n*t + Tm < (n+1)*T holds at the answer and not one below it.
    t, big_t, tm = 3.0, 7.0, 30.0
    n = breakeven_hits(t, big_t, tm)
    assert n * t + tm < (n + 1) * big_t
    assert not ((n - 1) * t + tm < n * big_t)
    # A block is cached for its hits: at least one is needed.
    assert breakeven_hits(1.0, 5.0, 5.0) == 1


def test_s1_breakeven_price_and_equivalent_capacity() -> None:
    # S1 Table II at slowdown 3: PostMark 1.37, Bonnie 1.32 -> "at least
    # ~27% / ~24% cheaper per bit".
    assert round(breakeven_price(1.37), 2) == 0.27
    assert round(breakeven_price(1.32), 2) == 0.24
    assert equivalent_capacity(512, 1.37) == pytest.approx(701.44)
    assert breakeven_price(1.0) == 0.0


def test_models_are_reached_from_the_package() -> None:
    assert tierlab.models.breakeven_price is breakeven_price
    assert issubclass(tierlab.ModelError, tierlab.TierlabError)


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_non_finite_parameters_are_refused(bad: float) -> None:
    with pytest.raises(tierlab.ModelError, match="gamma"):
        memorage_lifetime(alpha=30, beta=10, gamma=bad)


def test_cli_json(cli: Callable[..., Ran]) -> None:
    r = cli("model", "memorage-lending", "--h", "0.5", "--tau-days", "1", "--cm-gb", "8",
            "--bs-gb-per-day", "12", "--beta", "10", "--json")  # fmt: skip
    assert r.code == 0, r.err
    out = json.loads(r.out)
    assert out["model"] == "memorage-lending"
    assert out["params"]["tau_days"] == 1.0
    assert out["result"]["memory_gain"] == pytest.approx(2.0)
    r = cli("model", "breakeven-price", "--ratio", "1.32", "--json")
    assert json.loads(r.out)["result"] == pytest.approx(1 - 1 / 1.32)


def test_every_model_has_a_command(cli: Callable[..., Ran]) -> None:
    for name, m in MODELS.items():
        r = cli("model", name, "--help")
        assert r.code == 0
        for p in m.params:
            assert "--" + p.name.replace("_", "-") in r.out


def test_missing_parameter_is_a_usage_error(tierlab_cmd: Callable[..., Ran]) -> None:
    r = tierlab_cmd("model", "memorage-lifetime", "--alpha", "30", "--beta", "5")
    assert r.code == 2
    assert "--gamma" in r.err
    assert "Traceback" not in r.err


def _doc_examples() -> list[tuple[list[str], list[str]]]:
    """Each `$ tierlab model ...` line of docs/models.md with the lines it shows."""
    text = (DOCS / "models.md").read_text(encoding="utf-8")
    out = []
    for block in re.findall(r"```sh\n(.*?)```", text, re.S):
        lines = block.strip().splitlines()
        assert lines[0].startswith("$ tierlab model "), lines[0]
        out.append((shlex.split(lines[0][len("$ tierlab ") :]), lines[1:]))
    return out


@pytest.mark.parametrize("args,expected", _doc_examples(), ids=lambda x: str(x)[:40])
def test_docs_examples_print_what_they_show(
    cli: Callable[..., Ran], args: list[str], expected: list[str]
) -> None:
    r = cli(*args)
    assert r.code == 0, r.err
    assert r.out.splitlines() == expected
