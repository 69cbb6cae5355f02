"""A warm benchmark interpreter that forks hosts: run as a script in the benchmark's own interpreter.

    python zygote.py --control-fd N --adapter FILE --options JSON --seed N

Starting a host costs seconds (the interpreter, then the benchmark's import, which may pull in
several LLM client libraries). The zygote starts the adapter once, as a host
would (its import of the benchmark, in the benchmark's own order, the overlay's copy included, and
its `hello`), drops it, and then forks a host per request. In the fork,
the modules whose source file changed since (the mutant written into the overlay) and every module
importing them are re-imported, in the order the preload first imported them (or, should that fail,
their packages are dropped for the host to import itself); everything else stays warm. A forked
host is `host.py` run in the fork (`host.main(argv)`), on the pipes the parent sent with the
request (SCM_RIGHTS on the control socket), with the request's environment;
the parent speaks to it exactly as to a host it started itself (`toollint.dynamic.forkserver`).

Lifetime, so nothing outlives toollint: the zygote is a child subreaper that dies with its parent
(SIGTERM on the parent's death, then it kills every process it forked); each forked host dies with
the zygote (SIGKILL on its death) and runs in a process group of its own, which the parent kills
on a timeout as it kills any host. Forked hosts are reaped only when the parent asks (`reap`), so a
pid the parent kills is never one reused by an unrelated process.

Control requests, JSON lines with file descriptors attached: `fork` (argv, env, cwd, stderr path;
the host's stdin and stdout fds) answers `{"pid"}`; `status` answers `{"exit"}` (None while it
runs, without reaping); `reap` waits for and reaps it; `shutdown` kills every forked host and exits.
Stdlib only, Python 3.9+.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import importlib
import importlib.util
import json
import os
import signal
import socket
import sys
import threading
import time
import types
import uuid
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
MAX_FDS = 4


def _load(name: str) -> types.ModuleType:
    path = os.path.join(HERE, name + ".py")
    spec = importlib.util.spec_from_file_location("toollint_host_" + name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


proctree = _load("proctree")

# uuid4 as preloaded modules bind it (`from uuid import uuid4`): a trampoline to whatever `uuid.uuid4`
# is when it is called, so the host's seeded shim (installed after the fork) reaches them too, as it
# does in a host that imported them itself after installing it.
_REAL_UUID4 = uuid.uuid4


def _late_uuid4() -> uuid.UUID:
    current = uuid.uuid4
    return (_REAL_UUID4 if current is _late_uuid4 else current)()


SOURCES: list[Sources] = []  # set once the preload is done


def preload(adapter: str, options: dict[str, Any], seed: int) -> dict[str, Any]:
    """Start the adapter once as a host would (its shims, its import of the benchmark, in the
    benchmark's own order, and `hello`, which builds an environment), then drop it: what it
    imported stays."""
    start = time.perf_counter()
    host = _load("host")
    shims = host.Shims(seed)
    failed = ""
    try:
        made = host.load_adapter(adapter, options, shims)
        made.hello()
        del made
    except BaseException as exc:  # noqa: BLE001 - the forked hosts will meet it and report it
        failed = f"{type(exc).__name__}: {exc}"
    uuid.uuid4 = _late_uuid4  # type: ignore[assignment]
    SOURCES[:] = [Sources()]
    return {"modules": len(sys.modules), "failed": failed, "seconds": round(time.perf_counter() - start, 3),
            "threads": threading.active_count(), "overlay_modules": len(SOURCES[0].files)}


def _digest(path: str) -> str | None:
    try:
        with open(path, "rb") as fh:
            return hashlib.sha1(fh.read()).hexdigest()
    except OSError:
        return None


class Sources:
    """The preloaded modules whose source is not part of the interpreter's installation (an overlay
    of the benchmark, which a mutant changes one file of; a checkout; the adapter), with what each
    imports (see `stale`)."""

    def __init__(self) -> None:
        import sysconfig

        installed = {
            os.path.abspath(sysconfig.get_path(k)) + os.sep
            for k in ("stdlib", "platstdlib", "purelib", "platlib")
        }
        self.files: dict[str, tuple[str, str | None]] = {}
        self.importers: dict[str, set[str]] = {}
        self.order = list(sys.modules)  # the order imports began in
        for name, module in list(sys.modules.items()):
            file = getattr(module, "__file__", None)
            if (
                not file
                or not file.endswith(".py")
                or any(os.path.abspath(file).startswith(i) for i in installed)
            ):
                continue
            self.files[name] = (file, _digest(file))
        for name, (file, _) in self.files.items():
            for imported in _imports(
                name, file, getattr(sys.modules.get(name), "__path__", None) is not None
            ):
                for target in _prefixes(imported):
                    if target in self.files and target != name:
                        self.importers.setdefault(target, set()).add(name)

    def changed(self) -> set[str]:
        return {n for n, (f, h) in self.files.items() if _digest(f) != h}

    def importers_of(self, names: set[str]) -> set[str]:
        """`names` and every module importing one of them, directly or not."""
        out, todo = set(names), list(names)
        while todo:
            for importer in self.importers.get(todo.pop(), ()):
                if importer not in out:
                    out.add(importer)
                    todo.append(importer)
        return out

    def refresh(self) -> str:
        """Make the modules whose file changed since the preload (the mutant) and their importers
        fresh, before the host starts: re-imported at once, in the order the preload first imported
        them (the benchmark's own order, which its circular imports need). Should that fail, every
        module of the packages involved is dropped instead, and the host imports them itself. Returns
        how: warm (nothing changed), subset, or package."""
        changed = self.changed()
        if not changed:
            return "warm"
        stale = self.importers_of(changed)
        for name in stale:
            sys.modules.pop(name, None)
        try:
            for name in self.order:
                if name in stale and name not in sys.modules:
                    importlib.import_module(name)
            return "subset"
        except BaseException:  # noqa: BLE001 - whatever a module does at import: start over, wider
            tops = {n.split(".")[0] for n in stale}
            for name in list(sys.modules):
                if name in stale or name.split(".")[0] in tops:
                    sys.modules.pop(name, None)
            return "package"


def _prefixes(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(len(parts), 0, -1)]


def _imports(name: str, file: str, is_package: bool) -> set[str]:
    """The absolute names a module's source imports (relative imports resolved)."""
    import ast

    try:
        with open(file, encoding="utf-8") as fh:
            tree = ast.parse(fh.read())
    except (OSError, SyntaxError, ValueError):
        return set()
    package = name if is_package else name.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1] if node.level > 1 else base
                prefix = ".".join(base)
                module = f"{prefix}.{node.module}" if node.module else prefix
            else:
                module = node.module or ""
            out.add(module)
            out.update(f"{module}.{a.name}" for a in node.names)  # `from pkg import submodule`
    return out


