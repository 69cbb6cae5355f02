"""Parent side of the host protocol: start a worker, send requests with a deadline, restart on failure.

A worker is `python host.py --adapter ...` run with the benchmark's interpreter in a new session
(its own process group), so on a timeout or crash the whole group, including anything the benchmark
spawned, is killed. The client then starts a fresh worker and records the restart; it never retries
the failed request itself, the caller decides what the failure means (a verdict, an error).

This is the one gateway to the benchmark's interpreter: besides the environment operations, a
worker answers `locate` (where is this package) and `eval` (an expression's value as JSON), with or
without an adapter (`plain_worker`, `locate_package`, `evaluate`). No other module starts it.
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

    adapter: str  # a profile's name, a sibling adapter's (toolkit), a path to an adapter file, or "" (none)
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
        cmd = [self.spec.python, str(HOST_PATH), "--adapter", adapter_argument(self.spec.adapter),
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


# -- adapter names -------------------------------------------------------------------------------------


def sibling_adapters() -> list[str]:
    """Adapters that ship beside the host and serve any benchmark (`adapter_<name>.py`)."""
    return sorted(p.stem.removeprefix("adapter_") for p in HOST_PATH.parent.glob("adapter_*.py"))


def adapter_names() -> list[str]:
    """Every adapter name a worker spec may use: the sibling adapters and each profile with one."""
    from toollint.profiles import all_profiles

    return sorted({*sibling_adapters(), *(p.name for p in all_profiles() if p.adapter_file is not None)})


def adapter_argument(adapter: str) -> str:
    """What the host's `--adapter` gets: a profile's name becomes its adapter file's path, a path
    or a sibling adapter's name passes as it is, "" means no adapter. An unknown name, or a profile
    without an adapter, is WorkerError(kind="startup") with one line, before any process starts."""
    if not adapter or "/" in adapter or os.sep in adapter or adapter.endswith(".py"):
        return adapter
    if adapter in sibling_adapters():
        return adapter
    from toollint.profiles import find_profile

    profile = find_profile(adapter)
    if profile is not None:
        if profile.adapter_file is None:
            raise WorkerError("startup", f"profile {adapter!r} has no host adapter; use adapter = \"toolkit\" "
                              "with a factory, or a path to an adapter file")
        return str(profile.adapter_file)
    import difflib

    known = adapter_names()
    close = difflib.get_close_matches(adapter, known, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise WorkerError("startup", f"unknown adapter {adapter!r}{hint} (adapters: {', '.join(known)}, "
                      "or a path to an adapter file)")


# -- the gateway: questions to the benchmark's interpreter ------------------------------------------------

GATEWAY_DEADLINE = 300.0  # importing a benchmark and walking its tasks can take minutes on 2 cores


class GatewayError(RuntimeError):
    """The benchmark's interpreter could not answer; the message is one line."""


def plain_worker(python: str, *, env: dict[str, str] | None = None, cwd: str | None = None,
                 log_path: Path | None = None, deadline: float = GATEWAY_DEADLINE) -> Worker:
    """A worker with no adapter and no shims (start it with `with`): for `locate`/`evaluate`."""
    _check_interpreter(python)
    return Worker(WorkerSpec("", {}, python, env=dict(env or {}), cwd=cwd), log_path=log_path, deadline=deadline)


def _check_interpreter(python: str) -> None:
    """One clear line for an interpreter that is not there, before a worker is tried."""
    import errno
    import shutil

    if shutil.which(python) is None:
        code = errno.EACCES if os.path.exists(python) else errno.ENOENT
        raise GatewayError(f"could not run {python}: {os.strerror(code)}")


def locate_in(worker: Worker, package: str) -> Path | None:
    """Where `package` is installed for the worker's interpreter (not imported), or None."""
    try:
        found = worker.request("locate", package=package).get("path")
    except WorkerError as exc:
        raise GatewayError(f"cannot locate {package!r} with {worker.spec.python}: {exc}") from None
    return Path(found) if found else None


def evaluate_in(worker: Worker, expr: str, *, module: Path | str | None = None,
                names: dict[str, Any] | None = None, failure: str = "", deadline: float | None = None) -> Any:
    """The JSON value of `expr` in the worker's interpreter; `module` (a host-side file) gives it its
    globals, `names` binds JSON values. GatewayError: `failure` (or the expression) and the cause."""
    try:
        resp = worker.request("eval", deadline=deadline, expr=expr, module=str(module) if module else None,
                              names=names or {})
    except WorkerError as exc:
        raise GatewayError(f"{failure or 'evaluating ' + expr[:60]}: {exc}") from None
    return resp.get("value")


def locate_package(python: str, package: str, *, env: dict[str, str] | None = None) -> Path | None:
    """`locate_in` on a worker of its own."""
    with _started(plain_worker(python, env=env, deadline=60.0)) as worker:
        return locate_in(worker, package)


def evaluate(python: str, expr: str, *, module: Path | str | None = None, names: dict[str, Any] | None = None,
             env: dict[str, str] | None = None, failure: str = "", deadline: float = GATEWAY_DEADLINE) -> Any:
    """`evaluate_in` on a worker of its own."""
    with _started(plain_worker(python, env=env, deadline=deadline), failure) as worker:
        return evaluate_in(worker, expr, module=module, names=names, failure=failure)


class _started:
    """Start a worker, turning a start-up failure into a GatewayError; close it on the way out."""

    def __init__(self, worker: Worker, failure: str = "") -> None:
        self.worker = worker
        self.failure = failure

    def __enter__(self) -> Worker:
        try:
            self.worker.start()
        except WorkerError as exc:
            self.worker.close()
            prefix = f"{self.failure}: " if self.failure else ""
            raise GatewayError(f"{prefix}{self.worker.spec.python}: {exc}") from None
        return self.worker

    def __exit__(self, *exc: object) -> None:
        self.worker.close()
