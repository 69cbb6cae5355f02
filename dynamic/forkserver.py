"""Warm hosts: start a benchmark's host by forking a pre-imported interpreter (`zygote.py`), not by
starting the interpreter and importing the benchmark again.

The dynamic half starts a host for every mutant, every constructed path's arm, every re-run; each
start costs the interpreter and the benchmark's import (seconds, when the benchmark pulls in LLM client
libraries). `warm_hosts()` makes every `Worker` started inside it (the
ones the checker makes too) fork from a zygote instead, when the zygote can stand in for a fresh
interpreter:

- one zygote per host spec (interpreter, adapter, options, environment; an overlay of the benchmark
  is a `PYTHONPATH` entry, so one per overlay; the last `MAX_ZYGOTES` are kept), started the first
  time such a host is wanted: it starts the adapter once as a host would, importing the benchmark
  (the overlay's copy) in the benchmark's own order, and drops it; a fork re-imports the modules
  whose file changed since (the mutant written into the overlay) and those importing them, in the
  order the zygote first imported them (failing that, it drops their packages for the host to
  import itself), and keeps the rest warm;
- a forked host runs `host.py` exactly as a started one does (its options, seed, memory cap, shims),
  on pipes this process holds; to the `Worker` it is a process like any other (`ForkedHost` has the
  `Popen` surface it uses), killed with its process group on a timeout;
- nothing outlives toollint: the zygote dies with this process and takes its forks with it
  (`zygote.py`); `warm_hosts()` shuts every zygote down on the way out, and an `atexit` hook kills
  what is left.

A spec the zygote cannot serve (another interpreter, a zygote that failed to start, one with threads
running) starts cold, as without `warm_hosts()`: the fork server only ever saves time.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from toollint.dynamic.host import proctree
from toollint.dynamic.protocol import WorkerSpec, adapter_argument, register_launcher, unregister_launcher

ZYGOTE_PATH = Path(__file__).parent / "host" / "zygote.py"
ZYGOTE_DEADLINE = 300.0  # starting the zygote: the cold probe and the preload (minutes on 2 busy cores)
CONTROL_DEADLINE = 30.0
MAX_ZYGOTES = 3  # warm interpreters alive at once (each holds the benchmark: hundreds of MiB)


class ForkServerError(RuntimeError):
    """A zygote that cannot start or answer; the message is one line."""


@dataclass
class Stats:
    zygotes: int = 0
    forks: int = 0
    cold: int = 0  # hosts started cold inside warm_hosts()
    zygote_start_s: float = 0.0
    fallbacks: list[str] = field(default_factory=list)  # why a host started cold


class Zygote:
    """One warm interpreter of a benchmark's, serving forks over a control socket."""

    def __init__(self, spec: WorkerSpec, log_path: Path | None = None) -> None:
        self.spec = spec
        self.python = spec.python
        self.env = dict(spec.env)
        self.log_path = log_path
        self.lock = threading.Lock()
        self.proc: subprocess.Popen[bytes] | None = None
        self.control: socket.socket | None = None
        self.buf = b""
        self.token = secrets.token_hex(12)
        self.info: dict[str, Any] = {}
        self.last_used = time.monotonic()
        self.open_forks = 0  # forked hosts not yet reaped: a zygote serving one is not retired

    def start(self) -> None:
        ours, theirs = socket.socketpair()
        env = dict(os.environ)
        env.update(self.env)
        env.update({proctree.TOKEN_VAR: self.token, "TOOLLINT_PARENT_PID": str(os.getpid())})
        log: IO[bytes] | int = subprocess.DEVNULL
        if self.log_path is not None:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            log = open(self.log_path, "ab")  # noqa: SIM115 - handed to the child, closed below
        try:
            self.proc = subprocess.Popen(
                [self.python, str(ZYGOTE_PATH), "--control-fd", str(theirs.fileno()),
                 "--adapter", adapter_argument(self.spec.adapter), "--options", json.dumps(self.spec.options),
                 "--seed", str(self.spec.seed)],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log, pass_fds=[theirs.fileno()],
                start_new_session=True, env=env)
        except OSError as exc:
            raise ForkServerError(f"cannot run {self.python}: {exc.strerror or exc}") from None
        finally:
            theirs.close()
            if not isinstance(log, int):
                log.close()
        self.control = ours
        _ZYGOTES.add(self)
        ready = self._read(ZYGOTE_DEADLINE)
        if not ready.get("ready"):
            self.kill()
            raise ForkServerError(f"the zygote did not start: {ready.get('error') or ready}")
        self.info = ready

    def _read(self, deadline: float) -> dict[str, Any]:
        assert self.control is not None
        self.control.settimeout(deadline)
        try:
            while b"\n" not in self.buf:
                chunk = self.control.recv(1 << 16)
                if not chunk:
                    raise ForkServerError("the zygote exited")
                self.buf += chunk
        except TimeoutError:
            self.kill()
            raise ForkServerError(f"the zygote did not answer within {deadline:g} s") from None
        except OSError as exc:
            raise ForkServerError(f"the zygote's control socket failed: {exc}") from None
        line, _, self.buf = self.buf.partition(b"\n")
        return json.loads(line)  # type: ignore[no-any-return]

    def ask(self, message: dict[str, Any], fds: list[int] = ()) -> dict[str, Any]:  # type: ignore[assignment]
        with self.lock:
            if self.control is None:
                raise ForkServerError("the zygote is gone")
            data = (json.dumps(message) + "\n").encode("utf-8")
            try:
                if fds:
                    socket.send_fds(self.control, [data], list(fds))
                else:
                    self.control.sendall(data)
            except OSError as exc:
                raise ForkServerError(f"the zygote's control socket failed: {exc}") from None
            answer = self._read(CONTROL_DEADLINE)
        if not answer.get("ok"):
            raise ForkServerError(str(answer.get("error") or "the zygote refused"))
        return answer

    def fork(
        self, argv: list[str], env: dict[str, str], cwd: str | None, stderr: IO[bytes] | int
    ) -> ForkedHost:
        to_host_r, to_host_w = os.pipe()
        from_host_r, from_host_w = os.pipe()
        err_path = getattr(stderr, "name", None) if not isinstance(stderr, int) else None
        try:
            answer = self.ask({"op": "fork", "argv": argv, "env": env, "cwd": cwd, "stderr": err_path},
                              [to_host_r, from_host_w])
        except BaseException:
            for fd in (to_host_r, to_host_w, from_host_r, from_host_w):
                os.close(fd)
            raise
        os.close(to_host_r)
        os.close(from_host_w)
        with self.lock:
            self.open_forks += 1
            self.last_used = time.monotonic()
        return ForkedHost(self, int(answer["pid"]), os.fdopen(to_host_w, "wb"), os.fdopen(from_host_r, "rb"))

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None and self.control is not None:
            with contextlib.suppress(ForkServerError):
                self.ask({"op": "shutdown"})
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=10)
        self.kill()

    def kill(self) -> None:
        proc, self.proc = self.proc, None
        _ZYGOTES.discard(self)
        if proc is not None:
            if proc.returncode is None:
                proctree.kill_tree(proc.pid, self.token)
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=10)
        if self.control is not None:
            self.control.close()
            self.control = None


