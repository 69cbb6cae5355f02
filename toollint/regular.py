"""Reading what must be a regular file: a FIFO, a device or a directory where toollint expects a
source file, a configuration or a baseline is refused at once, never read until it ends (a FIFO
without a writer blocks forever, `/dev/zero` never ends).

The file is opened without blocking (opening a FIFO for reading otherwise waits for a writer),
checked with `fstat` on the very descriptor that is then read, so a path swapped for a FIFO between
a check and the read cannot slip through.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
)


class UnreadableInput(OSError):
    """A file toollint will not read: not a regular file, or larger than the reader's limit. Its
    `str()` says which in words for the user; `strerror` says it without the path."""

    def __str__(self) -> str:
        return f"{self.filename} is {self.strerror}"


class NotRegularFileError(UnreadableInput):
    """The path names something other than a regular file; `strerror` says what."""


class TooLargeError(UnreadableInput):
    """The file is larger than the reader's limit; `size` says how large (at least)."""

    def __init__(self, path: str | Path, size: int, limit: int) -> None:
        super().__init__(errno.EFBIG, f"larger than {_size_text(limit)}", os.fspath(path))
        self.size = size


def _size_text(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 1_000_000 else f"{n} bytes"


def describe_mode(mode: int) -> str:
    """"a FIFO (named pipe)", "a character device", ... for a mode that is not a regular file's."""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def not_regular(path: str | Path, mode: int) -> NotRegularFileError:
    return NotRegularFileError(errno.EINVAL, f"{describe_mode(mode)}, not a regular file", os.fspath(path))


def read_regular(path: str | Path, max_bytes: int | None = None) -> bytes:
    """The bytes of a regular file; `NotRegularFileError` for anything else, and `TooLargeError` for
    a file over `max_bytes`. Read to `max_bytes + 1` bytes at most, whatever `fstat` said: a file
    may grow between the check and the read."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
                 | getattr(os, "O_NOCTTY", 0))
    with open(fd, "rb", closefd=True) as stream:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise not_regular(path, info.st_mode)
        if max_bytes is None:
            return stream.read()
        if info.st_size > max_bytes:
            raise TooLargeError(path, info.st_size, max_bytes)
        data = stream.read(max_bytes + 1)
        if len(data) > max_bytes:
            raise TooLargeError(path, len(data), max_bytes)
        return data
