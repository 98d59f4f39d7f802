"""Type stubs for the compiled engine module (crates/tierlab-py)."""

from collections.abc import Callable
from os import PathLike

__version__: str
#: The syscalls `tierlab capture files` traces (the strace reader's input).
STRACE_SYSCALLS: str
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
def config_schema_error(config_json: str) -> tuple[str, str] | None: ...
def workload_error(config_json: str) -> tuple[str, str] | None: ...
def trace_stats(
    config_json: str, progress: Callable[[int, int | None], object] | None = None
) -> str: ...
def trace_convert(
    config_json: str,
    out_path: str | PathLike[str],
    csv: bool = False,
    progress: Callable[[int, int | None], object] | None = None,
) -> str: ...
def mrc(
    config_json: str,
    sizes: list[str] | None = None,
    shards_rate: float | None = None,
    shards_size: int | None = None,
    policy_json: str | None = None,
    hierarchy_json: str | None = None,
    progress: Callable[[int, int | None], object] | None = None,
) -> tuple[list[int], list[float], int, str]: ...
def mrc_method(
    sizes: list[str] | None = None,
    shards_rate: float | None = None,
    shards_size: int | None = None,
    policy_json: str | None = None,
    hierarchy_json: str | None = None,
) -> str: ...
