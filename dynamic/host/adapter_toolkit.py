"""Host-side generic adapter: any benchmark whose environment an importable factory can build.

Options (from ``[tool.toollint.confirm]``):

- ``factory``: ``"module:callable"`` returning the environment object (required);
- ``sys_path``: directories to put on ``sys.path`` first (the benchmark's source root);
- ``tools``: names of the environment's methods that are tools; default: methods carrying a tool
  marker attribute (``__tool__``, ``__is_tool__``, ``is_tool``, ``_is_tool``: what ``@is_tool``-style,
  MCP/LangChain-style decorators set);
- ``state``: attribute of the environment holding its state (e.g. ``"db"``); default: the object;
- ``reset``: ``"rebuild"`` (call the factory again; default, so module-level state that survives a
  rebuild shows up as a Reset Leak) or ``"deepcopy"`` (copy a pristine build);
- ``clock_modules``: module prefixes whose ``datetime`` and ``time`` names get the frozen clock;
- ``classes`` (instead of ``factory``): ``"module:Class"`` toolkits built with no arguments, one
  instance each, whose public methods are tools; ``load`` names a scenario loader method each is
  then given ``scenario`` (default ``{}``) by (``_load_scenario``); the state is each
  instance's public attributes, by class name;
- ``tool_classes``: ``"module:Class"`` tools whose static method ``call`` (default ``invoke``) takes
  the state first (``Tool.invoke(data, ...)``); ``factory`` returns that state (a data
  loader); a tool's name is the one its ``get_info()`` gives the agent, else the class's in snake case.

State is turned into JSON from pydantic models, dataclasses, dicts, lists and public attributes of
plain objects; a value with no JSON form (a lock, a client, a file) is left out of the snapshot and
named once in ``hello``'s notes, so the rest of the state is still checked.
"""

from __future__ import annotations

import copy
import datetime as _dt
import enum
import functools
import importlib
import inspect
import re
import sys
from collections.abc import Callable
from typing import Any

MARKERS = ("__tool__", "__is_tool__", "is_tool", "_is_tool")


def _resolve(ref: str, what: str) -> Any:
    """`module:attr.attr` imported and looked up."""
    if not ref or ":" not in str(ref):
        raise ValueError(f"toolkit adapter needs {what} = 'module:callable', got {ref!r}")
    module_name, _, attr = str(ref).partition(":")
    found: Any = importlib.import_module(module_name)
    for part in attr.split("."):
        found = getattr(found, part)
    return found


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()


class Toolkits:
    """`classes`: several toolkit classes served as one environment (the APIs one task involves)."""

    def __init__(self, classes: list[type], load: str | None, scenario: dict[str, Any]) -> None:
        self.instances: dict[str, Any] = {}
        for cls in classes:
            obj = cls()
            if load:
                getattr(obj, load)(copy.deepcopy(scenario))
            self.instances[cls.__name__] = obj

    def state(self) -> dict[str, Any]:
        return {name: _plain(obj) for name, obj in self.instances.items()}


