"""Bad input never ends in a traceback or a panic.

The command line prints exactly one line ``error: ...`` (and at most one
``hint: ...`` line) on stderr, nothing on stdout, and exits with code 2. The
message says what is wrong and where: the file and byte offset or line, or
the config key path and the allowed values. The Python API raises the same
message as ``tierlab.ConfigError`` or ``tierlab.TraceError``.

Tests whose docstring starts with "Regression" guard problems found while
writing these tests, since fixed.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import tierlab
from conftest import Ran, write_oracle

GOOD_TIER = """\
[[tier]]
name = "dram"
tech = "DRAM-DDR3"
capacity = "1MiB"
policy = "lru"
"""


def assert_bad(r: Ran, *needles: str) -> str:
    """Checks the shape of a bad-input failure; returns the error line."""
    assert "Traceback" not in r.err, r.err
    assert "panicked" not in r.err, r.err
    assert r.code == 2, f"exit {r.code}\nstdout:\n{r.out}\nstderr:\n{r.err}"
    assert r.out == "", f"stdout should be empty, got:\n{r.out}"
    lines = r.err_lines
    assert len(lines) in (1, 2), f"expected one error line (+ one hint), got:\n{r.err}"
    assert lines[0].startswith("error: "), r.err
    if len(lines) == 2:
        assert lines[1].startswith("hint: "), r.err
    for n in needles:
        assert n in r.err, f"{n!r} not in:\n{r.err}"
    return lines[0]


# --------------------------------------------------------------------------
# The cases: each gives the command line, the same call through the API, what
# the message must contain, and the exception class.
# --------------------------------------------------------------------------


@dataclass
class Bad:
    args: list[object]
    api: Callable[[], object]
    needles: list[str]
    exc: type[tierlab.TierlabError]
    extra: list[str] = field(default_factory=list)


def _trace(tmp: Path) -> Path:
    return write_oracle(tmp / "ok.oracleGeneral.bin", [1, 2, 3, 1, 2, 4, 5, 1] * 4)


def _config_case(tmp: Path, text: str, *needles: str) -> Bad:
    cfg = tmp / "bad.toml"
    cfg.write_text(text)
    trace = _trace(tmp)
    return Bad(
        ["run", cfg, "--trace", trace],
        lambda: tierlab.simulate(cfg, trace=trace),
        list(needles),
        tierlab.ConfigError,
    )


def case_truncated_oracle(tmp: Path) -> Bad:
    p = _trace(tmp)
    data = p.read_bytes()
    p.write_bytes(data + data[:10])  # 32 whole records, then 10 bytes
    cfg = tmp / "c.toml"
    cfg.write_text(GOOD_TIER)
    return Bad(
        ["run", cfg, "--trace", p],
        lambda: tierlab.simulate(cfg, trace=p),
        [p.name, "byte offset 768", "truncated"],
        tierlab.TraceError,
    )


def case_malformed_csv_line(tmp: Path) -> Bad:
    p = tmp / "bad.csv"
    p.write_text("1,10,4096\n2,11,4096\n3,12\n4,13,4096\n")
    cfg = tmp / "c.toml"
    cfg.write_text(GOOD_TIER)
    return Bad(
        ["run", cfg, "--trace", p],
        lambda: tierlab.simulate(cfg, trace=p),
        [f"{p.name}:3:", "column 3 (size)"],
        tierlab.TraceError,
    )


def case_non_numeric_csv_field(tmp: Path) -> Bad:
    p = tmp / "bad.csv"
    p.write_text("1,10,4096\n2,11,big\n")
    cfg = tmp / "c.toml"
    cfg.write_text(GOOD_TIER)
    return Bad(
        ["run", cfg, "--trace", p, "--format", "csv"],
        lambda: tierlab.simulate(cfg, trace=p, format="csv"),
        [f"{p.name}:2:", "column 3 (size)", '"big"'],
        tierlab.TraceError,
    )


def case_unknown_policy(tmp: Path) -> Bad:
    text = GOOD_TIER.replace('policy = "lru"', 'policy = "lruu"')
    return _config_case(tmp, text, "tier[0].policy", '"lruu"', "lru", "fifo", "clock")


def case_unknown_policy_in_table(tmp: Path) -> Bad:
    text = GOOD_TIER.replace('policy = "lru"', 'policy = { type = "arcc" }')
    return _config_case(tmp, text, "tier[0].policy", '"arcc"', "lru, fifo, clock")


def case_bad_policy_parameter(tmp: Path) -> Bad:
    text = GOOD_TIER.replace('policy = "lru"', 'policy = { type = "clock", bits = 9 }')
    return _config_case(tmp, text, "tier[0].policy", "bits", "9", "1..=8")


def case_flashcache_ways_do_not_divide_the_tier(tmp: Path) -> Bad:
    # 1 MiB is not a whole number of 3 x 128 KiB sets.
    text = GOOD_TIER.replace('policy = "lru"', 'policy = { type = "flashcache", ways = 3 }')
    return _config_case(tmp, text, "tier[0].policy.ways", "multiple of 393216 bytes")


def case_flashcache_zero_ways(tmp: Path) -> Bad:
    text = GOOD_TIER.replace('policy = "lru"', 'policy = { type = "flashcache", ways = 0 }')
    return _config_case(tmp, text, "tier[0].policy", "ways", "at least 1")


def case_flashcache_block_not_whole_erase_blocks(tmp: Path) -> Bad:
    text = GOOD_TIER.replace(
        'policy = "lru"', 'policy = { type = "flashcache", block = "96KiB", erase_block = "64KiB" }'
    )
    return _config_case(tmp, text, "tier[0].policy", "block", "erase block")


def _admission(tmp: Path, value: str, *needles: str) -> Bad:
    text = GOOD_TIER + f"admission = {value}\n"
    return _config_case(tmp, text, "tier[0].admission", *needles)


def case_unknown_admission(tmp: Path) -> Bad:
    return _admission(tmp, '"sekond-hit"', '"sekond-hit"', "always, second-hit, bloom")


def case_admission_without_type(tmp: Path) -> Bad:
    return _admission(tmp, "{ window = 3 }", "missing `type`", "second-hit")


def case_unknown_admission_parameter(tmp: Path) -> Bad:
    return _admission(tmp, '{ type = "second-hit", windo = 3 }', "unknown field `windo`", "window")


def case_admission_missing_parameter(tmp: Path) -> Bad:
    return _admission(tmp, '"probabilistic"', "missing field `p`")


def case_admission_parameter_out_of_range(tmp: Path) -> Bad:
    return _admission(tmp, '{ type = "bloom", fp_rate = 0.7 }', "fp_rate", "0.7", "at most 0.5")


def case_admission_budget_as_share(tmp: Path) -> Bad:
    return _admission(
        tmp, '{ type = "write-budget", bytes_per_day = "10%" }', "bytes_per_day", "not a share"
    )


def case_unknown_technology(tmp: Path) -> Bad:
    text = GOOD_TIER.replace("DRAM-DDR3", "DRAM-DDR9")
    known = list(tierlab.techs()["name"])
    return _config_case(tmp, text, "tier[0].tech", '"DRAM-DDR9"', *known)


def case_unknown_backing_technology(tmp: Path) -> Bad:
    return _config_case(tmp, GOOD_TIER + '[backing]\ntech = "TAPE"\n', "backing.tech", '"TAPE"')


def case_unknown_tier_key(tmp: Path) -> Bad:
    text = GOOD_TIER + "colour = 3\n"
    return _config_case(tmp, text, "tier[0].colour", "capacity", "policy")


def case_unknown_top_level_key(tmp: Path) -> Bad:
    return _config_case(tmp, "tiers = 3\n" + GOOD_TIER, "tiers", "`tier`")


def case_unknown_workload_key(tmp: Path) -> Bad:
    text = '[workload]\ntype = "zipf"\nobjects = 10\nrequests = 10\nzipf_alpha = 1\n' + GOOD_TIER
    cfg = tmp / "bad.toml"
    cfg.write_text(text)
    return Bad(
        ["run", cfg],
        lambda: tierlab.simulate(cfg),
        ["workload.zipf_alpha", "alpha"],
        tierlab.ConfigError,
    )


def case_zero_capacity(tmp: Path) -> Bad:
    text = GOOD_TIER.replace('"1MiB"', "0")
    return _config_case(tmp, text, "tier[0].capacity", "greater than zero")


def case_zero_capacity_with_unit(tmp: Path) -> Bad:
    text = GOOD_TIER.replace('"1MiB"', '"0GiB"')
    return _config_case(tmp, text, "tier[0].capacity", "greater than zero")


def case_negative_capacity(tmp: Path) -> Bad:
    text = GOOD_TIER.replace('"1MiB"', "-5")
    return _config_case(tmp, text, "tier[0].capacity", "-5", "negative")


def case_negative_capacity_string(tmp: Path) -> Bad:
    text = GOOD_TIER.replace('"1MiB"', '"-5MiB"')
    return _config_case(tmp, text, "tier[0].capacity", '"-5MiB"', "512MiB")


def case_capacity_share_out_of_range(tmp: Path) -> Bad:
    text = GOOD_TIER.replace('"1MiB"', '"150%"')
    return _config_case(tmp, text, "tier[0].capacity", '"150%"', "100%")


def case_capacity_too_large(tmp: Path) -> Bad:
    # Regression: saturated to 2^64 - 1 bytes and ran.
    text = GOOD_TIER.replace('"1MiB"', '"99999999999999999999 GiB"')
    return _config_case(tmp, text, "tier[0].capacity", "too large", "16 EiB")


def case_capacity_float_too_large(tmp: Path) -> Bad:
    text = GOOD_TIER.replace('"1MiB"', "1e30")
    return _config_case(tmp, text, "tier[0].capacity", "1e30", "too large")


def case_nan_duration(tmp: Path) -> Bad:
    # Regression: TOML's nan reached the engine's JSON as "expected value".
    text = "[run]\ncompute = nan\n" + GOOD_TIER
    return _config_case(tmp, text, "run.compute", "nan is not a finite number")


def case_infinite_latency_override(tmp: Path) -> Bad:
    text = GOOD_TIER + "\n[techs.HDD]\nread_ns = inf\n"
    return _config_case(tmp, text, "techs.HDD.read_ns", "inf is not a finite number")


def case_negative_latency_override(tmp: Path) -> Bad:
    text = GOOD_TIER + '\n[techs.SLOW-DISK]\nbase = "HDD"\nread_ns = -3\n'
    return _config_case(tmp, text, "techs.SLOW-DISK.read_ns", "-3", "positive")


def case_negative_latency_of_builtin(tmp: Path) -> Bad:
    text = GOOD_TIER + '\n[techs.HDD]\nwrite_ns = "-2ms"\n'
    return _config_case(tmp, text, "techs.HDD.write_ns", "positive")


def case_new_tech_without_transfer_model(tmp: Path) -> Bad:
    # Defect 3 of issue 21: a medium without bandwidth moved pages for free.
    text = GOOD_TIER + '\n[techs.MYSTERY]\nread_ns = 5\nwrite_ns = 5\nsource = "mine"\n'
    return _config_case(
        tmp, text, "techs.MYSTERY.bandwidth_mb_s", "no transfer model", "burst_bytes", "burst_ns"
    )


def case_tech_with_two_transfer_models(tmp: Path) -> Bad:
    text = GOOD_TIER + "\n[techs.HDD]\nburst_bytes = 512\nburst_ns = 100\nbandwidth_mb_s = 9\n"
    return _config_case(tmp, text, "techs.HDD.bandwidth_mb_s", "not both")


def case_endurance_zero(tmp: Path) -> Bad:
    text = GOOD_TIER + "\n[techs.NAND-SLC]\nendurance = 0\n"
    return _config_case(tmp, text, "techs.NAND-SLC.endurance", "positive")


def case_negative_power(tmp: Path) -> Bad:
    text = GOOD_TIER + '\n[techs.MY-DRAM]\nbase = "DRAM-DDR2"\npowerdown_mw_per_gbit = -18\n'
    return _config_case(tmp, text, "techs.MY-DRAM.powerdown_mw_per_gbit", "-18", "zero or")


def case_negative_energy(tmp: Path) -> Bad:
    text = GOOD_TIER + "\n[techs.NAND-SLC]\nenergy_erase_pj = -1\n"
    return _config_case(tmp, text, "techs.NAND-SLC.energy_erase_pj", "zero or")


def case_price_without_year(tmp: Path) -> Bad:
    # A new price over a catalog entry would otherwise take the entry's year.
    text = GOOD_TIER + "\n[techs.NAND-SLC]\nprice_usd_per_gbit = 0.03\n"
    return _config_case(tmp, text, "techs.NAND-SLC.price_year", "without `price_year`")


def case_power_down_oracle_without_a_figure(tmp: Path) -> Bad:
    # NAND has no power-down power below its idle one: the oracle has none
    # to spend idle time at.
    text = GOOD_TIER.replace("DRAM-DDR3", "NAND-SLC") + 'power_down = "oracle"\n'
    return _config_case(tmp, text, "tier[0].power_down", "NAND-SLC", "powerdown_mw_per_gbit")


def case_power_down_unknown(tmp: Path) -> Bad:
    text = GOOD_TIER + 'power_down = "sometimes"\n'
    return _config_case(tmp, text, "tier[0].power_down", "sometimes", "none", "oracle")


def case_backing_power_down_without_a_figure(tmp: Path) -> Bad:
    text = GOOD_TIER + '\n[backing]\ntech = "HDD"\npower_down = "oracle"\n'
    return _config_case(tmp, text, "backing.power_down", "HDD", "powerdown_mw_per_gbit")


def case_backing_capacity_share(tmp: Path) -> Bad:
    text = GOOD_TIER + '\n[backing]\ncapacity = "10%"\n'
    return _config_case(tmp, text, "backing.capacity", "not a share")


def case_backing_capacity_zero(tmp: Path) -> Bad:
    text = GOOD_TIER + "\n[backing]\ncapacity = 0\n"
    return _config_case(tmp, text, "backing.capacity", "greater than zero")


def case_good_block_fraction_above_one(tmp: Path) -> Bad:
    text = GOOD_TIER + "\n[techs.NAND-SLC]\ngood_block_fraction = 1.2\n"
    return _config_case(tmp, text, "techs.NAND-SLC.good_block_fraction", "at most 1")


def case_model_h_of_one(tmp: Path) -> Bad:
    from tierlab.models import memorage_lending

    args = ["model", "memorage-lending", "--h", "1", "--tau-days", "1", "--cm-gb", "8"]
    args += ["--bs-gb-per-day", "12", "--beta", "10"]
    return Bad(
        list(args),
        lambda: memorage_lending(h=1, tau_days=1, cm_gb=8, bs_gb_per_day=12, beta=10),
        ["memorage-lending: h = 1", "less than 1"],
        tierlab.ModelError,
    )


def case_model_negative_ratio(tmp: Path) -> Bad:
    from tierlab.models import breakeven_price

    return Bad(
        ["model", "breakeven-price", "--ratio", "-1.37"],
        lambda: breakeven_price(-1.37),
        ["breakeven-price: ratio = -1.37", "positive"],
        tierlab.ModelError,
    )


def case_model_storage_not_slower(tmp: Path) -> Bad:
    from tierlab.models import breakeven_hits

    return Bad(
        ["model", "breakeven-hits", "--cache-ns", "100", "--storage-ns", "100"]
        + ["--cached-miss-ns", "200"],
        lambda: breakeven_hits(100, 100, 200),
        ["storage_ns = 100", "must exceed cache_ns"],
        tierlab.ModelError,
    )


def case_new_tech_without_base(tmp: Path) -> Bad:
    text = GOOD_TIER + "\n[techs.MYSTERY]\nread_ns = 5\n"
    return _config_case(tmp, text, "techs.MYSTERY", "base")


def case_slowdown_zero(tmp: Path) -> Bad:
    text = GOOD_TIER + "slowdown = 0\n"
    return _config_case(tmp, text, "tier[0].slowdown", "0", "positive")


def case_bad_duration(tmp: Path) -> Bad:
    text = '[hierarchy]\nflush_interval = "3 fortnights"\n' + GOOD_TIER
    return _config_case(tmp, text, "hierarchy.flush_interval", '"3 fortnights"', "30s")


def case_infinite_duration(tmp: Path) -> Bad:
    # An exponent is part of the number ("1e-6s" is a microsecond); one
    # that overflows is not a duration.
    text = '[run]\ncompute = "1e400s"\n' + GOOD_TIER
    return _config_case(tmp, text, "run.compute", '"1e400s" is not a duration', "30s")


def case_bad_fill(tmp: Path) -> Bad:
    # Not "lazy": that became a fill rule with the time model (S4's flash cache).
    text = '[hierarchy]\nfill = "sideways"\n' + GOOD_TIER
    return _config_case(tmp, text, "hierarchy.fill", "sideways", "inclusive", "exclusive", "lazy")


def case_lazy_fill_one_tier(tmp: Path) -> Bad:
    text = '[hierarchy]\nfill = "lazy"\n' + GOOD_TIER
    return _config_case(tmp, text, "hierarchy.fill", "at least two tiers")


def case_no_tiers(tmp: Path) -> Bad:
    return _config_case(tmp, '[backing]\ntech = "HDD"\n', "tier", "[[tier]]")


def case_duplicate_tier_names(tmp: Path) -> Bad:
    return _config_case(tmp, GOOD_TIER + "\n" + GOOD_TIER, "tier[1].name", '"dram"', "unique")


def case_missing_trace_file(tmp: Path) -> Bad:
    cfg = tmp / "c.toml"
    cfg.write_text(GOOD_TIER)
    p = tmp / "no-such-trace.bin"
    return Bad(
        ["run", cfg, "--trace", p],
        lambda: tierlab.simulate(cfg, trace=p),
        ["no-such-trace.bin", "No such file"],
        tierlab.TraceError,
    )


def case_missing_trace_in_config(tmp: Path) -> Bad:
    cfg = tmp / "c.toml"
    cfg.write_text('[workload]\ntype = "trace"\npath = "gone.bin"\n\n' + GOOD_TIER)
    return Bad(
        ["run", cfg],
        lambda: tierlab.simulate(cfg),
        ["gone.bin", "No such file"],
        tierlab.TraceError,
    )


def case_missing_config_file(tmp: Path) -> Bad:
    cfg = tmp / "no-such-config.toml"
    trace = _trace(tmp)
    return Bad(
        ["run", cfg, "--trace", trace],
        lambda: tierlab.simulate(cfg, trace=trace),
        ["no-such-config.toml", "no such config file"],
        tierlab.ConfigError,
    )


def case_invalid_toml(tmp: Path) -> Bad:
    text = GOOD_TIER.replace('policy = "lru"', "policy = lru")  # line 5
    return _config_case(tmp, text, "bad.toml", "invalid TOML", "line 5")


def case_no_workload(tmp: Path) -> Bad:
    cfg = tmp / "c.toml"
    cfg.write_text(GOOD_TIER)
    return Bad(
        ["run", cfg], lambda: tierlab.simulate(cfg), ["workload", "--trace"], tierlab.ConfigError
    )


def case_empty_oracle_trace(tmp: Path) -> Bad:
    p = tmp / "empty.oracleGeneral.bin"
    p.write_bytes(b"")
    cfg = tmp / "c.toml"
    cfg.write_text(GOOD_TIER)
    return Bad(
        ["run", cfg, "--trace", p],
        lambda: tierlab.simulate(cfg, trace=p),
        [p.name, "no requests"],
        tierlab.TraceError,
    )


def case_empty_csv_trace(tmp: Path) -> Bad:
    p = tmp / "empty.csv"
    p.write_text("")
    cfg = tmp / "c.toml"
    cfg.write_text(GOOD_TIER)
    return Bad(
        ["run", cfg, "--trace", p],
        lambda: tierlab.simulate(cfg, trace=p),
        [p.name, "no requests"],
        tierlab.TraceError,
    )


def case_csv_non_numeric_key(tmp: Path) -> Bad:
    p = tmp / "keys.csv"
    p.write_text("1,10,4096\n2,user:42,4096\n")
    cfg = tmp / "c.toml"
    cfg.write_text(GOOD_TIER)
    return Bad(
        ["run", cfg, "--trace", p, "--format", "csv"],
        lambda: tierlab.simulate(cfg, trace=p, format="csv"),
        [f"{p.name}:2:", "column 2 (key)", '"user:42"', "hash_keys"],
        tierlab.TraceError,
    )


def case_convert_onto_its_input(tmp: Path) -> Bad:
    # Regression: writing the output truncated the input before it was read.
    p = tmp / "a.csv"
    p.write_text("1,2,3\n2,3,3\n")
    return Bad(
        ["trace", "convert", p, p],
        lambda: tierlab.trace_convert(p, p),
        [p.name, "is the input trace"],
        tierlab.TraceError,
    )


def case_convert_into_a_directory(tmp: Path) -> Bad:
    p = tmp / "a.csv"
    p.write_text("1,2,3\n")
    return Bad(
        ["trace", "convert", p, tmp],
        lambda: tierlab.trace_convert(p, tmp),
        [str(tmp), "is a directory"],
        tierlab.TraceError,
    )


def case_binary_read_as_strace(tmp: Path) -> Bad:
    # Regression: panicked cutting the excerpt inside a UTF-8 character.
    p = tmp / "blob.strace"
    p.write_bytes(b"T" + "\u00e9".encode() * 40 + b"\xff\n")
    cfg = tmp / "c.toml"
    cfg.write_text(GOOD_TIER)
    return Bad(
        ["run", cfg, "--trace", p, "--format", "strace"],
        lambda: tierlab.simulate(cfg, trace=p, format="strace"),
        [f"{p.name}:1:", "PID SECONDS.MICROS"],
        tierlab.TraceError,
    )


def case_csv_two_roles_on_one_column(tmp: Path) -> Bad:
    # Regression: every line failed with "3 field(s), but column 3 (op) is
    # needed" although the line has column 3: the parser reads a column once.
    p = tmp / "t.csv"
    p.write_text("1,2,read\n")
    cfg = tmp / "c.toml"
    text = f'[workload]\ntype = "trace"\npath = "{p}"\ncsv = {{ op = 3 }}\n' + GOOD_TIER
    cfg.write_text(text)
    return Bad(
        ["run", cfg],
        lambda: tierlab.simulate(cfg),
        ["workload.csv.op", "column 3 is also the size column"],
        tierlab.ConfigError,
    )


def case_multiprogram_line_not_a_power_of_two(tmp: Path) -> Bad:
    cfg = tmp / "c.toml"
    cfg.write_text(
        '[workload]\ntype = "multiprogram"\npreset = "s3"\nscale = 0.001\n'
        "[workload.multiprogram]\nline = 96\n"
        '[[tier]]\ntech = "DRAM-DDR3"\ncapacity = "4MiB"\n[vm]\n'
    )
    return Bad(
        ["run", cfg],
        lambda: tierlab.simulate(cfg),
        ["workload.multiprogram.line", "a power of two from 8 B to the page size"],
        tierlab.ConfigError,
    )


CASES = {
    name.removeprefix("case_"): fn
    for name, fn in sorted(globals().items())
    if name.startswith("case_") and callable(fn)
}


@pytest.mark.parametrize("name", CASES)
def test_cli(tierlab_cmd: Callable[..., Ran], tmp_path: Path, name: str) -> None:
    bad = CASES[name](tmp_path)
    assert_bad(tierlab_cmd(*bad.args), *bad.needles)


@pytest.mark.parametrize("name", CASES)
def test_cli_in_process(cli: Callable[..., Ran], tmp_path: Path, name: str) -> None:
    bad = CASES[name](tmp_path)
    assert_bad(cli(*bad.args), *bad.needles)


@pytest.mark.parametrize("name", CASES)
def test_api(tmp_path: Path, name: str) -> None:
    bad = CASES[name](tmp_path)
    with pytest.raises(bad.exc) as e:
        bad.api()
    assert isinstance(e.value, tierlab.TierlabError)
    for n in bad.needles:
        assert n in str(e.value), f"{n!r} not in {e.value}"


def test_exception_hierarchy() -> None:
    assert issubclass(tierlab.ConfigError, tierlab.TierlabError)
    assert issubclass(tierlab.TraceError, tierlab.TierlabError)
    assert issubclass(tierlab.TierlabError, Exception)
    assert not issubclass(tierlab.ConfigError, tierlab.TraceError)


# --------------------------------------------------------------------------
# Trace errors read the same from every command that reads a trace.
# --------------------------------------------------------------------------


@pytest.fixture
def truncated(tmp_path: Path) -> Path:
    p = write_oracle(tmp_path / "t.oracleGeneral.bin", list(range(1, 101)))
    with p.open("ab") as f:
        f.write(struct.pack("<IQ", 1, 2))  # 12 of a record's 24 bytes
    return p


@pytest.mark.parametrize(
    "words",
    [["trace", "stats"], ["trace", "convert"], ["bench"]],
    ids=["stats", "convert", "bench"],
)
def test_truncated_trace_other_commands(
    tierlab_cmd: Callable[..., Ran], truncated: Path, tmp_path: Path, words: list[str]
) -> None:
    args: list[object] = [*words, truncated]
    if words[-1] == "convert":
        args.append(tmp_path / "out.bin")
    if words == ["bench"]:
        args += ["--repeat", "1"]
    assert_bad(tierlab_cmd(*args), truncated.name, "byte offset 2400")
    assert not (tmp_path / "out.bin").exists()


def test_truncated_trace_api(truncated: Path) -> None:
    with pytest.raises(tierlab.TraceError, match="byte offset 2400"):
        tierlab.trace_stats(truncated)


def test_missing_trace_stats(tierlab_cmd: Callable[..., Ran], tmp_path: Path) -> None:
    assert_bad(tierlab_cmd("trace", "stats", tmp_path / "nope.bin"), "nope.bin")
    with pytest.raises(tierlab.TraceError, match="nope.bin"):
        tierlab.trace_stats(tmp_path / "nope.bin")


def test_bench_repeat_zero(tierlab_cmd: Callable[..., Ran], tmp_path: Path) -> None:
    t = _trace(tmp_path)
    assert_bad(tierlab_cmd("bench", t, "--repeat", "0"), "--repeat")


def test_bench_no_policy(tierlab_cmd: Callable[..., Ran], tmp_path: Path) -> None:
    """Regression: `--policies ""` timed nothing and printed an empty table."""
    assert_bad(tierlab_cmd("bench", _trace(tmp_path), "--policies", " , "), "--policies")


def test_bench_unknown_policy(tierlab_cmd: Callable[..., Ran], tmp_path: Path) -> None:
    t = _trace(tmp_path)
    r = tierlab_cmd("bench", t, "--policies", "lru,nope", "--capacity", "2", "--repeat", "1")
    assert_bad(r, '"nope"', "lru")


# --------------------------------------------------------------------------
# Regressions: problems found while writing these tests, since fixed.
# --------------------------------------------------------------------------


def test_config_error_has_no_json_locator(tierlab_cmd: Callable[..., Ran], tmp_path: Path) -> None:
    """Regression: config errors end in "at line 1 column 63", a position in the JSON
    the Python layer hands to the engine, not in the user's TOML (where the bad
    policy is on line 5). config.rs strips the toml crate's locator but not
    serde_json's."""
    cfg = tmp_path / "c.toml"
    cfg.write_text(GOOD_TIER.replace('policy = "lru"', 'policy = "lruu"'))
    line = assert_bad(tierlab_cmd("run", cfg, "--trace", _trace(tmp_path)), "tier[0].policy")
    assert " at line 1 column" not in line, line


