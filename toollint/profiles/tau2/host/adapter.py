"""Host-side adapter for tau2-bench (verified on c3398666, tau2 1.0.1). Stdlib + tau2 only.

Loaded by path by `dynamic/host/host.py` inside the benchmark's own interpreter (Python 3.12+). Options:

- ``domain``: one of the checkout's ``src/tau2/domains/*`` (1.0.1: airline, retail, telecom, mock,
  banking_knowledge; required);
- ``toolkit``: ``agent`` (the assistant's tools, the default) or ``user`` (the user simulator's);
- ``root``: a tau2-bench checkout; its ``src/`` goes first on ``sys.path`` and ``TAU2_DATA_DIR``
  points at its ``data/``, so the code confirmed is exactly the code linted. Without it, an installed
  ``tau2`` is used with its own data directory;
- ``reset``: ``auto`` (default: the faster of the two below, measured at start-up), ``rebuild``
  (the domain's ``get_environment()`` again) or ``copy`` (``get_environment(db=<copy>, ...)`` over a
  copy of the pristine databases);
- ``task``: a task id whose ``initial_state`` conditions every build (``set_state``);
- ``examples``: offer the domain's gold actions' arguments as known-legal calls (default true).

What it does, all through the benchmark's own code:

- build: ``tau2.domains.<domain>.environment.get_environment()``, then ``sync_tools()`` so the
  pre-snapshot is taken on a synced environment (``get_response`` syncs after every call; an unsynced
  pre-state would make a read-only call look like a write);
- snapshot: ``{"agent_db": tools.db, "user_db": user_tools.db}`` as ``model_dump(mode="json")``;
- call: ``env.get_response(ToolCall(..., requestor=...))``, the live orchestrator path, which catches
  errors into the message the agent sees and syncs; the toolkit method is wrapped on the instance so
  the raw return (real numbers, not ``to_json_str``'s strings) and the raised exception are kept;
- derived paths: the user-DB fields ``sync_tools()`` maintains (telecom's ``surroundings``), so a
  legitimate consequence of a call is never counted as an effect or a frame change;
- clock, ``uuid`` and ``random``: the host seeds ``uuid4``/``random``; the clock is frozen in every
  loaded ``tau2`` module (telecom bill ids come from ``uuid4``).
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import inspect
import json
import os
import sys
import time
from collections.abc import Callable
from typing import Any

# The domains of tau2 1.0.1, for an installed tau2 whose package directory cannot be listed.
DOMAINS = ("airline", "banking_knowledge", "mock", "retail", "telecom")
TOOLKITS = {"agent": "assistant", "user": "user"}
# Fields telecom's `sync_tools()` rewrites from the agent DB after every call.
DERIVED: dict[str, list[str]] = {
    "telecom": ["/user_db/surroundings/line_active", "/user_db/surroundings/roaming_allowed",
                "/user_db/surroundings/mobile_data_usage_exceeded", "/user_db/surroundings/payment_request"],
}
MAX_EXAMPLES = 6
PROBE_CALL_ID = "toollint-probe"


class Tau2Adapter:
    json_snapshots = True  # model_dump(mode="json") is plain JSON already

    def __init__(self, options: dict[str, Any], shims: Any) -> None:
        self.domain = str(options.get("domain") or "")
        self.toolkit_name = str(options.get("toolkit") or "agent")
        if self.toolkit_name not in TOOLKITS:
            raise ValueError(f"tau2 adapter toolkit must be agent or user, got {self.toolkit_name!r}")
        self.reset_mode = str(options.get("reset") or "auto")
        if self.reset_mode not in ("auto", "rebuild", "copy"):
            raise ValueError(f"tau2 adapter reset must be auto, rebuild or copy, got {self.reset_mode!r}")
        self.task_id: str | None = options.get("task")
        self.want_examples = bool(options.get("examples", True))
        self.root = _setup_paths(options.get("root"))
        self.domains = _domains(self.root)
        if self.domain not in self.domains:
            raise ValueError(
                f"tau2 adapter needs domain = one of {', '.join(self.domains)}, got {self.domain!r}"
            )
        try:
            module = importlib.import_module(f"tau2.domains.{self.domain}.environment")
        except ModuleNotFoundError as exc:
            raise self._missing(exc) from None
        _quiet_logging()
        from tau2.data_model.message import ToolCall

        self.ToolCall = ToolCall
        self.get_environment: Callable[..., Any] = module.get_environment
        self.env_module = module
        self.data_dir = _data_dir()
        shims.freeze_clock(["tau2"])
        self.shims = shims
        self.env: Any = None
        # (agent DB type, its python-mode dump, user DB type, its dump): what a copy-reset validates.
        self.pristine_dbs: tuple[Any, Any, Any, Any] | None = None
        self.cached_state: Any = None  # the snapshot of an environment no call has touched yet
        self.captured: dict[str, Any] = {}
        self.reset_choice = "rebuild"
        self.timings: dict[str, float] = {}

    # -- environments --------------------------------------------------------------------------------

    def _make(self, copy_from: tuple[Any, Any, Any, Any] | None = None) -> Any:
        if copy_from is None:
            env = self.get_environment()
            if self.task_id:
                self._condition(env, self.task_id)
        else:
            # Fresh models validated from the pristine dumps: what `DB.load` does with the file's
            # data, minus reading and parsing the file (and faster than a deep copy).
            db_type, db_dump, user_type, user_dump = copy_from
            kwargs: dict[str, Any] = {"db": db_type.model_validate(db_dump)}
            if user_type is not None:
                kwargs["user_db"] = user_type.model_validate(user_dump)
            env = self.get_environment(**kwargs)
        env.sync_tools()  # the pre-snapshot must be a synced state, as after any get_response
        self._instrument(env)
        return env

    def _condition(self, env: Any, task_id: str) -> None:
        task = next((t for t in self._tasks() if str(t.get("id")) == str(task_id)), None)
        if task is None:
            raise ValueError(f"no task {task_id!r} in the {self.domain} task file")
        from tau2.data_model.tasks import InitialState

        state = InitialState.model_validate(task.get("initial_state") or {})
        env.set_state(state.initialization_data, state.initialization_actions, state.message_history or [])

    def _toolkit(self, env: Any) -> Any:
        return env.tools if self.toolkit_name == "agent" else env.user_tools

    def _dbs(self, env: Any) -> tuple[Any, Any]:
        user_db = getattr(env.user_tools, "db", None) if env.user_tools is not None else None
        return env.tools.db, user_db

    def _missing(self, exc: ModuleNotFoundError) -> Exception:
        """A dependency the domain imports (at import or at build time) that this venv lacks, said
        in one line with the optional extra of tau2's pyproject.toml that declares it."""
        if not exc.name or exc.name.split(".")[0] == "tau2":
            return exc
        extra = _extra_declaring(self.root, exc.name.split(".")[0])
        where = f" (tau2's optional '{extra}' extra)" if extra else ""
        return RuntimeError(f"tau2 domain {self.domain} needs the package {exc.name!r}{where}, "
                            f"which is not installed in {sys.executable}")

    def build(self, task_id: str | None) -> None:
        if task_id:
            self.task_id = task_id
        self.cached_state = None
        start = time.perf_counter()
        try:
            self.env = self._make()
        except ModuleNotFoundError as exc:
            raise self._missing(exc) from None
        self.timings["rebuild_ms"] = (time.perf_counter() - start) * 1000
        db, user_db = self._dbs(self.env)
        self.pristine_dbs = (type(db), db.model_dump(), type(user_db) if user_db is not None else None,
                             user_db.model_dump() if user_db is not None else None)
        self.reset_choice = self._choose_reset()

    def _choose_reset(self) -> str:
        """The faster of a rebuild and a copy, when both give the same state; else rebuild."""
        params = inspect.signature(self.get_environment).parameters
        user_type = self.pristine_dbs[2] if self.pristine_dbs else None
        can_copy = "db" in params and (user_type is None or "user_db" in params)
        if self.reset_mode == "rebuild" or not can_copy:
            return "rebuild"
        start = time.perf_counter()
        copied = self._make(self.pristine_dbs)
        self.timings["copy_ms"] = (time.perf_counter() - start) * 1000
        if _state(self._dbs(copied)) != _state(self._dbs(self.env)):
            return "rebuild"  # the constructor does more than load the files: copying would skip it
        if self.reset_mode == "copy":
            return "copy"
        return "copy" if self.timings["copy_ms"] < self.timings["rebuild_ms"] else "rebuild"

    def reset(self) -> None:
        self.cached_state = None
        if self.reset_choice == "copy" and self.pristine_dbs is not None:
            self.env = self._make(self.pristine_dbs)
        else:
            self.env = self._make()

    def snapshot(self) -> Any:
        """The host snapshots a fresh environment twice (its reset hash, then the probe's pre-state);
        nothing can change it in between, so the second is the first. Any call drops the cache."""
        if self.cached_state is None:
            self.cached_state = _state(self._dbs(self.env))
            return self.cached_state
        state, self.cached_state = self.cached_state, None
        return state

    # -- calls ---------------------------------------------------------------------------------------

    def _instrument(self, env: Any) -> None:
        """Wrap the toolkit's tools on the instance (the class is untouched) to keep the raw return
        and the exception; `get_response` renders both into the message the agent sees."""
        toolkit = self._toolkit(env)
        if toolkit is None:
            return
        for name in list(toolkit._func_tools):
            toolkit.__dict__[name] = _capturing(getattr(toolkit, name), self.captured)
        real_sync, captured = env.sync_tools, self.captured

        def sync() -> None:
            try:
                real_sync()
            except BaseException as exc:
                captured.setdefault("sync_exception", exc)
                raise

        env.sync_tools = sync

    def call(self, tool: str, args: dict[str, Any], want_view: bool = True) -> dict[str, Any]:
        toolkit = self._toolkit(self.env)
        methods = getattr(type(toolkit), "_func_tools", None)
        names = list(toolkit._func_tools) if toolkit is not None and methods is not None else []
        if tool not in names:
            return {"status": "validation_error", "value": None, "error_type": "ToolNotFound",
                    "error_message": f"no tool {tool!r} in the {self.domain} {self.toolkit_name} toolkit",
                    "agent_view": f"Error: Tool '{tool}' not found.", "effective_args": args}
        fn = getattr(type(toolkit), tool)
        try:
            bound = inspect.signature(fn).bind(toolkit, **args)
            bound.apply_defaults()
            effective = {k: v for k, v in bound.arguments.items() if k != "self"}
        except TypeError as exc:
            return {"status": "validation_error", "value": None, "error_type": "TypeError",
                    "error_message": str(exc), "agent_view": f"Error: {exc}", "effective_args": args}
        self.captured.clear()
        self.cached_state = None
        message = self.env.get_response(self.ToolCall(id=PROBE_CALL_ID, name=tool, arguments=dict(args),
                                                      requestor=TOOLKITS[self.toolkit_name]))
        out: dict[str, Any] = {"effective_args": effective, "agent_view": message.content}
        if not message.error:
            out.update(status="ok", value=self.captured.get("value"))
            return out
        raised = self.captured.get("exception") or self.captured.get("sync_exception")
        out.update(status="tool_error", value=None,
                   error_type=type(raised).__name__ if raised is not None else "Error",
                   error_mro=[c.__name__ for c in type(raised).__mro__[1:]] if raised is not None else [],
                   error_message=str(raised) if raised is not None else str(message.content))
        return out

    # -- metadata ------------------------------------------------------------------------------------

    def hello(self) -> dict[str, Any]:
        if self.env is None:
            self.build(self.task_id)  # measures the reset strategy hello reports
        env = self.env
        toolkit = self._toolkit(env)
        if toolkit is None:
            raise ValueError(f"the {self.domain} domain has no {self.toolkit_name} toolkit")
        from tau2.environment.tool import as_tool

        examples = self._examples() if self.want_examples else {}
        tools = []
        for name in sorted(toolkit._func_tools):
            fn = getattr(type(toolkit), name)
            fn = getattr(fn, "__wrapped__", fn)
            try:
                file = inspect.getsourcefile(fn)
                line = inspect.getsourcelines(fn)[1]
            except (OSError, TypeError):
                file, line = None, None
            try:
                schema = as_tool(getattr(toolkit, name)).openai_schema["function"]
            except Exception:  # noqa: BLE001 - a tool tau2 cannot describe still gets probed
                schema = {"description": inspect.getdoc(fn) or "", "parameters": {}}
            tools.append({
                "name": name,
                "doc": inspect.getdoc(fn) or "",
                "description": schema.get("description", ""),
                "parameters": schema.get("parameters") or {},
                "file": file,
                "line": line,
                "type": getattr(toolkit.tool_type(name), "value", str(toolkit.tool_type(name))),
                "mutates_state": bool(toolkit.tool_mutates_state(name)),
                "requestor": TOOLKITS[self.toolkit_name],
                # What the toolkit may touch; the other DB changes only through sync (derived paths).
                "frame": ["/agent_db" if self.toolkit_name == "agent" else "/user_db"],
                "examples": examples.get(name, []),
            })
        try:
            snapshot_schema: dict[str, Any] | None = state_schema(_state_types(env))
        except Exception:  # noqa: BLE001 - a schema is optional metadata
            snapshot_schema = None
        return {
            "adapter": "tau2",
            "variant": f"{self.domain}/{self.toolkit_name}"
            + (f"/task={self.task_id}" if self.task_id else ""),
            "benchmark_version": _dist_version(self.root),
            "domains": list(self.domains),
            "root": self.root,
            "tools": tools,
            "state_schema": snapshot_schema,
            "volatile_paths": [],
            "derived_paths": list(DERIVED.get(self.domain, [])),
            "capabilities": {
                "task_build": True,
                "user_tools": self.toolkit_name == "user",
                "reset": self.reset_choice,
                "timings_ms": {k: round(v, 2) for k, v in self.timings.items()},
            },
        }

    def _tasks(self) -> list[dict[str, Any]]:
        path = os.path.join(self.data_dir, "tau2", "domains", self.domain, "tasks.json")
        try:
            with open(path, encoding="utf-8") as fh:
                data = json.load(fh)
        except (OSError, ValueError):
            return []
        if isinstance(data, dict):
            data = data.get("tasks") or []
        return [t for t in data if isinstance(t, dict)]

    def _examples(self) -> dict[str, list[dict[str, Any]]]:
        """Arguments of the domain's gold actions: first from tasks that leave the default state as
        it is (no initialization data, actions or history), which are legal calls on the pristine
        build, then from the others, which often are too (a probe that is refused costs one call)."""
        out: dict[str, list[dict[str, Any]]] = {}
        if self.task_id:
            return out
        requestor = TOOLKITS[self.toolkit_name]
        tasks = self._tasks()
        clean = [t for t in tasks if not any((t.get("initial_state") or {}).get(k) for k in (
            "initialization_data", "initialization_actions", "message_history"))]
        first = {id(t) for t in clean}
        calls: dict[str, list[dict[str, Any]]] = {}
        for task in clean + [t for t in tasks if id(t) not in first]:
            for action in (task.get("evaluation_criteria") or {}).get("actions") or []:
                if (action.get("requestor") or "assistant") == requestor and isinstance(
                    action.get("arguments"), dict
                ):
                    seen = calls.setdefault(str(action.get("name")), [])
                    if action["arguments"] not in seen:
                        seen.append(action["arguments"])
        return {name: _diverse(found, MAX_EXAMPLES) for name, found in calls.items()}


