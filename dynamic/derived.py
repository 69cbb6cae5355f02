"""Derived oracles: confirm a static finding without a contract, from what the finding itself says.

Each static finding names the check that settles it (METHOD.md Part 3's rules, specialised):

- finding: TL103 / TL104 on parameter `p`
  - derived clause: `arg.p` (falsy values legal for TL104)
  - violation: two successful calls differing only in `p` leave the same state: TL202
- finding: TL102 commented-out guard
  - derived clause: `pre.commented_guard_<line>`: the guard's condition, negated, rewritten over the
    snapshot
  - violation: a call making the condition true still writes (or, for a raising guard, still
    succeeds): TL201
- finding: TL105 unpaired field `F` of a do/undo pair
  - derived clause: `eff.undoes_<do>_<field>` with `round_trip: {do, undo}`: `F` after do-then-undo
    equals `F` before do
  - violation: TL203
- finding: TL101 literal success
  - derived clause: `success` (the flagged reply, biconditional) and `eff.<p>_written` for each
    parameter the tool assigns to a field it writes
  - violation: the reply says success and the value is stored nowhere: TL202 on that effect
- finding: any tool checked
  - derived clause: the implicit reset check
  - violation: TL205

The clauses carry the tier `derived` and cite the finding (`provenance: {tier: derived, finding: TL105,
about: FIELD, file, line, quote}`); `toollint check --confirm` writes them as a contract file per tool
(`.toollint/derived/`, beside the witnesses) and checks it like any contract, so witnesses, `toollint
replay` and the tracer read them as they read authored ones; `toollint contracts draft
--from-findings` writes the same files for a maintainer to keep.

Two parts of a derived clause need the benchmark's host, so they are settled when the tool is
checked (`resolve`): state paths are the analysis's code paths (`db.flights[*]...`) and are matched
to the snapshot's roots (`agent_db.flights...`); and a guard's condition reads the tool's locals
(`target_line.status`), so a call that reaches the guard's line is watched (`guard_watch.py`, in the
host) and each local is found in the pre-state by value and bound to the argument that selects it
(`pre.agent_db.lines.by(line_id=args.line_id)`), each constant (`LineStatus.ACTIVE`) replaced by its
value. What cannot be derived is said, per finding, and the finding stays UNCHECKED.
"""

from __future__ import annotations

import ast
import itertools
import keyword
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toollint.contracts.draft import ToolSource, _adapter_hints, falsy_legal
from toollint.contracts.host.predicate import ForbiddenPredicate, compile_predicate
from toollint.contracts.loader import ContractError, parse_contract
from toollint.contracts.model import DERIVED, Clause, Contract, Source
from toollint.contracts.validator import SourceFile, finding_subject, tool_parameters
from toollint.dynamic.checker import (
    CONFORMS,
    FLAKY,
    UNSUPPORTED,
    UNTESTABLE,
    VIOLATES,
    CheckOptions,
    ClauseResult,
    ClauseSet,
    Execute,
    HostSession,
    ProbeRun,
    Scorer,
    ToolReport,
    run_probe,
)
from toollint.dynamic.host import jsondiff
from toollint.dynamic.probes import Harvest, Plan, Probe, _PreEvaluator, make_plan, params_from_tool
from toollint.dynamic.protocol import Worker, WorkerError, WorkerEvent
from toollint.dynamic.restorable import Unrestorable, unrestorable, values_at

from toollint.analysis import StatePath
from toollint.evidence import Confidence, Evidence
from toollint.files import guess_module_name
from toollint.model import Finding
from toollint.profiles import profile_for_package

DERIVED_CODES = ("TL101", "TL102", "TL103", "TL104", "TL105")
WATCH = Path(__file__).parent / "host" / "guard_watch.py"
MAX_BINDING_CALLS = 12  # calls spent looking for one that reaches a commented guard's line
MAX_VIOLATING_CALLS = 8  # extra calls spent making a derived guard's condition true
MAX_DO_CALLS = 8  # calls spent looking for a legal `do` of a round trip
DESCRIPTION = ("Derived by toollint from its static findings (tier derived): each clause cites the finding "
               "it tests. Review it, then keep it as a contract.")


# --- from findings to oracles (static) ------------------------------------------------------------


@dataclass(frozen=True)
class Basis:
    """The static finding a derived clause tests, as its provenance cites it."""

    code: str
    line: int
    about: str | None
    quote: str  # the cited line's text, verbatim
    kind: str | None = None  # provenance kind of that line: comment (TL102), return (TL101)

    @classmethod
    def of(cls, finding: Finding, lines: Sequence[str], kind: str | None = None) -> Basis:
        text = lines[finding.line - 1].strip() if 0 < finding.line <= len(lines) else ""
        return cls(finding.code, finding.line, finding_subject(finding), text, kind)

    def matches(self, finding: Finding) -> bool:
        return (
            finding.code == self.code and finding.line == self.line and finding_subject(finding) == self.about
        )


@dataclass
class ArgOracle:
    param: str
    falsy_legal: bool
    basis: Basis
    # TL104 whose premise that the dropped falsy value is legal rests on no more than a type or a name:
    # why, said on the clause (`provenance.note`); the clause is then UNTESTABLE `legality_unknown`.
    legality_unknown: str | None = None


@dataclass
class GuardOracle:
    condition: str  # the guard's test, as written in the comment
    raises: str | None  # the exception it raised (None: it returned)
    message: str | None  # the constant text of its message
    resume: int  # the first code line after the commented block: where the guard used to run
    basis: Basis


@dataclass
class RoundTripOracle:
    do: str  # tool names as the host registers them
    undo: str
    field_path: str  # the analysis's path of the field the partner writes (`db.flights[*]...`)
    basis: Basis
    # The do's write is one no undo gives back (an id counter, an append-only log), when the snapshot
    # shows the shape too: then no round trip is demanded (`restorable.py`).
    keeps: Unrestorable | None = None


@dataclass(frozen=True)
class WriteSite:
    """`account.limit = limit`: a parameter assigned as is to a field of a record."""

    param: str
    field: str  # `limit`
    record: str  # the record's expression in the tool's source (`account`, `self.accounts[account_id]`)
    line: int


@dataclass
class PhantomOracle:
    reply: ast.expr  # the returned literal the finding flags
    writes: list[WriteSite]  # the parameters assigned to fields the finding says the tool writes
    basis: Basis
    # The finding says the tool writes nothing at all: its success reply must change the state.
    nothing_written: bool = False


@dataclass
class DerivedTool:
    """Everything derivable for one flagged tool before the host is asked anything."""

    name: str  # the function name, as hosts register tools
    qualname: str
    module: str
    source: SourceFile  # the linted file
    path: str  # as the findings name it
    rel: str  # relative to the package dir (the contract's source.file)
    package: str | None
    def_line: int
    end_line: int
    params: list[str]
    adapter: dict[str, Any]
    benchmark: str
    findings: list[Finding] = field(default_factory=list)
    args: list[ArgOracle] = field(default_factory=list)
    guards: list[GuardOracle] = field(default_factory=list)
    round_trips: list[RoundTripOracle] = field(default_factory=list)
    phantoms: list[PhantomOracle] = field(default_factory=list)
    # finding -> why no oracle (or no clause) could be derived for it
    unchecked: dict[int, str] = field(default_factory=dict)
    # the name the host lists it by, when not its function's (a tool class's `invoke` is `cancel_order`)
    host_name: str | None = None

    @property
    def tool_ref(self) -> str:
        return f"{self.module}:{self.qualname}"

    @property
    def has_oracles(self) -> bool:
        return bool(self.args or self.guards or self.round_trips or self.phantoms)

    def skeleton(self, path: Path) -> Contract:
        """The contract before its clauses are resolved: enough to choose and start its host."""
        return Contract(self.tool_ref, self.benchmark, Source(self.rel, package=self.package), (), path,
                        dict(self.adapter), DESCRIPTION)

    def note(self, finding: Finding, why: str) -> None:
        self.unchecked.setdefault(id(finding), why)

    def why_unchecked(self, finding: Finding) -> str | None:
        return self.unchecked.get(id(finding))


