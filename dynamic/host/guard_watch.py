"""Host-side helper (stdlib only, Python 3.9+): watch lines of one tool function at run time.

Loaded by the host's `eval` operation as a module file (`toollint.dynamic.derived` sends
``arm(spec)``, then ordinary probes, then ``collect()`` and ``disarm()``), inside the benchmark's own
interpreter. While armed, a trace function follows calls into the one function named by `spec`; at
each watched *point* (the first line the function executes at or past the point's line) it reads
the function's frame, once per call:

- a commented-out guard's `condition`: its value as the guard would have computed it there, and for
  each name it reads whether it is a parameter, a local (with its value as JSON, so toollint can
  find the record it is in the state snapshot) or a global, and the JSON value of every maximal
  sub-expression that reads neither parameters nor locals (`LineStatus.ACTIVE` -> "Active");
- `values`: the JSON value of expressions (the record a write assigns into, `account`).

Nothing in the frame is changed, and nothing is called but the expressions the tool's own source
wrote at that spot (calls are left out of the constants).
"""

from __future__ import annotations

import ast
import datetime as _dt
import enum
import os
import sys
from typing import Any

_STATE: dict[str, Any] = {"spec": None, "observations": []}
MAX_OBSERVATIONS = 200


def arm(spec: dict[str, Any]) -> bool:
    """Start watching: `spec` has `function`, `file` (a path tail), `first`/`last` (the function's
    lines), `params`, and `points`: each {`id`, `line`, optional `condition`, optional `values`}."""
    params = set(spec.get("params") or ())
    points = []
    for point in spec.get("points") or []:
        compiled = dict(point)
        if point.get("condition"):
            tree = ast.parse(str(point["condition"]), mode="eval")
            compiled["code"] = compile(tree, "<toollint guard>", "eval")
            compiled["constants"] = _constant_parts(tree, params)
            compiled["chains"] = _chains(tree, params)
        compiled["value_code"] = {
            v: compile(v, "<toollint watch>", "eval") for v in point.get("values") or []
        }
        points.append(compiled)
    points.sort(key=lambda p: int(p["line"]))
    _STATE.update(spec=dict(spec), points=points, observations=[], params=params)
    sys.settrace(_global_trace)
    return True


def disarm() -> bool:
    sys.settrace(None)
    _STATE["spec"] = None
    return True


def collect() -> list[dict[str, Any]]:
    """The observations since the last collect: one per call that entered the function, each
    {point id: what was seen there} (a point the call never got to is absent)."""
    out = list(_STATE["observations"])
    _STATE["observations"] = []
    return out


def _matches(code: Any, spec: dict[str, Any]) -> bool:
    if code.co_name != spec["function"]:
        return False
    tail = str(spec.get("file") or "").replace("\\", "/").lstrip("/")
    filename = code.co_filename.replace(os.sep, "/")
    # The file as linted, or a copy of its package (the mutation harness's overlay): its name suffices.
    if tail and not (filename == tail or filename.endswith(("/" + tail, "/" + tail.split("/")[-1]))):
        return False
    return int(spec.get("first", 0)) <= code.co_firstlineno <= int(spec.get("last", 1 << 30))


def _global_trace(frame: Any, event: str, arg: Any) -> Any:
    spec = _STATE["spec"]
    if spec is None or event != "call" or not _matches(frame.f_code, spec):
        return None
    if len(_STATE["observations"]) >= MAX_OBSERVATIONS:
        return None
    seen: dict[str, Any] = {}
    _STATE["observations"].append(seen)
    pending = list(_STATE["points"])

    def local_trace(frame: Any, event: str, arg: Any) -> Any:
        if event == "line":
            while pending and frame.f_lineno >= int(pending[0]["line"]):
                point = pending.pop(0)
                seen[str(point["id"])] = _observe(frame, point)
        return local_trace if pending else None

    return local_trace