class ToolkitAdapter:
    def __init__(self, options: dict[str, Any], shims: Any) -> None:
        for entry in reversed(options.get("sys_path") or []):
            if entry not in sys.path:
                sys.path.insert(0, str(entry))
        self.classes: list[type] = []
        self.import_notes: list[str] = []  # classes left out: their module would not import here
        for ref in options.get("classes") or []:
            try:
                self.classes.append(_resolve(ref, "classes"))
            except ImportError as exc:  # one API's optional dependency must not stop the others
                self.import_notes.append(f"{ref} left out: {type(exc).__name__}: {exc}")
        if options.get("classes") and not self.classes:
            raise ImportError("no class of `classes` imports: " + "; ".join(self.import_notes))
        self.tool_classes: list[type] = [_resolve(r, "tool_classes")
                                         for r in options.get("tool_classes") or []]
        self.call_name = str(options.get("call") or "invoke")
        self.load: str | None = options.get("load")
        self.scenario: dict[str, Any] = dict(options.get("scenario") or {})
        ref = options.get("factory")
        if self.classes and not ref:
            factory: Any = lambda: Toolkits(self.classes, self.load, self.scenario)
            ref = ", ".join(f"{c.__module__}:{c.__name__}" for c in self.classes)
            module_name = self.classes[0].__module__
        else:
            factory = _resolve(str(ref or ""), "factory")
            module_name = str(ref).partition(":")[0]
        if not callable(factory):
            raise TypeError(f"factory {ref} is not callable")
        self.factory: Callable[[], Any] = factory
        self.factory_ref = str(ref)
        self.state_attr: str | None = options.get("state")
        self.reset_mode = str(options.get("reset") or "rebuild")
        self.tool_names: list[str] | None = options.get("tools")
        modules = [module_name, *(c.__module__ for c in self.tool_classes)]
        shims.freeze_clock(list(options.get("clock_modules") or sorted({m.split(".")[0] for m in modules})))
        self.env: Any = None
        self.pristine: Any = None
        self.skipped: list[str] = []  # state paths with no JSON form, left out of every snapshot
        self.json_snapshots = True  # `snapshot` converts, leaving out what has no JSON form

    def _class_tools(self) -> dict[str, Callable[..., Any]]:
        """`tool_classes`: each class's `call` method, taking the state first, by its agent-facing name."""
        out: dict[str, Callable[..., Any]] = {}
        self.schemas: dict[str, dict[str, Any]] = {}
        for cls in self.tool_classes:
            info = getattr(cls, "get_info", None)
            try:
                function = info()["function"] if callable(info) else {}
            except Exception:  # noqa: BLE001 - a schema that does not build leaves the class's name
                function = {}
            name = str(function.get("name") or _snake(cls.__name__))
            out[name] = getattr(cls, self.call_name)
            if isinstance(function.get("parameters"), dict) and function["parameters"].get("properties"):
                # the schema the agent is given: its types and enums are the values the tool accepts
                self.schemas[name] = function["parameters"]
        return out

    def _tools(self, env: Any) -> dict[str, Callable[..., Any]]:
        if self.tool_classes:
            return self._class_tools()
        if isinstance(env, Toolkits):
            found: list[tuple[str, str, Callable[..., Any]]] = []
            for cls_name, obj in env.instances.items():
                for name in self.tool_names or [n for n in dir(type(obj)) if not n.startswith("_")]:
                    fn = getattr(obj, name, None)
                    if callable(fn) and name in dir(type(obj)):
                        found.append((cls_name, name, fn))
            counts: dict[str, int] = {}
            for _c, name, _f in found:
                counts[name] = counts.get(name, 0) + 1
            # a name two classes share is called by its class too (`TicketAPI.logout`)
            return {(name if counts[name] == 1 else f"{c}.{name}"): fn for c, name, fn in found}
        out = {}
        names = self.tool_names
        if names is None:
            names = []
            for name in dir(type(env)):
                if name.startswith("__"):
                    continue
                fn = getattr(type(env), name, None)
                if callable(fn) and any(getattr(fn, m, None) for m in MARKERS):
                    names.append(name)
        for name in names:
            fn = getattr(env, name, None)
            if callable(fn):
                out[name] = fn
        return out

    def hello(self) -> dict[str, Any]:
        env = self.env if self.env is not None else self.factory()
        tools = []
        for name, fn in sorted(self._tools(env).items()):
            try:
                file = inspect.getsourcefile(fn)
                line = inspect.getsourcelines(fn)[1]
            except (OSError, TypeError):
                file, line = None, None
            params: dict[str, Any] = {}
            try:
                for i, p in enumerate(inspect.signature(fn).parameters.values()):
                    if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or (self.tool_classes and i == 0):
                        continue  # a tool class's first parameter is the state, not the agent's
                    params[p.name] = {"annotation": _annotation(p.annotation),
                                      "required": p.default is inspect.Parameter.empty}
            except (TypeError, ValueError):
                pass
            schema = getattr(self, "schemas", {}).get(name)
            if schema is not None:  # what the signature requires, where the schema does not say
                params = dict(schema, required=sorted(set(schema.get("required") or ())
                                                      | {p for p, i in params.items() if i["required"]}))
            qualname = getattr(fn, "__qualname__", name)
            tools.append({"name": name, "doc": inspect.getdoc(fn) or "", "parameters": params,
                          "file": file, "line": line, "frame": None, "qualname": qualname})
        return {
            "adapter": "toolkit",
            "variant": self.factory_ref,
            "benchmark_version": None,
            "tools": tools,
            "state_schema": None,
            "volatile_paths": [],
            "derived_paths": [],
            "capabilities": {"task_build": False, "user_tools": False, "reset": self.reset_mode},
            "notes": self.notes(env),
        }

    def notes(self, env: Any) -> list[str]:
        """What the run should be told about this host: the state left out of its snapshots."""
        self.env = env if self.env is None else self.env
        self.snapshot()
        return self.snapshot_notes()

    def snapshot_notes(self) -> list[str]:
        return [*self.import_notes, *(f"state at {path} has no JSON form ({kind}): left out of every snapshot"
                                      for path, kind in (p.split("\t") for p in self.skipped))]

    def build(self, task_id: str | None) -> None:
        if task_id:
            raise ValueError(f"toolkit adapter has no tasks (asked for {task_id!r})")
        self.env = self.factory()
        if self.reset_mode == "deepcopy":
            self.pristine = copy.deepcopy(self.env)

    def reset(self) -> None:
        if self.reset_mode == "deepcopy" and self.pristine is not None:
            self.env = copy.deepcopy(self.pristine)
        else:
            self.env = self.factory()

    def snapshot(self) -> Any:
        env = self.env
        if isinstance(env, Toolkits):
            state: Any = env.state()
        else:
            state = getattr(env, self.state_attr) if self.state_attr else env
        skipped: list[str] = []
        out = _to_json(_plain(state), "", skipped)
        for entry in skipped:
            if entry not in self.skipped:
                self.skipped.append(entry)
        return out

    def call(self, tool: str, args: dict[str, Any], want_view: bool = True) -> dict[str, Any]:
        tools = self._tools(self.env)
        if tool not in tools:
            return {"status": "validation_error", "value": None, "error_type": "ToolNotFound",
                    "error_message": f"no tool {tool!r}", "agent_view": f"no tool {tool!r}",
                    "effective_args": args}
        fn = tools[tool]
        if self.tool_classes:  # `invoke(data, ...)`: the state goes first
            fn = functools.partial(fn, self.env)
        try:
            bound = inspect.signature(fn).bind(**args)
            bound.apply_defaults()
            effective = dict(bound.arguments)
        except TypeError as exc:
            return {"status": "validation_error", "value": None, "error_type": "TypeError",
                    "error_message": str(exc), "agent_view": f"TypeError: {exc}", "effective_args": args}
        try:
            value = fn(**args)
        except Exception as exc:  # noqa: BLE001 - any exception from the tool is its error result
            return {
                "status": "tool_error",
                "value": None,
                "error_type": type(exc).__name__,
                "error_mro": [c.__name__ for c in type(exc).__mro__[1:]],
                "error_message": str(exc),
                "agent_view": f"{type(exc).__name__}: {exc}",
                "effective_args": effective,
            }
        return {
            "status": "ok",
            "value": value,
            "agent_view": value if isinstance(value, str) else repr(value),
            "effective_args": effective,
        }