def derivable(finding: Finding) -> bool:
    return finding.code in DERIVED_CODES and bool(finding.tool) and not finding.suppressed


def derive_tools(findings: Iterable[Finding], read: Callable[[str], str] | None = None, *,
                 profiles: bool = True) -> list[DerivedTool]:
    """One `DerivedTool` per flagged tool (by file and qualified name), its oracles from its findings.
    `profiles=False` (`benchmark = "none"`): no profile's adapter or hints, the configured host only."""
    groups: dict[tuple[str, str], list[Finding]] = {}
    for f in findings:
        if derivable(f):
            groups.setdefault((f.path, str(f.tool)), []).append(f)
    out = []
    for (path, qualname), group in groups.items():
        tool = _tool(path, qualname, read, profiles)
        if tool is None:
            continue
        tool.findings = group
        for f in group:
            _derive(tool, f)
        out.append(tool)
    return out


def _tool(path: str, qualname: str, read: Callable[[str], str] | None, profiles: bool = True
          ) -> DerivedTool | None:
    try:
        text = read(path) if read is not None else Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    source = SourceFile(path, text)
    fn = source.function(qualname)
    if fn is None or source.tree is None:
        return None
    module = guess_module_name(path)
    parts = module.split(".")
    file = Path(path).resolve()
    if len(parts) >= 2:
        package: str | None = parts[0]
        rel = file.relative_to(file.parents[len(parts) - 2]).as_posix()
    else:
        package, rel = None, str(file)
    src = ToolSource(file, rel, package or "", module, qualname, text)
    profile = profile_for_package(package) if profiles else None
    adapter = _adapter_hints(src, fn, source.tree)
    if not profiles:  # the configured adapter serves it, whatever package it is in
        adapter = {k: v for k, v in adapter.items() if k in ("depends", "frame")}
    start = min([fn.lineno, *(d.lineno for d in fn.decorator_list)])
    return DerivedTool(
        fn.name,
        qualname,
        module,
        source,
        path,
        rel,
        package,
        start,
        fn.end_lineno or fn.lineno,
        list(tool_parameters(fn, source.tree)),
        adapter,
        profile.name if profile is not None else (package or "project") if profiles else "none",
    )


def _derive(tool: DerivedTool, finding: Finding) -> None:
    lines = tool.source.lines
    props = finding.properties
    evidence = finding.evidence or Evidence()
    if finding.code in ("TL103", "TL104"):
        param = evidence.parameter
        if param is None or param not in tool.params:
            tool.note(finding, "the finding names no parameter of the tool")
            return
        fn = tool.source.function(tool.qualname)
        annotation = tool_parameters(fn, tool.source.tree)[param].annotation if fn is not None else None
        unknown = legality_unknown(evidence) if finding.code == "TL104" else None
        # TL103 states no premise about falsy values: only a `bool`'s False is legal by its schema alone
        legal = unknown is None if finding.code == "TL104" else falsy_legal(annotation) and any(
            isinstance(n, ast.Name) and n.id == "bool" for n in ast.walk(annotation or ast.Constant(None)))
        existing = next((a for a in tool.args if a.param == param), None)
        if existing is not None:
            existing.falsy_legal = existing.falsy_legal or legal
            tool.note(finding, f"tested by arg.{param}, derived from the {existing.basis.code} on line "
                               f"{existing.basis.line}")
            return
        tool.args.append(ArgOracle(param, legal, Basis.of(finding, lines), unknown))
    elif finding.code == "TL102":
        guard = _guard(evidence, finding.line, lines)
        if isinstance(guard, str):
            tool.note(finding, guard)
            return
        condition, raises, message, resume = guard
        tool.guards.append(
            GuardOracle(condition, raises, message, resume, Basis.of(finding, lines, "comment"))
        )
    elif finding.code == "TL105":
        partner, field_path = props.get("partner"), evidence.state_path
        if not isinstance(partner, str) or field_path is None:
            tool.note(finding, "the finding names no partner tool or field")
            return
        partner_name = partner.rsplit(".", 1)[-1]
        do, undo = (
            (partner_name, tool.name) if props.get("role", "undo") == "undo" else (tool.name, partner_name)
        )
        keeps = None
        writer = tool.source.function(partner)
        if do == partner_name and writer is not None and finding.related and tool.source.tree is not None:
            leaf = StatePath.parse(field_path).leaf
            if leaf:
                keeps = unrestorable(tool.source.tree, writer, finding.related[0].line, leaf)
        tool.round_trips.append(RoundTripOracle(do, undo, field_path, Basis.of(finding, lines), keeps))
    elif finding.code == "TL101":
        reply = _returned(tool, finding.line)
        if reply is None:
            tool.note(finding, f"no returned literal at line {finding.line}")
            return
        if props.get("writes") == []:
            # "nothing is written at all": no write is guaranteed on any path, the issue's own case; the
            # reply is a Phantom Effect on every call it answers without a change.
            tool.phantoms.append(
                PhantomOracle(reply, [], Basis.of(finding, lines, "return"), nothing_written=True)
            )
            return
        writes = _assigned_params(tool, props.get("writes"))
        if not writes:
            tool.note(finding, "no parameter of the tool is assigned to a field it writes, so no call can be "
                               "said to ask for a write")
            return
        tool.phantoms.append(PhantomOracle(reply, writes, Basis.of(finding, lines, "return")))


def legality_unknown(evidence: Evidence) -> str | None:
    """Why a TL104's falsy value cannot be probed as a legal input, or None when it can: only the
    benchmark's data, schema or code (or the tool's own docstring, which the agent reads) establishes
    that an agent may send it. A value legal by its type alone (an empty IBAN is a `str`) is no probe
    of legal input, and an oracle sending it would confirm its own premise."""
    premise = evidence.deciding
    if premise is None:
        return "the finding states no premise that the falsy value is legal"
    if premise.confidence > Confidence.LOW:
        return None
    return (f"{premise.describe()} ({premise.kind.value} evidence only): neither the benchmark's data, its "
            f"schema nor its code establishes that an agent may send it (a kept contract that knows it is "
            f"says `falsy_legal: true`)")


