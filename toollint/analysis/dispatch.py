"""Dispatch shapes: tools that are branches of one function, replies sent through a call, and calls
that reach their target by name.

Three generic mechanisms (the profiles add data, `toollint.analysis.patterns`):

1. **Request-kind branches.** A function that serves the agent's requests by branching on their
   kind is one tool per branch: `if r.startswith("GET"): ... elif r.startswith("POST"): ...` (an
   HTTP verb, with `==`, `startswith`, through `.upper()`/`.strip()`), or, in a function a profile
   declares a `RequestDispatcher`, any string (`elif action == "create":`). Two branches on HTTP verbs
   over one subject make a dispatcher without any marker. A branch on a writing verb (POST, PUT,
   PATCH, DELETE) is declared a writer; GET/HEAD/OPTIONS are declared readers.
2. **Replies through a call.** In a branch, `session.inject(msg)` or `history.append(msg)` (a
   `ReplyCall`, or `REPLY_CALLS` of the vocabulary) is the branch's reply: the stand-in function the
   rules see has `return msg` there, so TL101 reads it as it reads a `return`.
3. **Dispatch by name.** `_get("add_friend")(**kw)` where `_get(name)` returns `getattr(module,
   name)` (or `REGISTRY[name]`), `getattr(module, "add_friend")(...)`, `REGISTRY["add"](...)` over a
   module-level dict literal, and `module.add_friend(...)` on an imported module: the call reaches a
   target known by name in a registry (`registry_target`). The summariser follows the target when it
   is in the linted tree; when it is not, but the registry is a module of the same project (its top
   package is a directory the linted file lives in), a target whose name has a writing verb writes
   that module's state.

Nothing here imports the summariser: it reads syntax and hands names back.
"""

from __future__ import annotations

import ast
import copy
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from toollint.analysis.patterns import CompiledPatterns
from toollint.analysis.resolver import directory_of
from toollint.analysis.vocabulary import HTTP_VERBS, REPLY_CALLS
from toollint.analysis.walk import walk_nodes
from toollint.memos import file_memo
from toollint.sources import read_module

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef

# `.upper()`, `.strip()` around a request's text do not change what is compared.
_NORMALISING = frozenset({"upper", "lower", "strip", "lstrip", "rstrip", "casefold"})


# -- 1. request-kind branches ------------------------------------------------------------------------


@dataclass(frozen=True)
class KindBranch:
    """One branch of a request-kind dispatcher: the kind it serves, the `if` testing it, its body."""

    kind: str
    test: ast.If
    body: list[ast.stmt]

    @property
    def line(self) -> int:
        return self.test.lineno

    @property
    def http_verb(self) -> str | None:
        verb = self.kind.strip().upper()
        return verb if verb in HTTP_VERBS else None

    @property
    def label(self) -> str:
        """How the tool is named: the verb, or the kind's first word (`FINISH(` -> `FINISH`)."""
        word = re.match(r"\w+", self.kind.strip())
        return self.http_verb or (word.group(0) if word else self.kind.strip())


def _subject(expr: ast.expr) -> ast.expr:
    """`r.upper().strip()` -> `r`: the request text a test looks at."""
    while (
        isinstance(expr, ast.Call)
        and isinstance(expr.func, ast.Attribute)
        and expr.func.attr in _NORMALISING
        and not expr.args
    ):
        expr = expr.func.value
    return expr


