"""Mutation operators that inject known defects into copies of real tool code, and the
semantics-preserving rewrites used as negative controls.

Each operator enumerates its applicable *sites* in a module deterministically (file order), and each
site yields one mutant: the whole mutated module source plus a record (operator, defect class, the
mutated function, the tools it affects, the original line). Sampling with a fixed seed and a budget
picks a reproducible subset (`sample`).

The analysis is deliberately small and syntactic (libcst for positions and structure): which
functions are tools (the shared analysis's discovery: injected `Annotated[T, Depends("...")]`
parameters, tool decorators, ...), which of their parameters are state roots, which statements
write state (assign, augment, delete or a mutating method call on something reachable from a root
or from a local bound to an element of state), and writer helper methods of classes in the same
module. Edits are applied to the text, so every line outside a mutated region keeps its number.
"""

from __future__ import annotations

import ast
import random
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import cast

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from toollint.analysis import (
    FunctionIndex,
    FunctionSummary,
    ParamInfo,
    analyze_module,
    annotated_class,
    base_annotation,
    function_params,
    resolve_annotation,
    summarize,
    type_aliases,
)
from toollint.analysis.vocabulary import (
    FALSY_BY_TYPE,
    LOG_FUNCS,
    LOG_METHODS,
    MUTATORS,
    PURE_CALLS,
    PURE_METHODS,
    SCALAR_FALSY_TYPES,
    is_write_verb,
)
from toollint.settings import Settings

# The six classes of METHOD.md, as kebab-case names.
PARTIAL_EFFECT = "partial-effect"
IGNORED_ARGUMENT = "ignored-argument"
UNENFORCED_PRECONDITION = "unenforced-precondition"
PHANTOM_EFFECT = "phantom-effect"
RESET_LEAK = "reset-leak"
FRAME_VIOLATION = "frame-violation"
DEFECT_CLASSES = (
    PARTIAL_EFFECT,
    IGNORED_ARGUMENT,
    UNENFORCED_PRECONDITION,
    PHANTOM_EFFECT,
    RESET_LEAK,
    FRAME_VIOLATION,
)
CONTROL = "control"

# Types whose falsy value is a legal argument: the shared legal-falsy table's.
FALSY_LEGAL = frozenset(FALSY_BY_TYPE)
# Constants an ignored argument is replaced with, by base annotation. Non-falsy so that the mutant
# is not accidentally equivalent to a truth-tested original.
CONSTANT_FOR = {
    "str": '"toollint-mutant"',
    "int": "7",
    "float": "7.5",
    "bool": "True",
    "list": "[]",
    "dict": "{}",
}


@dataclass(frozen=True)
class Mutant:
    """One mutated copy of a module. `line` is the mutated site's line in the original source."""

    id: str
    operator: str
    defect_class: str  # one of DEFECT_CLASSES, or CONTROL for a negative control
    function: str  # qualified name of the mutated function ("update_x" or "Calendar.create_event")
    tools: tuple[str, ...]  # tools whose behaviour the mutation changes (the function itself, or its callers)
    line: int
    description: str
    source: str
    static_only: bool = False  # a shape for a static rule that no probe can tell apart at runtime
    argument: str | None = None  # the argument an ignored-argument mutant stops honouring


@dataclass
class Target:
    """A function the operators may mutate: a tool, or a writer helper method a tool calls."""

    qualname: str
    node: cst.FunctionDef
    class_name: str | None
    is_tool: bool
    roots: dict[str, str]  # state-root parameter -> class name of its state ("" if unknown)
    params: list[ParamInfo]  # non-root parameters
    aliases: set[str] = field(default_factory=set)  # locals bound to an element of state
    tools: tuple[str, ...] = ()
    # lines where the shared analysis records a state write (directly or through a helper)
    write_lines: frozenset[int] | None = None  # None: not summarised, judge by shape


@dataclass
class _Stmt:
    node: cst.BaseStatement
    block: Sequence[cst.BaseStatement]  # the body the statement sits in


@dataclass(frozen=True)
class _Edit:
    """Replace the text between 1-based line / 0-based column positions (end exclusive)."""

    line: int
    col: int
    end_line: int
    end_col: int
    text: str


