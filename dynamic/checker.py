"""Run a tool's probe plan through a host and score every contract clause: CONFORMS, VIOLATES, UNTESTABLE.

Per METHOD.md Part 3, for each clause and probe:

- ``pre.*``: on a precondition-violating probe, the call must fail with the declared error
  (``on_violation.raises``, or a subclass of it) and leave state unchanged. Success, any state
  change, or a refusal with another exception is an Unenforced Precondition (TL201): METHOD.md's
  rule is "succeeds (no declared error) or changes state", and a ``KeyError`` where the contract
  declares ``ValueError`` is no declared error; the guard that should have raised it is usually
  gone and the error comes from a later line by accident.
- ``eff.*``: on every legal successful probe the predicate must hold. A failing effect clause that
  reads an effective argument is an Ignored Argument (TL202); otherwise, if the success signal is
  biconditional and every testable effect clause failed on that call, a Phantom Effect (TL204);
  otherwise a Partial Effect (TL203).
- ``eff.*`` on a legal call that raised: a call every precondition allows is one the contract
  promises to carry out, and the contract declares errors only for violated preconditions, so any
  exception from it is undeclared. Each effect clause is evaluated on it too, and a false one is a
  Partial Effect (TL203), whether or not it reads an effective argument: the Phantom rule needs a
  reported success and the Ignored-Argument rule evidence that one argument's value was dropped,
  and a raise gives neither; "a declared effect did not happen on a call that had to succeed" is
  Partial Effect's rule, whose "successful call" exists to leave out calls the contract allows to
  be refused, which this one is not. (An argument replaced by a constant typically looks like this:
  every legal call ends in ``KeyError``.)
- ``frame.*``/``inv.*`` and the adapter's declared write-set: a failure on a successful call whose
  effects all held is a Frame Violation (TL206), on a call whose effects also failed a Partial
  Effect (TL203).
- ``arg.*``: two successful calls differing only in that argument's (effective) value must leave
  different post-states; identical ones are an Ignored Argument (TL202).
- every probe: the state after the post-call reset must hash like the pristine state, else a
  Reset Leak (TL205).

Derived clauses (tier ``derived``, `toollint.dynamic.derived`) differ in three places, each in its
own method: a ``pre.*`` clause derived from a commented-out guard counts a refusal only when it is
the guard's own (`score_derived_pre`: another refusal says nothing about the guard); an ``eff.*``
clause with a ``round_trip`` is scored on do-then-undo sequences only (`score_round_trip`, TL203);
and a derived effect is never scored on a call that raised, since no derived precondition says which
calls must succeed. `CheckOptions.derived` lets the derived oracles add probes after the plan ran (round
trips, more violating calls); round-trip runs are scored by their own clauses only.

Effective arguments are the declared ``arg.*`` ones plus optional arguments an effect clause reads
(an effect clause over an argument is a claim that the argument changes state). Every violation is
re-run in a fresh worker before it is reported; if the re-run disagrees, the tool's calls are
replayed in order in a fresh worker: a violation that needs its predecessors is an order-dependent
TL205, otherwise the row is FLAKY, with what differed. UNTESTABLE rows stay in every count.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from toollint.contracts import sandbox
from toollint.contracts.host.predicate import Predicate, PredicateTypeError
from toollint.contracts.model import Clause, Contract
from toollint.dynamic.host import jsondiff
from toollint.dynamic.probes import (
    Plan,
    Probe,
    effective_arguments,
    make_plan,
    params_from_tool,
    writes_nothing,
)
from toollint.dynamic.protocol import (
    MEMORY_LIMIT,
    START_TIMEOUT,
    Worker,
    WorkerError,
    WorkerEvent,
    WorkerSpec,
)

CONFORMS, VIOLATES, UNTESTABLE, FLAKY = "CONFORMS", "VIOLATES", "UNTESTABLE", "FLAKY"
NO_STATE, TYPE_ERROR, NO_RESET, UNSUPPORTED = (
    "no_observable_state", "predicate_type_error", "no_reset_path", "adapter_unsupported")
# A derived TL104 oracle whose falsy value nothing but its type calls legal: sending it tests nothing.
LEGALITY_UNKNOWN = "legality_unknown"
# A host that did not start (or build its first environment) in time: one reason for all its tools.
START_TIMEOUT_REASON = START_TIMEOUT
CLASS_NAMES = {"TL201": "Unenforced Precondition", "TL202": "Ignored Argument", "TL203": "Partial Effect",
               "TL204": "Phantom Effect", "TL205": "Reset Leak", "TL206": "Frame Violation"}
IGNORED_TAGS = {"volatile", "derived"}


def untestable_legality(clause: Clause) -> bool:
    """A derived `arg.*` clause testing a TL104 (a falsy value dropped) whose falsy value is not known
    to be legal (`falsy_legal: false`): no call can test it (`LEGALITY_UNKNOWN`)."""
    return clause.derived and clause.provenance.finding == "TL104" and not clause.falsy_legal


@dataclass
class ProbeRun:
    """One probe as executed: the call's result, the states around it, and the keyed diff."""

    probe: Probe
    result: dict[str, Any] = field(default_factory=dict)
    pre: Any = None
    post: Any = None
    diff: list[dict[str, Any]] = field(default_factory=list)
    pre_hash: str = ""
    post_hash: str = ""
    reset_hash: str = ""
    pristine_hash: str = ""
    error: WorkerError | None = None
    succeeded: bool = False  # status ok and the success clause (if any) reads success
    pres_hold: bool = False  # every precondition true on the pre-state
    notes: list[str] = field(default_factory=list)  # the host's: state left out of its snapshots
    # Each predicate's outcome on this run (by id of the Predicate), evaluated in the sandbox in one
    # round trip when the run is first scored: True/False, or the PredicateTypeError it raised.
    outcomes: dict[int, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def args(self) -> dict[str, Any]:
        """Effective arguments (after coercion and defaults), falling back to the requested ones."""
        eff = self.result.get("effective_args")
        return dict(eff) if isinstance(eff, dict) else dict(self.probe.args)

    @property
    def status(self) -> str:
        return "error" if self.error is not None else str(self.result.get("status", "?"))

    @property
    def changes(self) -> list[dict[str, Any]]:
        """Diff ops that count: volatile and derived paths are reported apart, never as effects."""
        return [op for op in self.diff if not IGNORED_TAGS & set(op.get("tags", ()))]

    def outcome_key(self) -> str:
        """What the call did to state, for comparing two calls (`before` is the same pristine value)."""
        return jsondiff.canonical_json(
            [{k: op.get(k) for k in ("op", "path", "after")} for op in self.changes]
        )


@dataclass
class ClauseResult:
    clause_id: str
    kind: str
    verdict: str
    reason: str | None = None  # UNTESTABLE reason code
    detail: str = ""
    code: str | None = None  # TL2xx for VIOLATES/FLAKY
    run: ProbeRun | None = None  # the witness run
    partner: ProbeRun | None = None  # the other call of an ignored-argument pair
    scored: int = 0  # probes on which the clause could be evaluated
    failing: int = 0
    implicit: bool = False  # not a contract clause: the reset check or the adapter's write-set
    clause: Clause | None = None
    rerun: dict[str, Any] | None = None  # confirmation outcome
    witness: Path | None = None
    # An order-dependent violation: the calls, in order, that reproduce it (the witnesses among them).
    history: list[ProbeRun] = field(default_factory=list)
    failing_calls: set[str] = field(default_factory=set)  # keys of the calls it was false on

    def fail(self, run: ProbeRun) -> None:
        self.failing += 1
        self.failing_calls.add(run.probe.key())


@dataclass
class ToolReport:
    tool: str
    contract: Contract | None
    verdict: str = UNTESTABLE
    rows: list[ClauseResult] = field(default_factory=list)
    runs: list[ProbeRun] = field(default_factory=list)
    plan: Plan | None = None
    error: str | None = None  # why the whole tool could not be checked
    meta: dict[str, Any] = field(default_factory=dict)  # the host's tool metadata
    hello: dict[str, Any] = field(default_factory=dict)
    spec: WorkerSpec | None = None
    elapsed_s: float = 0.0
    derived: bool = False  # a contract of derived clauses (`toollint.dynamic.derived`), counted apart
    source: str = ""  # the clause set's source (`ClauseSet.source`): configured, bundled or derived

    @property
    def clause_rows(self) -> list[ClauseResult]:
        """Rows for counted contract clauses (the denominator of every share)."""
        return [r for r in self.rows if not r.implicit]

    @property
    def violations(self) -> list[ClauseResult]:
        return [r for r in self.rows if r.verdict in (VIOLATES, FLAKY)]


class DerivedHooks(Protocol):
    """What the derived oracles (`toollint.dynamic.derived`) add to one derived tool's check."""

    def after_plan(self, report: ToolReport, plan: Plan, scorer: Scorer, execute: Execute, pristine: Any,
                   worker: Worker) -> None:
        """After the plan ran: more probes (round trips, violating calls a derived guard needs), the
        worker at hand for what they ask the host beyond calls (a guard's line, watched)."""


class Execute(Protocol):
    """Runs one probe in the tool's worker; `keep=False`: a call of another tool (a round trip's
    partner), not one of the checked tool's runs."""

    def __call__(self, probe: Probe, keep: bool = True) -> ProbeRun: ...


@dataclass
class CheckOptions:
    deadline: float = 30.0
    startup_deadline: float | None = None  # None: the protocol's default (120 s, at least `deadline`)
    confirm: bool = True  # re-run violations in a fresh worker
    log_dir: Path | None = None
    progress: Callable[[str], None] | None = None
    startups: list[float] = field(default_factory=list)  # seconds per worker start, for bench/confirm.py
    derived: DerivedHooks | None = None  # called for contracts of derived clauses only


# --- evaluation ---------------------------------------------------------------------------------------


def _outcome(pred: Predicate, run: ProbeRun) -> Any:
    """The predicate's outcome on the run, from the run's batch when it has one (see `prefetch`)."""
    key = id(pred)
    if key not in run.outcomes:
        (run.outcomes[key],) = sandbox.evaluate_many(
            [pred], run.pre, run.post, run.args, run.result.get("value")
        )
    return run.outcomes[key]


def prefetch(preds: Sequence[Predicate], run: ProbeRun) -> None:
    """Evaluate every predicate not yet known on `run` in one sandbox round trip."""
    todo = [p for p in dict.fromkeys(preds) if id(p) not in run.outcomes]
    if todo and run.pre is not None:
        for p, outcome in zip(todo, sandbox.evaluate_many(todo, run.pre, run.post, run.args,
                                                          run.result.get("value"))):
            run.outcomes[id(p)] = outcome


def _eval(pred: Predicate, run: ProbeRun) -> bool | None:
    """True/False, or None when the predicate cannot be scored on this run (a type error, or a
    bound the sandbox enforced)."""
    outcome = _outcome(pred, run)
    return None if isinstance(outcome, PredicateTypeError) else bool(outcome)



def _violating_runs(clause: Clause, runs: Sequence[ProbeRun], type_errors: list[str]) -> Iterator[ProbeRun]:
    """The runs whose pre-state makes the precondition false: the calls the tool should refuse. A run
    the predicate cannot be evaluated on adds why to `type_errors`."""
    assert clause.predicate is not None
    for run in runs:
        if run.error is not None or run.pre is None:
            continue
        holds = _eval(clause.predicate, run)
        if holds is None:
            type_errors.append(_eval_detail(clause.predicate, run))
        elif not holds:
            yield run

def _eval_detail(pred: Predicate, run: ProbeRun) -> str:
    outcome = _outcome(pred, run)
    return str(outcome) if isinstance(outcome, PredicateTypeError) else ""


class Scorer:
    """Scores one contract's clauses over a set of runs. Pure: confirmation re-uses it on re-runs."""

    def __init__(self, contract: Contract, meta: dict[str, Any], volatile: Sequence[str] = ()) -> None:
        self.contract = contract
        self.pres = [c for c in contract.clauses_of("pre") if c.predicate is not None]
        self.effs = [c for c in contract.clauses_of("eff") if c.predicate is not None and not c.deferred
                     and c.round_trip is None]
        self.success = contract.success
        params = params_from_tool(meta)
        self.effective = effective_arguments(contract, params)
        self.predicates = [c.predicate for c in contract.clauses if c.predicate is not None]
        frame = contract.adapter.get("frame")
        if frame is None:
            frame = (
                [p.lstrip("/") for p in meta.get("frame") or []] if meta.get("frame") is not None else None
            )
        self.write_set = ["/" + str(p).strip("/") for p in frame] if frame is not None else None

    def annotate(self, run: ProbeRun) -> None:
        if run.error is not None or run.pre is None:
            run.succeeded = run.pres_hold = False
            return
        prefetch(self.predicates, run)  # all the contract's clauses on this run: one round trip
        ok = run.status == "ok"
        if ok and self.success is not None and self.success.predicate is not None:
            ok = _eval(self.success.predicate, run) is True
        run.succeeded = ok
        run.pres_hold = all(_eval(c.predicate, run) is True for c in self.pres if c.predicate is not None)

    def effect_outcomes(self, run: ProbeRun) -> dict[str, bool | None]:
        return {c.id: _eval(c.predicate, run) for c in self.effs if c.predicate is not None}

    def reads_effective(self, clause: Clause) -> bool:
        return bool(clause.predicate and set(clause.predicate.args_read) & set(self.effective))

    def effect_code(self, clause: Clause, run: ProbeRun) -> str:
        if self.reads_effective(clause):
            return "TL202"
        if self.is_phantom(run):
            return "TL204"
        return "TL203"

    def is_phantom(self, run: ProbeRun) -> bool:
        """Biconditional success reported, and every testable effect clause failed on this call."""
        if self.success is None or not self.success.biconditional or not run.succeeded:
            return False
        outcomes = {cid: v for cid, v in self.effect_outcomes(run).items() if v is not None}
        if not outcomes or any(outcomes.values()):
            return False
        # Effects that failed only because an argument was dropped are that argument's finding (TL202).
        return any(not self.reads_effective(c) for c in self.effs if c.id in outcomes)

    def outside_write_set(self, run: ProbeRun) -> list[dict[str, Any]]:
        if self.write_set is None:
            return []
        return [
            op for op in run.changes if not any(jsondiff.path_matches(g, op["path"]) for g in self.write_set)
        ]

    def rescore(self, row: ClauseResult, reruns: Sequence[ProbeRun]) -> ClauseResult | None:
        """The row's clause scored on re-runs of its witness call(s); None when the contract no
        longer has (or implies) that clause, which is no verdict at all."""
        return next((r for r in self.score(reruns) if r.clause_id == row.clause_id), None)

    def reproduces(self, row: ClauseResult, reruns: Sequence[ProbeRun]) -> bool:
        """Does a re-run of the row's witness call(s) give the same violation?"""
        fresh = self.rescore(row, reruns)
        # An order-dependent row keeps its TL205 though the clause alone reads as the effect's class.
        return fresh is not None and fresh.verdict == VIOLATES and (
            fresh.code == row.code or (bool(row.history) and row.code == "TL205"))

    # -- per clause ------------------------------------------------------------------------------

    def score(self, runs: Sequence[ProbeRun], plan: Plan | None = None) -> list[ClauseResult]:
        for run in runs:
            self.annotate(run)
        trips = list(runs)
        # A round trip spans several calls: only the clauses written for it read its states.
        runs = [r for r in runs if r.probe.kind != "round_trip"]
        legal_ok = [r for r in runs if r.succeeded and r.pres_hold]
        legal_raised = [r for r in runs if r.status == "tool_error" and r.pres_hold]
        rows: list[ClauseResult] = []
        for clause in self.contract.counted_clauses:
            if clause.kind == "pre" and clause.derived:
                rows.append(self.score_derived_pre(clause, runs, plan))
            elif clause.kind == "pre":
                rows.append(self.score_pre(clause, runs, plan))
            elif clause.round_trip is not None:
                rows.append(self.score_round_trip(clause, trips, plan))
            elif clause.kind in ("eff", "frame", "inv"):
                # A derived effect promises nothing about which calls succeed: a refusal is no failure.
                raised = legal_raised if clause.kind == "eff" and not clause.derived else ()
                rows.append(self.score_state_clause(clause, runs, legal_ok, raised))
            elif clause.kind == "arg":
                rows.append(self.score_arg(clause.arg or "", runs, clause))
            elif clause.kind == "success":
                rows.append(self.score_success(clause, runs, legal_ok))
        # Implied `arg.*` rows compare the state two calls leave; a reader leaves none, and its
        # arguments are checked through its reply by its effect clauses instead.
        for name in ([] if writes_nothing(self.contract) else self.effective):
            if name not in self.contract.effective_args:  # implied by an effect clause
                row = self.score_arg(name, runs, None)
                row.implicit = True
                rows.append(row)
        if self.write_set is not None:
            rows.append(self.score_write_set(legal_ok))
        rows.append(self.score_reset(trips))
        return rows

    def _untestable_reason(self, runs: Sequence[ProbeRun], what: str) -> tuple[str, str]:
        errors = [r for r in runs if r.error is not None]
        if runs and len(errors) == len(runs):
            return UNSUPPORTED, f"every probe failed in the host: {errors[0].error}"
        if errors:  # e.g. a state the host cannot turn into JSON after the call
            return (
                UNSUPPORTED,
                f"no {what} probe; the host failed on {len(errors)} of {len(runs)}: {errors[0].error}",
            )
        statuses = ", ".join(sorted({f"{r.probe.kind}: {r.status}" + (
            f" ({r.result.get('error_type')}: {str(r.result.get('error_message'))[:80]})"
            if r.result.get("error_type") else "") for r in runs}))
        return NO_STATE, f"no {what} probe (runs: {statuses or 'none'})"

    def score_pre(self, clause: Clause, runs: Sequence[ProbeRun], plan: Plan | None) -> ClauseResult:
        row = ClauseResult(clause.id, "pre", UNTESTABLE, clause=clause)
        if clause.predicate is None:
            row.reason, row.detail = TYPE_ERROR, "the clause has no predicate"
            return row
        type_errors: list[str] = []
        for run in _violating_runs(clause, runs, type_errors):
            row.scored += 1
            changed = bool(run.changes)
            accepted = run.status == "ok"
            wrong = wrong_error(clause, run)
            if accepted or changed or wrong:
                row.fail(run)
                if row.run is None:
                    row.run = run
                    what = "succeeded" if accepted else f"failed ({run.result.get('error_type')})"
                    if wrong:
                        what = f"refused with {wrong}; the contract declares {declared_error(clause)}"
                    row.detail = f"{what} and changed {len(run.changes)} path(s)" if changed else what
        if row.failing:
            row.verdict, row.code = VIOLATES, "TL201"
        elif row.scored:
            row.verdict = CONFORMS
        elif type_errors:
            row.reason, row.detail = TYPE_ERROR, type_errors[0]
        elif plan is not None and clause.id in plan.unreachable:
            row.reason, row.detail = NO_STATE, plan.unreachable[clause.id]
        else:
            row.reason, row.detail = self._untestable_reason(
                [r for r in runs if r.probe.clause == clause.id], "precondition-violating")
        return row

    def score_derived_pre(self, clause: Clause, runs: Sequence[ProbeRun], plan: Plan | None) -> ClauseResult:
        """A precondition derived from a commented-out guard: on a call that makes the guard's
        condition true, the tool still writing (or, when the guard raised, still succeeding) is an
        Unenforced Precondition (TL201). A refusal counts for the guard only when it is the guard's
        own (its exception and message, `refused_by_guard`): the call may have been refused by an
        unrelated check before it reached the guard's line, which tells nothing about the guard."""
        row = ClauseResult(clause.id, "pre", UNTESTABLE, clause=clause)
        if clause.predicate is None:
            row.reason, row.detail = TYPE_ERROR, "the clause has no predicate"
            return row
        type_errors: list[str] = []
        unattributed: list[ProbeRun] = []
        raises = declared_error(clause)
        for run in _violating_runs(clause, runs, type_errors):
            accepted, changed = run.status == "ok", bool(run.changes)
            if changed or (accepted and raises):
                row.scored += 1
                row.fail(run)
                if row.run is None:
                    row.run = run
                    what = "succeeded" if accepted else f"failed ({run.result.get('error_type')})"
                    row.detail = f"{what} and changed {len(run.changes)} path(s)" if changed else what
            elif refused_by_guard(clause, run):
                row.scored += 1
            elif crashed_past_guard(clause, run):
                # Watched, this very call got past the guard's line with its condition true and then
                # crashed: no check refused it (a KeyError where the guard raised ValueError).
                row.scored += 1
                row.fail(run)
                if row.run is None:
                    row.run = run
                    row.detail = (
                        f"passed the commented-out guard's line with its condition true, then crashed "
                        f"with {run.result.get('error_type')}, not the guard's {raises or 'refusal'}"
                    )
            else:
                unattributed.append(run)
        if row.failing:
            row.verdict, row.code = VIOLATES, "TL201"
        elif row.scored:
            row.verdict = CONFORMS
            row.detail = (
                f"refused by the guard's own error on {row.scored} call(s) that made its condition true"
            )
        elif type_errors:
            row.reason, row.detail = TYPE_ERROR, type_errors[0]
        elif unattributed:
            first = unattributed[0].result
            row.reason = NO_STATE
            row.detail = (
                f"{len(unattributed)} call(s) made the commented condition true, each refused before "
                f"the guard's line by another check ({first.get('error_type') or first.get('status')}: "
                f"{str(first.get('error_message') or '')[:80]})"
            )
        elif plan is not None and clause.id in plan.unreachable:
            row.reason, row.detail = NO_STATE, plan.unreachable[clause.id]
        else:
            row.reason, row.detail = NO_STATE, "no call made the commented-out guard's condition true"
        return row

    def score_round_trip(self, clause: Clause, runs: Sequence[ProbeRun], plan: Plan | None) -> ClauseResult:
        """An effect over a do-then-undo sequence: false on a round trip whose calls all succeeded is a
        Partial Effect (TL203): the undo left what the do wrote."""
        assert clause.round_trip is not None and clause.predicate is not None
        row = ClauseResult(clause.id, "eff", UNTESTABLE, clause=clause)
        trips = [r for r in runs if r.probe.kind == "round_trip" and r.error is None and r.status == "ok"
                 and r.result.get("round_trip_ok", True)]
        type_errors = []
        kept = 0
        for run in trips:
            holds = _eval(clause.predicate, run)
            if holds is None:
                type_errors.append(_eval_detail(clause.predicate, run))
                continue
            row.scored += 1
            if not holds and kept_references(run, clause.predicate.paths):
                kept += 1
            elif not holds:
                row.fail(run)
                row.run = row.run or run
        trip = f"{clause.round_trip.do} then {clause.round_trip.undo}"
        if row.failing:
            row.verdict, row.code = VIOLATES, "TL203"
            row.detail = f"false after {trip} on {row.failing} of {row.scored} round trip(s)"
        elif row.scored:
            row.verdict = CONFORMS
            if kept:
                row.detail = (
                    f"{clause.round_trip.undo} kept the record {clause.round_trip.do} made (a soft delete): "
                    f"what is left are references to a record that still exists"
                )
        elif type_errors:
            row.reason, row.detail = TYPE_ERROR, type_errors[0]
        else:
            row.reason = NO_STATE
            row.detail = (
                plan.unreachable.get(clause.id) if plan is not None else None
            ) or f"no completed {trip}"
        return row

    def score_state_clause(self, clause: Clause, runs: Sequence[ProbeRun], legal_ok: Sequence[ProbeRun],
                           legal_raised: Sequence[ProbeRun] = ()) -> ClauseResult:
        row = ClauseResult(clause.id, clause.kind, UNTESTABLE, clause=clause)
        if clause.predicate is None:
            row.reason, row.detail = TYPE_ERROR, "the clause has no predicate"
            return row
        type_errors = []
        for run in legal_ok:
            holds = _eval(clause.predicate, run)
            if holds is None:
                type_errors.append(_eval_detail(clause.predicate, run))
                continue
            if clause.kind == "inv" and holds is False:
                # An invariant already false before the call is not this call's doing.
                before = ProbeRun(run.probe, run.result, run.pre, run.pre)
                if _eval(clause.predicate, before) is not True:
                    continue
            row.scored += 1
            if holds:
                continue
            row.fail(run)
            if row.run is None:
                row.run = run
                if clause.kind == "eff":
                    row.code = self.effect_code(clause, run)
                else:
                    effects = [v for v in self.effect_outcomes(run).values() if v is not None]
                    row.code = "TL206" if all(effects) else "TL203"
        raised = [r for r in legal_raised if _eval(clause.predicate, r) is False]
        if raised:  # the effect did not happen on a call the contract says must succeed
            row.scored += len(raised)
            for r in raised:
                row.fail(r)
            if row.run is None:
                row.run, row.code = raised[0], "TL203"
        if row.failing:
            row.verdict = VIOLATES
            row.detail = f"false on {row.failing} of {row.scored} legal call(s)"
            if raised:
                first = raised[0].result
                row.detail += (f"; {len(raised)} of them raised {first.get('error_type')} "
                               f"({str(first.get('error_message'))[:80]}), an error the contract declares "
                               f"for no legal call")
        elif row.scored:
            row.verdict = CONFORMS
        elif type_errors:
            row.reason, row.detail = TYPE_ERROR, type_errors[0]
        else:
            row.reason, row.detail = self._untestable_reason(runs, "successful legal")
        return row

    def score_arg(self, name: str, runs: Sequence[ProbeRun], clause: Clause | None) -> ClauseResult:
        row = ClauseResult(clause.id if clause else f"arg.{name}", "arg", UNTESTABLE, clause=clause)
        if clause is not None and untestable_legality(clause):
            # The finding is that the falsy value is dropped; with that value not known to be legal, no
            # pair of calls can say the drop is a defect (an empty IBAN refused quietly is no defect).
            row.reason = LEGALITY_UNKNOWN
            row.detail = clause.provenance.note or f"no evidence that a falsy {name} is a legal input"
            return row
        candidates = [r for r in runs if r.succeeded and r.pres_hold
                      and (r.probe.varied == name or r.probe.kind == "happy")]
        by_value: dict[str, ProbeRun] = {}
        for r in candidates:
            by_value.setdefault(repr(r.args.get(name)), r)
        distinct = list(by_value.values())
        if len(distinct) < 2:
            row.reason, row.detail = self._untestable_reason(
                [r for r in runs if r.probe.varied == name or r.probe.kind == "happy"],
                f"pair of successful calls differing in {name}; need 2,")
            return row
        row.scored = len(distinct)
        seen: dict[str, ProbeRun] = {}
        for r in distinct:
            others = {k: v for k, v in r.args.items() if k != name}
            key = repr(sorted(others.items())) + r.outcome_key()
            if key in seen:
                first = seen[key]
                row.fail(r)
                if row.run is None:
                    # The witness is the call whose value was dropped: the one that changed nothing.
                    row.run, row.partner = (r, first) if not r.changes or first.changes else (first, r)
            else:
                seen[key] = r
        if row.failing:
            row.verdict, row.code = VIOLATES, "TL202"
            assert row.run is not None and row.partner is not None
            row.detail = (f"{name}={row.run.args.get(name)!r} and {name}={row.partner.args.get(name)!r} "
                          f"left identical post-states")
        else:
            row.verdict = CONFORMS
        return row

    def score_success(
        self, clause: Clause, runs: Sequence[ProbeRun], legal_ok: Sequence[ProbeRun]
    ) -> ClauseResult:
        row = ClauseResult(clause.id, "success", UNTESTABLE, clause=clause)
        if clause.predicate is None:
            row.reason, row.detail = TYPE_ERROR, "the clause has no predicate"
            return row
        ok_runs = [r for r in runs if r.status == "ok" and r.pre is not None]
        evaluable = [r for r in ok_runs if _eval(clause.predicate, r) is not None]
        row.scored = len(evaluable)
        if clause.biconditional:
            for run in legal_ok:
                if self.is_phantom(run):
                    row.fail(run)
                    if row.run is None:
                        row.run = run
        if row.failing:
            row.verdict, row.code = VIOLATES, "TL204"
            row.detail = f"reported success while every testable effect failed on {row.failing} call(s)"
        elif evaluable:
            row.verdict = CONFORMS
        elif ok_runs:
            row.reason, row.detail = TYPE_ERROR, _eval_detail(clause.predicate, ok_runs[0])
        else:
            row.reason, row.detail = self._untestable_reason(runs, "successful")
        return row

    def score_write_set(self, legal_ok: Sequence[ProbeRun]) -> ClauseResult:
        row = ClauseResult("frame.write_set", "frame", UNTESTABLE, implicit=True)
        for run in legal_ok:
            row.scored += 1
            outside = self.outside_write_set(run)
            if outside:
                row.fail(run)
                if row.run is None:
                    row.run = run
                    effects = [v for v in self.effect_outcomes(run).values() if v is not None]
                    row.code = "TL206" if all(effects) else "TL203"
                    row.detail = (f"changed {outside[0]['path']} outside the declared write-set "
                                  f"{', '.join(self.write_set or [])}")
        if row.failing:
            row.verdict = VIOLATES
        elif row.scored:
            row.verdict = CONFORMS
        else:
            row.reason, row.detail = NO_STATE, "no successful legal call to check the write-set on"
        return row

    def score_reset(self, runs: Sequence[ProbeRun]) -> ClauseResult:
        row = ClauseResult("reset", "reset", UNTESTABLE, implicit=True)
        for run in runs:
            if run.error is not None or not run.reset_hash:
                continue
            row.scored += 1
            if run.reset_hash != (run.pre_hash or run.pristine_hash):
                row.fail(run)
                if row.run is None:
                    row.run = run
        if row.failing:
            row.verdict, row.code = VIOLATES, "TL205"
            row.detail = "the state after reset differs from the state before the call"
        elif row.scored:
            row.verdict = CONFORMS
        else:
            row.reason, row.detail = NO_RESET, "no probe completed a reset"
        return row


# --- running ------------------------------------------------------------------------------------------


def run_probe(worker: Worker, probe: Probe, pristine: Any, pristine_hash: str, tags: dict[str, list[str]],
              deadline: float | None = None, want_view: bool = True) -> ProbeRun:
    if probe.before or probe.after:
        return run_sequence(worker, probe, pristine_hash, tags, deadline, want_view)
    run = ProbeRun(probe)
    try:
        resp = worker.request("probe", deadline=deadline, tool=probe.tool, args=probe.args, tags=tags,
                              want_view=want_view)
    except WorkerError as exc:
        run.error = exc
        return run
    run.result = resp.get("result") or {}
    run.diff = list(resp.get("diff") or [])
    run.pre_hash, run.post_hash = resp.get("pre_hash", ""), resp.get("post_hash", "")
    run.reset_hash = resp.get("reset_hash", "")
    run.pristine_hash = resp.get("pristine_hash") or pristine_hash
    run.pre = resp.get("pre", pristine)
    run.post = resp.get("post")
    run.notes = list(resp.get("notes") or [])
    return run


def run_sequence(worker: Worker, probe: Probe, pristine_hash: str, tags: dict[str, list[str]],
                 deadline: float | None = None, want_view: bool = True) -> ProbeRun:
    """A round trip: a fresh environment, its state, the calls before, the probe's own call, the calls
    after, the state, and a reset; the run's diff, pre and post enclose the whole sequence, its result
    is the probe's own call's (with `round_trip`: each call's tool and status)."""
    run = ProbeRun(probe)

    def call(tool: str, args: dict[str, Any], view: bool) -> dict[str, Any]:
        resp = worker.request("call", deadline=deadline, tool=tool, args=args, want_view=view)
        return {k: v for k, v in resp.items() if k not in ("id", "ok")}

    try:
        worker.request("reset", deadline=deadline)
        start = worker.request("snapshot", deadline=deadline)
        steps: list[dict[str, Any]] = []
        for c in probe.before:
            done = call(str(c.get("tool")), dict(c.get("args") or {}), False)
            steps.append({"tool": c.get("tool"), "status": done.get("status"), "value": done.get("value")})
        main = call(probe.tool, probe.args, want_view)
        steps.append({"tool": probe.tool, "status": main.get("status")})
        for c in probe.after:
            done = call(str(c.get("tool")), dict(c.get("args") or {}), False)
            steps.append({"tool": c.get("tool"), "status": done.get("status"), "value": done.get("value")})
        end = worker.request("snapshot", deadline=deadline)
        reset = worker.request("reset", deadline=deadline)
    except WorkerError as exc:
        run.error = exc
        return run
    main["round_trip"] = steps
    main["round_trip_ok"] = all(s.get("status") == "ok" for s in steps)
    run.result = main
    run.pre, run.post = start.get("state"), end.get("state")
    run.pre_hash, run.post_hash = start.get("state_hash", ""), end.get("state_hash", "")
    run.diff = jsondiff.diff(run.pre, run.post, tags, same=run.pre_hash == run.post_hash)
    run.reset_hash = reset.get("state_hash", "")
    run.pristine_hash = pristine_hash
    return run


# Where a clause set comes from: a contract the project configured (`contract_dirs`), one a benchmark
# profile bundles, or derived oracles made from the static findings (counted apart everywhere).
CONFIGURED, BUNDLED, DERIVED = "configured", "bundled", "derived"
SOURCES = (CONFIGURED, BUNDLED, DERIVED)


@dataclass
class HostSession:
    """One started host, as every tool checked in it sees it."""

    worker: Worker
    hello: dict[str, Any]
    tools: dict[str, dict[str, Any]]  # the host's tool metadata, by name
    pristine: Any
    pristine_hash: str
    tags: dict[str, list[str]]  # the host's volatile and derived path globs


class Settle(Protocol):
    """Settles a clause set's clauses with the live host: puts the contract on `report`, or an error."""

    def __call__(self, report: ToolReport, session: HostSession, options: CheckOptions) -> None: ...


@dataclass
class ClauseSet:
    """One tool's clauses from one source (`SOURCES`), the unit a host checks: a loaded contract
    (configured or bundled: the authored tiers), or derived oracles, whose contract is a skeleton (enough
    to choose the host) until `settle` resolves their clauses with the live host."""

    contract: Contract
    source: str = CONFIGURED
    settle: Settle | None = None

    @property
    def derived(self) -> bool:
        return self.source == DERIVED or self.contract.derived

    @classmethod
    def of(cls, item: Contract | ClauseSet) -> ClauseSet:
        return item if isinstance(item, ClauseSet) else cls(item)  # a kept derived contract stays derived


def check_group(sets: Sequence[Contract | ClauseSet], spec: WorkerSpec, options: CheckOptions
                ) -> list[ToolReport]:
    """Check the clause sets that share one host (one adapter variant), whatever their source: one warm
    worker for all of them. A contract is a clause set of configured (or kept derived) clauses."""
    units = [ClauseSet.of(s) for s in sets]
    reports = [ToolReport(u.contract.tool_name, u.contract, spec=spec, derived=u.derived, source=u.source)
               for u in units]
    log = options.log_dir / f"{_slug(spec)}.log" if options.log_dir else None
    worker = Worker(spec, log_path=log, deadline=options.deadline, startup_deadline=options.startup_deadline)
    try:
        try:
            hello = worker.start()
            pristine_resp = worker.request("pristine")
        except WorkerError as exc:
            _host_unusable(reports, spec, exc)
            return reports
        pristine, pristine_hash = pristine_resp["state"], pristine_resp["state_hash"]
        tools = {t["name"]: t for t in hello.get("tools", [])}
        tags = {
            "volatile": list(hello.get("volatile_paths") or []),
            "derived": list(hello.get("derived_paths") or []),
        }
        session = HostSession(worker, hello, tools, pristine, pristine_hash, tags)
        for unit, report in zip(units, reports):
            assert report.contract is not None
            if options.progress:
                options.progress(report.tool)
            start = time.perf_counter()
            report.hello = hello
            # A host may list a tool by the name the agent calls rather than its function's (a tool
            # class's `CancelOrder.invoke` is `cancel_order`): matched by qualified name then.
            meta = tools.get(report.tool) or next(
                (m for m in tools.values() if m.get("qualname") == report.contract.qualname), None)
            if meta is not None:
                report.tool = str(meta.get("name") or report.tool)
            if meta is None:
                report.error = missing_tool(report.tool, len(tools), spec.adapter, hello)
                report.rows = [ClauseResult(c.id, c.kind, UNTESTABLE, UNSUPPORTED, report.error, clause=c)
                               for c in report.contract.counted_clauses]
                continue
            report.meta = meta
            if unit.settle is not None:
                unit.settle(report, session, options)
                if report.error is not None:
                    continue
            _check_tool(report, worker, pristine, pristine_hash, tags, options)
            report.elapsed_s = time.perf_counter() - start
    finally:
        worker.close()
        options.startups.append(worker.startup_s)
    return finish_reports(reports, spec, options, tags)


def finish_reports(reports: list[ToolReport], spec: WorkerSpec, options: CheckOptions,
                   tags: dict[str, list[str]]) -> list[ToolReport]:
    """After a host's tools are checked: confirm the violations in fresh workers, then roll up."""
    if options.confirm and any(r.violations for r in reports):
        confirm_reports([r for r in reports if r.violations], spec, options, tags)
    for report in reports:
        report.verdict = rollup(report.rows)
    return reports


def _host_unusable(reports: Sequence[ToolReport], spec: WorkerSpec, exc: WorkerError) -> None:
    """Every clause of every tool of a host that would not start is UNTESTABLE, with one reason:
    `start_timeout` when it did not start (or build its first environment) within its deadline."""
    reason = START_TIMEOUT_REASON if exc.kind in (START_TIMEOUT, "timeout") else UNSUPPORTED
    detail = str(exc)
    if exc.kind == "timeout":
        detail = f"the benchmark did not build its first environment in time: {exc}"
    for r in reports:
        r.error = (
            f"{spec.adapter} host unusable: {reason + ': ' if reason == START_TIMEOUT_REASON else ''}{detail}"
        )
        r.rows = [ClauseResult(c.id, c.kind, UNTESTABLE, reason, detail, clause=c)
                  for c in r.contract.counted_clauses] if r.contract else []


class _ProbingAborted(Exception):
    """The worker hung or died on this tool; its remaining probes are skipped."""


def missing_tool(tool: str, listed: int, adapter: str, hello: dict[str, Any]) -> str:
    """Why a tool cannot be run: the host lists the tools of one variant (a suite); a tool that no
    variant registers (`registered_anywhere`, when the adapter says) is one no agent can call at all."""
    anywhere = hello.get("registered_anywhere")
    if isinstance(anywhere, list) and tool not in anywhere:
        return (f"tool {tool!r} is registered by no suite of {adapter} {hello.get('benchmark_version') or ''}"
                .rstrip() + ": no agent can call it, so it cannot be run")
    return (
        f"tool {tool!r} is not among the {listed} tools the {adapter} host lists for {hello.get('variant')}"
    )


def _check_tool(report: ToolReport, worker: Worker, pristine: Any, pristine_hash: str,
                tags: dict[str, list[str]], options: CheckOptions) -> None:
    assert report.contract is not None
    hooks = options.derived if report.derived else None
    scorer = Scorer(report.contract, report.meta)
    plan = make_plan(report.contract, report.meta, pristine)
    tags = tool_tags(report.contract, tags)

    def execute(probe: Probe, keep: bool = True) -> ProbeRun:
        probe.tool = probe.tool or report.tool
        # The agent-visible rendering is fetched only by the confirmation re-run, for the witness.
        run = run_probe(worker, probe, pristine, pristine_hash, tags, options.deadline, want_view=False)
        if keep:
            report.runs.append(run)
        if run.error is not None and run.error.kind in ("timeout", "died", "protocol", MEMORY_LIMIT):
            # The worker was killed and restarted; more calls to this tool would only repeat that.
            report.error = (
                f"{report.tool}: {run.error} (worker restarted; the tool's other probes were skipped)"
            )
            raise _ProbingAborted
        if run.reset_hash and run.pre_hash and run.reset_hash != run.pre_hash:
            # Module-level state survived the reset: later probes would start from a polluted state.
            worker.restart(WorkerEvent("reset_leak", f"{report.tool} leaked state past reset", report.tool))
        return run

    aborted = False
    try:
        _run_plan(report, plan, scorer, execute, pristine)
        if hooks is not None and report.plan is not None:
            hooks.after_plan(report, report.plan, scorer, execute, pristine, worker)
    except _ProbingAborted:
        aborted = True
    failed = next((r for r in report.runs if r.error is not None), None)
    if failed is not None and report.error is None:
        report.error = f"{report.tool}: {failed.error}"
    report.rows = scorer.score(report.runs, report.plan)
    if aborted:
        # Clauses whose probes were skipped after the worker hung or died were never tried: the
        # adapter could not serve them, which is not the same as a state nobody can observe.
        for row in report.rows:
            if row.verdict == UNTESTABLE and row.reason == NO_STATE:
                row.reason, row.detail = UNSUPPORTED, f"not probed: {report.error}"


def _run_plan(report: ToolReport, plan: Plan, scorer: Scorer, execute: Callable[[Probe], ProbeRun],
              pristine: Any) -> None:
    assert report.contract is not None
    report.plan = plan
    happy = execute(plan.probes[0])
    scorer.annotate(happy)
    if not (happy.succeeded and happy.pres_hold):
        # Search other records for a base the tool accepts before scoring effects as unreachable.
        for alt in plan.alternatives:
            trial = execute(Probe("search", alt))
            scorer.annotate(trial)
            if trial.succeeded and trial.pres_hold:
                trial.probe.kind = "happy"  # the new plan's happy path: already run
                plan = make_plan(report.contract, report.meta, pristine, happy=alt)
                break
    report.plan = plan
    for probe in plan.probes[1:]:
        execute(probe)


def tool_tags(contract: Contract, tags: dict[str, list[str]]) -> dict[str, list[str]]:
    """The host's volatile/derived globs plus the contract's own (`inbox.emails[*].timestamp` style)."""
    out = {k: list(v) for k, v in tags.items()}
    for kind in ("volatile", "derived"):
        for path in contract.adapter.get(kind) or []:
            out.setdefault(kind, []).append("/" + str(path).replace("[*]", ".*").replace(".", "/").strip("/"))
    return out


def confirm_reports(reports: Sequence[ToolReport], spec: WorkerSpec, options: CheckOptions,
                    tags: dict[str, list[str]]) -> None:
    """Re-run every violating probe in a fresh worker; a disagreeing re-run makes the row FLAKY,
    unless the tool's call history reproduces it (`_History`: then it is an order-dependent TL205).

    One fresh worker serves the group (start-up dominates); a re-run that leaks past reset restarts
    it, so every re-run starts from the benchmark's own pristine state.
    """
    log = options.log_dir / f"{_slug(spec)}.confirm.log" if options.log_dir else None
    worker = Worker(spec, log_path=log, deadline=options.deadline, startup_deadline=options.startup_deadline)
    try:
        try:
            worker.start()
            pristine_resp = worker.request("pristine")
        except WorkerError as exc:
            for report in reports:
                for row in report.violations:
                    row.verdict = FLAKY
                    row.rerun = {"agrees": False, "why": f"confirmation worker failed: {exc}"}
            return
        for report in reports:
            assert report.contract is not None
            scorer = Scorer(report.contract, report.meta)
            unreproduced: list[ClauseResult] = []
            for row in report.violations:
                originals = [r for r in (row.run, row.partner) if r is not None]
                reruns = []
                for r in originals:
                    again_run = run_probe(
                        worker,
                        r.probe,
                        pristine_resp["state"],
                        pristine_resp["state_hash"],
                        tool_tags(report.contract, tags),
                        options.deadline,
                    )
                    reruns.append(again_run)
                    if "agent_view" in again_run.result:
                        r.result.setdefault("agent_view", again_run.result["agent_view"])
                    if again_run.reset_hash and again_run.reset_hash != again_run.pre_hash:
                        worker.restart(
                            WorkerEvent("reset_leak", "re-run leaked state past reset", report.tool)
                        )
                again = scorer.reproduces(row, reruns)
                differing = sorted({op["path"] for a, b in zip(originals, reruns)
                                    for op in a.changes + b.changes
                                    if (op in a.changes) != (op in b.changes)})
                row.rerun = {"agrees": again, "runs": 2, "fresh_process": True, "differing_paths": differing}
                if not again:
                    unreproduced.append(row)
            history = _History(worker, report, tool_tags(report.contract, tags), options)
            for row in unreproduced:
                history.settle(row, scorer)
            if any(row.history for row in report.violations):
                # The tool carries state from call to call, so a row that reproduced in the shared
                # confirmation worker may have leaned on the re-runs before it: each is tried alone.
                for row in report.violations:
                    if all(row is not u for u in unreproduced) and not history.alone_or_unknown(row, scorer):
                        history.settle(row, scorer)
            if history.nondeterministic is not None:  # the next tool's re-runs start from a pristine process
                try:
                    worker.restart(WorkerEvent("history", "back to a pristine worker", report.tool))
                except WorkerError:
                    pass  # the next re-runs fail one by one, each with this worker's error
    finally:
        worker.close()
        options.startups.append(worker.startup_s)


class _History:
    """The calls the check made to one tool, re-run in order in a fresh worker up to a witness.

    A violation that a fresh worker reproduces only after its predecessors is order-dependent: a module
    global, cache or class attribute carried state from one call to the next, which is what a reset
    leak does to a benchmark's episodes. The replay is made once per tool, as far as the latest witness
    asks, and shared by its rows.
    """

    def __init__(self, worker: Worker, report: ToolReport, tags: dict[str, list[str]],
                 options: CheckOptions) -> None:
        self.worker, self.report, self.tags, self.options = worker, report, tags, options
        self.replayed: list[ProbeRun] = []
        self.failed = False
        self.nondeterministic: bool | None = None  # did the first witness reproduce alone?

    def settle(self, row: ClauseResult, scorer: Scorer) -> None:
        """A row the witness alone did not reproduce: order-dependent (TL205) or FLAKY."""
        assert row.rerun is not None
        try:
            earlier = self.reproduces(row, scorer)
        except WorkerError as exc:  # the replay's worker would not start or died: say so, keep going
            earlier, self.failed = 0, True
            row.detail += f"; the history replay could not run ({exc})"
        if earlier:
            # Alone the call conforms; after the calls that preceded it, it does not: the process
            # kept state across calls that the benchmark's reset does not clear.
            row.code = "TL205"
            row.rerun.update(agrees=True, history=earlier)
            row.detail += (f"; reproduced in a fresh worker only after the {earlier} call(s) that "
                           f"preceded it: state outside the environment survives reset")
        else:
            row.verdict = FLAKY
            row.rerun["agrees"] = False
            differing = row.rerun.get("differing_paths") or []
            row.detail += ("; a re-run in a fresh worker did not reproduce it"
                           + (f" (paths that differed: {', '.join(differing[:5])})" if differing else ""))

    def alone_or_unknown(self, row: ClauseResult, scorer: Scorer) -> bool:
        """`alone_reproduces`, but a worker that fails leaves the row as the shared re-run found it."""
        try:
            return self.alone_reproduces(row, scorer)
        except WorkerError:
            return True

    def alone_reproduces(self, row: ClauseResult, scorer: Scorer) -> bool:
        """The witness alone, in one more fresh process. (Used first to tell a flake from order
        dependence: a violation that comes back without its predecessors varies between processes.)"""
        self.replayed = []  # that process is gone; a later history starts again from the top
        self.worker.restart(WorkerEvent("history", "the witness alone, once more", self.report.tool))
        pristine = self.worker.request("pristine")
        again = [
            run_probe(
                self.worker,
                r.probe,
                pristine["state"],
                pristine["state_hash"],
                self.tags,
                self.options.deadline,
                want_view=False,
            )
            for r in (row.run, row.partner)
            if r is not None
        ]
        return scorer.reproduces(row, again)

    def _extend(self, upto: int) -> None:
        if not self.replayed:
            self.worker.restart(
                WorkerEvent("history", "replaying the calls before a witness", self.report.tool)
            )
        pristine = self.worker.request("pristine")
        for earlier in self.report.runs[len(self.replayed): upto + 1]:
            again = run_probe(
                self.worker,
                earlier.probe,
                pristine["state"],
                pristine["state_hash"],
                self.tags,
                self.options.deadline,
                want_view=False,
            )
            self.replayed.append(again)
            if again.error is not None:
                self.failed = True
                return
            if again.reset_hash and again.pre_hash and again.reset_hash != again.pre_hash:
                self.worker.restart(WorkerEvent("reset_leak", "history replay leaked state past reset",
                                                self.report.tool))

    def reproduces(self, row: ClauseResult, scorer: Scorer) -> int:
        """How many earlier calls the violation needed to reproduce (0: it did not)."""
        witnesses = [r for r in (row.run, row.partner) if r is not None]
        positions = [i for i, r in enumerate(self.report.runs) if any(r is w for w in witnesses)]
        if not positions or max(positions) == 0 or len(positions) != len(witnesses):
            return 0
        if self.nondeterministic is None:
            self.nondeterministic = self.alone_reproduces(row, scorer)
        if self.nondeterministic:
            return 0
        if len(self.replayed) <= max(positions) and not self.failed:
            self._extend(max(positions))
        if self.failed or len(self.replayed) <= max(positions):
            return 0
        if not scorer.reproduces(row, [self.replayed[i] for i in positions]):
            return 0
        row.history = self.report.runs[: max(positions) + 1]
        return max(positions)


def declared_error(clause: Clause) -> str | None:
    return clause.on_violation.raises if clause.on_violation else None


def wrong_error(clause: Clause, run: ProbeRun) -> str | None:
    """The exception a refused call raised when it is not the one `clause` declares, else None.

    A subclass of the declared type is the declared error; the host sends the raised type's bases
    when it knows them (`error_mro`), else only its name is compared.
    """
    declared = declared_error(clause)
    if run.status != "tool_error" or not declared or declared in ("Exception", "BaseException"):
        return None
    raised = str(run.result.get("error_type") or "")
    if not raised or raised == declared or declared in (run.result.get("error_mro") or ()):
        return None
    return raised


def kept_references(run: ProbeRun, paths: Iterable[str]) -> bool:
    """Every change a round trip left under `paths` is a reference (a key added to a list) to a record
    the sequence created and the undo kept, as a soft delete does (a cancelled reservation stays
    listed under its user): the references are consistent, the undo owes nothing there."""
    created: set[str] = set()
    for op in run.changes:
        if op.get("op") == "add" and isinstance(op.get("after"), dict):
            last = jsondiff.split_path(op["path"])[-1]
            keyed = re.fullmatch(r"\{[^=]+=(.*)\}", last)
            created.add(keyed.group(1) if keyed else last)
    fields = jsondiff.most_specific(paths)
    under = [op for op in run.changes if any(jsondiff.canonical_covers(p, op["path"]) for p in fields)]
    return bool(under) and bool(created) and all(
        op.get("op") == "add" and isinstance(op.get("after"), (str, int)) and str(op["after"]) in created
        for op in under)


# Errors the interpreter raises by itself on a missing key, attribute or value: the mark of a call
# that ran on past a missing check, not of a check refusing it.
CRASH_ERRORS = frozenset({"KeyError", "IndexError", "AttributeError", "TypeError", "ZeroDivisionError",
                          "UnboundLocalError", "StopIteration"})


def crashed_past_guard(clause: Clause, run: ProbeRun) -> bool:
    """A derived guard's violating call that a watch saw pass the guard's line with its condition
    true (`probe.past_guard`) and that then crashed with an interpreter error other than the
    guard's. A deliberate refusal further on (the guard moved, not removed) is not counted."""
    if run.status != "tool_error" or clause.id not in run.probe.past_guard:
        return False
    raised = str(run.result.get("error_type") or "")
    declared = clause.on_violation.raises if clause.on_violation is not None else None
    return raised in CRASH_ERRORS and raised != declared


def refused_by_guard(clause: Clause, run: ProbeRun) -> bool:
    """The call was refused the way the precondition's guard refuses: its exception (or a subclass)
    and, when the clause names one, its message; a guard that returned instead of raising answers
    with that message and changes nothing."""
    ov = clause.on_violation
    if ov is None:
        return False
    if ov.raises:
        if run.status != "tool_error":
            return False
        raised = str(run.result.get("error_type") or "")
        if raised != ov.raises and ov.raises not in (run.result.get("error_mro") or ()):
            return False
        return ov.message is None or ov.message in str(run.result.get("error_message") or "")
    if run.status != "ok" or run.changes or ov.message is None:
        return False
    reply = run.result.get("value")
    return ov.message in (reply if isinstance(reply, str) else jsondiff.canonical_json(reply))


def rollup(rows: Iterable[ClauseResult]) -> str:
    """VIOLATES if any clause violates; FLAKY if only flaky ones; UNTESTABLE if none was scored."""
    rows = list(rows)
    if any(r.verdict == VIOLATES for r in rows):
        return VIOLATES
    if any(r.verdict == FLAKY for r in rows):
        return FLAKY
    if not any(r.verdict == CONFORMS for r in rows if not r.implicit):
        return UNTESTABLE
    return CONFORMS


def _slug(spec: WorkerSpec) -> str:
    variant = "-".join(str(v) for v in spec.options.values() if isinstance(v, (str, int)))
    return f"{spec.adapter}-{variant}".replace("/", "_").replace(":", "_")[:80]