# --- helpers ------------------------------------------------------------------------------------------


def _diverse(calls: list[dict[str, Any]], limit: int) -> list[dict[str, Any]]:
    """Up to `limit` calls, each round the one that brings most values no chosen call has, an
    argument with few distinct values so far weighing most (both cancellation reasons, not six
    orders cancelled for the same one); on a tie the larger call (three items modified at once
    exercise what one does not), then the task order."""
    chosen: list[dict[str, Any]] = []
    seen: dict[str, set[str]] = {}
    left = list(calls)
    while left and len(chosen) < limit:
        def gain(call: dict[str, Any]) -> float:
            return sum(
                1.0 / (1 + len(seen.get(k, ()))) for k, v in call.items() if repr(v) not in seen.get(k, ())
            )

        best = max(range(len(left)), key=lambda i: (gain(left[i]), _size(left[i]), -i))
        call = left.pop(best)
        chosen.append(call)
        for k, v in call.items():
            seen.setdefault(k, set()).add(repr(v))
    return chosen


def _size(call: dict[str, Any]) -> int:
    """How much a call asks for: its arguments, counting each element of a list argument."""
    return sum(len(v) if isinstance(v, list) else 1 for v in call.values())


def _capturing(bound: Callable[..., Any], captured: dict[str, Any]) -> Callable[..., Any]:
    @functools.wraps(bound)
    def tool(*args: Any, **kwargs: Any) -> Any:
        try:
            value = bound(*args, **kwargs)
        except BaseException as exc:
            captured["exception"] = exc
            raise
        captured["value"] = _jsonable(value)  # now: the sync after the call may change a live object
        return value

    return tool


