"""Score-at-risk: from a defect's fields to the graded tasks whose verdicts read them.

`trace(defects, tasks)` is the whole pipeline on already-known fields, so it runs without the dynamic
checker. `defect_from_clause` derives the fields from a contract clause's *compiled* predicate (never
its source text), and `attach` puts the result on a TL2xx `Finding` for SARIF (relatedLocations at the
grader read sites, a code flow tool write -> field -> grader read, exposed-task counts per basis).
"""

from __future__ import annotations

import ast
import csv
import io
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from dataclasses import field as dc_field
from pathlib import Path
from typing import Any

from toollint.analysis import MUTATORS, analyze_module, summarize
from toollint.analysis.graders import grader_flow
from toollint.analysis.grading import BASIS_WORDS, GraderFlow, Role, decide_basis, ungrounded
from toollint.model import Finding, RelatedLocation
from toollint.trace.readsites import BASES, CONFIDENCE, PRE_PREFIX, Basis, ModuleCache, ReadSite, classify
from toollint.trace.tasks import GraderRef, Problem, Task, TaskSet, task_sites

# Collection methods that add or remove elements (or reorder them): what such a write changes is the
# collection's membership, not a field of an element.
MEMBERSHIP_METHODS = MUTATORS - {"__setitem__"}

LEDGER_COLUMNS = ("defect", "tool", "clause", "field", "task", "suite", "grader", "read_site", "basis",
                  "confidence")


@dataclass(frozen=True)
class Defect:
    """A confirmed violation reduced to what tracing needs."""

    id: str
    tool: str  # "pkg.module:function" or a qualname
    clause: str
    fields: tuple[str, ...]  # canonical state paths the tool should (not) have written
    tool_file: str = ""
    tool_line: int = 0
    code: str = ""  # TL2xx
    witness: Any = None
    # Of `fields`, the collections whose membership the tool changes (`append`, `pop`, `del`, ...)
    # rather than a field of an element: a grader listing or searching them is `collection_only`.
    collections: tuple[str, ...] = ()
    # "derived" when the violated clause was derived from a static finding (`toollint.dynamic.derived`),
    # else the authored clause's tier: derived defects are totalled apart (`Ledger.totals_by_oracle`).
    tier: str = ""

    @property
    def oracle(self) -> str:
        return "derived" if self.tier == "derived" else "authored"

    @property
    def tool_name(self) -> str:
        """The function name: `pkg.mod:Class.method` -> `method`."""
        return self.tool.rpartition(":")[2].rsplit(".", 1)[-1]


@dataclass
class LedgerRow:
    defect: str
    tool: str
    clause: str
    field: str
    task: str
    suite: str
    grader: str
    read_site: str  # file:line of the site giving the basis
    basis: Basis
    confidence: str
    sites: list[ReadSite] = dc_field(default_factory=list)  # every site exposing the field, the basis's first

    def csv_row(self) -> list[str]:
        return [str(getattr(self, c)) for c in LEDGER_COLUMNS]