def _guard(
    evidence: Evidence, line: int, lines: Sequence[str]
) -> tuple[str, str | None, str | None, int] | str:
    """(condition, exception, message, resume line) of a commented-out guard, or why not."""
    stmt = evidence.guard_statement
    if stmt is None:
        return "the finding carries no guard"
    condition = evidence.guard
    raises: str | None = None
    message: str | None = None
    if condition is None:
        return "the commented guard is not an `if` or an `assert`"
    if isinstance(stmt, ast.If):
        first = stmt.body[0] if stmt.body else None
        if isinstance(first, ast.Raise):
            raises, message = _raised(first)
        elif isinstance(first, ast.Return):
            message = _constant_text(first.value) if first.value is not None else None
            if message is None:
                return "the commented guard returns no constant message: its refusal cannot be recognised"
        else:
            return "the commented guard neither raises nor returns"
    elif isinstance(stmt, ast.Assert):
        raises, message = "AssertionError", _constant_text(stmt.msg) if stmt.msg is not None else None
    else:
        return "the commented guard is not an `if` or an `assert`"
    # Where the guard ran: the first code line after the commented block.
    resume = line
    while resume <= len(lines) and (
        not lines[resume - 1].strip() or lines[resume - 1].strip().startswith("#")
    ):
        resume += 1
    return ast.unparse(condition), raises, message, resume


def _raised(node: ast.Raise) -> tuple[str | None, str | None]:
    exc = node.exc
    call = exc if isinstance(exc, ast.Call) else None
    func = call.func if call is not None else exc
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    message = _constant_text(call.args[0]) if call is not None and call.args else None
    return name, message