def _setup_paths(root: Any) -> str | None:
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no price-map fetch at import
    if not root:
        return None
    root = os.path.abspath(os.path.expanduser(str(root)))
    src = os.path.join(root, "src")
    if not os.path.isdir(os.path.join(src, "tau2")):
        raise ValueError(f"{root} is not a tau2-bench checkout (no src/tau2)")
    if src not in sys.path:
        sys.path.insert(0, src)
    os.environ["TAU2_DATA_DIR"] = os.path.join(root, "data")
    # Never write bytecode into the audited tree (it may be read-only, or a pinned snapshot).
    sys.dont_write_bytecode = True
    return root


def _domains(root: str | None) -> tuple[str, ...]:
    """The domains the benchmark defines: each `tau2/domains/<name>/` with an `environment.py`."""
    base: str | None = os.path.join(root, "src", "tau2", "domains") if root else None
    if base is None:
        spec = importlib.util.find_spec("tau2")
        locations = list(spec.submodule_search_locations or []) if spec is not None else []
        base = os.path.join(locations[0], "domains") if locations else None
    try:
        found = sorted(
            d for d in os.listdir(base or "") if os.path.isfile(os.path.join(base or "", d, "environment.py"))
        )
    except OSError:
        found = []
    return tuple(found) or DOMAINS