def test_bench_three_tiers_absolute_capacity(
    tierlab_cmd: Callable[..., Ran], tmp_path: Path
) -> None:
    """Regression: `tierlab bench TRACE --tiers 3 --capacity 1MiB` ends in a Python
    traceback (ValueError from bench.bench_config) and exit code 1."""
    t = _trace(tmp_path)
    r = tierlab_cmd("bench", t, "--tiers", "3", "--capacity", "1MiB", "--repeat", "1")
    assert_bad(r, "--capacity")


@pytest.mark.parametrize(("cap", "needle"), [("x%", "not a size"), ("150%", "(0%, 100%]")])
def test_bench_three_tiers_bad_share(
    tierlab_cmd: Callable[..., Ran], tmp_path: Path, cap: str, needle: str
) -> None:
    """A share the engine would refuse is refused with --capacity named (bench's
    own copy of share parsing split "x%" with float() and raised ValueError)."""
    t = _trace(tmp_path)
    r = tierlab_cmd("bench", t, "--tiers", "3", "--capacity", cap, "--repeat", "1")
    line = assert_bad(r, "--capacity")
    assert needle in line, line


def test_share_too_small_message_is_readable(
    tierlab_cmd: Callable[..., Ran], tmp_path: Path
) -> None:
    """Regression: a share that resolves to less than one unit prints
    Rust debug text: "tier[0].capacity: Percent(10.0) of a footprint of 5 ...";
    the user wrote "10%"."""
    cfg = tmp_path / "c.toml"
    cfg.write_text(GOOD_TIER.replace('"1MiB"', '"10%"'))
    trace = write_oracle(tmp_path / "five.bin", [1, 2, 3, 4, 5])
    line = assert_bad(tierlab_cmd("run", cfg, "--trace", trace, "--unit-size"), "tier[0].capacity")
    assert "Percent(" not in line, line
    assert "10%" in line, line


