"""`--confirm` on the main path: turn static candidates into verdicts.

One pipeline. `confirm_findings` picks the tools that have static findings and a contract (every
benchmark profile's bundled contracts plus configured `contracts/` dirs), or every contracted tool with
`confirm_all`; each contract is a clause set tagged by its source (`ClauseSet`: configured, bundled).
A finding no clause of its tool's contract tests (`clauses_testing`) gets, unless the contract leaves
its field or parameter out on purpose (`left_out`: the finding ends LEFT_OUT with the contract's reason
and cited surface), the derived oracles made from it (`toollint.dynamic.derived`): a clause set of the
source `derived`, whose clauses are settled with the live host and written as a contract file beside
the witnesses (`.toollint/derived/`). `run_confirm` checks every clause set, whatever its source, in one
warm host per adapter variant (`check_group`) and makes one TL2xx finding (`_finding`) with a witness
file per confirmed (or flaky) violation. Each static finding then carries the verdict of the clauses
that test it (`properties["verdict"]`, `["clauses"]`, `["witness"]`, `["verdict_oracle"]`: authored or
derived; CONFORMS is shown, never hidden; UNTESTABLE is never a pass; UNCHECKED, only when nothing could
test it, says why). Derived rows are counted apart in every count (`ConfirmRun.counts(derived=...)`,
the summary, each finding's `oracle` property). `bundled=False` (`--no-bundled-contracts`) leaves the
profiles' bundled libraries out, so only configured contracts and derived oracles are used.

Configuration, `[tool.toollint.confirm]`: ``adapter`` (a profile's name, toolkit, or a path to an
adapter file), ``python`` (the benchmark's interpreter), ``factory``/``sys_path``/``state``/
``reset``/``tools`` (toolkit adapter), ``options`` (extra adapter options), ``contract_dirs``,
``deadline`` and ``startup_deadline`` (seconds, positive), ``max_memory`` (the host's memory cap:
bytes or "2 GiB"; default `default_max_memory()`, "unlimited" for none). A contract's own
``adapter:`` block (e.g. ``{name: NAME, suite: ...}``) wins; without either, the adapter of the
profile the contract's ``benchmark`` names, else of the run's profile (`benchmark` in
`[tool.toollint]`, else detected from the linted files), else ``toolkit``.
"""

from __future__ import annotations

import ast
import json
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from toollint.contracts import sandbox as predicate_sandbox
from toollint.contracts.loader import ContractError, bundled_library_dirs, contract_files, load_contracts
from toollint.contracts.model import Clause, Contract, LeftOut
from toollint.dynamic import derived as derived_oracles
from toollint.dynamic.checker import (
    BUNDLED,
    CONFIGURED,
    CONFORMS,
    DERIVED,
    FLAKY,
    UNTESTABLE,
    VIOLATES,
    CheckOptions,
    ClauseSet,
    ToolReport,
    check_group,
)
from toollint.dynamic.protocol import (
    DEFAULT_DEADLINE,
    WorkerSpec,
    check_seconds,
    resume_hosts,
    starting_hosts,
    stop_hosts,
)
from toollint.dynamic.witness import sentence, write_witness

from toollint import registry
from toollint.analysis import ELEMENT, StatePath
from toollint.config import ConfigError
from toollint.console import announce
from toollint.evidence import Evidence
from toollint.files import display_path
from toollint.model import Finding
from toollint.profiles import NO_PROFILE, Profile, ProfileError, find_profile, select_profile
from toollint.settings import UNLIMITED, ConfirmSettings, Settings, parse_size

DEFAULT_WITNESS_DIR = Path(".toollint") / "witnesses"
TOOLKIT_KEYS = ConfirmSettings.ADAPTER_KEYS
# Contract adapter keys that describe the tool, not the host: they must not split a suite's worker.
CONTRACT_ONLY_KEYS = ("name", "depends", "frame", "volatile", "derived", "suites")


@dataclass
class ConfirmRun:
    """Everything one `--confirm` pass produced, for reporters and the bench script."""

    reports: list[ToolReport] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    contract_errors: list[ContractError] = field(default_factory=list)
    startup_s: list[float] = field(default_factory=list)  # per worker started
    derived: list[derived_oracles.DerivedCheck] = field(default_factory=list)  # tools under derived oracles
    notes: list[str] = field(
        default_factory=list
    )  # said once on stderr (e.g. derived oracles without a host)

    def counts(self, derived: bool | None = None) -> dict[str, int]:
        """Clause rows by verdict (contract clauses only; UNTESTABLE stays in the denominator);
        `derived`: only the derived oracles' rows (True) or only the authored contracts' (False)."""
        return derived_oracles.counts(self.reports_of(derived))

    def reports_of(self, derived: bool | None = None) -> list[ToolReport]:
        return [r for r in self.reports if derived is None or r.derived == derived]

    @property
    def probes(self) -> int:
        return sum(len(r.runs) for r in self.reports)