def _constant_text(node: ast.expr | None) -> str | None:
    """A string constant, or the longest literal run of an f-string (at least 8 characters)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.strip():
        return node.value
    if isinstance(node, ast.JoinedStr):
        parts = [v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str)]
        best = max(parts, key=len, default="")
        return best if len(best.strip()) >= 8 else None
    return None


def _returned(tool: DerivedTool, line: int) -> ast.expr | None:
    fn = tool.source.function(tool.qualname)
    for node in ast.walk(fn) if fn is not None else ():
        if isinstance(node, ast.Return) and node.value is not None and node.lineno <= line <= (
                node.end_lineno or node.lineno):
            return node.value
    return None


def _assigned_params(tool: DerivedTool, writes: Any) -> list[WriteSite]:
    """Where the tool assigns a parameter itself to a field it writes (`transaction.amount = amount`,
    a field the finding's `writes` names): the value a call passes is the value that record must then
    hold. A transformed value (`x.date = parse(date)`) is left out: its stored form is not the argument."""
    if not isinstance(writes, list):
        return []
    fn = tool.source.function(tool.qualname)
    out: dict[str, WriteSite] = {}
    for node in ast.walk(fn) if fn is not None else ():
        if not isinstance(node, ast.Assign) or not isinstance(node.value, ast.Name):
            continue
        param = node.value.id
        if param not in tool.params:
            continue
        for target in node.targets:
            if isinstance(target, ast.Attribute):
                leaf, record = target.attr, target.value
            elif isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Constant) \
                    and isinstance(target.slice.value, str):
                leaf, record = target.slice.value, target.value
            else:
                continue
            if any(isinstance(w, str) and StatePath.parse(w).leaf == leaf for w in writes):
                out.setdefault(param, WriteSite(param, leaf, ast.unparse(record), node.lineno))
    return list(out.values())


# --- state paths -------------------------------------------------------------------------------------

def _exists(node: Any, segs: Sequence[str]) -> bool:
    if not segs:
        return True
    head, rest = segs[0], segs[1:]
    if head == "[*]":
        children = list(node.values()) if isinstance(node, dict) else node if isinstance(node, list) else []
        return any(_exists(c, rest) for c in children)
    return isinstance(node, dict) and head in node and _exists(node[head], rest)


def resolve_path(code_path: str, snapshot: Any) -> list[str] | None:
    """The snapshot's segments for an analysis path: as written, without its first root (`db.` in the
    code, the snapshot of `db`), or under one of the snapshot's top-level keys (`agent_db`); a trailing
    `[*]` (a computed key) is dropped, so the whole mapping is compared."""
    segs = list(StatePath.parse(code_path).without_trailing_elements().segments)
    if not segs:
        return None
    tops = list(snapshot) if isinstance(snapshot, dict) else []
    candidates = [segs, segs[1:], *([t, *segs[1:]] for t in tops), *([t, *segs] for t in tops)]
    for cand in candidates:
        if cand and cand[0] != "[*]" and _exists(snapshot, cand):
            return list(cand)
    return None


def _attr(expr: str, key: str) -> str:
    return f"{expr}.{key}" if key.isidentifier() and not keyword.iskeyword(key) else f"{expr}[{key!r}]"


def projection(root: str, segs: Sequence[str]) -> str:
    """A predicate expression for the values at `segs` under `root` (`pre`/`post`): a plain read, or
    with `[*]` a list of every value, records without the field left out (`[x1.available_seats for
    x0 in rows(post.agent_db.flights) if 'dates' in x0 for x1 in rows(x0.dates) if 'available_seats'
    in x1]`), so its paths name the field for the tracer."""
    expr, loops, n = root, [], 0
    for seg in segs:
        if seg == "[*]":
            var = f"x{n}"
            n += 1
            loops.append(f"for {var} in rows({expr})")
            expr = var
        else:
            if loops:
                loops.append(f"if {seg!r} in {expr}")
            expr = _attr(expr, seg)
    return f"[{expr} {' '.join(loops)}]" if loops else expr


def dotted(segs: Sequence[str]) -> str:
    """`['agent_db', 'flights', '[*]', 'dates']` -> `agent_db.flights[*].dates`."""
    return str(StatePath(tuple(segs)))


# --- guards: binding a condition's locals to the snapshot ---------------------------------------------


def _locations(value: Any, node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if node == value and type(node) is type(value):
        yield path
        return
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _locations(value, v, (*path, ("key", k, v)))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _locations(value, v, (*path, ("item", i, v)))


def _identity(record: Any) -> dict[str, Any]:
    return {k: v for k, v in record.items() if (k in ("id", "id_") or k.endswith("_id"))
            and isinstance(v, (str, int)) and not isinstance(v, bool)} if isinstance(record, dict) else {}


def _same_record(value: dict[str, Any], ids: dict[str, Any], node: Any, path: tuple[Any, ...] = ()
                 ) -> Iterator[tuple[Any, ...]]:
    if isinstance(node, dict):
        if set(node) == set(value) and all(node.get(k) == v for k, v in ids.items()):
            yield path
            return
        for k, v in node.items():
            yield from _same_record(value, ids, v, (*path, ("key", k, v)))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _same_record(value, ids, v, (*path, ("item", i, v)))


def locate(value: Any, pre: Any, args: dict[str, Any], root: str = "pre") -> str | None:
    """A predicate expression for where `value` (a record, a collection, the state itself) is in the
    pre-state, its records selected by the call's arguments: a dict key equal to an argument is
    `get(..., args.x, None)`, a list element whose field equals an argument is `.by(field=args.x)`,
    other keys are fields. A record the call already changed is found by its identity fields (`id`,
    `*_id`). None: not found, a scalar, ambiguous, or a record no argument selects (a fixed record
    would not generalise to other calls)."""
    if not isinstance(value, (dict, list)) or not value:
        return None
    found = list(itertools.islice(_locations(value, pre), 20))
    ids = _identity(value)
    if not found and ids and isinstance(value, dict):
        found = list(itertools.islice(_same_record(value, ids, pre), 20))
    exprs = set()
    for loc in found:
        expr = _path_expr(loc, args, root)
        if expr is None:
            return None
        exprs.add(expr)
    return exprs.pop() if len(exprs) == 1 else None


def _path_expr(loc: tuple[Any, ...], args: dict[str, Any], root: str = "pre") -> str | None:
    expr = root
    usable = {k: v for k, v in args.items() if isinstance(v, (str, int)) and not isinstance(v, bool)}
    for step in loc:
        if step[0] == "key":
            key, child = step[1], step[2]
            arg = next((a for a, v in usable.items() if v == key), None)
            if arg is not None:
                expr = f"get({expr}, args.{arg}, None)"
            elif key in _identity(child).values():
                return None  # a record of a keyed collection that no argument selects
            else:
                expr = _attr(expr, str(key))
        else:
            element = step[2]
            if not isinstance(element, dict):
                return None
            pairs = [(f, a) for f, v in element.items() for a, av in usable.items() if v == av]
            if not pairs:
                return None
            pairs.sort(key=lambda fa: (fa[0] != fa[1], not (fa[0] == "id" or fa[0].endswith("_id")), fa[0]))
            f, a = pairs[0]
            if not f.isidentifier() or keyword.iskeyword(f):
                return None
            expr = f"{expr}.by({f}=args.{a})"
    return expr


_NEGATED = {
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Lt: ast.GtE,
    ast.GtE: ast.Lt,
    ast.Gt: ast.LtE,
    ast.LtE: ast.Gt,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}


def translate_guard(condition: str, observation: dict[str, Any], args: dict[str, Any], pre: Any
                    ) -> tuple[str | None, str]:
    """The precondition a guard enforced (its condition negated), over `pre` and `args`, from one
    call that reached the guard's line; or (None, why not). Parameters become `args.x`, what the
    locals reach (`target_line`, `self.accounts`) is found in the pre-state (`locate`), constants
    (`LineStatus.ACTIVE`) become their values."""
    names = observation.get("names") or {}
    constants = observation.get("constants") or {}
    chains = observation.get("chains") or {}
    for name, info in names.items():
        if info.get("kind") == "unbound":
            return None, f"the guard reads `{name}`, which the tool never binds"
    failure: list[str] = []

    class Rewrite(ast.NodeTransformer):
        def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
            return self._replaced(node) or self.generic_visit(node)

        def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
            return self._replaced(node) or self.generic_visit(node)

        def visit_Name(self, node: ast.Name) -> ast.AST:
            found = self._replaced(node)
            if found is not None:
                return found
            kind = names.get(node.id, {}).get("kind")
            if kind == "param":
                return ast.parse(f"args.{node.id}", mode="eval").body
            if not failure:
                failure.append(
                    f"the guard reads the {kind or 'name'} `{node.id}`, which is no record of the state an "
                    f"argument selects"
                    if kind == "local"
                    else f"the guard reads the global `{node.id}`, whose value is no constant"
                )
            return node

        def _replaced(self, node: ast.expr) -> ast.expr | None:
            text = ast.unparse(node)
            if text in constants:
                value = constants[text]
                if isinstance(value, dict) and "__error__" in value:
                    failure.append(f"`{text}` could not be evaluated: {value['__error__']}")
                    return None
                if not _literal(value):
                    failure.append(f"`{text}` is not a plain value")
                    return None
                return ast.parse(repr(value), mode="eval").body
            if text in chains:  # the longest chain found in the state wins; a field read goes on from it
                value = chains[text]
                where = None if isinstance(value, dict) and "__error__" in value else locate(value, pre, args)
                return ast.parse(where, mode="eval").body if where is not None else None
            return None

    test = Rewrite().visit(ast.parse(condition, mode="eval")).body
    if failure:
        return None, failure[0]
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in _NEGATED:
        negated = ast.Compare(test.left, [_NEGATED[type(test.ops[0])]()], test.comparators)
        source = ast.unparse(negated)
    elif isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        # `if not account:` -> the record must be truthy; a predicate must be true or false, not the record.
        inner = test.operand
        boolean = isinstance(inner, ast.Compare) or (
            isinstance(inner, ast.UnaryOp) and isinstance(inner.op, ast.Not)
        )
        source = ast.unparse(inner) if boolean else f"bool({ast.unparse(inner)})"
    else:
        source = f"not ({ast.unparse(test)})"
    try:
        compile_predicate(source)
    except ForbiddenPredicate as exc:
        return None, f"the guard's condition is outside the predicate grammar ({exc.message})"
    return source, ""


def _literal(value: Any) -> bool:
    if isinstance(value, dict):
        return all(isinstance(k, str) and _literal(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_literal(v) for v in value)
    return value is None or isinstance(value, (str, int, float, bool))


# --- replies ----------------------------------------------------------------------------------------


def reply_predicate(node: ast.expr, params: Sequence[str]) -> str | None:
    """A predicate that reads the flagged reply: equal to a constant, an f-string of parameters
    (`'Transaction with ID ' + str(args.id) + ' updated.'`), its literal prefix otherwise, or for a
    dict every such entry; None when nothing of it is literal."""
    if isinstance(node, ast.Dict):
        parts = []
        for key, value in zip(node.keys, node.values):
            if isinstance(key, ast.Constant) and isinstance(key.value, str) and value is not None:
                inner = reply_predicate(value, params)
                if inner is not None:
                    parts.append(inner.replace("result", _attr("result", key.value), 1))
        return " and ".join(parts) if parts else None
    if (
        isinstance(node, ast.Constant)
        and isinstance(node.value, (str, bool, int))
        and not isinstance(node.value, float)
    ):
        return f"result == {node.value!r}"
    if isinstance(node, ast.JoinedStr):
        pieces: list[str] = []
        exact = True
        prefix = ""
        for value in node.values:
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                pieces.append(repr(value.value))
                if exact:
                    prefix += value.value
            elif isinstance(value, ast.FormattedValue) and isinstance(value.value, ast.Name) \
                    and value.value.id in params and value.format_spec is None and value.conversion == -1:
                pieces.append(f"str(args.{value.value.id})")
            else:
                if exact and len(prefix.strip()) < 3:
                    return None
                exact = False
        if exact:
            return f"result == {' + '.join(pieces)}" if pieces else None
        return f"result[:{len(prefix)}] == {prefix!r}"
    return None


# --- rendering --------------------------------------------------------------------------------------


def _q(value: Any) -> str:
    import json

    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return json.dumps(str(value), ensure_ascii=False)


@dataclass
class DerivedClause:
    id: str
    basis: Basis
    predicate: str | None = None
    description: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    note: str | None = None  # provenance.note: what a maintainer should know before keeping the clause


def render(tool: DerivedTool, clauses: Sequence[DerivedClause]) -> str:
    """The YAML text of a derived contract (every scalar JSON-quoted, so it is valid YAML as is)."""
    out = [
        f"# Derived by toollint from its static findings on {tool.qualname} ({tool.path}).",
        (
            "# Each clause tests one finding (provenance.finding, .about, .line); "
            "rerun `toollint check --confirm`"
        ),
        "# to see what it confirms, review the predicates, and keep the file as the tool's contract.",
        f"tool: {tool.tool_ref}",
        f"benchmark: {_q(tool.benchmark)}",
        f"description: {_q(DESCRIPTION)}",
        "source:",
        *([f"  package: {_q(tool.package)}"] if tool.package else []),
        f"  file: {_q(tool.rel)}",
    ]
    if tool.adapter:
        out.append("adapter:")
        for key, value in tool.adapter.items():
            if isinstance(value, dict):
                out.append(f"  {key}: {{{', '.join(f'{_q(k)}: {_q(v)}' for k, v in value.items())}}}")
            elif isinstance(value, list):
                out.append(f"  {key}: [{', '.join(_q(v) for v in value)}]")
            else:
                out.append(f"  {key}: {_q(value)}")
    out.append("clauses:" if clauses else "clauses: []")
    for c in clauses:
        out.append(f"  - id: {c.id}")
        if c.description:
            out.append(f"    description: {_q(c.description)}")
        if c.predicate is not None:
            out.append(f"    predicate: {_q(c.predicate)}")
        for key, value in c.extra.items():
            if isinstance(value, dict):
                inner = ", ".join(f"{k}: {_q(v) if v is not None else 'null'}" for k, v in value.items())
                out.append(f"    {key}: {{{inner}}}")
            else:
                out.append(f"    {key}: {_q(value)}")
        b = c.basis
        out += ["    provenance:", f"      tier: {DERIVED}", f"      finding: {b.code}"]
        if b.about:
            out.append(f"      about: {_q(b.about)}")
        if b.kind:
            out.append(f"      kind: {b.kind}")
        out += [f"      line: {b.line}", f"      quote: {_q(b.quote)}"]
        if c.note:
            out.append(f"      note: {_q(c.note)}")
    return "\n".join(out) + "\n"


# --- resolution against the host -----------------------------------------------------------------


def _slug(text: str, limit: int = 40) -> str:
    words = re.findall(r"[a-z0-9]+", text.lower())
    return "_".join(words)[:limit].strip("_") or "field"


@dataclass
class Resolution:
    clauses: list[DerivedClause] = field(default_factory=list)
    unresolved: dict[Basis, str] = field(default_factory=dict)  # why a finding got no clause


def static_clauses(tool: DerivedTool, pristine: Any, meta: dict[str, Any]) -> Resolution:
    """The clauses that need only the pristine snapshot and the host's parameters: arguments, round
    trips and replies (guards need a watched call: `bind_guards`)."""
    out = Resolution()
    params = params_from_tool(meta) if meta else {}
    for a in tool.args:
        if params and a.param not in params:
            out.unresolved[a.basis] = f"the host does not list `{a.param}` among the tool's parameters"
            continue
        out.clauses.append(DerivedClause(f"arg.{a.param}", a.basis, extra={"falsy_legal": a.falsy_legal},
                                         note=a.legality_unknown))
    used: set[str] = set()
    for rt in tool.round_trips:
        segs = resolve_path(rt.field_path, pristine)
        if segs is None:
            out.unresolved[rt.basis] = f"the field `{rt.field_path}` is not in the state snapshot"
            continue
        if rt.keeps is not None and rt.keeps.holds_on(values_at(pristine, segs)):
            out.unresolved[rt.basis] = rt.keeps.why
            continue
        cid = f"eff.undoes_{_slug(rt.do, 24)}_{_slug(segs[-1], 24)}"
        while cid in used:
            cid += "_2"
        used.add(cid)
        predicate = f"{projection('post', segs)} == {projection('pre', segs)}"
        out.clauses.append(
            DerivedClause(
                cid,
                rt.basis,
                predicate,
                (
                    f"After {rt.do} then {rt.undo} on what it made, "
                    f"{dotted(segs)} is back to its value before {rt.do}."
                ),
                {"round_trip": {"do": rt.do, "undo": rt.undo}},
            )
        )
    _unwritten_clauses(tool, out)
    return out


def _unwritten_clauses(tool: DerivedTool, out: Resolution) -> None:
    """A TL101 finding that the tool writes nothing at all: its reply as the `success` clause
    (biconditional) and `eff.changes_state`, the state differing after the call. A success reply on
    a call that changed nothing is then a Phantom Effect (TL204); one that did change the state (by a
    write the analysis did not see) refutes the finding. Only when no other TL101 oracle of the tool
    claims the `success` clause, and for the first such reply only."""
    unwritten = [ph for ph in tool.phantoms if ph.nothing_written]
    if not unwritten:
        return
    if any(not ph.nothing_written for ph in tool.phantoms):
        for ph in unwritten:
            out.unresolved[ph.basis] = "another literal-success finding of the tool gives its success clause"
        return
    first, rest = unwritten[0], unwritten[1:]
    success = reply_predicate(first.reply, tool.params)
    if success is None:
        out.unresolved[first.basis] = "the flagged reply has no literal text to recognise it by"
        return
    for ph in rest:
        out.unresolved[ph.basis] = f"tested by the success clause of the reply on line {first.basis.line}"
    out.clauses.append(
        DerivedClause(
            "success",
            first.basis,
            success,
            extra={
                "biconditional": True,
                "justification": (
                    "The reply the finding flags as a literal success: an agent reads it as a write done."
                ),
            },
        )
    )
    out.clauses.append(DerivedClause(
        "eff.changes_state", first.basis, "post != pre",
        "On a call answered with the flagged success reply, the state is not what it was: the finding says "
        "the tool writes nothing at all."))


def watch_spec(tool: DerivedTool) -> dict[str, Any]:
    """What `guard_watch.arm` watches for this tool: each guard's condition where the guard ran, and
    the record of each write a TL101 oracle checks, on the write's own line."""
    points: list[dict[str, Any]] = [
        {"id": f"guard:{g.basis.line}", "line": g.resume, "condition": g.condition} for g in tool.guards]
    for ph in tool.phantoms:
        for w in ph.writes:
            points.append({"id": f"write:{w.param}", "line": w.line, "values": [w.record]})
    return {"function": tool.name, "file": tool.rel, "first": tool.def_line, "last": tool.end_line,
            "params": tool.params, "points": points}


