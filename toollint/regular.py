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

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"))


class NotRegularFileError(OSError):
    """The path names something other than a regular file; `strerror` says what."""


class TooLargeError(OSError):
    """The file is larger than the reader's limit; `size` says how large."""

    def __init__(self, path: str | Path, size: int, limit: int) -> None:
        super().__init__(errno.EFBIG, f"{size / 1e6:.1f} MB, over the {limit / 1e6:.1f} MB limit", os.fspath(path))
        self.size = size


def describe_mode(mode: int) -> str:
    """"a FIFO (named pipe)", "a character device", ... for a mode that is not a regular file's."""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def not_regular(path: str | Path, mode: int) -> NotRegularFileError:
    return NotRegularFileError(errno.EINVAL, f"{describe_mode(mode)}, not a regular file", os.fspath(path))


def read_regular(path: str | Path, max_bytes: int | None = None) -> bytes:
    """The bytes of a regular file; `NotRegularFileError` (an OSError) for anything else, and
    `TooLargeError` for a file over `max_bytes` (nothing is read)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    with open(fd, "rb", closefd=True) as stream:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise not_regular(path, mode)
        size = os.fstat(fd).st_size
        if max_bytes is not None and size > max_bytes:
            raise TooLargeError(path, size, max_bytes)
        return stream.read()
