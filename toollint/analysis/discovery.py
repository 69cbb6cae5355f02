"""Which functions are tools, which of them declare whether they write, and where their state is.

Discovery needs no configuration for the patterns the profiles declare (`toollint/profiles/*/
patterns.py`, see `toollint.analysis.patterns`) nor for the generic shapes below; `tool-decorators`,
`tools`, `tool-classes` and `state-roots` in `[tool.toollint]` cover the rest. Nothing of the
audited project is imported: all of this is syntax, plus the modules of the linted tree it imports.

The finders, in order (registration as data, `FINDERS`): a function is a tool when

1. a decorator marks it: a profile's `ToolDecorator`, a configured `tool-decorators` entry, or any
   decorator whose last word is `tool` (`@is_tool`, `@register_as_tool`, `@function_tool`, a
   benchmark's own `@is_discoverable_tool`), at module level, in a class, or nested in a factory;
2. it serves many tools from one dispatcher (`@server.call_tool()`): one tool per name branch;
3. a parameter is injected state (`Annotated[T, Depends("name")]`);
4. its class derives (across modules) from a tool base class and it is that class's tool method
   (`_run`, a static `invoke(data, ...)`);
5. its class is a toolkit (named `*Tools`/`*Toolkit`/`*ToolSpec`, or configured in `tool-classes`)
   and it is a public method;
6. it is passed to a registration call (`FunctionTool(fn)`, `StructuredTool.from_function(fn)`);
7. it is configured by name (`tools = ["pkg.mod:Class.method"]`);
8. it is a branch of a request-kind dispatcher (`if r.startswith("POST"):`, see
   `toollint.analysis.dispatch`): one tool per branch, its replies through `session.inject(...)`.

Dispatch by name (`_get(name)(**kwargs)`) is resolved by the summariser (`dispatch.registry_target`).
A function that looks like a tool but is not taken is recorded with the
reason (`Rejection`), for `--show-tools`.
"""

from __future__ import annotations

import ast
import bisect
import copy
import os
import re
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Generic, TypeVar, overload

from toollint.analysis.dispatch import (
    KindBranch,
    NameDispatch,
    branch_tool,
    called_name_subject,
    declared_dispatcher,
    held_stores,
    kind_branches,
    module_dicts,
    name_chain_branches,
    own_statements,
    package_declarations,
    package_dispatches,
    reply_calls,
)
from toollint.analysis.families import all_patterns
from toollint.analysis.patterns import CompiledPatterns, declared_writer
from toollint.analysis.resolver import ModuleSource, Resolved, base_name, class_ancestors
from toollint.analysis.vocabulary import HTTP_VERBS, NOT_STATE_CALLS, STATE_CALLS
from toollint.analysis.walk import walk_nodes
from toollint.facts import Candidate, Rejection  # plain data, pickled and cached without this package
from toollint.settings import Settings

# A class named like this is a toolkit: its public methods are the tools (unless markers say otherwise).
TOOLKIT_CLASS_NAME = re.compile(r"(?:Tools|Toolkit|ToolKit|Toolset|ToolSet)$")
_TOOLKIT_SUFFIXES = ("Tools", "Toolkit", "ToolKit", "Toolset", "ToolSet")  # the same test on an identifier
# Decorators that make a method something other than a tool body.
NOT_TOOL_DECORATORS = frozenset({"property", "cached_property", "classmethod", "abstractmethod", "setter",
                                 "getter", "deleter", "overload"})
# Attributes of a call's context object that hold the state the server keeps between calls.
CONTEXT_STATE_ATTRS = frozenset({"lifespan_context"})
# The state path of such a context object itself: only its `CONTEXT_STATE_ATTRS` (reached directly or
# through `CONTEXT_HOPS`) are state; its session, request id and logger are not.
CONTEXT_ROOT = "<context>"
CONTEXT_HOPS = frozenset({"request_context"})
# `func_name == "search"`: a variable compared with a string (the finder reads the syntax; this is the
# text test)
_EQUALS_STRING = re.compile(r"==\s*['\"]")
_NAME_EQUALS = re.compile("name ?==")
_WORD_BEFORE = re.compile(r"([\w.]+)\s*$")
_MEMO_NAME = re.compile(r"(?i)cache|memo")
MAX_NESTING = 4  # factory functions nested this deep are still searched for tools
# An HTTP verb literal (`"GET`, `'POST`): one pattern per quote, each opening with its quote as a literal
# prefix the search skips ahead to (a pattern opening with the verbs, or with a class of quotes, steps
# through every character: four times the cost, on every module).
_HTTP_VERB_LITERALS = tuple(re.compile(q + r"(?:GET|POST|PUT|PATCH|DELETE)\b") for q in ('"', "'"))

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


def _verb_lines(source: str) -> list[int]:
    """The lines of the HTTP verb literals (`"GET`) of a module, in order."""
    starts = sorted(m.start() for pattern in _HTTP_VERB_LITERALS for m in pattern.finditer(source))
    lines: list[int] = []
    line, last = 1, 0
    for start in starts:
        line += source.count("\n", last, start)
        last = start
        lines.append(line)
    return lines


@dataclass
class ToolInfo:
    node: FunctionNode
    qualname: str
    profile: str  # the family whose pattern found it (a profile's name), or "configured"/"generic"
    class_name: str | None = None
    declared_writer: bool | None = None  # from its marker (`ToolType.WRITE`, `mutates_state=False`)
    roots: dict[str, str] = field(default_factory=dict)  # name -> canonical state prefix
    found_by: str = ""  # how it was recognised, for --show-tools
    declared_by: str = ""  # the marker text that declared it a writer or not
    framework_params: frozenset[str] = frozenset()  # parameters the framework fills, not the agent
    types: dict[str, str] = field(default_factory=dict)  # closure names bound to instances of a class

    @property
    def name(self) -> str:
        return self.node.name

    @property
    def docstring(self) -> str:
        return ast.get_docstring(self.node) or ""


@dataclass
class Discovery:
    tools: list[ToolInfo] = field(default_factory=list)
    rejected: list[Rejection] = field(default_factory=list)


# -- small syntax helpers ----------------------------------------------------------------------------


def decorator_name(dec: ast.expr) -> str:
    target = dec.func if isinstance(dec, ast.Call) else dec
    if isinstance(target, ast.Attribute):
        return target.attr
    if isinstance(target, ast.Name):
        return target.id
    return ""


def dotted(expr: ast.expr) -> str:
    if isinstance(expr, ast.Attribute):
        inner = dotted(expr.value)
        return f"{inner}.{expr.attr}" if inner else ""
    if isinstance(expr, ast.Name):
        return expr.id
    return ""


def annotated_class(ann: ast.expr | None) -> str | None:
    """The class named by an annotation (`Inbox`, `Annotated[Inbox, ...]`, `Inbox | None`)."""
    if ann is None:
        return None
    if isinstance(ann, ast.Subscript) and decorator_name(ann.value) == "Annotated":
        first = ann.slice.elts[0] if isinstance(ann.slice, ast.Tuple) else ann.slice
        return annotated_class(first)
    if isinstance(ann, ast.Subscript) and decorator_name(ann.value) == "Optional":
        return annotated_class(ann.slice)
    if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):
        return annotated_class(ann.left) or annotated_class(ann.right)
    if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
        return ann.value.split("[", 1)[0].strip() or None
    name = dotted(ann)
    return name.rsplit(".", 1)[-1] if name else None