class ModuleFacts:
    """What the operators need to know about one module, computed once."""

    def __init__(
        self, source: str, path: str = "<module>", settings: Settings | None = None, module_name: str = ""
    ) -> None:
        self.source = source
        self.path = path
        self.wrapper = MetadataWrapper(cst.parse_module(source))
        self.module = self.wrapper.module
        self.positions = self.wrapper.resolve(PositionProvider)
        self.lines = source.splitlines(keepends=True)
        self.classes: dict[str, dict[str, str]] = {}  # class -> field -> annotation
        self.class_methods: dict[str, dict[str, cst.FunctionDef]] = {}
        self.module_names: set[str] = set()  # names bound at module level
        self._scan_module()
        self.targets = self._find_targets(settings or Settings(), module_name)

    # -- module level ---------------------------------------------------------------------------

    def code(self, node: cst.CSTNode) -> str:
        return self.module.code_for_node(node).strip()

    def pos(self, node: cst.CSTNode) -> CodeRange:
        return self.positions[node]

    def _scan_module(self) -> None:
        for stmt in self.module.body:
            if isinstance(stmt, cst.ClassDef):
                fields: dict[str, str] = {}
                methods: dict[str, cst.FunctionDef] = {}
                for item in stmt.body.body:
                    if isinstance(item, cst.SimpleStatementLine):
                        for small in item.body:
                            if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
                                fields[small.target.value] = self.code(small.annotation.annotation)
                    elif isinstance(item, cst.FunctionDef):
                        methods[item.name.value] = item
                self.classes[stmt.name.value] = fields
                self.class_methods[stmt.name.value] = methods
                self.module_names.add(stmt.name.value)
            elif isinstance(stmt, cst.FunctionDef):
                self.module_names.add(stmt.name.value)
            elif isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    targets: list[cst.BaseExpression] = []
                    if isinstance(small, cst.Assign):
                        targets = [t.target for t in small.targets]
                    elif isinstance(small, cst.AnnAssign):
                        targets = [small.target]
                    for t in targets:
                        if isinstance(t, cst.Name):
                            self.module_names.add(t.value)

    def _find_targets(self, settings: Settings, module_name: str) -> list[Target]:
        """Tools as `toollint.discovery` finds them, plus writer helper methods that tools call."""
        tree = ast.parse(self.source)
        aliases = type_aliases(tree)
        defs: dict[str, tuple[cst.FunctionDef, str | None]] = {}
        for stmt in self.module.body:
            if isinstance(stmt, cst.FunctionDef):
                defs[stmt.name.value] = (stmt, None)
            elif isinstance(stmt, cst.ClassDef):
                for item in stmt.body.body:
                    if isinstance(item, cst.FunctionDef):
                        defs[f"{stmt.name.value}.{item.name.value}"] = (item, stmt.name.value)
        tools: list[Target] = []
        analysis = analyze_module(tree, settings, module_name)
        for info in analysis.tools:
            if info.qualname not in defs:
                continue
            root_classes: dict[str, str | None] = {}
            for arg in info.node.args.posonlyargs + info.node.args.args + info.node.args.kwonlyargs:
                if arg.arg in info.roots:
                    ann = resolve_annotation(arg.annotation, aliases)
                    root_classes[arg.arg] = info.class_name if arg.arg == "self" else annotated_class(ann)
            fn, cls = defs[info.qualname]
            t = self._target(fn, cls, {k: v or "" for k, v in root_classes.items()}, analysis.index)
            t.is_tool, t.tools = True, (t.qualname,)
            t.write_lines = _write_lines(analysis.summary(info))
            tools.append(t)
        tool_names = {t.qualname for t in tools}
        helpers: list[Target] = []
        for qual, (fn, cls) in defs.items():
            params = _params(fn)
            if cls is None or qual in tool_names or not params or params[0].name.value != "self":
                continue
            h = self._target(fn, cls, {"self": cls}, analysis.index)
            h.tools = tuple(t.qualname for t in tools if _calls_method(t, fn.name.value))
            helper_node = analysis.index.methods.get(cls, {}).get(fn.name.value)
            if helper_node is not None:
                h.write_lines = _write_lines(summarize(helper_node, {"self": ""}, analysis.index, cls=cls))
            if h.tools and self.writes(h):
                helpers.append(h)
        return tools + helpers

    def _target(self, fn: cst.FunctionDef, class_name: str | None, roots: dict[str, str],
                index: FunctionIndex) -> Target:
        # the same function in the shared analysis (its index holds the module's and classes' defs as here)
        defs = index.methods.get(class_name, {}) if class_name else index.functions
        node = defs.get(fn.name.value)
        params = [p for p in function_params(node) if p.name not in roots] if node is not None else []
        qual = f"{class_name}.{fn.name.value}" if class_name else fn.name.value
        t = Target(qual, fn, class_name, False, roots, params)
        t.aliases = self._aliases(t)
        return t

    def _aliases(self, t: Target) -> set[str]:
        """Locals bound to an element of state (`tx = next(t for t in acct.items if ...)`,
        `e = self.events[k]`)."""
        out: set[str] = set()
        for s in self.statements(t):
            if isinstance(s.node, cst.SimpleStatementLine):
                for small in s.node.body:
                    if isinstance(small, cst.Assign) and len(small.targets) == 1:
                        tgt = small.targets[0].target
                        if isinstance(tgt, cst.Name) and self._is_state_element(small.value, t, out):
                            out.add(tgt.value)
        return out

    def _is_state_element(self, value: cst.BaseExpression, t: Target, aliases: set[str]) -> bool:
        roots = set(t.roots) | aliases
        if isinstance(value, (cst.Attribute, cst.Subscript)):
            return _chain_root(value) in roots
        if (
            isinstance(value, cst.Call)
            and isinstance(value.func, cst.Attribute)
            and value.func.attr.value == "get"
        ):
            return _chain_root(value.func.value) in roots  # `accounts.get(key)`: an element or None
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "next":
            return any(
                _chain_root(n) in roots for n in _walk(value) if isinstance(n, (cst.Attribute, cst.Subscript))
            )
        return False

    # -- statements and writes -----------------------------------------------------------------

    def statements(self, t: Target) -> Iterator[_Stmt]:
        """Every statement of the function body, nested blocks included, in file order."""
        yield from _block_statements(cast(Sequence[cst.BaseStatement], t.node.body.body))

    def is_write(self, stmt: cst.BaseStatement, t: Target) -> bool:
        """A simple statement the shared analysis records a state write on (assignment, deletion,
        mutating or writer call, a helper that writes), or, for a function the analysis did not
        summarise, one of those shapes on something reachable from a state root."""
        if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
            return False
        small = stmt.body[0]
        if not isinstance(small, (cst.Assign, cst.AugAssign, cst.AnnAssign, cst.Del, cst.Expr)):
            return False
        if t.write_lines is not None:
            first, last = self.line_span(stmt)
            return any(first <= line <= last for line in t.write_lines)
        roots = set(t.roots) | t.aliases
        if isinstance(small, cst.Assign):
            if any(
                _chain_root(x.target) in roots and not isinstance(x.target, cst.Name) for x in small.targets
            ):
                return True
            return self._is_writer_call(small.value, t)
        if isinstance(small, (cst.AugAssign, cst.AnnAssign)):
            return not isinstance(small.target, cst.Name) and _chain_root(small.target) in roots
        if isinstance(small, cst.Del):
            return any(_chain_root(x) in roots for x in _del_targets(small.target))
        if isinstance(small, cst.Expr):
            return self._is_writer_call(small.value, t)
        return False

    def _is_writer_call(self, value: cst.BaseExpression, t: Target) -> bool:
        if not isinstance(value, cst.Call) or not isinstance(value.func, cst.Attribute):
            return False
        obj, method = value.func.value, value.func.attr.value
        root = _chain_root(obj)
        if root not in set(t.roots) | t.aliases:
            return False
        if method in MUTATORS:  # the same mutator methods the shared analysis counts as writes
            return True
        if isinstance(obj, cst.Name) and obj.value in t.roots:
            cls = t.roots[obj.value]
            if cls in self.class_methods and method in self.class_methods[cls]:
                helper = Target(
                    f"{cls}.{method}", self.class_methods[cls][method], cls, False, {"self": cls}, []
                )
                helper.aliases = self._aliases(helper)
                return bool(self.writes(helper))
            return is_write_verb(method)  # the analysis's writer verbs, matched on the first word
        return False

    def writes(self, t: Target) -> list[_Stmt]:
        return [s for s in self.statements(t) if self.is_write(s.node, t)]

    def binds_name(self, stmt: cst.BaseStatement) -> bool:
        """Does the statement bind a local name (so deleting it would leave a later use undefined)?"""
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Assign) and any(
                    isinstance(x.target, cst.Name) for x in small.targets
                ):
                    return True
        return False

    # -- text edits ----------------------------------------------------------------------------

    def indent_of(self, line: int) -> str:
        text = self.lines[line - 1]
        return text[: len(text) - len(text.lstrip())]

    def line_span(self, node: cst.CSTNode) -> tuple[int, int]:
        r = self.pos(node)
        return r.start.line, r.end.line

    def replace_lines(self, first: int, last: int, new_lines: list[str]) -> _Edit:
        return _Edit(first, 0, last + 1, 0, "".join(x if x.endswith("\n") else x + "\n" for x in new_lines))

    def replace_node(self, node: cst.CSTNode, text: str) -> _Edit:
        r = self.pos(node)
        return _Edit(r.start.line, r.start.column, r.end.line, r.end.column, text)

    def apply(self, edits: Sequence[_Edit]) -> str:
        lines = self.source.splitlines(keepends=True)
        if lines and not lines[-1].endswith("\n"):
            lines[-1] += "\n"
        lines.append("")  # an edit may end at the line after the last one
        starts = [0]
        for x in lines:
            starts.append(starts[-1] + len(x))
        text = "".join(lines)
        for e in sorted(edits, key=lambda e: (e.line, e.col), reverse=True):
            a = starts[e.line - 1] + e.col
            b = starts[e.end_line - 1] + e.end_col
            text = text[:a] + e.text + text[b:]
        return text


