"""The summariser: what one function does with state and with its parameters.

For each function it records the canonical state paths it reads and writes
(`bank_account.scheduled_transactions[*].amount`), where each parameter flows (state write, call
argument, log call, returned message, condition), its return statements, which statements write, and
the calls it could not follow that may write elsewhere (a database cursor, an HTTP client).

Paths are canonical: the state root is replaced by its name in the environment (`self.` is dropped,
an injected `Depends("bank_account")` parameter becomes `bank_account`), element selection becomes
`[*]`, a constant string key becomes a field (`data["users"]` is `users`), and locals bound to state
(`t = next(t for t in account.items if ...)`, `a, b = self.x, self.y`) are followed. Helpers are
followed up to `MAX_HELPER_HOPS`: by bare name in this module, through `self`/`cls` and the class's
bases, through a parameter's annotated class, and into other modules of the linted tree through
imports (`toollint.analysis.resolver`).

Nothing here recurses on the depth of the code being read: `elif` chains and long `a + b + ...`
chains are walked in loops, so a 400-branch dispatcher or a 1000-term sum is analysed like any other.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Literal

from toollint.analysis.discovery import (
    CONTEXT_HOPS,
    CONTEXT_ROOT,
    CONTEXT_STATE_ATTRS,
    annotated_class,
    module_state_names,
    resolve_annotation,
    type_aliases,
)
from toollint.analysis.dispatch import (
    SQL_EXECUTE,
    STORE_HANDLE,
    RegistryTarget,
    local_modules,
    module_dicts,
    opens_store,
    read_only_sql,
    registry_target,
    same_project,
)
from toollint.analysis.files_written import FILES, writes_files
from toollint.analysis.resolver import (
    ModuleSource,
    Resolved,
    class_ancestors,
    imported_module,
    lookup,
    lookup_class,
)
from toollint.analysis.statepath import StatePath
from toollint.analysis.vocabulary import (
    BOOKKEEPING_FIELD,
    FORMAT_METHODS,
    LOG_FUNCS,
    LOG_METHODS,
    LOG_OBJECTS,
    MUTATORS,
    PURE_CALLS,
    PURE_METHODS,
    READ_METHODS,
    SHAPE_CALLS,
    STATE_ACCESSOR,
    WRITE_VERBS,
    is_write_verb,
    verb_words,
)
from toollint.analysis.walk import child_nodes, walk_nodes

MAX_HELPER_HOPS = 3
MAX_LITERAL_LOOP = 6  # a loop over a literal tuple of state runs its body once per element, up to this many
MAX_EXPRESSION_DEPTH = 200  # nesting (not length) of one expression the summariser follows

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef

# Where a parameter's value goes. "local" (bound to a local variable) is not a sink: the local's own
# uses are recorded against the parameter instead, through taint.
Sink = Literal["state", "call", "lookup", "cond", "log", "message", "other", "local"]


class TooComplex(Exception):
    """An expression nested deeper than `MAX_EXPRESSION_DEPTH`: the tool is reported, not analysed."""


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
        return StatePath.parse(self.path).field


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


@dataclass(frozen=True)
class ExternalCall:
    """A call the analysis could not follow whose name says it may change something outside the
    state it sees (`cursor.execute(...)`, `client.send_message(...)`, `repo.index.commit(...)`)."""

    callee: str
    node: ast.AST
    via: tuple[str, ...] = ()


# Calls outside the state the analysis sees that change something elsewhere (a database, a remote API).
EXTERNAL_EFFECT_CALLS = frozenset([
    "execute", "executemany", "executescript", "commit", "request", "urlopen", "post", "put", "patch",
    "delete", "send", "write", "write_text", "write_bytes", "mkdir", "unlink", "rmdir", "rename", "touch",
    "run", "call", "invoke", "ainvoke", "submit", "emit", "publish", "dispatch", "upload", "insert_one",
    "insert_many", "update_one", "update_many", "delete_one", "delete_many", "replace_one", "bulk_write",
    "add_texts", "add_documents", "upsert", "move",
])


@dataclass
class ParamInfo:
    name: str
    annotation: ast.expr | None
    default: ast.expr | None
    has_default: bool
    node: ast.arg
    state_root: str | None = None  # canonical prefix when this parameter is injected state

    @property
    def annotation_text(self) -> str:
        return ast.unparse(self.annotation) if self.annotation is not None else ""

    @property
    def base(self) -> str:
        """The annotation without Optional/None/subscripts: "float", "Transaction", "" (none, or a union)."""
        return base_annotation(self.annotation_text)[0]

    @property
    def optional(self) -> bool:
        """The annotation admits None (`Optional[x]`, `x | None`)."""
        return base_annotation(self.annotation_text)[1]


@dataclass
class FunctionSummary:
    """What one function does with state and with its parameters."""

    qualname: str
    node: FunctionNode
    params: list[ParamInfo]
    reads: list[StateAccess] = field(default_factory=list)
    writes: list[StateAccess] = field(default_factory=list)
    # parameter name -> sinks it flows into, each with the node where it does
    flows: dict[str, list[tuple[Sink, ast.AST]]] = field(default_factory=dict)
    returns: list[ast.Return] = field(default_factory=list)
    return_paths: set[str] = field(default_factory=set)  # state paths the function returns
    # ids of statements that write state (directly or through a helper), for path reasoning
    writing_nodes: set[int] = field(default_factory=set)
    # ids of compound statements whose header (an `if` test, a `for` iterable, a `with` item) writes:
    # that write happens before any branch is taken
    header_writes: set[int] = field(default_factory=set)
    # helpers this function reaches (transitively, within MAX_HELPER_HOPS), in call order
    helpers: list[FunctionNode] = field(default_factory=list)
    # id of a call to a helper that was followed -> that helper's summary (is its write refusable?)
    helper_calls: dict[int, FunctionSummary] = field(default_factory=dict, repr=False)
    opaque: list[OpaqueUse] = field(default_factory=list)  # state used whole (see OpaqueUse)
    external: list[ExternalCall] = field(default_factory=list)  # may write outside the state it sees
    complete: bool = True  # False for the stand-in returned when a helper cycle reaches back here
    # memo for the path reasoning of `toollint.analysis.paths` (statement id -> definitely writes)
    definite: dict[int, bool] = field(default_factory=dict, repr=False)
    _parents: dict[int, ast.AST] | None = field(default=None, repr=False)
    _stmt_parents: dict[int, ast.AST] | None = field(default=None, repr=False)
    _referenced: dict[bool, frozenset[str]] = field(default_factory=dict, repr=False)

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

    def referenced_paths(self, *, include_logs: bool = False) -> frozenset[str]:
        """The paths the function reads (outside log calls, unless `include_logs`) or writes. Kept once
        asked: the rules ask it of every other tool of the module, for each tool (the summary is
        complete by then, and no summariser runs while a module's rules do)."""
        found = self._referenced.get(include_logs)
        if found is None:
            read = {a.path for a in self.reads if include_logs or not _in_log(a)}
            found = self._referenced[include_logs] = frozenset(read | {a.path for a in self.writes})
        return found

    def ancestors(self, node: ast.AST) -> set[int]:
        """Ids of `node` and every node of this function's body that contains it."""
        if isinstance(node, ast.stmt):
            # what holds a statement is a statement, an `except` or a `case`: their links alone, not
            # those of every expression (the reasoning about a path asks this of each return)
            return self._chain(node, self._statement_parents())
        if self._parents is None:
            parents: dict[int, ast.AST] = {}
            todo: list[ast.AST] = list(self.node.body)
            for sub in todo:
                children = child_nodes(sub)
                for child in children:
                    parents[id(child)] = sub
                todo.extend(children)
            self._parents = parents
        return self._chain(node, self._parents)

    def _statement_parents(self) -> dict[int, ast.AST]:
        if self._stmt_parents is None:
            parents: dict[int, ast.AST] = {}
            todo: list[ast.AST] = list(self.node.body)
            for sub in todo:
                children = [c for c in child_nodes(sub) if isinstance(c, _STATEMENT_HOLDERS)]
                for child in children:
                    parents[id(child)] = sub
                todo.extend(children)
            self._stmt_parents = parents
        return self._stmt_parents

    @staticmethod
    def _chain(node: ast.AST, parents: dict[int, ast.AST]) -> set[int]:
        out = {id(node)}
        current: ast.AST | None = node
        while current is not None:
            current = parents.get(id(current))
            if current is not None:
                out.add(id(current))
        return out


# The nodes a statement can sit in (the parser's: a statement is never inside an expression)
_STATEMENT_HOLDERS = (ast.stmt, ast.excepthandler, ast.match_case)


def _in_log(access: StateAccess) -> bool:
    return bool(getattr(access.node, "_toollint_in_log", False))


@dataclass(frozen=True)
class Helper:
    """A helper a call reaches: the function, the index of its module, its class (for methods)."""

    node: FunctionNode
    index: FunctionIndex
    cls: str | None


class FunctionIndex:
    """Functions and classes of a module, for resolving helpers: by bare name here, through the
    class's bases, and through imports into other modules of the linted tree."""

    def __init__(self, tree: ast.Module, module: ModuleSource | None = None,
                 accessors: frozenset[str] = frozenset()) -> None:
        self.tree = tree
        self.module = module
        self.functions: dict[str, FunctionNode] = {}
        self.methods: dict[str, dict[str, FunctionNode]] = {}
        self.classes: dict[str, ast.ClassDef] = {}
        self.class_of: dict[int, str] = {}
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.functions[node.name] = node
            elif isinstance(node, ast.ClassDef):
                self.classes[node.name] = node
                meths = self.methods.setdefault(node.name, {})
                for item in node.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        meths[item.name] = item
                        self.class_of[id(item)] = node.name
        self.aliases = type_aliases(tree)
        self._cache: dict[tuple[int, tuple[tuple[str, str], ...]], FunctionSummary] = {}
        self.module_state: dict[str, str] = {}
        self.accessors = accessors  # called names that return state (`get_current_context`)
        self._mro: dict[str, list[tuple[ast.ClassDef, FunctionIndex]]] = {}
        self._methods: dict[tuple[str, str], Helper | None] = {}  # (class, name) -> `method`'s answer
        self._unbound: set[str] = set()  # names `function` found bound nowhere in the module
        # the nodes of each expression a grader walk looked at (`toollint.analysis.grading`), shared by
        # the module's graders: they walk the same helpers. Each list starts with its expression, which
        # it keeps alive, so an id is never reused while its entry is here.
        self.expr_nodes: dict[int, list[ast.AST]] = {}
        # a grader walk's helper results that hold in any grader (`toollint.analysis.grading`)
        self.helper_results: dict[tuple[object, ...], object] = {}
        # dispatch by name (`toollint.analysis.dispatch`): dict registries, and modules imported whole
        self.registries = module_dicts(tree)
        self.module_aliases = local_modules(tree.body)

    def registry_helper(self, target: RegistryTarget) -> Helper | None:
        """The function a by-name call reaches, when it is in the linted tree."""
        if not target.module:
            return self.function(target.function) if target.function else None
        if self.module is None or "{" in target.name or not same_project(target.registry, self.module.path):
            return None  # a third-party or standard module is never in the tree: not looked for
        found = imported_module(self.module, 0, target.registry)
        return FunctionIndex.of(found, self.accessors).function(target.name) if found is not None else None

    def writes_through(self, target: RegistryTarget) -> bool:
        """A by-name call the tree does not hold, into a module of the same project, named with a
        writing verb: it writes that module's state (`venmo_add_friend`, `file_system_create_file`)."""
        if not target.module or self.module is None or not same_project(target.registry, self.module.path):
            return False
        return any(w in WRITE_VERBS for w in verb_words(target.name.replace("{}", "_")))

    @classmethod
    def of(cls, module: ModuleSource, accessors: frozenset[str] = frozenset()) -> FunctionIndex:
        """The (cached) index of another module of the tree, with its module state."""
        found = module.cache.get("index")
        if not isinstance(found, FunctionIndex):
            found = cls(module.tree, module, accessors)
            found.module_state = {name: name for name in module_state_names(module.tree.body)}
            module.cache["index"] = found
        return found

    def _class_chain(self, name: str) -> list[tuple[ast.ClassDef, FunctionIndex]]:
        """The class `name` (here or imported) and its bases found in the tree, nearest first."""
        if name in self._mro:
            return self._mro[name]
        chain: list[tuple[ast.ClassDef, FunctionIndex]] = []
        self._mro[name] = chain  # a cycle sees the partial chain
        node: ast.ClassDef | None = self.classes.get(name)
        owner: FunctionIndex = self
        if node is None and self.module is not None:
            found = lookup_class(self.module, name)
            if found is not None:
                node, owner = found.node, FunctionIndex.of(found.module, self.accessors)  # type: ignore[assignment]
        if node is None:
            return chain
        chain.append((node, owner))
        for base in class_ancestors(node, owner.module):
            if isinstance(base, Resolved) and isinstance(base.node, ast.ClassDef):
                chain.append((base.node, FunctionIndex.of(base.module, self.accessors)))
            elif isinstance(base, str) and base in self.classes and base != name:
                chain.append((self.classes[base], self))
        return chain

    def method(self, cls: str, name: str) -> Helper | None:
        """The method `name` of class `cls`, found along its chain (kept: the chain is, and every
        `self.m()` of every tool of the class asks)."""
        key = (cls, name)
        if key in self._methods:
            return self._methods[key]
        found = None
        for node, owner in self._class_chain(cls):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and item.name == name:
                    found = Helper(item, owner, node.name)
                    break
            if found is not None:
                break
        self._methods[key] = found
        return found

    def function(self, name: str) -> Helper | None:
        local = self.functions.get(name)
        if local is not None:
            return Helper(local, self, None)
        if self.module is None or name in self.classes or name in self._unbound:
            return None
        module = self.module
        if module.definition(name) is None and name not in module.imports() and not module.star_imports():
            # bound nowhere in the module (a builtin, mostly): said once, then by one look-up (nothing of
            # the file system was asked, so nothing is recorded for the cache)
            self._unbound.add(name)
            return None
        found = lookup(module, name)
        if isinstance(found, Resolved) and isinstance(found.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return Helper(found.node, FunctionIndex.of(found.module, self.accessors), None)
        return None

    def resolve(self, call: ast.Call, cls: str | None, types: dict[str, str] | None = None) -> Helper | None:
        """The function a call reaches: `f()`, `self.m()` (through the bases), `Cls.m()`, `param.m()`
        when the parameter's annotation names a class of the tree, `module.f()` for an imported module."""
        func = call.func
        if isinstance(func, ast.Name):
            if func.id[:1].isupper():
                return None  # a class: its constructor is not a helper
            return self.function(func.id)
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            owner = func.value.id
            if owner in ("self", "cls") and cls:
                return self.method(cls, func.attr)
            owner_type = (types or {}).get(owner)
            if owner_type:
                return self.method(owner_type, func.attr)
            if owner in self.classes:  # Class.static_helper(...)
                return self.method(owner, func.attr)
            if func.attr in WRAPPED_FUNCTION_ATTRS and owner in self.functions:
                return self.function(owner)  # `send_email.func(...)`: the decorated tool's own body
            if self.module is not None and owner not in self.functions and owner[:1].islower():
                imported = self.module.imports().get(owner)
                if imported is not None:
                    found = lookup(self.module, owner)
                    if isinstance(found, ModuleSource):
                        return FunctionIndex.of(found, self.accessors).function(func.attr)
        return None


# An object that talks to a service, or the settings of a request to one (`client.timeout = 30`,
# `speech_config.language = x`, `query_payload["q"] = q` configure it; it holds no task state).
CLIENT_OBJECT = re.compile(r"(?:\w+_)?(?:client|clients|http|sdk|driver|llm|config|payload|headers)")
# A cache of answers a tool keeps, public or private (`self.session_cache[q] = result`).
CACHE_FIELD = re.compile(r"(?:\w+_)?(?:cache|cached|memo)")
# What a write verb names when it sets up the client itself (`driver.add_cookie(c)`, `client.set_timeout(t)`).
CLIENT_SETTINGS = frozenset({"cookie", "cookies", "header", "headers", "option", "options", "timeout",
                             "proxy", "proxies", "credential", "credentials", "token", "key", "language",
                             "config"})
# The noun a request is made on (`client.agents.query.create(...)`, `llm.chat.completions.create(...)`): the
# call asks, it creates no record.
REQUEST_NOUNS = frozenset({"query", "queries", "completions", "embeddings", "responses", "search", "searches",
                           "chat"})
# A method named by a noun that is also a write verb, called with nothing to write: an accessor
# (`account.schedule()` returns the account's schedule).
NOUN_ACCESSORS = frozenset({"schedule", "record", "order", "log"})
# Calls that return a fresh copy: what is done to the copy leaves the original as it was.
COPY_CALLS = frozenset({"copy", "deepcopy", "dict"})

# What a tool decorator's wrapper calls the function it wraps (`tool.func`, `functools.wraps`' `__wrapped__`).
WRAPPED_FUNCTION_ATTRS = frozenset({"func", "fn", "coroutine", "__wrapped__"})


# What is done to a store handle itself, not to the data behind it.
HANDLE_LIFECYCLE = frozenset({"close", "open", "connect", "disconnect", "initialize", "delete", "dispose",
                              "shutdown", "release", "cleanup"})


def _is_copy(value: ast.expr) -> bool:
    """`x.copy()`, `copy.copy(x)`, `copy.deepcopy(x)`, `dict(x)`: a new mapping or object holding what `x`
    holds. (`list(x)`, `sorted(x)`, `x[:]` are followed still: their elements are the state's own objects,
    and a loop over them writes those.)"""
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    if isinstance(func, ast.Attribute) and func.attr == "copy" and not value.args:
        return True  # `db.users.copy()`
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return name in COPY_CALLS and len(value.args) == 1


def _asks_without_writing(owner: str, func: ast.Attribute, call: ast.Call) -> bool:
    """A write-verb call that changes nothing the task sees: a client's own set-up or lifecycle
    (`driver.add_cookie(c)`, `driver.close()`), a request (`client.agents.query.create(...)`), a noun's
    accessor (`account.schedule()`)."""
    words = verb_words(func.attr)
    if CLIENT_OBJECT.fullmatch(owner) and (func.attr in HANDLE_LIFECYCLE or CLIENT_SETTINGS & set(words[1:])):
        return True
    if func.attr == "create" and isinstance(func.value, ast.Attribute) and func.value.attr in REQUEST_NOUNS:
        return True
    return _noun_accessor(func.attr, call)


def _noun_accessor(name: str, call: ast.Call) -> bool:
    return name in NOUN_ACCESSORS and not call.args and not call.keywords


def _new_container(value: ast.expr | None) -> bool:
    """A comprehension over a collection or a slice of one: a new container holding its elements."""
    if isinstance(value, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
        return True
    return isinstance(value, ast.Subscript) and isinstance(value.slice, ast.Slice)


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
        owners: list[str] = []
        root: ast.expr = func.value
        while isinstance(root, ast.Attribute):
            owners.append(root.attr)
            root = root.value
        if isinstance(root, ast.Name):
            owners.append(root.id)
        if func.attr in LOG_METHODS and any(o in LOG_OBJECTS or o.lower().endswith("logger") for o in owners):
            return True
        if owners[-1:] == ["sys"] and func.attr == "write":
            return True
    return False


def is_format_call(call: ast.Call) -> bool:
    return isinstance(call.func, ast.Attribute) and call.func.attr in FORMAT_METHODS


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
    for sub in walk_nodes(node):
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Load):
            yield sub


def operands(node: ast.BinOp) -> list[ast.expr]:
    """The operands of a chain of binary operations, left to right, found in a loop: `a + b + c`
    (parsed `(a + b) + c`) is [a, b, c] however long the chain."""
    out: list[ast.expr] = []
    pending: list[ast.expr] = [node]
    while pending:
        current = pending.pop()
        if isinstance(current, ast.BinOp):
            pending.append(current.right)
            pending.append(current.left)
        else:
            out.append(current)
    return out


def elif_chain(node: ast.If) -> tuple[list[ast.If], list[ast.stmt]]:
    """`if a: ... elif b: ... else: ...` as ([If a, If b], else body), walked in a loop."""
    chain = [node]
    while len(chain[-1].orelse) == 1 and isinstance(chain[-1].orelse[0], ast.If):
        chain.append(chain[-1].orelse[0])
    return chain, chain[-1].orelse


FIELD_KEY = re.compile(r"[a-z_]+")


def _constant_key(node: ast.expr) -> str | None:
    """A constant subscript that names a field (`data["users"]`, `note["pinned"]`), not a record: a
    lower-case word without digits. `lines["L1"]` selects a record, so it stays `lines[*]`."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and FIELD_KEY.fullmatch(node.value):
        return node.value
    return None


class _Summariser:
    """Walks one function body once, keeping aliases (locals bound to state) and taint (locals
    derived from parameters) in statement order."""

    def __init__(
        self,
        fn: FunctionNode,
        roots: dict[str, str],
        index: FunctionIndex,
        cls: str | None,
        hops: int,
        via: tuple[str, ...],
        types: dict[str, str] | None = None,
        params: list[ParamInfo] | None = None,
    ) -> None:
        self.fn = fn
        self.index = index
        self.cls = cls
        self.hops = hops
        self.via = via
        self.depth = 0
        self.aliases: dict[str, str] = dict(index.module_state)
        self.opened_here: set[str] = set()  # store handles this body opens itself (`conn = connect(p)`)
        self.declared_globals: set[str] = set()  # `global X` in this body: `X = ...` rebinds module state
        # locals holding a new container of state's elements (`hits = [t for t in db.tx if ...]`,
        # `rest = db.tx[1:]`): changing an element changes state, changing the container does not
        self.fresh_containers: set[str] = set()
        # locals holding an object a state-held service handed out (local -> the state it came from)
        self.derived: dict[str, str] = {}
        # literal dispatch tables (`{"wifi": (get_wifi, set_wifi)}`) and the locals taken from them
        self.tables: dict[str, ast.Dict] = {}
        self.callables: dict[str, list[ast.expr]] = {}
        self.aliases.update(roots)
        self.params = _params(fn, roots) if params is None else params
        # Parameter types, so `inbox.send_email(...)` resolves to `Inbox.send_email` in the tree.
        self.types = dict(types or {})
        self.types.update(
            {
                p.name: t
                for p in self.params
                if (t := annotated_class(resolve_annotation(p.annotation, index.aliases)))
            }
        )
        self.param_names = {p.name for p in self.params if p.state_root is None and p.name not in roots}
        self.modules = dict(
            index.module_aliases
        )  # module aliases in scope, `import a.b as m` in the body too
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
            if base == CONTEXT_ROOT:  # a call's context: only the state it carries is state
                return expr.attr if expr.attr in CONTEXT_STATE_ATTRS else \
                    CONTEXT_ROOT if expr.attr in CONTEXT_HOPS else None
            return f"{base}.{expr.attr}" if base else expr.attr
        if isinstance(expr, ast.Subscript):
            base = self.path(expr.value)
            if base is None:
                return None
            key = _constant_key(expr.slice)
            if key is not None:
                return f"{base}.{key}" if base else key
            return f"{base}[*]"
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
            if base is not None:  # `getattr(db, table_name)`: some field of db, which one is computed
                return f"{base}.*" if base else "*"
            return None
        accessor = call_name(call).rsplit(".", 1)[-1]
        if accessor and (accessor in self.index.accessors or STATE_ACCESSOR.match(accessor)):
            return accessor.removeprefix("get_")  # `get_current_context()` is the state it returns
        if isinstance(func, ast.Attribute):
            base = self.path(func.value)
            if base is not None:
                if func.attr in ("get", "pop", "setdefault"):
                    key = _constant_key(call.args[0]) if call.args else None
                    if key is not None:
                        return f"{base}.{key}" if base else key
                    return f"{base}[*]"
                if func.attr in ("values", "copy", "keys"):
                    return base
        helper = self.index.resolve(call, self.cls, self.types)
        if helper is not None and self.hops < MAX_HELPER_HOPS:
            sub = self._helper_summary(helper, call)
            if sub is not None and len(sub.return_paths) == 1:
                return next(iter(sub.return_paths))
        return None

    def chain_state(self, expr: ast.expr) -> str | None:
        """The state path an access chain through calls starts from: `self.api.users().messages()`
        -> `api`. A write-verb method called at its end may write that state."""
        node = expr
        while True:
            p = self.path(node) if not isinstance(node, ast.Call) else None
            if p is not None:
                return p if p != CONTEXT_ROOT else None  # `ctx.session.send(...)`: not the state it carries
            if isinstance(node, (ast.Attribute, ast.Subscript)):
                node = node.value
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                node = node.func.value
            else:
                return None

    def iter_element(self, iter_expr: ast.expr, target: ast.expr) -> None:
        """Bind loop/comprehension targets to the elements of a state collection: `for u in users`,
        `for k, u in users.items()`, through `list(...)`/`sorted(...)`/`reversed(...)` (the same elements)
        and `enumerate(...)` (`for i, u in enumerate(users)`)."""
        while (
            isinstance(iter_expr, ast.Call)
            and isinstance(iter_expr.func, ast.Name)
            and len(iter_expr.args) == 1
        ):
            wrapper = iter_expr.func.id
            if wrapper in ("list", "tuple", "sorted", "reversed"):
                iter_expr = iter_expr.args[0]
            elif wrapper == "enumerate" and isinstance(target, ast.Tuple) and len(target.elts) == 2:
                iter_expr, target = iter_expr.args[0], target.elts[1]
            else:
                break
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
    def _helper_summary(self, helper: Helper, call: ast.Call) -> FunctionSummary | None:
        sub = self._summarize_helper(helper, call)
        known = {id(h) for h in self.summary.helpers}
        for h in [helper.node, *(sub.helpers if sub is not None else [])]:
            if id(h) not in known and h is not self.fn:
                self.summary.helpers.append(h)
                known.add(id(h))
        return sub

    def _summarize_helper(self, helper: Helper, call: ast.Call) -> FunctionSummary | None:
        roots: dict[str, str] = {}
        fn = helper.node
        args = fn.args.posonlyargs + fn.args.args
        offset = 0
        if helper.cls is not None and args and args[0].arg in ("self", "cls"):
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
        return summarize(
            fn, roots, helper.index, cls=helper.cls, hops=self.hops + 1, via=self.via + (fn.name,)
        )

    # -- recording ---------------------------------------------------------------------------
    def record(self, path: str, kind: Literal["read", "write", "mutate", "delete"], node: ast.AST,
               via: tuple[str, ...] = ()) -> None:
        head = path.split(".", 1)[0].split("[", 1)[0]
        if kind != "read" and (BOOKKEEPING_FIELD.fullmatch(head) or CACHE_FIELD.fullmatch(head)):
            return  # `self._client = ...`, `self._cache[k] = v`: the tool object's plumbing
        if kind == "write" and "." in path and CLIENT_OBJECT.fullmatch(head):
            return  # `client.timeout = t`: a client's configuration, not the world the task checks
        acc = StateAccess(path, kind, node, via or self.via)
        (self.summary.reads if kind == "read" else self.summary.writes).append(acc)

    def opaque_use(self, path: str, how: Literal["compare", "call", "computed"], node: ast.AST,
                   callee: str = "") -> None:
        self.summary.opaque.append(OpaqueUse(path, how, node, callee, self.via))

    def compare_whole(self, node: ast.Compare) -> None:
        """`a == b` on state compares every field below it (a comparison with None is an existence check)."""
        if not any(isinstance(op, (ast.Eq, ast.NotEq)) for op in node.ops):
            return
        ops = [node.left, *node.comparators]
        if any(isinstance(o, ast.Constant) and o.value is None for o in ops):
            return
        for operand in ops:
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
            if isinstance(s, ast.AnnAssign) and value is None:
                return  # `self.client: Client`: a declaration, nothing is bound
            for t in targets:
                self.assign(t, value, s)
            if isinstance(s, ast.Assign) and len(targets) == 1:
                self.bind_table(targets[0], value)
        elif isinstance(s, ast.Delete):
            for t in s.targets:
                p = self.path(t) if not self.in_fresh_container(t) else None
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
                self.expr(s.value, "message" if message_shaped(s.value) else "other", top=True)
        elif isinstance(s, ast.If):
            self.if_chain(s)
        elif isinstance(s, ast.While):
            self.cond(s.test)
            self.block(s.body)
            self.block(s.orelse)
        elif isinstance(s, (ast.For, ast.AsyncFor)):
            before = len(self.summary.writes)
            self.expr(s.iter, "lookup")
            if len(self.summary.writes) > before:
                self.summary.header_writes.add(id(s))
            self.iter_element(s.iter, s.target)
            for name in names_in(s.iter):
                if name.id in self.taint and isinstance(s.target, ast.Name):
                    self.taint[s.target.id] = set(self.taint[name.id])
            each = self.literal_paths(s.iter) if isinstance(s.target, ast.Name) else None
            if each and isinstance(s.target, ast.Name):
                # `for box in (self.inbox, self.sent): box.clear()`: the body runs on each of them
                for path in each:
                    self.aliases[s.target.id] = path
                    self.block(s.body)
            else:
                self.block(s.body)
            self.block(s.orelse)
        elif isinstance(s, (ast.With, ast.AsyncWith)):
            before = len(self.summary.writes)
            for item in s.items:
                self.expr(item.context_expr, "other")
                if isinstance(item.optional_vars, ast.Name):
                    p = self.path(item.context_expr)
                    if p is not None:
                        self.aliases[item.optional_vars.id] = p
            if len(self.summary.writes) > before:
                self.summary.header_writes.add(id(s))
            self.block(s.body)
        elif isinstance(s, ast.Try) or type(s).__name__ == "TryStar":
            self.block(s.body)  # type: ignore[attr-defined]
            for h in s.handlers:  # type: ignore[attr-defined]
                self.block(h.body)
            self.block(s.orelse)  # type: ignore[attr-defined]
            self.block(s.finalbody)  # type: ignore[attr-defined]
        elif isinstance(s, ast.Raise):
            if s.exc is not None:
                self.expr(s.exc, "message")
        elif isinstance(s, ast.Assert):
            self.cond(s.test)
        elif isinstance(s, ast.Match):
            self.expr(s.subject, "cond")
            for case in s.cases:
                self.block(case.body)
        elif isinstance(s, (ast.Global, ast.Nonlocal)):
            for global_name in s.names:  # `nonlocal enabled; enabled = True` rebinds a closure's state too
                self.aliases.setdefault(global_name, global_name)
                self.declared_globals.add(global_name)
        elif isinstance(s, ast.Import):
            self.modules.update(local_modules([s]))
        # nested defs, imports, pass, break, continue: nothing to record

    def if_chain(self, s: ast.If) -> None:
        """An `if`/`elif`/`else` chain in a loop, however many branches: each `elif` is an `If`
        statement of its own, marked as writing when its branch (or a later one) writes."""
        chain, final = elif_chain(s)
        wrote_at: list[bool] = []
        for branch in chain:
            before = len(self.summary.writes)
            self.cond(branch.test)
            if len(self.summary.writes) > before:
                self.summary.header_writes.add(id(branch))
            wrote_at.append(self.block(branch.body))
        wrote_later = self.block(final)
        for branch, wrote in zip(reversed(chain[1:]), reversed(wrote_at[1:])):
            wrote_later = wrote_later or wrote
            if wrote_later:
                self.summary.writing_nodes.add(id(branch))

    def cond(self, test: ast.expr) -> None:
        self.expr(test, "cond")

    def assign(self, target: ast.expr, value: ast.expr | None, stmt: ast.stmt) -> None:
        if isinstance(target, ast.Name):
            if target.id in self.declared_globals:
                self.record(
                    target.id, "write", stmt
                )  # `global X; X = ...` / `X += 1`: the module's X changes
                if value is not None:
                    self.flow(value, "state")
                return
            if (
                target.id in self.aliases
                and target.id in self.index.module_state
                and isinstance(stmt, ast.AugAssign)
            ):
                self.record(self.aliases[target.id], "write", stmt)
                if value is not None:
                    self.flow(value, "state")
                return
            # A local: follow what it holds (not through a copy: `data = db.users.copy(); data.pop(k)`
            # changes the copy only).
            p = self.path(value) if value is not None and not _is_copy(value) else None
            if p is None and value is not None and opens_store(target.id, value):
                p = target.id  # `repo = git.Repo(path)`: what its methods write is the store it opens
                self.opened_here.add(p)
            if p is not None:
                self.aliases[target.id] = p
            else:
                self.aliases.pop(target.id, None)
            if p is not None and _new_container(value):
                self.fresh_containers.add(target.id)
            else:
                self.fresh_containers.discard(target.id)
            self.derived.pop(target.id, None)
            if p is None and isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and (
                    not is_write_verb(value.func.attr) or _noun_accessor(value.func.attr, value)):
                # `mailbox = self.account.mailbox()`, `message = mailbox.new_message()`: an object of the
                # service the state holds; what it sends or saves is written there
                root = self.derived_root(value.func.value)
                if root is not None:
                    self.derived[target.id] = root
            taint = self.tainted_by(value) if value is not None else set()
            if isinstance(stmt, ast.AugAssign):
                taint |= self.taint.get(target.id, set()) | ({target.id} & self.param_names)
            elif target.id in self.param_names and not any(stmt is top for top in self.fn.body):
                # `if font_file: font_name = embed(...)`: on the other paths the parameter's own value
                # is what later code reads
                taint |= self.taint.get(target.id, set())
            self.taint[target.id] = taint
            return
        if isinstance(target, (ast.Tuple, ast.List)):
            self.unpack(target, value, stmt)
            return
        if isinstance(target, ast.Starred):
            self.assign(target.value, None, stmt)
            return
        p = self.path(target) if not self.in_fresh_container(target) else None
        if p is not None:
            self.record(p, "write", stmt)
            if value is not None:
                self.flow(value, "state")
            for key in chain_keys(target):
                self.expr(key, "state")
        else:
            self.expr(target, "other")

    def derived_root(self, expr: ast.expr) -> str | None:
        """The state (a named part of it, not a whole `self`) an access chain starts from, through calls
        (`self.account.schedule()` -> `account`) and through locals holding an object such a chain handed
        out (`schedule.get_default_calendar()`)."""
        root = self.chain_state(expr)
        if root is None:
            base = expr
            while isinstance(base, (ast.Attribute, ast.Subscript, ast.Call)):
                base = base.func if isinstance(base, ast.Call) else base.value
            root = self.derived.get(base.id) if isinstance(base, ast.Name) else None
        return root or None

    def literal_paths(self, seq: ast.expr) -> list[str] | None:
        """The state paths a literal tuple or list of state spells (`(self.inbox, self.sent)`), or None."""
        if not isinstance(seq, (ast.Tuple, ast.List)) or not 1 < len(seq.elts) <= MAX_LITERAL_LOOP:
            return None
        paths = [self.path(e) for e in seq.elts]
        return [p for p in paths if p is not None] if all(p is not None for p in paths) else None

    def bind_table(self, target: ast.expr, value: ast.expr | None) -> None:
        """`table = {"wifi": (get_wifi, set_wifi), ...}` then `_, setter = table[name]` (or `fn =
        table[name]`): the local names the functions the table holds at that place, so a call of it is
        a call of each."""
        if isinstance(target, ast.Name):
            self.callables.pop(target.id, None)
            if isinstance(value, ast.Dict) and value.values and all(
                    isinstance(v, (ast.Name, ast.Attribute, ast.Tuple)) for v in value.values):
                self.tables[target.id] = value
                return
            self.tables.pop(target.id, None)
        if not (isinstance(value, ast.Subscript) and isinstance(value.value, ast.Name)
                and value.value.id in self.tables):
            return
        rows = self.tables[value.value.id].values
        if isinstance(target, ast.Name):
            self.callables[target.id] = [v for v in rows if not isinstance(v, ast.Tuple)]
        elif isinstance(target, ast.Tuple):
            for i, elt in enumerate(target.elts):
                if isinstance(elt, ast.Name):
                    self.callables[elt.id] = [v.elts[i] for v in rows
                                              if isinstance(v, ast.Tuple) and i < len(v.elts)]

    def in_fresh_container(self, target: ast.expr) -> bool:
        """`hits[0] = x`, `hits.append(x)`: a slot of a new container of state's elements, not state."""
        return isinstance(target, (ast.Subscript, ast.Attribute)) and isinstance(target.value, ast.Name) \
            and target.value.id in self.fresh_containers

    def unpack(self, target: ast.Tuple | ast.List, value: ast.expr | None, stmt: ast.stmt) -> None:
        """`key, value = str(key), str(value)`: element by element when the value is a tuple of the
        same length, else every name from the whole value. Taint and aliases of the right-hand side
        are read before any name is rebound."""
        elements = target.elts
        pairwise = (isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(elements)
                    and not any(isinstance(e, ast.Starred) for e in [*elements, *value.elts]))
        if pairwise:
            assert isinstance(value, (ast.Tuple, ast.List))
            sources: list[ast.expr | None] = list(value.elts)
        else:
            sources = [None] * len(elements)
        taints = [
            self.tainted_by(src)
            if src is not None
            else (self.tainted_by(value) if value is not None else set())
            for src in sources
        ]
        paths = [self.path(src) if src is not None else None for src in sources]
        for elt, taint, p in zip(elements, taints, paths):
            if isinstance(elt, ast.Name):
                if p is not None:
                    self.aliases[elt.id] = p
                else:
                    self.aliases.pop(elt.id, None)
                self.taint[elt.id] = set(taint)
            elif isinstance(elt, ast.Starred) and isinstance(elt.value, ast.Name):
                self.aliases.pop(elt.value.id, None)
                self.taint[elt.value.id] = set(taint)
            elif isinstance(elt, (ast.Tuple, ast.List)):
                self.unpack(elt, None, stmt)
            else:  # `self.a, self.b = a, b`: a write per element
                ep = self.path(elt)
                if ep is not None:
                    self.record(ep, "write", stmt)
                    for name in taint:
                        self.summary.flows.setdefault(name, []).append(("state", elt))
                    for key in chain_keys(elt):
                        self.expr(key, "state")

    def expr(self, node: ast.expr, ctx: Sink, top: bool = False) -> None:
        """Record reads and parameter sinks in an expression evaluated in context `ctx`."""
        kind = type(node)
        if (kind is ast.Constant or kind is ast.Name) and self.depth < MAX_EXPRESSION_DEPTH:
            # the leaves, half the expressions there are, without the frames of the walk below (as
            # `_expr` would: a constant records nothing, a name the sinks of the parameters it holds)
            if kind is ast.Name and ctx != "local":
                for param in self.taint.get(node.id, ()):  # type: ignore[attr-defined]
                    self.summary.flows[param].append((ctx, node))
            return
        self.depth += 1
        try:
            if self.depth > MAX_EXPRESSION_DEPTH:
                raise TooComplex(f"an expression nested more than {MAX_EXPRESSION_DEPTH} deep")
            self._expr(node, ctx)
        finally:
            self.depth -= 1

    def _expr(self, node: ast.expr, ctx: Sink) -> None:
        if isinstance(node, ast.Call):
            self.call(node, ctx)
            return
        if isinstance(node, ast.BinOp):
            for operand in operands(node):
                self.expr(operand, ctx)
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
        for child in child_nodes(node):
            if isinstance(child, ast.expr):
                self.expr(child, ctx)
            elif isinstance(child, ast.keyword):
                self.expr(child.value, ctx)
            elif isinstance(child, ast.comprehension):
                self.expr(child.iter, ctx)

    def call(self, call: ast.Call, ctx: Sink) -> None:
        func = call.func
        args: list[ast.expr] = list(call.args)
        if call.keywords:
            args += [kw.value for kw in call.keywords]
        if is_log_call(call):
            for a in args:
                self.expr(a, "log")
            return
        if is_format_call(call) and ctx in ("message", "log"):
            self.expr(func, ctx)
            for a in args:
                self.expr(a, ctx)
            return
        if ast.Lambda in map(type, args):  # (the type test in C: most calls pass no lambda)
            self.element_lambdas(args)
        if isinstance(func, ast.Name) and self.callables.get(func.id):
            candidates = self.callables.pop(func.id)  # out while followed: a table of tables is not
            for candidate in candidates:
                self.call(ast.copy_location(ast.Call(candidate, call.args, call.keywords), call), ctx)
            self.callables[func.id] = candidates
            return
        helper = self.index.resolve(call, self.cls, self.types)
        if helper is None and writes_files(call, self.fn):
            self.record(FILES, "write", call)  # `open(p, "w")`, `shutil.move(a, b)`: the world on disk
            for a in args:
                self.expr(a, "state")
            return
        target = None
        if helper is None and isinstance(func, (ast.Attribute, ast.Call, ast.Subscript)):
            target = registry_target(call, self.index.functions, self.index.registries, self.modules)
            if target is not None:
                helper = self.index.registry_helper(target)
        if helper is None and target is not None and self.index.writes_through(target):
            self.record(target.state_name, "mutate", call, (*self.via, target.name))
            if not isinstance(func, ast.Attribute):
                self.expr(func, "lookup")  # `getattr(m, f"send_{kind}")`: the name selects what is written
            for a in args:
                self.expr(a, "state")
            return
        if isinstance(func, ast.Attribute):
            owner = self.path(func.value)
            through_calls = owner is None and is_write_verb(func.attr)
            if through_calls:
                owner = self.chain_state(func.value)
                if owner is None and isinstance(func.value, ast.Name) and func.attr not in MUTATORS \
                        and func.attr not in HANDLE_LIFECYCLE:
                    owner = self.derived.get(func.value.id)  # `message.send()`, `event.save()`
            unresolved_writer = owner is not None and is_write_verb(func.attr) and helper is None \
                and not (owner is not None and STORE_HANDLE.fullmatch(owner) and (
                    func.attr in HANDLE_LIFECYCLE or (func.attr == "commit" and call.args))) \
                and not (owner is not None and _asks_without_writing(owner, func, call))
            # a service client's API named by resource first (`slack_client.chat_postMessage(...)`)
            unresolved_writer = unresolved_writer or (
                owner is not None and helper is None and CLIENT_OBJECT.fullmatch(owner) is not None
                and any(w in WRITE_VERBS for w in verb_words(func.attr)[1:])
                and not _asks_without_writing(owner, func, call))
            # (`conn.close()` ends the handle, not the data; `repo.commit(rev)` looks a commit up, while
            # `conn.commit()` and `repo.index.commit(msg)` write)
            # SQL the code does not spell as a read, run on a database the tool holds (state, or the
            # dispatcher's): `database.execute(sql)` may INSERT, UPDATE or DELETE. A handle the body opens
            # itself may be a scratch copy (created, filled, deleted), so it is left as before.
            unresolved_writer = unresolved_writer or (
                owner is not None and func.attr in SQL_EXECUTE and helper is None and bool(call.args)
                and owner not in self.opened_here and STORE_HANDLE.fullmatch(owner.rsplit(".", 1)[-1])
                is not None and not read_only_sql(call.args[0]))
            if owner is not None and func.attr in MUTATORS and self.in_fresh_container(func):
                owner = None  # `hits.extend(more)`: the new list grows, the collection it filtered does not
            if owner is not None and (func.attr in MUTATORS or unresolved_writer):
                self.record(owner, "mutate", call)
                if through_calls:
                    self.expr(func.value, "other" if ctx != "log" else "log")
                else:  # `self.folders[name].add(e)`: the key selects which record is mutated
                    for key in chain_keys(func.value):
                        self.expr(key, "lookup")
                for a in args:
                    self.expr(a, "state")
                return
            self.expr(func.value, "other" if ctx != "log" else "log")
        if isinstance(func, ast.Name) and func.id == "setattr" and len(call.args) >= 3:
            base = self.path(call.args[0])
            name = call.args[1]
            if base is not None:
                attr = name.value if isinstance(name, ast.Constant) and isinstance(name.value, str) else "*"
                self.record(f"{base}.{attr}" if base else attr, "write", call)
                self.expr(call.args[2], "state")
                return
        if helper is not None and self.hops < MAX_HELPER_HOPS:
            sub = self._helper_summary(helper, call)
            if sub is not None and not sub.complete:
                self.opaque_args(call, f"{helper.node.name} (helper cycle)")
            if sub is not None:
                self.summary.helper_calls[id(call)] = sub
                self.summary.opaque.extend(sub.opaque)
                self.summary.external.extend(sub.external)
                for acc in sub.reads:
                    self.summary.reads.append(
                        StateAccess(acc.path, acc.kind, call if ctx != "log" else acc.node, acc.via)
                    )
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
            if base is not None and not (
                isinstance(name_arg, ast.Constant) and isinstance(name_arg.value, str)
            ):
                self.opaque_use(base, "computed", call)
        called = call_name(call)
        if helper is not None:  # resolvable, but the hop budget is spent
            self.opaque_args(call, f"{helper.node.name} (beyond {MAX_HELPER_HOPS} helper hops)")
        elif called not in SHAPE_CALLS and not (
            isinstance(func, ast.Attribute) and func.attr in READ_METHODS
        ):
            self.opaque_args(call, called or "<computed call>")
        last = called.rsplit(".", 1)[-1]
        if helper is None and isinstance(func, ast.Attribute) and func.attr not in MUTATORS and (
                last in EXTERNAL_EFFECT_CALLS or any(w in WRITE_VERBS for w in verb_words(last))):
            self.summary.external.append(ExternalCall(called or last, call, self.via))
        pure = called in PURE_CALLS or (isinstance(func, ast.Name) and func.id[:1].isupper()) or (
            isinstance(func, ast.Attribute) and func.attr in PURE_METHODS)
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
        coll = next(
            (p for a in args if not isinstance(a, ast.Lambda) and (p := self.path(a)) is not None), None
        )
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


def message_shaped(value: ast.expr) -> bool:
    """A returned value that is text for the agent: a string, f-string, format, or a container of them."""
    if isinstance(value, ast.Constant):
        return isinstance(value.value, str)
    if isinstance(value, ast.JoinedStr):
        return True
    if isinstance(value, ast.BinOp):
        return isinstance(value.op, (ast.Add, ast.Mod)) and any(
            isinstance(o, (ast.Constant, ast.JoinedStr, ast.Call)) and message_shaped(o)
            for o in operands(value)
        )
    if isinstance(value, ast.Call):
        return is_format_call(value) or call_name(value) == "str"
    if isinstance(value, ast.Dict):
        return any(v is not None and (_shallow_message(v) or isinstance(v, ast.Name)) for v in value.values)
    if isinstance(value, (ast.Tuple, ast.List)):
        return any(_shallow_message(v) for v in value.elts)
    return False


def _shallow_message(value: ast.expr) -> bool:
    kinds = (ast.Constant, ast.JoinedStr, ast.BinOp, ast.Call, ast.Dict, ast.Tuple, ast.List)
    return isinstance(value, kinds) and message_shaped(value)


def base_annotation(annotation: str) -> tuple[str, bool]:
    """`float | None` -> ("float", True); `Optional[list[str]]` -> ("list", True); `Foo` -> ("Foo", False)."""
    ann = annotation.replace(" ", "")
    optional = False
    m = re.fullmatch(r"(?:typing\.)?Optional\[(.*)\]", ann)
    if m:
        ann, optional = m.group(1), True
    parts = [x for x in _split_top(ann, "|") if x != "None"]
    if len(parts) != len(_split_top(ann, "|")):
        optional = True
    if len(parts) != 1:
        return "", optional
    base = parts[0].split("[", 1)[0].split(".")[-1]
    return {"List": "list", "Dict": "dict", "Set": "set", "Tuple": "tuple"}.get(base, base), optional


def _split_top(text: str, sep: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in text:
        depth += ch in "[(" and 1 or 0
        depth -= ch in "])" and 1 or 0
        if ch == sep and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    return [x for x in out if x]


def function_params(fn: FunctionNode) -> list[ParamInfo]:
    """A function's parameters (positional and keyword-only), none of them taken for state."""
    return _params(fn, {})


def _params(fn: FunctionNode, roots: dict[str, str]) -> list[ParamInfo]:
    a = fn.args
    positional = a.posonlyargs + a.args
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    out = [
        ParamInfo(p.arg, p.annotation, d, d is not None, p, roots.get(p.arg))
        for p, d in zip(positional, defaults)
    ]
    out += [
        ParamInfo(p.arg, p.annotation, d, d is not None, p, roots.get(p.arg))
        for p, d in zip(a.kwonlyargs, a.kw_defaults)
    ]
    return out


def summarize(
    fn: FunctionNode,
    roots: dict[str, str],
    index: FunctionIndex,
    *,
    cls: str | None = None,
    hops: int = 0,
    via: tuple[str, ...] = (),
    types: dict[str, str] | None = None,
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
    params = _params(fn, roots)  # (the stand-in's and the summary's: the same parameters)
    provisional = FunctionSummary(fn.name, fn, params, complete=False)
    index._cache[key] = provisional
    try:
        result = _Summariser(fn, roots, index, cls, hops, via, types, params).run()
    except BaseException:
        del index._cache[key]
        raise
    index._cache[key] = result
    return result
