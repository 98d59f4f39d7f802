"""tierlab's exceptions: one hierarchy, raised by the engine and the Python layer alike.

``TierlabError`` is the base; ``ConfigError`` names a config key path,
``TraceError`` a trace file and the place in it, ``StoreError`` a results
store that cannot be read or written, ``ModelError`` an analytic model's
parameter outside its domain. The CLI turns any of them into one
line on stderr and exit code 2.
"""

from tierlab._core import ConfigError, TierlabError, TraceError


class StoreError(TierlabError):
    """A results store (SQLite) that is missing, not tierlab's, or of another schema."""


class ModelError(TierlabError):
    """An analytic model (``tierlab.models``) given a parameter outside its domain."""


class ShardsWarning(UserWarning):
    """A SHARDS curve left out the sizes its sample is too small for (fewer
    than 50 sampled objects fit in them); the exact curve has them."""


__all__ = ["TierlabError", "ConfigError", "TraceError", "StoreError", "ModelError", "ShardsWarning"]
