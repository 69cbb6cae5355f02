"""Which functions are graders, what role each parameter plays, and what each grader's verdict rests on.

Graders are found like tools, with no configuration for the patterns the profiles declare
(`GraderFunction` in `toollint/profiles/*/patterns.py`: a name, a class it is a method of, a
signature, the roles of its parameters) and by configuration: `graders = ["pkg.mod:func",
"pkg.mod:Class.method"]` in `[tool.toollint]`, whose parameters take their roles from their names
(`post_environment` is the live state, `pre_environment` the state before the run, `model_output`,
`traces`, `messages`, `results` the agent's record, and so is a longer name with a record word and
no gold word, `model_result_list_decoded` but not `expected_output`; see `vocabulary.GRADER_*`). A function
whose body only raises `NotImplementedError` (or is `...`) is an abstract grader, not one.

`analyze_graders` gives every grader of a module with its flow (`toollint.analysis.grading`); the
rules TL401-TL405, `--show-graders` and the tracer read it.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING

from toollint.analysis.families import all_patterns
from toollint.analysis.paths import function_nodes
from toollint.analysis.patterns import CompiledPatterns, GraderFunction
from toollint.analysis.resolver import ModuleSource, base_name
from toollint.analysis.summary import FunctionIndex, FunctionNode, TooComplex
from toollint.analysis.vocabulary import (
    GRADER_BEFORE_PARAMS,
    GRADER_GOLD_WORDS,
    GRADER_RECORD_PARAMS,
    GRADER_RECORD_WORDS,
    GRADER_STATE_PARAMS,
)
from toollint.analysis.walk import walk_nodes
from toollint.facts import GraderFact  # plain data the engine pickles and caches without this package
from toollint.settings import Settings

if TYPE_CHECKING:
    from toollint.analysis.grading import GraderFlow, Role

# The flow itself (`toollint.analysis.grading`) is imported when a grader is found: most files have none.


@dataclass
class GraderInfo:
    node: FunctionNode
    qualname: str
    family: str  # the profile whose pattern found it, or "configured"
    class_name: str | None
    roles: dict[str, Role]  # parameter -> role; a parameter with none is task data
    found_by: str
    factories: frozenset[str] = frozenset()  # state parameters that are factories of the state
    index: FunctionIndex | None = field(default=None, repr=False)

    @property
    def name(self) -> str:
        return self.node.name

    @cached_property
    def flow(self) -> GraderFlow:
        from toollint.analysis.grading import grade

        assert self.index is not None
        return grade(self.node, self.roles, self.index, self.class_name, self.factories)


def _abstract(fn: FunctionNode) -> bool:
    """A body of a docstring, `...`, `pass`, `return None` or `raise NotImplementedError`: no verdict
    is decided here."""
    body = [s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if not body:
        return True
    if all(isinstance(s, ast.Pass) for s in body):
        return True
    if (
        len(body) == 1
        and isinstance(body[0], ast.Return)
        and (
            body[0].value is None or (isinstance(body[0].value, ast.Constant) and body[0].value.value is None)
        )
    ):
        return True  # `return None`: "not implemented here, ask the other grader"
    last = body[-1]
    if len(body) == 1 and isinstance(last, ast.Raise) and last.exc is not None:
        exc = last.exc.func if isinstance(last.exc, ast.Call) else last.exc
        return isinstance(exc, ast.Name) and exc.id == "NotImplementedError"
    return False


def _params(fn: FunctionNode) -> list[str]:
    names = [a.arg for a in fn.args.posonlyargs + fn.args.args]
    return names[1:] if names[:1] in (["self"], ["cls"]) else names


def roles_by_name(fn: FunctionNode) -> tuple[dict[str, Role], frozenset[str]]:
    """Roles of a configured grader's parameters from their names (and the factories among them)."""
    roles: dict[str, Role] = {}
    factories: set[str] = set()
    for name in _params(fn) + [a.arg for a in fn.args.kwonlyargs]:
        if name in GRADER_STATE_PARAMS:
            roles[name] = "state"
            if name.endswith(("_constructor", "_factory")):
                factories.add(name)
        elif name in GRADER_BEFORE_PARAMS:
            roles[name] = "before"
        elif name in GRADER_RECORD_PARAMS or _record_words(name):
            roles[name] = "record"
    return roles, frozenset(factories)


def _record_words(name: str) -> bool:
    words = set(name.lower().split("_"))
    return bool(words & GRADER_RECORD_WORDS) and not words & GRADER_GOLD_WORDS


