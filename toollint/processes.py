"""toollint's own child processes (the lint pool's workers) must not outlive it, and no file makes
a lint process take the machine's memory (`memory_ceiling`).

A pool worker blocks reading its task queue; it holds that queue's write end too, so when toollint
is killed (`kill -9`, the OOM killer) the worker never sees end of file and sleeps forever. On Linux
the kernel can signal it instead: `PR_SET_PDEATHSIG`. (The benchmark hosts have their own, stricter
handling in `dynamic/host/proctree.py`, which must stay importable without toollint.)
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator

PR_SET_PDEATHSIG = 1


def die_with_parent(parent_pid: int) -> None:
    """Have the kernel SIGKILL this process when `parent_pid` (the process that started it) ends."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes
        import signal  # here: the signal module costs every run that starts no worker 1% of a cache hit

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent_pid:  # the parent died before the request took effect
        os._exit(1)


def _address_space() -> int | None:
    """This process's virtual size in bytes (Linux), or None."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


@contextlib.contextmanager
def memory_ceiling(budget: int) -> Iterator[None]:
    """For the block, allocations past this process's current size plus `budget` bytes fail with
    MemoryError instead of taking the machine (RLIMIT_AS, lowered and then restored; the soft limit
    may be raised back to the hard one). Does nothing where it cannot be set."""
    try:
        import resource
    except ImportError:  # not POSIX
        yield
        return
    current = _address_space()
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = None if current is None else current + budget
    if limit is not None and hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    if limit is None or (soft != resource.RLIM_INFINITY and soft <= limit):
        yield  # unknown size, or already capped tighter
        return
    try:
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (ValueError, OSError):
        yield
        return
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