def _annotation(annotation: Any) -> str | None:
    if annotation is inspect.Parameter.empty:
        return None
    if isinstance(annotation, (str, type)):
        return annotation if isinstance(annotation, str) else annotation.__name__
    # `Optional[str]`, not its bare `Optional`; `List[str]` read as the `list[str]` it is
    text = str(annotation).replace("typing.", "")
    return re.sub(r"\b(List|Dict|Set|FrozenSet|Tuple)\[", lambda m: m.group(1).lower() + "[", text)


def _plain(value: Any) -> Any:
    """Objects without a JSON form of their own become their public, non-callable attributes."""
    if value is None or isinstance(value, (bool, int, float, str, list, tuple, dict, set, frozenset)):
        return value
    if hasattr(value, "model_dump") or hasattr(value, "__dataclass_fields__"):
        return value
    if hasattr(value, "__dict__") and not isinstance(value, type):
        return {k: v for k, v in vars(value).items() if not k.startswith("_") and not callable(v)}
    return value


def _to_json(value: Any, path: str, skipped: list[str]) -> Any:
    """JSON for the snapshot; a value with no JSON form is left out (None in a list, which keeps the
    positions) and its path recorded in `skipped` once, as `path<TAB>type`."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (_dt.datetime, _dt.date, _dt.time)):
        return value.isoformat()
    if isinstance(value, enum.Enum):
        return _to_json(value.value, path, skipped)
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            converted = _to_json(v, f"{path}/{k}", skipped)
            if converted is not _SKIP:
                out[str(k)] = converted
        return out
    if isinstance(value, (list, tuple)):
        items = [_to_json(v, f"{path}/{i}", skipped) for i, v in enumerate(value)]
        return [None if v is _SKIP else v for v in items]
    if isinstance(value, (set, frozenset)):
        return sorted((v for v in (_to_json(v, path, skipped) for v in value) if v is not _SKIP), key=repr)
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        try:
            dumped = dump(mode="json")
        except Exception:  # noqa: BLE001 - pydantic refuses some fields: the model is left out
            dumped = _SKIP
        if dumped is not _SKIP:
            return _to_json(dumped, path, skipped)
    elif hasattr(value, "__dataclass_fields__"):
        return _to_json({k: getattr(value, k) for k in value.__dataclass_fields__}, path, skipped)
    elif hasattr(value, "__dict__") and not isinstance(value, type) and not callable(value):
        return _to_json(_plain(value), path, skipped)
    entry = f"{path or '/'}\t{type(value).__name__}"
    if entry not in skipped:
        skipped.append(entry)
    return _SKIP


_SKIP = object()  # a value `_to_json` leaves out


def make_adapter(options: dict[str, Any], shims: Any) -> ToolkitAdapter:
    return ToolkitAdapter(options, shims)
