"""One registry of every code toollint can report.

Static rules register themselves with `@rule(...)` on their check function (pylint-style checker
registration); the dynamic, contract and engine codes are declared here without a checker. The CLI
(`--select`, `toollint rule`), the reporters and SARIF's `rules[]` all read this one table.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import importlib.util
import inspect
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from toollint.context import ModuleContext
    from toollint.model import Finding

Level = Literal["error", "warning", "note"]
Precision = Literal["very-high", "high", "medium", "low"]
CheckFn = Callable[["ModuleContext"], Iterable["Finding"]]



@functools.cache
def docs_dir() -> Path:
    """The documentation shipped with the package (docs/, installed as `toollint.docs`): what
    SARIF's helpUri and the JSON output's `url` point at, since the project has no public site yet."""
    spec = importlib.util.find_spec("toollint.docs")
    for location in (spec.submodule_search_locations or ()) if spec else ():
        if (Path(location) / "rules.md").is_file():
            return Path(location)
    return Path(__file__).resolve().parent.parent / "docs"  # a checkout on sys.path, not installed


def docs_uri(page: str, anchor: str = "") -> str:
    """The file URI of a page of the shipped documentation, with an optional `#anchor`."""
    return (docs_dir() / page).resolve().as_uri() + (f"#{anchor}" if anchor else "")


@dataclass(frozen=True)
class Rule:
    """A code toollint can report: its documentation, level, precision and (static rules) check."""

    code: str
    name: str  # kebab-case, usable wherever a code is
    short: str  # one line
    doc: str  # full documentation (ruff headings); the rule module's docstring for static rules
    level: Level = "warning"
    precision: Precision = "medium"
    kind: Literal["static", "dynamic", "contract", "trace", "engine"] = "static"
    tags: tuple[str, ...] = field(default_factory=tuple)
    hint: str = ""  # METHOD.md defect class this rule hints at
    check: CheckFn | None = None

    @property
    def full(self) -> str:
        """The first paragraph under "What it does", as SARIF's fullDescription."""
        body = self.doc.split("## What it does", 1)[-1].strip()
        return body.split("\n\n", 1)[0].replace("\n", " ").strip() or self.short

    @property
    def help_uri(self) -> str:
        return docs_uri("rules.md", f"{self.code.lower()}-{self.name}")

    @property
    def severity(self) -> str:
        """SARIF `properties.problem.severity`."""
        return {"error": "error", "warning": "warning", "note": "recommendation"}[self.level]


_RULES: dict[str, Rule] = {}
_loaded = False
# code -> rule without its check, every code's, handed over by a source that has them without importing
# every rule module (the results cache, written by the same toollint): a run the cache answers reports in
# any format (names, levels, SARIF's rule table) and reads noqa codes without the rules and the analysis.
_KNOWN: dict[str, Rule] = {}


def rule(
    *,
    code: str,
    name: str,
    short: str,
    level: Level = "warning",
    precision: Precision = "medium",
    tags: Iterable[str] = (),
    hint: str = "",
) -> Callable[[CheckFn], CheckFn]:
    """Register a static rule; its module docstring is its documentation."""

    def decorate(check: CheckFn) -> CheckFn:
        module = inspect.getmodule(check)
        doc = inspect.cleandoc(module.__doc__ or "") if module else ""
        _add(
            Rule(code, name, short, doc, level, precision, "static", tuple(tags), hint, check),
        )
        return check

    return decorate


def _add(r: Rule) -> None:
    if r.code in _RULES and _RULES[r.code].name != r.name:
        raise ValueError(f"rule code {r.code} registered twice")
    _RULES[r.code] = r


def _declare(code: str, name: str, short: str, doc: str, level: Level, kind: str, **kw: object) -> None:
    _add(Rule(code, name, short, inspect.cleandoc(doc), level, kind=kind, **kw))  # type: ignore[arg-type]


def _load() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    import pkgutil  # here: 2.5% of a run the cache answers, which loads no rule

    import toollint.rules as pkg

    for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda m: m.name):
        if not info.name.startswith("_"):
            importlib.import_module(f"{pkg.__name__}.{info.name}")
    from toollint import codes  # the non-AST codes

    codes.declare(_declare)


def all_rules() -> list[Rule]:
    _load()
    return sorted(_RULES.values(), key=lambda r: r.code)


def static_rules() -> list[Rule]:
    return [r for r in all_rules() if r.check is not None]


def _table() -> dict[str, Rule]:
    """Every code's rule, as a report reads it: the snapshot a results cache handed over when the rules are
    not loaded (their checks left out), else the registry, loaded now if need be."""
    if _KNOWN and not _loaded:
        return _KNOWN
    _load()
    return _RULES


def get(code_or_name: str) -> Rule | None:
    table = _table()
    key = code_or_name.strip()
    if key.upper() in table:
        return table[key.upper()]
    for r in table.values():
        if r.name == key.lower():
            return r
    return None


def rule_name(code: str) -> str:
    r = get(code)
    return r.name if r else code.lower()


def reported_rules() -> list[Rule]:
    """Every rule as reports show it (SARIF's rule table); `all_rules` when their checks are needed."""
    return sorted(_table().values(), key=lambda r: r.code)


def loaded_rules() -> dict[str, Rule] | None:
    """Every code's rule without its check, when the rules are loaded already (None: they are not; nothing
    is imported): what a results cache keeps for the next run."""
    return {c: dataclasses.replace(r, check=None) for c, r in _RULES.items()} if _loaded else None


def remember_rules(rules: dict[str, Rule]) -> None:
    _KNOWN.update(rules)


def expand(selectors: Iterable[str]) -> Iterator[str]:
    """Codes matched by selectors: full codes, prefixes (`TL1`, `TL`, `ALL`) or kebab-case names (from the
    table a results cache handed over, when the rules are not loaded: checking a configuration's
    `select` imports no rule)."""
    rules = reported_rules()
    for sel in selectors:
        s = sel.strip()
        if not s:
            continue
        r = get(s)
        if r is not None:
            yield r.code
            continue
        prefix = "TL" if s.upper() == "ALL" else s.upper()
        matched = [x.code for x in rules if x.code.startswith(prefix)]
        if not matched:
            raise KeyError(s)
        yield from matched


def rules_markdown() -> str:
    """docs/rules.md: every code with its documentation, under headings whose anchors are `help_uri`'s."""
    intro = ("Generated from the rule registry (`toollint rule CODE` prints the same text); "
             "`tests/test_rule_docs.py` keeps it current.")
    out = ["# toollint rules", "", intro, ""]
    for r in all_rules():
        out += [
            f"## {r.code} {r.name}",
            "",
            f"*{r.kind}, default level {r.level}, precision {r.precision}*",
            "",
        ]
        body = r.doc.split("\n", 1)[1].strip() if r.doc.startswith("# ") else r.doc.strip()
        out += [
            line.replace("## ", "### ", 1) if line.startswith("## ") else line for line in body.splitlines()
        ]
        out.append("")
    return "\n".join(out)