# -- small syntactic helpers ------------------------------------------------------------------------


def _write_lines(summary: FunctionSummary) -> frozenset[int]:
    return frozenset(w.line for w in summary.writes)



def _params(fn: cst.FunctionDef) -> list[cst.Param]:
    p = fn.params
    return [*p.posonly_params, *p.params, *p.kwonly_params]


def _chain_root(expr: cst.BaseExpression) -> str | None:
    while True:
        if isinstance(expr, (cst.Attribute, cst.Subscript)):
            expr = expr.value
        elif isinstance(expr, cst.Call):
            expr = expr.func
        elif isinstance(expr, cst.Name):
            return expr.value
        else:
            return None


def _del_targets(expr: cst.BaseExpression) -> list[cst.BaseExpression]:
    if isinstance(expr, (cst.Tuple, cst.List)):
        return [e.value for e in expr.elements]
    return [expr]


def _walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    yield node
    for child in node.children:
        yield from _walk(child)


def _names_in(node: cst.CSTNode) -> Iterator[cst.Name]:
    """Name nodes that are variable references (not attribute members or keyword-argument names)."""
    if isinstance(node, cst.Attribute):
        yield from _names_in(node.value)
        return
    if isinstance(node, cst.Arg):
        yield from _names_in(node.value)
        return
    if isinstance(node, cst.Name):
        yield node
        return
    if isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
        return
    for child in node.children:
        yield from _names_in(child)


def _names_outside_text(node: cst.CSTNode) -> Iterator[cst.Name]:
    """Like `_names_in`, but not inside an f-string: what a reply computes, not what it echoes."""
    if isinstance(node, cst.FormattedString):
        return
    if isinstance(node, (cst.Attribute, cst.Arg, cst.Name, cst.FunctionDef, cst.Lambda, cst.ClassDef)):
        yield from _names_in(node)
        return
    for child in node.children:
        yield from _names_outside_text(child)


LOG_FUNCTIONS = LOG_FUNCS | LOG_METHODS


def _is_log_call(small: cst.BaseSmallStatement) -> bool:
    """`print(...)`, `logger.info(...)`: an argument read only here is still ignored."""
    if not isinstance(small, cst.Expr) or not isinstance(small.value, cst.Call):
        return False
    func = small.value.func
    name = (
        func.value
        if isinstance(func, cst.Name)
        else func.attr.value
        if isinstance(func, cst.Attribute)
        else ""
    )
    return name in LOG_FUNCTIONS


def _calls_method(t: Target, method: str) -> bool:
    for n in _walk(t.node):
        if (isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value == method
                and _chain_root(n.func.value) in t.roots):
            return True
    return False


def _block_statements(body: Sequence[cst.BaseStatement]) -> Iterator[_Stmt]:
    for stmt in body:
        yield _Stmt(stmt, body)
        for inner in _inner_blocks(stmt):
            yield from _block_statements(inner)


