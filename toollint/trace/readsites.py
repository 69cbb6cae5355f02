"""Where a grader reads state, and how a read site exposes a field the defective tool writes.

A grader is a function (or method) whose parameters name the live simulator state (`post_environment`),
the state before the run (`pre_environment`) and the agent record (`model_output`, `traces`). The reads
come from the shared state-path analysis (`toollint.analysis.summarize`): attribute chains, locals bound
to state, helpers by bare name up to three hops, DeepDiff path strings, and `OpaqueUse`s for state used
whole (`pre_environment == post_environment`, a call the analysis cannot follow, a computed attribute).

Reads of the state before the run are not exposure: the tool under test cannot have written it. They
are mapped under the `@pre` prefix and left out.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from toollint.analysis import ELEMENT, FunctionIndex, StatePath, summarize
from toollint.profiles.api import (
    PRE_PREFIX,
    ReadSite,
    SiteKind,
    StateRoots,
    is_under,
    parse_deepdiff_path,
)

Basis = Literal["exact_field", "collection_only", "whole_state_hash", "unresolved"]
# Strongest evidence first: a (defect, task) row carries the strongest basis any of its sites gives.
BASES: tuple[Basis, ...] = ("exact_field", "whole_state_hash", "collection_only", "unresolved")
CONFIDENCE: dict[str, str] = {
    "exact_field": "high", "whole_state_hash": "high", "collection_only": "medium", "unresolved": "low",
}

# A whole state handed to a callee with one of these in its name is diffed or hashed as a whole.
WHOLE_STATE_CALLEE = re.compile(r"diff|hash|equal|compare|\beq\b|digest|dump", re.IGNORECASE)









def classify(site: ReadSite, field_path: str, collection: bool = False) -> Basis | None:
    """How `site` exposes `field_path` (a canonical path the tool should have written), or None.

    `collection`: the tool changes which elements `field_path` holds (`append`, `insert`, `extend`,
    `pop`, `del`, ...), not a field of one. A grader that counts, lists or searches the collection, or
    reads a field of one of its elements, then sees that membership only: `collection_only`. (A field
    of an element that the tool writes as well is a field of its own, and exact where it is read.)
    """
    if site.scope and not is_under(field_path, site.scope):
        return None  # state this grader cannot see
    if site.kind == "missing":
        return "unresolved"
    if site.kind == "record" or site.path.startswith(PRE_PREFIX):
        return None
    if site.how == "dotted":
        basis = _dotted_basis(site.path, field_path)
        return "collection_only" if collection and basis == "exact_field" else basis
    if site.kind == "whole_state":
        if any(is_under(field_path, ex) for ex in site.excluded):
            return None
        return "whole_state_hash"
    if is_under(site.path, field_path):
        if not collection:
            return "exact_field"  # the field itself, or something inside it
        if site.kind == "state" or site.how == "compare":
            return "collection_only"
        return "unresolved"  # the collection handed to code toollint cannot follow
    if not is_under(field_path, site.path):
        return None  # an unrelated branch of the state
    # The site reads a container of the field.
    if site.kind == "state":
        return "collection_only"
    if site.path == site.scope:
        whole = site.how == "compare" or WHOLE_STATE_CALLEE.search(site.detail) is not None
        if whole and not any(is_under(field_path, ex) for ex in site.excluded):
            return "whole_state_hash"
        if whole:
            return None
    return "unresolved"


# Segments that match any one segment: an element (`[*]`), and the `*` a `{}` placeholder of a dotted
# constant becomes (`state_sites`).
_ANY_SEGMENT = frozenset({ELEMENT, "*"})


def _dotted_basis(dotted: str, field_path: str) -> Basis | None:
    """A dotted string constant (`"db.lines.L1.data_balance"`, `"lines.{}.data_balance"`) names keys where
    the canonical path has `[*]`, and may start below the root: align it wherever its first name occurs."""
    named, wanted = StatePath.parse(dotted).segments, StatePath.parse(field_path).segments
    best: Basis | None = None
    for start in (i for i, seg in enumerate(wanted) if seg == named[0]):
        rest = wanted[start:]
        pairs = list(zip(named, rest))
        if not all(a == b or _ANY_SEGMENT & {a, b} for a, b in pairs):
            continue
        if len(named) >= len(rest):
            return "exact_field"
        best = "collection_only"
    return best


def best_basis(bases: Iterable[Basis]) -> Basis | None:
    found = set(bases)
    return next((b for b in BASES if b in found), None)


# --- DeepDiff path strings (parsed by `toollint.profiles.api.parse_deepdiff_path`) ---------------

# A dotted path constant: names (or keys, or `{}` placeholders) joined by dots, at least two of them.
_DOTTED = re.compile(r"^[A-Za-z_]\w*(?:\.(?:\w+|\{\}))+$")


def _string_text(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        out = []
        for v in node.values:
            if isinstance(v, ast.Constant) and isinstance(v.value, str):
                out.append(v.value)
            else:
                out.append("{}")
        return "".join(out)
    return None


# --- reading grader modules ------------------------------------------------------------------------


class GraderError(Exception):
    """A grader that cannot be read: its file does not parse, or the function does not exist. The
    message does not repeat the file; `line` is where in it the problem is."""

    def __init__(self, message: str, line: int = 1) -> None:
        super().__init__(message)
        self.line = line


@dataclass
class ParsedModule:
    path: Path
    tree: ast.Module
    index: FunctionIndex
    text: str


@dataclass
class ModuleCache:
    """Each grader file parsed and indexed once, so helper summaries are shared across tasks."""

    modules: dict[Path, ParsedModule | GraderError] = field(default_factory=dict)
    summaries: dict[tuple[Any, ...], list[ReadSite]] = field(default_factory=dict)

    def module(self, path: Path) -> ParsedModule:
        key = path.resolve()
        cached = self.modules.get(key)
        if cached is None:
            try:
                text = path.read_text(encoding="utf-8")
                tree = ast.parse(text, filename=str(path))
            except SyntaxError as exc:
                cached = GraderError(f"grader file does not parse: {exc.msg}", exc.lineno or 1)
            except OSError as exc:
                cached = GraderError(f"grader file cannot be read: {exc.strerror or exc}")
            except UnicodeDecodeError as exc:
                cached = GraderError(f"grader file is not UTF-8: {exc.reason}")
            else:
                cached = ParsedModule(path, tree, FunctionIndex(tree), text)
            self.modules[key] = cached
        if isinstance(cached, GraderError):
            raise cached
        return cached


def find_function(
    mod: ParsedModule, qualname: str
) -> tuple[ast.FunctionDef | ast.AsyncFunctionDef, str | None]:
    """`Class.method` (searching base classes defined in the same module) or `function`."""
    cls, _, name = qualname.rpartition(".")
    if not cls:
        fn = mod.index.functions.get(name)
        if fn is None:
            raise GraderError(f"no function {name!r}")
        return fn, None
    seen: set[str] = set()
    todo = [cls]
    while todo:
        current = todo.pop(0)
        if current in seen:
            continue
        seen.add(current)
        method = mod.index.methods.get(current, {}).get(name)
        if method is not None:
            return method, current
        todo += _module_bases(mod.tree, current)
    raise GraderError(f"no method {name!r} on class {cls!r}")


def _module_bases(tree: ast.Module, cls: str) -> list[str]:
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == cls:
            return [b.id for b in node.bases if isinstance(b, ast.Name)]
    return []


def grader_sites(
    cache: ModuleCache,
    file: Path,
    qualname: str,
    state_params: Mapping[str, str],
    record_params: Iterable[str] = (),
    display_path: str | None = None,
    roots: StateRoots | None = None,
) -> list[ReadSite]:
    """The read sites of one grader, in canonical form when the profile gives its `roots`. Raises
    `GraderError` when the grader cannot be read."""
    key = (file, qualname, tuple(sorted(state_params.items())) + tuple((r, "") for r in record_params), roots)
    cached = cache.summaries.get(key)
    if cached is not None:
        return cached
    mod = cache.module(file)
    fn, cls = find_function(mod, qualname)
    where = display_path or str(file)
    on_disk = str(file.resolve())
    summary = summarize(fn, dict(state_params), mod.index, cls=cls)
    sites: list[ReadSite] = []
    # A state value used whole is that, not a plain read of its container: `audit(db.lines)` is unresolved.
    used_whole = {(use.path, getattr(use.node, "lineno", 0)) for use in summary.opaque}
    for acc in summary.reads:
        if (acc.path, acc.line) not in used_whole:
            sites.append(_site("state", acc.path, where, acc.node, qualname, "read", via=acc.via))
    for use in summary.opaque:
        sites.append(_site("opaque", use.path, where, use.node, qualname, use.how, use.callee, use.via))
    if not summary.complete:
        sites.append(_site("opaque", "", where, fn, qualname, "call", f"{fn.name} (helper cycle)"))
    for name in record_params:
        for _sink, node in summary.flows.get(name, []):
            sites.append(_site("record", "", where, node, qualname, "record", name))
    sites += _string_sites(mod, fn, where, qualname, summary.reads)
    sites = [replace(site, source=on_disk) for site in sites]
    if roots is not None:
        sites = [roots.site(site) for site in sites]
    cache.summaries[key] = sites
    return sites


def _site(kind: SiteKind, path: str, file: str, node: ast.AST, grader: str, how: str, detail: str = "",
          via: tuple[str, ...] = ()) -> ReadSite:
    return ReadSite(kind, path, file, getattr(node, "lineno", 1), getattr(node, "col_offset", 0) + 1, grader,
                    how, detail, via)


def _string_sites(mod: ParsedModule, fn: ast.FunctionDef | ast.AsyncFunctionDef, where: str, grader: str,
                  reads: Iterable[object]) -> list[ReadSite]:
    """String constants naming state paths -- DeepDiff paths (`root.calendar.events['7']`) and dotted
    paths (`"db.lines.L1.data_balance"`) -- in the grader and the same-module helpers it reaches."""
    helper_names = {name for acc in reads for name in getattr(acc, "via", ())}
    functions = [fn] + [mod.index.functions[n] for n in sorted(helper_names) if n in mod.index.functions]
    out: list[ReadSite] = []
    for function in functions:
        nodes = list(ast.walk(function))
        # A constant inside an f-string is read as part of the f-string.
        in_fstring = {id(v) for n in nodes if isinstance(n, ast.JoinedStr) for v in n.values}
        for node in nodes:
            text = _string_text(node)
            if text is None or id(node) in in_fstring:
                continue
            via = () if function is fn else (function.name,)
            path = parse_deepdiff_path(text)
            if path is not None:
                out.append(_site("state", path, where, node, grader, "deepdiff", text, via))
            elif _DOTTED.match(text):
                out.append(_site("state", text.replace("{}", "*"), where, node, grader, "dotted", text, via))
    return out