def type_aliases(tree: ast.Module) -> dict[str, ast.expr]:
    """Module-level `AnnotatedSlack = Annotated[Slack, Depends("slack")]` style aliases."""
    out: dict[str, ast.expr] = {}
    for node in tree.body:
        name: str | None = None
        value: ast.expr | None = None
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name, value = node.targets[0].id, node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            name, value = node.target.id, node.value
        elif type(node).__name__ == "TypeAlias":  # `type X = ...` (3.12+)
            name, value = node.name.id, node.value  # type: ignore[attr-defined]
        if name and isinstance(value, ast.Subscript) and decorator_name(value.value) == "Annotated":
            out[name] = value
    return out


def resolve_annotation(ann: ast.expr | None, aliases: dict[str, ast.expr]) -> ast.expr | None:
    if isinstance(ann, ast.Name) and ann.id in aliases:
        return aliases[ann.id]
    return ann


def all_args(fn: FunctionNode) -> list[ast.arg]:
    return [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]


def depends_roots(fn: FunctionNode, aliases: dict[str, ast.expr] | None = None,
                  markers: Collection[str] | None = None) -> dict[str, str]:
    """Parameters annotated `Annotated[T, Depends("name")]` (or another state marker), mapped to "name"."""
    markers = all_patterns().state_annotations if markers is None else markers
    roots: dict[str, str] = {}
    for p in all_args(fn):
        ann = resolve_annotation(p.annotation, aliases or {})
        if isinstance(ann, ast.Subscript) and decorator_name(ann.value) == "Annotated":
            items = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
            for item in items[1:]:
                if isinstance(item, ast.Call) and decorator_name(item) in markers:
                    dep = item.args[0] if item.args else None
                    is_name = isinstance(dep, ast.Constant) and isinstance(dep.value, str)
                    roots[p.arg] = dep.value if is_name else p.arg  # type: ignore[union-attr]
    return roots


def context_state_params(fn: FunctionNode) -> dict[str, str]:
    """Parameters of a call's context object through which the function reaches the state a server
    keeps for its whole life (`ctx.lifespan_context`, `ctx.request_context.lifespan_context`): the
    context is a state root, so what the call writes through it is that state."""
    params = {a.arg for a in all_args(fn)}
    out: dict[str, str] = {}
    for node in walk_nodes(ast.Module(body=fn.body, type_ignores=[])):
        if isinstance(node, ast.Attribute) and node.attr in CONTEXT_STATE_ATTRS:
            base = node.value
            while isinstance(base, ast.Attribute):
                base = base.value
            if isinstance(base, ast.Name) and base.id in params:
                out[base.id] = CONTEXT_ROOT
    return out


def module_state_names(body: list[ast.stmt]) -> dict[str, str | None]:
    """Names a block binds to mutable containers or objects: state a tool may write. Maps each to
    the class it is an instance of when that is syntactic (`db = SqliteDatabase(path)`)."""
    names: dict[str, str | None] = {}
    for node in body:
        targets: list[ast.expr] = []
        value: ast.expr | None = None
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        if value is None:
            continue
        mutable = isinstance(value, (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp))
        cls: str | None = None
        if isinstance(value, ast.Call):
            called = decorator_name(value)
            mutable = called in STATE_CALLS or (called[:1].isupper() and called not in NOT_STATE_CALLS)
            cls = called if called[:1].isupper() else None
        if mutable:
            # a memo (`relation_cache = {}`) remembers answers: filling it changes no state a task checks
            names.update(
                (t.id, cls) for t in targets if isinstance(t, ast.Name) and not _MEMO_NAME.search(t.id)
            )
    return names


# -- markers -----------------------------------------------------------------------------------------


def _is_tool_word(name: str) -> bool:
    """`tool`, `is_tool`, `register_as_tool`, `function_tool`: the decorator's last word is `tool`."""
    return name.rsplit("_", 1)[-1] == "tool" or name == "tool"


def _marker_text(dec: ast.expr) -> str:
    """`@mcp.tool()`, `@is_tool(ToolType.WRITE)`; long argument lists shortened to `(...)`."""
    target = dec.func if isinstance(dec, ast.Call) else dec
    text = "@" + (dotted(target) or ast.unparse(target))
    if isinstance(dec, ast.Call):
        args = ast.unparse(dec)[len(ast.unparse(target)):]
        text += args if len(args) <= 30 else "(...)"
    return text


_T = TypeVar("_T")


class _once(Generic[_T]):  # (lower case: a decorator, as `cached_property`)
    """`functools.cached_property` without its lock (3.11's takes one on each first read, and a module's
    discovery reads a dozen such tables, on every module): the value is put in the instance's dict,
    which answers every later read."""

    def __init__(self, compute: Callable[[Any], _T]) -> None:
        self.compute = compute
        self.name = compute.__name__

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> _once[_T]: ...

    @overload
    def __get__(self, instance: object, owner: type | None = None) -> _T: ...

    def __get__(self, instance: object | None, owner: type | None = None) -> _T | _once[_T]:
        if instance is None:
            return self
        value = instance.__dict__[self.name] = self.compute(instance)
        return value


@dataclass
class _Scope:
    """Where a function sits: its class, the functions around it, the state they bind."""

    cls: ast.ClassDef | None = None
    outer: tuple[FunctionNode, ...] = ()
    closure_state: dict[str, str | None] = field(default_factory=dict)
    prefix: str = ""  # the class of a method whose body registers tools (`Server._register.add`)

    def qualname(self, name: str) -> str:
        parts = [f.name for f in self.outer] + ([self.cls.name] if self.cls else []) + [name]
        return self.prefix + ".".join(parts)