def _become_host(request: dict[str, Any], fds: list[int], control: socket.socket) -> None:
    """In the fork: the request's pipes as stdin/stdout, its environment, then `host.main`."""
    control.close()
    os.setpgid(0, 0)  # a group of its own: the parent kills it and what it starts as one
    proctree.prctl(proctree.PR_SET_PDEATHSIG, signal.SIGKILL)  # dies with the zygote
    if os.getppid() == 1:
        os._exit(1)  # the zygote died before the line above took effect
    stdin, stdout = fds[0], fds[1]
    os.dup2(stdin, 0)
    os.dup2(stdout, 1)
    err = request.get("stderr")
    if err:
        fd = os.open(err, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    else:
        fd = os.open(os.devnull, os.O_WRONLY)
    os.dup2(fd, 2)
    for extra in (stdin, stdout, fd):
        if extra > 2:
            os.close(extra)
    sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115 - fresh buffers: not the zygote's
    sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
    env = {str(k): str(v) for k, v in (request.get("env") or {}).items()}
    os.environ.clear()
    os.environ.update(env)
    os.environ["TOOLLINT_PARENT_PID"] = str(os.getppid())  # its parent is the zygote, not toollint
    first = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and p not in sys.path]
    sys.path[1:1] = first
    importlib.invalidate_caches()
    os.environ["TOOLLINT_FORK_REFRESH"] = SOURCES[0].refresh() if SOURCES else "cold"  # for the host's log
    if request.get("cwd"):
        os.chdir(request["cwd"])
    code = 1
    try:
        host = _load("host")
        code = int(host.main(list(request.get("argv") or [])) or 0)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # noqa: BLE001 - the host's own failure, in its log
        import traceback

        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):  # exiting anyway
                stream.flush()
        os._exit(code)


