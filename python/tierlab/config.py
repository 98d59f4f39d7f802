"""Loading configs: a path, TOML text or a dict, in the one schema the engine
checks (crates/tierlab-core/src/config/mod.rs). Python only reads TOML, resolves
relative paths and applies command-line overrides; every rule about what is
valid lives in the engine, so TOML, CLI and API can never disagree.
"""

from __future__ import annotations

import copy
import json
import math
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from tierlab.errors import ConfigError

Config = dict[str, Any]
ConfigLike = str | os.PathLike[str] | Mapping[str, Any]


def _looks_like_path(s: str) -> bool:
    return "\n" not in s and ("=" not in s or s.endswith(".toml"))


def load_config(config: ConfigLike) -> Config:
    """Returns a config as a plain dict.

    ``config`` is a path to a TOML file, TOML text, or a mapping. Relative
    trace paths in a file are taken relative to the file's folder.
    """
    cfg, folder = read_toml(config, "config")
    if folder is not None:
        _resolve_paths(cfg, folder)
    return cfg


def read_toml(source: ConfigLike, what: str) -> tuple[dict[str, Any], Path | None]:
    """A TOML table from a file path, TOML text or a mapping (copied), and the
    folder of the file it came from (None for text and mappings). ``what``
    names the kind of file in errors ("no such config file")."""
    if isinstance(source, Mapping):
        _check_values(source, what)  # before deepcopy, which recurses
        return copy.deepcopy(dict(source)), None
    if isinstance(source, os.PathLike) or (isinstance(source, str) and _looks_like_path(source)):
        path = Path(source)
        try:
            text = _read_bounded(path)
        except FileNotFoundError:
            raise ConfigError(f"{path}: no such {what} file") from None
        except UnicodeDecodeError as e:
            # A trace or any other binary file given where a TOML file goes.
            raise ConfigError(
                f"{path}: not a TOML {what} file (not UTF-8 text at byte {e.start})"
            ) from None
        except OSError as e:
            raise ConfigError(f"{path}: {e.strerror}") from None
        return _parse(text, str(path)), path.resolve().parent
    if isinstance(source, str):
        return _parse(source, what), None
    raise ConfigError(f"{what}: expected a path, TOML text or a dict, not {type(source).__name__}")


# The largest config file read: a config is a few kilobytes, and a device
# or a FIFO (/dev/zero) would otherwise be read until memory runs out.
MAX_CONFIG_BYTES = 16 << 20


def _read_bounded(path: Path) -> str:
    with path.open("rb") as f:
        data = f.read(MAX_CONFIG_BYTES + 1)
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(
            f"{path}: more than {MAX_CONFIG_BYTES >> 20} MiB; not a config file (a config "
            "is TOML text of a few kilobytes)"
        )
    return data.decode("utf-8")


def _parse(text: str, where: str) -> Config:
    # Imported here: tomllib (and the datetime it pulls) costs ~7 ms, and
    # `tierlab mrc TRACE` reads no TOML.
    import tomllib

    try:
        cfg = dict(tomllib.loads(text))
    except (tomllib.TOMLDecodeError, ValueError) as e:
        # ValueError: an integer of more digits than Python converts.
        raise ConfigError(f"{where}: invalid TOML: {_clip(str(e), 200)}") from None
    except RecursionError:
        # tomllib recurses once per level of nesting.
        raise ConfigError(
            f"{where}: nested deeper than Python's parser reads; "
            f"a config nests tables and arrays at most {MAX_DEPTH} deep"
        ) from None
    _check_values(cfg, where)
    return cfg


def _resolve_paths(cfg: Config, base: Path) -> None:
    w = cfg.get("workload")
    if isinstance(w, dict) and isinstance(w.get("path"), str):
        p = Path(w["path"]).expanduser()
        if not p.is_absolute():
            w["path"] = str(base / p)


def with_trace(
    cfg: Config,
    path: str | os.PathLike[str],
    fmt: str | None = None,
    unit_size: bool | None = None,
    skip_bad: bool | None = None,
) -> Config:
    """Replaces the config's workload by a trace file (``--trace``).

    ``unit_size`` is kept from the config's workload unless given.
    """
    found = cfg.get("workload")
    old: dict[str, Any] = found if isinstance(found, dict) else {}
    w: dict[str, Any] = {"type": "trace", "path": str(path)}
    if fmt is not None:
        w["format"] = fmt
    if unit_size is None:
        unit_size = bool(old.get("unit_size", False))
    w["unit_size"] = unit_size
    if skip_bad:
        w["skip_bad"] = True
    # Without a [workload.csv], the engine reads the columns of a CSV that
    # tierlab wrote from its header (_core.csv_header()).
    if isinstance(old.get("csv"), dict) and fmt in (None, "csv"):
        w["csv"] = old["csv"]
    out = dict(cfg)
    out["workload"] = w
    return out


def to_json(cfg: Config) -> str:
    """The config as the JSON the engine reads."""
    _check_values(cfg, "config")
    try:
        return json.dumps(cfg, allow_nan=False)
    except TypeError as e:
        raise ConfigError(f"config: a value cannot be used: {e}") from None


