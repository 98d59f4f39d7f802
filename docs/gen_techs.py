"""Writes docs/techs.md from the built-in catalog (`tierlab techs --json`).

    python docs/gen_techs.py           # rewrite docs/techs.md
    python docs/gen_techs.py --check   # exit 1 if docs/techs.md is out of date

tests/test_docs.py runs the check.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent / "techs.md"

HEADER = """\
# Technology catalog

The built-in technologies, generated from `tierlab techs --json` by
`docs/gen_techs.py` (do not edit by hand: run `python docs/gen_techs.py`).
The data file is `crates/tierlab-core/data/techs.toml`; every entry names
the source of its figures (seed papers S1-S5, or a datasheet). A field no
source gives is left empty rather than guessed, except the transfer model:
every entry has a bandwidth, or a burst size and time (`burst_bytes` moved
in `burst_ns`) for a medium whose datasheet gives page or burst reads.

A config uses an entry by name (`tech = "NAND-SLC"`) and may add or change
entries with `[techs.NAME]` ([config.md](config.md)). The timing model
([hierarchy.md](hierarchy.md)) uses the read and write latencies, the
transfer model and the access unit. A tier's area and cost
([hierarchy.md](hierarchy.md#area-and-cost)) use the density (or the cell
area in F² with the feature size), the price per Gbit and the share of good
blocks. The wear figures ([hierarchy.md](hierarchy.md#wear)) use the access
unit, the erase block and the endurance. The energy and power of each
device ([device.md](device.md)) use the energies per access (per access
unit; the erase energy per erase block) and the active, idle and
power-down power per Gbit. A Gbit is 2^30 bits; a price holds for its year
(`price_year`), and prices of different years are not comparable without
adjusting. For a whole drive or module (the SSDs, `SCM-OPTANE`, `DCPMM`),
endurance counts full writes over its warranty rather than cell cycles.

## Latency basis

Every latency states its basis (`latency_basis`, with `latency_source`):

- **device**: the medium's own access time, without the path from the
  CPU: a cell or array figure (S3's technology table gives DRAM 10 ns,
  PCM 20/100 ns), a part's datasheet time (NAND's page read and program,
  NOR, FRAM), a disk's access time.
- **loaded**: the time a load from the CPU sees, through the cache miss
  path, the memory controller and any link (CPU-attached DRAM under 100 ns,
  Intel Architecture Day 2018; Optane DC persistent memory 305 ns measured
  by Izraelevitz et al. 2019), or a drive's latency as its host measures it
  (the SSD datasheets).

The two differ by the path from the CPU, about 100 ns for memory: a DRAM
cell figure of 10 ns beside a CXL figure of 200 ns would model a 20x gap
where the CXL source measures 2x. An entry defined relative to another
(`latency_relative_to` and `latency_factor`) has that entry's latencies
times the factor and its basis, computed when the catalog loads and again
when a config changes the other entry: CXL-DRAM is 2x DRAM-DDR4 (loaded).
A run whose tiers or backing store put a device figure beside a loaded one,
both under 1 µs (where the CPU's path is 10% or more of a figure; a drive
or a disk swamps it), prints a warning (`warnings` in the JSON); use
entries of one basis, or give `read_ns`, `write_ns` and `latency_basis` in
`[techs.NAME]`.
"""


def load() -> list[dict[str, Any]]:
    """The catalog, as the installed command prints it."""
    exe = shutil.which("tierlab")
    cmd = [exe] if exe else [sys.executable, "-m", "tierlab.cli"]
    out = subprocess.run([*cmd, "techs", "--json"], capture_output=True, text=True, check=True)
    return list(json.loads(out.stdout))


def num(v: Any) -> str:
    """A figure as written in a table: empty when absent."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, list):
        lo, hi = (num(x) for x in v)
        return lo if lo == hi else f"{lo}-{hi}"
    f = float(v)
    if f.is_integer() and abs(f) < 1e9:
        return f"{int(f):,}"
    return f"{f:g}"


def cell(s: str) -> str:
    return s.replace("|", "\\|").replace("$", "\\$")


def table(cols: list[tuple[str, str]], rows: list[dict[str, Any]]) -> list[str]:
    out = ["| " + " | ".join(cell(title) for title, _ in cols) + " |"]
    out.append("|" + "|".join("---" for _ in cols) + "|")
    for r in rows:
        vals = []
        for _, key in cols:
            v = r.get(key)
            if isinstance(v, str):
                vals.append(cell(v))
            elif key == "price_year" and v is not None:
                vals.append(str(v))  # a year, not a quantity: no thousands separator
            else:
                vals.append(num(v))
        out.append("| " + " | ".join(vals) + " |")
    return out


def render(techs: list[dict[str, Any]]) -> str:
    main = [
        ("name", "name"),
        ("kind", "kind"),
        ("read (ns)", "read_ns"),
        ("write (ns)", "write_ns"),
        ("basis", "latency_basis"),
        ("bandwidth (MB/s)", "bandwidth_mb_s"),
        ("burst (B)", "burst_bytes"),
        ("burst (ns)", "burst_ns"),
        ("access unit (B)", "access_unit"),
        ("volatile", "volatile"),
        ("byte-addressable", "byte_addressable"),
        ("source", "source"),
    ]
    other = [
        ("name", "name"),
        ("erase (ns)", "erase_ns"),
        ("erase block (B)", "erase_block_bytes"),
        ("read energy (pJ)", "energy_read_pj"),
        ("write energy (pJ)", "energy_write_pj"),
        ("erase energy (pJ)", "energy_erase_pj"),
        ("active (mW/Gbit)", "active_mw_per_gbit"),
        ("idle (mW/Gbit)", "idle_mw_per_gbit"),
        ("power-down (mW/Gbit)", "powerdown_mw_per_gbit"),
        ("endurance (cycles)", "endurance"),
    ]
    money = [
        ("name", "name"),
        ("density (Gbit/cm²)", "density_gbit_cm2"),
        ("cell area (F²)", "cell_area_f2"),
        ("feature (nm)", "feature_nm"),
        ("good blocks", "good_block_fraction"),
        ("price (US$/Gbit)", "price_usd_per_gbit"),
        ("price year", "price_year"),
        ("more prices (year: US$/Gbit)", "more_prices"),
    ]
    basis = [
        ("name", "name"),
        ("basis", "latency_basis"),
        ("relative to", "latency_relative_to"),
        ("factor", "latency_factor"),
        ("latency source", "latency_source"),
    ]
    for t in techs:
        t["more_prices"] = ", ".join(
            f"{p['year']}: {p['usd_per_gbit']:g}" for p in t.get("prices", [])
        )
    lines = [HEADER, "## Timing figures and sources", ""]
    lines += table(main, techs)
    lines += ["", "## Latency bases", ""]
    lines += table(basis, techs)
    lines += ["", "## Energy, power and endurance", ""]
    lines += table(other, techs)
    lines += ["", "## Area and price", ""]
    lines += table(money, techs)
    priced = [p | {"name": t["name"]} for t in techs for p in t.get("prices", [])]
    if priced:
        lines += ["", "## Price series", ""]
        cols = [("name", "name"), ("year", "year_text"), ("US$/Gbit", "usd_per_gbit"),
                ("source", "source")]  # fmt: skip
        for p in priced:
            p["year_text"] = str(p["year"])
        lines += table(cols, priced)
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--check", action="store_true", help="fail if the file is out of date")
    a = p.parse_args(argv)
    text = render(load())
    if a.check:
        if not OUT.exists() or OUT.read_text(encoding="utf-8") != text:
            print(f"{OUT} is out of date: run python docs/gen_techs.py", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