def _inner_blocks(stmt: cst.BaseStatement) -> Iterator[Sequence[cst.BaseStatement]]:
    if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
        return
    if isinstance(stmt, cst.If):
        yield stmt.body.body  # type: ignore[misc]
        orelse = stmt.orelse
        if isinstance(orelse, cst.If):
            yield [orelse]
        elif isinstance(orelse, cst.Else):
            yield orelse.body.body  # type: ignore[misc]
        return
    if isinstance(stmt, (cst.For, cst.While, cst.With)):
        yield stmt.body.body  # type: ignore[misc]
        if isinstance(stmt, (cst.For, cst.While)) and stmt.orelse is not None:
            yield stmt.orelse.body.body  # type: ignore[misc]
        return
    if isinstance(stmt, cst.Try):
        yield stmt.body.body  # type: ignore[misc]
        for h in stmt.handlers:
            yield h.body.body  # type: ignore[misc]
        if stmt.orelse is not None:
            yield stmt.orelse.body.body  # type: ignore[misc]
        if stmt.finalbody is not None:
            yield stmt.finalbody.body.body  # type: ignore[misc]


def _is_docstring(stmt: cst.BaseStatement) -> bool:
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Expr)
        and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def _is_guard(stmt: cst.BaseStatement) -> bool:
    """`if cond: raise ...` (no else), or `assert ...`."""
    if isinstance(stmt, cst.If) and stmt.orelse is None:
        body = stmt.body.body
        return (
            len(body) == 1
            and isinstance(body[0], cst.SimpleStatementLine)
            and isinstance(body[0].body[0], cst.Raise)
        )
    return isinstance(stmt, cst.SimpleStatementLine) and isinstance(stmt.body[0], cst.Assert)


def _else_raises(stmt: cst.BaseStatement) -> bool:
    """`if found: ... else: raise ...` (the guard sits in the else branch)."""
    if isinstance(stmt, cst.If) and isinstance(stmt.orelse, cst.Else):
        body = stmt.orelse.body.body
        return (
            len(body) == 1
            and isinstance(body[0], cst.SimpleStatementLine)
            and isinstance(body[0].body[0], cst.Raise)
        )
    return False


# -- operators ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Site:
    target: Target
    line: int
    description: str
    edits: tuple[_Edit, ...]
    argument: str | None = None


@dataclass(frozen=True)
class Operator:
    name: str
    defect_class: str
    summary: str
    sites: Callable[[ModuleFacts, Target], list[_Site]] | None  # per tool or writer helper
    static_only: bool = False
    rules: tuple[str, ...] = ()  # static rules whose shape it produces
    module_sites: Callable[[ModuleFacts], list[_Site]] | None = None  # sites outside any tool


def _pass_line(facts: ModuleFacts, stmt: cst.CSTNode) -> list[str]:
    first, _ = facts.line_span(stmt)
    return [facts.indent_of(first) + "pass"]


def _drop_write(facts: ModuleFacts, t: Target) -> list[_Site]:
    writes = facts.writes(t)
    if len(writes) < 2:  # dropping the only write is a phantom effect, not a partial one
        return []
    out = []
    for s in writes:
        if facts.binds_name(s.node):
            continue
        first, last = facts.line_span(s.node)
        edit = facts.replace_lines(first, last, _pass_line(facts, s.node))
        out.append(_Site(t, first, f"drop the state write `{facts.code(s.node)}`", (edit,)))
    return out


def _phantom(facts: ModuleFacts, t: Target) -> list[_Site]:
    writes = facts.writes(t)
    if not writes or any(facts.binds_name(s.node) for s in writes):
        return []
    edits = []
    for s in writes:
        first, last = facts.line_span(s.node)
        edits.append(facts.replace_lines(first, last, _pass_line(facts, s.node)))
    line = facts.line_span(writes[0].node)[0]
    return [
        _Site(t, line, f"remove all {len(writes)} state writes; the tool still reports success", tuple(edits))
    ]


def _is_reply(expr: cst.BaseExpression | None) -> bool:
    """A literal reply: a string (f-strings included), a number or flag, or a dict/tuple of them."""
    if isinstance(
        expr, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString, cst.Integer, cst.Float)
    ):
        return True
    if isinstance(expr, cst.Name):
        return expr.value in {"True", "False"}
    if isinstance(expr, cst.Dict):
        return all(isinstance(e, cst.DictElement) and _is_reply(e.key) and _is_reply(e.value)
                   for e in expr.elements)
    if isinstance(expr, cst.Tuple):
        return all(_is_reply(e.value) for e in expr.elements)
    return False


def _has_literal_reply(t: Target) -> bool:
    return any(isinstance(n, cst.Return) and _is_reply(n.value) for n in _walk(t.node.body))


def _swallow_write(facts: ModuleFacts, t: Target) -> list[_Site]:
    """TL101's shape: a literal reply (which may announce success) after a write whose failure is
    swallowed. Whether the reply reads as success is the rule's call, not the operator's."""
    if not _has_literal_reply(t):
        return []
    out = []
    for s in facts.writes(t):
        if facts.binds_name(s.node):
            continue
        first, last = facts.line_span(s.node)
        ind = facts.indent_of(first)
        body = ["    " + x for x in facts.lines[first - 1 : last]]
        new = [ind + "try:\n", *body, ind + "except Exception:\n", ind + "    pass\n"]
        out.append(
            _Site(
                t,
                first,
                f"swallow failures of `{facts.code(s.node)}`",
                (facts.replace_lines(first, last, new),),
            )
        )
    return out