@dataclass
class Ledger:
    defects: list[Defect] = dc_field(default_factory=list)
    rows: list[LedgerRow] = dc_field(default_factory=list)
    tasks_traced: int = 0
    problems: list[Problem] = dc_field(default_factory=list)
    ungrounded: list[Finding] = dc_field(default_factory=list)  # TL401
    # defect id -> why its trace means nothing: no traced task has the tool, or no grader of those
    # tasks reads anything where its fields are (a path written relative to another root). A zero
    # from such a trace is not "no task at risk", and is never reported as one.
    untraced: dict[str, str] = dc_field(default_factory=dict)
    in_scope: dict[str, int] = dc_field(
        default_factory=dict
    )  # defect id -> tasks whose environment has the tool

    def totals(self, defect_id: str | None = None) -> dict[str, int]:
        """Exposed tasks per basis (bases never merged), plus the number of tasks traced (for one
        defect: the tasks whose environment has its tool)."""
        counts: dict[str, int] = {b: 0 for b in BASES}
        for row in self.rows:
            if defect_id is None or row.defect == defect_id:
                counts[row.basis] += 1
        traced = (
            self.in_scope.get(defect_id, self.tasks_traced) if defect_id is not None else self.tasks_traced
        )
        return {**counts, "exposed": sum(counts.values()), "traced": traced}

    def totals_by_oracle(self) -> dict[str, dict[str, int]]:
        """`totals` over the defects derived oracles confirmed, and over the authored contracts' apart."""
        out: dict[str, dict[str, int]] = {}
        for oracle in ("authored", "derived"):
            ids = {d.id for d in self.defects if d.oracle == oracle}
            counts: dict[str, int] = {b: 0 for b in BASES}
            for row in self.rows:
                if row.defect in ids:
                    counts[row.basis] += 1
            out[oracle] = {**counts, "exposed": sum(counts.values()), "defects": len(ids)}
        return out

    def tasks_at_risk(self, oracle: str | None = None) -> dict[str, int]:
        """Distinct tasks at risk, each counted once under the strongest basis any defect exposes it by
        (`oracle`: only the defects of "authored" contracts, or of "derived" oracles); `exposed` is
        their number. `totals` counts (defect, task) rows instead."""
        ids = {d.id for d in self.defects if oracle is None or d.oracle == oracle}
        strongest: dict[str, int] = {}
        for row in self.rows:
            if row.defect in ids:
                rank = BASES.index(row.basis)
                strongest[row.task] = min(rank, strongest.get(row.task, rank))
        counts: dict[str, int] = {b: 0 for b in BASES}
        for rank in strongest.values():
            counts[BASES[rank]] += 1
        return {**counts, "exposed": len(strongest)}

    def rows_of(self, defect_id: str) -> list[LedgerRow]:
        return [r for r in self.rows if r.defect == defect_id]

    def to_json(self) -> dict[str, Any]:
        return {
            "tasks_traced": self.tasks_traced,
            "defects": [
                {
                    **{k: v for k, v in asdict(d).items() if k != "witness"},
                    "fields": list(d.fields),
                    "witness": d.witness,
                    "totals": self.totals(d.id),
                }
                for d in self.defects
            ],
            "rows": [
                {**{c: getattr(r, c) for c in LEDGER_COLUMNS}, "sites": [_site_json(s) for s in r.sites]}
                for r in self.rows
            ],
            "totals": self.totals(),
            "untraced": dict(self.untraced),
            "totals_by_oracle": self.totals_by_oracle(),
            "problems": [str(p) for p in self.problems],
            "ungrounded_oracles": [
                {"path": f.path, "line": f.line, "message": f.message, **f.properties}
                for f in self.ungrounded
            ],
        }

    def csv_text(self) -> str:
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(LEDGER_COLUMNS)
        for row in self.rows:
            writer.writerow(row.csv_row())
        return buf.getvalue()


def _site_json(s: ReadSite) -> dict[str, Any]:
    return {"kind": s.kind, "path": s.path, "file": s.file, "line": s.line, "col": s.col, "grader": s.grader,
            "how": s.how, "detail": s.detail, "via": list(s.via)}


def trace(defects: Sequence[Defect], tasks: TaskSet, cache: ModuleCache | None = None) -> Ledger:
    """Every task whose grading reads a field of a defect, one row per (defect, task).

    Only tasks whose environment has the defect's tool are in its scope (a task of another domain
    or suite is not). A defect that no task has in scope, or whose fields
    no in-scope grader reads anything of, is listed in `Ledger.untraced` with the reason."""
    cache = cache or ModuleCache()
    ledger = Ledger(list(defects), tasks_traced=len(tasks.tasks), problems=list(tasks.problems))
    roots_seen: dict[str, set[str]] = {d.id: set() for d in defects}  # the state graders in scope read
    paths_seen: dict[str, set[str]] = {d.id: set() for d in defects}
    flows: FlowCache = {}  # tasks share graders: each grader's flow is computed once
    for task in tasks.tasks:
        sites = task_sites(task, cache, ledger.problems)
        for defect in defects:
            if not in_environment(defect.tool, task.tools):
                continue  # the tool is not part of this task's environment
            ledger.in_scope[defect.id] = ledger.in_scope.get(defect.id, 0) + 1
            for site in sites:
                if site.live_state and not site.path.startswith(PRE_PREFIX):
                    roots_seen[defect.id].add(_root(site.path))
                    paths_seen[defect.id].add(site.path)
            row = _row(defect, task, sites)
            if row is not None:
                ledger.rows.append(row)
        finding = ungrounded_oracle(task, sites, flows)
        if finding is not None:
            ledger.ungrounded.append(finding)
    for defect in defects:
        reason = no_task_reason(tasks) if not tasks.tasks else _untraced(
            defect, ledger.in_scope.get(defect.id, 0), roots_seen[defect.id], paths_seen[defect.id]
        )
        if reason:
            ledger.untraced[defect.id] = reason
    return ledger