def default_adapter(contract: Contract, profile: Profile | None = None) -> str:
    """The adapter for a contract that names none: its benchmark's profile's, the run's profile's,
    else the generic toolkit adapter."""
    for candidate in (find_profile(contract.benchmark), profile):
        if candidate is not None and candidate.adapter_file is not None:
            return candidate.name
    return "toolkit"


def worker_spec(contract: Contract, conf: ConfirmSettings | None = None, python: str | None = None,
                root: Path | None = None, profile: Profile | None = None,
                linted: Sequence[str] = ()) -> WorkerSpec:
    """The host that serves a contract's tool: the contract's adapter block over the configuration,
    over what the linted files imply for the adapter's profile (`host_options`), with the profile's
    adapter by default (`default_adapter`)."""
    conf = conf or ConfirmSettings()
    adapter_block = dict(contract.adapter)
    name = str(adapter_block.get("name") or conf.adapter or default_adapter(contract, profile))
    options: dict[str, Any] = host_options(name, tuple(linted))
    options.update(conf.options)
    options.update(conf.adapter_options())
    options.update({k: v for k, v in adapter_block.items() if k not in CONTRACT_ONLY_KEYS})
    if root is not None and "sys_path" in options:  # relative to the project (pyproject) root
        options["sys_path"] = [str((root / p).resolve()) for p in options["sys_path"]]
    return WorkerSpec(name, options, python=str(python or conf.python or sys.executable))


# --- the limits in [tool.toollint.confirm] ---------------------------------------------------------


def confirm_limits(
    settings: Settings, deadline: float | None = None
) -> tuple[float, float | None, int | None]:
    """`deadline`, `startup_deadline` (seconds) and `max_memory` (bytes) of a run. The settings
    table has checked their types and signs; a deadline must also be finite (`inf` would never time
    out a hung host), and a direct `deadline` argument gets the same checks: ConfigError naming the
    key (a deadline of -1 used to time every request out and restart the host forever)."""
    conf = settings.confirm
    out: list[float | None] = []
    for key, value in (("deadline", deadline if deadline is not None else conf.deadline or DEFAULT_DEADLINE),
                       ("startup-deadline", conf.startup_deadline)):
        try:
            out.append(None if value is None else check_seconds(value, key))
        except (TypeError, ValueError):
            where = f"{settings.config_file} " if settings.config_file else ""
            raise ConfigError(f"'{key}' in {where}[tool.toollint.confirm] must be a positive, finite number "
                              f"of seconds (got {value!r})") from None
    max_memory = (default_max_memory() if conf.max_memory is None else
                  None if conf.max_memory == UNLIMITED else parse_size(conf.max_memory))
    assert out[0] is not None
    return out[0], out[1], max_memory