def _kind_test(test: ast.expr) -> tuple[str, str] | None:
    """(kind, subject) of `subject == "POST"`, `"POST" == subject`, `subject.startswith("POST")`; the
    subject as source text. `a or b` on one subject (two spellings) is its first operand's kind."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        found = [_kind_test(v) for v in test.values]
        if found and all(f is not None for f in found) and len({f[1] for f in found if f}) == 1:
            return found[0]
        return None
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
        left, right = test.left, test.comparators[0]
        if isinstance(left, ast.Constant):
            left, right = right, left
        if isinstance(right, ast.Constant) and isinstance(right.value, str):
            return right.value, ast.unparse(_subject(left))
        return None
    if (
        isinstance(test, ast.Call)
        and isinstance(test.func, ast.Attribute)
        and test.func.attr == "startswith"
        and len(test.args) == 1
        and isinstance(test.args[0], ast.Constant)
        and isinstance(test.args[0].value, str)
    ):
        return test.args[0].value, ast.unparse(_subject(test.func.value))
    return None


def own_statements(fn: FunctionNode) -> Iterator[ast.stmt]:
    """Every statement of a function body at any depth (blocks, match cases, except handlers), but
    not those of the functions and classes it defines: those are not its code paths."""
    stack: list[ast.stmt] = list(fn.body)
    while stack:
        node = stack.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.stmt) and not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                      ast.ClassDef)):
                stack.append(child)
            elif isinstance(child, (ast.match_case, ast.ExceptHandler)):
                stack.extend(child.body)


def _if_chains(fn: FunctionNode) -> Iterator[list[ast.If]]:
    """Every `if`/`elif` chain of a function body (not of nested functions), each once."""
    seen: set[int] = set()
    for node in own_statements(fn):
        if isinstance(node, ast.If) and id(node) not in seen:
            chain = [node]
            while len(chain[-1].orelse) == 1 and isinstance(chain[-1].orelse[0], ast.If):
                chain.append(chain[-1].orelse[0])
            seen.update(id(c) for c in chain)
            yield chain


def kind_branches(fn: FunctionNode, declared: bool = False) -> list[KindBranch]:
    """The branches of the request-kind dispatcher `fn` is, or []: an `if` chain testing one subject
    against two or more distinct HTTP verbs (or, when `declared`, two or more distinct strings)."""
    best: list[KindBranch] = []
    for chain in _if_chains(fn):
        by_subject: dict[str, list[KindBranch]] = {}
        for branch in chain:
            found = _kind_test(branch.test)
            if found is not None:
                by_subject.setdefault(found[1], []).append(KindBranch(found[0], branch, branch.body))
        for branches in by_subject.values():
            kinds = {b.kind for b in branches}
            verbs = {b.http_verb for b in branches if b.http_verb}
            if len(verbs) >= 2 or (declared and len(kinds) >= 2):
                chosen = branches if declared else [b for b in branches if b.http_verb]
                if len(chosen) > len(best):
                    best = chosen
    return best


# A variable holding the name of the function the model called: `func_name`, `tool_name`, `function_name`.
_CALLED_NAME_WORDS = frozenset({"func", "function", "tool", "action", "api", "fn"})
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")


def called_name_subject(subject: str) -> bool:
    words = set(re.split(r"[_.]", subject.rsplit(".", 1)[-1].lower()))
    return "name" in words and bool(words & _CALLED_NAME_WORDS)


def name_chain_branches(fn: FunctionNode) -> list[KindBranch]:
    """The branches of `fn` that test a variable holding the called function's name against an
    identifier (`if func_name == "search": ... elif func_name == "click":`, or one `if` after
    another), when one variable is tested against two or more distinct names: each branch is what
    runs when the model calls that function. [] when there is none."""
    by_subject: dict[str, list[KindBranch]] = {}
    for node in own_statements(fn):
        if not isinstance(node, ast.If):
            continue
        test = node.test
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
            continue
        found = _kind_test(test)
        if found is not None and _IDENTIFIER.fullmatch(found[0]) and called_name_subject(found[1]):
            branches = by_subject.setdefault(found[1], [])
            if all(b.kind != found[0] for b in branches):
                branches.append(KindBranch(found[0], node, node.body))
    best = max(by_subject.values(), key=len, default=[])
    return sorted(best, key=lambda b: b.line) if len(best) >= 2 else []


def declared_dispatcher(fn: FunctionNode, class_names: list[str], patterns: CompiledPatterns) -> str | None:
    """The family whose `RequestDispatcher` names this function (in one of `class_names`), or None."""
    for name, within, family in patterns.request_dispatchers:
        if name.fullmatch(fn.name) and (within is None or any(within.fullmatch(c) for c in class_names)):
            return family
    return None


# -- 2. replies through a call -----------------------------------------------------------------------


def reply_calls(patterns: CompiledPatterns) -> dict[str, frozenset[str]]:
    """The vocabulary's reply calls with every profile's: method -> receiver names (empty: any)."""
    out = dict(REPLY_CALLS)
    for method, owners in patterns.reply_calls.items():
        known = out.get(method)
        out[method] = (
            frozenset()
            if not owners or (known is not None and not known)
            else (known or frozenset()) | owners
        )
    return out


def is_reply_call(call: ast.Call, replies: Mapping[str, frozenset[str]]) -> bool:
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr not in replies or not call.args:
        return False
    owners = replies[func.attr]
    if not owners:
        return True
    receiver = func.value
    name = (
        receiver.attr
        if isinstance(receiver, ast.Attribute)
        else receiver.id
        if isinstance(receiver, ast.Name)
        else ""
    )
    return name in owners


REPLY_MARK = "_toollint_reply_call"  # on a stand-in's `return`: the call that sent the reply


def reply_call_of(ret: ast.Return) -> str | None:
    """`session.inject` when this `return` of a branch stand-in was a reply sent through that call."""
    found = getattr(ret, REPLY_MARK, None)
    return found if isinstance(found, str) else None


class _Replies(ast.NodeTransformer):
    """`session.inject(msg)` as a statement becomes `return msg` (same location)."""

    def __init__(self, replies: Mapping[str, frozenset[str]]) -> None:
        self.replies = replies

    def visit_Expr(self, node: ast.Expr) -> ast.stmt:
        value = node.value
        if isinstance(value, ast.Await):
            value = value.value
        if isinstance(value, ast.Call) and is_reply_call(value, self.replies):
            ret = ast.copy_location(ast.Return(value=value.args[0]), node)
            ret.end_lineno, ret.end_col_offset = node.end_lineno, node.end_col_offset
            setattr(ret, REPLY_MARK, ast.unparse(value.func))
            return ret
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        return node  # a nested function's replies are its own

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> ast.AsyncFunctionDef:
        return node

    def visit_Lambda(self, node: ast.Lambda) -> ast.Lambda:
        return node


def branch_tool(fn: FunctionNode, name: str, line: int, body: list[ast.stmt],
                replies: Mapping[str, frozenset[str]]) -> FunctionNode:
    """A stand-in function for one branch: the dispatcher's parameters, the branch's body (a copy, so
    the dispatcher itself is unchanged), its reply calls turned into returns."""
    stand_in = copy.copy(fn)
    stand_in.name = name
    new_body = [copy.deepcopy(s) for s in body]
    transformer = _Replies(replies)
    stand_in.body = [transformer.visit(s) for s in new_body]
    stand_in.decorator_list = []
    stand_in.lineno = line
    stand_in.end_lineno = max((getattr(s, "end_lineno", None) or s.lineno for s in body), default=line)
    return stand_in


def unused_locals(fn: FunctionNode) -> list[ast.Name]:
    """Names the body binds and never reads (the first binding of each): a request parsed into
    `payload` and then dropped. `_`-prefixed names and loop targets are not counted."""
    stored: dict[str, ast.Name] = {}
    loaded: set[str] = set()
    loops: set[int] = set()
    for node in walk_nodes(ast.Module(body=fn.body, type_ignores=[])):
        if isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
            loops.update(id(n) for n in walk_nodes(node.target))
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                loaded.add(node.id)
            elif isinstance(node.ctx, ast.Store) and not node.id.startswith("_") and id(node) not in loops:
                stored.setdefault(node.id, node)
    return sorted(
        (n for name, n in stored.items() if name not in loaded), key=lambda n: (n.lineno, n.col_offset)
    )


# A local named like a store, bound to an object a call opens (`repo = git.Repo(path)`, `conn =
# sqlite3.connect(path)`): the store outside the process a tool changes through it.
STORE_HANDLE = re.compile(r"(?:\w+_)?(?:repo|repository|db|database|conn|connection|store)")
# What runs SQL text on a database handle (DB-API `execute`, sqlite3's `executescript`).
# (`db.run(sql)`, `db.run_no_throw(sql)`: a SQL database wrapper's way to run a statement)
SQL_EXECUTE = frozenset({"execute", "executemany", "executescript", "run", "run_no_throw"})
# The first word of a statement that only reads; a literal holding a writing keyword is not one.
_READ_ONLY_SQL = re.compile(r"\s*\(?\s*(?:select|with|show|explain|describe|desc)\b", re.IGNORECASE)
_WRITING_SQL = re.compile(r"\b(?:insert|update|delete|replace|create|drop|alter|truncate|merge)\b",
                          re.IGNORECASE)


def opens_store(name: str, value: ast.expr) -> bool:
    if not (STORE_HANDLE.fullmatch(name) and isinstance(value, ast.Call)):
        return False
    func = value.func
    called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return called[:1].isupper() or called in ("connect", "open_repo", "open")


def read_only_sql(sql: ast.expr) -> bool:
    """A query the code spells as a read (`"SELECT count(*) FROM t"`, `f"SELECT * FROM {table}"`, `"SELECT
    ... FROM " + table`): its first words are in the code. SQL the code does not spell (the agent's, or
    built elsewhere) may write."""
    while isinstance(sql, ast.BinOp) and isinstance(sql.op, (ast.Add, ast.Mod)):
        sql = sql.left  # `"SELECT ... FROM " + table`, `"SELECT ... %s" % x`: the statement's kind is spelled
    if isinstance(sql, ast.Call) and isinstance(sql.func, ast.Attribute) and sql.func.attr == "format":
        sql = sql.func.value
    if isinstance(sql, ast.Constant) and isinstance(sql.value, str):
        text = sql.value
    elif isinstance(sql, ast.JoinedStr) and sql.values and isinstance(sql.values[0], ast.Constant):
        text = "".join(str(v.value) for v in sql.values if isinstance(v, ast.Constant))
    else:
        return False
    return bool(_READ_ONLY_SQL.match(text)) and not _WRITING_SQL.search(text)


def held_stores(fn: FunctionNode, body: list[ast.stmt]) -> dict[str, str]:
    """The store handles a dispatcher opens outside one branch and the branch uses (`database =
    SQLiteDatabase(path)` before the loop that runs `database.execute(sql)` for `execute_sql`): the
    task's database, held across the model's calls, is state the branch's tool changes."""
    nodes = [n for s in body for n in walk_nodes(s)]
    inside = {id(n) for n in nodes}
    used = {n.id for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    out: dict[str, str] = {}
    for node in walk_nodes(fn):
        if isinstance(node, ast.Assign) and id(node) not in inside and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name) and target.id in used and opens_store(target.id, node.value):
                out[target.id] = target.id
    return out