def _observe(frame: Any, point: dict[str, Any]) -> dict[str, Any]:
    params = _STATE["params"]
    f_locals, f_globals = dict(frame.f_locals), frame.f_globals
    out: dict[str, Any] = {
        "reached": True,
        "line": frame.f_lineno,
        "names": {},
        "constants": {},
        "values": {},
        "chains": {},
    }
    for text, code in point.get("value_code", {}).items():
        try:
            out["values"][text] = _json(eval(code, f_globals, f_locals))
        except Exception as exc:  # noqa: BLE001 - e.g. a name not bound yet on this path
            out["values"][text] = {"__error__": f"{type(exc).__name__}: {exc}"}
    if "code" not in point:
        return out
    builtins = f_globals.get("__builtins__", {})
    for node in ast.walk(ast.parse(str(point["condition"]), mode="eval")):
        if not isinstance(node, ast.Name) or node.id in out["names"]:
            continue
        builtin = node.id in builtins if isinstance(builtins, dict) else hasattr(builtins, node.id)
        if node.id in params:
            out["names"][node.id] = {"kind": "param", "value": _json(f_locals.get(node.id))}
        elif node.id in f_locals:
            out["names"][node.id] = {"kind": "local", "value": _json(f_locals[node.id])}
        elif node.id in f_globals or builtin:
            out["names"][node.id] = {"kind": "global"}
        else:
            out["names"][node.id] = {"kind": "unbound"}
    for text in point.get("chains") or []:  # `self.accounts`, `target_line`: what the locals reach
        if any(out["names"].get(n, {}).get("kind") != "local" for n in _names(text)):
            continue
        try:
            out["chains"][text] = _json(eval(compile(text, "<toollint guard>", "eval"), f_globals, f_locals))
        except Exception as exc:  # noqa: BLE001 - e.g. an attribute this path never set
            out["chains"][text] = {"__error__": f"{type(exc).__name__}: {exc}"}
    for text in point.get("constants") or []:
        if any(out["names"].get(n, {}).get("kind") != "global" for n in _names(text)):
            continue
        try:
            out["constants"][text] = _json(eval(compile(text, "<toollint guard>", "eval"), f_globals, {}))
        except Exception as exc:  # noqa: BLE001 - the benchmark's failure, reported as a reason
            out["constants"][text] = {"__error__": f"{type(exc).__name__}: {exc}"}
    try:
        out["value"] = bool(eval(point["code"], f_globals, f_locals))
    except Exception as exc:  # noqa: BLE001 - e.g. the local is None on this call
        out["value"] = None
        out["error"] = f"{type(exc).__name__}: {exc}"
    return out


def _names(text: str) -> set[str]:
    return {n.id for n in ast.walk(ast.parse(text, mode="eval")) if isinstance(n, ast.Name)}


def _constant_parts(tree: ast.Expression, params: set[str]) -> list[str]:
    """Source text of the maximal sub-expressions that may be constants: attribute chains on a name
    that is not a parameter, with no call inside (a call may do anything)."""
    out: list[str] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, (ast.Attribute, ast.Name)):
            base: ast.expr = node
            while isinstance(base, ast.Attribute):
                base = base.value
            if isinstance(base, ast.Name) and base.id not in params:
                out.append(ast.unparse(node))
                return
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree.body)
    return out


def _chains(tree: ast.Expression, params: set[str]) -> list[str]:
    """Source text of the attribute/constant-subscript chains on a name that is not a parameter, and
    of each of their prefixes (`account.status`, `account`; `self.accounts`, `self`): values toollint
    looks for in the state snapshot, the longest it finds there winning."""
    out: list[str] = []

    def visit(node: ast.AST) -> None:
        base: ast.AST = node
        prefixes = [node]
        while isinstance(base, ast.Attribute) or (isinstance(base, ast.Subscript)
                                                  and isinstance(base.slice, ast.Constant)):
            base = base.value
            prefixes.append(base)
        if isinstance(base, ast.Name) and base.id not in params:
            out.extend(ast.unparse(p) for p in prefixes if isinstance(p, ast.expr))
            return
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree.body)
    return out


def _json(value: Any, depth: int = 0) -> Any:
    """The value as the host's snapshots render it (the host's own `to_json` when it is there)."""
    host = sys.modules.get("__main__")
    convert = getattr(host, "to_json", None)
    if callable(convert) and depth == 0:
        try:
            return convert(value, "", False)
        except Exception:  # noqa: BLE001 - fall back to the plain conversion below
            convert = None
    if depth > 50:
        return repr(value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, enum.Enum):
        return _json(value.value, depth + 1)
    if isinstance(value, (_dt.datetime, _dt.date, _dt.time)):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): _json(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json(v, depth + 1) for v in value]
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        try:
            return dump(mode="json")
        except Exception:  # noqa: BLE001
            return repr(value)
    if hasattr(value, "__dataclass_fields__"):
        return {k: _json(getattr(value, k), depth + 1) for k in value.__dataclass_fields__}
    return repr(value)