def default_max_memory() -> int:
    """The host's address-space cap when `max_memory` is not set: half the machine's memory, within
    4 to 8 GiB. A tool that allocates without bound then ends UNTESTABLE `memory_limit` instead of
    taking the machine (address space is more than resident memory: a benchmark's host maps 1-2 GiB
    after its imports)."""
    try:
        physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # not POSIX
        physical = 16 << 30
    return max(4 << 30, min(8 << 30, physical // 2))


@lru_cache(maxsize=16)
def _host_options(profile_name: str, linted: tuple[str, ...]) -> dict[str, Any]:
    found = find_profile(profile_name)
    if found is None or not found.has_part("host_options") or not linted:
        return {}
    return dict(found.host_option_reader()(list(linted)))


def host_options(adapter: str, linted: Sequence[str] = ()) -> dict[str, Any]:
    """The adapter options the linted files imply when `adapter` is a profile's, from its
    `host_options` part (e.g. the checkout they lie in, so the code confirmed is the code linted)."""
    return dict(_host_options(adapter, tuple(str(p) for p in linted)))


def run_profile(settings: Settings, linted: Sequence[str] | None = None) -> Profile | None:
    """The run's profile: `benchmark` in `[tool.toollint]`, else detected from the linted files.
    An unknown name is a ConfigError naming the config file, with a "did you mean"."""
    where = f"{settings.config_file} [tool.toollint] benchmark" if settings.config_file else "benchmark"
    try:
        return select_profile(settings.benchmark, linted or (), where=where)
    except ProfileError as exc:
        raise ConfigError(str(exc)) from None


def witness_dir_of(settings: Settings, witness_dir: Path | None = None) -> Path:
    """Where a run writes its witnesses: `witness_dir`, else `.toollint/witnesses` in the project."""
    return Path(witness_dir) if witness_dir is not None else (
        (settings.project_root or Path.cwd()) / DEFAULT_WITNESS_DIR)


def run_confirm(sets: Sequence[Contract | ClauseSet], settings: Settings, *, python: str | None = None,
                witness_dir: Path | None = None, progress: Callable[[str], None] | None = None,
                deadline: float | None = None, profile: Profile | None = None,
                linted: Sequence[str] = ()) -> ConfirmRun:
    """Check clause sets of every source (configured and bundled contracts, derived oracles: a bare
    contract is a configured set), one warm host per adapter variant, and write a witness per violation.
    `profile`: the run's profile, whose adapter serves contracts that name no adapter of their own;
    `linted`: the files the static pass read, from which a profile may derive adapter options.
    Derived oracles of a tool no profile hosts and no `factory` builds are left out with a note.
    Raises ConfigError for a bad limit, before any host starts."""
    conf = settings.confirm
    request_deadline, startup_deadline, max_memory = confirm_limits(settings, deadline)
    predicate_sandbox.new_run()  # slow clauses share one budget per run, beside the per-clause bound
    # The hooks serve the derived clause sets (tier derived): their round trips and guards.
    options = CheckOptions(deadline=request_deadline, startup_deadline=startup_deadline, progress=progress,
                           derived=derived_oracles.Hooks())
    wdir = witness_dir_of(settings, witness_dir)
    options.log_dir = wdir.parent / "logs"
    run = ConfirmRun()
    hostless: list[str] = []
    groups: dict[str, tuple[WorkerSpec, list[ClauseSet]]] = {}
    for unit in map(ClauseSet.of, sets):
        spec = worker_spec(unit.contract, conf, python, settings.project_root, profile, linted)
        spec.max_memory = max_memory
        if unit.settle is not None and spec.adapter == "toolkit" and not spec.options.get("factory") \
                and not spec.options.get("classes"):
            hostless.append(unit.contract.tool_name)
            continue  # no benchmark profile hosts it and no factory is configured: nothing can run it
        groups.setdefault(json.dumps(spec.to_json(), sort_keys=True), (spec, []))[1].append(unit)
    taken: set[Path] = set()
    # Groups are independent processes; run them side by side (start-up dominates the wall time).
    jobs = max(1, min(len(groups), int(conf.jobs or os.cpu_count() or 1)))
    units = [unit for _, grouped in groups.values() for unit in grouped]  # the progress line counts these
    tools = len({unit.contract.tool_name for unit in units})
    announce(progress, starting_hosts([spec for spec, _ in groups.values()], tools), len(units))
    run.reports.extend(_in_parallel(lambda g: check_group(g[1], g[0], options), list(groups.values()), jobs))
    run.startup_s = list(options.startups)
    for report in run.reports:
        for row in report.violations:
            write_witness(report, row, wdir, taken)
            run.findings.append(_finding(report, row))
    if hostless:
        run.notes.append(
            f"confirm: derived oracles need a host for {', '.join(hostless)}: no benchmark profile "
            "hosts them; set `factory` in [tool.toollint.confirm] (docs/confirm.md)"
        )
    return run


class ConfirmInterrupted(KeyboardInterrupt):
    """Ctrl-C during `--confirm`: its hosts were stopped. Witnesses are written once every host has
    finished, so none was written (none half)."""

    def __init__(self, hosts: int) -> None:
        super().__init__()
        self.hosts = hosts

    def summary(self) -> str:
        return (f"--confirm interrupted: {self.hosts} benchmark host(s) stopped; no report was written; "
                "no witness was written")


def _in_parallel(check: Callable[[Any], list[ToolReport]], groups: list[Any], jobs: int) -> list[ToolReport]:
    """`check` of every group, `jobs` at a time (each group is its own host). The first Ctrl-C stops
    every host at once, so the threads waiting on them end within seconds (not when the run would
    have), and raises ConfirmInterrupted."""
    reports: list[ToolReport] = []
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        try:
            for found in pool.map(check, groups):
                reports.extend(found)
        except KeyboardInterrupt:
            hosts = stop_hosts()
            try:
                pool.shutdown(wait=True, cancel_futures=True)
            finally:
                resume_hosts()
            raise ConfirmInterrupted(hosts) from None
    return reports


def derived_dir(settings: Settings, witness_dir: Path | None = None) -> Path:
    """Where `--confirm` writes the derived contracts: beside the witnesses."""
    return witness_dir_of(settings, witness_dir).parent / "derived"


def derived_checks(tools: Sequence[derived_oracles.DerivedTool], out_dir: Path
                   ) -> list[derived_oracles.DerivedCheck]:
    """One derived check per flagged tool, its contract to be written to `out_dir` (a tool whose name
    another one took gets its module's name too)."""
    names: set[str] = set()
    checks = []
    for tool in tools:
        stem = tool.qualname if tool.qualname not in names else f"{tool.module}.{tool.qualname}"
        names.add(stem)
        checks.append(derived_oracles.DerivedCheck(tool, out_dir / f"{stem}.yaml"))
    return checks


def _finding(report: ToolReport, row: Any) -> Finding:
    meta = report.meta
    contract = report.contract
    return Finding(
        code=row.code,
        message=sentence(report, row),
        path=str(meta.get("file") or (contract.path if contract else "")),
        line=int(meta.get("line") or 1),
        tool=report.tool,
        properties={
            "verdict": row.verdict,
            "clause": row.clause_id,
            "witness": str(row.witness) if row.witness else None,
            "contract": str(contract.path) if contract else None,
            # An implicit row (the reset check) of a derived contract is a derived oracle too.
            "tier": row.clause.provenance.tier
            if row.clause is not None
            else ("derived" if report.derived else None),
            "oracle": "derived" if report.derived else "authored",
            **(
                {
                    "derived_from": {
                        "code": row.clause.provenance.finding,
                        "line": row.clause.provenance.line,
                        "about": row.clause.provenance.about,
                    }
                }
                if row.clause is not None and row.clause.derived
                else {}
            ),
            "confirmed": row.rerun,
            # the argument an ignored-argument clause shows dropped (the grader audit joins on it)
            **({"argument": row.clause.arg} if row.code == "TL202" and row.clause is not None
               and row.clause.arg else {}),
        },
    )


def covers_file(contract: Contract, path: str) -> bool:
    """Whether `path` can be the file the contract's tool lives in: the same file name as the
    contract's `source.file`. (Only the name: a vendored or copied module still counts, while a
    project's own `tools.py` never picks up a bundled contract for a benchmark's `banking_client.py`.)"""
    return not contract.source.file or Path(path).name == Path(contract.source.file).name


def select_contracts(contracts: Iterable[Contract], findings: Iterable[Finding], confirm_all: bool,
                     linted: Sequence[str] | None = None) -> list[Contract]:
    """Contracts of tools with a static finding, or, with `confirm_all`, of every contracted tool in
    the linted files. A contract matches by tool name and by its source file, so a project's own
    `send_money` never picks up a bundled benchmark's contract. `linted=None`: no file filter."""
    contracts = list(contracts)
    if confirm_all:
        if linted is None:
            return contracts
        return [c for c in contracts if any(covers_file(c, p) for p in linted)]
    flagged = [f for f in findings if f.tool]
    return [c for c in contracts
            if any(f.tool.rsplit(".", 1)[-1] == c.tool_name and covers_file(c, f.path)  # type: ignore[union-attr]
                   for f in flagged)]


UNCHECKED = "UNCHECKED"  # a finding that no clause of its tool's contract tests

# Which clause kinds can test a finding, by the METHOD.md defect class its rule hints at (a rule's
# `hint`; "A / B" hints at both). Rows of other kinds never decide the finding's verdict.
CLASS_KINDS: dict[str, tuple[str, ...]] = {
    "Unenforced Precondition": ("pre",),
    "Ignored Argument": ("arg", "eff"),
    "Partial Effect": ("eff", "inv"),
    "Phantom Effect": ("eff", "success"),
    "Reset Leak": ("reset",),
    "Frame Violation": ("frame",),
}
ALL_KINDS = ("pre", "eff", "frame", "arg", "inv", "success")


def finding_kinds(finding: Finding) -> tuple[str, ...]:
    """The clause kinds that can test `finding`: from its rule's defect class, all kinds when unknown."""
    rule = registry.get(finding.code)
    hint = rule.hint if rule is not None else ""
    kinds = [k for part in hint.split("/") for k in CLASS_KINDS.get(part.strip(), ())]
    return tuple(dict.fromkeys(kinds)) or ALL_KINDS


def path_tests(clause_path: str, named: str) -> bool:
    """Whether a clause reading `clause_path` tests the state path `named` a finding names: it reads
    that field or something inside it, or compares whole records holding it (`x[*]`). The two may
    differ by one leading state root (`db.lines[*].status` in the code, `lines[*].status` in a
    snapshot of `db`), or each have their own (`db.flights[*]` in a toolkit's code, `agent_db.flights[*]`
    in a snapshot holding the agent's and the user's DB)."""
    read, want = StatePath.parse(clause_path), StatePath.parse(named)
    for r, w in ((read, want), (read.below_root, want), (read, want.below_root),
                 (read.below_root, want.below_root)):
        if r.root is None or w.root is None or ELEMENT in (w.root, r.root):
            continue
        if r.starts_with(w) or (r.leaf == ELEMENT and w.starts_with(r)):
            return True
    return False


def _guard_names(guard: ast.stmt) -> tuple[set[str], set[str]]:
    """(names, fields) the condition of a commented-out guard mentions (`if acc['status'] != x:
    raise ...` -> {acc, x}, {status}): bare names, and attribute or constant-key fields."""
    tests: list[ast.AST] = [n.test for n in ast.walk(guard) if isinstance(n, (ast.If, ast.Assert, ast.While))]
    tests = tests or [guard]
    names: set[str] = set()
    fields: set[str] = set()
    for node in (sub for test in tests for sub in ast.walk(test)):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            fields.add(node.attr)
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) \
                and isinstance(node.slice.value, str):
            fields.add(node.slice.value)
    return names, fields


def clauses_testing(finding: Finding, contract: Contract | None, kinds: Sequence[str] | None = None
                    ) -> tuple[list[str], str]:
    """The ids of the clauses (and implicit checks) that test a static finding, and what they were
    matched on (the scope): never every clause of the tool by default.

    Only clauses of the kinds the finding's defect class can show count (`finding_kinds`). Among them:
    - `argument`: the finding names a parameter (`param`): `arg.<param>` and the clauses whose
      predicate reads `args.<param>`;
    - `state`: the finding names state paths (`field`, `writes`): the clauses whose compiled
      predicate reads one of them (`path_tests`); a finding naming one field (`field`) that no clause
      reads is UNCHECKED;
    - `guard`: a commented-out guard (`guard`): the clauses reading an argument or a field the guard
      mentions;
    - `tool`: otherwise every clause of those kinds (a finding about the tool's reply as a whole);
    - `none`: no clause of those kinds exists.
    A success clause belongs with the effect clauses it vouches for whenever `success` is a kind.
    """
    kinds = tuple(kinds) if kinds is not None else finding_kinds(finding)
    if contract is None:
        return [], "none"
    if contract.derived:  # a derived clause tests the finding it cites, and only that one
        cited = derived_oracles.clauses_testing(finding, contract)
        return (cited, "derived") if cited else ([], "none")
    candidates = [c for c in contract.counted_clauses if c.kind in kinds]
    implicit = [k for k in ("reset",) if k in kinds]
    success = [c.id for c in candidates if c.kind == "success"]

    def reads_arg(c: Clause, name: str) -> bool:
        return c.arg == name or (c.predicate is not None and name in c.predicate.args_read)

    evidence = finding.evidence or Evidence()
    param = evidence.parameter
    if param:
        hit = [c.id for c in candidates if reads_arg(c, param)]
        return (hit, "argument") if hit else ([], "none")
    field = evidence.state_path
    named = [field] if field else []
    writes = finding.properties.get("writes")
    named += [w for w in writes if isinstance(w, str)] if isinstance(writes, list) else []
    if named:
        hit = [c.id for c in candidates if c.kind != "success" and c.predicate is not None
               and any(path_tests(p, n) for p in c.predicate.paths for n in named)]
        if hit:
            return [*hit, *(s for s in success if s not in hit)], "state"
        if field:
            return [], "none"
    if evidence.guard_statement is not None:
        names, fields = _guard_names(evidence.guard_statement)
        hit = [c.id for c in candidates if any(reads_arg(c, n) for n in names) or (
            c.predicate is not None and any(StatePath.parse(p).leaf in fields for p in c.predicate.paths))]
        if hit:
            return hit, "guard"
    everything = [c.id for c in candidates] + implicit
    return (everything, "tool") if everything else ([], "none")


def verdict_for(finding: Finding, report: ToolReport) -> tuple[str, str | None, str]:
    """The verdict a static finding gets from the rows of the clauses that test it
    (`clauses_testing`): VIOLATES if one violates, FLAKY if one is flaky, CONFORMS if one was scored,
    else UNTESTABLE; UNCHECKED when no clause tests it. Returns (verdict, witness, scope)."""
    ids, scope = clauses_testing(finding, report.contract)
    rows = [r for r in report.rows if r.clause_id in ids]
    if report.error and not rows:  # the host never ran: every clause is UNTESTABLE for the same reason
        return (UNTESTABLE if ids else UNCHECKED), None, scope
    if not rows:
        return UNCHECKED, None, scope
    bad = [r for r in rows if r.verdict in (VIOLATES, FLAKY)]
    if bad:
        verdict = VIOLATES if any(r.verdict == VIOLATES for r in bad) else FLAKY
        return verdict, next((str(r.witness) for r in bad if r.witness), None), scope
    return (CONFORMS if any(r.verdict == CONFORMS for r in rows) else UNTESTABLE), None, scope


def attach_verdict(finding: Finding, report: ToolReport) -> None:
    """Put the verdict of the clauses testing `finding` on it (`verdict_for`), with those clauses'
    ids, the scope they were matched on, the first violation's witness and why it is UNTESTABLE or
    UNCHECKED."""
    verdict, witness, scope = verdict_for(finding, report)
    ids, _ = clauses_testing(finding, report.contract)
    for stale in ("witness", "verdict_detail", "verdict_reason"):  # of an earlier verdict (an authored one)
        finding.properties.pop(stale, None)
    finding.properties["verdict"] = verdict
    finding.properties["verdict_scope"] = scope
    finding.properties["verdict_oracle"] = "derived" if report.derived else "authored"
    finding.properties["clauses"] = ids
    if witness:
        finding.properties["witness"] = witness
    if report.error:
        finding.properties["verdict_detail"] = report.error
    elif verdict == UNCHECKED:
        name = report.contract.path.name if report.contract is not None else "the contract"
        what = finding.evidence and (finding.evidence.parameter or finding.evidence.state_path) or "it"
        finding.properties["verdict_detail"] = f"no clause of {name} tests {what}"
    elif verdict == UNTESTABLE:  # every clause testing it ran and none could be scored: say why each
        by_reason: dict[str, list[str]] = {}  # one reason, said once, with the clauses it stopped
        for r in report.rows:
            if r.clause_id in ids and r.verdict == UNTESTABLE:
                why = (r.reason or "not scored") + (f" ({r.detail})" if r.detail else "")
                by_reason.setdefault(why, []).append(r.clause_id)
        finding.properties["verdict_detail"] = "; ".join(
            f"{why}: {', '.join(clauses)}" for why, clauses in by_reason.items()
        ) or "no clause testing it could be scored"
        reasons = [r.reason for r in report.rows if r.clause_id in ids and r.reason]
        if reasons:
            finding.properties["verdict_reason"] = reasons[0]  # the reason code, for machine readers


def draft_derived(
    findings: Sequence[Finding],
    settings: Settings,
    *,
    out_dir: Path,
    python: str | None = None,
    progress: Callable[[str], None] | None = None,
    linted: Sequence[str] = (),
) -> ConfirmRun:
    """`toollint contracts draft --from-findings`: the derived contracts of every flagged tool, each
    checked once through the benchmark's host (so it is written with what it already confirms) and
    written to `out_dir` for a maintainer to review and keep. Verdicts go on `findings`."""
    if settings.benchmark:
        run_profile(settings)
    profiles = settings.benchmark != NO_PROFILE
    checks = derived_checks(derived_oracles.derive_tools(list(findings), profiles=profiles), out_dir)
    profile = run_profile(settings, linted) if not settings.confirm.adapter else None
    run = run_confirm([c.clause_set() for c in checks if c.tool.has_oracles], settings, python=python,
                      progress=progress, profile=profile, linted=linted)
    run.derived.extend(checks)
    attach_derived(run)
    return run


def attach_derived(run: ConfirmRun) -> None:
    """Verdicts on the findings under derived oracles: from the clauses citing each, or UNCHECKED with
    why none could be derived (after why the tool's contract did not test it, when it has one)."""
    by_contract = {str(r.contract.path): r for r in run.reports
                   if r.contract is not None and r.source == DERIVED}
    for check in run.derived:
        report = by_contract.get(str(check.path))
        if report is None and check.tool.has_oracles:
            continue  # never run (no host): the run's notes say so
        for f in check.tool.findings:
            why = check.why_unchecked(f)
            # Why the derived tier decides: the tool's contract has no clause for the finding.
            before = f.properties.get("verdict_detail") if f.properties.get("verdict") == UNCHECKED else None
            if report is not None and (why is None or report.error):
                attach_verdict(f, report)  # a host that never started is said as such
                if before:
                    f.properties["derived_because"] = before
                continue
            f.properties.update(
                verdict=UNCHECKED,
                verdict_scope="none",
                verdict_oracle="derived",
                clauses=[],
                verdict_detail=(f"{before}; " if before else "")
                + f"no derived oracle: {why or 'nothing to derive'}",
            )


LEFT_OUT = "LEFT_OUT"  # not tested: the finding's contract leaves its field or parameter out on purpose


def contract_of(finding: Finding, contracts: Iterable[Contract]) -> Contract | None:
    """The contract of the finding's tool (by name and source file), if any."""
    name = str(finding.tool or "").rsplit(".", 1)[-1]
    return next((c for c in contracts if name and c.tool_name == name and covers_file(c, finding.path)), None)


def left_out_for(finding: Finding, contract: Contract | None) -> LeftOut | None:
    """The contract's `left_out` entry for the field or parameter the finding names, if it has one."""
    evidence = finding.evidence or Evidence()
    for entry in contract.left_out if contract is not None else ():
        if entry.arg is not None and entry.arg == evidence.parameter:
            return entry
        if entry.path is not None and evidence.state_path and path_tests(entry.path, evidence.state_path):
            return entry
    return None


def attach_left_out(finding: Finding, contract: Contract, entry: LeftOut, source: str) -> None:
    """Not tested, on purpose: the reason and the surface that allows it, as the contract says them."""
    surface = entry.surface
    cited = ":".join(str(x) for x in (surface.file or contract.source.file, surface.line) if x)
    quote = (f" ({cited}: \"{surface.quote}\")" if surface.quote
             else f" ({surface.note})" if surface.note else "")
    finding.properties.update(
        verdict=LEFT_OUT,
        verdict_scope="left_out",
        verdict_oracle="authored",
        clauses=[],
        verdict_reason="left_out",
        verdict_detail=f"not tested: {source} contract {contract.path.name} leaves {entry.subject} out on "
                       f"purpose: {entry.reason}{quote}",
        left_out={"subject": entry.subject, "reason": entry.reason, "contract": str(contract.path),
                  "surface": {k: v for k, v in (("tier", surface.tier), ("kind", surface.kind),
                                                ("file", surface.file), ("line", surface.line),
                                                ("quote", surface.quote), ("note", surface.note)) if v}},
    )


def confirm_findings(findings: list[Finding], settings: Settings, *, confirm_all: bool = False,
                     python: str | None = None, contract_dirs: Sequence[Path | str] = (),
                     witness_dir: Path | None = None,
                     progress: Callable[[str], None] | None = None) -> list[Finding]:
    """Attach verdicts to `findings` (in place) and return the TL2xx findings of the checked tools.

    Contract-loading problems are returned as their TL3xx findings, so a broken contract is reported
    and the other tools are still checked.
    """
    return confirm(findings, settings, confirm_all=confirm_all, python=python, contract_dirs=contract_dirs,
                   witness_dir=witness_dir, progress=progress)[0]


def summary_lines(run: ConfirmRun) -> list[str]:
    """What a run decided, per tool verdict and per clause row: UNTESTABLE is counted and its tools
    named with the reason, never folded into the passes. Tools under authored contracts and under
    derived oracles are counted on lines of their own."""
    lines: list[str] = []
    for derived, label in ((False, "confirm"), (True, "confirm: derived oracles")):
        reports = run.reports_of(derived)
        if not reports:
            continue
        tools: dict[str, list[str]] = {CONFORMS: [], VIOLATES: [], UNTESTABLE: [], FLAKY: []}
        for r in reports:
            tools.setdefault(r.verdict, []).append(r.tool)
        rows = derived_oracles.counts(reports)
        per_tool = ", ".join(f"{len(tools[v])} {v}" for v in (VIOLATES, FLAKY, CONFORMS, UNTESTABLE))
        per_row = ", ".join(f"{rows[v]} {v}" for v in (VIOLATES, FLAKY, CONFORMS, UNTESTABLE))
        lines.append(f"{label}: {len(reports)} tool(s): {per_tool}; clause rows: {per_row}")
        by_reason: dict[str, list[str]] = {}
        for r in reports:
            if r.verdict == UNTESTABLE:
                reasons = sorted({row.reason for row in r.clause_rows if row.reason})
                why = r.error or ", ".join(reasons) or "no clause could be scored"
                by_reason.setdefault(why.replace(f"{r.tool}: ", "", 1), []).append(r.tool)
        for why, names in by_reason.items():  # one line per reason: a host that cannot start is one line
            lines.append(f"{label}: UNTESTABLE {', '.join(names)}: {why}")
    # What a host left out of its snapshots (state with no JSON form): said once, not fatal.
    notes = dict.fromkeys(n for r in run.reports for n in [*r.hello.get("notes", ()), *(
        n for p in r.runs for n in p.notes)])
    lines += [f"confirm: {n}" for n in notes]
    if run.derived:
        unchecked = sum(1 for c in run.derived for f in c.tool.findings if c.why_unchecked(f))
        if unchecked:
            lines.append(f"confirm: derived oracles: {unchecked} finding(s) without one (see each finding's "
                         "verdict_detail)")
    return lines


def confirm(findings: list[Finding], settings: Settings, *, confirm_all: bool = False,
            python: str | None = None, contract_dirs: Sequence[Path | str] = (),
            witness_dir: Path | None = None,
            progress: Callable[[str], None] | None = None,
            linted: Sequence[str] | None = None, bundled: bool = True,
            derive: bool = True) -> tuple[list[Finding], ConfirmRun]:
    """`confirm_findings`, also returning the run itself (for its counts and per-tool verdicts).
    `linted`: the files the static pass read, which bound `confirm_all`; `bundled=False`: no profile's
    bundled contracts; `derive`: derived oracles for the findings no contract clause tests.

    One pipeline: every finding ends with the clauses of its tool's contract (configured or bundled)
    that test it; else, when that contract leaves its field or parameter out on purpose (`left_out`),
    LEFT_OUT with the reason; else with the derived oracle made from it (tier derived, counted apart),
    checked in the same run; else UNCHECKED with why."""
    bundled = bundled and settings.benchmark != NO_PROFILE  # the bundled contracts are the profiles'
    library = bundled_library_dirs() if bundled else []
    dirs: list[Path | str] = [*library, *settings.contract_dirs, *settings.confirm.contract_dirs,
                              *contract_dirs]
    if settings.project_root is not None:
        dirs = [p if Path(p).is_absolute() else settings.project_root / p for p in dirs]
    if settings.benchmark:  # a misspelt benchmark is an error whether or not a contract needs it
        run_profile(settings)
    contracts, errors = load_contracts(dirs)
    bundled_files = {p.resolve() for p in contract_files(library)}
    chosen = select_contracts(contracts, findings, confirm_all, linted)
    sets = [ClauseSet(c, BUNDLED if c.path.resolve() in bundled_files else CONFIGURED) for c in chosen]
    uncovered: list[Finding] = []
    left_out: list[tuple[Finding, Contract, LeftOut]] = []
    for f in findings:
        contract = contract_of(f, contracts)
        if contract is not None and clauses_testing(f, contract)[0]:
            continue
        entry = left_out_for(f, contract)
        if contract is not None and entry is not None:
            left_out.append((f, contract, entry))
        elif derive and derived_oracles.derivable(f):
            uncovered.append(f)
    tools = derived_oracles.derive_tools(uncovered, profiles=settings.benchmark != NO_PROFILE)
    checks = derived_checks(tools, derived_dir(settings, witness_dir))
    # Detection reads the linted files: only when some clause set leaves the adapter to the run's profile.
    needs_profile = not settings.confirm.adapter and (bool(checks) or any(
        not c.adapter.get("name") and default_adapter(c) == "toolkit" for c in chosen))
    profile = run_profile(settings, linted) if needs_profile or settings.benchmark else None
    sets += [c.clause_set() for c in checks if c.tool.has_oracles]
    run = run_confirm(sets, settings, python=python, witness_dir=witness_dir, progress=progress,
                      profile=profile, linted=linted or ())
    run.derived.extend(checks)
    authored = {r.tool: r for r in run.reports if r.source != DERIVED}
    for f in findings:
        report = authored.get((f.tool or "").rsplit(".", 1)[-1])
        if report is not None:
            attach_verdict(f, report)
    for f, contract, entry in left_out:
        attach_left_out(f, contract, entry, "the bundled" if contract.path.resolve() in bundled_files
                        else "the configured")
    attach_derived(run)
    out = list(run.findings)
    for e in errors:
        out.append(
            Finding(code=e.code, message=e.message, path=display_path(Path(e.path)), line=e.line, col=e.col)
        )
    for report in run.reports:
        if report.error and report.contract is not None and not report.derived:
            # A host that cannot start is reported on the static findings (verdict_detail); a contract
            # naming a tool the benchmark does not have is a contract problem of its own.
            if "is not among" not in report.error and "registered by no suite" not in report.error:
                continue
            out.append(Finding(code="TL309", message=f"UNTESTABLE {report.tool}: {report.error}",
                               path=display_path(Path(report.contract.path)),
                               line=report.contract.line, tool=report.tool,
                               properties={"verdict": UNTESTABLE, "verdict_detail": report.error}))
    return out, run