class _Discoverer:
    def __init__(self, tree: ast.Module, settings: Settings, module_name: str, module: ModuleSource | None,
                 source: str | None) -> None:
        self.tree = tree
        self.settings = settings
        self.module = module
        self.source = source
        self.patterns = all_patterns()
        self.extra_decorators = set(settings.tool_decorators)
        self.configured = settings.tool_refs_for(module_name) if module_name else set()
        self.configured_classes = settings.tool_classes_for(module_name) if module_name else set()
        self.state_params = set(settings.state_roots)
        self.found = Discovery()
        self.taken: set[int] = set()
        self.directory = (
            os.path.dirname(os.path.abspath(module.path)) if module is not None and module.path else ""
        )
        # the per-module tables (`registered`, `dispatches`, `package_declared`, ...) are worked out when a
        # function first asks for them: a module of classes alone never asks for the module functions'
        self.class_dispatched: NameDispatch | None = None
        self.declared_names: frozenset[str] = frozenset()
        # (the text tests `may_name_chain`, `may_context_state`, `may_describe_api` too: each scan of the text
        # costs as much as a small module's walk)
        # the class being walked: does any method carry a tool marker, is it a toolkit, its bases
        self.class_marked = False
        self.class_toolkit = False
        self.class_described: tuple[str, str] | None = (
            None  # (how the class describes itself, its tool method)
        )
        self.class_bases: list[Resolved | str] | None = None
        # The finders asked of each function, in order: a finder whose module-wide table turns out empty
        # (no registration call, no schema of the package, ...) drops itself (`drop`): asked of every
        # function, the calls that could only answer "no" add up.
        self.function_chain, self.method_chain = (FUNCTION_FINDERS, METHOD_FINDERS) if self.configured else (
            _UNCONFIGURED_FUNCTION_FINDERS, _UNCONFIGURED_METHOD_FINDERS)
        self.class_chain = self.method_chain
        # a class's chain, by which of the three class-wide finders can take its methods (`walk_class`)
        self.class_chains: dict[tuple[Finder, ...], tuple[Finder, ...]] = {}

    @_once
    def may_name_chain(self) -> bool:
        source = self.source  # a cheap text test first: most modules compare no name with `==`
        return (
            source is None
            or _NAME_EQUALS.search(source) is not None  # (`name ==` or `name==`: one scan, not two)
            and any(
                (w := _WORD_BEFORE.search(source, max(0, m.start() - 60), m.start()))
                and called_name_subject(w.group(1))
                for m in _EQUALS_STRING.finditer(source)
            )
        )

    @_once
    def may_serve_dispatch(self) -> bool:
        """Whether the module's text names a dispatcher decorator or keyword (`call_tool`), as an ASCII
        text holds a decorator's name."""
        source = self.source
        if source is None or not source.isascii():
            return True
        return any(n in source for n in self.patterns.dispatchers) or any(
            k in source for k in self.patterns.dispatcher_keywords)

    @_once
    def may_dispatch_requests(self) -> bool:
        """Whether a function of the module can be a request-kind dispatcher: two HTTP verb literals in
        it, or a name a profile's `RequestDispatcher` takes, which an ASCII text holds as written (asked
        of every function otherwise: a fifth of discovery's cost on a tree with no tools)."""
        source = self.source
        if source is None or (self.verb_lines is not None and len(self.verb_lines) >= 2):
            return True
        return not source.isascii() or any(p.search(source) for p, _, _ in self.patterns.request_dispatchers)

    @_once
    def aliases(self) -> dict[str, ast.expr]:
        """The module's `Annotated` aliases (asked only where a parameter can be annotated with one)."""
        return type_aliases(self.tree)

    @_once
    def may_annotate(self) -> bool:
        """Whether a parameter can be `Annotated[T, Depends(...)]` (an alias of one is in the module too)."""
        return self.source is None or "Annotated" in self.source

    @_once
    def may_context_state(self) -> bool:
        return self.source is None or any(a in self.source for a in CONTEXT_STATE_ATTRS)

    @_once
    def may_describe_api(self) -> bool:
        """Whether the module's text names an API description (a class's own shape is read first:
        most classes have no call method and no scenario loader, and this is asked once a module)."""
        return self.source is None or _API_TEXT in self.source

    @_once
    def registered(self) -> dict[str, tuple[str, str]]:
        return self._registered_functions()

    @_once
    def handlers(self) -> dict[str, tuple[str, str]]:
        return self._keyword_handlers()

    @_once
    def dispatches(self) -> tuple[NameDispatch, ...]:
        return self._name_dispatches()

    @_once
    def registry_members(self) -> dict[str, tuple[str, int]]:
        return self._registry_members()

    @_once
    def docstring_declared(self) -> dict[str, str]:
        return docstring_schema_functions(self.tree, self.source)

    @_once
    def package_declared(self) -> frozenset[str]:
        """Names a function-calling schema of this module's package shows the model (read once per
        directory)."""
        return package_declarations(self.directory) if self.directory else frozenset()

    @_once
    def verb_lines(self) -> list[int] | None:
        """Lines holding an HTTP verb literal: a function is looked at as a verb dispatcher only when two
        of them fall inside it (most modules have none)."""
        return None if self.source is None else _verb_lines(self.source)

    # -- one function ------------------------------------------------------------------------------
    def roots(self, fn: FunctionNode, scope: _Scope) -> dict[str, str]:
        roots = depends_roots(fn, self.aliases, self.patterns.state_annotations) if self.may_annotate else {}
        for a in all_args(fn):
            if a.arg in self.state_params:
                roots.setdefault(a.arg, a.arg)
        if scope.cls is not None and fn.args.args and fn.args.args[0].arg == "self":
            roots.setdefault("self", "")
        for name in scope.closure_state:
            roots.setdefault(name, name)
        if self.may_context_state:
            roots.update((k, v) for k, v in context_state_params(fn).items() if k not in roots)
        return roots

    def add(
        self,
        fn: FunctionNode,
        scope: _Scope,
        profile: str,
        found_by: str,
        *,
        declared: bool | None = None,
        declared_by: str = "",
        roots: dict[str, str] | None = None,
        qualname: str | None = None,
        framework: frozenset[str] = frozenset(),
    ) -> None:
        self.taken.add(id(fn))
        self.found.tools.append(ToolInfo(
            fn, qualname or scope.qualname(fn.name), profile, scope.cls.name if scope.cls else None, declared,
            self.roots(fn, scope) if roots is None else roots, found_by, declared_by, framework,
            {k: v for k, v in scope.closure_state.items() if v},
        ))

    def reject(self, fn: FunctionNode, scope: _Scope, reason: str) -> None:
        self.found.rejected.append(Rejection(scope.qualname(fn.name), fn.lineno, reason))

    def tool_decorator(self, dec: ast.expr) -> str | None:
        """The family a decorator marks a tool for, or None."""
        name, full = decorator_name(dec), dotted(dec.func if isinstance(dec, ast.Call) else dec)
        if name in self.patterns.dispatchers:
            return None
        if name in self.extra_decorators or full in self.extra_decorators:
            return "configured"
        family = self.patterns.decorators.get(full) or self.patterns.decorators.get(name)
        if family is not None:
            return family
        return "generic" if _is_tool_word(name) else None

    def consider(self, fn: FunctionNode, scope: _Scope) -> None:
        for finder in self.class_chain if scope.cls is not None else self.function_chain:
            if finder(self, fn, scope):
                return

    def drop(self, finder: Finder) -> None:
        """`finder` takes no function of this module (its module-wide table is empty): it is asked no more.
        (New tuples: a `consider` under way goes on through the one it holds.)"""
        self.function_chain = _without(self.function_chain, finder)
        self.method_chain = _without(self.method_chain, finder)
        self.class_chain = _without(self.class_chain, finder)
        self.class_chains.clear()

    # -- the walk ----------------------------------------------------------------------------------
    def run(self) -> Discovery:
        self.walk(self.tree.body, _Scope(), 0)
        return self.found

    def walk(self, body: list[ast.stmt], scope: _Scope, depth: int) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.consider(node, scope)
                self.walk_inside(node, scope, depth)
            elif isinstance(node, ast.ClassDef) and scope.cls is None:
                self.walk_class(node, _Scope(node, scope.outer, scope.closure_state, scope.prefix))
            elif isinstance(node, (ast.If, ast.Try)) and depth == 0:
                # `if TYPE_CHECKING:` / `try: ... except ImportError:` at module level
                for block in (getattr(node, "body", []), getattr(node, "orelse", [])):
                    self.walk(block, scope, depth)

    def walk_inside(self, fn: FunctionNode, scope: _Scope, depth: int) -> None:
        """A factory (or a method that registers tools): its locals, and its `self`, are the state
        the tools nested in it close over."""
        if depth >= MAX_NESTING or not _defines_inside(fn):
            return
        inner_state = dict(scope.closure_state)
        inner_state.update(module_state_names(fn.body))
        prefix = scope.prefix
        if scope.cls is not None:
            inner_state.setdefault("self", scope.cls.name)
            prefix = f"{scope.prefix}{scope.cls.name}."
        self.walk(fn.body, _Scope(None, (*scope.outer, fn), inner_state, prefix), depth + 1)

    def walk_class(self, cls: ast.ClassDef, scope: _Scope) -> None:
        methods = [m for m in cls.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))]
        scope.cls = cls
        self.class_marked = any(self.tool_decorator(d) for m in methods for d in m.decorator_list)
        self.class_toolkit = cls.name in self.configured_classes or _toolkit_marker(self, cls, methods)
        self.class_described = described_class(cls, methods, lambda: self.may_describe_api)
        self.class_dispatched = next((x for x in self.dispatches if x.cls == cls.name), None)
        if self.class_dispatched is not None and self.module is not None:
            declared = package_declarations(self.directory)
            method_names = {m.name for m in methods}
            # the schemas count only when they name some of this class's methods
            self.declared_names = declared if declared & method_names else frozenset()
        self.class_bases = None
        # the finders that can take a method of this very class (each left out answers "no" at once),
        # worked out once a module for each set left out
        out = (*(() if self.class_toolkit else (_by_toolkit_class,)),
               *(() if self.class_described is not None else (_by_described_class,)),
               *(() if self.class_dispatched is not None else (_by_name_dispatch,)))
        chain = self.class_chains.get(out)
        if chain is None:
            chain = self.class_chains[out] = tuple(f for f in self.method_chain if f not in out)
        self.class_chain = chain
        for m in methods:
            self.consider(m, scope)
        for m in methods:  # `def _register(self): @self.mcp.tool() def add(...)`
            self.walk_inside(m, scope, 1)

    def ancestors(self, cls: ast.ClassDef) -> list[Resolved | str]:
        if self.class_bases is None:
            self.class_bases = class_ancestors(cls, self.module) if cls.bases else []
        return self.class_bases

    def _name_dispatches(self) -> tuple[NameDispatch, ...]:
        """`getattr(api, function_name)` on an instance of a class of this module, in any module of its
        package directory (only when this module defines a class)."""
        if not self.directory or not any(isinstance(n, ast.ClassDef) for n in self.tree.body):
            return ()
        return package_dispatches(self.directory)

    def _registry_members(self) -> dict[str, tuple[str, int]]:
        """Functions a module-level dict maps names to, when the module looks a name up in it that is not
        a literal (`TOOLS[name](**args)`, `TOOLS.get(call.name)`): function -> (registry, line)."""
        if self.source is not None and "= {" not in self.source and "={" not in self.source:
            return {}
        dicts = {name: d for name, d in module_dicts(self.tree).items()
                 if d.values and all(isinstance(v, ast.Name) for v in d.values)
                 and all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in d.keys)}
        if not dicts:
            return {}
        used: dict[str, int] = {}
        if self.source is not None:  # the text, not the tree: `NAME[` or `NAME.get(` with no literal key
            for name in dicts:
                at = _looked_up(self.source, name)
                if at is not None:
                    used[name] = self.source.count("\n", 0, at) + 1
        else:
            for node in ast.walk(self.tree):
                key: ast.expr | None = None
                owner: ast.expr | None = None
                if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
                    owner, key = node.value, node.slice
                elif (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "get"
                    and node.args
                ):
                    owner, key = node.func.value, node.args[0]
                if isinstance(owner, ast.Name) and owner.id in dicts and key is not None \
                        and not isinstance(key, ast.Constant):
                    used.setdefault(owner.id, owner.lineno)
        out: dict[str, tuple[str, int]] = {}
        for name, line in used.items():
            for value in dicts[name].values:
                assert isinstance(value, ast.Name)
                out.setdefault(value.id, (name, line))
        return out

    def _keyword_handlers(self) -> dict[str, tuple[str, str]]:
        """Functions passed by a dispatcher keyword (`Server(on_call_tool=call_tool)`) ->
        (family, keyword)."""
        keywords = self.patterns.dispatcher_keywords
        if not keywords or (self.source is not None and not any(k in self.source for k in keywords)):
            return {}
        out: dict[str, tuple[str, str]] = {}
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Call):
                for kw in node.keywords:
                    if kw.arg in keywords and isinstance(kw.value, ast.Name):
                        out.setdefault(kw.value.id, (keywords[kw.arg], kw.arg))
        return out

    def _registered_functions(self) -> dict[str, tuple[str, str]]:
        """Function names passed to a registration call anywhere in the module -> (family, call)."""
        regs = self.patterns.registrations
        if not regs:
            return {}
        nodes: Iterable[ast.AST] = ast.walk(self.tree)
        if self.source is not None:
            # only the nodes whose lines span text like a registration call are walked (most modules
            # have none; a module that has one is walked down to those lines, not through whole classes)
            names = frozenset(regs)
            if not any(needle in self.source for needle in _registration_needles(names)):
                return {}  # a substring test first: the regex scan costs more than most files' discovery
            starts = _registration_calls(self.source, _registration_names(names))
            if not starts:
                return {}
            lines = _line_numbers(self.source, starts)
            nodes = _nodes_spanning(self.tree, lines)
        out: dict[str, tuple[str, str]] = {}
        for node in nodes:
            if not isinstance(node, ast.Call):
                continue
            full, last = dotted(node.func), decorator_name(node)
            hit = regs.get(full) or (regs.get(last) if "." not in last else None)
            if hit is None:
                continue
            marker, family = hit
            args = [*node.args[:1], *(k.value for k in node.keywords if k.arg in marker.keywords)]
            for arg in args:
                if isinstance(arg, ast.Name):
                    out.setdefault(arg.id, (family, full or last))
        return out