@dataclass
class _Seen:
    """What the watched calls showed for one point: the first usable binding, or why none."""

    found: str | None = None
    reasons: list[str] = field(default_factory=list)


def watched_clauses(
    tool: DerivedTool,
    worker: Worker,
    contract: Contract,
    meta: dict[str, Any],
    pristine: Any,
    pristine_hash: str,
    tags: dict[str, list[str]],
    deadline: float,
) -> Resolution:
    """The clauses that need a watched call: a `pre.*` per commented guard (its condition rewritten
    from a call that reached the guard's line, `translate_guard`) and the `success`/`eff.*_written`
    of each TL101 oracle (the written record found in the pre-state from a call that reached the
    write). Calls are the plan's happy path and its alternatives, until every point is bound."""
    out = Resolution()
    spec = watch_spec(tool)
    if not spec["points"]:
        return out
    plan = make_plan(contract, meta, pristine)
    candidates = [plan.probes[0].args, *plan.alternatives][:MAX_BINDING_CALLS]
    seen: dict[str, _Seen] = {str(p["id"]): _Seen() for p in spec["points"]}
    guards = {f"guard:{g.basis.line}": g for g in tool.guards}
    tried = 0
    try:
        worker.request("eval", expr="arm(spec)", module=str(WATCH), names={"spec": spec})
        for args in candidates:
            if all(v.found is not None for v in seen.values()):
                break
            tried += 1
            run = run_probe(
                worker,
                Probe("search", dict(args), tool=tool.host_name or tool.name),
                pristine,
                pristine_hash,
                tags,
                deadline,
                want_view=False,
            )
            pre = run.pre if run.pre is not None else pristine
            for call in worker.request("eval", expr="collect()", module=str(WATCH)).get("value") or []:
                for point_id, obs in call.items():
                    slot = seen.get(point_id)
                    if slot is None or slot.found is not None:
                        continue
                    found, reason = _bind_point(point_id, obs, guards, run.args, pre)
                    if found is None:
                        slot.reasons.append(reason)
                    slot.found = found
    finally:
        try:
            worker.request("eval", expr="disarm()", module=str(WATCH))
        except WorkerError:
            pass

    def reason_for(point_id: str, what: str) -> str:
        slot = seen[point_id]
        return slot.reasons[0] if slot.reasons else f"none of {tried} call(s) reached {what}"

    for key, guard in guards.items():
        found = seen[key].found
        if found is None:
            out.unresolved[guard.basis] = reason_for(key, f"the guard's line {guard.resume}")
            continue
        out.clauses.append(DerivedClause(
            f"pre.commented_guard_{guard.basis.line}", guard.basis, found,
            f"The commented-out guard `{guard.condition}` (line {guard.basis.line}), as a precondition: "
            f"a call that makes it true must be refused.",
            {"on_violation": {"raises": guard.raises, **({"message": guard.message} if guard.message else {}),
                              "state": "unchanged"}}))
    for ph in tool.phantoms:
        if ph.nothing_written:
            continue  # needs no watch (`_unwritten_clauses`)
        success = reply_predicate(ph.reply, tool.params)
        if success is None:
            out.unresolved[ph.basis] = "the flagged reply has no literal text to recognise it by"
            continue
        effects, reasons = [], []
        for w in ph.writes:
            record = seen[f"write:{w.param}"].found
            if record is None:
                reasons.append(reason_for(f"write:{w.param}", f"the write of `{w.param}` (line {w.line})"))
                continue
            effects.append(
                DerivedClause(
                    f"eff.{w.param}_written",
                    ph.basis,
                    f"args.{w.param} is None or {_attr(record, w.field)} == args.{w.param}",
                    f"On a call answered with the flagged success reply, the `{w.param}` passed is stored "
                    f"(`{w.record}.{w.field} = {w.param}`, line {w.line}).",
                )
            )
        if not effects:
            out.unresolved[ph.basis] = reasons[0] if reasons else "no write to check"
            continue
        out.clauses.append(DerivedClause("success", ph.basis, success, extra={
            "biconditional": True,
            "justification": "The reply the finding flags as a literal success: an agent reads it as the "
                             "write done."}))
        out.clauses.extend(effects)
    return out


