"""Every file toollint writes is written whole or not at all.

The new content goes to a temporary file in the target's own folder (so the final step is a
rename within one file system), is flushed to disk, gets the permission bits of the file it
replaces, and is renamed over the target with `os.replace`, which is atomic on POSIX and Windows.
A run killed at any point (`kill -9` included) leaves the old file or the new one, never a
truncated mix, and two runs writing the same report leave one run's report, never both mixed.
A symlinked target keeps its link: the file it points to is replaced.

A run killed between creating and renaming the temporary file leaves it behind, named
`.NAME.XXXXXXXX.toollint-tmp` (not `.py`, so no walk lints it).

Only a regular file (or nothing) is replaced: a device, a FIFO, a directory or a socket at the
target is refused with `NotAFileError` (an `OSError` whose `strerror` says what it is), so `-o` never
puts a file where `/dev/null` was. The paths of streams the process already has open (`/dev/stdout`,
`/dev/stderr`, `/dev/fd/N`, `/proc/self/fd/N`) and `/dev/null` are written directly, at the stream's
own position: `toollint check -o /dev/stdout >> log` appends to `log`.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import re
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from toollint.regular import describe_mode

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


# --- targets that are not regular files --------------------------------------------------------

_STREAMS = {"/dev/stdout": 1, "/dev/stderr": 2}
_FD_PATH = re.compile(r"/(?:dev|proc/self)/fd/(\d+)")
_DISCARD = "/dev/null"


class NotAFileError(OSError):
    """The target exists and is not a regular file: it is not replaced."""


def stream_path(path: str | Path) -> bool:
    """Whether `path` names an open stream of this process or /dev/null: written directly."""
    text = os.fspath(path)
    return text in _STREAMS or text == _DISCARD or _FD_PATH.fullmatch(text) is not None


def check_target(path: str | Path) -> None:
    """Raise `NotAFileError` when `path` exists and is neither a regular file nor a stream path (a
    dangling symlink or a missing file is fine: the write creates it)."""
    if stream_path(path):
        return
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return  # absent, or a problem the write itself reports
    if not stat.S_ISREG(mode):
        raise NotAFileError(
            errno.EEXIST,
            f"it is {describe_mode(mode)}, not a regular file; toollint writes only "
            "regular files (or /dev/stdout, /dev/stderr, /dev/null)",
            os.fspath(path),
        )


@contextlib.contextmanager
def _direct(path: str | Path) -> Iterator[io.BufferedWriter]:
    """The stream `path` names, written where it stands (no truncation, no rename)."""
    text = os.fspath(path)
    for stream in (sys.stdout, sys.stderr):  # what this process wrote before goes first
        with contextlib.suppress(Exception):
            stream.flush()
    match = _FD_PATH.fullmatch(text)
    fd = os.dup(_STREAMS.get(text, int(match.group(1)) if match else -1)) if text != _DISCARD \
        else os.open(text, os.O_WRONLY)
    with os.fdopen(fd, "wb") as stream:
        yield stream


@contextlib.contextmanager
def atomic_binary(path: str | Path) -> Iterator[io.BufferedWriter]:
    """A binary stream whose content replaces `path` when the block ends without an exception
    (and is thrown away when it raises). Stream paths are written directly; a target that is not
    a regular file raises `NotAFileError` before anything is written."""
    if stream_path(path):
        with _direct(path) as direct:
            yield direct
        return
    check_target(path)
    target = _target(path)
    directory = target.parent if str(target.parent) else Path(".")
    try:  # `-o reports/x.sarif` into a new folder, as --report does
        directory.mkdir(parents=True, exist_ok=True)
    except FileExistsError:  # a file where a folder of the path should be
        raise NotADirectoryError(errno.ENOTDIR, f"{directory} is not a directory") from None
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