# Tables and arrays nest at most this deep: every schema table is a few
# levels, and the engine's JSON reader and Python's own recursion stop a
# little above a hundred (with a traceback, not a key path).
MAX_DEPTH = 32
_INT_MIN, _INT_MAX = -(2**63), 2**64 - 1


def _check_values(cfg: object, where: str) -> None:
    """Rejects what JSON cannot carry to the engine, naming the key: a nan
    or infinity (TOML has them, JSON does not), an integer outside 64 bits
    (JSON would carry 2^64 as a float, and the engine would call it one),
    nesting deeper than MAX_DEPTH. Iterative: a value nested a thousand
    deep is an error, not a RecursionError."""
    stack: list[tuple[str, object, int]] = [("", cfg, 0)]
    while stack:
        key, v, depth = stack.pop()
        if isinstance(v, bool):
            continue
        if isinstance(v, float) and not math.isfinite(v):
            raise ConfigError(f"{key or where}: {v} is not a finite number")
        if isinstance(v, int) and not _INT_MIN <= v <= _INT_MAX:
            # str() of an int of thousands of digits raises (Python's
            # int_max_str_digits).
            shown = (
                _clip(str(v), 40) if v.bit_length() < 1000 else f"a {v.bit_length()}-bit integer"
            )
            raise ConfigError(
                f"{key or where}: {shown} is out of range; integers are from "
                f"{_INT_MIN} to {_INT_MAX}"
            )
        items: Iterable[tuple[str, object]] = ()
        if isinstance(v, Mapping):
            items = ((f"{key}.{k}" if key else str(k), x) for k, x in v.items())
        elif isinstance(v, (list, tuple)):
            items = ((f"{key}[{i}]", x) for i, x in enumerate(v))
        else:
            continue
        if depth >= MAX_DEPTH:
            raise ConfigError(
                f"{_clip(key, 80) or where}: nested more than {MAX_DEPTH} tables or arrays "
                "deep; no config key takes that"
            )
        stack.extend((k, x, depth + 1) for k, x in reversed(list(items)))


def _clip(s: str, n: int) -> str:
    return s if len(s) <= n else f"{s[:n]}... ({len(s)} characters)"


_SEGMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*|\[[0-9]+\])")


def parse_path(path: str) -> list[str | int]:
    """Splits a key path into names and list indexes. An index is written
    ``[1]`` or, as the results' columns name it, as a part of its own.

    >>> parse_path("tier[1].policy.type"), parse_path("tier.1.policy.type")
    (['tier', 1, 'policy', 'type'], ['tier', 1, 'policy', 'type'])
    """
    out: list[str | int] = []
    for part in path.split("."):
        if not part:
            raise ValueError(f"{path!r}: empty segment")
        if part.isascii() and part.isdigit() and out:
            out.append(int(part))
            continue
        pos = 0
        while pos < len(part):
            m = _SEGMENT.match(part, pos)
            if m is None or (m.group(0).startswith("[") and pos == 0):
                raise ValueError(f"{path!r}: cannot read {part[pos:]!r}")
            tok = m.group(0)
            out.append(int(tok[1:-1]) if tok.startswith("[") else tok)
            pos = m.end()
    return out


def column_name(path: str) -> str:
    """The results' column of a config key path: one naming for every
    column, dotted, an index a part of its own (``tier[0].capacity`` ->
    ``tier.0.capacity``, as a kept metric is ``tiers.0.hits``). A path
    that does not parse is its own name.

    >>> column_name("tier[0].capacity"), column_name("workload.alpha")
    ('tier.0.capacity', 'workload.alpha')
    """
    try:
        return ".".join(str(s) for s in parse_path(path))
    except ValueError:
        return path


def set_path(cfg: dict[str, Any], path: str, value: Any, where: str) -> None:
    """Sets ``path`` in ``cfg``; tables on the way are created, lists must
    already hold the index (a config's ``[[tier]]`` list is not grown)."""
    try:
        segs = parse_path(path)
    except ValueError as e:
        raise ConfigError(
            f"{where}: {e}; expected a key path such as tier[0].capacity or workload.alpha"
        ) from None
    node: Any = cfg
    walked = ""
    for i, seg in enumerate(segs):
        last = i == len(segs) - 1
        if isinstance(seg, int) and isinstance(node, dict):
            seg = str(seg)  # a table's key that is all digits (`techs.0`)
        if isinstance(seg, int):
            if not isinstance(node, list):
                raise ConfigError(f"{where}: {walked} is not a list in the base config")
            if seg >= len(node):
                raise ConfigError(
                    f"{where}: {walked}[{seg}]: the base config has {len(node)} "
                    f"entr{'y' if len(node) == 1 else 'ies'} in {walked}"
                )
            walked += f"[{seg}]"
            if last:
                node[seg] = copy.deepcopy(value)
            else:
                node = node[seg]
            continue
        if not isinstance(node, dict):
            raise ConfigError(
                f"{where}: {walked} is {json.dumps(node)} in the base config, not a table"
            )
        walked = f"{walked}.{seg}" if walked else seg
        if last:
            node[seg] = copy.deepcopy(value)
        else:
            nxt = segs[i + 1]
            if seg not in node:
                if isinstance(nxt, int):
                    raise ConfigError(f"{where}: {walked}: not in the base config")
                node[seg] = {}
            node = node[seg]
