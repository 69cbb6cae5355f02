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

from toollint.analysis import analyze_module
from toollint.analysis.graders import grader_flow
from toollint.analysis.grading import BASIS_WORDS, GraderFlow, Role, decide_basis, ungrounded
from toollint.model import Finding, RelatedLocation
from toollint.trace.readsites import BASES, CONFIDENCE, PRE_PREFIX, Basis, ModuleCache, ReadSite, classify
from toollint.trace.tasks import GraderRef, Problem, Task, TaskSet, task_sites

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

    def totals(self, defect_id: str | None = None) -> dict[str, int]:
        """Exposed tasks per basis (bases never merged), plus the number of tasks traced."""
        counts: dict[str, int] = {b: 0 for b in BASES}
        for row in self.rows:
            if defect_id is None or row.defect == defect_id:
                counts[row.basis] += 1
        return {**counts, "exposed": sum(counts.values()), "traced": self.tasks_traced}

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

    def rows_of(self, defect_id: str) -> list[LedgerRow]:
        return [r for r in self.rows if r.defect == defect_id]

    def to_json(self) -> dict[str, Any]:
        return {
            "tasks_traced": self.tasks_traced,
            "defects": [
                {**{k: v for k, v in asdict(d).items() if k != "witness"}, "fields": list(d.fields),
                 "witness": d.witness, "totals": self.totals(d.id)}
                for d in self.defects
            ],
            "rows": [
                {**{c: getattr(r, c) for c in LEDGER_COLUMNS},
                 "sites": [_site_json(s) for s in r.sites]}
                for r in self.rows
            ],
            "totals": self.totals(),
            "totals_by_oracle": self.totals_by_oracle(),
            "problems": [str(p) for p in self.problems],
            "ungrounded_oracles": [
                {"path": f.path, "line": f.line, "message": f.message, **f.properties} for f in self.ungrounded
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
    """Every task whose grading reads a field of a defect, one row per (defect, task)."""
    cache = cache or ModuleCache()
    ledger = Ledger(list(defects), tasks_traced=len(tasks.tasks), problems=list(tasks.problems))
    flows: FlowCache = {}  # tasks share graders: each grader's flow is computed once
    for task in tasks.tasks:
        sites = task_sites(task, cache, ledger.problems)
        for defect in defects:
            if task.tools is not None and defect.tool_name not in task.tools:
                continue  # the tool is not part of this task's environment
            row = _row(defect, task, sites)
            if row is not None:
                ledger.rows.append(row)
        finding = ungrounded_oracle(task, sites, flows)
        if finding is not None:
            ledger.ungrounded.append(finding)
    return ledger


def _row(defect: Defect, task: Task, sites: Sequence[ReadSite]) -> LedgerRow | None:
    best: tuple[int, str, ReadSite] | None = None
    exposing: list[ReadSite] = []
    for field_path in defect.fields:
        for site in sites:
            basis = classify(site, field_path)
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


def ungrounded_oracle(task: Task, sites: Sequence[ReadSite], cache: FlowCache | None = None) -> Finding | None:
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
    credited = [(ref, d) for ref, flow in flows if flow is not None for d in flow.credited]
    reads: list[str | None] = [r.resource for _, flow in flows if flow is not None for r in flow.reads]
    reads += [None for s in task.sites if s.live_state]
    targets = frozenset().union(*(flow.targets for _, flow in flows if flow is not None))
    basis = decide_basis(bool(credited or actions), reads, targets)
    if not ungrounded(basis):
        return None
    if credited:
        ref, decision = min(credited, key=lambda pair: pair[1].line)
        claims = [c.describe() for c in decision.claims] or ["a write the record claims"]
        where, line, col = ref.display or str(ref.file), decision.line, getattr(decision.node, "col_offset", 0) + 1
        grader = ref.qualname
        evidence = f"{ref.qualname} credits {claims[0]}"
    else:
        first = actions[0]
        where, line, col, grader = first.file, first.line, first.col, first.grader
        evidence = f"its gold actions ({', '.join(s.detail for s in actions[:3])}) are matched against the agent's calls"
    return Finding(
        "TL401",
        f"task {task.id}: {BASIS_WORDS[basis]} ({evidence}), never the state the write leaves",
        where, line, col, tool=grader,
        properties={"task": task.id, "basis": basis, "record_sites": [s.location() for s in actions]},
    )


# --- from contracts and TL2xx findings ---------------------------------------------------------------


def defect_from_clause(
    defect_id: str,
    tool: str,
    clause: Any,
    tool_writes: Iterable[str] = (),
    effect_clauses: Iterable[Any] = (),
    **extra: Any,
) -> Defect:
    """The fields a violated clause puts at risk, from its compiled predicate's `paths`.

    eff/frame clauses: the state paths the predicate reads, kept to those the tool writes when the
    static write set is known (so lookup keys such as `.by(id=...)` drop out). pre clauses: the tool
    wrote when it should have been blocked, so the fields are its write set. arg clauses have no
    predicate: the paths of the effect clauses that read that argument.
    """
    writes = set(tool_writes)
    kind = getattr(clause, "kind", "")
    paths: set[str] = set()
    if kind == "pre":
        paths = writes or set(_predicate_paths(clause))
    elif kind == "arg":
        arg = getattr(clause, "arg", None)
        for eff in effect_clauses:
            pred = getattr(eff, "predicate", None)
            if pred is not None and arg in pred.args_read:
                paths |= set(pred.paths)
        if not paths and arg:
            # No effect clause reads it (a derived `arg.*`): the field the tool writes under its name.
            paths = {w for w in writes if w.rsplit(".", 1)[-1] == arg}
    else:
        paths = set(_predicate_paths(clause))
    if writes and kind != "pre":
        kept = {p for p in paths if any(p == w or p.startswith((w + "[", w + ".")) for w in writes)}
        paths = kept or paths
    return Defect(defect_id, tool, getattr(clause, "id", str(clause)), tuple(sorted(paths)), **extra)


def _predicate_paths(clause: Any) -> frozenset[str]:
    pred = getattr(clause, "predicate", None)
    return pred.paths if pred is not None else frozenset()


def defect_from_finding(finding: Finding, contract: Any, tool_writes: Iterable[str] = ()) -> Defect | None:
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


def attach(finding: Finding, ledger: Ledger, defect: Defect, max_related: int = 50, max_flows: int = 10) -> None:
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
        finding.related.append(RelatedLocation(
            site.source or site.file, site.line, site.col, f"grader {site.grader} reads {site.path or 'the whole state'} "
                                            f"({site.how})"))
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


def tool_writes(tool_file: Path, qualname: str) -> tuple[set[str], int]:
    """The state paths a tool writes, from the shared analysis of its module, and its `def` line
    (empty and 0 when the tool is not found there)."""
    try:
        tree = ast.parse(tool_file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, SyntaxError):
        return set(), 0
    analysis = analyze_module(tree)
    for tool in analysis.tools:
        if tool.qualname == qualname or tool.name == qualname.rsplit(".", 1)[-1]:
            return {a.path for a in analysis.summary(tool).writes}, tool.node.lineno
    return set(), 0


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
            problems.append(Problem(f.path, f.line, f"{f.code}: contract cannot be loaded, not traced: {exc}"))
            continue
        if contract is None:
            problems.append(Problem(f.path, f.line, f"{f.code}: the finding names no contract, not traced"))
            continue
        defect = defect_from_finding(f, contract, tool_writes(Path(f.path), contract.qualname)[0])
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