def _pattern_roles(fn: FunctionNode, marker: GraderFunction) -> tuple[dict[str, Role], frozenset[str]]:
    roles: dict[str, Role] = {}
    names = set(_params(fn)) | {a.arg for a in fn.args.kwonlyargs}
    factories = set()
    for role, params in (("state", marker.state), ("before", marker.before), ("record", marker.record)):
        for p in params:
            if p in names:
                roles[p] = role  # type: ignore[assignment]
                if role == "state" and p.endswith(("_constructor", "_factory")):
                    factories.add(p)
    if marker.self_state:
        roles["self"] = "state"
    return roles, frozenset(factories)


def commented_code(lines: list[str], fn: FunctionNode) -> list[int]:
    """Lines of `fn` that are comments holding Python code (`# return x == 3`), not prose: a
    commented-out check."""
    out = []
    for number in range(fn.lineno, min(fn.end_lineno or fn.lineno, len(lines)) + 1):
        text = lines[number - 1].strip()
        if not text.startswith("#"):
            continue
        code = text.lstrip("#").strip()
        if " " not in code or code[:1].isupper() or code.startswith(("noqa", "type:", "pragma")):
            continue
        try:
            ast.parse(code)
        except (SyntaxError, ValueError):
            continue
        out.append(number)
    return out


def _matches(marker: GraderFunction, fn: FunctionNode) -> bool:
    return not marker.params or tuple(_params(fn)[: len(marker.params)]) == marker.params


class _Finder:
    def __init__(self, tree: ast.Module, settings: Settings, module_name: str, patterns: CompiledPatterns,
                 source: str | None = None) -> None:
        self.tree = tree
        # the lines holding a gold word: a function with none of them compares nothing with a gold value
        self.source = source
        self._lines: list[str] | None = None
        self.patterns = patterns
        self.configured = settings.grader_refs_for(module_name) if module_name else set()
        self.found: list[GraderInfo] = []
        self.any_name = _any_grader_name(tuple(p.pattern for _, p, _, _ in patterns.graders))

    def consider(self, fn: FunctionNode, cls: ast.ClassDef | None) -> None:
        if self.configured:
            qualname = f"{cls.name}.{fn.name}" if cls else fn.name
            if qualname in self.configured:
                roles, factories = roles_by_name(fn)
                self.found.append(GraderInfo(fn, qualname, "configured", cls.name if cls else None, roles,
                                             "configured in `graders`", factories))
                return
        if self.any_name is not None and not self.any_name.fullmatch(fn.name):
            self.by_flow(fn, cls)
            return
        qualname = f"{cls.name}.{fn.name}" if cls else fn.name
        candidates = [entry for entry in self.patterns.graders if entry[1].fullmatch(fn.name)]
        if not candidates or (_abstract(fn) and not self.commented_out(fn)):
            return
        names = [cls.name, *(base_name(b) for b in cls.bases)] if cls else []
        for marker, _, within, family in candidates:
            if not _matches(marker, fn):
                continue
            if (within is None) != (cls is None):
                continue
            if within is not None and not any(within.fullmatch(n) for n in names if n):
                continue
            roles, factories = _pattern_roles(fn, marker)
            where = f" in `{cls.name}`" if cls else ""
            self.found.append(GraderInfo(fn, qualname, family, cls.name if cls else None, roles,
                                         f"the {family} grader pattern `{marker.name}`{where}", factories))
            return
        self.by_flow(fn, cls)

    def commented_out(self, fn: FunctionNode) -> bool:
        """An empty body whose comments hold code: a grader whose check was commented out (TL407)."""
        if self.source is None or not any(isinstance(s, ast.Pass) for s in fn.body):
            return False
        if self._lines is None:
            self._lines = self.source.splitlines()
        return bool(commented_code(self._lines, fn))

    def names_gold(self, fn: FunctionNode) -> bool:
        """Whether the text of `fn` holds a gold word (True when the module's text is not known)."""
        if self.source is None:
            return True
        if self._lines is None:  # once per module, and only for a module with a grader-like function
            self._lines = self.source.splitlines()
        text = "\n".join(self._lines[fn.lineno - 1:fn.end_lineno or fn.lineno]).lower()
        return _holds_gold_word(text)

    def by_flow(self, fn: FunctionNode, cls: ast.ClassDef | None) -> None:
        """A grader by what it does: it compares a gold value with another and returns the verdict."""
        why = verdict_flow(fn, self.names_gold)
        if why is None:
            return
        qualname = f"{cls.name}.{fn.name}" if cls else fn.name
        roles, factories = roles_by_name(fn)
        self.found.append(GraderInfo(fn, qualname, "generic", cls.name if cls else None, roles,
                                     f"its verdict: {why}", factories))

    def run(self) -> list[GraderInfo]:
        if not self.patterns.graders and not self.configured:
            return []
        for node in self.tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self.consider(node, None)
            elif isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        self.consider(item, node)
        return self.found