def _param_uses(facts: ModuleFacts, t: Target, p: ParamInfo) -> list[cst.Name]:
    """Uses of a parameter, except in conditions, raise messages, logging, assignments to the
    parameter itself, and the text a reply echoes (an f-string in a `return`). A `return` that
    computes with it (`return {h.name: ... if h.name in hotel_names}`, `return inbox.send(to, ...)`)
    is a use: for a reader the reply is the whole effect."""
    uses: list[cst.Name] = []
    for s in facts.statements(t):
        node = s.node
        if isinstance(node, cst.SimpleStatementLine):
            small = node.body[0]
            if isinstance(small, cst.Return):
                uses.extend(n for n in _names_outside_text(small) if n.value == p.name)
                continue
            if isinstance(small, cst.Raise) or _is_log_call(small):
                continue
            if isinstance(small, cst.Assign) and any(
                isinstance(x.target, cst.Name) and x.target.value == p.name for x in small.targets
            ):
                continue
            uses.extend(n for n in _names_in(node) if n.value == p.name)
    return uses


def _ignore_arg_constant(facts: ModuleFacts, t: Target) -> list[_Site]:
    out = []
    for p in t.params:
        const = CONSTANT_FOR.get(p.base)
        uses = _param_uses(facts, t, p)
        if const is None or not uses:
            continue
        edits = tuple(facts.replace_node(n, const) for n in uses)
        line = facts.pos(uses[0]).start.line
        out.append(
            _Site(
                t,
                line,
                f"argument `{p.name}` replaced by the constant {const} where it is used",
                edits,
                p.name,
            )
        )
    return out


def _ignore_arg_swap(facts: ModuleFacts, t: Target) -> list[_Site]:
    out = []
    for p in t.params:
        uses = _param_uses(facts, t, p)
        if not uses or not p.base:
            continue
        for q in t.params:
            if q is not p and q.base == p.base:
                edits = tuple(facts.replace_node(n, q.name) for n in uses)
                line = facts.pos(uses[0]).start.line
                out.append(
                    _Site(t, line, f"argument `{p.name}` replaced by argument `{q.name}`", edits, p.name)
                )
                break
    return out


def _guards(facts: ModuleFacts, t: Target) -> Iterator[_Stmt]:
    for s in facts.statements(t):
        if _is_guard(s.node):
            yield s


def _only_statement(s: _Stmt) -> bool:
    return len([x for x in s.block if not _is_docstring(x)]) == 1


def _drop_guard(facts: ModuleFacts, t: Target) -> list[_Site]:
    out = []
    for s in _guards(facts, t):
        first, last = facts.line_span(s.node)
        new = _pass_line(facts, s.node) if _only_statement(s) else []
        out.append(_Site(t, first, f"delete the guard `{facts.code(s.node).splitlines()[0]}`",
                         (facts.replace_lines(first, last, new),)))
    for s in facts.statements(t):
        if _else_raises(s.node):
            assert isinstance(s.node, cst.If) and s.node.orelse is not None
            first, last = facts.line_span(s.node.orelse)
            out.append(_Site(t, first, "delete the `else: raise` branch of a lookup guard",
                             (facts.replace_lines(first, last, []),)))
    return out


def _comment_guard(facts: ModuleFacts, t: Target) -> list[_Site]:
    out = []
    for s in _guards(facts, t):
        first, last = facts.line_span(s.node)
        ind = facts.indent_of(first)
        new = [ind + "# " + x[len(ind):] if x.strip() else x for x in facts.lines[first - 1 : last]]
        if _only_statement(s):
            new.append(ind + "pass\n")
        out.append(_Site(t, first, f"comment out the guard `{facts.code(s.node).splitlines()[0]}`",
                         (facts.replace_lines(first, last, new),)))
    return out


def _none_comparisons(facts: ModuleFacts, t: Target) -> Iterator[tuple[cst.Comparison, str, bool]]:
    """`p is not None` / `p is None` on a parameter: (node, name, negated)."""
    names = {p.name for p in t.params}
    for n in _walk(t.node.body):
        if isinstance(n, cst.Comparison) and len(n.comparisons) == 1 and isinstance(n.left, cst.Name):
            c = n.comparisons[0]
            if n.left.value in names and isinstance(c.comparator, cst.Name) and c.comparator.value == "None":
                if isinstance(c.operator, cst.IsNot):
                    yield n, n.left.value, False
                elif isinstance(c.operator, cst.Is):
                    yield n, n.left.value, True


def _truthify(facts: ModuleFacts, t: Target) -> list[_Site]:
    out = []
    for node, name, negated in _none_comparisons(facts, t):
        text = f"not {name}" if negated else name
        out.append(
            _Site(
                t,
                facts.pos(node).start.line,
                f"`{facts.code(node)}` turned into the truth test `{text}`",
                (facts.replace_node(node, text),),
                name,
            )
        )
    return out


def _truthy_gate(facts: ModuleFacts, t: Target) -> list[_Site]:
    """Gate a state write on the truthiness of a falsy-legal argument it uses (the shape real update
    tools have)."""
    out = []
    # Numbers and flags: their falsy values (0, 0.0, False) are ordinary legal inputs. An empty
    # identifier string usually is not, and gating on it would make an equivalent mutant; so would a
    # parameter a raising guard compares (`if amount <= 0: raise`), whose falsy value never gets here.
    ordering = (cst.LessThan, cst.LessThanEqual, cst.GreaterThan, cst.GreaterThanEqual)
    guarded = {n.value for g in _guards(facts, t) if isinstance(g.node, cst.If)
               for c in _walk(g.node.test) if isinstance(c, cst.Comparison)
               and any(isinstance(x.operator, ordering) for x in c.comparisons) for n in _names_in(c)}
    falsy_legal = {p.name for p in t.params if p.base in SCALAR_FALSY_TYPES} - guarded
    already: dict[int, set[str]] = {}  # statements already under `if p:` (mutating them again is a no-op)
    for s in facts.statements(t):
        if isinstance(s.node, cst.If) and isinstance(s.node.test, cst.Name):
            for inner in _block_statements(cast(Sequence[cst.BaseStatement], s.node.body.body)):
                already.setdefault(id(inner.node), set()).add(s.node.test.value)
    for s in facts.writes(t):
        if _is_offset_by(s.node, falsy_legal):
            continue  # `x = x - fee`: with fee 0 the write is a no-op, so skipping it changes nothing
        used = [n.value for n in _names_in(s.node) if n.value in falsy_legal - already.get(id(s.node), set())]
        if not used or facts.binds_name(s.node):
            continue
        first, last = facts.line_span(s.node)
        ind = facts.indent_of(first)
        new = [ind + f"if {used[0]}:\n", *["    " + x for x in facts.lines[first - 1 : last]]]
        out.append(_Site(t, first, f"state write gated on the truthiness of `{used[0]}`",
                         (facts.replace_lines(first, last, new),), used[0]))
    return out