def _defines_inside(fn: FunctionNode) -> bool:
    """A factory: the function's body defines a function or class (where nested tools live)."""
    # asked of every function: the statements' classes (the parser makes these very classes) compared in one
    # C-level pass, not a loop of isinstance tests
    return not _DEFINITIONS.isdisjoint(map(type, fn.body))


_DEFINITIONS = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef})


def _nodes_spanning(tree: ast.Module, lines: list[int]) -> Iterator[ast.AST]:
    """The nodes of `tree` whose lines take in one of `lines` (sorted), and those without a position
    (`arguments`, `comprehension`) below them: every call written on one of those lines is among them."""
    stack: list[ast.AST] = list(tree.body)
    while stack:
        node = stack.pop()
        start = getattr(node, "lineno", None)
        if start is not None:
            at = bisect.bisect_left(lines, start)
            if at == len(lines) or lines[at] > (getattr(node, "end_lineno", None) or start):
                continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


@lru_cache(maxsize=4)
def _registration_needles(regs: frozenset[str]) -> tuple[str, ...]:
    """The text each registration call holds (`Tool(`, `from_function(`), none inside another."""
    needles = {f"{r.rsplit('.', 1)[-1]}(" for r in regs}
    return tuple(sorted(n for n in needles if not any(n != o and n.endswith(o) for o in needles)))