# Words of a function's name that say it decides a verdict (a hint: the data flow decides).
VERDICT_NAME_WORDS = frozenset(
    {
        "check",
        "checker",
        "grade",
        "grader",
        "evaluate",
        "eval",
        "evaluation",
        "reward",
        "score",
        "judge",
        "verify",
        "compare",
        "correct",
        "accuracy",
        "match",
        "metric",
    }
)
# Words naming the gold side of a comparison (narrower than GRADER_GOLD_WORDS: no `target`, `label`, `ref`).
VERDICT_GOLD_WORDS = frozenset({"gold", "golden", "ground", "truth", "expected", "gt", "possible", "oracle",
                                "reference", "solution", "groundtruth"})


# Text tests before any pattern (most functions have neither a hint in their name nor a gold parameter);
# lower-cased substrings, as cheap as a test gets.
_HINT_TEXT = ("check", "grade", "eval", "reward", "score", "judge", "verify", "compare", "correct",
              "accuracy", "match", "metric")
_GOLD_TEXT = ("gold", "ground", "truth", "expected", "gt", "possible", "oracle", "reference", "solution")
# each tuple as one search (`any(w in text for w in ...)` costs a frame per word, asked of every function)
_HINT_SEARCH = re.compile("|".join(_HINT_TEXT)).search
_GOLD_SEARCH = re.compile("|".join(_GOLD_TEXT)).search
# on lower-cased text; `gt` alone (`gt_hash`, not `length`)
_GOLD_WORD = re.compile("gold|ground|truth|expected|(?<![a-z])gt(?![a-z])|possible|oracle|reference|solution")


def _holds_gold_word(text: str) -> bool:
    """`_GOLD_WORD.search(text)`, substring tests first (each far cheaper than the pattern's scan)."""
    return any(w in text for w in _GOLD_LITERALS) or ("gt" in text and _GOLD_WORD.search(text) is not None)


_GOLD_LITERALS = ("gold", "ground", "truth", "expected", "possible", "oracle", "reference", "solution")


def _words(name: str) -> set[str]:
    return set(re.split(r"[_\W]+", re.sub(r"([a-z])([A-Z])", r"\1_\2", name).lower())) - {""}


def _gold(expr: ast.AST) -> bool:
    return any(_words(n.id if isinstance(n, ast.Name) else n.attr) & VERDICT_GOLD_WORDS
               for n in walk_nodes(expr) if isinstance(n, (ast.Name, ast.Attribute)))


def _other(expr: ast.AST) -> bool:
    """An operand that is not a constant and not gold: the agent's record or the final state."""
    names = [n for n in walk_nodes(expr) if isinstance(n, (ast.Name, ast.Attribute))]
    return bool(names) and not _gold(expr)


def verdict_flow(fn: FunctionNode, names_gold: Callable[[FunctionNode], bool] | None = None) -> str | None:
    """Why `fn` decides a verdict, or None: its name or a parameter hints at grading, it compares a gold
    value (`gt_data_hash`, `possible_answer`, `ground_truth`) with another value (`==`, `in`, or passing
    both to a comparing call), and it returns something. Tests (`test_*`) and dunders are not graders."""
    if fn.name.startswith(("test", "__")):
        return None
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs]
    # a text test first: most functions have neither a hint in their name nor a gold parameter
    name = fn.name.lower()
    hinted = _HINT_SEARCH(name) is not None and bool(_words(fn.name) & VERDICT_NAME_WORDS)
    if not hinted and _GOLD_SEARCH(" ".join(params).lower()) is None:
        return None
    if _abstract(fn) or (names_gold is not None and not names_gold(fn)):
        return None
    if not hinted:
        # no name hint: a gold parameter beside one holding the agent's record
        roles, _ = roles_by_name(fn)
        if not (any(_words(p) & VERDICT_GOLD_WORDS for p in params) and "record" in roles.values()):
            return None
    why: str | None = None
    returns = False
    for node in function_nodes(fn):
        if isinstance(node, ast.Return):
            returns = returns or (node.value is not None and
                                  not (isinstance(node.value, ast.Constant) and node.value.value is None))
        elif why is not None:
            continue
        elif isinstance(node, ast.Compare) and len(node.ops) == 1 and \
                isinstance(node.ops[0], (ast.Eq, ast.NotEq, ast.In, ast.NotIn)):
            left, right = node.left, node.comparators[0]
            if (_gold(left) and _other(right)) or (_gold(right) and _other(left)):
                why = f"compares `{_short(node)}` (line {node.lineno})"
        elif isinstance(node, ast.Call) and len(node.args) >= 2 and not (
                isinstance(node.func, ast.Name) and node.func.id in _NOT_COMPARING):
            args = [*node.args, *(k.value for k in node.keywords)]
            if any(_gold(a) for a in args) and any(_other(a) for a in args):
                why = f"passes a gold value and another to `{_short(node.func)}` (line {node.lineno})"
        if why is not None and returns:
            return why
    return why if returns else None