def _is_offset_by(stmt: cst.BaseStatement, names: set[str]) -> bool:
    """`t = t + p`, `t = t - p`, `t += p`: a write that is a no-op when `p` is 0."""
    if not isinstance(stmt, cst.SimpleStatementLine):
        return False
    small = stmt.body[0]
    if isinstance(small, cst.AugAssign):
        return isinstance(small.value, cst.Name) and small.value.value in names
    if isinstance(small, cst.Assign) and isinstance(small.value, cst.BinaryOperation):
        op = small.value
        return (isinstance(op.operator, (cst.Add, cst.Subtract)) and isinstance(op.right, cst.Name)
                and op.right.value in names)
    return False


def _body_start(facts: ModuleFacts, t: Target) -> tuple[int, str]:
    body = [s for s in cast(Sequence[cst.BaseStatement], t.node.body.body) if not _is_docstring(s)]
    first = facts.line_span(body[0])[0] if body else facts.line_span(t.node)[1]
    return first, facts.indent_of(first)


_PIN = "_toollint_pinned_state"


def _pin_state(facts: ModuleFacts, t: Target) -> list[_Site]:
    """The tool keeps the first environment it saw in a module global and writes there ever after."""
    if not facts.writes(t):
        return []
    first, ind = _body_start(facts, t)
    roots = sorted(t.roots)
    lines = [
        f"{ind}global {_PIN}\n",
        f"{ind}if {_PIN} is None:\n",
        f"{ind}    {_PIN} = ({', '.join(roots)},)\n",
        f"{ind}({', '.join(roots)},) = {_PIN}\n",
    ]
    insert = _Edit(first, 0, first, 0, "".join(lines))
    end = len(facts.lines) + 1
    module_global = _Edit(end, 0, end, 0, f"\n{_PIN} = None\n")
    return [_Site(t, first, "state pinned in a module global that survives reset", (insert, module_global))]


_COPY_CALLS = {"copy.deepcopy", "deepcopy", "copy.copy", "dict", "list"}


def _drop_copy_module(facts: ModuleFacts) -> list[_Site]:
    """`copy.deepcopy(DEFAULTS)` -> `DEFAULTS` in any module function: every environment then shares
    the module-level object, so writes survive a rebuild (reset)."""
    out = []
    for stmt in facts.module.body:
        if not isinstance(stmt, cst.FunctionDef):
            continue
        pseudo = Target(stmt.name.value, stmt, None, False, {}, [])
        for n in _walk(stmt.body):
            if isinstance(n, cst.Call) and len(n.args) == 1 and isinstance(n.args[0].value, cst.Name):
                arg = n.args[0].value.value
                func = facts.code(n.func)
                is_copy = func in _COPY_CALLS or (
                    isinstance(n.func, cst.Attribute) and n.func.attr.value == "copy"
                )
                if is_copy and arg in facts.module_names and arg.isupper():
                    out.append(_Site(pseudo, facts.pos(n).start.line,
                                     f"`{facts.code(n)}` no longer copies: environments share module state",
                                     (facts.replace_node(n, arg),)))
        for n in _walk(stmt.body):
            if (isinstance(n, cst.Call) and isinstance(n.func, cst.Attribute) and n.func.attr.value == "copy"
                    and not n.args and isinstance(n.func.value, cst.Name) and n.func.value.value.isupper()):
                out.append(_Site(pseudo, facts.pos(n).start.line,
                                 f"`{facts.code(n)}` no longer copies: environments share module state",
                                 (facts.replace_node(n, n.func.value.value),)))
    return out


def _frame_write_code(root: str, name: str, annotation: str) -> str | None:
    base, optional = base_annotation(annotation)
    if optional:
        return None
    ref = f"{root}.{name}"
    return {
        "int": f"{ref} = {ref} + 1",
        "float": f"{ref} = {ref} + 1",
        "str": f'{ref} = {ref} + " (toollint)"',
        "bool": f"{ref} = not {ref}",
        "list": f"{ref} = {ref}[:-1]",
        "dict": f"{ref} = dict(list({ref}.items())[:-1])",
    }.get(base)


def _extra_write(facts: ModuleFacts, t: Target) -> list[_Site]:
    writes = facts.writes(t)
    if not writes:
        return []
    last = writes[-1]
    after = facts.line_span(last.node)[1] + 1
    ind = facts.indent_of(facts.line_span(last.node)[0])
    written = {n.value for s in writes for n in _walk(s.node) if isinstance(n, cst.Name)}
    out = []
    for root, cls in sorted(t.roots.items()):
        for fname, ann in facts.classes.get(cls, {}).items():
            code = _frame_write_code(root, fname, ann)
            if code is None or fname in written:
                continue
            out.append(_Site(t, after - 1, f"extra write outside the declared effect: `{code}`",
                             (_Edit(after, 0, after, 0, f"{ind}{code}\n"),)))
    return out


