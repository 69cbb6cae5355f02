"""Where a name comes from, across the modules of the linted tree, without importing anything.

Two questions: what an annotation name stands for (`amount: Amount` where `Amount = Optional[float]`
lives in another module), and which function or class an imported name is (`add_to_db(db=self.db)`
with `from .utils import add_to_db`; `class GmailSendMessage(GmailBaseTool)` with the base in
`gmail/base.py`). The module a `from X import n` refers to is found on disk the way the interpreter
would (relative imports included); re-exports (`from .sub import n` in a package `__init__`, star
imports) are followed syntactically up to `MAX_IMPORT_HOPS`, and a search of the directories above
the importer is the fallback for a package layout the importer's dotted name does not explain. Parsed
modules are cached per process; results never depend on which files were linted before.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from toollint.memos import file_memo
from toollint.sources import parse_file, record_absent, record_read

MAX_DEPTH = 3  # alias-of-alias hops for annotations
MAX_IMPORT_HOPS = 3  # re-export hops when following an imported name to its definition

Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


@dataclass(eq=False)
class ModuleSource:
    """One module of the linted tree: where it is, its dotted name, its tree."""

    path: str
    module_name: str
    tree: ast.Module
    cache: dict[str, Any] = field(default_factory=dict)  # per-module memo (the analysis's function index)

    def imports(self) -> Mapping[str, tuple[int, str, str]]:
        """Local name -> (level, module, imported name) for top-level `from X import a as b`; `import
        a.b as c` is (0, "a.b", "") under "c". (The module's own table, read once: not to be changed.)"""
        cached: dict[str, tuple[int, str, str]] | None = self.cache.get("imports")
        if cached is None:
            cached = {}
            for node in self.tree.body:
                if isinstance(node, ast.ImportFrom):
                    for alias in node.names:
                        cached[alias.asname or alias.name] = (node.level, node.module or "", alias.name)
                elif isinstance(node, ast.Import):
                    for alias in node.names:
                        if alias.asname:
                            cached[alias.asname] = (0, alias.name, "")
            self.cache["imports"] = cached
        return cached

    def star_imports(self) -> list[tuple[int, str]]:
        """(level, module) of each top-level `from X import *`, in order (read once)."""
        cached: list[tuple[int, str]] | None = self.cache.get("stars")
        if cached is None:
            cached = [(node.level, node.module or "") for node in self.tree.body
                      if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names)]
            self.cache["stars"] = cached
        return cached

    def definition(self, name: str) -> Definition | None:
        defs = self.cache.get("defs")
        if defs is None:
            defs = {n.name: n for n in self.tree.body
                    if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
            self.cache["defs"] = defs
        found: Definition | None = defs.get(name)
        return found


@dataclass(frozen=True)
class Resolved:
    """A definition found for a name, with the module it is in."""

    node: Definition
    module: ModuleSource


def load_module(path: str | Path, module_name: str) -> ModuleSource | None:
    """The parsed module at `path` (parsed once per process while the file is unchanged, the tree
    shared with the engine: `toollint.sources`)."""
    text = str(path)
    parsed = parse_file(text)
    if parsed is None or parsed.tree is None:
        return None
    cached = parsed.memo.get(module_name)
    if isinstance(cached, ModuleSource):
        return cached
    module = ModuleSource(text, module_name, parsed.tree)
    parsed.memo[module_name] = module  # kept as long as the tree (toollint.sources bounds what they cost)
    return module


def module_file(importer: str | Path, module_name: str, level: int, modname: str) -> Path | None:
    """The file a `from <modname> import ...` in `importer` refers to: relative imports from the
    importer's directory, absolute ones from its package root (or, failing that, each directory
    above it)."""
    return _module_search(
        directory_of(str(importer)), -1 if level else module_name.count("."), level, modname
    )[0]


@file_memo(4096)
def _module_search(
    directory: str, depth: int, level: int, modname: str
) -> tuple[Path | None, tuple[str, ...]]:
    """`module_file` for an importer in `directory` whose dotted name has `depth` dots, memoised (every
    module of a tree importing the same framework asked the file system again), with the candidate
    files it looked for and did not find: a run's cache depends on them staying absent."""
    if not modname or directory.startswith("//"):
        return _module_search_by_path(directory, depth, level, modname)
    # The same search on strings: pathlib's `/` and `with_suffix` were two thirds of a cold run's
    # module search (directory and modname are normalised already: the same paths, spelt the same)
    absent: list[str] = []

    def is_file(candidate: str) -> bool:
        found = os.path.isfile(candidate)
        if not found:
            absent.append(candidate)
        return found

    base = directory
    for _ in range(level - 1 if level else max(depth, 0)):  # pkg.sub.mod sits `depth` directories below
        base = _parent(base)
    relative = modname.replace(".", "/")
    target = _join(base, relative)
    for candidate in (target + ".py", target + "/__init__.py"):
        if is_file(candidate):
            return Path(candidate), tuple(absent)
    if level:
        return None, tuple(absent)
    roots = [directory]
    while len(roots) < 6 and (up := _parent(roots[-1])) != roots[-1]:
        roots.append(up)
    for root in roots:  # the directories above the importer: see _module_search_by_path
        for candidate in (_join(root, relative) + ".py", _join(root, relative) + "/__init__.py"):
            if is_file(candidate):
                return Path(candidate), tuple(absent)
    return None, tuple(absent)


@lru_cache(maxsize=4096)
def directory_of(path: str) -> str:
    """`str(Path(path).parent)`, once per importer (asked for each name it imports that is followed)."""
    return str(Path(path).parent)


def _parent(path: str) -> str:
    """`Path(path).parent` of a normalised path, as a string."""
    if "/" not in path:
        return "."
    return path[:path.rindex("/")] or "/"


def _join(base: str, relative: str) -> str:
    """`str(Path(base) / relative)` of a normalised base and a relative path without `.` parts."""
    if base == ".":
        return relative
    return base + relative if base.endswith("/") else f"{base}/{relative}"


def _module_search_by_path(
    directory: str, depth: int, level: int, modname: str
) -> tuple[Path | None, tuple[str, ...]]:
    absent: list[str] = []

    def is_file(candidate: Path) -> bool:
        found = candidate.is_file()
        if not found:
            absent.append(str(candidate))
        return found

    base = Path(directory)
    for _ in range(
        level - 1 if level else max(depth, 0)
    ):  # pkg.sub.mod sits `depth` directories below the root
        base = base.parent
    target = base.joinpath(*modname.split(".")) if modname else base
    for candidate in (target.with_suffix(".py"), target / "__init__.py"):
        if is_file(candidate):
            return candidate, tuple(absent)
    if level or not modname:
        return None, tuple(absent)
    # the directories above the importer, by a plain file test: a namespace-package layout (no
    # __init__.py) or a src layout is what the guess above misses. (astroid's module search used to
    # follow; it found nothing this does not over the corpus and cost a 0.1-0.2 s import per run.)
    relative = Path(*modname.split("."))
    importer_dir = Path(directory)
    for root in [importer_dir, *importer_dir.parents][:6]:
        for candidate in ((root / relative).with_suffix(".py"), root / relative / "__init__.py"):
            if is_file(candidate):
                return candidate, tuple(absent)
    return None, tuple(absent)


def _imported_module_name(importer: ModuleSource, level: int, modname: str) -> str:
    if not level:
        return modname
    parts = importer.module_name.split(".")
    is_package = os.path.basename(importer.path) == "__init__.py"
    keep = len(parts) - level + (1 if is_package else 0)
    base = parts[:max(keep, 0)]
    return ".".join([*base, *([modname] if modname else [])])


def imported_module(importer: ModuleSource, level: int, modname: str) -> ModuleSource | None:
    target, absent = _module_search(
        directory_of(importer.path), -1 if level else importer.module_name.count("."), level, modname
    )
    record_absent(importer.path, absent)  # what the importer's facts rest on (toollint.sources)
    if target is None:
        return None
    module = load_module(target, _imported_module_name(importer, level, modname))
    record_read(importer.path, str(target))
    return module


def lookup(module: ModuleSource, name: str, hops: int = MAX_IMPORT_HOPS) -> Resolved | ModuleSource | None:
    """What `name` is in `module`: a function or class defined there or imported from another module
    of the tree (following re-exports), or a module (`from . import utils`)."""
    for _ in range(hops + 1):
        local = module.definition(name)
        if local is not None:
            return Resolved(local, module)
        imported = module.imports().get(name)
        if imported is None:
            return _star_lookup(module, name, hops)
        level, modname, original = imported
        if not original:  # `import a.b as c`
            return imported_module(module, 0, modname)
        source = imported_module(module, level, modname)
        if source is None:
            # `from pkg import sub` where `sub` is a module, not a name in pkg/__init__.py
            return imported_module(module, level, f"{modname}.{original}" if modname else original)
        module, name = source, original
    return None


def _star_lookup(module: ModuleSource, name: str, hops: int) -> Resolved | ModuleSource | None:
    if hops <= 0:
        return None
    for level, modname in module.star_imports():
        source = imported_module(module, level, modname)
        if source is not None:
            found = lookup(source, name, hops - 1)
            if isinstance(found, Resolved):
                return found
    return None


def lookup_function(module: ModuleSource, name: str) -> Resolved | None:
    found = lookup(module, name)
    return found if isinstance(found, Resolved) and not isinstance(found.node, ast.ClassDef) else None


def lookup_class(module: ModuleSource, name: str) -> Resolved | None:
    found = lookup(module, name)
    return found if isinstance(found, Resolved) and isinstance(found.node, ast.ClassDef) else None


def base_name(expr: ast.expr) -> str:
    """`BaseTool` -> "BaseTool"; `tools.BaseTool` -> "BaseTool"; `Generic[T]` -> "Generic"."""
    if isinstance(expr, ast.Subscript):
        expr = expr.value
    if isinstance(expr, ast.Attribute):
        return expr.attr
    if isinstance(expr, ast.Name):
        return expr.id
    return ""


def class_ancestors(cls: ast.ClassDef, module: ModuleSource | None, depth: int = 4) -> list[Resolved | str]:
    """The bases of `cls` and theirs, nearest first: each a class definition found in the tree, or
    the bare name of one that is not (a framework class such as `BaseTool`)."""
    out: list[Resolved | str] = []
    frontier: list[tuple[ast.ClassDef, ModuleSource | None]] = [(cls, module)]
    seen: set[int] = {id(cls)}
    for _ in range(depth):
        following: list[tuple[ast.ClassDef, ModuleSource | None]] = []
        for node, where in frontier:
            for base in node.bases:
                name = base_name(base)
                if not name:
                    continue
                found = None
                if where is not None and isinstance(base, ast.Name):
                    found = lookup_class(where, name)
                elif (
                    where is not None and isinstance(base, ast.Attribute) and isinstance(base.value, ast.Name)
                ):
                    owner = lookup(where, base.value.id)
                    if isinstance(owner, ModuleSource):
                        found = lookup_class(owner, name)
                if found is None or id(found.node) in seen:
                    out.append(name)
                    continue
                seen.add(id(found.node))
                out.append(found)
                assert isinstance(found.node, ast.ClassDef)
                following.append((found.node, found.module))
        frontier = following
        if not frontier:
            break
    return out


def ancestor_names(cls: ast.ClassDef, module: ModuleSource | None) -> list[str]:
    return [a if isinstance(a, str) else a.node.name for a in class_ancestors(cls, module)]


# -- annotation aliases -----------------------------------------------------------------------------


def _alias_value(tree: ast.Module, name: str) -> ast.expr | None:
    """The expression a module-level name is bound to: `Amount = Optional[float]`, `type Amount = ...`."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            return node.value
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == name:
            return node.value
        if type(node).__name__ == "TypeAlias" and getattr(getattr(node, "name", None), "id", None) == name:
            return node.value  # type: ignore[attr-defined,no-any-return]
    return None


def _unwrap_newtype(value: ast.expr) -> ast.expr:
    """`NewType("UserId", str)` stands for `str`."""
    if isinstance(value, ast.Call) and value.args and len(value.args) == 2:
        func = value.func
        if (isinstance(func, ast.Name) and func.id == "NewType") or (
            isinstance(func, ast.Attribute) and func.attr == "NewType"
        ):
            return value.args[1]
    return value


def resolve_alias(
    tree: ast.Module, module_name: str, path: str, name: str, depth: int = 0
) -> ast.expr | None:
    """The annotation expression `name` stands for, or None when it is not an alias we can see: a
    module-level binding here, or one in the module it is imported from (the class itself when the
    name is a class)."""
    value = _alias_value(tree, name)
    if value is None and depth < MAX_DEPTH:
        here = ModuleSource(path, module_name, tree)
        imported = here.imports().get(name)
        if imported is not None and imported[2]:
            source = imported_module(here, imported[0], imported[1])
            if source is not None:
                defined = source.definition(imported[2])
                if isinstance(defined, ast.ClassDef):
                    return ast.Name(defined.name, ast.Load())
                value = resolve_alias(source.tree, source.module_name, source.path, imported[2], depth + 1)
    return _unwrap_newtype(value) if value is not None else None