# Calls that take two values without comparing them.
_NOT_COMPARING = frozenset(
    {
        "isinstance",
        "issubclass",
        "type",
        "len",
        "print",
        "str",
        "int",
        "float",
        "getattr",
        "hasattr",
        "setattr",
        "format",
        "open",
        "range",
        "zip",
        "enumerate",
        "map",
        "filter",
    }
)


def _short(node: ast.AST) -> str:
    text = ast.unparse(node)
    return text if len(text) <= 60 else text[:57] + "..."


@lru_cache(maxsize=4)
def _any_grader_name(names: tuple[str, ...]) -> re.Pattern[str] | None:
    """One expression for every pattern's grader name: most functions are no grader, one test says so."""
    return re.compile("|".join(f"(?:{n})" for n in names)) if names else None


def discover_graders(tree: ast.Module, settings: Settings | None = None, module_name: str = "",
                     source: str | None = None) -> list[GraderInfo]:
    """Every grader of a module (profile patterns, then `graders = [...]`, then by data flow), in source
    order. `source` (the module's text) lets the data-flow search skip a function naming no gold value."""
    return _Finder(tree, settings or Settings(), module_name, all_patterns(), source).run()


def analyze_graders(tree: ast.Module, index: FunctionIndex, settings: Settings | None = None,
                    module_name: str = "") -> tuple[list[GraderInfo], list[tuple[GraderInfo, str]]]:
    """The module's graders with their flows computed, and those too complex to read (with why)."""
    return evaluate_graders(discover_graders(tree, settings, module_name), index)


def evaluate_graders(graders: list[GraderInfo], index: FunctionIndex) -> tuple[list[GraderInfo],
                                                                               list[tuple[GraderInfo, str]]]:
    """Each grader's flow computed, or why it could not be (too complex to read)."""
    ok: list[GraderInfo] = []
    skipped: list[tuple[GraderInfo, str]] = []
    for grader in graders:
        grader.index = index
        try:
            _ = grader.flow
        except (TooComplex, RecursionError) as exc:
            skipped.append((grader, str(exc) if isinstance(exc, TooComplex) else "nested too deeply"))
            continue
        ok.append(grader)
    return ok, skipped


def grader_fact(grader: GraderInfo) -> GraderFact:
    from toollint.analysis.grading import BASIS_WORDS

    flow = grader.flow
    basis = flow.basis
    parts = [BASIS_WORDS[basis]]
    if flow.credited:
        claim = flow.credited_claims[0] if flow.credited_claims else None
        parts.append("credits " + (claim.describe() if claim else "a write the record claims"))
    if flow.rejected and not flow.credited:
        parts.append("fails when the record shows a write")
    if flow.reads:
        shown = ", ".join(dict.fromkeys(r.what for r in flow.reads[:3]))
        parts.append(f"reads {shown}{' ...' if len(flow.reads) > 3 else ''}")
    return GraderFact(grader.qualname, grader.node.lineno, grader.family, basis, bool(flow.credited),
                      "; ".join(parts), grader.found_by)


def grader_flow(path: str, qualname: str, roles: dict[str, Role], module_name: str = "") -> GraderFlow | None:
    """The flow of one named grader (`Class.method` or `function`) of a file, with the roles given
    (the tracer's entry point: its task enumerators say which parameter is what). None when the file
    cannot be read or has no such function."""
    from toollint.analysis.resolver import load_module

    module = load_module(path, module_name)
    if module is None:
        return None
    cls_name, _, name = qualname.rpartition(".")
    fn: FunctionNode | None = None
    cls: ast.ClassDef | None = None
    for node in module.tree.body:
        if not cls_name and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            fn = node
        elif cls_name and isinstance(node, ast.ClassDef) and node.name == cls_name:
            cls = node
            fn = next((m for m in node.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))
                       and m.name == name), None)
    if fn is None:
        return None
    from toollint.analysis.grading import grade

    factories = frozenset(
        p for p, r in roles.items() if r == "state" and p.endswith(("_constructor", "_factory"))
    )
    try:
        return grade(fn, roles, FunctionIndex.of(module), cls.name if cls else None, factories)
    except (TooComplex, RecursionError):
        return None


def module_graders(module: ModuleSource, settings: Settings | None = None) -> list[GraderInfo]:
    """The graders of a module of the tree (the tracer's entry point), their flows computed."""
    index = FunctionIndex.of(module)
    found, _ = analyze_graders(module.tree, index, settings, module.module_name)
    return found


__all__ = [
    "GraderFact",
    "GraderInfo",
    "analyze_graders",
    "discover_graders",
    "evaluate_graders",
    "grader_fact",
    "grader_flow",
    "module_graders",
    "roles_by_name",
]
