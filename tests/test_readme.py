"""The README's commands run: every ``tierlab ...`` line of its fenced ``sh`` /
``bash`` blocks exits 0 when run from the repository root (docs examples
are tests, so the quick start can never rot).

Lines that install (``pip install``) or run CI (``bash .ci/run``) are skipped;
other lines of a block that do not call tierlab are not run. Lines run in
document order, so a later command may use a file an earlier one wrote; files
a command names that did not exist before are removed when the module ends.
A README with no tierlab command fails ``test_readme_has_tierlab_commands``.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import REPO

README = REPO / "README.md"
FENCE = re.compile(r"^(?P<fence>`{3,}|~{3,})\s*(?P<lang>[\w+-]*)[^\n]*$")
TIERLAB = re.compile(r"(^|[\s;&|(])tierlab\s")
SKIP = (re.compile(r"\bpip3?\s+install\b"), re.compile(r"\bbash\s+\.ci/run\b"))


def shell_blocks(text: str) -> list[list[str]]:
    """The bodies of the ```sh / ```bash blocks, one list of lines per block."""
    blocks: list[list[str]] = []
    fence: str | None = None
    body: list[str] = []
    keep = False
    for line in text.splitlines():
        m = FENCE.match(line.strip())
        if fence is None:
            if m:
                fence, keep, body = m["fence"], m["lang"] in ("sh", "bash", "shell", "console"), []
        elif line.strip().startswith(fence) and line.strip().strip(fence[0]) == "":
            if keep:
                blocks.append(body)
            fence = None
        else:
            body.append(line)
    return blocks


def command_lines(block: list[str]) -> list[str]:
    """Shell lines of a block (continuations joined, prompts and comments dropped)."""
    out: list[str] = []
    cur = ""
    for raw in block:
        line = raw.rstrip()
        if not cur:
            line = line.lstrip()
            for prompt in ("$ ", "% "):
                if line.startswith(prompt):
                    line = line[len(prompt) :]
            if not line or line.startswith("#"):
                continue
        if line.endswith("\\"):
            cur += line[:-1] + " "
            continue
        out.append(cur + line)
        cur = ""
    if cur:
        out.append(cur)
    return out


def readme_commands() -> list[str]:
    if not README.exists():
        return []
    cmds = []
    for block in shell_blocks(README.read_text(encoding="utf-8")):
        for line in command_lines(block):
            # "pip install . && tierlab run ...": the install is the test
            # suite's own; run what follows it.
            head, sep, tail = line.partition("&&")
            if sep and SKIP[0].search(head) and TIERLAB.search(tail):
                line = tail.strip()
            if TIERLAB.search(line) and not any(s.search(line) for s in SKIP):
                cmds.append(line)
    return cmds


COMMANDS = readme_commands()


def fenced_blocks(lang: str) -> list[str]:
    """The bodies of the README's ```LANG blocks."""
    if not README.exists():
        return []
    out, body, inside = [], [], False
    for line in README.read_text(encoding="utf-8").splitlines():
        if not inside and line.strip() == f"```{lang}":
            inside, body = True, []
        elif inside and line.strip() == "```":
            out.append("\n".join(body))
            inside = False
        elif inside:
            body.append(line)
    return out


def python_blocks() -> list[str]:
    return fenced_blocks("python")


@pytest.mark.parametrize("code", python_blocks())
def test_readme_python(code: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each ```python block of the README runs as written, from the repo root."""
    monkeypatch.chdir(REPO)
    exec(compile(code, "README.md", "exec"), {})


def test_readme_has_python_example() -> None:
    assert python_blocks(), "README.md shows no Python API example"


def test_readme_has_tierlab_commands() -> None:
    assert README.exists(), "README.md is missing"
    assert COMMANDS, "README.md has no ```sh/```bash block with a `tierlab ...` command"


@pytest.fixture(scope="module")
def created() -> Iterator[list[Path]]:
    """Files the README's commands wrote; removed at the end of the module."""
    paths: list[Path] = []
    yield paths
    for p in paths:
        if p.is_file():
            p.unlink()


def named_paths(cmd: str) -> list[Path]:
    """Every word of a command that could name a file (``--opt=FILE`` too)."""
    try:
        words = shlex.split(cmd, comments=True)
    except ValueError:
        words = cmd.split()
    out = []
    for w in words:
        part = w.split("=", 1)[-1]
        if part and not part.startswith("-"):
            out.append((REPO / part).resolve())
    return out


@pytest.mark.parametrize("cmd", COMMANDS)
def test_readme_command(cmd: str, created: list[Path]) -> None:
    before = {p for p in named_paths(cmd) if p.exists()}
    env = dict(os.environ)
    # The tierlab of this interpreter first, whatever PATH the test runner has.
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    r = subprocess.run(
        ["bash", "-c", "set -o pipefail\n" + cmd],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    created += [p for p in named_paths(cmd) if p.exists() and p not in before]
    assert r.returncode == 0, (
        f"$ {cmd}\nexit {r.returncode}\nstdout:\n{r.stdout}\nstderr:\n{r.stderr}"
    )
    assert "Traceback" not in r.stderr


# --------------------------------------------------------------------------
# the extraction itself
# --------------------------------------------------------------------------


def test_extraction() -> None:
    text = """\
Intro `tierlab run x` in prose is not run.

```sh
pip install -e .
$ tierlab run examples/quickstart.toml
# a comment with tierlab run
tierlab run examples/quickstart.toml \\
    --json | head -1
bash .ci/run
```

```python
tierlab.simulate("x")
```

```toml
# tierlab run y
```

```bash
echo not tierlab
tierlab techs
```
"""
    cmds = []
    for block in shell_blocks(text):
        for line in command_lines(block):
            if TIERLAB.search(line) and not any(s.search(line) for s in SKIP):
                cmds.append(line)
    assert cmds == [
        "tierlab run examples/quickstart.toml",
        "tierlab run examples/quickstart.toml      --json | head -1",
        "tierlab techs",
    ]


def toml_blocks() -> list[str]:
    """The configs the README shows."""
    return fenced_blocks("toml")


@pytest.mark.parametrize("text", toml_blocks())
def test_readme_config_runs(text: str) -> None:
    """Each config the README shows is valid and runs as written."""
    import tierlab

    r = tierlab.simulate(text)
    assert r.summary["requests"] > 0
    assert len(r.summary["tiers"]) >= 1


def test_readme_shows_a_config() -> None:
    assert toml_blocks(), "README.md shows no TOML config"


def test_quick_start_names_what_the_first_install_needs() -> None:
    """Issue 38: the quick start says which Rust and Python a first install
    needs, the same versions the build files require, and how long it took."""
    import tomllib

    text = (REPO / "README.md").read_text(encoding="utf-8")
    quick = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    rust = tomllib.loads((REPO / "Cargo.toml").read_text())["workspace"]["package"]
    python = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["requires-python"]
    assert f"Rust {rust['rust-version']} or newer" in quick
    assert f"Python {python.removeprefix('>=')} or newer" in quick
    assert re.search(r"[\d.]+ minutes of processor time", quick) and "idle" in quick