def test_csv_format_on_binary_file_message_is_short(
    tierlab_cmd: Callable[..., Ran], tmp_path: Path
) -> None:
    """Regression: `--format csv` on a binary trace prints the whole
    first "line" of binary junk, escaped, in the error; with a real trace that
    is kilobytes to megabytes on one line. The field should be cut short."""
    cfg = tmp_path / "c.toml"
    cfg.write_text(GOOD_TIER)
    # Ids with no newline or comma byte (and unique, so next-access is -1):
    # the first field of the first "line" is the whole file.
    ids = [k for k in range(0x100, 0x400) if not {0x0A, 0x2C} & set(k.to_bytes(8, "little"))]
    trace = write_oracle(tmp_path / "t.bin", ids, sizes=4096, times=0)
    r = tierlab_cmd("run", cfg, "--trace", trace, "--format", "csv")
    line = assert_bad(r, "t.bin:1:")
    assert len(line) < 300, f"{len(line)} characters: {line[:200]}..."


def test_trace_that_is_a_directory(tierlab_cmd: Callable[..., Ran], tmp_path: Path) -> None:
    """Regression: `--trace DIR` reports "truncated record at byte
    offset 4080: the file is 4096 bytes" (the directory's inode size) instead
    of saying it is a directory."""
    cfg = tmp_path / "c.toml"
    cfg.write_text(GOOD_TIER)
    d = tmp_path / "traces"
    d.mkdir()
    line = assert_bad(tierlab_cmd("run", cfg, "--trace", d), "traces")
    # tmp_path itself contains this test's name: look at the message only.
    assert line.endswith("traces: is a directory, not a trace file"), line