def in_environment(tool: str, tools: frozenset[str] | None) -> bool:
    """Is `tool` (a name or `module:Class.method`) one of an environment's `tools` (None: unknown)?
    A reference matches a reference exactly, or a bare name; a bare name matches by name."""
    if tools is None:
        return True
    if tool in tools:
        return True
    name = tool.rpartition(":")[2].rsplit(".", 1)[-1]
    if ":" in tool:
        return name in tools  # an environment that lists names only
    return any(t.rpartition(":")[2].rsplit(".", 1)[-1] == name for t in tools)


def _root(path: str) -> str:
    return path.replace("[", ".").split(".", 1)[0]


def no_task_reason(tasks: TaskSet) -> str:
    """Why a task source gave no task, in words a user can act on: its first problem, if any."""
    why = tasks.problems[0].message if tasks.problems else (
        "the task source holds no task; check [tool.toollint.trace] (docs/trace.md)")
    return f"no task was traced: {why}"


def _untraced(defect: Defect, in_scope: int, roots: set[str], paths: set[str]) -> str:
    if in_scope == 0:
        return f"no traced task's environment has the tool {defect.tool}"
    if "" in roots or any(_root(f) in roots for f in defect.fields):
        return ""
    near = sorted({p for f in defect.fields for p in paths if _suffix_match(p, f)})
    hint = f"; did you mean {near[0]}?" if near else ""
    shown = ", ".join(sorted(roots)) or "no state at all"
    return (f"no grader of the {in_scope} task(s) in scope reads anything under "
            f"{', '.join(sorted({_root(f) for f in defect.fields}))} (they read {shown}){hint}")


def _suffix_match(path: str, field_path: str) -> bool:
    """`agent_db.lines[*].x` ends like `lines[*].x`: the same field under another root."""
    return path != field_path and path.endswith("." + field_path)


def _row(defect: Defect, task: Task, sites: Sequence[ReadSite]) -> LedgerRow | None:
    best: tuple[int, str, ReadSite] | None = None
    exposing: list[ReadSite] = []
    collections = set(defect.collections)
    for field_path in defect.fields:
        for site in sites:
            basis = classify(site, field_path, field_path in collections)
            if basis is None:
                continue
            if site not in exposing:
                exposing.append(site)
            rank = BASES.index(basis)
            if best is None or rank < best[0]:
                best = (rank, field_path, site)
    if best is None:
        return None
    rank, field_path, site = best
    basis = BASES[rank]
    exposing.remove(site)
    return LedgerRow(defect.id, defect.tool, defect.clause, field_path, task.id, task.suite, site.grader,
                     site.location(), basis, CONFIDENCE[basis], [site, *exposing])


# --- TL401 ungrounded oracle -------------------------------------------------------------------------

FlowCache = dict[tuple[str, str, tuple[tuple[str, str], ...]], "GraderFlow | None"]


def _roles(ref: GraderRef) -> dict[str, Role]:
    roles: dict[str, Role] = {name: ("before" if prefix.startswith(PRE_PREFIX) else "state")
                              for name, prefix in ref.state_params.items()}
    roles.update((name, "record") for name in ref.record_params)
    return roles


def _flow(ref: GraderRef, cache: FlowCache) -> GraderFlow | None:
    roles = _roles(ref)
    key = (str(ref.file), ref.qualname, tuple(sorted(roles.items())))
    if key not in cache:
        cache[key] = grader_flow(str(ref.file), ref.qualname, roles)
    return cache[key]


