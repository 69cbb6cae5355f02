"""The one analysis of state paths that every rule, the contracts and the tracer share.

For each function it summarises: the canonical state paths it reads and writes
(`bank_account.scheduled_transactions[*].amount`), where each parameter flows (state write, call
argument, log call, returned message, condition), its return statements with the conditions they sit
under, and which tools write state (directly or through helpers resolved by name, up to three hops).

Paths are canonical: the state root is replaced by its name in the environment (`self.` is dropped,
an AgentDojo `Depends("bank_account")` parameter becomes `bank_account`), element selection becomes
`[*]`, and locals bound to state (`t = next(t for t in account.items if ...)`) are followed.
Built on `ast` for speed; see `toollint.discovery` for which functions are tools.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Literal

from toollint.discovery import (
    ToolInfo,
    annotated_class,
    discover_tools,
    module_state_names,
    resolve_annotation,
    type_aliases,
)
from toollint.settings import Settings

MAX_HELPER_HOPS = 3

# Methods that mutate the object they are called on.
MUTATORS = frozenset(
    ["append", "extend", "insert", "update", "pop", "remove", "clear", "setdefault", "add", "discard", "popitem", "sort", "reverse", "__setitem__", "__delitem__", "appendleft", "extendleft"]
)
# Method names that, called on a state object whose class is not in this module, may write it.
WRITE_VERBS = frozenset(
    ["add", "append", "book", "cancel", "create", "delete", "remove", "set", "update", "insert", "send", "schedule", "reserve", "release", "assign", "unassign", "grant", "revoke", "enable", "disable", "block", "unblock", "lock", "unlock", "open", "close", "suspend", "resume", "activate", "deactivate", "subscribe", "unsubscribe", "follow", "unfollow", "post", "put", "patch", "write", "save", "store", "register", "deregister", "move", "rename", "share", "transfer", "pay", "refund", "invite", "kick"]
)
# Calls whose arguments only end up in text the agent or a log sees.
LOG_FUNCS = frozenset({"print", "pprint", "warn"})
LOG_OBJECTS = frozenset({"logging", "logger", "log", "_logger", "LOGGER", "LOG", "warnings", "console"})
LOG_METHODS = frozenset(["debug", "info", "warning", "warn", "error", "exception", "critical", "log", "print"])
# Builtins that cannot write state through their arguments.
PURE_CALLS = frozenset(
    ["len", "str", "int", "float", "bool", "repr", "abs", "min", "max", "sum", "round", "sorted", "list", "tuple", "set", "dict", "frozenset", "isinstance", "issubclass", "type", "id", "hash", "format", "any", "all", "enumerate", "zip", "range", "iter", "next", "reversed", "map", "filter", "getattr", "hasattr", "divmod", "ord", "chr", "bin", "hex", "oct"]
)

# Where a parameter's value goes. "local" (bound to a local variable) is not a sink: the local's own
# uses are recorded against the parameter instead, through taint.
Sink = Literal["state", "call", "lookup", "cond", "log", "message", "other", "local"]


@dataclass(frozen=True)
class StateAccess:
    """One read or write of a canonical state path."""

    path: str
    kind: Literal["read", "write", "mutate", "delete"]
    node: ast.AST
    via: tuple[str, ...] = ()  # helper names the access was reached through

    @property
    def line(self) -> int:
        return getattr(self.node, "lineno", 0)

    @property
    def field(self) -> str:
        """The last named component: `bank_account.scheduled_transactions[*].amount` -> `amount`."""
        return self.path.replace("[*]", "").rsplit(".", 1)[-1]


@dataclass(frozen=True)
class OpaqueUse:
    """A state value used whole, so which of its fields matter cannot be told: compared with `==`/`!=`
    (`pre_environment == post_environment`), passed to a call the analysis cannot follow (external,
    beyond `MAX_HELPER_HOPS`, a helper cycle), or read through a computed attribute name. The tracer
    counts these as exposure rather than as a read of no field."""

    path: str
    how: Literal["compare", "call", "computed"]
    node: ast.AST  # where the use is, inside the helper that makes it
    callee: str = ""  # for "call": what is called, with why it was not followed
    via: tuple[str, ...] = ()


# Builtins that look at a container's shape or hand its elements on, without reading their fields.
SHAPE_CALLS = frozenset(["len", "isinstance", "issubclass", "type", "id", "bool", "iter", "next", "enumerate",
                         "reversed", "zip", "range", "any", "all", "hasattr", "getattr", "filter", "map", "list",
                         "tuple", "set", "frozenset", "sorted", "sum", "min", "max", "abs", "round", "int", "float"])
# Methods on a state container that read it like an attribute access would.
READ_METHODS = frozenset(["get", "keys", "values", "items", "copy", "count", "index"])


@dataclass
class ParamInfo:
    name: str
    annotation: ast.expr | None
    default: ast.expr | None
    has_default: bool
    node: ast.arg
    state_root: str | None = None  # canonical prefix when this parameter is injected state


@dataclass
class FunctionSummary:
    """What one function does with state and with its parameters."""

    qualname: str
    node: ast.FunctionDef | ast.AsyncFunctionDef
    params: list[ParamInfo]
    reads: list[StateAccess] = field(default_factory=list)
    writes: list[StateAccess] = field(default_factory=list)
    # parameter name -> sinks it flows into, each with the node where it does
    flows: dict[str, list[tuple[Sink, ast.AST]]] = field(default_factory=dict)
    returns: list[ast.Return] = field(default_factory=list)
    return_paths: set[str] = field(default_factory=set)  # state paths the function returns
    # ids of statements that write state (directly or through a helper), for path reasoning
    writing_nodes: set[int] = field(default_factory=set)
    # helpers this function reaches by name (transitively, within MAX_HELPER_HOPS), in call order
    helpers: list[ast.FunctionDef | ast.AsyncFunctionDef] = field(default_factory=list)
    opaque: list[OpaqueUse] = field(default_factory=list)  # state used whole (see OpaqueUse)
    complete: bool = True  # False for the stand-in returned when a helper cycle reaches back here

    @property
    def name(self) -> str:
        return self.node.name

    @property
    def writes_state(self) -> bool:
        return bool(self.writes)

    def param(self, name: str) -> ParamInfo | None:
        return next((p for p in self.params if p.name == name), None)

    def sinks(self, param: str) -> set[Sink]:
        return {s for s, _ in self.flows.get(param, [])}

    def referenced_paths(self, *, include_logs: bool = False) -> set[str]:
        return {a.path for a in self.reads if include_logs or not _in_log(a)} | {a.path for a in self.writes}


def _in_log(access: StateAccess) -> bool:
    return bool(getattr(access.node, "_toollint_in_log", False))


@dataclass
class ModuleAnalysis:
    tools: list[ToolInfo]
    summaries: dict[str, FunctionSummary]  # by tool qualname
    index: FunctionIndex

    def summary(self, tool: ToolInfo) -> FunctionSummary:
        return self.summaries[tool.qualname]


class FunctionIndex:
    """Functions and methods of a module, by name, for resolving helpers by bare name."""

    def __init__(self, tree: ast.Module) -> None:
        self.functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = {}
        self.methods: dict[str, dict[str, ast.FunctionDef | ast.AsyncFunctionDef]] = {}
        self.class_of: dict[int, str] = {}
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions[node.name] = node
            elif isinstance(node, ast.ClassDef):
                meths = self.methods.setdefault(node.name, {})
                for item in node.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        meths[item.name] = item
                        self.class_of[id(item)] = node.name
        self.aliases = type_aliases(tree)
        self._cache: dict[tuple[int, tuple[tuple[str, str], ...]], FunctionSummary] = {}
        self.module_state: dict[str, str] = {}

    def resolve(
        self, call: ast.Call, cls: str | None, types: dict[str, str] | None = None
    ) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """The function a call reaches, by bare name: `f()`, `self.m()`, `Cls.m()`, `param.m()` when
        the parameter's annotation names a class of this module."""
        func = call.func
        if isinstance(func, ast.Name):
            return self.functions.get(func.id)
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            if func.value.id in ("self", "cls") and cls:
                return self.methods.get(cls, {}).get(func.attr)
            owner_type = (types or {}).get(func.value.id)
            if owner_type in self.methods:
                return self.methods[owner_type].get(func.attr)
            if func.value.id in self.methods:  # Class.static_helper(...)
                return self.methods[func.value.id].get(func.attr)
        return None