@lru_cache(maxsize=4)
def _registration_names(regs: frozenset[str]) -> tuple[str, ...]:
    """The name each registration call is written with (`FunctionTool`, `from_function`)."""
    return tuple(sorted({r.rsplit(".", 1)[-1] for r in regs}))


_CALL_OPEN = re.compile(r"\s*\(")
_WORD = re.compile(r"\w")


_LOOKUP_OPEN = re.compile(r"""(?:\[|\.get\()\s*(?![\s"'\d\]])""")


def _looked_up(source: str, name: str) -> int | None:
    """Where `name` is first looked up with a key that is not a literal (`NAME[key]`, `NAME.get(key`),
    as a whole word; found as plain text, its surroundings checked after."""
    at = source.find(name)
    while at != -1:
        if (at == 0 or not _WORD.match(source, at - 1)) and _LOOKUP_OPEN.match(source, at + len(name)):
            return at
        at = source.find(name, at + 1)
    return None


def _line_numbers(source: str, offsets: list[int]) -> list[int]:
    """The lines (sorted, each once) of offsets in `source`, counted in one pass."""
    lines: list[int] = []
    line, last = 1, 0
    for at in sorted(offsets):
        line += source.count("\n", last, at)
        last = at
        if not lines or lines[-1] != line:
            lines.append(line)
    return lines


def _registration_calls(source: str, names: tuple[str, ...]) -> list[int]:
    """Where text that could be a registration call starts (`FunctionTool(`, `.from_function (`): a name
    as a whole word, then `(`. Each name is found as plain text and its surroundings checked after (a
    pattern opening with a word boundary steps through every character)."""
    starts: list[int] = []
    for name in names:
        at = source.find(name)
        while at != -1:
            if (at == 0 or not _WORD.match(source, at - 1)) and _CALL_OPEN.match(source, at + len(name)):
                starts.append(at)
            at = source.find(name, at + 1)
    return starts


# -- the finders, in order ---------------------------------------------------------------------------

Finder = Callable[[_Discoverer, FunctionNode, _Scope], bool]


def _by_decorator(d: _Discoverer, fn: FunctionNode, scope: _Scope) -> bool:
    if not fn.decorator_list:
        return False
    for dec in fn.decorator_list:
        family = d.tool_decorator(dec)
        if family is None:
            continue
        declared, why = None, ""
        for other in fn.decorator_list:
            declared, why = declared_writer(other, d.patterns)
            if declared is not None:
                break
        d.add(fn, scope, family, f"decorated {_marker_text(dec)}", declared=declared, declared_by=why)
        return True
    return False


def _by_dispatcher(d: _Discoverer, fn: FunctionNode, scope: _Scope) -> bool:
    if not d.may_serve_dispatch:
        d.drop(_by_dispatcher)
        return False
    dec = next((x for x in fn.decorator_list if decorator_name(x) in d.patterns.dispatchers), None) \
        if fn.decorator_list else None
    handler = d.handlers.get(fn.name) if dec is None else None
    if dec is None and handler is None:
        return False
    args = all_args(fn)
    if not args:
        return False
    if dec is not None:
        family, how = d.patterns.dispatchers[decorator_name(dec)], f"dispatcher {_marker_text(dec)}"
    else:
        assert handler is not None
        family, how = handler[0], f"handler `{handler[1]}={fn.name}`"
    names = frozenset(a.arg for a in args)
    # the tool's name is the first parameter (`name`) or a field of one (`params.name`)
    subjects = frozenset({args[0].arg, *(f"{a.arg}.name" for a in args)})
    branches = list(name_branches(fn, subjects))
    for tool_name, line, body in branches:
        d.add(branch_function(fn, tool_name, line, body), scope, family,
              f"branch `{tool_name}` of {how} `{fn.name}`",
              qualname=scope.qualname(f"{fn.name}[{tool_name}]"), framework=names)
    if not branches:
        # a handler that serves one tool: the whole function, named by what it checks, if anything
        only = _single_name(fn, subjects)
        label = f"`{only}` " if only else ""
        d.add(branch_function(fn, only or fn.name, fn.lineno, fn.body), scope, family,
              f"the one tool {label}of {how} `{fn.name}` (no branch on the tool name)",
              qualname=scope.qualname(f"{fn.name}[{only}]" if only else fn.name), framework=names)
    d.taken.add(id(fn))
    return True


def _single_name(fn: FunctionNode, subjects: frozenset[str]) -> str | None:
    """The one tool name a handler checks: `assert params.name == "add"`, `if params.name != "add": raise`."""
    for node in fn.body[:4]:
        test = node.test if isinstance(node, (ast.Assert, ast.If)) else None
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
            test = test.values[0]
        if (
            isinstance(test, ast.Compare)
            and len(test.ops) == 1
            and isinstance(test.ops[0], (ast.Eq, ast.NotEq))
        ):
            flipped = ast.Compare(test.left, [ast.Eq()], test.comparators)
            found = _compared_name(flipped, subjects)
            if found and (isinstance(node, ast.Assert) == isinstance(test.ops[0], ast.Eq)):
                return found
    return None


def _by_state_annotation(d: _Discoverer, fn: FunctionNode, scope: _Scope) -> bool:
    if not d.may_annotate:
        d.drop(_by_state_annotation)
        return False
    if scope.cls is not None and fn.args.args and fn.args.args[0].arg in ("self", "cls"):
        return False
    roots = depends_roots(fn, d.aliases, d.patterns.state_annotations)
    if not roots:
        return False
    markers = ", ".join(f"`{p}`" for p in roots)
    family = next((d.patterns.state_annotations[m] for m in _annotation_markers(fn, d) if m), "annotated")
    d.add(fn, scope, family, f"injected state parameter {markers}")
    return True


def _annotation_markers(fn: FunctionNode, d: _Discoverer) -> list[str]:
    """The state markers (`Depends`) a function's annotations use, in parameter order."""
    out = []
    for p in all_args(fn):
        ann = resolve_annotation(p.annotation, d.aliases)
        if isinstance(ann, ast.Subscript) and decorator_name(ann.value) == "Annotated":
            items = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
            out += [decorator_name(i) for i in items[1:] if isinstance(i, ast.Call)
                    and decorator_name(i) in d.patterns.state_annotations]
    return out