def ungrounded_oracle(
    task: Task, sites: Sequence[ReadSite], cache: FlowCache | None = None
) -> Finding | None:
    """TL401 for a task, decided as the static rule decides it for one grader
    (`toollint.analysis.grading.decide_basis`) over everything that grades the task: the flows of its
    code graders, and its declared criteria (gold actions matched against the agent's calls credit
    what the agent claims; a whole-state hash reads state). A grader that cannot be read is never
    called ungrounded."""
    if any(s.kind == "missing" for s in sites):
        return None
    cache = {} if cache is None else cache
    flows = [(ref, _flow(ref, cache)) for ref in task.graders]
    if any(flow is None for _, flow in flows):
        return None
    actions = [s for s in task.sites if s.kind == "record" and s.how == "action"]
    # a write the run itself undoes is graded from the record by necessity (GraderFlow.undone)
    credited = [(ref, d) for ref, flow in flows if flow is not None and flow.undone is None
                for d in flow.credited]
    reads: list[str | None] = [r.resource for _, flow in flows if flow is not None for r in flow.reads]
    reads += [None for s in task.sites if s.live_state]
    targets = frozenset().union(*(flow.targets for _, flow in flows if flow is not None))
    basis = decide_basis(bool(credited or actions), reads, targets)
    if not ungrounded(basis):
        return None
    if credited:
        ref, decision = min(credited, key=lambda pair: pair[1].line)
        claims = [c.describe() for c in decision.claims] or ["a write the record claims"]
        where, line, col = (
            ref.display or str(ref.file),
            decision.line,
            getattr(decision.node, "col_offset", 0) + 1,
        )
        grader = ref.qualname
        evidence = f"{ref.qualname} credits {claims[0]}"
    else:
        first = actions[0]
        where, line, col, grader = first.file, first.line, first.col, first.grader
        evidence = (
            f"its gold actions ({', '.join(s.detail for s in actions[:3])}) "
            "are matched against the agent's calls"
        )
    return Finding(
        "TL401",
        f"task {task.id}: {BASIS_WORDS[basis]} ({evidence}), never the state the write leaves",
        where, line, col, tool=grader,
        properties={"task": task.id, "basis": basis, "record_sites": [s.location() for s in actions]},
    )


# --- from contracts and TL2xx findings ---------------------------------------------------------------


@dataclass(frozen=True)
class ToolWrites:
    """What a tool writes, from the shared analysis of its source."""

    paths: frozenset[str] = frozenset()  # every state path it writes, assigns, mutates or deletes in
    # of them, the collections it changes only by adding or removing elements (`append`, `pop`, `del`)
    collections: frozenset[str] = frozenset()
    line: int = 0  # the tool's `def` line; 0 when the tool was not found

    def canonical(self, tasks: TaskSet, tool: str) -> ToolWrites:
        """The same paths in the snapshot's form the task set's profile gives for `tool`."""
        roots = tasks.roots_of(tool)
        if roots is None:
            return self
        return ToolWrites(
            frozenset(map(roots.apply, self.paths)), frozenset(map(roots.apply, self.collections)), self.line
        )


def defect_from_clause(
    defect_id: str,
    tool: str,
    clause: Any,
    tool_writes: ToolWrites | Iterable[str] = (),
    effect_clauses: Iterable[Any] = (),
    **extra: Any,
) -> Defect:
    """The fields a violated clause puts at risk, from its compiled predicate's `paths`.

    eff/frame clauses: the state paths the predicate reads on the post-state, kept to those the tool
    writes when the static write set is known (so lookup keys such as `.by(id=...)` drop out); when it
    writes none of them (the write the clause wants is missing), the paths it reads, less the
    containers it only walks through to reach them. pre clauses: the tool wrote when it should have
    been blocked, so the fields are its write set (ValueError when it is not known: the predicate's
    own paths are the lookups that decide the precondition, not what the tool changes). arg clauses
    have no predicate: the paths of the effect clauses that read that argument.
    """
    writes = tool_writes if isinstance(tool_writes, ToolWrites) else ToolWrites(frozenset(tool_writes))
    kind = getattr(clause, "kind", "")
    paths: set[str] = set()
    if kind == "pre":
        if not writes.paths:
            raise ValueError(
                f"{getattr(clause, 'id', clause)} is a precondition, so the fields it puts at risk "
                "are what the tool writes, and the tool's source was not found"
            )
        paths = set(writes.paths)
    elif kind == "arg":
        arg = getattr(clause, "arg", None)
        for eff in effect_clauses:
            pred = getattr(eff, "predicate", None)
            if pred is not None and arg in pred.args_read:
                paths |= post_paths(eff)
        if not paths and arg:
            # No effect clause reads it (a derived `arg.*`): the field the tool writes under its name.
            paths = {w for w in writes.paths if w.rsplit(".", 1)[-1] == arg}
    else:
        paths = post_paths(clause)
    if writes.paths and kind != "pre":
        kept = {p for p in paths if _written(p, writes)}
        paths = kept or _leaves(paths)
    collections = tuple(sorted(p for p in paths if p in writes.collections))
    return Defect(defect_id, tool, getattr(clause, "id", str(clause)), tuple(sorted(paths)),
                  collections=collections, **extra)


