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
- ``clock_modules``: module prefixes whose ``datetime`` names get the frozen clock.

State is turned into JSON from pydantic models, dataclasses, dicts, lists and public attributes of
plain objects; anything else is reported as not JSON-serialisable, naming the path.
"""

from __future__ import annotations

import copy
import importlib
import inspect
import sys
from collections.abc import Callable
from typing import Any

MARKERS = ("__tool__", "__is_tool__", "is_tool", "_is_tool")


class ToolkitAdapter:
    def __init__(self, options: dict[str, Any], shims: Any) -> None:
        for entry in reversed(options.get("sys_path") or []):
            if entry not in sys.path:
                sys.path.insert(0, str(entry))
        ref = options.get("factory")
        if not ref or ":" not in str(ref):
            raise ValueError(f"toolkit adapter needs factory = 'module:callable', got {ref!r}")
        module_name, _, attr = str(ref).partition(":")
        module = importlib.import_module(module_name)
        factory: Any = module
        for part in attr.split("."):
            factory = getattr(factory, part)
        if not callable(factory):
            raise TypeError(f"factory {ref} is not callable")
        self.factory: Callable[[], Any] = factory
        self.factory_ref = str(ref)
        self.state_attr: str | None = options.get("state")
        self.reset_mode = str(options.get("reset") or "rebuild")
        self.tool_names: list[str] | None = options.get("tools")
        shims.freeze_clock(list(options.get("clock_modules") or [module_name.split(".")[0]]))
        self.env: Any = None
        self.pristine: Any = None

    def _tools(self, env: Any) -> dict[str, Callable[..., Any]]:
        out: dict[str, Callable[..., Any]] = {}
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
            params = {}
            try:
                for p in inspect.signature(fn).parameters.values():
                    if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                        continue
                    params[p.name] = {"annotation": _annotation(p.annotation),
                                      "required": p.default is inspect.Parameter.empty}
            except (TypeError, ValueError):
                pass
            tools.append({"name": name, "doc": inspect.getdoc(fn) or "", "parameters": params,
                          "file": file, "line": line, "frame": None})
        return {
            "adapter": "toolkit",
            "variant": self.factory_ref,
            "benchmark_version": None,
            "tools": tools,
            "state_schema": None,
            "volatile_paths": [],
            "derived_paths": [],
            "capabilities": {"task_build": False, "user_tools": False, "reset": self.reset_mode},
        }

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
        state = getattr(self.env, self.state_attr) if self.state_attr else self.env
        return _plain(state)

    def call(self, tool: str, args: dict[str, Any], want_view: bool = True) -> dict[str, Any]:
        tools = self._tools(self.env)
        if tool not in tools:
            return {"status": "validation_error", "value": None, "error_type": "ToolNotFound",
                    "error_message": f"no tool {tool!r}", "agent_view": f"no tool {tool!r}",
                    "effective_args": args}
        fn = tools[tool]
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
    return annotation if isinstance(annotation, str) else getattr(annotation, "__name__", repr(annotation))


def _plain(value: Any) -> Any:
    """Objects without a JSON form of their own become their public, non-callable attributes."""
    if value is None or isinstance(value, (bool, int, float, str, list, tuple, dict, set, frozenset)):
        return value
    if hasattr(value, "model_dump") or hasattr(value, "__dataclass_fields__"):
        return value
    if hasattr(value, "__dict__") and not isinstance(value, type):
        return {k: v for k, v in vars(value).items() if not k.startswith("_") and not callable(v)}
    return value


def make_adapter(options: dict[str, Any], shims: Any) -> ToolkitAdapter:
    return ToolkitAdapter(options, shims)