def _bind_point(point_id: str, obs: dict[str, Any], guards: dict[str, GuardOracle], args: dict[str, Any],
                pre: Any) -> tuple[str | None, str]:
    if point_id in guards:
        if obs.get("value") is None:
            return None, f"the guard's condition could not be evaluated ({obs.get('error')})"
        return translate_guard(guards[point_id].condition, obs, args, pre)
    values = obs.get("values") or {}
    expr, value = next(iter(values.items()), ("", None))
    if isinstance(value, dict) and "__error__" in value:
        return None, f"`{expr}` could not be read at the write ({value['__error__']})"
    found = locate(value, pre, args, root="post")
    if found is None:
        return None, f"the record `{expr}` is no record of the state an argument selects"
    return found, ""


def load_derived(text: str, path: Path) -> tuple[Contract | None, list[ContractError]]:
    """Write the contract and load it back: what is checked is exactly the file kept."""
    from toollint.atomic import write_text

    path.parent.mkdir(parents=True, exist_ok=True)
    write_text(path, text)
    return parse_contract(path)


# --- checking ---------------------------------------------------------------------------------------


@dataclass
class DerivedCheck:
    """A flagged tool under derived oracles: what was derived statically, the contract it became, and
    why some of its findings got no clause."""

    tool: DerivedTool
    path: Path  # where the derived contract is written
    unresolved: dict[Basis, str] = field(default_factory=dict)
    contract: Contract | None = None

    def clause_set(self) -> ClauseSet:
        """The derived oracles as one clause set: the skeleton chooses the host, `settle` the clauses."""
        return ClauseSet(self.tool.skeleton(self.path), DERIVED,
                         lambda report, session, options: settle(self, report, session, options))

    def why_unchecked(self, finding: Finding) -> str | None:
        static = self.tool.why_unchecked(finding)
        if static is not None:
            return static
        return next((why for b, why in self.unresolved.items() if b.matches(finding)), None)


def clauses_testing(finding: Finding, contract: Contract) -> list[str]:
    """The derived clauses that test `finding`: those citing it (code, line, what it is about)."""
    about = finding_subject(finding)
    return [c.id for c in contract.counted_clauses
            if c.provenance.finding == finding.code and c.provenance.line == finding.line
            and c.provenance.about == about]


def guard_condition(first_line: str) -> str | None:
    """The condition under which a commented guard refused, from its first line as a derived
    clause's `provenance.about` names it (`if x.status != 'active':`, `assert amount > 0`)."""
    text = first_line.strip()
    text = text[2:] if text.startswith("elif ") else text
    for candidate in (text + "\n    pass", text):
        try:
            tree = ast.parse(candidate)
        except SyntaxError:
            continue
        stmt = tree.body[0] if tree.body else None
        if isinstance(stmt, ast.If):
            return ast.unparse(stmt.test)
        if isinstance(stmt, ast.Assert):
            return ast.unparse(ast.UnaryOp(op=ast.Not(), operand=stmt.test))
    return None


class GuardLine:
    """A derived guard's line, watched in the host while violating calls run (`guard_watch.py`):
    whether the last call got to the line where the commented-out guard ran, with its condition
    true. Built from the clause alone (its provenance names the guard and its line), so a derived
    contract a maintainer kept is watched the same way. A host that cannot watch watches nothing."""

    def __init__(self, worker: Worker | None, point: str) -> None:
        self.worker, self.point = worker, point

    @classmethod
    @contextmanager
    def watch(cls, clause: Clause, report: ToolReport, plan: Plan, worker: Worker) -> Iterator[GuardLine]:
        prov = clause.provenance
        condition = guard_condition(prov.about) if prov.about else None
        if condition is None or not prov.line or report.contract is None:
            yield cls(None, clause.id)
            return
        # The point is the comment's line: the watch fires on the first line run at or past it.
        spec = {"function": report.contract.tool_name, "file": report.contract.source.file,
                "params": sorted(plan.params), "points": [{"id": clause.id, "line": prov.line,
                                                           "condition": condition}]}
        try:
            worker.request("eval", expr="arm(spec)", module=str(WATCH), names={"spec": spec})
        except WorkerError:
            yield cls(None, clause.id)
            return
        try:
            yield cls(worker, clause.id)
        finally:
            try:
                worker.request("eval", expr="disarm()", module=str(WATCH))
            except WorkerError:
                pass

    def passed_true(self) -> bool:
        """The call since the last look reached the guard's line and the condition was true there."""
        if self.worker is None:
            return False
        try:
            calls = self.worker.request("eval", expr="collect()", module=str(WATCH)).get("value") or []
        except WorkerError:
            return False
        return any(isinstance(c, dict) and (c.get(self.point) or {}).get("value") is True for c in calls)