def _written(path: str, writes: ToolWrites) -> bool:
    """Is `path` a write of the tool or inside one? Inside a collection write only the collection
    and its elements are: adding an element writes no field of the others."""
    for w in writes.paths:
        if w in writes.collections:
            if path in (w, w + "[*]"):
                return True
        elif path == w or path.startswith((w + "[", w + ".")):
            return True
    return False


def _leaves(paths: set[str]) -> set[str]:
    """Drop the containers walked through (`flights[*].dates[*]` on the way to its `available_seats`)."""
    return {p for p in paths if not any(q != p and q.startswith((p + ".", p + "[")) for q in paths)}


def post_paths(clause: Any) -> set[str]:
    """The state paths a clause's predicate reads on the post-state: the tool cannot have left the
    pre-state wrong. The compiled predicate's paths, less those read only on `pre` (the predicate
    recompiled with `pre` read as arguments, whose paths are not state)."""
    pred = getattr(clause, "predicate", None)
    if pred is None:
        return set()
    from toollint.contracts.host.predicate import ForbiddenPredicate, compile_predicate

    tree = ast.parse(f"({pred.source}\n)", mode="eval")
    uses_pre = False
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == "pre":
            node.id, uses_pre = "args", True
    if not uses_pre:
        return set(pred.paths)
    try:
        post_only = compile_predicate(ast.unparse(tree))
    except ForbiddenPredicate:
        return set(pred.paths)
    return set(post_only.paths) or set(pred.paths)


def defect_from_finding(
    finding: Finding, contract: Any, tool_writes: ToolWrites | Iterable[str] = ()
) -> Defect | None:
    """A TL2xx finding (properties: `clause`, optional `witness`) against its contract."""
    clause_id = finding.properties.get("clause") or finding.properties.get("clause_id")
    clause = contract.clause(clause_id) if clause_id else None
    if clause is None:
        return None
    effects = contract.clauses_of("eff")
    defect_id = f"{finding.code}:{contract.tool_name}:{clause.id}"
    return defect_from_clause(defect_id, contract.tool, clause, tool_writes, effects, tool_file=finding.path,
                              tool_line=finding.line, code=finding.code,
                              witness=finding.properties.get("witness"), tier=clause.provenance.tier)


def attach(
    finding: Finding, ledger: Ledger, defect: Defect, max_related: int = 50, max_flows: int = 10
) -> None:
    """Put the trace on the finding: read sites as related locations, per-basis counts, a code flow."""
    rows = ledger.rows_of(defect.id)
    seen: set[tuple[str, int]] = set()
    reads: list[ReadSite] = []
    for row in rows:
        for site in row.sites:
            if (site.file, site.line) not in seen:
                seen.add((site.file, site.line))
                reads.append(site)
    for site in reads[:max_related]:
        finding.related.append(
            RelatedLocation(
                site.source or site.file,
                site.line,
                site.col,
                f"grader {site.grader} reads {site.path or 'the whole state'} ({site.how})",
            )
        )
    totals = ledger.totals(defect.id)
    finding.properties["trace"] = {
        "fields": list(defect.fields), "exposed_tasks": {b: totals[b] for b in BASES},
        "exposed": totals["exposed"], "traced": totals["traced"],
    }
    # One thread per grader read site: tool write -> field -> grader read.
    start = {"path": finding.path, "line": finding.line, "col": finding.col,
             "message": f"{defect.tool} violates {defect.clause}"}
    threads = []
    primary = list({(r.sites[0].file, r.sites[0].line): r.sites[0] for r in rows if r.sites}.values())
    for site in primary[:max_flows]:
        field_path = site.path if site.kind == "state" else next(iter(defect.fields), "")
        threads.append([
            start,
            {"path": defect.tool_file or finding.path, "line": defect.tool_line or finding.line, "col": 1,
             "message": f"field {field_path or 'state'} is left wrong"},
            {"path": site.source or site.file, "line": site.line, "col": site.col,
             "message": f"grader {site.grader} reads {site.path or 'the whole state'} ({site.how})"},
        ])
    finding.properties["code_flow"] = threads