def test_max_requests_zero_names_the_key(tierlab_cmd: Callable[..., Ran], tmp_path: Path) -> None:
    """Regression: `[run] max_requests = 0` is accepted at load,
    and the run then fails with "zipf(...): the trace holds no requests",
    blaming the workload instead of naming run.max_requests."""
    cfg = tmp_path / "c.toml"
    cfg.write_text(
        '[workload]\ntype = "zipf"\nobjects = 10\nrequests = 100\n\n[run]\nmax_requests = 0\n\n'
        + GOOD_TIER
    )
    assert_bad(tierlab_cmd("run", cfg), "run.max_requests")


def test_csv_key_hint_is_a_hint_line(tierlab_cmd: Callable[..., Ran], tmp_path: Path) -> None:
    """Regression: a non-numeric CSV key gives the hint inside the
    error line, "... (hint: set csv.hash_keys = true ...)", not as the CLI's
    `hint:` line, and does not say where that key goes ([workload.csv] in the
    config; there is no command-line option for it)."""
    cfg = tmp_path / "c.toml"
    cfg.write_text(GOOD_TIER)
    p = tmp_path / "keys.csv"
    p.write_text("1,user:1,4096\n")
    r = tierlab_cmd("run", cfg, "--trace", p, "--format", "csv")
    assert_bad(r, "keys.csv:1:")
    assert len(r.err_lines) == 2, r.err
    assert "hash_keys" in r.err_lines[1]
    assert "[workload.csv]" in r.err_lines[1]