def _quiet_logging() -> None:
    """tau2 logs through loguru at DEBUG to stderr (the host's log); keep warnings and errors. The
    logger is tau2's own, taken once tau2 has loaded it (the adapter imports only tau2)."""
    logger = getattr(sys.modules.get("loguru"), "logger", None)
    if logger is None:
        return
    logger.remove()
    logger.add(sys.stderr, level="WARNING")


def _data_dir() -> str:
    from tau2.utils.utils import DATA_DIR

    return str(DATA_DIR)


def _state_types(env: Any) -> dict[str, Any]:
    """The DB model of each part of the snapshot (`_state`)."""
    types = {"agent_db": type(env.tools.db)}
    user_db = getattr(env.user_tools, "db", None) if env.user_tools is not None else None
    if user_db is not None:
        types["user_db"] = type(user_db)
    return types


def state_schema(types: dict[str, Any]) -> dict[str, Any]:
    """One JSON Schema of the snapshot: a property per DB, their `$defs` gathered at the root, where
    `$ref`s resolve (a model both DBs define is the same model)."""
    schema: dict[str, Any] = {"type": "object", "properties": {}, "$defs": {}}
    for key, model in types.items():
        sub = model.model_json_schema()
        schema["$defs"].update(sub.pop("$defs", {}))
        schema["properties"][key] = sub
    return schema


