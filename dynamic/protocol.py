"""Parent side of the host protocol: start a worker, send requests with a deadline, restart on failure.

A worker is `python host.py --adapter ...` run with the benchmark's interpreter in a new session
(its own process group), so on a timeout or crash the whole group, including anything the benchmark
spawned, is killed. The client then starts a fresh worker and records the restart; it never retries
the failed request itself, the caller decides what the failure means (a verdict, an error).
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:  # typing.Self is 3.11+; typing_extensions is not a runtime dependency
    from typing_extensions import Self

HOST_PATH = Path(__file__).with_name("host.py")
DEFAULT_DEADLINE = 30.0
STARTUP_DEADLINE = 120.0


class WorkerError(Exception):
    """A request that got no normal answer. `kind`: timeout, died, startup, or a host error kind."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass
class WorkerSpec:
    """Everything needed to start an identical worker again (for confirmation and replay)."""

    adapter: str  # agentdojo, toolkit, or a path to an adapter file
    options: dict[str, Any] = field(default_factory=dict)
    python: str = sys.executable
    seed: int = 0
    env: dict[str, str] = field(default_factory=dict)  # extra environment variables
    cwd: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"adapter": self.adapter, "options": self.options, "python": self.python, "seed": self.seed}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> WorkerSpec:
        return cls(str(data["adapter"]), dict(data.get("options") or {}), str(data.get("python") or sys.executable),
                   int(data.get("seed") or 0))


@dataclass
class WorkerEvent:
    """A restart or failure, recorded for the report (never silent)."""

    kind: str
    message: str
    request: str


class Worker:
    """One host process. Use as a context manager, or call `close()`."""

    def __init__(self, spec: WorkerSpec, log_path: Path | None = None, deadline: float = DEFAULT_DEADLINE) -> None:
        self.spec = spec
        self.deadline = deadline
        self.log_path = log_path
        self.events: list[WorkerEvent] = []
        self.hello: dict[str, Any] = {}
        self.starts = 0
        self.startup_s = 0.0  # spent starting hosts (interpreter, benchmark import, hello)
        self._proc: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None
        self._buf = b""
        self._next_id = 0

    # -- lifecycle -------------------------------------------------------------------------------

    def start(self) -> dict[str, Any]:
        """Start the host and return its `hello`; raises WorkerError(kind="startup") with one line."""
        self._kill()
        if self.log_path is not None:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            self._log = open(self.log_path, "ab")  # noqa: SIM115 - lives as long as the worker
        cmd = [self.spec.python, str(HOST_PATH), "--adapter", self.spec.adapter,
               "--options", json.dumps(self.spec.options), "--seed", str(self.spec.seed)]
        env = dict(os.environ)
        env.update(self.spec.env)
        try:
            self._proc = subprocess.Popen(
                cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=self._log if self._log is not None else subprocess.DEVNULL,
                start_new_session=True, cwd=self.spec.cwd, env=env,
            )
        except OSError as exc:
            raise WorkerError("startup", f"cannot run {self.spec.python}: {exc.strerror or exc}") from None
        self.starts += 1
        self._buf = b""
        began = time.perf_counter()
        try:
            ready = self._read(STARTUP_DEADLINE, "startup")
        except WorkerError as exc:
            self._kill()
            where = f"; log: {self.log_path}" if self.log_path is not None else ""
            raise WorkerError("startup", f"host did not start: {exc}{where}") from None
        if not ready.get("ok"):
            err = ready.get("error") or {}
            self._kill()
            raise WorkerError("startup", str(err.get("message") or "host failed to start"))
        self.hello = self.request("hello")
        self.startup_s += time.perf_counter() - began
        return self.hello

    def restart(self, reason: WorkerEvent) -> None:
        self.events.append(reason)
        self.start()

    def close(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            try:
                self._send({"id": -1, "op": "shutdown"})
                self._proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired, WorkerError):
                pass
        self._kill()
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> Self:
        if self._proc is None:
            self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _kill(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # the whole group: the benchmark's children too
            except (ProcessLookupError, PermissionError):
                proc.kill()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass

    # -- requests --------------------------------------------------------------------------------

    def request(self, op: str, deadline: float | None = None, **payload: Any) -> dict[str, Any]:
        """Send one request and wait for its answer.

        On timeout or worker death the process group is killed, a fresh worker is started (recorded
        in `events`) and WorkerError is raised; the request is not retried. A host-reported error
        (`ok: false`) raises WorkerError with the host's kind and keeps the worker.
        """
        if self._proc is None:
            self.start()
        self._next_id += 1
        rid = self._next_id
        try:
            self._send({"id": rid, "op": op, **payload})
            resp = self._read(deadline or self.deadline, op)
        except WorkerError as exc:
            what = f"{op} {payload.get('tool', '')}".strip()
            self._kill()
            event = WorkerEvent(exc.kind, str(exc), what)
            try:
                self.restart(event)
            except WorkerError as again:
                self.events.append(WorkerEvent("startup", str(again), what))
            raise
        if not resp.get("ok"):
            err = resp.get("error") or {}
            raise WorkerError(str(err.get("kind") or "error"), str(err.get("message") or "host error"))
        return resp

    def _send(self, msg: dict[str, Any]) -> None:
        assert self._proc is not None and self._proc.stdin is not None
        try:
            self._proc.stdin.write((json.dumps(msg) + "\n").encode("utf-8"))
            self._proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise WorkerError("died", f"worker exited ({self._exit_text()})") from None

    def _read(self, deadline: float, what: str) -> dict[str, Any]:
        assert self._proc is not None and self._proc.stdout is not None
        stdout = self._proc.stdout
        end = time.monotonic() + deadline
        with selectors.DefaultSelector() as sel:
            sel.register(stdout, selectors.EVENT_READ)
            while b"\n" not in self._buf:
                left = end - time.monotonic()
                if left <= 0 or not sel.select(left):
                    raise WorkerError("timeout", f"{what} did not answer within {deadline:g} s")
                chunk = os.read(stdout.fileno(), 1 << 20)
                if not chunk:
                    self._proc.wait(timeout=5)
                    raise WorkerError("died", f"worker exited during {what} ({self._exit_text()})")
                self._buf += chunk
        line, _, self._buf = self._buf.partition(b"\n")
        try:
            data = json.loads(line)
        except ValueError:
            raise WorkerError("protocol", f"worker wrote a non-JSON line: {line[:80]!r}") from None
        if not isinstance(data, dict):
            raise WorkerError("protocol", "worker wrote a non-object JSON line")
        return data

    def _exit_text(self) -> str:
        code = self._proc.poll() if self._proc is not None else None
        if code is None:
            return "still running"
        if code < 0:
            return f"killed by signal {-code}"
        return f"exit status {code}"