class Hooks:
    """`CheckOptions.derived`: after a derived contract's plan ran (one `--confirm` derived, or one a
    maintainer kept), the round trips its `round_trip` clauses need, more violating calls for a
    derived guard no call has tested yet, and a second value for an argument the plan varied once."""

    def after_plan(self, report: ToolReport, plan: Plan, scorer: Scorer, execute: Execute, pristine: Any,
                   worker: Worker) -> None:
        contract = report.contract
        if contract is None:
            return
        for clause in contract.clauses_of("pre"):
            if clause.derived:
                self._violate(report, clause, plan, scorer, execute, pristine, worker)
        for clause in contract.clauses_of("arg"):
            if clause.derived and clause.arg:
                self._vary(report, clause.arg, plan, scorer, execute, pristine)
                if clause.falsy_legal:
                    self._falsy_on_truthy(report, clause.arg, plan, scorer, execute, pristine)
        done: set[tuple[str, str]] = set()
        for clause in contract.clauses_of("eff"):
            rt = clause.round_trip
            if rt is not None and (rt.do, rt.undo) not in done:
                done.add((rt.do, rt.undo))
                why = self._round_trip(report, clause, plan, execute, pristine)
                if why:
                    for c in contract.clauses_of("eff"):
                        if c.round_trip == rt:
                            plan.unreachable[c.id] = why

    def _violate(self, report: ToolReport, clause: Clause, plan: Plan, scorer: Scorer, execute: Execute,
                 pristine: Any, worker: Worker) -> None:
        """Calls making the derived guard's condition true, most coherent first (`coherent_violations`),
        until one is scored: the plan's single violating call is often refused by an unrelated check
        (a line of another customer), which says nothing about the guard. Each runs watched at the
        guard's line (`GuardLine`); the plan's violating calls that failed are run again so: a call
        seen to pass that line with the condition true and then crash (`past_guard`) was refused by
        no check at all."""
        assert report.contract is not None
        rows = scorer.score(report.runs, plan)
        row = next((r for r in rows if r.clause_id == clause.id), None)
        if row is None or row.scored:
            return
        tried = {r.probe.key() for r in report.runs}
        failed = [
            dict(r.probe.args)
            for r in report.runs
            if r.probe.clause == clause.id and r.status == "tool_error"
        ]
        fresh = coherent_violations(report.contract, clause, report.meta, pristine, plan)
        with GuardLine.watch(clause, report, plan, worker) as line:
            for args, again in itertools.chain(((a, True) for a in failed), ((a, False) for a in fresh)):
                probe = Probe("pre_violating", args, clause=clause.id)
                if not again and probe.key() in tried:
                    continue
                tried.add(probe.key())
                run = execute(probe)
                if line.passed_true():
                    run.probe.past_guard.append(clause.id)
                scorer.annotate(run)
                if scorer.score_derived_pre(clause, [run], plan).scored:
                    return

    def _vary(self, report: ToolReport, name: str, plan: Plan, scorer: Scorer, execute: Execute,
              pristine: Any) -> None:
        """Two successful calls differing only in `name`, when the plan made fewer: the snapshot
        may hold no second value of a free-text argument (a `reason` nothing stores), and a finding
        that the argument is never stored needs only two legal values to be tested."""
        def successes() -> set[str]:
            for run in report.runs:
                scorer.annotate(run)
            return {repr(r.args.get(name)) for r in report.runs if r.succeeded and r.pres_hold
                    and (r.probe.varied == name or r.probe.kind == "happy")}

        base = next((r for r in report.runs if r.probe.kind == "happy" and r.succeeded), None)
        param = plan.params.get(name)
        if base is None or param is None or len(successes()) >= 2:
            return
        current = base.probe.args.get(name)
        harvested = [
            v for v, o in Harvest.of(pristine).values_for(param) if v and not o.startswith("derived:")
        ]
        for value in [*harvested[:4], *_other_values(current, param.types)]:
            if repr(value) in successes() or value == current:
                continue
            args = dict(base.probe.args)
            args[name] = value
            execute(Probe("arg", args, varied=name))
            if len(successes()) >= 2:
                return

    def _falsy_on_truthy(self, report: ToolReport, name: str, plan: Plan, scorer: Scorer, execute: Execute,
                         pristine: Any) -> None:
        """The falsy value, and the current one, on a record whose current value is truthy: a write
        gated on `if x:` drops `False` unseen on a record that already holds `False`, which is where
        the plan's own falsy call may have landed (`overdraft=False` on an account without one)."""
        param = plan.params.get(name)
        if param is None or not param.falsy_values:
            return
        harvest = Harvest.of(pristine)
        for run in report.runs:
            scorer.annotate(run)
            if run.succeeded and run.probe.varied == name and not run.args.get(name) \
                    and harvest.current_value(param, run.args):
                return  # a falsy call on a truthy record already ran
        happy = next((r.probe.args for r in report.runs if r.probe.kind == "happy"), None)
        for base in [*([happy] if happy is not None else []), *plan.alternatives][:MAX_BINDING_CALLS]:
            current = harvest.current_value(param, base)
            if not current:
                continue
            for value in (param.falsy_values[0], current):
                args = dict(base)
                args[name] = value
                execute(Probe("arg", args, varied=name))
            return

    def _round_trip(self, report: ToolReport, clause: Clause, plan: Plan, execute: Execute,
                    pristine: Any) -> str | None:
        """One completed round trip for `clause`, or why none could be made."""
        assert clause.round_trip is not None and clause.predicate is not None
        rt = clause.round_trip
        tools = {t.get("name"): t for t in report.hello.get("tools", []) if isinstance(t, dict)}
        do_meta, undo_meta = tools.get(rt.do), tools.get(rt.undo)
        if do_meta is None or undo_meta is None:
            missing = rt.do if do_meta is None else rt.undo
            return f"the host lists no tool {missing!r} for the round trip"
        watched = jsondiff.most_specific(clause.predicate.paths)
        made = 0
        for do_args in _legal_calls(report, rt.do, do_meta, pristine, plan):
            made += 1
            if made > MAX_DO_CALLS:
                break
            # The do alone, to see what it made (a partner's call is not one of this tool's runs).
            alone = execute(Probe("search", dict(do_args), tool=rt.do), keep=rt.do == report.tool)
            if alone.status != "ok" or alone.error is not None:
                continue
            touched = [
                op for op in alone.changes if any(jsondiff.canonical_covers(w, op["path"]) for w in watched)
            ]
            if rt.do != report.tool and not touched:
                continue  # this do wrote nothing the undo must give back: the round trip would prove nothing
            undo_args = bind_undo(undo_meta, do_args, alone)
            if undo_args is None:
                continue
            if rt.undo == report.tool:
                trip = Probe("round_trip", undo_args, before=[{"tool": rt.do, "args": dict(do_args)}])
            else:
                trip = Probe("round_trip", dict(do_args), after=[{"tool": rt.undo, "args": undo_args}])
            run = execute(trip)
            if run.error is None and run.status == "ok" and run.result.get("round_trip_ok"):
                return None
        if not made:
            return f"no call of {rt.do} to start a round trip from"
        return (
            f"none of {min(made, MAX_DO_CALLS)} call(s) of {rt.do} made a round trip that {rt.undo} completed"
        )


