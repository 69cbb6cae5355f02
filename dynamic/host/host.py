"""toollint's benchmark host: run as a *script* inside the benchmark's own interpreter.

    python /path/to/toollint/dynamic/host/host.py --adapter /path/to/adapter.py --options '{"suite": "x"}'
    python /path/to/toollint/dynamic/host/host.py          # no adapter: the gateway's locate/eval only

Stdlib only, Python 3.9-3.13, so toollint never has to be importable in the benchmark's venv. It
speaks newline-delimited JSON: requests on stdin, responses on a private duplicate of the original
stdout. At start-up fd 1 is pointed at stderr, so a stray `print` in benchmark code lands in the
run's log file instead of corrupting the protocol stream.

Each request is ``{"id": n, "op": ..., ...}``; each response ``{"id": n, "ok": true, ...}`` or
``{"id": n, "ok": false, "error": {"kind": ..., "message": ...}}``. Operations: hello, build,
snapshot, call, reset, probe (fresh env, pre-hash, call, post, diff, reset check in one round trip),
pristine, shutdown; and, with or without an adapter, locate (where is this package) and eval (this
expression's value as JSON). `--adapter` is a file path (the parent resolves profile names to their
adapter file) or the name of a sibling `adapter_<name>.py`; without one the host runs no adapter and
installs no shims: a plain interpreter for one-off questions.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import enum
import importlib.util
import json
import os
import random
import signal
import sys
import time
import traceback
import types
import uuid
from collections.abc import Callable
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
PROTOCOL_VERSION = 1
FROZEN_NOW = _dt.datetime(2024, 5, 15, 12, 0, 0)


def load_sibling(name: str, path: str | None = None) -> types.ModuleType:
    """Load a stdlib-only helper module (the shared diff, an adapter) by file path."""
    path = path or os.path.join(HERE, name + ".py")
    spec = importlib.util.spec_from_file_location("toollint_host_" + name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


jsondiff = load_sibling("jsondiff")
proctree = load_sibling("proctree")


class HostError(Exception):
    """An error reported to the parent as ``{"kind": kind, "message": ...}``."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


# ---------------------------------------------------------------------------------------------
# Determinism shims: installed before the benchmark is imported, reseeded on every build.


class _RealInstance(type):
    # Instances made by C code (pydantic, strptime) are real datetimes; keep isinstance() working.
    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, cls.__mro__[1])


class FrozenDateTime(_dt.datetime, metaclass=_RealInstance):
    @classmethod
    def now(cls, tz: Any = None) -> _dt.datetime:  # type: ignore[override]
        return FROZEN_NOW.replace(tzinfo=tz)

    @classmethod
    def today(cls) -> _dt.datetime:  # type: ignore[override]
        return FROZEN_NOW

    @classmethod
    def utcnow(cls) -> _dt.datetime:  # type: ignore[override]
        return FROZEN_NOW


class FrozenDate(_dt.date, metaclass=_RealInstance):
    @classmethod
    def today(cls) -> _dt.date:  # type: ignore[override]
        return FROZEN_NOW.date()