OPERATORS: tuple[Operator, ...] = (
    Operator(
        "drop-write", PARTIAL_EFFECT, "delete one of several state writes", _drop_write, rules=("TL105",)
    ),
    Operator(
        "phantom-write",
        PHANTOM_EFFECT,
        "delete every state write, keep the success reply",
        _phantom,
        rules=("TL101",),
    ),
    Operator(
        "swallow-write",
        PHANTOM_EFFECT,
        "wrap a state write in try/except: pass",
        _swallow_write,
        static_only=True,
        rules=("TL101",),
    ),
    Operator(
        "arg-constant",
        IGNORED_ARGUMENT,
        "replace an argument by a constant where it is used",
        _ignore_arg_constant,
        rules=("TL103",),
    ),
    Operator(
        "arg-swap",
        IGNORED_ARGUMENT,
        "replace an argument by another argument of its type",
        _ignore_arg_swap,
        rules=("TL103",),
    ),
    Operator(
        "truthify",
        IGNORED_ARGUMENT,
        "`x is not None` -> `x` (legal falsy values dropped)",
        _truthify,
        rules=("TL104",),
    ),
    Operator(
        "truthy-gate", IGNORED_ARGUMENT, "gate a state write on `if arg:`", _truthy_gate, rules=("TL104",)
    ),
    Operator("drop-guard", UNENFORCED_PRECONDITION, "delete a guard that raises", _drop_guard),
    Operator(
        "comment-guard",
        UNENFORCED_PRECONDITION,
        "comment out a guard that raises",
        _comment_guard,
        rules=("TL102",),
    ),
    Operator("pin-state", RESET_LEAK, "keep state in a module global that survives reset", _pin_state),
    Operator(
        "drop-copy",
        RESET_LEAK,
        "environment factory stops copying module-level defaults",
        None,
        module_sites=_drop_copy_module,
    ),
    Operator("extra-write", FRAME_VIOLATION, "write a state field outside the declared effect", _extra_write),
)
OPERATORS_BY_NAME = {op.name: op for op in OPERATORS}


def mutants(
    source: str,
    path: str = "<module>",
    operators: Sequence[str] | None = None,
    tools: Sequence[str] | None = None,
    *,
    settings: Settings | None = None,
    module_name: str = "",
) -> list[Mutant]:
    """Every mutant of one module, in a deterministic order (operator, then file position)."""
    facts = ModuleFacts(source, path, settings, module_name)
    stem = re.sub(r"\W", "_", path.rsplit("/", 1)[-1].removesuffix(".py"))
    chosen = [OPERATORS_BY_NAME[n] for n in operators] if operators else list(OPERATORS)
    out: list[Mutant] = []
    for op in chosen:
        sites: list[_Site] = []
        if op.module_sites is not None:
            # A factory builds every tool's environment: all the module's tools are affected.
            every = tuple(t.qualname for t in facts.targets if t.is_tool)
            if tools is None or set(every) & set(tools):
                for site in op.module_sites(facts):
                    site.target.tools = every
                    sites.append(site)
        if op.sites is not None:
            for t in facts.targets:
                if tools is None or t.qualname in tools or set(t.tools) & set(tools):
                    sites.extend(op.sites(facts, t))
        for k, site in enumerate(sites):
            text = facts.apply(site.edits)
            if text == source or not _compiles(text):
                continue
            affected = site.target.tools or (site.target.qualname,)
            out.append(
                Mutant(
                    f"{stem}:{op.name}:{site.target.qualname}:{site.line}:{k}",
                    op.name,
                    op.defect_class,
                    site.target.qualname,
                    affected,
                    site.line,
                    site.description,
                    text,
                    op.static_only,
                    site.argument,
                )
            )
    return out


def _compiles(text: str) -> bool:
    try:
        compile(text, "<mutant>", "exec")
    except (SyntaxError, ValueError):
        return False
    return True


def sample(items: Sequence[Mutant], budget: int | None, seed: int) -> list[Mutant]:
    """A reproducible subset of at most `budget` mutants, spread evenly over defect classes and
    operators (round-robin over the strata, each shuffled with `seed`)."""
    if budget is None or budget >= len(items):
        return list(items)
    rng = random.Random(seed)
    strata: dict[tuple[str, str], list[Mutant]] = {}
    for m in items:
        strata.setdefault((m.defect_class, m.operator), []).append(m)
    queues = []
    for key in sorted(strata):
        group = list(strata[key])
        rng.shuffle(group)
        queues.append(group)
    picked: list[Mutant] = []
    while len(picked) < budget:
        for q in queues:
            if q and len(picked) < budget:
                picked.append(q.pop())
    order = {m.id: i for i, m in enumerate(items)}
    return sorted(picked, key=lambda m: order[m.id])


# -- negative controls: semantics-preserving rewrites -------------------------------------------------