# -- 3. dispatch by name -----------------------------------------------------------------------------


@dataclass(frozen=True)
class RegistryTarget:
    """A call that reaches its target by name: `registry` is the module (dotted) or the module-level
    dict it is looked up in, `name` the target (a `{}` stands for a formatted part of an f-string),
    `function` the function a dict registry maps the name to (a bare name in the module), if any."""

    registry: str
    name: str
    module: bool  # the registry is a module (else a dict of this module)
    function: str | None = None

    @property
    def state_name(self) -> str:
        """What a write through the registry writes, as a path: its last dotted component."""
        return self.registry.rsplit(".", 1)[-1]


def _literal_name(expr: ast.expr) -> str | None:
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return expr.value
    if isinstance(expr, ast.JoinedStr):
        parts = [
            v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else "{}" for v in expr.values
        ]
        text = "".join(parts)
        return text if text.replace("{}", "") else None
    return None


def local_modules(body: list[ast.stmt]) -> dict[str, str]:
    """`import a.b.c as m` (and `import a`) at the top of a block: local name -> dotted module."""
    out: dict[str, str] = {}
    for node in body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                out[alias.asname or alias.name.split(".", 1)[0]] = alias.name if alias.asname else \
                    alias.name.split(".", 1)[0]
    return out


def accessor_registry(fn: FunctionNode, module_dicts: Mapping[str, ast.Dict],
                      modules: Mapping[str, str]) -> tuple[str, bool] | None:
    """When `fn(name)` returns the registry entry for `name` (`return getattr(m, name)`,
    `return REGISTRY[name]`, `return REGISTRY.get(name)`), the registry and whether it is a module."""
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
    if len(params) != 1:
        return None
    param = params[0]
    here = {**modules, **local_modules(fn.body)}
    returns = [s for s in fn.body if isinstance(s, ast.Return) and s.value is not None]
    if len(returns) != 1:
        return None
    value = returns[0].value
    assert value is not None
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "getattr" \
            and len(value.args) >= 2 and isinstance(value.args[1], ast.Name) and value.args[1].id == param \
            and isinstance(value.args[0], ast.Name) and value.args[0].id in here:
        return here[value.args[0].id], True
    key: ast.expr | None = None
    owner: ast.expr | None = None
    if isinstance(value, ast.Subscript):
        owner, key = value.value, value.slice
    elif isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "get" \
            and value.args:
        owner, key = value.func.value, value.args[0]
    if (
        isinstance(owner, ast.Name)
        and owner.id in module_dicts
        and isinstance(key, ast.Name)
        and key.id == param
    ):
        return owner.id, False
    return None