def _by_base_class(d: _Discoverer, fn: FunctionNode, scope: _Scope) -> bool:
    cls = scope.cls
    if cls is None or not cls.bases or fn.name not in d.patterns.tool_base_methods:
        return False
    candidates = [
        m for base, markers in d.patterns.tool_bases.items() for m in markers if fn.name in m[0].methods
    ]
    if not candidates:
        return False
    if fn.name in _COMMON_METHODS and not any("Tool" in (base_name(b) or "") for b in cls.bases):
        # `run` is a method of half the classes there are: its bases are resolved (across modules, the
        # costly part) only when one of them is named like a tool base (`BaseTool`, `RagTool`)
        return False
    names = [a if isinstance(a, str) else a.node.name for a in d.ancestors(cls)]
    defined = [m.name for m in cls.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for marker, family in candidates:
        if marker.base not in names:
            continue
        first = next((m for m in marker.methods if m in defined), None)
        if first != fn.name:
            return False  # `_arun` beside `_run`: the same tool once
        roots = d.roots(fn, scope)
        for p in all_args(fn):
            if p.arg in marker.state_params:
                roots[p.arg] = ""
        chain = " <- ".join([cls.name, *names[: names.index(marker.base) + 1]])
        d.add(fn, scope, family, f"`{fn.name}` of a `{marker.base}` subclass ({chain})", roots=roots)
        return True
    if fn.name in ("_run", "invoke") and not d.configured_classes & {cls.name}:
        unresolved = [n for n in (base_name(b) for b in cls.bases) if n]
        d.reject(fn, scope, f"`{fn.name}` of `{cls.name}`, whose bases ({', '.join(unresolved)}) do not "
                            "lead to a known tool base class in the linted tree")
    return False


def _by_toolkit_class(d: _Discoverer, fn: FunctionNode, scope: _Scope) -> bool:
    cls = scope.cls
    if cls is None:
        return False
    if not d.class_toolkit:
        return False
    configured = cls.name in d.configured_classes
    public = not fn.name.startswith("_")
    plain = not any(decorator_name(x) in NOT_TOOL_DECORATORS or not configured for x in fn.decorator_list)
    if d.class_marked and not configured:
        if public and plain and fn.name not in _TOOLKIT_EXCLUDE:
            d.reject(
                fn, scope, f"public method of `{cls.name}` without the tool marker its sibling methods carry"
            )
        return False
    if not (public and plain) or fn.name in _TOOLKIT_EXCLUDE:
        return False
    why = "configured in `tool-classes`" if configured else f"public method of toolkit class `{cls.name}`"
    d.add(fn, scope, "configured" if configured else "generic", why)
    return True


_COMMON_METHODS = frozenset({"run", "__call__"})
_TOOLKIT_EXCLUDE = frozenset({"get_tools", "get_tool", "to_tool_list", "model_post_init", "dict", "json",
                              "model_dump", "copy", "close", "reset"})


def _toolkit_marker(d: _Discoverer, cls: ast.ClassDef, methods: list[FunctionNode]) -> bool:
    names = [cls.name, *(base_name(b) for b in cls.bases)] if cls.bases else [cls.name]
    named = any(n.endswith(_TOOLKIT_SUFFIXES) for n in names)  # (`TOOLKIT_CLASS_NAME`, on identifiers)
    if not named and not d.patterns.toolkit_classes:
        return False
    if any(m.name in ("get_tools", "to_tool_list") for m in methods):
        return False  # a container that hands out tool objects, not a toolkit of methods
    if named:
        return True
    return any(p.search(n) for p, _, _ in d.patterns.toolkit_classes for n in names if n)


def described_class(
    cls: ast.ClassDef, methods: list[FunctionNode], api_text: Callable[[], bool] | None = None
) -> tuple[str, str] | None:
    """How a class describes itself to the agent, and which of its methods are the tools then: a
    description of an API whose public methods the model calls (`self._api_description = "..."`, or a
    `_load_scenario` that loads the world they act on) -> ("...", ""); a description with the
    parameters of one call (`description = ...` beside `parameters = {...}`) -> ("...", method).
    `api_text()`: whether the module's text names an API description at all (asked only of a class
    with no call method: when it does not, such a class's attributes cannot matter)."""
    names = {m.name for m in methods}
    call = next((m for m in CALL_METHODS if m in names), None)
    scenario = next((m.name for m in methods if m.name in SCENARIO_LOADERS), None)
    api_named = call is not None or api_text is None or api_text()
    if not api_named:
        return (f"`{scenario}`", "") if scenario else None
    assigned: set[str] = set()
    for item in cls.body:
        if isinstance(item, (ast.Assign, ast.AnnAssign)) and item.value is not None:
            # a value, not a field declaration (`description: str` of a framework's own wrapper class)
            targets = item.targets if isinstance(item, ast.Assign) else [item.target]
            if isinstance(item.value, (ast.Constant, ast.JoinedStr, ast.Dict, ast.List, ast.BinOp)):
                assigned.update(t.id for t in targets if isinstance(t, ast.Name))
    init = next((m for m in methods if m.name == "__init__"), None)
    if init is not None:
        for node in walk_nodes(init):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and \
                    isinstance(node.value, ast.Name) and node.value.id == "self":
                assigned.add(node.attr)
    api = assigned & API_DESCRIPTIONS
    if api:
        return f"`{min(api)}`", ""
    if scenario:
        return f"`{scenario}`", ""
    if call is not None and "description" in assigned and assigned & CALL_PARAMETERS:
        return f"`description` and `{min(assigned & CALL_PARAMETERS)}`", call
    return None


# A class attribute describing the whole API to the agent; a method loading the world its methods act on.
API_DESCRIPTIONS = frozenset({"_api_description", "api_description"})
SCENARIO_LOADERS = frozenset({"_load_scenario", "load_scenario"})
# Class attributes giving one call's parameters, beside `description`; the method that serves the call.
CALL_PARAMETERS = frozenset({"parameters", "input_parameters", "input_schema", "inputSchema"})
CALL_METHODS = ("call", "__call__", "execute", "run", "invoke", "forward", "_call", "_run")
# The text each of API_DESCRIPTIONS holds (`_api_description` holds `api_description`).
_API_TEXT = "api_description"


def _by_described_class(d: _Discoverer, fn: FunctionNode, scope: _Scope) -> bool:
    cls, described = scope.cls, d.class_described
    if cls is None or described is None:
        return False
    how, method = described
    if method:
        if fn.name != method:
            return False
        d.add(
            fn, scope, "generic", f"`{fn.name}` of `{cls.name}`, which declares its call to the agent ({how})"
        )
        return True
    if fn.name.startswith("_") or any(decorator_name(x) in NOT_TOOL_DECORATORS for x in fn.decorator_list) \
            or fn.name in _TOOLKIT_EXCLUDE:
        return False
    d.add(
        fn, scope, "generic", f"public method of `{cls.name}`, which describes its API to the agent ({how})"
    )
    return True


def _by_name_dispatch(d: _Discoverer, fn: FunctionNode, scope: _Scope) -> bool:
    """A public method of a class the model's calls reach by name (`getattr(api, function_name)(...)`)."""
    found, cls = d.class_dispatched, scope.cls
    if found is None or cls is None or fn.name.startswith("_") or fn.name in _TOOLKIT_EXCLUDE or \
            any(decorator_name(x) in NOT_TOOL_DECORATORS for x in fn.decorator_list):
        return False
    declared = d.declared_names
    if declared and fn.name not in declared:
        d.reject(
            fn,
            scope,
            f"reached by name through `{found.text}` ({found.where}:{found.line}) but declared to "
            "the model by no function-calling schema of its package",
        )
        return False
    how = "declared in a schema, " if declared else ""
    d.add(fn, scope, "generic", f"public method of `{cls.name}`, {how}reached by name through `{found.text}` "
                                f"({found.where}:{found.line})")
    return True


def _by_registry(d: _Discoverer, fn: FunctionNode, scope: _Scope) -> bool:
    """A function a module-level registry maps a name to, looked up by a name that is not a literal."""
    if scope.cls is not None or scope.outer:
        return False
    if not d.registry_members:
        d.drop(_by_registry)
        return False
    hit = d.registry_members.get(fn.name)
    if hit is None:
        return False
    registry, line = hit
    d.add(fn, scope, "generic", f"in registry `{registry}`, looked up by name at line {line}")
    return True


def _by_docstring_schema(d: _Discoverer, fn: FunctionNode, scope: _Scope) -> bool:
    """A module function the module turns into a function-calling schema from its docstring."""
    if scope.cls is not None or scope.outer:
        return False
    if not d.docstring_declared:
        d.drop(_by_docstring_schema)
        return False
    builder = d.docstring_declared.get(fn.name)
    if builder is None:
        return False
    d.add(fn, scope, "generic",
          f"declared to the model by `{builder}(...)`, a schema built from its docstring")
    return True


def _by_declaration(d: _Discoverer, fn: FunctionNode, scope: _Scope) -> bool:
    """A function (or public method) whose name a function-calling schema of its package declares to
    the model."""
    if fn.name.startswith("_") or scope.outer:
        return False
    if not d.package_declared:
        d.drop(_by_declaration)
        return False
    if fn.name not in d.package_declared:
        return False
    d.add(
        fn,
        scope,
        "generic",
        f"`{fn.name}`, declared to the model by a function-calling schema of its package",
    )
    return True


def _by_registration(d: _Discoverer, fn: FunctionNode, scope: _Scope) -> bool:
    if scope.cls is not None:
        return False
    if not d.registered:
        d.drop(_by_registration)
        return False
    hit = d.registered.get(fn.name)
    if hit is None:
        return False
    family, call = hit
    d.add(fn, scope, family, f"registered by `{call}({fn.name})`")
    return True


def _by_configuration(d: _Discoverer, fn: FunctionNode, scope: _Scope) -> bool:
    if not d.configured:
        return False
    qual = scope.qualname(fn.name)
    if qual not in d.configured:
        return False
    d.add(fn, scope, "configured", "configured in `tools`")
    return True


def _by_request_kind(d: _Discoverer, fn: FunctionNode, scope: _Scope) -> bool:
    if not d.may_dispatch_requests:
        d.drop(_by_request_kind)
        return False
    family = None
    if _named_request_dispatcher(d.patterns, fn.name):
        # the class's ancestors are worked out only for a function a dispatcher pattern names
        classes = (
            [scope.cls.name, *(a if isinstance(a, str) else a.node.name for a in d.ancestors(scope.cls))]
            if scope.cls is not None
            else []
        )
        family = declared_dispatcher(fn, classes, d.patterns)
    if family is None and d.verb_lines is not None:
        inside = bisect.bisect_right(d.verb_lines, fn.end_lineno or fn.lineno) - bisect.bisect_left(
            d.verb_lines, fn.lineno
        )
        if inside < 2:
            return False
    branches = kind_branches(fn, declared=family is not None)
    if not branches:
        return False
    replies = reply_calls(d.patterns)
    names = frozenset(a.arg for a in all_args(fn))
    for branch in branches:
        verb, label = branch.http_verb, branch.label
        name = f"{fn.name}[{label}]"
        stand_in = branch_tool(fn, name, branch.line, branch.body, replies)
        d.add(
            stand_in,
            scope,
            family or "generic",
            f"branch `{label}` of request dispatcher `{fn.name}`",
            declared=HTTP_VERBS[verb] if verb else None,
            declared_by=f"HTTP verb {verb}" if verb else "",
            qualname=scope.qualname(name),
            framework=names,
            roots=_branch_roots(d, stand_in, scope, fn, branch.body),
        )
    d.taken.add(id(fn))
    return True


def _named_request_dispatcher(patterns: CompiledPatterns, name: str) -> bool:
    """Whether a profile's `RequestDispatcher` names a function so (asked of every function: a loop,
    not a generator's frames)."""
    for pattern, _, _ in patterns.request_dispatchers:
        if pattern.fullmatch(name):
            return True
    return False


def _by_name_chain(d: _Discoverer, fn: FunctionNode, scope: _Scope) -> bool:
    """`if func_name == "search_action": ... elif func_name == "click_action":`: one tool per branch."""
    if not d.may_name_chain:
        d.drop(_by_name_chain)
        return False
    branches = name_chain_branches(fn)
    if not branches:
        return False
    replies = reply_calls(d.patterns)
    names = frozenset(a.arg for a in all_args(fn))
    subject = _kind_subject(branches[0])
    for branch in branches:
        name = f"{fn.name}[{branch.kind}]"
        stand_in = branch_tool(fn, name, branch.line, branch.body, replies)
        d.add(
            stand_in,
            scope,
            "generic",
            f"branch `{branch.kind}` of `{fn.name}`, which runs the function the model named in `{subject}`",
            qualname=scope.qualname(name),
            framework=names,
            roots=_branch_roots(d, stand_in, scope, fn, branch.body),
        )
    d.taken.add(id(fn))
    return True


def _branch_roots(d: _Discoverer, stand_in: FunctionNode, scope: _Scope, fn: FunctionNode,
                  body: list[ast.stmt]) -> dict[str, str]:
    """A branch's state: the dispatcher's, and the stores it opens outside the branch for it to use."""
    roots = d.roots(stand_in, scope)
    for name, path in held_stores(fn, body).items():
        roots.setdefault(name, path)
    return roots


def _kind_subject(branch: KindBranch) -> str:
    test = branch.test.test
    assert isinstance(test, ast.Compare)
    side = test.comparators[0] if isinstance(test.left, ast.Constant) else test.left
    return ast.unparse(side)


FINDERS: tuple[Finder, ...] = (
    _by_decorator,
    _by_dispatcher,
    _by_state_annotation,
    _by_base_class,
    _by_toolkit_class,
    _by_described_class,
    _by_name_dispatch,
    _by_registration,
    _by_registry,
    _by_docstring_schema,
    _by_declaration,
    _by_configuration,
    _by_request_kind,
    _by_name_chain,
)
# The finders that can take a method, and those that can take a function outside a class (each of the
# others answers "no" at once there): asked of every function, the calls left out add up.
METHOD_FINDERS = tuple(f for f in FINDERS if f not in (_by_registration, _by_registry, _by_docstring_schema))
FUNCTION_FINDERS = tuple(
    f for f in FINDERS if f not in (_by_base_class, _by_toolkit_class, _by_described_class, _by_name_dispatch)
)
# the same, for a module no `tools = [...]` entry names (most modules)
_UNCONFIGURED_METHOD_FINDERS = tuple(f for f in METHOD_FINDERS if f is not _by_configuration)
_UNCONFIGURED_FUNCTION_FINDERS = tuple(f for f in FUNCTION_FINDERS if f is not _by_configuration)


def _without(chain: tuple[Finder, ...], finder: Finder) -> tuple[Finder, ...]:
    """`chain` less `finder` (sliced: asked a few times a module, on every module)."""
    if finder not in chain:
        return chain
    at = chain.index(finder)
    return chain[:at] + chain[at + 1:]


# -- dispatch ----------------------------------------------------------------------------------------


def name_branches(
    fn: FunctionNode, name_param: str | Collection[str]
) -> Iterator[tuple[str, int, list[ast.stmt]]]:
    """(tool name, line, body) of every branch of `fn` that compares `name_param` (a parameter, or
    any of several subjects such as `params.name`) with a constant: `if name == "add":`,
    `elif name == Tools.ADD:`, `match name: case "add":`."""
    subjects = frozenset({name_param}) if isinstance(name_param, str) else frozenset(name_param)
    for node in own_statements(fn):
        if isinstance(node, ast.If):
            tool = _compared_name(node.test, subjects)
            if tool:
                yield tool, node.lineno, node.body
        elif isinstance(node, ast.Match) and ast.unparse(node.subject) in subjects:
            for case in node.cases:
                tool = _pattern_name(case.pattern)
                if tool:
                    yield tool, case.pattern.lineno, case.body


def _compared_name(test: ast.expr, subjects: frozenset[str]) -> str | None:
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return None
    left, right = test.left, test.comparators[0]
    if isinstance(right, (ast.Name, ast.Attribute)) and dotted(right) in subjects:
        left, right = right, left
    if not (isinstance(left, (ast.Name, ast.Attribute)) and dotted(left) in subjects):
        return None
    return _constant_name(right)


def _constant_name(expr: ast.expr) -> str | None:
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return expr.value
    if isinstance(expr, ast.Attribute):  # `Tools.ADD` / `Tools.ADD.value`
        attr = (
            expr.value.attr if expr.attr == "value" and isinstance(expr.value, ast.Attribute) else expr.attr
        )
        return attr.lower()
    return None


def _pattern_name(pattern: ast.pattern) -> str | None:
    if isinstance(pattern, ast.MatchValue):
        return _constant_name(pattern.value)
    return None


def branch_function(fn: FunctionNode, tool_name: str, line: int, body: list[ast.stmt]) -> FunctionNode:
    """A stand-in function for one dispatcher branch: the dispatcher's parameters, the branch's body
    after the plain assignments and the `global`/`nonlocal` declarations the dispatcher makes before its
    branches (`board = ctx.state`)."""
    stand_in = copy.copy(fn)
    stand_in.name = re.sub(r"\W", "_", tool_name)
    prefix: list[ast.stmt] = []
    if body is not fn.body:
        for stmt in fn.body:
            if stmt.lineno >= line or isinstance(stmt, (ast.If, ast.Match, ast.Return, ast.Raise)):
                break
            if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.Global, ast.Nonlocal)):
                prefix.append(stmt)  # (`nonlocal enabled` before the branches: a branch's rebinding writes)
    stand_in.body = [*prefix, *body]
    stand_in.decorator_list = []
    stand_in.lineno = line
    stand_in.end_lineno = max((getattr(s, "end_lineno", None) or s.lineno for s in body), default=line)
    return stand_in


