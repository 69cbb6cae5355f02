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

import atexit
import contextlib
import json
import os
import secrets
import selectors
import signal
import subprocess
import threading
import time
import weakref
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from toollint.dynamic.host import proctree

from toollint.profiles.api import GatewayError, Interpreter, WorkerSpec

if TYPE_CHECKING:  # typing.Self is 3.11+; typing_extensions is not a runtime dependency
    from toollint.contracts.model import Contract
    from typing_extensions import Self

HOST_PATH = Path(__file__).parent / "host" / "host.py"
DEFAULT_DEADLINE = 30.0
STARTUP_DEADLINE = 120.0
MAX_REPLY_BYTES = 2 << 30  # a reply this large is a runaway host, not a state


START_TIMEOUT = "start_timeout"  # the WorkerError kind (and UNTESTABLE reason) of a host too slow to start
STOPPED = "stopped"  # the WorkerError kind of a start or request refused because the run was interrupted


def check_seconds(value: Any, name: str) -> float:
    """A positive, finite number of seconds, else TypeError/ValueError naming `name` (a deadline of
    0 or -1 would time every request out at once)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number of seconds, not {value!r}")
    seconds = float(value)
    if not 0 < seconds < float("inf"):
        raise ValueError(f"{name} must be a positive number of seconds, not {value!r}")
    return seconds


class WorkerError(Exception):
    """A request that got no normal answer. `kind`: timeout, died, protocol, startup, start_timeout,
    or a host error kind."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass
class WorkerEvent:
    """A restart or failure, recorded for the report (never silent)."""

    kind: str
    message: str
    request: str