def registry_target(
    call: ast.Call,
    functions: Mapping[str, FunctionNode],
    module_dicts: Mapping[str, ast.Dict],
    modules: Mapping[str, str],
) -> RegistryTarget | None:
    """The target a call reaches by name, or None. `functions` are the module's functions (for a
    registry accessor such as `_get`), `module_dicts` its module-level dict literals, `modules` the
    module aliases in scope (`m` for `import a.b as m`)."""
    func = call.func
    # module.function(...) on an imported module
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in modules:
        return RegistryTarget(modules[func.value.id], func.attr, True)
    # getattr(module, "name")(...)
    if isinstance(func, ast.Call) and isinstance(func.func, ast.Name) and func.func.id == "getattr" \
            and len(func.args) >= 2 and isinstance(func.args[0], ast.Name) and func.args[0].id in modules:
        name = _literal_name(func.args[1])
        return RegistryTarget(modules[func.args[0].id], name, True) if name else None
    # accessor("name")(...)
    if isinstance(func, ast.Call) and isinstance(func.func, ast.Name) and func.func.id in functions \
            and len(func.args) == 1 and not func.keywords:
        name = _literal_name(func.args[0])
        found = accessor_registry(functions[func.func.id], module_dicts, modules) if name else None
        if found is not None and name:
            registry, is_module = found
            return RegistryTarget(
                registry, name, is_module, None if is_module else _dict_entry(module_dicts[registry], name)
            )
        return None
    # REGISTRY["name"](...)
    if isinstance(func, ast.Subscript) and isinstance(func.value, ast.Name) and func.value.id in module_dicts:
        name = _literal_name(func.slice)
        if name:
            return RegistryTarget(func.value.id, name, False, _dict_entry(module_dicts[func.value.id], name))
    return None