def call_name(call: ast.Call) -> str:
    """Dotted name of what is called, as far as it is syntactic: `logger.info`, `print`."""
    parts: list[str] = []
    f: ast.expr = call.func
    while isinstance(f, ast.Attribute):
        parts.append(f.attr)
        f = f.value
    if isinstance(f, ast.Name):
        parts.append(f.id)
    return ".".join(reversed(parts))


def is_log_call(call: ast.Call) -> bool:
    func = call.func
    if isinstance(func, ast.Name):
        return func.id in LOG_FUNCS
    if isinstance(func, ast.Attribute):
        root = func.value
        while isinstance(root, ast.Attribute):
            root = root.value
        owner = root.id if isinstance(root, ast.Name) else ""
        if func.attr in LOG_METHODS and (owner in LOG_OBJECTS or owner.lower().endswith("logger")):
            return True
        if owner in ("sys",) and func.attr == "write":
            return True
    return False


def is_format_call(call: ast.Call) -> bool:
    return isinstance(call.func, ast.Attribute) and call.func.attr in ("format", "format_map", "join")


def chain_keys(node: ast.expr) -> Iterator[ast.expr]:
    """Subscript keys and call arguments along an access chain: `db.users[uid].cards.get(cid)`
    yields `uid` and `cid`. They select which state is touched, so they are real uses."""
    while True:
        if isinstance(node, ast.Subscript):
            yield node.slice
            node = node.value
        elif isinstance(node, ast.Attribute):
            node = node.value
        elif isinstance(node, ast.Call):
            yield from node.args
            yield from (kw.value for kw in node.keywords)
            node = node.func
        else:
            return


