"""Writing an output file whole or not at all: the one way every writer of
the package writes (a timeline, a curve's CSV and plot, an export, a
report's pages and figures).

The bytes go to a hidden file beside the output, are flushed to the disk
(fsync), and the file is renamed over the output: a full disk, a kill or
an error midway leaves the output as it was, never truncated, and removes
the partial file. An error names the output, not the hidden file. As the
engine's trace writer does (``trace/output.rs``), a symbolic link is
written through, an existing file's permissions are kept, and a path that
is not a regular file (``/dev/stdout``, a FIFO) is written directly.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yields a path to write the whole output to (for writers that take a
    path: matplotlib's ``savefig``, pandas' ``to_parquet``); on leaving the
    block without an error it is synced and renamed over ``path``."""
    target = Path(os.path.realpath(path)) if os.path.islink(path) else Path(path)
    try:
        st = os.stat(target)
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise _named(e, path) from None
    if st is not None and not stat.S_ISREG(st.st_mode):
        yield target  # a device or a FIFO: no file to replace
        return
    tmp = _new_beside(target)
    try:
        yield tmp
        if st is not None:
            os.chmod(tmp, stat.S_IMODE(st.st_mode))
        _sync(tmp)
        os.replace(tmp, target)
        _sync_dir(target.parent)
    except OSError as e:
        raise _named(e, path) from None
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)


@contextlib.contextmanager
def atomic_write(
    path: str | os.PathLike[str],
    mode: str = "w",
    *,
    encoding: str | None = None,
    newline: str | None = None,
) -> Iterator[IO[Any]]:
    """``open(path, mode)`` for writing, whole or not at all."""
    if encoding is None and "b" not in mode:
        encoding = "utf-8"
    with atomic_path(path) as tmp:
        try:
            with open(tmp, mode, encoding=encoding, newline=newline) as f:
                yield f
        except OSError as e:
            raise _named(e, path) from None


def _new_beside(target: Path) -> Path:
    folder = target.parent
    for n in range(100):
        p = folder / f".{target.name}.tierlab-{os.getpid()}-{n}.part"
        try:
            os.close(os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
            return p
        except FileExistsError:
            continue
        except OSError as e:
            raise _named(e, target) from None
    raise OSError(f"cannot create a file beside {target}")


def _sync(p: Path) -> None:
    fd = os.open(p, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _sync_dir(folder: Path) -> None:
    # The rename itself, made durable; a file system that cannot sync a
    # folder (some network ones) still renamed it.
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _named(e: OSError, path: str | os.PathLike[str]) -> OSError:
    """The error, naming the output (the CLI prints ``FILE: reason``)."""
    return OSError(e.errno, e.strerror or str(e), os.fspath(path))