class ForkedHost:
    """A host forked by a zygote, with the surface of `subprocess.Popen` a `Worker` uses. It is the
    zygote's child, not ours: its exit status comes from the zygote, which reaps it only on `wait`."""

    def __init__(self, zygote: Zygote, pid: int, stdin: IO[bytes], stdout: IO[bytes]) -> None:
        self.zygote = zygote
        self.pid = pid
        self.stdin = stdin
        self.stdout = stdout
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is not None:
            return self.returncode
        try:
            code = self.zygote.ask({"op": "status", "pid": self.pid}).get("exit")
        except ForkServerError:
            code = None if _alive(self.pid) else -signal.SIGKILL
        return None if code is None else int(code)

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is not None:  # reaped already
            return self.returncode
        end = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if end is not None and time.monotonic() >= end:
                raise subprocess.TimeoutExpired("forked host", timeout or 0.0)
            time.sleep(0.01)
        try:
            code = self.zygote.ask({"op": "reap", "pid": self.pid}).get("exit")
        except ForkServerError:
            code = -signal.SIGKILL
        self.returncode = int(code) if code is not None else -signal.SIGKILL
        with self.zygote.lock:
            self.zygote.open_forks -= 1
        return self.returncode

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[-1].split()[0] != b"Z"
    except OSError:
        return False


