"""Which functions are tools, which of them declare themselves writers, and where their state is.

Built-in profiles cover the benchmarks toollint knows; `tool-decorators` and `tools` in
`[tool.toollint]` cover the rest. Nothing of the audited project is imported: all of this is syntax.

| profile     | a tool is                                                          | its state roots      |
|-------------|--------------------------------------------------------------------|----------------------|
| tau2        | a method decorated `@is_tool(ToolType.X)`                           | `self`               |
| agentdojo   | a function with `Annotated[T, Depends("name")]` parameters          | those parameters     |
| toolsandbox | `@register_as_tool(...)`                                            | module state         |
| mcp         | `@mcp.tool()`, `@server.tool()`, `@app.tool()` (any `*.tool`)       | module state, `self` |
| langchain   | `@tool`, or `_run` on a `BaseTool` subclass                         | `self`, module state |
| openai      | `@function_tool`                                                    | module state         |
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from toollint.settings import Settings

TOOL_DECORATORS = frozenset({"is_tool", "register_as_tool", "tool", "function_tool"})
NON_WRITER_TOOL_TYPES = frozenset({"READ", "GENERIC", "THINK"})
# Module-level objects that are plumbing, not benchmark state.
NOT_STATE_CALLS = frozenset(
    ["FastMCP", "Server", "FastAPI", "Flask", "APIRouter", "Blueprint", "Lock", "RLock", "Event", "Semaphore", "getLogger", "TypeVar", "NamedTuple", "namedtuple", "ParamSpec", "compile", "Path"]
)
STATE_CALLS = frozenset({"dict", "list", "set", "defaultdict", "OrderedDict", "Counter", "deque"})


@dataclass
class ToolInfo:
    node: ast.FunctionDef | ast.AsyncFunctionDef
    qualname: str
    profile: str
    class_name: str | None = None
    declared_writer: bool | None = None  # from @is_tool(ToolType.WRITE/READ/...); None if undeclared
    roots: dict[str, str] = field(default_factory=dict)  # parameter -> canonical state prefix

    @property
    def name(self) -> str:
        return self.node.name

    @property
    def docstring(self) -> str:
        return ast.get_docstring(self.node) or ""


def _decorator_name(dec: ast.expr) -> str:
    target = dec.func if isinstance(dec, ast.Call) else dec
    if isinstance(target, ast.Attribute):
        return target.attr
    if isinstance(target, ast.Name):
        return target.id
    return ""


def _dotted(expr: ast.expr) -> str:
    if isinstance(expr, ast.Attribute):
        return f"{_dotted(expr.value)}.{expr.attr}"
    if isinstance(expr, ast.Name):
        return expr.id
    return ""


def _declared_type(dec: ast.expr) -> bool | None:
    """`@is_tool(ToolType.WRITE)` -> True; READ/GENERIC/THINK -> False."""
    if not isinstance(dec, ast.Call):
        return None
    for arg in list(dec.args) + [k.value for k in dec.keywords]:
        text = _dotted(arg) or (arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, str) else "")
        kind = text.rsplit(".", 1)[-1].upper()
        if kind == "WRITE":
            return True
        if kind in NON_WRITER_TOOL_TYPES:
            return False
    return None


def annotated_class(ann: ast.expr | None) -> str | None:
    """The class named by an annotation (`Inbox`, `Annotated[Inbox, ...]`, `Inbox | None`)."""
    if ann is None:
        return None
    if isinstance(ann, ast.Subscript) and _decorator_name(ann.value) == "Annotated":
        first = ann.slice.elts[0] if isinstance(ann.slice, ast.Tuple) else ann.slice
        return annotated_class(first)
    if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):
        return annotated_class(ann.left) or annotated_class(ann.right)
    if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
        return ann.value.split("[", 1)[0].strip() or None
    name = _dotted(ann)
    return name.rsplit(".", 1)[-1] if name else None


def type_aliases(tree: ast.Module) -> dict[str, ast.expr]:
    """Module-level `AnnotatedSlack = Annotated[Slack, Depends("slack")]` style aliases."""
    out: dict[str, ast.expr] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) or isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            value = node.value
        elif type(node).__name__ == "TypeAlias":  # `type X = ...` (3.12+)
            value = node.value  # type: ignore[attr-defined]
        else:
            continue
        if isinstance(value, ast.Subscript) and _decorator_name(value.value) == "Annotated":
            name = node.targets[0].id if isinstance(node, ast.Assign) else node.name.id  # type: ignore[attr-defined]
            out[name] = value
    return out


def resolve_annotation(ann: ast.expr | None, aliases: dict[str, ast.expr]) -> ast.expr | None:
    if isinstance(ann, ast.Name) and ann.id in aliases:
        return aliases[ann.id]
    return ann


def depends_roots(
    fn: ast.FunctionDef | ast.AsyncFunctionDef, aliases: dict[str, ast.expr] | None = None
) -> dict[str, str]:
    """Parameters annotated `Annotated[T, Depends("name")]` (AgentDojo), mapped to "name"."""
    roots: dict[str, str] = {}
    for p in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs:
        ann = resolve_annotation(p.annotation, aliases or {})
        if isinstance(ann, ast.Subscript) and _decorator_name(ann.value) == "Annotated":
            items = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
            for item in items[1:]:
                if isinstance(item, ast.Call) and _decorator_name(item) == "Depends" and item.args:
                    dep = item.args[0]
                    roots[p.arg] = dep.value if isinstance(dep, ast.Constant) and isinstance(dep.value, str) else p.arg
    return roots


def _is_tool_decorator(dec: ast.expr, extra: set[str]) -> bool:
    name = _decorator_name(dec)
    target = dec.func if isinstance(dec, ast.Call) else dec
    return name in TOOL_DECORATORS or name in extra or _dotted(target) in extra


def discover_tools(tree: ast.Module, settings: Settings, module_name: str = "") -> list[ToolInfo]:
    extra = set(settings.tool_decorators)
    aliases = type_aliases(tree)
    configured = settings.tool_refs_for(module_name) if module_name else set()
    tools: list[ToolInfo] = []

    def consider(fn: ast.FunctionDef | ast.AsyncFunctionDef, cls: ast.ClassDef | None) -> None:
        qual = f"{cls.name}.{fn.name}" if cls else fn.name
        roots = depends_roots(fn, aliases)
        is_method = cls is not None and bool(fn.args.args) and fn.args.args[0].arg == "self"
        if is_method:
            roots.setdefault("self", "")
        decs = [d for d in fn.decorator_list if _is_tool_decorator(d, extra)]
        declared = next((t for t in map(_declared_type, decs) if t is not None), None)
        if decs:
            profile = "tau2" if any(_decorator_name(d) == "is_tool" for d in decs) else "decorated"
        elif roots and not is_method:
            profile = "agentdojo"
        elif cls is not None and fn.name == "_run" and any(_decorator_name(b) == "BaseTool" for b in cls.bases):
            profile = "langchain"
        elif qual in configured:
            profile = "configured"
        else:
            return
        tools.append(ToolInfo(fn, qual, profile, cls.name if cls else None, declared, roots))

    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            consider(node, None)
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    consider(item, node)
    return tools


def module_state_names(tree: ast.Module) -> set[str]:
    """Module-level names bound to mutable containers or objects: state a tool may write."""
    names: set[str] = set()
    for node in tree.body:
        targets: list[ast.expr] = []
        value: ast.expr | None = None
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        if value is None:
            continue
        mutable = isinstance(value, (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp))
        if isinstance(value, ast.Call):
            called = _decorator_name(value)
            mutable = called in STATE_CALLS or (called[:1].isupper() and called not in NOT_STATE_CALLS)
        if mutable:
            names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names
