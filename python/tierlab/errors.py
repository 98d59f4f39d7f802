"""tierlab's exceptions: one hierarchy, raised by the engine and the Python layer alike.

``TierlabError`` is the base; ``ConfigError`` names a config key path
(``.key``), ``TraceError`` a trace file and the place in it, ``StoreError``
a results store that cannot be read or written, ``ModelError`` an analytic
model's parameter outside its domain. The CLI turns any of them into one
line on stderr and exit code 2.

They are also the built-in exceptions a Python user catches: a
``ConfigError``, ``TraceError`` or ``ModelError`` is a ``ValueError``; a
trace file that does not exist raises ``TraceNotFoundError``, a
``TraceError`` and a ``FileNotFoundError`` (``.filename``). The engine
(``tierlab._core``) raises these classes; this module imports nothing of it.
"""

from __future__ import annotations

import re

#: A message's leading key path: ``tier[0].capacity: ...``, ``vm.tlb.entries: ...``.
_KEY = re.compile(r"^([A-Za-z_][\w-]*(?:\[\d+\])?(?:\.[\w-]+(?:\[\d+\])?)*): ")


class TierlabError(Exception):
    """Base class of tierlab's errors."""


class ConfigError(TierlabError, ValueError):
    """A config (or an argument) is invalid. ``key`` is the key path the
    message names (``"tier[0].capacity"``), or None when it names none."""

    def __init__(self, message: str = "", key: str | None = None) -> None:
        super().__init__(message)
        if key is None and (m := _KEY.match(message)):
            key = m.group(1)
        self.key: str | None = key


class TraceError(TierlabError, ValueError):
    """A trace cannot be read: the message names the file and the place
    (byte offset or line)."""

    def __init__(self, message: str = "", file: str | None = None) -> None:
        super().__init__(message)
        self.file = file


class TraceNotFoundError(TraceError, FileNotFoundError):
    """A trace file that does not exist: ``except FileNotFoundError``
    catches it too. ``filename`` is the file."""

    def __new__(cls, message: str = "", file: str | None = None) -> TraceNotFoundError:
        # OSError's constructor reads two arguments as (errno, strerror).
        return FileNotFoundError.__new__(cls, message)

    def __init__(self, message: str = "", file: str | None = None) -> None:
        TraceError.__init__(self, message, file)
        self.filename = file

    def __str__(self) -> str:
        # The engine's message names the file already; OSError's own form
        # ("[Errno ...] ...: 'file'") would say it twice.
        return str(self.args[0]) if self.args else ""


class StoreError(TierlabError):
    """A results store (SQLite) that is missing, not tierlab's, or of another schema."""


class ModelError(TierlabError, ValueError):
    """An analytic model (``tierlab.models``) given a parameter outside its domain."""


class ShardsWarning(UserWarning):
    """A SHARDS curve left out the sizes its sample is too small for (fewer
    than 50 sampled objects fit in them); the exact curve has them."""


__all__ = [
    "TierlabError",
    "ConfigError",
    "TraceError",
    "TraceNotFoundError",
    "StoreError",
    "ModelError",
    "ShardsWarning",
]
