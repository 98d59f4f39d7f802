"""A positioning disk (`[backing.disk]`, docs/time.md "A positioning disk"):
bad figures exit 2 with the key path; a run with it charges the disk by
where its head is, so reading a file in order costs less than the catalog's
full random access per page."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import Ran
from test_bad_input import assert_bad
from test_time_config import CLOSED, config

SEEK = 'seek = { track = "0.6ms", average = "4.7ms", full = "10.5ms" }'

#: A 10,000 rpm drive of about 18 GB.
DISK = """
[backing.disk]
rpm = 10000
cylinders = 15110
capacity = "18GB"
transfer = "36MB/s"
seek = {{ track = "0.6ms", average = "4.7ms", full = "10.5ms" }}
{extra}
"""


def disk(extra: str = "", **replace: str) -> str:
    text = DISK.format(extra=extra)
    for old, new in replace.items():
        text = text.replace(old, new)
    return text


@pytest.mark.parametrize(
    ("case", "backing", "needles"),
    [
        ("zero rpm", disk(**{"rpm = 10000": "rpm = 0"}), ["backing.disk.rpm", "greater than zero"]),
        ("negative rpm", disk(**{"rpm = 10000": "rpm = -7200"}), ["backing.disk.rpm"]),
        ("seek figures out of order",
         disk(**{'average = "4.7ms"': 'average = "12ms"'}),
         ["backing.disk.seek", "track", "average", "full"]),
        ("an average no curve reaches",
         disk(**{'average = "4.7ms"': 'average = "0.7ms"'}), ["backing.disk.seek.average"]),
        ("negative transfer rate", disk(**{'transfer = "36MB/s"': 'transfer = "-36MB/s"'}),
         ["backing.disk.transfer"]),
        ("zero transfer rate", disk(**{'transfer = "36MB/s"': "transfer = 0"}),
         ["backing.disk.transfer"]),
        ("a share as capacity", disk(**{'capacity = "18GB"': 'capacity = "10%"'}),
         ["backing.disk.capacity"]),
        ("missing seek", disk(**{SEEK: ""}),
         ["backing.disk", "seek"]),
        ("unknown key", disk('colour = "red"'), ["backing.disk", "colour"]),
        ("write seek out of order",
         disk('write_seek = { track = "0.9ms", average = "0.8ms", full = "11ms" }'),
         ["backing.disk.write_seek"]),
        ("two channels", "channels = 2\n" + disk(), ["backing.channels", "one head"]),
        ("reads first", "reads_first = true\n" + disk(), ["backing.reads_first"]),
        ("exponential service", 'service = "exponential"\n' + disk(), ["backing.service"]),
    ],
    ids=lambda v: v if isinstance(v, str) and len(v) < 60 else "",
)  # fmt: skip
def test_bad_disk_figures(
    cli: Callable[..., Ran], tmp_path: Path, case: str, backing: str, needles: list[str]
) -> None:
    assert_bad(cli("run", config(tmp_path, CLOSED, backing=backing), "--json"), *needles)


SCAN = """\
[workload]
type = "postmark"
seed = 3

[workload.postmark]
files = 200
transactions = 0
min_size = 40960
max_size = 40960

[hierarchy]
fill = "exclusive"
write = "write-back"

[[tier]]
name = "dram"
tech = "DRAM-DDR3"
capacity = "64KiB"
policy = "lru"

[backing]
tech = "HDD"
{backing}

[load]
type = "closed"
clients = 1
"""


def test_writing_files_in_order_costs_transfers_not_random_accesses(
    cli: Callable[..., Ran], tmp_path: Path
) -> None:
    """200 files of 10 pages, written and deleted in order through a small
    cache: with the catalog's disk every write-back is a 9.5 ms access; with
    a positioning disk the file system lays the files out in order, so most
    write-backs follow the previous one and pay a 4 KiB transfer."""
    runs = {}
    for name, backing in (("catalog", ""), ("disk", disk())):
        p = tmp_path / f"{name}.toml"
        p.write_text(SCAN.format(backing=backing), encoding="utf-8")
        r = cli("run", p, "--json")
        assert r.code == 0, r.err
        runs[name] = json.loads(r.out)
    catalog, positioned = runs["catalog"], runs["disk"]
    # The cache decides the same things either way.
    assert positioned["backing"]["writes"] == catalog["backing"]["writes"] > 1000
    # About 2,000 write-backs: 9.5 ms each against mostly 114 us transfers.
    assert positioned["total_time_ns"] < 0.1 * catalog["total_time_ns"]