# A call that builds a function-calling schema from a function's signature and docstring
# (`function_to_json(f)`, `get_json_schema(f)`, `convert_to_openai_function(f)`, `function_to_schema(f)`).
_SCHEMA_BUILDER = re.compile(r"(?:\w+_)?(?:(?:function|func|fn|tool|callable)s?_?to_?"
                             r"(?:json|schema|tool|openai)|get_json_schema|convert_to_openai_(?:function|tool)"
                             r"|function_schema)\w*")
# Text every name `_SCHEMA_BUILDER` takes holds one of (a module whose text holds none builds no schema).
_SCHEMA_BUILDER_TEXT = ("to_json", "tojson", "to_schema", "toschema", "to_tool", "totool", "to_openai",
                        "toopenai", "get_json_schema", "function_schema")


def docstring_schema_functions(tree: ast.Module, source: str | None = None) -> dict[str, str]:
    """Names in a module-level list of functions (`FUNCTIONS = [get_weather, book_table]`) that the
    module maps a schema builder over (`[function_to_json(f) for f in FUNCTIONS]`, `map(get_json_schema,
    FUNCTIONS)`) -> the builder's name: the model is shown those functions. Modules with no such list
    (nearly all) cost a look at their top-level statements; those with one, whose text (`source`)
    names no schema builder, a few substring tests."""
    lists = {t.id: [e.id for e in node.value.elts if isinstance(e, ast.Name)] for node in tree.body
             if isinstance(node, ast.Assign) and isinstance(node.value, (ast.List, ast.Tuple))
             and node.value.elts and all(isinstance(e, ast.Name) for e in node.value.elts)
             for t in node.targets if isinstance(t, ast.Name)}
    if not lists or (source is not None and not any(w in source for w in _SCHEMA_BUILDER_TEXT)):
        return {}
    out: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.ListComp, ast.GeneratorExp, ast.SetComp)) \
                and isinstance(node.elt, ast.Call) and len(node.generators) == 1:
            call, gen = node.elt, node.generators[0]
            builder = dotted(call.func).rsplit(".", 1)[-1]
            if isinstance(gen.iter, ast.Name) and gen.iter.id in lists and isinstance(gen.target, ast.Name) \
                    and _SCHEMA_BUILDER.fullmatch(builder) \
                    and any(isinstance(a, ast.Name) and a.id == gen.target.id for a in call.args[:1]):
                out.update(dict.fromkeys(lists[gen.iter.id], builder))
        elif isinstance(node, ast.Call) and len(node.args) == 2 and dotted(node.func) == "map":
            builder = dotted(node.args[0]).rsplit(".", 1)[-1]
            seq = node.args[1]
            if isinstance(seq, ast.Name) and seq.id in lists and _SCHEMA_BUILDER.fullmatch(builder):
                out.update(dict.fromkeys(lists[seq.id], builder))
    return out