def _other_values(current: Any, types: set[str]) -> list[Any]:
    """Legal values of an argument's type besides `current`, none of them falsy."""
    out: list[Any] = []
    if "boolean" in types and isinstance(current, bool):
        out.append(not current)
    if types & {"integer", "number"} and isinstance(current, (int, float)) and not isinstance(current, bool):
        out += [current + 1, current + 2]
    if "string" in types or not types:
        text = current if isinstance(current, str) and current else "toollint"
        out += [f"{text}-2", f"{text}-3"]
    return out


def _legal_calls(report: ToolReport, tool: str, meta: dict[str, Any], pristine: Any, plan: Plan
                 ) -> Iterator[dict[str, Any]]:
    """Candidate calls of `tool`: for the tool under check its plan's own calls, else the happy path
    and alternatives of a plan made for it from scratch (a host's examples come first)."""
    if tool == report.tool:
        for run in report.runs:
            if run.probe.kind in ("happy", "arg", "rebased") and run.status == "ok":
                yield dict(run.probe.args)
        return
    # Calls the host knows to be legal (a benchmark's gold actions) first: a booking that adds up is
    # rarely assembled from harvested values, and a plan for a tool of many arguments costs seconds.
    for example in meta.get("examples") or []:
        if isinstance(example, dict):
            yield dict(example)
    empty = Contract(f"{tool}:{tool}", "", Source(""), (), Path(tool))
    other = make_plan(empty, meta, pristine)
    yield dict(other.probes[0].args)
    for alt in other.alternatives:
        yield dict(alt)


def bind_undo(meta: dict[str, Any], do_args: dict[str, Any], do_run: ProbeRun) -> dict[str, Any] | None:
    """The undo's arguments for what the do made: a parameter of the do's reply (`reservation_id`),
    one of the do's own arguments by name, the key of a record the do added; None when a required
    parameter stays unbound."""
    params = params_from_tool(meta)
    reply = do_run.result.get("value")
    added = [op for op in do_run.changes if op.get("op") == "add"]
    out: dict[str, Any] = {}
    for name, p in params.items():
        value: Any = None
        if isinstance(reply, dict) and name in reply:
            value = reply[name]
        elif name in do_args:
            value = do_args[name]
        elif name == "id" or name.endswith("_id"):
            value = _added_key(added, name, reply)
        if value is None and p.required:
            return None
        if value is not None:
            out[name] = value
    return out


def _added_key(added: Sequence[dict[str, Any]], name: str, reply: Any) -> Any:
    for key in ("id", "id_", name):
        if isinstance(reply, dict) and key in reply and isinstance(reply[key], (str, int)):
            return reply[key]
    for op in added:
        last = jsondiff.split_path(op["path"])[-1]
        m = re.fullmatch(r"\{([^=]+)=(.*)\}", last)
        if m and (m.group(1) == name or m.group(1) in ("id", "id_")):
            return m.group(2)
        if not m and not last.isdigit():
            return last
    return None


def coherent_violations(contract: Contract, clause: Clause, meta: dict[str, Any], pristine: Any, plan: Plan,
                        limit: int = MAX_VIOLATING_CALLS) -> list[dict[str, Any]]:
    """Assignments that make `clause` false on the pristine state, the most coherent first: values
    found together in one record of the snapshot (a customer and one of its lines) belong together,
    and a call of unrelated values is usually refused before it reaches the guard's line."""
    params = plan.params or params_from_tool(meta)
    harvest = Harvest.of(pristine)
    happy = plan.probes[0].args if plan.probes else {}
    pools = {n: [v for v, _o in harvest.values_for(p)][:12] or [happy.get(n)] for n, p in params.items()
             if p.required or n in happy}
    pres = _PreEvaluator([clause], pristine, params)
    together = _cooccurrence(pristine)
    found: list[tuple[int, int, dict[str, Any]]] = []
    names = list(pools)
    for n, combo in enumerate(itertools.islice(itertools.product(*(pools[k] for k in names)), 4000)):
        args = dict(zip(names, combo))
        if pres.values(args).get(clause.id) is not False:
            continue
        found.append((-_coherence(args, together), n, args))
    found.sort(key=lambda t: (t[0], t[1]))
    return [args for _s, _n, args in found[:limit]]


def _cooccurrence(state: Any) -> dict[str, set[int]]:
    """String value -> the records (dicts) holding it as a field or in a list field."""
    out: dict[str, set[int]] = {}
    counter = itertools.count()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            rid = next(counter)
            for v in node.values():
                for leaf in (v if isinstance(v, list) else [v]):
                    if isinstance(leaf, str) and leaf:
                        out.setdefault(leaf, set()).add(rid)
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(state)
    return out


def _coherence(args: dict[str, Any], together: dict[str, set[int]]) -> int:
    values = [v for v in args.values() if isinstance(v, str) and v in together]
    return sum(1 for a, b in itertools.combinations(values, 2) if together[a] & together[b])


def settle(check: DerivedCheck, report: ToolReport, session: HostSession, options: CheckOptions) -> None:
    """Resolve a derived contract with the live host (its state paths, its guards' bindings), write and
    load it, and put it on `report` to be checked like any contract, the round trips and extra
    violating calls coming from `Hooks`; or say on `report.error` why it does not load."""
    tool, worker, meta = check.tool, session.worker, report.meta
    tool.host_name = report.tool  # the name the host lists it by (checker.check_group matched it)
    pristine, pristine_hash, tags = session.pristine, session.pristine_hash, session.tags
    resolved = static_clauses(tool, pristine, meta)
    first, errors = load_derived(render(tool, resolved.clauses), check.path)
    if first is not None and not errors and (tool.guards or tool.phantoms):
        try:
            guards = watched_clauses(
                tool, worker, first, meta, pristine, pristine_hash, tags, options.deadline
            )
        except WorkerError as exc:
            bases = [g.basis for g in tool.guards] + [p.basis for p in tool.phantoms]
            guards = Resolution(
                unresolved={b: f"the host failed while the tool was watched: {exc}" for b in bases}
            )
            try:
                worker.restart(WorkerEvent("derived", "after a failed guard watch", tool.name))
            except WorkerError:
                pass
        resolved.clauses.extend(guards.clauses)
        resolved.unresolved.update(guards.unresolved)
        first, errors = load_derived(render(tool, resolved.clauses), check.path)
    check.unresolved = resolved.unresolved
    if first is None or errors:
        report.error = f"{tool.name}: the derived contract does not load: {errors[0] if errors else 'empty'}"
        return
    check.contract = report.contract = first


def counts(reports: Iterable[ToolReport]) -> dict[str, int]:
    """Clause rows by verdict over `reports` (implicit rows left out, UNTESTABLE kept)."""
    out = {CONFORMS: 0, VIOLATES: 0, UNTESTABLE: 0, FLAKY: 0}
    for r in reports:
        for row in r.clause_rows:
            out[row.verdict] = out.get(row.verdict, 0) + 1
    return out


__all__ = [
    "UNSUPPORTED",
    "ClauseResult",
    "DerivedCheck",
    "DerivedTool",
    "Hooks",
    "clauses_testing",
    "derive_tools",
    "locate",
    "projection",
    "reply_predicate",
    "resolve_path",
    "translate_guard",
]