def test_new_tech_without_base_message(tierlab_cmd: Callable[..., Ran], tmp_path: Path) -> None:
    """Regression: a new [techs.X] without `base` and without
    write_ns reads "techs.X.write_ns: unknown technology "X"; known: a new
    technology needs `base` (...)": the TechError::Unknown template is reused
    for a missing field, so "known:" introduces a sentence."""
    cfg = tmp_path / "c.toml"
    cfg.write_text(GOOD_TIER + '\n[techs.X]\nread_ns = 5\nsource = "mine"\n')
    line = assert_bad(tierlab_cmd("run", cfg, "--trace", _trace(tmp_path)), "techs.X.write_ns")
    assert "known: a new technology" not in line, line


def test_csv_table_with_oracle_format_message(tierlab_cmd: Callable[..., Ran], tmp_path) -> None:
    """Regression: [workload.csv] on an oracleGeneral trace says
    `workload.csv: not used by type = "trace"`, but csv is used by type
    "trace"; what excludes it is the format (oracle, here guessed from the
    file name)."""
    _trace(tmp_path)
    cfg = tmp_path / "c.toml"
    cfg.write_text(
        '[workload]\ntype = "trace"\npath = "ok.oracleGeneral.bin"\ncsv = { key = 2 }\n\n'
        + GOOD_TIER
    )
    line = assert_bad(tierlab_cmd("run", cfg), "workload.csv")
    assert "oracle" in line, line