def tool_writes(tool_file: Path, qualname: str) -> ToolWrites:
    """The state paths a tool writes, from the shared analysis of its module, which of them are
    collections it only adds elements to or removes them from, and its `def` line (empty and 0 when
    the tool is not found there)."""
    try:
        tree = ast.parse(tool_file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, SyntaxError):
        return ToolWrites()
    analysis = analyze_module(tree)
    for tool in analysis.tools:
        if tool.qualname == qualname or tool.name == qualname.rsplit(".", 1)[-1]:
            cls = tool.qualname.rpartition(".")[0] or None
            only_membership: dict[str, bool] = {}
            for access in analysis.summary(tool).writes:
                path, membership = _membership(access, analysis.index, cls)
                only_membership[path] = only_membership.get(path, True) and membership
            return ToolWrites(frozenset(only_membership),
                              frozenset(p for p, only in only_membership.items() if only), tool.node.lineno)
    return ToolWrites()


def _membership(
    access: Any, index: Any, cls: str | None, seen: frozenset[str] = frozenset()
) -> tuple[str, bool]:
    """(the path an access writes, whether it only changes which elements that collection holds):
    `coll.append(x)` -> (coll, True); `del coll[k]` -> (coll, True); `x.f = 1` -> (x.f, False). A write
    made inside a helper is looked up in the helper that makes it (the analysis reports it at the call)."""
    if access.kind == "delete" and access.path.endswith("[*]"):
        return access.path[:-3], True
    if access.kind != "mutate":
        return access.path, False
    node = access.node
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in MEMBERSHIP_METHODS
    ):
        return access.path, True
    name = access.via[-1] if access.via else None
    if name is None or name in seen:
        return access.path, False
    helper = (index.methods.get(cls, {}) if cls else {}).get(name) or index.functions.get(name)
    if helper is None:
        return access.path, False
    inner = summarize(helper, {"self": ""}, index, cls=cls)
    found = [a for a in inner.writes if a.path == access.path]
    if found and all(_membership(a, index, cls, seen | {name})[1] for a in found):
        return access.path, True
    return access.path, False


def trace_findings(findings: Sequence[Finding], tasks: TaskSet, cache: ModuleCache | None = None) -> Ledger:
    """Trace every TL2xx finding that names its contract and clause; attach the trace to each.

    Findings without a loadable contract or clause become `Problem`s, so nothing is skipped silently.
    """
    from toollint.contracts.loader import ContractError, load_contract

    pairs: list[tuple[Finding, Defect]] = []
    problems: list[Problem] = []
    for f in findings:
        if not f.code.startswith("TL2"):
            continue
        contract_path = f.properties.get("contract")
        try:
            contract = load_contract(contract_path) if contract_path else None
        except (ContractError, OSError) as exc:
            problems.append(
                Problem(f.path, f.line, f"{f.code}: contract cannot be loaded, not traced: {exc}")
            )
            continue
        if contract is None:
            problems.append(Problem(f.path, f.line, f"{f.code}: the finding names no contract, not traced"))
            continue
        writes = tool_writes(Path(f.path), contract.qualname).canonical(tasks, contract.tool)
        try:
            defect = defect_from_finding(f, contract, writes)
        except ValueError as exc:
            problems.append(Problem(f.path, f.line, f"{f.code}: not traced: {exc}"))
            continue
        if defect is None:
            problems.append(Problem(f.path, f.line, f"{f.code}: clause {f.properties.get('clause')!r} is not "
                                                    f"in {contract_path}, not traced"))
            continue
        pairs.append((f, defect))
    ledger = trace([d for _, d in pairs], tasks, cache)
    ledger.problems[:0] = problems
    for f, defect in pairs:
        attach(f, ledger, defect)
    return ledger
