"""toollint's own child processes (the lint pool's workers) must not outlive it.

A pool worker blocks reading its task queue; it holds that queue's write end too, so when toollint
is killed (`kill -9`, the OOM killer) the worker never sees end of file and sleeps forever. On Linux
the kernel can signal it instead: `PR_SET_PDEATHSIG`. (The benchmark hosts have their own, stricter
handling in `dynamic/host/proctree.py`, which must stay importable without toollint.)
"""

from __future__ import annotations

import os
import signal
import sys

PR_SET_PDEATHSIG = 1


def die_with_parent(parent_pid: int) -> None:
    """Have the kernel SIGKILL this process when `parent_pid` (the process that started it) ends."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent_pid:  # the parent died before the request took effect
        os._exit(1)
