"""Rewrites the golden corpus (tests/golden/expected/) from the current build.

    python tests/golden/regen.py            # every case
    python tests/golden/regen.py NAME ...   # only these cases

Run it only for an intentional change of output, and say in the commit
message which outputs changed and why; tests/test_golden.py compares every
case with these files byte for byte.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import EXPECTED, cases, produce_all  # noqa: E402


def main(names: list[str]) -> int:
    selected = [c for c in cases() if not names or c.name in names]
    unknown = set(names) - {c.name for c in selected}
    if unknown:
        print(f"error: unknown case(s): {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    if not names:
        # A full regeneration drops the files of cases that are gone.
        for old in EXPECTED.glob("*"):
            old.unlink()
    EXPECTED.mkdir(exist_ok=True)
    for case, files in produce_all(selected):
        for name, text in files.items():
            (EXPECTED / name).write_text(text, encoding="utf-8")
        print(f"{case.name}: {', '.join(files)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