class WarmHosts:
    """The launcher `warm_hosts()` registers: forks hosts of the specs it can serve."""

    def __init__(self, log_dir: Path | None = None, max_zygotes: int = MAX_ZYGOTES) -> None:
        self.log_dir = log_dir
        self.max_zygotes = max(1, max_zygotes)
        self.zygotes: dict[str, Zygote | None] = {}
        self.lock = threading.Lock()
        self.stats = Stats()

    @staticmethod
    def key(spec: WorkerSpec) -> str:
        return json.dumps([spec.python, spec.adapter, spec.options, spec.seed, sorted(spec.env.items())],
                          sort_keys=True, default=str)

    def launch(self, spec: WorkerSpec, cmd: list[str], env: dict[str, str], stderr: IO[bytes] | int) -> Any:
        """A `ForkedHost` for `cmd`, or None to start it cold."""
        zygote = self._zygote(spec)
        if zygote is None:
            self.stats.cold += 1
            return None
        try:
            host = zygote.fork(cmd[2:], env, spec.cwd, stderr)  # cmd: python host.py ARGS...
        except ForkServerError as exc:
            self.stats.fallbacks.append(f"fork failed: {exc}")
            self.stats.cold += 1
            return None
        self.stats.forks += 1
        return host

    def failed(self, spec: WorkerSpec, error: Exception) -> None:
        """A forked host did not start (the Worker starts it cold instead): forking for this spec is
        not to be trusted, so its zygote retires and its hosts start cold from now on."""
        self.stats.fallbacks.append(f"a forked host did not start ({str(error)[:200]}); starting cold")
        key = self.key(spec)
        with self.lock:
            zygote = self.zygotes.get(key)
            self.zygotes[key] = None
        if zygote is not None:
            zygote.close()

    def _zygote(self, spec: WorkerSpec) -> Zygote | None:
        key = self.key(spec)
        with self.lock:
            if key in self.zygotes:
                return self.zygotes[key]
            self.zygotes[key] = None  # while it starts, and for good if it cannot: cold starts
        began = time.perf_counter()
        try:
            zygote = Zygote(spec, self.log_dir / "zygote.log" if self.log_dir else None)
            zygote.start()
        except (ForkServerError, OSError) as exc:
            self.stats.fallbacks.append(f"no zygote for {spec.python}: {exc}")
            return None
        self.stats.zygote_start_s += time.perf_counter() - began
        if zygote.info.get("threads", 1) > 1:
            self.stats.fallbacks.append(f"the zygote runs {zygote.info['threads']} threads after its imports")
            zygote.close()
            return None
        self.stats.zygotes += 1
        with self.lock:
            self.zygotes[key] = zygote
            live = sorted(((z.last_used, k) for k, z in self.zygotes.items() if z is not None and k != key))
            # an overlay per subject: keep the most recently used few warm, not one interpreter per
            # subject; one whose host is still running (another subject's, run at once) stays
            idle = [k for _, k in live if (z := self.zygotes[k]) is not None and not z.open_forks]
            retired = [self.zygotes.pop(k) for k in idle[:max(0, len(live) - (self.max_zygotes - 1))]]
        for old in retired:
            if old is not None:
                old.close()
        return zygote

    def close(self) -> None:
        for zygote in list(self.zygotes.values()):
            if zygote is not None:
                zygote.close()
        self.zygotes.clear()


@contextlib.contextmanager
def warm_hosts(log_dir: Path | None = None, enabled: bool = True,
               max_zygotes: int = MAX_ZYGOTES) -> Iterator[WarmHosts]:
    """Every `Worker` started inside forks from a warm zygote when it can (see the module's doc);
    at most `max_zygotes` warm interpreters are kept (the least recently used idle one goes)."""
    pool = WarmHosts(log_dir, max_zygotes)
    if not enabled or not hasattr(os, "fork") or not hasattr(socket, "send_fds"):
        yield pool
        return
    register_launcher(pool)
    try:
        yield pool
    finally:
        unregister_launcher(pool)
        pool.close()


_ZYGOTES: set[Zygote] = set()


@atexit.register
def _kill_zygotes() -> None:
    for zygote in list(_ZYGOTES):
        zygote.kill()


if sys.platform != "linux":  # pragma: no cover - /proc and prctl are Linux's; elsewhere start cold
    def warm_hosts(log_dir: Path | None = None, enabled: bool = True,  # type: ignore[no-redef]
                   max_zygotes: int = MAX_ZYGOTES) -> Iterator[WarmHosts]:
        return contextlib.nullcontext(WarmHosts(log_dir, max_zygotes))  # type: ignore[return-value]