class Worker:
    """One host process. Use as a context manager, or call `close()`.

    Start-up (the interpreter, the benchmark's import, `hello`) has `startup_deadline` seconds;
    every request `deadline` seconds. A start that fails or times out makes the worker unusable:
    later requests raise the same error at once instead of starting the benchmark again, so a
    benchmark that cannot start costs one start-up, never a restart loop.
    """

    def __init__(self, spec: WorkerSpec, log_path: Path | None = None, deadline: float = DEFAULT_DEADLINE,
                 startup_deadline: float | None = None) -> None:
        self.spec = spec
        self.deadline = check_seconds(deadline, "deadline")
        self.startup_deadline = (
            check_seconds(startup_deadline, "startup_deadline")
            if startup_deadline is not None
            else max(STARTUP_DEADLINE, self.deadline)
        )
        self.log_path = log_path
        self.events: list[WorkerEvent] = []
        self.hello: dict[str, Any] = {}
        self.starts = 0
        self.startup_s = 0.0  # spent starting hosts (interpreter, benchmark import, hello)
        self.unusable: WorkerError | None = None  # why the host cannot start; sticky
        self._proc: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None
        # Bytes read from the host but not yet parsed; a bytearray grows in amortised constant time,
        # and `_scanned` is how much of it is known to hold no newline, so a reply is read in time
        # linear in its size (a bytes `+=` and a rescan per 64 KiB pipe read were quadratic).
        self._buf = bytearray()
        self._scanned = 0
        self._next_id = 0
        self._token = ""  # in the host's environment, inherited by all it starts (proctree)
        self._launcher: Any = None  # the launcher that started the host, None for a plain Popen

    # -- lifecycle -------------------------------------------------------------------------------

    def start(self) -> dict[str, Any]:
        """Start the host and return its `hello`.

        Raises WorkerError with one line: kind `startup` (the host reported an error, or the
        interpreter cannot run) or `start_timeout` (no `hello` within `startup_deadline`). Either
        leaves the worker unusable (`unusable`), and every later start raises it again at once.
        """
        if self.unusable is not None:
            raise WorkerError(self.unusable.kind, str(self.unusable))
        self._kill()
        began = time.perf_counter()
        try:
            self.hello = self._spawn_and_greet()
        except WorkerError as exc:
            self._kill()
            self.unusable = exc
            raise
        finally:
            self.startup_s += time.perf_counter() - began
        return self.hello

    def _spawn_and_greet(self) -> dict[str, Any]:
        """Start the host; a host a launcher started (a fork of a warm interpreter) that fails to
        start is retried once the ordinary way, and the launcher told, so a launcher's fault never
        decides a verdict."""
        try:
            return self._spawn_once(use_launchers=True)
        except WorkerError as exc:
            launcher = self._launcher
            if launcher is None:
                raise
            self._kill()
            failed = getattr(launcher, "failed", None)
            if failed is not None:
                failed(self.spec, exc)
            return self._spawn_once(use_launchers=False)

    def _spawn_once(self, use_launchers: bool) -> dict[str, Any]:
        _refuse_if_stopping("starting the host")
        self._launcher = None
        if self.log_path is not None and self._log is None:
            self.log_path.parent.mkdir(parents=True, exist_ok=True)
            self._log = open(self.log_path, "ab")  # noqa: SIM115 - lives as long as the worker
        cmd = [self.spec.python, str(HOST_PATH), "--adapter", adapter_argument(self.spec.adapter),
               "--options", json.dumps(self.spec.options), "--seed", str(self.spec.seed)]
        if self.spec.max_memory:
            cmd += ["--max-memory", str(self.spec.max_memory)]
        self._token = secrets.token_hex(12)
        env = dict(os.environ)
        env.update(self.spec.env)
        env.update({proctree.TOKEN_VAR: self._token, "TOOLLINT_PARENT_PID": str(os.getpid())})
        try:
            self._proc, self._launcher = _launch(self.spec, cmd, env,
                                                 self._log if self._log is not None else subprocess.DEVNULL,
                                                 use_launchers)
        except OSError as exc:
            raise WorkerError("startup", f"cannot run {self.spec.python}: {exc.strerror or exc}") from None
        _LIVE.add(self)
        if _STOPPING.is_set():  # a Ctrl-C's stop_hosts() looked before this host was live: stop it here
            self._kill()
            raise WorkerError(STOPPED, "starting the host: the run was interrupted")
        self.starts += 1
        self._buf = bytearray()
        self._scanned = 0
        end = time.monotonic() + self.startup_deadline
        where = f"; log: {self.log_path}" if self.log_path is not None else ""
        try:
            ready = self._read(self.startup_deadline, "startup")
            if not ready.get("ok"):
                err = ready.get("error") or {}
                raise WorkerError("startup", str(err.get("message") or "host failed to start"))
            # `hello` is part of start-up (an adapter may build the benchmark to list its tools), on
            # the start-up clock, and never restarts the worker it is starting.
            hello = self._exchange("hello", max(end - time.monotonic(), 0.001), {})
            if not hello.get("ok"):
                err = hello.get("error") or {}
                raise WorkerError(
                    "startup", f"the adapter's hello failed: {err.get('message') or 'host error'}"
                )
        except WorkerError as exc:
            if exc.kind == "timeout":
                raise WorkerError(
                    START_TIMEOUT,
                    f"the benchmark did not start within {self.startup_deadline:g} s "
                    f"(startup_deadline){where}",
                ) from None
            if exc.kind == "startup":
                raise
            raise WorkerError("startup", f"host did not start: {exc}{where}") from None
        return hello

    def restart(self, reason: WorkerEvent) -> None:
        self.events.append(reason)
        self.start()

    def close(self) -> None:
        proc = self._proc
        if proc is not None and _exit_status(proc) is None:
            try:
                self._send({"id": -1, "op": "shutdown"})
                _wait_exit(proc, 5.0)  # the host kills what the benchmark started, then exits
            except (OSError, WorkerError):
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
        """Kill the host and everything it started, whether it still runs or has exited.

        The host is not reaped before this, so its pid and process-group id cannot have been
        reused by an unrelated process: the group kill and the tree walk are safe even after it
        exited. (A benchmark child in a session of its own is found by the tree walk while the host
        lives, by its environment token after.)
        """
        proc, self._proc = self._proc, None
        if proc is None:
            return
        _LIVE.discard(self)
        if proc.returncode is None:  # not reaped: the pid is still the host's (maybe a zombie)
            proctree.kill_tree(proc.pid, self._token)
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # the whole group: the benchmark's children too
            except (ProcessLookupError, PermissionError):
                pass
        elif self._token:  # reaped elsewhere: only the token still names what it started
            proctree.kill_token(self._token)
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

        On timeout or worker death the process group is killed and WorkerError is raised; the
        failure is recorded in `events`, the request is not retried, and the next request starts a
        fresh worker. A host-reported error (`ok: false`) raises WorkerError with the host's kind
        and keeps the worker.
        """
        if self._proc is None:
            self.start()
        try:
            _refuse_if_stopping(op)
            resp = self._exchange(op, deadline or self.deadline, payload)
        except WorkerError as exc:
            self._kill()
            self.events.append(WorkerEvent(exc.kind, str(exc), f"{op} {payload.get('tool', '')}".strip()))
            raise
        if not resp.get("ok"):
            err = resp.get("error") or {}
            kind = str(err.get("kind") or "error")
            message = str(err.get("message") or "host error")
            if kind == MEMORY_LIMIT:  # the host exits after saying so: what leaked is still held
                self._kill()
                self.events.append(WorkerEvent(kind, message, f"{op} {payload.get('tool', '')}".strip()))
            raise WorkerError(kind, message)
        return resp

    def _exchange(self, op: str, deadline: float, payload: dict[str, Any]) -> dict[str, Any]:
        """One request and its reply, nothing else: no restart, no interpretation of `ok`."""
        self._next_id += 1
        self._send({"id": self._next_id, "op": op, **payload})
        return self._read(deadline, op)

    def _send(self, msg: dict[str, Any]) -> None:
        assert self._proc is not None and self._proc.stdin is not None
        try:
            self._proc.stdin.write((json.dumps(msg) + "\n").encode("utf-8"))
            self._proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise WorkerError("died", f"worker exited ({self._exit_text()})") from None

    def _read(self, deadline: float, what: str) -> dict[str, Any]:
        assert self._proc is not None and self._proc.stdout is not None
        line = self._read_line(self._proc.stdout, deadline, what)
        try:
            data = json.loads(line)
        except ValueError:
            raise WorkerError("protocol", f"worker wrote a non-JSON line: {bytes(line[:80])!r}") from None
        except RecursionError:
            raise WorkerError("protocol", "worker wrote a JSON line nested too deeply to read") from None
        if not isinstance(data, dict):
            raise WorkerError("protocol", "worker wrote a non-object JSON line")
        return data

    def _read_line(self, stdout: IO[bytes], deadline: float, what: str) -> bytearray:
        """The next newline-terminated line from the host, within `deadline` seconds.

        Each byte is appended once and scanned for the newline once, whatever the reply's size.
        """
        end = time.monotonic() + deadline
        buf = self._buf
        with selectors.DefaultSelector() as sel:
            sel.register(stdout, selectors.EVENT_READ)
            while True:
                newline = buf.find(b"\n", self._scanned)
                if newline >= 0:
                    break
                self._scanned = len(buf)
                left = end - time.monotonic()
                if left <= 0 or not sel.select(left):
                    raise WorkerError("timeout", f"{what} did not answer within {deadline:g} s")
                chunk = os.read(stdout.fileno(), 1 << 20)
                if not chunk:
                    assert self._proc is not None
                    _wait_exit(self._proc, 5.0)
                    raise WorkerError("died", f"worker exited during {what} ({self._exit_text()})")
                buf += chunk
                if len(buf) > MAX_REPLY_BYTES:
                    raise WorkerError("protocol", f"{what}: the host's reply is larger than "
                                      f"{MAX_REPLY_BYTES >> 20} MiB")
        line = buf[:newline]
        del buf[: newline + 1]  # bytearray drops a prefix without moving the rest
        self._scanned = 0
        return line

    def _exit_text(self) -> str:
        code = _exit_status(self._proc) if self._proc is not None else None
        if code is None:
            return "still running"
        if code < 0:
            return f"killed by signal {-code}"
        return f"exit status {code}"


MEMORY_LIMIT = "memory_limit"  # the host ran out of its `max_memory`; it exits after replying

# Other ways to start a host (`toollint.dynamic.forkserver`: a fork of a warm interpreter): each is
# asked in turn, `launcher.launch(spec, cmd, env, stderr)`, and returns an object with `Popen`'s
# surface, or None; `launcher.failed(spec, error)` hears of a host it started that did not start.
_LAUNCHERS: list[Any] = []


def register_launcher(launcher: Any) -> None:
    _LAUNCHERS.append(launcher)


def unregister_launcher(launcher: Any) -> None:
    if launcher in _LAUNCHERS:
        _LAUNCHERS.remove(launcher)


def _launch(spec: WorkerSpec, cmd: list[str], env: dict[str, str], stderr: Any,
            use_launchers: bool = True) -> tuple[Any, Any]:
    """The host process and the launcher that started it: a launcher's, or (None) a new interpreter
    in a session of its own."""
    for launcher in tuple(_LAUNCHERS) if use_launchers else ():
        proc = launcher.launch(spec, cmd, env, stderr)
        if proc is not None:
            return proc, launcher
    return subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr,
                            start_new_session=True, cwd=spec.cwd, env=env), None


# Workers with a live host, killed at interpreter exit if their owner never closed them.
_LIVE: weakref.WeakSet[Worker] = weakref.WeakSet()
# Set while a run is being stopped (Ctrl-C): no host starts and no request is sent until it clears.
_STOPPING = threading.Event()


def stop_hosts() -> int:
    """Ctrl-C: SIGKILL every live host and what it started, and refuse new starts and requests
    (WorkerError kind "stopped") until `resume_hosts()`. The threads waiting on those hosts see
    their pipes close and end at once; each closes its own worker (streams are not closed under a
    thread still reading them). Returns how many hosts were running."""
    _STOPPING.set()
    stopped = 0
    for worker in list(_LIVE):
        proc = worker._proc
        if proc is not None and proc.returncode is None:
            proctree.kill_tree(proc.pid, worker._token)
            stopped += 1
    return stopped


def resume_hosts() -> None:
    _STOPPING.clear()


def _refuse_if_stopping(what: str) -> None:
    if _STOPPING.is_set():
        raise WorkerError(STOPPED, f"{what}: the run was interrupted")


@atexit.register
def _kill_live_workers() -> None:
    for worker in list(_LIVE):
        worker._kill()


def _exit_status(proc: subprocess.Popen[bytes]) -> int | None:
    """The host's exit status (negative: killed by that signal), or None while it runs, *without*
    reaping it, so its pid and group id stay reserved until `_kill` has used them."""
    if proc.returncode is not None:
        return proc.returncode
    try:
        info = os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return proc.poll()
    except AttributeError:  # no waitid on this platform
        return proc.poll()
    if info is None:
        return None
    return -info.si_status if info.si_code in (os.CLD_KILLED, os.CLD_DUMPED) else info.si_status


def _wait_exit(proc: subprocess.Popen[bytes], timeout: float) -> int | None:
    end = time.monotonic() + timeout
    while True:
        code = _exit_status(proc)
        if code is not None or time.monotonic() >= end:
            return code
        time.sleep(0.01)


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
            raise WorkerError(
                "startup",
                f'profile {adapter!r} has no host adapter; use adapter = "toolkit" '
                "with a factory, or a path to an adapter file",
            )
        return str(profile.adapter_file)
    import difflib

    known = adapter_names()
    close = difflib.get_close_matches(adapter, known, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise WorkerError("startup", f"unknown adapter {adapter!r}{hint} (adapters: {', '.join(known)}, "
                      "or a path to an adapter file)")


# -- the gateway: questions to the benchmark's interpreter ------------------------------------------------

GATEWAY_DEADLINE = 300.0  # importing a benchmark and walking its tasks can take minutes on 2 cores


def plain_worker(python: str, *, env: dict[str, str] | None = None, cwd: str | None = None,
                 log_path: Path | None = None, deadline: float = GATEWAY_DEADLINE) -> Worker:
    """A worker with no adapter and no shims (start it with `with`): for `locate`/`evaluate`."""
    _check_interpreter(python)
    return Worker(
        WorkerSpec("", {}, python, env=dict(env or {}), cwd=cwd), log_path=log_path, deadline=deadline
    )


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


class _WorkerInterpreter:
    """A started plain worker as the profile API's `Interpreter`."""

    def __init__(self, worker: Worker) -> None:
        self.worker = worker

    def evaluate(self, expr: str, *, module: Path | str | None = None, names: dict[str, Any] | None = None,
                 failure: str = "") -> Any:
        return evaluate_in(self.worker, expr, module=module, names=names, failure=failure)