def _dict_entry(registry: ast.Dict, name: str) -> str | None:
    for key, value in zip(registry.keys, registry.values):
        if isinstance(key, ast.Constant) and key.value == name and isinstance(value, ast.Name):
            return value.id
    return None


def module_dicts(tree: ast.Module) -> dict[str, ast.Dict]:
    """Module-level `NAME = {"key": function, ...}` literals (registries looked up by name)."""
    out: dict[str, ast.Dict] = {}
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Dict):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, ast.Name):
                    out[t.id] = node.value
    return out


def same_project(dotted: str, importer: str) -> bool:
    """Whether the module `dotted` belongs to the project the file `importer` is in: its top package
    is the name of a directory the file lives in (`import pkg.backend.app as m` in `.../pkg/tools/x.py`)."""
    return bool(importer) and dotted.split(".", 1)[0] in _directories(directory_of(importer))


@file_memo(256)
def _directories(directory: str) -> frozenset[str]:
    return frozenset(Path(directory).resolve().parts)


# -- 4. dispatch by name onto an object ---------------------------------------------------------------


@dataclass(frozen=True)
class NameDispatch:
    """`getattr(api, function_name)` in `where` (a file of the package, line), where `api = API(...)`: the
    model's call runs the public method of `API` it names."""

    cls: str
    where: str
    line: int
    text: str


MAX_SCHEMA_FILE_BYTES = 2_000_000  # a JSON/YAML file larger than this is data, not a list of functions
_GETATTR_BY_VARIABLE = re.compile(r"getattr\(\s*(?!self\b|cls\b)(\w+)\s*,\s*[A-Za-z_]\w*\s*\)")