@pytest.mark.parametrize("out_name", ["a.csv", "link.bin"])
def test_convert_onto_its_input_loses_nothing(
    tierlab_cmd: Callable[..., Ran], tmp_path: Path, out_name: str
) -> None:
    p = tmp_path / "a.csv"
    p.write_text("1,2,3\n2,3,3\n")
    (tmp_path / "link.bin").symlink_to(p)
    assert_bad(tierlab_cmd("trace", "convert", p, tmp_path / out_name), "is the input trace")
    assert p.read_text() == "1,2,3\n2,3,3\n"
    assert sorted(f.name for f in tmp_path.iterdir()) == ["a.csv", "link.bin"]


@pytest.mark.parametrize("out_name", ["out.csv", "out.bin"])
def test_failed_convert_keeps_the_old_output(
    tierlab_cmd: Callable[..., Ran], tmp_path: Path, out_name: str
) -> None:
    """The output appears whole or not at all: a malformed line late in the
    input leaves a file already at OUT as it was, and nothing else behind."""
    bad = tmp_path / "bad.csv"
    bad.write_text("".join(f"{i},{i % 7},1\n" for i in range(3000)) + "3000,x,1\n")
    out = tmp_path / out_name
    out.write_text("precious")
    assert_bad(tierlab_cmd("trace", "convert", bad, out), "bad.csv:3001")
    assert out.read_text() == "precious"
    assert sorted(f.name for f in tmp_path.iterdir()) == ["bad.csv", out_name]


