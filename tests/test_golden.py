"""The golden corpus (tests/golden/): every example, every reproduction at a
small scale and configs covering every layer, replayed and compared byte for
byte with the files kept in tests/golden/expected/ (the version field
excluded). After an intentional change of output, regenerate them with
``python tests/golden/regen.py`` and name the change in the commit message."""

from __future__ import annotations

import difflib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "golden"))

from corpus import EXPECTED, cases, produce_all  # noqa: E402

REGEN = "python tests/golden/regen.py"


def _diff(name: str, want: str, got: str) -> str:
    lines = difflib.unified_diff(
        want.splitlines(), got.splitlines(), "expected", "now", lineterm="", n=1
    )
    return f"{name}:\n" + "\n".join(list(lines)[:20])


def test_golden_corpus_is_byte_identical() -> None:
    everything = cases()
    assert len(everything) >= 50, "the corpus lost cases"
    kept = {p.name for p in EXPECTED.glob("*")}
    made: set[str] = set()
    bad: list[str] = []
    for _case, files in produce_all(everything):
        for name, text in files.items():
            made.add(name)
            path = EXPECTED / name
            if not path.is_file():
                bad.append(f"{name}: no expected file (run {REGEN} {_case.name})")
                continue
            want = path.read_text(encoding="utf-8")
            if want != text:
                bad.append(_diff(name, want, text))
    stale = kept - made
    assert not stale, f"expected files no case makes: {sorted(stale)} (run {REGEN})"
    assert not bad, (
        f"{len(bad)} output(s) changed; if intended, run {REGEN} and say why in the commit:\n"
        + "\n".join(bad)
    )
