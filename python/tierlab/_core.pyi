"""Type stubs for the compiled engine module (crates/tierlab-py)."""

from collections.abc import Callable
from os import PathLike

__version__: str
CSV_HEADER: str

class TierlabError(Exception): ...
class ConfigError(TierlabError): ...
class TraceError(TierlabError): ...

def simulate(
    config_json: str,
    progress: Callable[[int, int | None], object] | None = None,
    chunk: int = 1_000_000,
) -> str: ...
def techs() -> str: ...
def trace_stats(
    config_json: str, progress: Callable[[int, int | None], object] | None = None
) -> str: ...
def trace_convert(
    config_json: str,
    out_path: str | PathLike[str],
    progress: Callable[[int, int | None], object] | None = None,
) -> str: ...
def trace_write_csv(
    config_json: str,
    out_path: str | PathLike[str],
    progress: Callable[[int, int | None], object] | None = None,
) -> str: ...