def _rename_locals(facts: ModuleFacts, t: Target) -> list[_Site]:
    params = {p.name.value for p in _params(t.node)}
    bound: set[str] = set()
    nested: set[str] = set()  # names bound by comprehensions, lambdas, nested defs: left alone
    declared: set[str] = set()
    for n in _walk(t.node.body):
        if (
            isinstance(n, cst.AssignTarget)
            and isinstance(n.target, cst.Name)
            or isinstance(n, (cst.AnnAssign, cst.AugAssign))
            and isinstance(n.target, cst.Name)
            or isinstance(n, cst.For)
            and isinstance(n.target, cst.Name)
        ):
            bound.add(n.target.value)
        elif isinstance(n, cst.CompFor):
            nested.update(x.value for x in _walk(n.target) if isinstance(x, cst.Name))
        elif isinstance(n, (cst.Global, cst.Nonlocal)):
            declared.update(x.name.value for x in n.names)
        elif isinstance(n, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            nested.update(x.value for x in _walk(n) if isinstance(x, cst.Name))
    local = sorted(bound - params - declared - nested)
    if not local:
        return []
    taken = {x.value for x in _walk(t.node) if isinstance(x, cst.Name)}
    renames = {name: f"{name}_renamed" for name in local if f"{name}_renamed" not in taken}
    edits = [facts.replace_node(n, renames[n.value]) for n in _names_in(t.node.body) if n.value in renames]
    if not edits:
        return []
    line = facts.line_span(t.node)[0]
    return [_Site(t, line, f"rename locals {', '.join(sorted(renames))}", tuple(edits))]


def _effects(facts: ModuleFacts, stmt: cst.BaseStatement, t: Target) -> tuple[set[str], set[str]] | None:
    """(written keys, read keys) of a simple assignment with no side-effecting call, else None.
    A key is a local name or `root.field` for state."""
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return None
    small = stmt.body[0]
    if not isinstance(small, cst.Assign) or len(small.targets) != 1:
        return None
    roots = set(t.roots) | t.aliases
    for n in _walk(small.value):
        if isinstance(n, cst.Call):
            f = n.func
            ok = (isinstance(f, cst.Name) and (f.value in PURE_CALLS or f.value in facts.classes)) or (
                isinstance(f, cst.Attribute) and f.attr.value in PURE_METHODS
            )
            if not ok:
                return None

    def key(expr: cst.BaseExpression) -> str | None:
        while isinstance(expr, (cst.Attribute, cst.Subscript)):
            if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name):
                return f"{expr.value.value}.{expr.attr.value}"
            expr = expr.value
        return expr.value if isinstance(expr, cst.Name) else None

    target = small.targets[0].target
    written = key(target)
    if written is None:
        return None
    reads: set[str] = set()
    for n in _walk(small):
        if isinstance(n, cst.Attribute) and isinstance(n.value, cst.Name) and n.value.value in roots:
            reads.add(f"{n.value.value}.{n.attr.value}")
    for n in _names_in(small.value):
        reads.add(n.value)
    if isinstance(target, cst.Subscript):
        reads.update(n.value for n in _names_in(target.slice[0]))
    if written.split(".")[0] in roots and written.count(".") == 0:
        return None  # rebinding a root
    return {written}, reads


def _reorder(facts: ModuleFacts, t: Target) -> list[_Site]:
    out = []
    for s in facts.statements(t):
        block = list(s.block)
        i = block.index(s.node)
        if i + 1 >= len(block):
            continue
        a, b = block[i], block[i + 1]
        ea, eb = _effects(facts, a, t), _effects(facts, b, t)
        if ea is None or eb is None:
            continue
        (wa, ra), (wb, rb) = ea, eb
        roots_read_a = {x for x in ra if x in t.roots}  # a bare root read touches everything
        roots_read_b = {x for x in rb if x in t.roots}
        if wa & wb or wa & rb or wb & ra:
            continue
        if any(w.split(".")[0] in roots_read_b for w in wa) or any(
            w.split(".")[0] in roots_read_a for w in wb
        ):
            continue
        a1, a2 = facts.line_span(a)
        b1, b2 = facts.line_span(b)
        if a2 + 1 != b1:
            continue
        new = facts.lines[b1 - 1 : b2] + facts.lines[a1 - 1 : a2]
        out.append(_Site(t, a1, f"swap independent statements on lines {a1} and {b1}",
                         (facts.replace_lines(a1, b2, new),)))
    return out


def _never_falsy_names(facts: ModuleFacts, t: Target) -> set[str]:
    """Parameters whose only legal falsy value is None (Optional of a class or datetime), and locals
    bound to an element of state by `next(..., None)`: for these `if x:` means `if x is not None:`."""
    out = {a for a in t.aliases}
    for p in t.params:
        if p.base and p.base not in FALSY_LEGAL and p.base not in {"Any", "object"} and (
            p.base in facts.classes or p.base in {"datetime", "date", "time"}
        ):
            out.add(p.name)
    return out


def _explicit_none_check(facts: ModuleFacts, t: Target) -> list[_Site]:
    names = _never_falsy_names(facts, t)
    out = []
    for s in facts.statements(t):
        if not isinstance(s.node, cst.If):
            continue
        test = s.node.test
        if isinstance(test, cst.Name) and test.value in names:
            text = f"{test.value} is not None"
        elif (isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not)
              and isinstance(test.expression, cst.Name) and test.expression.value in names):
            text = f"{test.expression.value} is None"
        else:
            continue
        out.append(_Site(t, facts.pos(test).start.line, f"`if {facts.code(test)}:` -> `if {text}:`",
                         (facts.replace_node(test, text),)))
    return out


CONTROLS: tuple[Operator, ...] = (
    Operator("rename-locals", CONTROL, "rename every local variable", _rename_locals),
    Operator("reorder-independent", CONTROL, "swap two adjacent independent assignments", _reorder),
    Operator("explicit-none-check", CONTROL, "`if x:` -> `if x is not None:` where x cannot be falsy-legal",
             _explicit_none_check),
)


def controls(
    source: str, path: str = "<module>", *, settings: Settings | None = None, module_name: str = ""
) -> list[Mutant]:
    """Semantics-preserving rewrites of every tool and writer helper in a module."""
    facts = ModuleFacts(source, path, settings, module_name)
    stem = re.sub(r"\W", "_", path.rsplit("/", 1)[-1].removesuffix(".py"))
    out: list[Mutant] = []
    for op in CONTROLS:
        assert op.sites is not None  # every control rewrites tools or their helpers
        for k, site in enumerate(s for t in facts.targets for s in op.sites(facts, t)):
            text = facts.apply(site.edits)
            if text == source or not _compiles(text):
                continue
            out.append(Mutant(f"{stem}:{op.name}:{site.target.qualname}:{site.line}:{k}", op.name, CONTROL,
                              site.target.qualname, site.target.tools or (site.target.qualname,), site.line,
                              site.description, text))
    return out