class Zygote:
    def __init__(self, control: socket.socket) -> None:
        self.control = control
        self.children: set[int] = set()
        self.buf = b""

    def send(self, message: dict[str, Any]) -> None:
        self.control.sendall((json.dumps(message) + "\n").encode("utf-8"))

    def receive(self) -> tuple[dict[str, Any] | None, list[int]]:
        fds: list[int] = []
        while b"\n" not in self.buf:
            data, more, _flags, _addr = socket.recv_fds(self.control, 1 << 16, MAX_FDS)
            fds += more
            if not data:
                return None, fds
            self.buf += data
        line, _, self.buf = self.buf.partition(b"\n")
        return json.loads(line), fds

    def serve(self) -> None:
        while True:
            request, fds = self.receive()
            if request is None:
                return
            op = request.get("op")
            try:
                if op == "fork":
                    self.send({"ok": True, "pid": self.fork(request, fds)})
                elif op == "status":
                    self.send({"ok": True, "exit": self.status(int(request["pid"]))})
                elif op == "reap":
                    self.send({"ok": True, "exit": self.reap(int(request["pid"]))})
                elif op == "shutdown":
                    self.send({"ok": True})
                    return
                else:
                    self.send({"ok": False, "error": f"unknown op {op!r}"})
            except Exception as exc:  # noqa: BLE001 - reported to the parent, the zygote keeps serving
                self.send({"ok": False, "error": f"{type(exc).__name__}: {exc}"})
            finally:
                for fd in fds:
                    try:
                        os.close(fd)
                    except OSError:
                        pass

    def fork(self, request: dict[str, Any], fds: list[int]) -> int:
        if len(fds) != 2:
            raise ValueError(f"fork needs the host's stdin and stdout, got {len(fds)} descriptor(s)")
        if threading.active_count() > 1:
            raise RuntimeError(f"{threading.active_count()} threads run in the zygote: forking would copy "
                               "their locks held")
        pid = os.fork()
        if pid == 0:
            _become_host(request, fds, self.control)
        self.children.add(pid)
        return pid

    def status(self, pid: int) -> int | None:
        """The exit status (negative: the signal), None while it runs; never reaps."""
        try:
            info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return -1 if pid not in self.children else None
        if info is None:
            return None
        return -info.si_status if info.si_code in (os.CLD_KILLED, os.CLD_DUMPED) else info.si_status

    def reap(self, pid: int) -> int | None:
        if pid not in self.children:
            return None
        _, status = os.waitpid(pid, 0)
        self.children.discard(pid)
        return os.waitstatus_to_exitcode(status)

    def kill_all(self) -> None:
        for pid in sorted(self.children):
            proctree.kill_tree(pid)
        proctree.kill_tree(os.getpid(), None, include_root=False)
        for pid in sorted(self.children):
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
        self.children.clear()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="toollint's fork server (a warm benchmark interpreter)")
    parser.add_argument("--control-fd", type=int, required=True)
    parser.add_argument("--adapter", default="", help="the adapter file the hosts run (started once here)")
    parser.add_argument("--options", default="{}")
    parser.add_argument("--seed", type=int, default=0)
    ns = parser.parse_args(argv)
    control = socket.socket(fileno=ns.control_fd)
    zygote = Zygote(control)
    proctree.prctl(proctree.PR_SET_CHILD_SUBREAPER, 1)

    def on_term(signum: int, frame: Any) -> None:
        zygote.kill_all()
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, on_term)
    proctree.prctl(proctree.PR_SET_PDEATHSIG, signal.SIGTERM)
    parent = os.environ.get("TOOLLINT_PARENT_PID")
    if parent and parent.isdigit() and os.getppid() != int(parent):
        on_term(signal.SIGTERM, None)
    sys.stdout = sys.stderr  # stray prints of the benchmark go to the log
    zygote.send({"ok": True, "ready": True, **(preload(ns.adapter, json.loads(ns.options), ns.seed)
                                               if ns.adapter else {})})
    try:
        zygote.serve()
    finally:
        zygote.kill_all()
    return 0


if __name__ == "__main__":
    sys.exit(main())