class HostServices:
    """The profile API's `Services`: what a profile's parts are lent, this module's gateway first."""

    @property
    def predicate_module(self) -> Path:
        from toollint.contracts.host import predicate

        return Path(predicate.__file__ or "")

    def evaluate(self, python: str, expr: str, *, module: Path | str | None = None,
                 names: dict[str, Any] | None = None, env: dict[str, str] | None = None, failure: str = "",
                 deadline: float | None = None) -> Any:
        return evaluate(python, expr, module=module, names=names, env=env, failure=failure,
                        deadline=GATEWAY_DEADLINE if deadline is None else deadline)

    @contextlib.contextmanager
    def interpreter(self, python: str, *, env: dict[str, str] | None = None,
                    deadline: float | None = None) -> Iterator[Interpreter]:
        """A plain worker, started (a failure to start is the worker's own error, raised as it is)."""
        worker = plain_worker(python, env=env, deadline=GATEWAY_DEADLINE if deadline is None else deadline)
        try:
            worker.start()
            yield _WorkerInterpreter(worker)
        finally:
            worker.close()

    def locate_package(self, python: str, package: str) -> Path | None:
        return locate_package(python, package)

    def load_contracts(self, directories: Sequence[Path]) -> list[Contract]:
        from toollint.contracts.loader import load_contracts

        contracts, _ = load_contracts(list(directories))
        return contracts


SERVICES = HostServices()


def starting_hosts(specs: Sequence[WorkerSpec], tools: int) -> str:
    """`starting 2 toolkit hosts for 3 tools`: what the first seconds of a run (the hosts' imports) do."""
    by_adapter = Counter(spec.adapter for spec in specs)
    hosts = ", ".join(f"{n} {adapter} host{'s' if n != 1 else ''}" for adapter, n in by_adapter.items())
    return f"starting {hosts or 'no host'} for {tools} tool{'s' if tools != 1 else ''}"