class Shims:
    """Seeded uuid4 and random, frozen clock in the benchmark's own modules."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.rng = random.Random(seed)
        self.installed: list[str] = []
        self._real_uuid4 = uuid.uuid4

    def install(self) -> None:
        def seeded_uuid4() -> uuid.UUID:
            return uuid.UUID(int=self.rng.getrandbits(128), version=4)

        uuid.uuid4 = seeded_uuid4
        self.installed += ["uuid4", "random"]
        self.reseed()

    def reseed(self) -> None:
        self.rng.seed(self.seed)
        random.seed(self.seed)

    def freeze_clock(self, module_prefixes: list[str]) -> None:
        """Point `datetime` names in the benchmark's modules at frozen versions.

        `datetime.now` is a C type's method and cannot be patched globally, so (as the notes
        recommend) we patch at module level: `import datetime` names get a proxy module,
        `from datetime import datetime/date` names get the frozen subclasses.
        """
        proxy = types.ModuleType("datetime")
        proxy.__dict__.update(_dt.__dict__)
        proxy.datetime = FrozenDateTime  # type: ignore[attr-defined]
        proxy.date = FrozenDate  # type: ignore[attr-defined]
        # `time.time()` too: ids and stamps made from it differed between workers (every clause FLAKY).
        epoch = FROZEN_NOW.replace(tzinfo=_dt.timezone.utc).timestamp()
        clock = types.ModuleType("time")
        clock.__dict__.update(time.__dict__)
        clock.time = lambda: epoch  # type: ignore[attr-defined]
        clock.time_ns = lambda: int(epoch * 1e9)  # type: ignore[attr-defined]
        patched = 0
        for name, module in list(sys.modules.items()):
            if module is None or not any(name == p or name.startswith(p + ".") for p in module_prefixes):
                continue
            for attr, value in list(vars(module).items()):
                if value is _dt:
                    setattr(module, attr, proxy)
                    patched += 1
                elif value is _dt.datetime:
                    setattr(module, attr, FrozenDateTime)
                    patched += 1
                elif value is _dt.date:
                    setattr(module, attr, FrozenDate)
                    patched += 1
                elif value is time:
                    setattr(module, attr, clock)
                    patched += 1
                elif value is time.time or value is time.time_ns:
                    setattr(module, attr, getattr(clock, value.__name__))
                    patched += 1
        if patched:
            self.installed.append("clock")


# ---------------------------------------------------------------------------------------------
# JSON conversion


def to_json(value: Any, path: str = "", strict: bool = True) -> Any:
    """Plain JSON for pydantic models, dataclasses, dicts, lists and scalars.

    `strict` (snapshots) raises HostError naming the first non-serialisable path; results are
    converted leniently (repr) because the agent sees *some* string for them anyway.
    """
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value
    if isinstance(value, (_dt.datetime, _dt.date, _dt.time)):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): to_json(v, f"{path}/{k}", strict) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json(v, f"{path}/{i}", strict) for i, v in enumerate(value)]
    if isinstance(value, (set, frozenset)):
        return sorted((to_json(v, path, strict) for v in value), key=repr)
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        try:
            return to_json(dump(mode="json"), path, strict)
        except Exception as exc:  # noqa: BLE001 - pydantic refuses some fields; say where
            if strict:
                raise HostError(
                    "snapshot_not_json", "state at {} is not JSON-serialisable: {}".format(path or "/", exc)
                )
            return repr(value)
    if hasattr(value, "__dataclass_fields__"):
        return {k: to_json(getattr(value, k), f"{path}/{k}", strict) for k in value.__dataclass_fields__}
    if isinstance(value, enum.Enum):
        return to_json(value.value, path, strict)
    if strict:
        raise HostError(
            "snapshot_not_json",
            "state at {} is not JSON-serialisable (a {})".format(path or "/", type(value).__name__),
        )
    return repr(value)


# ---------------------------------------------------------------------------------------------
# The host loop


class Host:
    def __init__(self, adapter: Any, shims: Shims) -> None:
        self.adapter = adapter
        self.shims = shims
        self.pristine_hash: str | None = None
        self.built = False
        self.fresh_hash: str | None = None  # hash of the env right after a reset nothing has touched since
        self.handlers: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
            "hello": self.op_hello, "build": self.op_build, "snapshot": self.op_snapshot,
            "call": self.op_call, "reset": self.op_reset, "probe": self.op_probe,
            "pristine": self.op_pristine, "locate": op_locate, "eval": op_eval,
        }

    def snapshot(self) -> Any:
        state = self.adapter.snapshot()
        if getattr(self.adapter, "json_snapshots", False):  # e.g. pydantic model_dump(mode="json")
            return state
        return to_json(state, "", strict=True)

    def ensure_built(self) -> None:
        if not self.built:
            self.op_build({})

    def op_hello(self, req: dict[str, Any]) -> dict[str, Any]:
        info = dict(self.adapter.hello())
        info.update({
            "protocol": PROTOCOL_VERSION,
            "python": ".".join(map(str, sys.version_info[:3])),
            "shims": list(self.shims.installed),
            "seed": self.shims.seed,
        })
        return info

    def op_build(self, req: dict[str, Any]) -> dict[str, Any]:
        self.shims.reseed()
        self.adapter.build(req.get("task_id"))
        self.built = True
        h = jsondiff.state_hash(self.snapshot())
        if self.pristine_hash is None:
            self.pristine_hash = h
        return {"state_hash": h}

    def op_pristine(self, req: dict[str, Any]) -> dict[str, Any]:
        self.ensure_built()
        self.op_reset({})
        state = self.snapshot()
        return {"state": state, "state_hash": jsondiff.state_hash(state)}

    def op_snapshot(self, req: dict[str, Any]) -> dict[str, Any]:
        self.ensure_built()
        state = self.snapshot()
        return {"state": state, "state_hash": jsondiff.state_hash(state)}

    def op_reset(self, req: dict[str, Any]) -> dict[str, Any]:
        self.ensure_built()
        self.shims.reseed()
        self.adapter.reset()
        self.fresh_hash = jsondiff.state_hash(self.snapshot())
        return {"state_hash": self.fresh_hash}

    def op_call(self, req: dict[str, Any]) -> dict[str, Any]:
        self.ensure_built()
        return self.call(req["tool"], req.get("args") or {}, bool(req.get("want_view", True)))

    def call(self, tool: str, args: dict[str, Any], want_view: bool = True) -> dict[str, Any]:
        start = time.perf_counter()
        self.fresh_hash = None
        try:
            result = dict(self.adapter.call(tool, args, want_view))
        except MemoryError:
            raise out_of_memory(tool) from None
        if result.get("error_type") == "MemoryError":  # the adapter caught it as the tool's error
            raise out_of_memory(tool)
        result["value"] = to_json(result.get("value"), "", strict=False)
        result["effective_args"] = to_json(result.get("effective_args", args), "", strict=False)
        result["elapsed_ms"] = round((time.perf_counter() - start) * 1000, 3)
        return result

    def op_probe(self, req: dict[str, Any]) -> dict[str, Any]:
        """Fresh env, pre-snapshot, call, post-snapshot, diff, then reset and hash again.

        The post-call reset hash attributes a Reset Leak to the call that caused it.
        """
        self.ensure_built()
        if self.fresh_hash is None:  # the previous probe's closing reset already gave a fresh env
            self.op_reset({})
        pre = self.snapshot()
        pre_hash = jsondiff.state_hash(pre)
        result = self.call(req["tool"], req.get("args") or {}, bool(req.get("want_view", True)))
        post = self.snapshot()
        post_hash = jsondiff.state_hash(post)
        tags = req.get("tags") or {}
        out: dict[str, Any] = {
            "pre_hash": pre_hash,
            "post_hash": post_hash,
            "result": result,
            "diff": jsondiff.diff(pre, post, tags, same=pre_hash == post_hash),
        }
        if req.get("want_states", True):
            out["post"] = post
            if pre_hash != self.pristine_hash:
                out["pre"] = pre
        out["reset_hash"] = self.op_reset({})["state_hash"]
        out["pristine_hash"] = self.pristine_hash
        notes = getattr(self.adapter, "snapshot_notes", None)  # state an adapter left out of snapshots
        if callable(notes) and notes():
            out["notes"] = notes()
        return out

    def serve(self, inp: Any, out: Any) -> None:
        for line in inp:
            line = line.strip()
            if not line:
                continue
            rid: Any = None
            req: Any = None
            try:
                req = json.loads(line)
                rid = req.get("id")
                op = req.get("op")
                if op == "shutdown":
                    self._send(out, {"id": rid, "ok": True})
                    return
                handler = self.handlers.get(op)
                if handler is None:
                    raise HostError("bad_request", f"unknown op {op!r}")
                resp = {"id": rid, "ok": True}
                resp.update(handler(req))
            except HostError as exc:
                resp = {"id": rid, "ok": False, "error": {"kind": exc.kind, "message": str(exc)}}
            except MemoryError:
                what = str(req.get("tool") or req.get("op")) if isinstance(req, dict) else "request"
                resp = {
                    "id": rid,
                    "ok": False,
                    "error": {"kind": MEMORY_LIMIT, "message": str(out_of_memory(what))},
                }
            except Exception as exc:  # noqa: BLE001 - an adapter bug: report it, keep serving
                traceback.print_exc()
                resp = {
                    "id": rid,
                    "ok": False,
                    "error": {"kind": "crash", "message": f"{type(exc).__name__}: {exc}"},
                }
            self._send(out, resp)
            if resp.get("error", {}).get("kind") == MEMORY_LIMIT:
                return  # what leaked is still held: the parent starts a fresh host

    @staticmethod
    def _send(out: Any, resp: dict[str, Any]) -> None:
        try:
            text = json.dumps(resp, ensure_ascii=False)
        except (TypeError, ValueError) as exc:
            text = json.dumps({"id": resp.get("id"), "ok": False,
                               "error": {"kind": "snapshot_not_json", "message": str(exc)}})
        out.write(text + "\n")
        out.flush()


# ---------------------------------------------------------------------------------------------
# Process lifetime and limits: nothing the benchmark starts outlives the host, and the host's
# memory can be capped.

MEMORY_LIMIT = "memory_limit"  # the error kind of a request that ran out of the host's memory cap
_MAX_MEMORY: list[int] = []  # the cap in bytes, when one is set (for the message)


def out_of_memory(what: str) -> HostError:
    cap = f" (max-memory = {_MAX_MEMORY[0] >> 20} MiB)" if _MAX_MEMORY else ""
    return HostError(MEMORY_LIMIT, f"{what} ran out of memory in the host{cap}")


def limit_memory(max_bytes: int) -> None:
    """Cap the host's address space (inherited by whatever the benchmark starts): an allocation past
    it raises MemoryError, which the host reports as `memory_limit` and then exits."""
    import resource

    _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        max_bytes = min(max_bytes, hard)
    resource.setrlimit(resource.RLIMIT_AS, (max_bytes, hard))
    _MAX_MEMORY[:] = [max_bytes]


def kill_descendants() -> None:
    """SIGKILL every process the benchmark started: the host's descendants (it is a subreaper, so
    orphans that left its session are still among them) and any carrying its token; reap them."""
    proctree.kill_tree(os.getpid(), os.environ.get(proctree.TOKEN_VAR), include_root=False)
    for _ in range(1000):  # reap the children killed (or exited) so far; never block on one
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def guard_lifetime() -> None:
    """Adopt orphaned descendants (subreaper), die with the parent (SIGTERM on its death), and on
    SIGTERM kill what the benchmark started before exiting."""
    proctree.prctl(proctree.PR_SET_CHILD_SUBREAPER, 1)

    def on_term(signum: int, frame: Any) -> None:
        kill_descendants()
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, on_term)
    if proctree.prctl(proctree.PR_SET_PDEATHSIG, signal.SIGTERM):
        parent = os.environ.get("TOOLLINT_PARENT_PID")
        if parent and parent.isdigit() and os.getppid() != int(parent):
            on_term(signal.SIGTERM, None)  # the parent died before the request above took effect
    # A benchmark may ignore SIGTERM or sit in C code: a watchdog SIGKILLs all when toollint is gone.
    proctree.start_watchdog(0, os.environ.get(proctree.TOKEN_VAR))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="toollint benchmark host (JSON lines on stdin/stdout)")
    parser.add_argument(
        "--adapter",
        default="",
        help="a path to an adapter file, or a sibling adapter's name "
        "(none: no adapter, for locate/eval only)",
    )
    parser.add_argument("--options", default="{}", help="adapter options as a JSON object")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-memory", type=int, default=0, help="address-space cap in bytes (0: none)")
    ns = parser.parse_args(argv)
    guard_lifetime()
    try:
        return serve_main(ns)
    finally:
        kill_descendants()


def serve_main(ns: argparse.Namespace) -> int:
    # Keep the real stdout for the protocol; everything else printing to fd 1 goes to stderr (the log).
    proto = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    def fatal(kind: str, message: str) -> int:
        proto.write(json.dumps({"id": None, "ok": False, "error": {"kind": kind, "message": message}}) + "\n")
        proto.flush()
        return 3

    shims = Shims(ns.seed)
    try:
        if ns.max_memory:
            limit_memory(ns.max_memory)
        adapter = load_adapter(ns.adapter, json.loads(ns.options), shims)
    except HostError as exc:
        return fatal(exc.kind, str(exc))
    except BaseException as exc:  # noqa: BLE001 - the benchmark failed to import: one line for the parent
        traceback.print_exc()
        return fatal("startup", f"adapter {ns.adapter} failed to start: {type(exc).__name__}: {exc}")
    proto.write(json.dumps({"id": None, "ok": True, "ready": True}) + "\n")
    proto.flush()
    Host(adapter, shims).serve(sys.stdin, proto)
    return 0


# ---------------------------------------------------------------------------------------------
# Adapter loading and the gateway operations (locate, eval)


def load_adapter(name_or_path: str, options: dict[str, Any], shims: Shims) -> Any:
    """The adapter object: from a file path, a sibling `adapter_<name>.py`, or none (a plain host).

    Shims are installed only for an adapter: a plain host answers questions about the interpreter
    and must see the benchmark as it is."""
    if not name_or_path:
        return PlainAdapter()
    if os.sep in name_or_path or "/" in name_or_path or name_or_path.endswith(".py"):
        path = name_or_path
        if not os.path.isfile(path):
            raise HostError("startup", f"adapter file {path} does not exist")
    else:
        path = os.path.join(HERE, "adapter_" + name_or_path + ".py")
        if not os.path.isfile(path):
            raise HostError("startup", f"unknown adapter {name_or_path!r}")
    shims.install()  # before the adapter (and through it the benchmark) is imported
    module = load_sibling("adapter", path)  # one adapter per host
    return module.make_adapter(options, shims)


class PlainAdapter:
    """No benchmark environment: every environment operation is unsupported, locate/eval work."""

    json_snapshots = True

    def hello(self) -> dict[str, Any]:
        return {"adapter": "", "variant": None, "tools": [], "capabilities": {"plain": True}}

    def _unsupported(self, *args: Any) -> Any:
        raise HostError("adapter_unsupported", "this host runs no adapter (it answers locate and eval only)")

    build = reset = snapshot = call = _unsupported


def op_locate(req: dict[str, Any]) -> dict[str, Any]:
    """Where a package is installed for this interpreter, found without importing it (a dotted name
    imports its parents), and with `"version": true` its distribution version (reading the
    distributions' metadata costs more than the lookup itself)."""
    name = str(req.get("package") or "")
    if not name:
        raise HostError("bad_request", "locate needs a package name")
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError) as exc:
        raise HostError("locate_error", f"cannot look up {name}: {type(exc).__name__}: {exc}")
    if spec is None:
        return {"path": None, "origin": None, "version": None}
    where: str | None
    if spec.origin and spec.origin not in ("namespace", "built-in", "frozen"):
        where = os.path.dirname(spec.origin) if spec.submodule_search_locations else spec.origin
    else:
        where = next(iter(spec.submodule_search_locations or []), None)
    version: str | None = None
    if req.get("version"):
        try:
            from importlib import metadata

            version = metadata.version(name.split(".")[0])
        except Exception:  # noqa: BLE001 - a package need not be a distribution
            version = None
    return {"path": where, "origin": spec.origin, "version": version}