def chain_base(node: ast.expr) -> ast.expr:
    """What an access chain starts from: `[...][-1].amount` -> the list comprehension."""
    while True:
        if isinstance(node, (ast.Attribute, ast.Subscript)):
            node = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            node = node.func.value
        else:
            return node


def names_in(node: ast.AST) -> Iterator[ast.Name]:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load):
            yield sub


class _Summariser:
    """Walks one function body once, keeping aliases (locals bound to state) and taint (locals
    derived from parameters) in statement order."""

    def __init__(
        self,
        fn: ast.FunctionDef | ast.AsyncFunctionDef,
        roots: dict[str, str],
        index: FunctionIndex,
        cls: str | None,
        hops: int,
        via: tuple[str, ...],
    ) -> None:
        self.fn = fn
        self.index = index
        self.cls = cls
        self.hops = hops
        self.via = via
        self.aliases: dict[str, str] = dict(index.module_state)
        self.aliases.update(roots)
        self.params = _params(fn, roots)
        # Parameter types, so `inbox.send_email(...)` resolves to `Inbox.send_email` in this module.
        self.types = {
            p.name: t for p in self.params if (t := annotated_class(resolve_annotation(p.annotation, index.aliases)))
        }
        self.param_names = {p.name for p in self.params if p.state_root is None and p.name not in roots}
        self.taint: dict[str, set[str]] = {p: {p} for p in self.param_names}
        qual = f"{cls}.{fn.name}" if cls else fn.name
        self.summary = FunctionSummary(qual, fn, self.params, flows={p: [] for p in self.param_names})

    # -- paths -----------------------------------------------------------------------------
    def path(self, expr: ast.expr) -> str | None:
        """The canonical state path an expression denotes, or None when it is not state."""
        if isinstance(expr, ast.Name):
            return self.aliases.get(expr.id)
        if isinstance(expr, ast.Attribute):
            base = self.path(expr.value)
            if base is None:
                return None
            return f"{base}.{expr.attr}" if base else expr.attr
        if isinstance(expr, ast.Subscript):
            base = self.path(expr.value)
            return None if base is None else f"{base}[*]"
        if isinstance(expr, ast.Call):
            return self._call_path(expr)
        if isinstance(expr, (ast.GeneratorExp, ast.ListComp, ast.SetComp)):
            # A filter over a collection yields its elements: treat it as the collection.
            gen = expr.generators[0]
            elt = expr.elt
            if isinstance(elt, ast.Name) and isinstance(gen.target, ast.Name) and elt.id == gen.target.id:
                return self.path(gen.iter)
            return None
        if isinstance(expr, ast.BoolOp):  # `x or default`
            return next((p for p in map(self.path, expr.values) if p is not None), None)
        if isinstance(expr, ast.IfExp):
            return self.path(expr.body) or self.path(expr.orelse)
        if isinstance(expr, ast.Await):
            return self.path(expr.value)
        return None

    def _call_path(self, call: ast.Call) -> str | None:
        func = call.func
        if isinstance(func, ast.Name) and func.id == "next" and call.args:
            coll = self.path(call.args[0])
            return None if coll is None else f"{coll}[*]"
        if isinstance(func, ast.Name) and func.id == "getattr" and len(call.args) >= 2:
            base = self.path(call.args[0])
            name = call.args[1]
            if base is not None and isinstance(name, ast.Constant) and isinstance(name.value, str):
                return f"{base}.{name.value}" if base else name.value
            return None
        if isinstance(func, ast.Attribute):
            base = self.path(func.value)
            if base is not None:
                if func.attr in ("get", "pop", "setdefault"):
                    return f"{base}[*]"
                if func.attr in ("values", "copy", "keys"):
                    return base
        helper = self.index.resolve(call, self.cls, self.types)
        if helper is not None and self.hops < MAX_HELPER_HOPS:
            sub = self._helper_summary(helper, call)
            if sub is not None and len(sub.return_paths) == 1:
                return next(iter(sub.return_paths))
        return None

    def iter_element(self, iter_expr: ast.expr, target: ast.expr) -> None:
        """Bind loop/comprehension targets to the elements of a state collection."""
        if isinstance(iter_expr, ast.Call) and isinstance(iter_expr.func, ast.Attribute) and (
            iter_expr.func.attr == "items"
        ):
            base = self.path(iter_expr.func.value)
            if base is not None and isinstance(target, ast.Tuple) and len(target.elts) == 2:
                value = target.elts[1]
                if isinstance(value, ast.Name):
                    self.aliases[value.id] = f"{base}[*]"
            return
        coll = self.path(iter_expr)
        if coll is not None and isinstance(target, ast.Name):
            self.aliases[target.id] = f"{coll}[*]"

    # -- helpers ---------------------------------------------------------------------------
    def _helper_summary(self, helper: ast.FunctionDef | ast.AsyncFunctionDef, call: ast.Call) -> FunctionSummary | None:
        sub = self._summarize_helper(helper, call)
        known = {id(h) for h in self.summary.helpers}
        for h in [helper, *(sub.helpers if sub is not None else [])]:
            if id(h) not in known and h is not self.fn:
                self.summary.helpers.append(h)
                known.add(id(h))
        return sub

    def _summarize_helper(
        self, helper: ast.FunctionDef | ast.AsyncFunctionDef, call: ast.Call
    ) -> FunctionSummary | None:
        roots: dict[str, str] = {}
        args = helper.args.posonlyargs + helper.args.args
        offset = 0
        is_method = id(helper) in self.index.class_of
        if is_method and args and args[0].arg in ("self", "cls"):
            # `self.helper()` shares our self; `inbox.send_email()` binds self to `inbox`'s path.
            owner = self.path(call.func.value) if isinstance(call.func, ast.Attribute) else None
            if owner is not None:
                roots[args[0].arg] = owner
            offset = 1
        for i, arg in enumerate(call.args):
            if i + offset < len(args) and not isinstance(arg, ast.Starred):
                p = self.path(arg)
                if p is not None:
                    roots[args[i + offset].arg] = p
        for kw in call.keywords:
            if kw.arg:
                p = self.path(kw.value)
                if p is not None:
                    roots[kw.arg] = p
        cls = self.index.class_of.get(id(helper))
        return summarize(helper, roots, self.index, cls=cls, hops=self.hops + 1, via=self.via + (helper.name,))

    # -- recording ---------------------------------------------------------------------------
    def record(self, path: str, kind: Literal["read", "write", "mutate", "delete"], node: ast.AST,
               via: tuple[str, ...] = ()) -> None:
        acc = StateAccess(path, kind, node, via or self.via)
        (self.summary.reads if kind == "read" else self.summary.writes).append(acc)

    def opaque_use(self, path: str, how: Literal["compare", "call", "computed"], node: ast.AST,
                   callee: str = "") -> None:
        self.summary.opaque.append(OpaqueUse(path, how, node, callee, self.via))

    def compare_whole(self, node: ast.Compare) -> None:
        """`a == b` on state compares every field below it (a comparison with None is an existence check)."""
        if not any(isinstance(op, (ast.Eq, ast.NotEq)) for op in node.ops):
            return
        operands = [node.left, *node.comparators]
        if any(isinstance(o, ast.Constant) and o.value is None for o in operands):
            return
        for operand in operands:
            p = self.path(operand)
            if p is not None:
                self.opaque_use(p, "compare", operand)

    def flow(self, expr: ast.AST, sink: Sink) -> None:
        for name in names_in(expr):
            for param in self.taint.get(name.id, ()):
                self.summary.flows[param].append((sink, name))

    def tainted_by(self, expr: ast.AST) -> set[str]:
        out: set[str] = set()
        for name in names_in(expr):
            out |= self.taint.get(name.id, set())
        return out

    # -- walking -----------------------------------------------------------------------------
    def run(self) -> FunctionSummary:
        self.block(self.fn.body)
        return self.summary

    def block(self, stmts: Iterable[ast.stmt]) -> bool:
        wrote = False
        for stmt in stmts:
            before = len(self.summary.writes)
            self.stmt(stmt)
            if len(self.summary.writes) > before:
                self.summary.writing_nodes.add(id(stmt))
                wrote = True
        return wrote

    def stmt(self, s: ast.stmt) -> None:
        if isinstance(s, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            value = s.value
            targets = s.targets if isinstance(s, ast.Assign) else [s.target]
            if value is not None:
                to_locals = all(isinstance(t, (ast.Name, ast.Tuple, ast.List)) for t in targets)
                self.expr(value, "local" if to_locals else "other")
            for t in targets:
                self.assign(t, value, s)
        elif isinstance(s, ast.Delete):
            for t in s.targets:
                p = self.path(t)
                if p is not None and not isinstance(t, ast.Name):
                    self.record(p, "delete", s)
                    for key in chain_keys(t):
                        self.expr(key, "state")
                else:
                    self.expr(t, "other")
        elif isinstance(s, ast.Expr):
            self.expr(s.value, "other")
        elif isinstance(s, ast.Return):
            self.summary.returns.append(s)
            if s.value is not None:
                p = self.path(s.value)
                if p is not None:
                    self.summary.return_paths.add(p)
                self.expr(s.value, "message" if _message_shaped(s.value) else "other", top=True)
        elif isinstance(s, (ast.If, ast.While)):
            self.cond(s.test)
            self.block_marked(s.body)
            self.block_marked(s.orelse)
        elif isinstance(s, (ast.For, ast.AsyncFor)):
            self.expr(s.iter, "lookup")
            self.iter_element(s.iter, s.target)
            for name in names_in(s.iter):
                if name.id in self.taint and isinstance(s.target, ast.Name):
                    self.taint[s.target.id] = set(self.taint[name.id])
            self.block_marked(s.body)
            self.block_marked(s.orelse)
        elif isinstance(s, (ast.With, ast.AsyncWith)):
            for item in s.items:
                self.expr(item.context_expr, "other")
            self.block_marked(s.body)
        elif isinstance(s, ast.Try) or type(s).__name__ == "TryStar":
            self.block_marked(s.body)  # type: ignore[attr-defined]
            for h in s.handlers:  # type: ignore[attr-defined]
                self.block_marked(h.body)
            self.block_marked(s.orelse)  # type: ignore[attr-defined]
            self.block_marked(s.finalbody)  # type: ignore[attr-defined]
        elif isinstance(s, ast.Raise):
            if s.exc is not None:
                self.expr(s.exc, "message")
        elif isinstance(s, ast.Assert):
            self.cond(s.test)
        elif isinstance(s, ast.Match):
            self.expr(s.subject, "cond")
            for case in s.cases:
                self.block_marked(case.body)
        elif isinstance(s, ast.Global):
            for global_name in s.names:
                self.aliases.setdefault(global_name, global_name)
        # nested defs, imports, pass, break, continue: nothing to record

    def block_marked(self, stmts: list[ast.stmt]) -> None:
        self.block(stmts)

    def cond(self, test: ast.expr) -> None:
        self.expr(test, "cond")

    def assign(self, target: ast.expr, value: ast.expr | None, stmt: ast.stmt) -> None:
        if isinstance(target, ast.Name):
            if target.id in self.aliases and target.id in self.index.module_state and isinstance(stmt, ast.AugAssign):
                self.record(self.aliases[target.id], "write", stmt)
                if value is not None:
                    self.flow(value, "state")
                return
            # A local: follow what it holds.
            p = self.path(value) if value is not None else None
            if p is not None:
                self.aliases[target.id] = p
            else:
                self.aliases.pop(target.id, None)
            self.taint[target.id] = self.tainted_by(value) if value is not None else set()
            if isinstance(stmt, ast.AugAssign):
                self.taint[target.id] |= {target.id} & self.param_names
            return
        if isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                self.assign(elt, None, stmt)
                if value is not None and isinstance(elt, ast.Name):
                    self.taint[elt.id] = self.tainted_by(value)
            return
        p = self.path(target)
        if p is not None:
            self.record(p, "write", stmt)
            if value is not None:
                self.flow(value, "state")
            for key in chain_keys(target):
                self.expr(key, "state")
        else:
            self.expr(target, "other")

    def expr(self, node: ast.expr, ctx: Sink, top: bool = False) -> None:
        """Record reads and parameter sinks in an expression evaluated in context `ctx`."""
        if isinstance(node, ast.Call):
            self.call(node, ctx)
            return
        if isinstance(node, (ast.Attribute, ast.Subscript)):
            p = self.path(node)
            if p is not None:
                self.record(p, "read", node)
                if ctx == "log":
                    setattr(node, "_toollint_in_log", True)  # noqa: B010 -- marks the read as log-only
                for key in chain_keys(node):
                    self.expr(key, "lookup" if ctx not in ("log", "message") else ctx)
                base = chain_base(node)
                if isinstance(base, (ast.GeneratorExp, ast.ListComp, ast.SetComp)):
                    # `[t for t in coll if t.subject == x][-1].amount`: the filter reads state too.
                    self.expr(base, "lookup" if ctx not in ("log", "message") else ctx)
                return
            if isinstance(node, ast.Subscript):
                self.expr(node.value, ctx)
                self.expr(node.slice, "lookup" if ctx not in ("log", "message") else ctx)
                return
            self.expr(node.value, ctx)
            return
        if isinstance(node, ast.Name):
            if ctx != "local":
                for param in self.taint.get(node.id, ()):
                    self.summary.flows[param].append((ctx, node))
            return
        if isinstance(node, (ast.GeneratorExp, ast.ListComp, ast.SetComp, ast.DictComp)):
            for gen in node.generators:
                self.expr(gen.iter, ctx if ctx in ("log", "message") else "lookup")
                self.iter_element(gen.iter, gen.target)
                for cond in gen.ifs:
                    self.expr(cond, ctx if ctx in ("log", "message") else "cond")
            if isinstance(node, ast.DictComp):
                self.expr(node.key, ctx)
                self.expr(node.value, ctx)
            else:
                self.expr(node.elt, ctx)
            return
        if isinstance(node, ast.Compare):
            self.compare_whole(node)
        if isinstance(node, (ast.Compare, ast.BoolOp, ast.UnaryOp)) and ctx in ("other", "local"):
            ctx = "cond"
        if isinstance(node, ast.Lambda):
            return
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                self.expr(child, ctx)
            elif isinstance(child, ast.keyword):
                self.expr(child.value, ctx)
            elif isinstance(child, ast.comprehension):
                self.expr(child.iter, ctx)

    def call(self, call: ast.Call, ctx: Sink) -> None:
        func = call.func
        args: list[ast.expr] = list(call.args) + [kw.value for kw in call.keywords]
        if is_log_call(call):
            for a in args:
                self.expr(a, "log")
            return
        if is_format_call(call) and ctx in ("message", "log"):
            self.expr(func, ctx)
            for a in args:
                self.expr(a, ctx)
            return
        self.element_lambdas(args)
        if isinstance(func, ast.Attribute):
            owner = self.path(func.value)
            unresolved_writer = (
                owner is not None
                and func.attr.split("_", 1)[0] in WRITE_VERBS
                and self.index.resolve(call, self.cls, self.types) is None
            )
            if owner is not None and (func.attr in MUTATORS or unresolved_writer):
                self.record(owner, "mutate", call)
                for a in args:
                    self.expr(a, "state")
                return
            if owner is None and isinstance(func.value, ast.Name) and func.value.id == "setattr":
                pass
            self.expr(func.value, "other" if ctx != "log" else "log")
        if isinstance(func, ast.Name) and func.id == "setattr" and len(call.args) >= 3:
            base = self.path(call.args[0])
            name = call.args[1]
            if base is not None:
                attr = name.value if isinstance(name, ast.Constant) and isinstance(name.value, str) else "*"
                self.record(f"{base}.{attr}" if base else attr, "write", call)
                self.expr(call.args[2], "state")
                return
        helper = self.index.resolve(call, self.cls, self.types)
        if helper is not None and self.hops < MAX_HELPER_HOPS:
            sub = self._helper_summary(helper, call)
            if sub is not None and not sub.complete:
                self.opaque_args(call, f"{helper.name} (helper cycle)")
            if sub is not None:
                self.summary.opaque.extend(sub.opaque)
                for acc in sub.reads:
                    self.summary.reads.append(StateAccess(acc.path, acc.kind, call if ctx != "log" else acc.node, acc.via))
                for acc in sub.writes:
                    self.record(acc.path, acc.kind, call, acc.via)
                sink: Sink = "state" if sub.writes else ("lookup" if sub.reads else "call")
                if ctx in ("log", "message") and not sub.writes:
                    sink = ctx
                for a in args:
                    self.expr(a, sink)
                return
        if isinstance(func, ast.Name) and func.id == "getattr" and len(call.args) >= 2:
            base = self.path(call.args[0])
            name_arg = call.args[1]
            if base is not None and not (isinstance(name_arg, ast.Constant) and isinstance(name_arg.value, str)):
                self.opaque_use(base, "computed", call)
        if helper is not None:  # resolvable, but the hop budget is spent
            self.opaque_args(call, f"{helper.name} (beyond {MAX_HELPER_HOPS} helper hops)")
        elif call_name(call) not in SHAPE_CALLS and not (isinstance(func, ast.Attribute) and func.attr in READ_METHODS):
            self.opaque_args(call, call_name(call) or "<computed call>")
        pure = call_name(call) in PURE_CALLS or (isinstance(func, ast.Name) and func.id[:1].isupper())
        if ctx in ("log", "message", "local") and pure:
            sink = ctx
        elif ctx == "cond" and pure:
            sink = "cond"
        elif pure:
            sink = "other"
        else:
            sink = "call"  # an unresolved call may write state: a parameter passed to it is consumed
        for a in args:
            self.expr(a, sink)

    def element_lambdas(self, args: list[ast.expr]) -> None:
        """`find(coll, lambda t: t.subject == x)`, `sorted(coll, key=lambda t: t.date)`: a one-argument
        lambda passed next to a state collection is applied to its elements; read its body that way."""
        lambdas = [a for a in args if isinstance(a, ast.Lambda) and len(a.args.args) == 1]
        if not lambdas:
            return
        coll = next((p for a in args if not isinstance(a, ast.Lambda) and (p := self.path(a)) is not None), None)
        if coll is None:
            return
        for lam in lambdas:
            name = lam.args.args[0].arg
            saved = self.aliases.get(name)
            self.aliases[name] = f"{coll}[*]"
            self.expr(lam.body, "cond")
            if saved is None:
                self.aliases.pop(name, None)
            else:
                self.aliases[name] = saved

    def opaque_args(self, call: ast.Call, callee: str) -> None:
        """State handed to a call that is not followed: its arguments and, for `obj.m()`, `obj`."""
        receiver = [call.func.value] if isinstance(call.func, ast.Attribute) else []
        for a in [*receiver, *call.args, *(kw.value for kw in call.keywords)]:
            p = self.path(a) if not isinstance(a, ast.Starred) else None
            if p is not None:
                self.opaque_use(p, "call", a, callee)


def _message_shaped(value: ast.expr) -> bool:
    """A returned value that is text for the agent: a string, f-string, format, or a container of them."""
    if isinstance(value, ast.Constant):
        return isinstance(value.value, str)
    if isinstance(value, ast.JoinedStr):
        return True
    if isinstance(value, ast.BinOp) and isinstance(value.op, (ast.Add, ast.Mod)):
        return _message_shaped(value.left) or _message_shaped(value.right)
    if isinstance(value, ast.Call):
        return is_format_call(value) or call_name(value) == "str"
    if isinstance(value, ast.Dict):
        return any(v is not None and (_message_shaped(v) or isinstance(v, ast.Name)) for v in value.values)
    if isinstance(value, (ast.Tuple, ast.List)):
        return any(_message_shaped(v) for v in value.elts)
    return False


def _params(fn: ast.FunctionDef | ast.AsyncFunctionDef, roots: dict[str, str]) -> list[ParamInfo]:
    a = fn.args
    positional = a.posonlyargs + a.args
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    out = [ParamInfo(p.arg, p.annotation, d, d is not None, p, roots.get(p.arg)) for p, d in zip(positional, defaults)]
    out += [ParamInfo(p.arg, p.annotation, d, d is not None, p, roots.get(p.arg)) for p, d in zip(a.kwonlyargs, a.kw_defaults)]
    return out


def summarize(
    fn: ast.FunctionDef | ast.AsyncFunctionDef,
    roots: dict[str, str],
    index: FunctionIndex,
    *,
    cls: str | None = None,
    hops: int = 0,
    via: tuple[str, ...] = (),
) -> FunctionSummary:
    """Summarise `fn` given which of its names are state roots (name -> canonical prefix).

    The tracer calls this on grader functions with roots such as
    `{"pre_environment": "", "post_environment": ""}`.
    """
    key = (id(fn), tuple(sorted(roots.items())))
    cached = index._cache.get(key)
    if cached is not None:
        return cached
    # Guard against recursion: a provisional empty summary while this one is computed.
    provisional = FunctionSummary(fn.name, fn, _params(fn, roots), complete=False)
    index._cache[key] = provisional
    result = _Summariser(fn, roots, index, cls, hops, via).run()
    index._cache[key] = result
    return result


def analyze_module(tree: ast.Module, settings: Settings | None = None, module_name: str = "") -> ModuleAnalysis:
    settings = settings or Settings()
    index = FunctionIndex(tree)
    index.module_state = {name: name for name in module_state_names(tree)}
    tools = discover_tools(tree, settings, module_name)
    summaries = {t.qualname: summarize(t.node, t.roots, index, cls=t.class_name) for t in tools}
    return ModuleAnalysis(tools, summaries, index)


# -- questions the rules ask of a summary --------------------------------------------------------

def is_writer(tool: ToolInfo, summary: FunctionSummary) -> bool:
    """A tool writes state when it is declared a writer or when its body (or a helper) writes."""
    if tool.declared_writer is False:
        return False
    return bool(tool.declared_writer) or summary.writes_state


def claims_to_write(tool: ToolInfo) -> bool:
    """A tool that says it writes: declared a writer, or, undeclared, named with a writing verb
    (`send_money`, `update_user`) while it has state within reach. Such a tool that writes nothing
    is the phantom TL101 looks for."""
    if tool.declared_writer is not None:
        return tool.declared_writer
    return bool(tool.roots) and tool.name.lstrip("_").split("_", 1)[0] in WRITE_VERBS


def _terminates(stmts: list[ast.stmt]) -> bool:
    return bool(stmts) and isinstance(stmts[-1], (ast.Raise, ast.Return, ast.Continue, ast.Break))


def definitely_writes(stmts: list[ast.stmt], summary: FunctionSummary) -> bool:
    """Every path through `stmts` that falls through to the next statement wrote state."""
    for s in stmts:
        if statement_definitely_writes(s, summary):
            return True
        if isinstance(s, (ast.Raise, ast.Return)):
            return False
    return False


def _writes_or_leaves(stmts: list[ast.stmt], summary: FunctionSummary) -> bool:
    return definitely_writes(stmts, summary) or _terminates(stmts)


def statement_definitely_writes(s: ast.stmt, summary: FunctionSummary) -> bool:
    if id(s) not in summary.writing_nodes:
        return False
    if isinstance(s, ast.If):
        both = _writes_or_leaves(s.body, summary) and _writes_or_leaves(s.orelse, summary)
        return both and not (_terminates(s.body) and _terminates(s.orelse))
    if isinstance(s, (ast.With, ast.AsyncWith)):
        return definitely_writes(s.body, summary)
    if isinstance(s, ast.Try):
        # A handler that does not re-raise swallows the failure of the write.
        handlers_ok = all(_writes_or_leaves(h.body, summary) for h in s.handlers)
        return handlers_ok and (definitely_writes(s.body, summary) or definitely_writes(s.finalbody, summary))
    # A loop may run zero times; a match may take a case that does not write.
    return not isinstance(s, (ast.For, ast.AsyncFor, ast.While, ast.Match))


def write_guaranteed_before(stmts: list[ast.stmt], target: ast.stmt, summary: FunctionSummary) -> bool | None:
    """Whether every path from the start of `stmts` to `target` wrote state; None if not in `stmts`."""
    guaranteed = False
    cover = _WriteCover()
    for s in stmts:
        if s is target:
            return guaranteed
        if contains(s, target):
            inner: bool | None = None
            if isinstance(s, ast.Try):
                in_body = write_guaranteed_before(s.body, target, summary)
                if in_body is not None:
                    inner = in_body
                else:
                    for block in [h.body for h in s.handlers] + [s.orelse, s.finalbody]:
                        found = write_guaranteed_before(block, target, summary)
                        if found is not None:
                            inner = found or (block is s.orelse and definitely_writes(s.body, summary))
                            break
            else:
                for block in _blocks(s):
                    found = write_guaranteed_before(block, target, summary)
                    if found is not None:
                        inner = found
                        break
            return guaranteed or bool(inner)
        guaranteed = guaranteed or statement_definitely_writes(s, summary) or cover.step(s, summary)
    return None


def _literal(test: ast.expr) -> str | None:
    """A condition in a canonical text form, when it is a single comparison or truth test."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _literal(test.operand)
        return None if inner is None else _negate_literal(inner)
    if isinstance(test, (ast.Compare, ast.Name, ast.Attribute, ast.Subscript, ast.Call)):
        return ast.unparse(test)
    return None


_NEGATED_OPS = [(" is not ", " is "), (" != ", " == "), (" not in ", " in ")]


def _negate_literal(text: str) -> str:
    for positive, negative in _NEGATED_OPS:
        if positive in text:
            return text.replace(positive, negative, 1)
        if negative in text:
            return text.replace(negative, positive, 1)
    return text[4:] if text.startswith("not ") else f"not {text}"


def _negation(test: ast.expr) -> frozenset[str] | None:
    """`not test` as a disjunction of literals: `a is None and b is None` -> {a is not None, b is not None}."""
    parts = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
    literals = [_literal(p) for p in parts]
    if any(lit is None for lit in literals):
        return None
    return frozenset(_negate_literal(lit) for lit in literals if lit is not None)


class _WriteCover:
    """Guards that leave, followed by conditional writes that together cover what the guards let
    through: `if a is None and b is None: raise` then `if a is not None: write` and
    `if b is not None: write` guarantees a write although each write alone is conditional."""

    def __init__(self) -> None:
        self.known: list[frozenset[str]] = []  # disjunctions that hold after the guards seen so far
        self.written_when: set[str] = set()  # conditions under which some write definitely happened

    def step(self, s: ast.stmt, summary: FunctionSummary) -> bool:
        if isinstance(s, ast.If) and not s.orelse:
            if _terminates(s.body):
                negation = _negation(s.test)
                if negation is not None:
                    self.known.append(negation)
            elif definitely_writes(s.body, summary):
                literal = _literal(s.test)
                if literal is not None:
                    self.written_when.add(literal)
        return any(disjunction <= self.written_when for disjunction in self.known)


def _blocks(s: ast.stmt) -> list[list[ast.stmt]]:
    if isinstance(s, ast.Match):
        return [c.body for c in s.cases]
    return [b for b in (getattr(s, "body", None), getattr(s, "orelse", None), getattr(s, "finalbody", None))
            if isinstance(b, list)]


def contains(outer: ast.AST, target: ast.AST) -> bool:
    """`target` is `outer` or a node inside it (by identity)."""
    return any(n is target for n in ast.walk(outer))


def function_nodes(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[ast.AST]:
    """Nodes of a function body, not descending into nested functions, classes or lambdas."""
    stack: list[ast.AST] = list(fn.body)
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                stack.append(child)