def tool_candidates(tree: ast.Module, module_name: str) -> list[Candidate]:
    """The classes whose public methods are documented (each a tool of a toolkit, if it is one), and the
    module-level functions documented like a tool (an `Args:` section or annotated parameters and a
    docstring), best first. Read only when a run found no tool: a hint, never a finding."""
    out: list[Candidate] = []
    ref = module_name or "module"
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            documented = [m.name for m in node.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))
                          and not m.name.startswith("_") and ast.get_docstring(m)
                          and not any(decorator_name(d) in NOT_TOOL_DECORATORS for d in m.decorator_list)]
            if len(documented) >= 2:
                shown = ", ".join(f"`{n}`" for n in documented[:3]) + (" ..." if len(documented) > 3 else "")
                out.append(
                    Candidate(
                        node.name,
                        node.lineno,
                        f"{len(documented)} documented public methods ({shown})",
                        f'tool-classes = ["{ref}:{node.name}"]',
                        2 * len(documented),
                    )
                )
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("_"):
            doc = ast.get_docstring(node) or ""
            params = [a for a in all_args(node) if a.arg not in ("self", "cls")]
            if doc and params and ("Args:" in doc or ":param" in doc or all(a.annotation for a in params)):
                why = "a docstring with an `Args:` section" if "Args:" in doc or ":param" in doc else \
                    "a docstring and annotated parameters"
                out.append(Candidate(node.name, node.lineno, why, f'tools = ["{ref}:{node.name}"]', 1))
    return sorted(out, key=lambda c: -c.score)


def discover(tree: ast.Module, settings: Settings, module_name: str = "", module: ModuleSource | None = None,
             source: str | None = None) -> Discovery:
    """Every tool of a module, and the functions that look like tools but were not taken."""
    return _Discoverer(tree, settings, module_name, module, source).run()


def discover_tools(tree: ast.Module, settings: Settings, module_name: str = "",
                   module: ModuleSource | None = None) -> list[ToolInfo]:
    return discover(tree, settings, module_name, module).tools