_EVAL_MODULES: dict[str, types.ModuleType] = {}


def op_eval(req: dict[str, Any]) -> dict[str, Any]:
    """Evaluate `expr` and answer its value as JSON. `module` (a file path, loaded once) gives the
    expression its globals, e.g. a profile's host-side helpers; `names` binds JSON values."""
    expr = req.get("expr")
    if not isinstance(expr, str) or not expr.strip():
        raise HostError("bad_request", "eval needs an expression")
    names = req.get("names") or {}
    if not isinstance(names, dict):
        raise HostError("bad_request", "eval names must be an object")
    namespace: dict[str, Any] = {}
    path = req.get("module")
    if path:
        module = _EVAL_MODULES.get(path)
        if module is None:
            if not os.path.isfile(path):
                raise HostError("eval_error", f"module file {path} does not exist")
            module = load_sibling(f"eval_{len(_EVAL_MODULES)}", path)
            _EVAL_MODULES[path] = module
        namespace.update(vars(module))
    namespace.update(names)
    try:
        code = compile(expr, "<toollint eval>", "eval")
    except SyntaxError as exc:
        raise HostError("bad_request", f"eval expression does not parse: {exc.msg}")
    try:
        value = eval(code, namespace)
    except Exception as exc:  # noqa: BLE001 - the benchmark's failure, one line for the parent
        traceback.print_exc()
        raise HostError("eval_error", f"{type(exc).__name__}: {exc}")
    try:
        return {"value": to_json(value, "", strict=True)}
    except HostError as exc:
        raise HostError("eval_not_json", str(exc).replace("state at", "the value at", 1))


if __name__ == "__main__":
    sys.exit(main())
