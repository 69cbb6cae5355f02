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


WATCH_INTERVAL = 0.2  # seconds between looks at the host and at the protocol pipe
KILL_GRACE = 2.0  # seconds the host gets to clean up after SIGTERM before everything is SIGKILLed


def start_watchdog(protocol_fd: int, token: str | None, grace: float = KILL_GRACE) -> int | None:
    """Fork a small process that kills this host and all it started when toollint is gone.

    toollint holds the only write end of the host's request pipe (`protocol_fd`), so that pipe
    hangs up when toollint exits by any path, `kill -9` included. The host's own SIGTERM handler
    cannot be relied on then: the benchmark may ignore SIGTERM, or be busy in C code that never
    returns to run a handler. The watchdog waits for the hang-up (`poll` reports it whatever data is
    still unread, and never reads), sends SIGTERM, and after `grace` seconds SIGKILLs the host's
    tree, its token's processes and its process group. It leaves when the host is gone. Returns its
    pid in the host, None where it cannot run (no fork or poll)."""
    import select

    if not hasattr(os, "fork") or not hasattr(select, "poll"):
        return None
    host = os.getpid()
    pid = os.fork()
    if pid:
        return pid
    try:  # the watchdog: os-level calls only, and it never returns into the host's code
        devnull = os.open(os.devnull, os.O_RDWR)
        os.dup2(devnull, 1)  # must not hold the reply pipe: the host's death must read as EOF
        # A group of its own: a benchmark that kills its own group does not take the watchdog with it,
        # and the host's group is gone as soon as the host is (the tree walk and the token find this one).
        os.setpgid(0, 0)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        poller = select.poll()
        poller.register(protocol_fd, 0)  # hang-up and errors only: data waiting is the host's
        while os.getppid() == host:
            if poller.poll(int(WATCH_INTERVAL * 1000)):
                _end_host(host, token, grace)
                break
    finally:
        os._exit(0)


def _end_host(host: int, token: str | None, grace: float) -> None:
    """SIGTERM the host (its handler kills what the benchmark started), then SIGKILL all that is left."""
    import time

    try:
        group = os.getpgid(host)
        os.kill(host, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        group = 0
    end = time.monotonic() + grace
    while time.monotonic() < end and os.getppid() == host:
        time.sleep(0.05)
    kill_tree(host, token)
    if group > 1:
        try:
            os.killpg(group, signal.SIGKILL)  # the host's group (the watchdog has its own)
        except (ProcessLookupError, PermissionError):
            pass