def _state(dbs: tuple[Any, Any]) -> dict[str, Any]:
    db, user_db = dbs
    state: dict[str, Any] = {"agent_db": db.model_dump(mode="json")}
    if user_db is not None:
        state["user_db"] = user_db.model_dump(mode="json")
    return state


def _jsonable(value: Any) -> Any:
    try:
        from pydantic_core import to_jsonable_python

        return to_jsonable_python(value)
    except Exception:  # noqa: BLE001 - the host turns what is left into JSON leniently
        return value


def _extra_declaring(root: str | None, module: str) -> str | None:
    """The optional-dependency group of the checkout's pyproject.toml that lists `module`'s package."""
    if not root:
        return None
    try:
        import tomllib

        with open(os.path.join(root, "pyproject.toml"), "rb") as fh:
            extras = tomllib.load(fh)["project"].get("optional-dependencies") or {}
    except (OSError, ValueError, KeyError, ImportError):
        return None
    wanted = module.replace("_", "-").lower()
    for name, requirements in extras.items():
        for requirement in requirements:
            package = requirement.split(";")[0].split("[")[0]
            for sep in "<>=!~ ":
                package = package.split(sep)[0]
            if package.replace("_", "-").lower() == wanted and name != "all":
                return str(name)
    return None


def _dist_version(root: str | None) -> str | None:
    """The checkout's declared version (it is on sys.path, not installed), else the installed one."""
    if root:
        try:
            import tomllib

            with open(os.path.join(root, "pyproject.toml"), "rb") as fh:
                return str(tomllib.load(fh)["project"]["version"])
        except (OSError, ValueError, KeyError, ImportError):
            pass
    try:
        from importlib.metadata import version

        return version("tau2")
    except Exception:  # noqa: BLE001 - best effort
        return None


def make_adapter(options: dict[str, Any], shims: Any) -> Tau2Adapter:
    return Tau2Adapter(options, shims)