@pytest.mark.parametrize("target", ["trace", "config", "config_trace", "dir", "no_dir"])
def test_timeline_output_checked_before_the_run(
    tierlab_cmd: Callable[..., Ran], tmp_path: Path, target: str
) -> None:
    """Regression: `run --trace t.bin --timeline t.bin` replaced the trace
    with the timeline; a bad --timeline failed only after the whole run."""
    trace = _trace(tmp_path)
    inner = write_oracle(tmp_path / "inner.oracleGeneral.bin", [1, 2, 3])
    cfg = tmp_path / "c.toml"
    cfg.write_text(f'[workload]\ntype = "trace"\npath = "{inner.name}"\n' + GOOD_TIER)
    before = {p: p.read_bytes() for p in (trace, inner, cfg)}
    out, needle = {
        "trace": (trace, "is the input"),
        "config": (cfg, "is the input"),
        "config_trace": (inner, "is the input"),
        "dir": (tmp_path, "is a directory"),
        "no_dir": (tmp_path / "nope" / "t.csv", "no such directory"),
    }[target]
    args: list[object] = ["run", cfg, "--timeline", out]
    if target == "trace":
        args += ["--trace", trace]
    assert_bad(tierlab_cmd(*args), "--timeline", needle)
    assert {p: p.read_bytes() for p in before} == before