class PackageFile:
    """One file of a package directory and what it answers to the package-wide questions below, found
    when it is read: its name dispatches (a module) and the function names it declares to the model.
    Its bytes are not kept (a directory's were held per directory: most of the stdlib's 25 MB)."""

    __slots__ = ("declarations", "dispatches", "name", "suffix")

    def __init__(self, name: str, suffix: str, data: bytes = b"", text: str | None = None) -> None:
        self.name, self.suffix = name, suffix
        self.dispatches: tuple[NameDispatch, ...] = ()
        self.declarations: frozenset[str] = frozenset()
        if text is not None:  # a JSON/YAML file
            if any(k in text for k in _SCHEMA_KEYS):
                self.declarations = frozenset(data_declarations(_load_data(text, suffix)))
            return
        # a module: its text is decoded only when a substring test on the bytes lets it matter
        dispatches = b"getattr(" in data
        declares = any(k in data for k in _SCHEMA_KEY_BYTES)  # (`_schema_names_in_text`'s own test first)
        module_text = _module_text(data) if dispatches or declares else ""
        if dispatches:
            self.dispatches = _name_dispatches(name, module_text)
        if declares:
            self.declarations = frozenset(_schema_names_in_text(module_text))


@file_memo(64)
def package_texts(directory: str) -> tuple[PackageFile, ...]:
    """The modules and the JSON/YAML files of a directory, read once per directory and process for
    the package-wide questions below (large data files are skipped). A module's bytes are read once
    per process: those the engine read already are taken from it, and those read here first are kept
    for the engine (`toollint.sources.read_module`)."""
    out: list[PackageFile] = []
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except OSError:
        return ()
    for entry in entries:
        suffix = os.path.splitext(entry.name)[1]
        if suffix not in (".py", ".json", ".yaml", ".yml"):
            continue
        try:
            if not entry.is_file():
                continue
            if suffix == ".py":
                out.append(PackageFile(entry.name, suffix, read_module(entry.path)))
                continue
            if entry.stat().st_size > MAX_SCHEMA_FILE_BYTES:
                continue
            with open(entry.path, encoding="utf-8", errors="replace") as f:
                out.append(PackageFile(entry.name, suffix, text=f.read()))
        except OSError:
            continue
    return tuple(out)


def _module_text(data: bytes) -> str:
    """The text of a module's bytes as a text-mode read gives it (UTF-8, bad bytes replaced, newlines
    as `\\n`). An ASCII substring with no line break is in the text if and only if it is in the bytes
    (a replaced byte is never ASCII): the questions test the bytes first."""
    text = data.decode("utf-8", errors="replace")
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


@file_memo(64)
def package_dispatches(directory: str) -> tuple[NameDispatch, ...]:
    """The name dispatches of every module of a directory (a class is dispatched to from a sibling
    module, `task.py` calling `getattr(api, name)` on `api.py`'s `API`)."""
    return tuple(dict.fromkeys(d for file in package_texts(directory) for d in file.dispatches))


def _name_dispatches(name: str, text: str) -> tuple[NameDispatch, ...]:
    """A module's name dispatches. Text only, no parse: `getattr(api, function_name)` where the file
    binds `api = API(...)` before it."""
    out: list[NameDispatch] = []
    for m in _GETATTR_BY_VARIABLE.finditer(text):
        bound = _last_binding(text, m.group(1), m.start())
        if bound is not None:
            line = text.count("\n", 0, m.start()) + 1
            out.append(NameDispatch(bound, name, line, m.group(0)))
    return tuple(out)


def _last_binding(text: str, obj: str, end: int) -> str | None:
    """The class of the last `obj = [mod.]Class(` before `end`: `obj` searched for as its literal text,
    the word boundary before it checked after (a pattern opening with a word boundary has no prefix to
    skip ahead to, and steps through every character)."""
    pattern = re.compile(rf"{re.escape(obj)}\s*=\s*(?:\w+\.)*([A-Z]\w*)\(")
    bound: str | None = None
    pos = 0
    while (b := pattern.search(text, pos, end)) is not None:
        if b.start() > 0 and _WORD_CHAR.match(text, b.start() - 1):
            pos = b.start() + 1  # `xapi = ...`: not a binding of `api`
            continue
        bound, pos = b.group(1), b.end()
    return bound


