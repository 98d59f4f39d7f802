"""The virtual-memory layer through the API and the CLI: the ``vm`` object and
``processes`` of a run, the fault sequence against libCacheSim's CLOCK on the
page-number stream, the sweep store's columns, and bad input."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import libcachesim as lcs
import pytest
import tierlab
from conftest import Ran
from tierlab.store import flatten


def lackey(path: Path, n: int, seed: int, pids: tuple[int, ...] = (7,)) -> Path:
    """Aligned 8-byte loads and stores: sequential runs and jumps over 4 MiB."""
    rng = random.Random(seed)
    addr = 0x400000
    lines = []
    for i in range(n):
        if i % 50 == 0:
            lines.append(f"=={rng.choice(pids)}== switch")
        addr = 0x400000 + rng.randrange(1 << 22) if rng.random() < 0.05 else addr + 8
        addr &= ~7
        lines.append(f" {'S' if rng.random() < 0.3 else 'L'} {addr:x},8")
    path.write_text("\n".join(lines) + "\n")
    return path


def config(trace: Path, memory: Any = "25%", **vm: Any) -> dict[str, Any]:
    return {
        "workload": {"type": "trace", "path": str(trace), "format": "lackey"},
        "tier": [{"tech": "DRAM-DDR3", "capacity": memory}],
        "backing": {"tech": "PCM-SLC"},
        "vm": vm,
    }


def vm_toml(folder: Path, trace: Path, rest: str) -> Path:
    """A config file over a lackey trace with one DRAM tier; ``rest``
    continues the tier table (its capacity first) and adds the others."""
    cfg = folder / "vm.toml"
    cfg.write_text(
        f'[workload]\ntype = "trace"\npath = {json.dumps(str(trace))}\nformat = "lackey"\n'
        '[[tier]]\ntech = "DRAM-DDR3"\n' + rest
    )
    return cfg


def test_vm_object_processes_and_store_columns(tmp_path: Path) -> None:
    t = lackey(tmp_path / "a.lackey", 20_000, 1, pids=(10, 11))
    r = tierlab.simulate(config(t, page_size=512, read_ahead=8))
    v = r.summary["vm"]
    assert v["references"] == 20_000 == r.summary["requests"]
    assert v["minor_faults"] + v["major_faults"] > 0 and v["read_ahead_pages"] > 0
    assert v["t_addr_ns"] > 0 and v["t_data_ns"] > 0
    assert v["amat_ns"] == pytest.approx((v["t_addr_ns"] + v["t_data_ns"]) / 20_000)
    assert r.vm.loc[0, "page_size"] == 512
    procs = r.processes
    assert sorted(procs.index) == [10, 11]
    assert procs["references"].sum() == 20_000
    assert procs["major_faults"].sum() == v["major_faults"]
    flat = flatten(r.summary)
    assert flat["vm.amat_ns"] == v["amat_ns"] and "processes.1.runtime_ns" in flat
    # No energy for the memory of a [vm] run yet (docs/device.md): null,
    # every part named; the swap device's is computed, and the run's total
    # is its known parts (as for any run with an unknown part).
    tier, b = r.summary["tiers"][0], r.summary["backing"]
    assert tier["energy_j"] is None
    assert tier["energy_unknown"] == ["read", "write", "erase", "background"]
    assert f"{tier['name']}.background" in r.summary["energy_unknown"]
    assert b["energy"]["read_j"] is not None and b["device_busy_ns"] > 0
    assert "backing.read" not in r.summary["energy_unknown"]
    assert "energy_j" not in r.timeline.columns


def test_multiprogram_runs_under_vm_by_byte_address() -> None:
    # The S3 mix under [vm]: one process per program, 64 B references, each
    # program its own address space (docs/workloads.md).
    cfg = {
        "workload": {"type": "multiprogram", "preset": "s3", "scale": 0.001, "seed": 3},
        "tier": [{"tech": "DRAM-DDR3", "capacity": "4MiB"}],
        "backing": {"tech": "PCM-SLC"},
        "vm": {},
    }
    r = tierlab.simulate(cfg)
    procs = r.processes
    assert sorted(procs.index) == list(range(1, 9))
    # 5,636 MiB x 0.001 = 1,411 pages (each program rounded), 64 lines a
    # page, four references a line.
    pages = sum(round(m * 256 * 0.001) for m in (873, 1600, 679, 501, 623, 123, 409, 828))
    assert r.summary["vm"]["references"] == 4 * 64 * pages == procs["references"].sum()
    # 4 MiB of frames for 5.6 MB of pages: faults beyond the first touches.
    assert r.summary["vm"]["major_faults"] > 0
    assert "references of 64 B by byte address" in r.summary["workload"]


def test_hotset_runs_under_vm_by_byte_address() -> None:
    # The moving hot set under [vm]: one 4 KiB page per reference in one
    # process (pid 1); with 2 MiB pages, 512 of its pages share a page.
    cfg = {
        "workload": {"type": "hotset", "scale": 0.01, "seed": 3},
        "tier": [{"tech": "DRAM-DDR3", "capacity": "100%"}],
        "backing": {"tech": "PCM-SLC"},
        "vm": {},
    }
    r = tierlab.simulate(cfg)
    v = r.summary["vm"]
    assert list(r.processes.index) == [1]
    # 655 pages, 20,000 references (the default preset x 0.01), every one
    # page-aligned: one translation each, the footprint's first touches
    # are its only faults with memory holding it all.
    assert v["references"] == v["translations"] == 20_000
    assert v["minor_faults"] + v["major_faults"] == 655
    assert "by byte address" in r.summary["workload"]
    cfg["vm"] = {"page_size": "2MiB"}
    v = tierlab.simulate(cfg).summary["vm"]
    assert v["minor_faults"] + v["major_faults"] == 2  # ceil(655 / 512)


def test_s5_desktop_preset_runs_one_program_alone() -> None:
    # S5's xmms (Table 1: 7.86 MB, 1,168,939 references), a tenth of it,
    # alone: one process, 8 B references (docs/workloads.md).
    cfg = {
        "workload": {
            "type": "multiprogram",
            "preset": "s5-desktop",
            "scale": 0.1,
            "multiprogram": {"only": ["xmms"]},
        },
        "tier": [{"tech": "DRAM-DDR3", "capacity": "50%"}],
        "backing": {"tech": "PCM-SLC"},
        "vm": {},
    }
    r = tierlab.simulate(cfg)
    assert list(r.processes.index) == [1]
    assert r.summary["vm"]["references"] == round(1_168_939 * 0.1)
    assert "references of 8 B by byte address" in r.summary["workload"]


def test_huge_pages_collapse_a_full_region() -> None:
    # A 2 MiB region swept twice: collapsed after the first pass, so the
    # second pass misses the one-entry huge TLB once (docs/vm.md).
    cfg = {
        "workload": {
            "type": "multiprogram",
            "seed": 1,
            "multiprogram": {
                "requests": 2 * 262_144,
                "quantum": 1 << 30,
                "line": 8,
                "program": [{"rss": "2MiB", "sequential": 1.0}],
            },
        },
        "tier": [{"tech": "DRAM-DDR3", "capacity": "4MiB"}],
        "backing": {"tech": "PCM-SLC"},
        "vm": {"huge_page": "2MiB", "tlb": {"entries": 4}, "tlb_huge": {"entries": 1}},
    }
    v = tierlab.simulate(cfg).summary["vm"]
    assert v["huge_promotions"] == 1
    assert v["tlb_misses"] == 512 + 1


def test_without_vm_the_fields_are_null_and_empty() -> None:
    r = tierlab.simulate(
        {
            "workload": {"type": "loop", "objects": 10, "requests": 100},
            "tier": [{"tech": "DRAM-DDR3", "capacity": 5}],
        }
    )
    assert r.summary["vm"] is None and r.summary["processes"] == []
    assert r.vm.empty and r.processes.empty


def test_fault_sequence_is_libcachesim_clock_on_the_page_stream(tmp_path: Path) -> None:
    t = lackey(tmp_path / "b.lackey", 5_000, 2)
    cfg = config(t, memory="64KiB", page_size=4096)
    cfg["run"] = {"interval": 1}
    r = tierlab.simulate(cfg)
    ours = [m > 0 for m in r.timeline["miss_ratio"]]
    clock = lcs.Clock(16, default_ttl=0, init_freq=0, n_bit_counter=1)
    theirs = []
    for line in t.read_text().splitlines():
        if line.startswith("=="):
            continue
        req = lcs.Request()
        req.obj_id = int(line.split()[1].split(",")[0], 16) // 4096
        req.obj_size = 1
        theirs.append(not clock.get(req))
    assert r.summary["vm"]["frames"] == 16
    assert ours == theirs
    assert sum(ours) > 100


def test_bad_vm_input_exits_2_with_the_key(tmp_path: Path, cli: Callable[..., Ran]) -> None:
    t = lackey(tmp_path / "c.lackey", 10, 3)
    cfg = vm_toml(tmp_path, t, 'capacity = "1MiB"\n[vm]\ntlb = { entries = 4, ways = 8 }\n')
    r = cli("run", cfg)
    assert r.code == 2, r.err
    assert "vm.tlb.ways: 8 is out of range" in r.err and "Traceback" not in r.err
    huge = cfg.read_text().replace("tlb = { entries = 4, ways = 8 }", 'huge_page = "3MiB"')
    cfg.write_text(huge)
    r = cli("run", cfg)
    assert r.code == 2, r.err
    assert "vm.huge_page: 3145728 is out of range" in r.err and "Traceback" not in r.err
    ok = huge.replace('huge_page = "3MiB"', 'page_size = "2KiB"')
    cfg.write_text(ok)
    r = cli("run", cfg)
    assert r.code == 0, r.err
    assert "TLB misses" in r.out and "major" in r.out
    # Passes and warm-up would be ignored by the paging loop: refused.
    r = cli("run", cfg, "--set", "run.passes=2")
    assert r.code == 2 and "run.passes: 2 given" in r.err and "Traceback" not in r.err
    r = cli("run", cfg, "--set", "run.warmup=100")
    assert r.code == 2 and "run.warmup: not used under [vm]" in r.err, r.err


def test_adaptive_read_ahead_reads_less_and_a_bad_mode_exits_2(
    tmp_path: Path, cli: Callable[..., Ran]
) -> None:
    t = lackey(tmp_path / "r.lackey", 20_000, 5)
    fixed = tierlab.simulate(config(t, read_ahead=64, first_touch="swap")).summary["vm"]
    adaptive = tierlab.simulate(
        config(t, read_ahead=64, first_touch="swap", read_ahead_mode="adaptive")
    ).summary["vm"]
    # The hits are reported in the adaptive mode only (fixed results keep
    # their fields). Runs of 160 B on average between jumps over 4 MiB use
    # few pages of a 64-page cluster: Linux's window stays small.
    assert "read_ahead_hits" not in fixed
    assert adaptive["read_ahead_hits"] <= adaptive["read_ahead_pages"]
    assert adaptive["read_ahead_pages"] * 10 < fixed["read_ahead_pages"]
    assert adaptive["read_ahead_unused"] * 10 < fixed["read_ahead_unused"]
    # A sweep over 1000 pages uses every page read ahead within it (the
    # last window reaches past its end).
    sweep = tmp_path / "s.lackey"
    sweep.write_text("".join(f" L {0x400000 + p * 4096:x},8\n" for p in range(1000)))
    v = tierlab.simulate(
        config(sweep, "64MiB", read_ahead=64, first_touch="swap", read_ahead_mode="adaptive")
    ).summary["vm"]
    assert v["read_ahead_hits"] == 1000 - v["major_faults"] > 900
    cfg = vm_toml(tmp_path, t, 'capacity = "1MiB"\n[vm]\nread_ahead_mode = "sometimes"\n')
    r = cli("run", cfg)
    assert r.code == 2, r.err
    assert "vm.read_ahead_mode: unknown variant `sometimes`" in r.err
    assert "Traceback" not in r.err
    text = cfg.read_text().replace('"sometimes"', '"adaptive"\nread_ahead = 96')
    cfg.write_text(text)
    r = cli("run", cfg)
    assert r.code == 2, r.err
    assert "vm.read_ahead: 96 is not a power of two" in r.err and "Traceback" not in r.err
    # `tierlab run` prints how many pages read ahead were used.
    cfg.write_text(text.replace("read_ahead = 96", 'read_ahead = 64\nfirst_touch = "swap"'))
    r = cli("run", cfg)
    assert r.code == 0, r.err
    assert re.search(r"read ahead, [\d,]+ used\)", " ".join(r.out.split())), r.out


def test_memtrace_holds_what_vm_reads_of_the_lackey_text(
    tmp_path: Path, cli: Callable[..., Ran]
) -> None:
    t = lackey(tmp_path / "d.lackey", 20_000, 4, pids=(3, 4))
    out = tmp_path / "d.memtrace"
    r = cli("trace", "convert", t, out)
    assert r.code == 0, r.err
    assert out.stat().st_size == 8 + 16 * 20_000
    for page in (512, 4096, 1 << 21):
        a = tierlab.simulate(config(t, page_size=page, read_ahead=4)).summary
        cfg = config(out, page_size=page, read_ahead=4)
        cfg["workload"]["format"] = "memtrace"
        b = tierlab.simulate(cfg).summary
        for s in (a, b):
            s.pop("workload")
        assert a == b, page
    # Named .zst, it is written compressed and reads back the same.
    z = tmp_path / "d.memtrace.zst"
    r = cli("trace", "convert", t, z)
    assert r.code == 0, r.err
    assert z.read_bytes()[:4] == b"\x28\xb5\x2f\xfd"
    cfg = config(z, page_size=1 << 21, read_ahead=4)  # as b, the last page size
    cfg["workload"]["format"] = "memtrace"
    c = tierlab.simulate(cfg).summary
    c.pop("workload")
    assert c == b
    # A trace without addresses is refused, naming the file and why.
    oracle = tmp_path / "o.oracle"
    assert cli("trace", "convert", t, oracle).code == 0
    r = cli("trace", "convert", oracle, tmp_path / "x.memtrace")
    assert r.code == 2, r.err
    assert "has no memory addresses" in r.err and "Traceback" not in r.err


def test_run_prints_that_vm_runs_compute_no_energy(tmp_path: Path, cli: Callable[..., Ran]) -> None:
    # Not "for want of a catalog figure": DRAM-DDR3 has read and write
    # energies; the paging run tracks no device busy time yet.
    t = lackey(tmp_path / "a.lackey", 2_000, 3)
    cfg = vm_toml(
        tmp_path, t, 'capacity = "50%"\n[backing]\ntech = "PCM-SLC"\n[vm]\npage_size = "4KiB"\n'
    )
    r = cli("run", cfg)
    assert r.code == 0, r
    out = " ".join(r.out.split())
    assert "paging runs ([vm]) compute no energy for the memory yet" in out
    assert "want of a catalog figure" not in out


def test_swap_device_busy_time_and_energy_follow_its_pages(tmp_path: Path) -> None:
    """Regression (issue 38, item 4): the swap device's busy time was 0 beside
    its major faults. It is the service time of its page reads and writes,
    and its dynamic energy their pages at the catalog's figures."""
    t = lackey(tmp_path / "a.lackey", 4_000, 5)
    cfg = config(t, memory="25%")
    cfg["backing"] = {"tech": "PCM-SLC"}
    s = tierlab.simulate(cfg).summary
    b, v = s["backing"], s["vm"]
    assert v["major_faults"] > 0 and b["reads"] == v["major_faults"]
    cat = tierlab.techs()
    pcm = cat[cat["name"] == "PCM-SLC"].iloc[0]
    # Each page read moves the page's access units at the medium's rate at
    # least: 4 KiB at 400 MB/s is over 10 us.
    assert b["pages_read"] == b["bytes_read"] // pcm["access_unit"]
    assert b["device_busy_ns"] >= b["bytes_read"] / (pcm["bandwidth_mb_s"] * 1e6) * 1e9
    assert b["energy"]["read_j"] == pytest.approx(b["pages_read"] * pcm["energy_read_pj"] * 1e-12)
    assert b["energy"]["write_j"] == pytest.approx(
        b["pages_written"] * pcm["energy_write_pj"] * 1e-12
    )
    # Memory's own energy is not computed: the run's list says so.
    assert f"{s['tiers'][0]['name']}.read" in s["energy_unknown"]


def test_vm_paging_example_keeps_its_memory_across_page_sizes(tmp_path: Path) -> None:
    """Regression (issue 38, item 4): examples/vm-paging.toml sized memory
    as "50%" of the footprint at the run's page size, so the README's
    page-size comparison changed the memory with the page size. The same
    bytes of memory at every page size; only the frames change."""
    from conftest import EXAMPLES

    t = lackey(tmp_path / "a.lackey", 20_000, 5)
    caps, frames = set(), []
    for size in ("512", "4KiB", "64KiB"):
        s = tierlab.simulate(
            EXAMPLES / "vm-paging.toml", trace=t, overrides={"vm.page_size": size}
        ).summary
        caps.add(s["tiers"][0]["capacity"])
        frames.append(s["vm"]["frames"])
    assert len(caps) == 1 and frames == sorted(frames, reverse=True) and frames[0] > frames[-1]
