"""S5's paging half (python/tierlab/reproductions/s5_paging.py) at a tiny
scale: every figure the issue names is there and finite. The bands are
checked by the default-scale run, whose figures docs/reproduce-s5.md
reports with its command."""

from __future__ import annotations

import math
from pathlib import Path

from tierlab.reproductions import s5_paging


def test_paging_figures_are_all_there_and_finite(tmp_path: Path) -> None:
    m = s5_paging.measure(tmp_path, scale=0.002)
    ids = [f[0] for f in m.figures]
    assert len(ids) == len(set(ids))
    for lat in ("1x", "10x", "100x", "1000x"):
        assert f"best_page_size_{lat}" in ids
        assert f"best_page_size_linux_{lat}" in ids
        for page in (512, 4096, 65536):
            assert f"t_addr_ns_{lat}_page_{page}" in ids
            assert f"t_data_ns_{lat}_page_{page}" in ids
    for page in (512, 1024, 2048, 4096, 8192, 16384, 32768, 65536):
        assert f"tlb_hit_ratio_page_{page}" in ids
        assert f"fault_rate_page_{page}" in ids
    for entries in (1, 2, 4, 8, 16, 32, 64, 128):
        assert f"tlb_hit_ratio_entries_{entries}" in ids
    by_id = {f[0]: f for f in m.figures}
    assert by_id["best_page_size_1x"][5] == (4096, 8192)
    assert by_id["best_page_size_10x"][5] == (512, 1024)
    for fid, _label, _paper, value, _unit, _band in m.figures:
        assert math.isfinite(value), fid
    # More TLB entries never lower the hit ratio of an LRU TLB (inclusion).
    hits = [by_id[f"tlb_hit_ratio_entries_{n}"][3] for n in (1, 2, 4, 8, 16, 32, 64, 128)]
    assert hits == sorted(hits)
    assert set(m.tables) and len(m.plots) == 2
