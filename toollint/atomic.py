"""Every file toollint writes is written whole or not at all.

The new content goes to a temporary file in the target's own folder (so the final step is a
rename within one file system), is flushed to disk, gets the permission bits of the file it
replaces, and is renamed over the target with `os.replace`, which is atomic on POSIX and Windows.
A run killed at any point (`kill -9` included) leaves the old file or the new one, never a
truncated mix, and two runs writing the same report leave one run's report, never both mixed.
A symlinked target keeps its link: the file it points to is replaced.

A run killed between creating and renaming the temporary file leaves it behind, named
`.NAME.XXXXXXXX.toollint-tmp` (not `.py`, so no walk lints it).
"""

from __future__ import annotations

import contextlib
import io
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

TEMP_SUFFIX = ".toollint-tmp"


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_NEW_FILE_MODE = 0o666 & ~_umask()


def _target(path: str | Path) -> Path:
    target = Path(path)
    return Path(os.path.realpath(target)) if target.is_symlink() else target


def _fsync_directory(directory: Path) -> None:
    if os.name != "posix":
        return
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


@contextlib.contextmanager
def atomic_binary(path: str | Path) -> Iterator[io.BufferedWriter]:
    """A binary stream whose content replaces `path` when the block ends without an exception
    (and is thrown away when it raises)."""
    target = _target(path)
    directory = target.parent if str(target.parent) else Path(".")
    import tempfile  # here: it imports shutil, lzma and bz2, which a run that writes no file never needs

    fd, temp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=TEMP_SUFFIX, dir=directory)
    temp = Path(temp_name)
    try:
        with os.fdopen(fd, "wb") as stream:
            yield stream
            stream.flush()
            os.fsync(stream.fileno())
        try:
            mode = stat.S_IMODE(os.stat(target).st_mode)
        except FileNotFoundError:
            mode = _NEW_FILE_MODE
        os.chmod(temp, mode)
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            temp.unlink()
        raise
    _fsync_directory(directory)


@contextlib.contextmanager
def atomic_text(path: str | Path, encoding: str = "utf-8", errors: str = "strict") -> Iterator[TextIO]:
    """`atomic_binary` as a text stream. `errors="backslashreplace"` makes any text writable: for
    JSON, a lone surrogate (an undecodable file-name byte) then becomes the escape `\\udcff`, which
    reads back as the same string."""
    with atomic_binary(path) as raw:
        stream = io.TextIOWrapper(raw, encoding=encoding, errors=errors, newline="")
        try:
            yield stream
            stream.flush()
        finally:
            stream.detach()  # the binary stream is closed by atomic_binary


def write_bytes(path: str | Path, data: bytes) -> None:
    """Replace `path` with `data`, atomically."""
    with atomic_binary(path) as stream:
        stream.write(data)


def write_text(path: str | Path, text: str, encoding: str = "utf-8", errors: str = "strict") -> None:
    """Replace `path` with `text`, atomically (encoded before anything is written, so an encoding
    error leaves the old file untouched)."""
    write_bytes(path, text.encode(encoding, errors))
