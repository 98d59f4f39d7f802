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
        return copy.deepcopy(dict(source)), None
    if isinstance(source, os.PathLike) or (isinstance(source, str) and _looks_like_path(source)):
        path = Path(source)
        try:
            text = path.read_text(encoding="utf-8")
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


def _parse(text: str, where: str) -> Config:
    # Imported here: tomllib (and the datetime it pulls) costs ~7 ms, and
    # `tierlab mrc TRACE` reads no TOML.
    import tomllib

    try:
        return dict(tomllib.loads(text))
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{where}: invalid TOML: {e}") from None


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
    try:
        return json.dumps(cfg, allow_nan=False)
    except TypeError as e:
        raise ConfigError(f"config: a value cannot be used: {e}") from None
    except ValueError:
        # TOML has nan and inf; JSON does not (the engine would say only
        # "expected value"): name the key.
        key, v = _non_finite(cfg, "")
        raise ConfigError(f"{key}: {v} is not a finite number") from None


def _non_finite(v: object, key: str) -> tuple[str, float]:
    """The first nan or infinity in a config, as (key path, value)."""
    if isinstance(v, float) and not math.isfinite(v):
        return key, v
    items: Iterable[tuple[str, object]] = ()
    if isinstance(v, Mapping):
        items = ((f"{key}.{k}" if key else str(k), x) for k, x in v.items())
    elif isinstance(v, (list, tuple)):
        items = ((f"{key}[{i}]", x) for i, x in enumerate(v))
    for k, x in items:
        found = _non_finite(x, k)
        if found[0]:
            return found
    return "", 0.0


_SEGMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*|\[[0-9]+\])")


def parse_path(path: str) -> list[str | int]:
    """Splits a key path into names and list indexes.

    >>> parse_path("tier[1].policy.type")
    ['tier', 1, 'policy', 'type']
    """
    out: list[str | int] = []
    for part in path.split("."):
        if not part:
            raise ValueError(f"{path!r}: empty segment")
        pos = 0
        while pos < len(part):
            m = _SEGMENT.match(part, pos)
            if m is None or (m.group(0).startswith("[") and pos == 0):
                raise ValueError(f"{path!r}: cannot read {part[pos:]!r}")
            tok = m.group(0)
            out.append(int(tok[1:-1]) if tok.startswith("[") else tok)
            pos = m.end()
    return out


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
