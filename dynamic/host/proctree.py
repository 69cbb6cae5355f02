"""Finding and killing the processes a benchmark host started, so none outlives toollint.

Stdlib only, Python 3.9+: used by toollint (`protocol.py`) and inside the benchmark's interpreter by
the host (`host.py`, loaded by file). Linux reads `/proc`; elsewhere only the process group is
killed (the helpers return nothing).

Three nets, because a benchmark's process can leave each of them:

- the process group (the host runs in a session of its own): a plain `Popen` child, an `os.fork()`
  copy of the host;
- the descendant tree of a live host, which is a child subreaper (`PR_SET_CHILD_SUBREAPER`): a child
  that left the group (`start_new_session`, `setsid`) and whose parent exited is re-parented to the
  host, not to init, so it stays in the tree;
- a token in the environment (`TOOLLINT_HOST_TOKEN`), inherited by every descendant: it finds them
  after the host itself died abruptly (the tree is gone then, its orphans went to init).
"""

from __future__ import annotations

import os
import signal
import sys

TOKEN_VAR = "TOOLLINT_HOST_TOKEN"
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
PROC = "/proc"


def _parents() -> dict[int, int]:
    """pid -> parent pid of every process we can see (empty off Linux)."""
    out: dict[int, int] = {}
    try:
        names = os.listdir(PROC)
    except OSError:
        return out
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"{PROC}/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue  # exited meanwhile
        # `pid (comm) state ppid ...`; comm may hold spaces and parentheses, so split after the last ')'.
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) > 1:
            out[int(name)] = int(fields[1])
    return out


def descendants(pid: int) -> list[int]:
    """Every live descendant of `pid` (children first), from one walk of /proc."""
    children: dict[int, list[int]] = {}
    for child, parent in _parents().items():
        children.setdefault(parent, []).append(child)
    out: list[int] = []
    todo = list(children.get(pid, []))
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def with_token(token: str) -> list[int]:
    """Processes whose environment carries `TOOLLINT_HOST_TOKEN=token` (ours only: others' environ
    cannot be read)."""
    needle = f"{TOKEN_VAR}={token}".encode()
    out: list[int] = []
    me = os.getpid()
    try:
        names = os.listdir(PROC)
    except OSError:
        return out
    for name in names:
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open(f"{PROC}/{name}/environ", "rb") as f:
                env = f.read()
        except OSError:
            continue
        if needle in env.split(b"\0"):
            out.append(int(name))
    return out


def _signal(pids: list[int], sig: int) -> None:
    for p in pids:
        try:
            os.kill(p, sig)
        except (ProcessLookupError, PermissionError):
            pass


def kill_tree(root: int, token: str | None = None, include_root: bool = True) -> list[int]:
    """SIGKILL `root` (unless `include_root` is false), its descendants and the token's processes.

    The tree is first frozen with SIGSTOP, walked again until no new process appears (a process
    forking while we look), then killed, so nothing escapes between the walk and the kill.
    Returns the pids signalled (not counting the root).
    """
    stopped: set[int] = set()
    for _ in range(20):  # a fork bomb could add processes forever; twenty rounds is plenty otherwise
        found = set(descendants(root))
        if token:
            found.update(with_token(token))
        found.discard(os.getpid())
        found.discard(root)
        new = found - stopped
        if not new:
            break
        _signal(sorted(new), signal.SIGSTOP)
        stopped |= new
    victims = sorted(stopped)
    if include_root:
        _signal([root], signal.SIGKILL)
    _signal(victims, signal.SIGKILL)
    return victims


def kill_token(token: str) -> list[int]:
    """SIGKILL the processes carrying `token` (those of a host that is gone)."""
    victims = [p for p in with_token(token) if p != os.getpid()]
    _signal(victims, signal.SIGSTOP)
    victims = sorted(set(victims) | set(with_token(token)) - {os.getpid()})
    _signal(victims, signal.SIGKILL)
    return victims


def prctl(option: int, value: int) -> bool:
    """`prctl(option, value)` on Linux through libc; False elsewhere or when it fails."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(option, value, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False