def test_mrc_output_onto_its_input(tierlab_cmd: Callable[..., Ran], tmp_path: Path) -> None:
    p = tmp_path / "t.csv"
    p.write_text("1,2,3\n2,3,3\n")
    assert_bad(tierlab_cmd("mrc", p, "-o", p, "--no-plot"), "-o", "is the input")
    assert p.read_text() == "1,2,3\n2,3,3\n"


def test_trace_tool_config_error_has_no_json_locator(
    tierlab_cmd: Callable[..., Ran], tmp_path: Path
) -> None:
    """Regression: trace tools read only [workload] and kept serde_json's
    "at line 1 column 39" (a place in JSON the user never wrote)."""
    r = tierlab_cmd("trace", "generate", "web", "-o", tmp_path / "g.bin", "--seed", "-1")
    line = assert_bad(r, "workload.seed", "-1")
    assert "column" not in line, line
    assert not (tmp_path / "g.bin").exists()


@pytest.mark.parametrize("text", ["", "time,key,size,op\n"], ids=["empty", "header only"])
@pytest.mark.parametrize("words", [["trace", "stats"], ["trace", "convert"]])
def test_trace_tools_refuse_an_empty_csv(
    tierlab_cmd: Callable[..., Ran], tmp_path: Path, text: str, words: list[str]
) -> None:
    """Regression: stats reported 0 requests and convert wrote an empty
    oracleGeneral file (which tierlab then refused to read); an empty
    oracleGeneral file was already an error, as is a run over either."""
    p = tmp_path / "e.csv"
    p.write_text(text)
    args: list[object] = [*words, p]
    if words[-1] == "convert":
        args.append(tmp_path / "out.bin")
    assert_bad(tierlab_cmd(*args), "e.csv", "no requests")
    assert sorted(f.name for f in tmp_path.iterdir()) == ["e.csv"]


MSR_LINES = (
    "128166372003061629,web,0,Read,3296370688,4096,2070\n"
    "128166372016853454,web,0,Write,3296370688,8192,1302\n"
)


def test_text_as_oracle_stops_with_offset_and_format(
    tierlab_cmd: Callable[..., Ran], tmp_path: Path
) -> None:
    """Regression (issue 21, defect 4): a text file whose length is a
    multiple of 24 ran as oracleGeneral (objects of 174 MB-1.9 GB, exit 0)."""
    p = tmp_path / "t.bin"
    p.write_text("".join(f"{i:>10},{i % 7:>6},{4096:>5}\n" for i in range(24)))
    assert p.stat().st_size % 24 == 0
    assert_bad(
        tierlab_cmd("trace", "stats", p, "--format", "oracle"),
        "t.bin: byte offset 0: 24 bytes of text",
        'hint: this looks like CSV text; give format = "csv"',
    )


def test_msr_as_csv_hints_msr(tierlab_cmd: Callable[..., Ran], tmp_path: Path) -> None:
    """Regression (issue 21, defect 5): an MSR-Cambridge file read as CSV
    suggested hash_keys = true (which would hash the host name)."""
    p = tmp_path / "web_0.csv"
    p.write_text(MSR_LINES)
    line = assert_bad(
        tierlab_cmd("trace", "stats", p, "--format", "csv"),
        'hint: this looks like an MSR-Cambridge block trace; give format = "msr"',
    )
    assert "hash_keys" not in line
    # Without --format the content decides: it reads as MSR.
    r = tierlab_cmd("trace", "stats", p, "--json")
    assert r.code == 0, r.err
    header = tmp_path / "h.csv"
    header.write_text("Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n" + MSR_LINES)
    assert_bad(tierlab_cmd("trace", "stats", header), "h.csv:1:", "hint: this line is a header")


def test_registries_are_the_engines() -> None:
    """Every format and generator the engine lists is accepted by a config,
    and Python keeps no list of its own."""
    from tierlab import _core
    from tierlab.api import GENERATORS

    assert GENERATORS == tuple(_core.generators())
    types = _core.workload_types()
    assert set(GENERATORS) <= set(types) and {"zipf", "trace"} <= set(types)
    for fmt in _core.trace_formats():
        w = {"workload": {"type": "trace", "path": "x", "format": fmt}}
        assert _core.config_schema_error(json.dumps(w)) is None, fmt
    for t in types:
        e = _core.config_schema_error(json.dumps({"workload": {"type": t}}))
        assert e is None, (t, e)
    e = _core.config_schema_error('{"workload": {"type": "nope"}}')
    assert e is not None and e[0] == "workload.type" and ", ".join(types) in e[1]


def test_guess_format_is_the_engines(tmp_path: Path) -> None:
    from tierlab import _core

    p = tmp_path / "a.dat"
    p.write_text(MSR_LINES)
    assert _core.guess_format(p) == "msr"
    q = tmp_path / "b.dat"
    q.write_text(_core.CSV_HEADER + "\n1,2,3,read\n")
    assert _core.guess_format(q) == "csv"
    assert _core.guess_format(tmp_path / "missing.lackey") == "lackey"
    assert _core.guess_format(tmp_path / "missing") is None