_WORD_CHAR = re.compile(r"\w")


# A dict literal declaring a function to the model: `{"name": "get_relations", "parameters": {...}}`.
_SCHEMA_KEYS = frozenset({"parameters", "input_schema", "inputSchema", "input_parameters"})


def schema_declarations(text: str) -> list[tuple[str, int]]:
    """(name, line) of each function a Python module declares to the model in a function-calling schema
    (a dict literal with a `"name"` string and `"parameters"`/`"input_schema"`); a text test first."""
    if '"name"' not in text and "'name'" not in text:
        return []
    if not any(k in text for k in _SCHEMA_KEYS):
        return []
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    out: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            keys = {k.value: v for k, v in zip(node.keys, node.values)
                    if isinstance(k, ast.Constant) and isinstance(k.value, str)}
            name = keys.get("name")
            if isinstance(name, ast.Constant) and isinstance(name.value, str) and _SCHEMA_KEYS & keys.keys():
                out.append((name.value, node.lineno))
    return out


def data_declarations(data: object) -> list[str]:
    """The function names a JSON or YAML document declares to the model: every mapping with a string
    `name` beside `parameters`/`input_schema` (an OpenAI `{"type": "function", "function": {...}}` too)."""
    out: list[str] = []
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            name = item.get("name")
            if isinstance(name, str) and _SCHEMA_KEYS & item.keys():
                out.append(name)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return out


@file_memo(64)
def package_declarations(directory: str) -> frozenset[str]:
    """The function names a directory declares to the model in a function-calling schema: in its
    modules (dict literals) and in its JSON/YAML files (text tests first)."""
    return frozenset().union(*(file.declarations for file in package_texts(directory)))


# `"name": "get_relations"` and `"parameters":`, each after its opening quote: the quote is checked
# apart, so that each search has a word as its literal prefix to skip ahead to (a pattern opening with
# a class of quotes stops at every string of the module).
_SCHEMA_NAME_AFTER_QUOTE = re.compile(r"""name["']\s*:\s*["']([A-Za-z_]\w*)["']""")
_SCHEMA_KEY_WORDS = ("parameters", "input_schema", "inputSchema", "input_parameters")
_KEY_END = re.compile(r"""["']\s*:""")
_QUOTES = ("'", '"')


def _schema_key(text: str, start: int, end: int) -> bool:
    """Whether `["'](parameters|input_schema|...)["']\\s*:` lies within `text[start:end]`."""
    for word in _SCHEMA_KEY_WORDS:
        at = text.find(word, start + 1, end)
        while at != -1:
            if text[at - 1] in _QUOTES and _KEY_END.match(text, at + len(word), end):
                return True
            at = text.find(word, at + 1, end)
    return False


_SCHEMA_KEY_BYTES = (b"parameters", b"nput_schema", b"nputSchema")


def _schema_names_in_text(text: str) -> set[str]:
    """`"name": "get_relations"` with a schema key (`"parameters":`) within the same few lines: the
    names a module declares in dict literals, read from the text (every module of a package is read
    for this, so no parse)."""
    if "parameters" not in text and "nput_schema" not in text and "nputSchema" not in text:
        return set()
    if not _schema_key(text, 0, len(text)):
        return set()
    names: set[str] = set()
    pos = 0  # where the next `"name"` may open (its quote at `pos` or after), as a scan of the text goes
    while (m := _SCHEMA_NAME_AFTER_QUOTE.search(text, pos + 1)) is not None:
        quote = m.start() - 1
        if text[quote] not in _QUOTES:
            pos = m.start()  # not a key: the next may open inside this match
            continue
        if _schema_key(text, max(0, quote - 400), m.end() + 1500):
            names.add(m.group(1))
        pos = m.end()
    return names


def _load_data(text: str, suffix: str) -> object:
    import json

    import yaml

    try:
        return json.loads(text) if suffix == ".json" else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError):
        return None
