"""The grader audit: change the run, keep the grader, see whether the verdict moves.

A score rests on the grader telling a right run from a wrong one. For every task of a benchmark whose
gold run passes, through the profile's validation driver (`toollint.profiles.api.BenchmarkDriver`:
its tasks' gold calls, and its own graders' verdicts), three wrong runs are graded:

1. **null run** (TL408): no calls and an empty final answer. When the gold run changes the state and
   the null run passes anyway, the grader is vacuous. When the gold run changes nothing either and the
   null run passes (TL411, a warning), the task cannot tell a do-nothing agent from a right one (a
   task whose right move is to refuse may mean it: the rule's documentation says how to tell).
2. **gold ablation** (TL409): the gold run with one state-changing call dropped. When it still passes
   and its final state differs from the gold run's, no grader checks that call's effect.
3. **argument mutation** (TL410): one argument (or one field of a structured argument) of one
   state-changing gold call replaced by another legal value harvested from the state as the tasks
   start (another recipient, amount, date, title) or from another task's gold calls of the same tool.
   When the call still succeeds, the final state differs and the run still passes, no grader checks
   that field. A replacement that leaves the final state as the gold run's is no grader's fault (the
   tool dropped the argument, a later call overwrote the value, or it made no difference): it is
   counted and its `tool.field` named, not reported. Where the
   driver gives the task's instruction, only fields whose gold value the instruction states are
   reported (a subject line or a date the task leaves to the agent is counted as a free field).

A dropped or changed call whose result a later gold call carries (the page read where the e-mail a
later invite uses is found) is counted as an information read, not reported: the replay keeps the
later call as it was, so it cannot show what an agent would have lost.

Which gold calls change the state is measured (the driver's `changed`, state digests before and after
each call) where the driver reports it, else read from toollint's writer analysis (the tools that
write state). A driver without `state_sample` skips mutation, and the report says why.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import queue
import re
import threading
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toollint.profiles.api import BenchmarkDriver

CODES = {"null": "TL408", "ablation": "TL409", "mutation": "TL410"}
DO_NOTHING = "TL411"  # the null run's other finding: the gold run changes nothing, the null run passes
# Every code each kind of wrong run can give (the null run gives TL408 or TL411), for a selection to pick.
KIND_CODES = {"null": (CODES["null"], DO_NOTHING), "ablation": (CODES["ablation"],),
              "mutation": (CODES["mutation"],)}


def kinds_selected(enabled: Collection[str]) -> tuple[str, ...]:
    """The kinds of wrong run a selection of codes needs: a kind runs when any code it gives is selected."""
    return tuple(kind for kind, codes in KIND_CODES.items() if any(code in enabled for code in codes))

WITNESS_KIND = "grader-audit"
MAX_FIELDS_PER_CALL = 16  # mutated leaves of one call (a booking's passengers x fields adds up)
MAX_LIST_ITEMS = 2  # of a list of records, the first items' fields are mutated
# Items per `grade` call: a driver's request has a deadline (a path runner's: 900 s), and a whole
# domain's mutations (hundreds of runs, each building several environments) would outlast it.
CHUNK = 80

Grade = Callable[[list[dict[str, Any]]], list[dict[str, Any]]]


@dataclass(frozen=True)
class Location:
    file: str
    line: int
    name: str = ""

    @staticmethod
    def of(data: Any) -> Location | None:
        if isinstance(data, dict) and data.get("file") and isinstance(data.get("line"), int):
            return Location(str(data["file"]), int(data["line"]), str(data.get("name") or ""))
        return None


@dataclass(frozen=True)
class Mutation:
    """One leaf of one call's arguments replaced: `field` is its path (`recipient`, `flights[0].date`)."""

    index: int
    field: str
    old: Any
    new: Any


@dataclass(frozen=True)
class AuditFinding:
    code: str
    kind: str  # null / ablation / mutation
    variant: str
    task: str
    message: str
    grader: Location | None
    source: Location | None
    run: tuple[dict[str, Any], ...]  # the wrong run's calls, as graded
    final: str  # its final answer: "empty" or "gold"
    gold: tuple[dict[str, Any], ...]
    call: str = ""  # the dropped or mutated call's tool
    index: int | None = None
    field: str = ""

    @property
    def argument(self) -> str:
        """The call's argument the mutated field belongs to, "" for a null run or an ablation."""
        return argument_of(self.field)


def argument_of(path: str) -> str:
    """The argument a field path of `leaves` belongs to (`flights` of `flights[0].date`): its paths
    start with it."""
    return re.split(r"[.\[]", path, maxsplit=1)[0]


@dataclass
class VariantAudit:
    """One suite's or domain's audit: its counts, findings, time, and what was skipped and why."""

    variant: str
    tasks: int = 0
    audited: int = 0  # tasks whose gold run passes its grader (the others cannot be audited)
    gold_fails: list[str] = field(default_factory=list)
    no_state_change: int = 0  # gold runs that change nothing: a passing null run is TL411's, not TL408's
    unjudged_null: int = 0  # of those, null runs that passed without a part that needs an LLM judge
    unjudged: int = 0  # graded without a part that needs an LLM judge
    ablations: int = 0
    mutations: int = 0
    dropped_fields: int = 0  # replacements that left the final state as the gold run's
    # their (tool, field)s, once each (TL103/TL202's kin: `toollint.validate.audit` joins them)
    dropped_calls: list[tuple[str, str]] = field(default_factory=list)
    free_fields: int = 0  # unchecked fields whose gold value the task's instruction does not state
    information_reads: int = 0  # dropped or changed calls whose result a later gold call carries
    findings: list[AuditFinding] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def dropped(self) -> list[str]:
        return [f"{tool}.{name}" for tool, name in self.dropped_calls]

    def count(self, kind: str) -> int:
        return sum(f.kind == kind for f in self.findings)

    @property
    def vacuous(self) -> int:
        return sum(f.code == CODES["null"] for f in self.findings)

    @property
    def do_nothing(self) -> int:
        return sum(f.code == DO_NOTHING for f in self.findings)

    @property
    def unchecked_effects(self) -> int:
        return self.count("ablation")

    @property
    def unchecked_fields(self) -> int:
        return self.count("mutation")


# --- harvesting legal values -------------------------------------------------------------------------

Scalar = str | int | float | bool


def harvest(state: Any) -> dict[str, set[Scalar]]:
    """Every scalar in a JSON state under the key that holds it (a list's items under the list's key)."""
    pool: dict[str, set[Scalar]] = {}

    def walk(value: Any, key: str) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, str(k))
        elif isinstance(value, list):
            for v in value:
                walk(v, key)
        elif isinstance(value, (str, int, float, bool)) and key:
            pool.setdefault(key, set()).add(value)

    walk(state, "")
    return pool


def leaves(value: Any, path: str = "") -> Iterator[tuple[str, str, Any]]:
    """(path, key, value) of each mutable leaf of a call's arguments: scalars, lists of scalars (as one
    leaf), and the fields of the first records of a list of records."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from leaves(v, f"{path}.{k}" if path else str(k))
    elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        for i, v in enumerate(value[:MAX_LIST_ITEMS]):
            yield from leaves(v, f"{path}[{i}]")
    elif isinstance(value, (str, int, float, bool)) or (
            isinstance(value, list) and all(isinstance(v, (str, int, float)) for v in value)):
        yield path, re.split(r"[.\[]", path.rsplit(".", 1)[-1])[0], value


def _shape(value: Scalar) -> str:
    return re.sub(r"[0-9]", "9", re.sub(r"[A-Za-z]", "a", str(value)))


def _kin(a: Any, b: Any) -> bool:
    """Same JSON kind: str with str, bool with bool, a number with a number."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool)
    return isinstance(a, str) == isinstance(b, str)


def replacement(old: Any, candidates: set[Scalar]) -> Any:
    """Another legal value for a leaf, or None: a bool's negation; else a harvested value of the same
    kind (for text, of the same shape where there is one: a date for a date, an IBAN for an IBAN);
    for a list of values, the list with its first item replaced by one not in it."""
    if isinstance(old, bool):
        return not old
    if isinstance(old, list):
        new = replacement(old[0], {c for c in candidates if c not in old}) if old else None
        return None if new is None else [new, *old[1:]]
    pool = sorted((c for c in candidates if _kin(c, old) and c != old), key=lambda c: (str(c), repr(c)))
    if isinstance(old, str):
        pool = [c for c in pool if str(c).strip()]
        same = [c for c in pool if _shape(c) == _shape(old)]
        pool = same or pool
    return pool[0] if pool else None


def _set(args: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    out = json.loads(json.dumps(args))
    parts = [p for p in re.split(r"\.|\[(\d+)\]", path) if p]
    target: Any = out
    for part in parts[:-1]:
        target = target[int(part)] if isinstance(target, list) else target[part]
    last = parts[-1]
    if isinstance(target, list):
        target[int(last)] = value
    else:
        target[last] = value
    return out  # type: ignore[no-any-return]


def mutations(calls: Sequence[dict[str, Any]], effects: Sequence[int], pool: dict[str, set[Scalar]],
              gold_pool: dict[tuple[str, str], set[Scalar]]) -> list[Mutation]:
    """One mutation per leaf of each state-changing call that has a legal replacement."""
    out = []
    for i in effects:
        call = calls[i]
        for path, key, old in list(leaves(call.get("args") or {}))[:MAX_FIELDS_PER_CALL]:
            singular = key.removesuffix("s")
            candidates = (pool.get(key, set()) | pool.get(singular, set()) | pool.get(key + "s", set())
                          | gold_pool.get((call["function"], path), set()))
            new = replacement(old, candidates)
            if new is not None and new != old:
                out.append(Mutation(i, path, old, new))
    return out


def stated(value: Any, instruction: Any) -> bool:
    """Whether the task's instruction states a gold value (True when there is no instruction to read):
    text as a case-insensitive substring, a number in its usual spellings, a list by any item."""
    if not isinstance(instruction, str):
        return True
    text = instruction.lower()
    if isinstance(value, list):
        return any(stated(v, instruction) for v in value)
    if isinstance(value, bool):
        return False
    if isinstance(value, (int, float)):
        spellings = {str(value), f"{value:g}", f"{value:,}", f"{value:.2f}", f"{value:,.2f}"}
        if float(value).is_integer():
            spellings.add(str(int(value)))
        return any(re.search(rf"(?<![\d.]){re.escape(s)}(?![\d])", text) for s in spellings)
    return isinstance(value, str) and len(value.strip()) > 0 and value.strip().lower() in text


def information_reads(calls: Sequence[dict[str, Any]], results: Any, instruction: Any) -> set[int]:
    """The gold calls whose result a later gold call carries: an argument value (text of 6 characters
    or more that the instruction does not state) found in what the call returned. In a replay the
    later call keeps that value, so dropping or redirecting the read loses nothing an agent would."""
    if not isinstance(results, list) or len(results) != len(calls):
        return set()
    found = set()
    for i, result in enumerate(results):
        text = result if isinstance(result, str) else json.dumps(result, default=str)
        for later in calls[i + 1:]:
            values = [v for _, _, leaf in leaves(later.get("args") or {})
                      for v in (leaf if isinstance(leaf, list) else [leaf])]
            told = isinstance(instruction, str)
            if any(isinstance(v, str) and len(v) >= 6 and v in text and not (told and stated(v, instruction))
                   for v in values):
                found.add(i)
                break
    return found


def gold_values(gold: Sequence[dict[str, Any]]) -> dict[tuple[str, str], set[Scalar]]:
    """(tool, field path) -> the values the variant's gold calls give it."""
    out: dict[tuple[str, str], set[Scalar]] = {}
    for row in gold:
        for call in row.get("calls") or []:
            for path, _, value in leaves(call.get("args") or {}):
                for v in value if isinstance(value, list) else [value]:
                    out.setdefault((call["function"], path), set()).add(v)
    return out


# --- the audit --------------------------------------------------------------------------------------


def _short(value: Any, limit: int = 40) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _effects(gold: dict[str, Any], answer: dict[str, Any], writers: frozenset[str] | None) -> list[int]:
    """The indices of the gold calls that change the state: measured, else the writer analysis's."""
    changed = answer.get("changed")
    calls = gold["calls"]
    if isinstance(changed, list) and len(changed) == len(calls):
        return [i for i, c in enumerate(changed) if c]
    return [i for i, c in enumerate(calls) if writers is not None and c["function"] in writers]


def _differs(answer: dict[str, Any], reference: dict[str, Any]) -> bool:
    """Whether a run's final state differs from the reference run's (assumed when not measured)."""
    a, b = answer.get("digest"), reference.get("digest")
    return a is None or b is None or a != b


def audit_variant(driver: BenchmarkDriver, python: str, variant: str, grade: Grade,
                  writers: Callable[[], frozenset[str]] | None = None,
                  tasks: Sequence[str] = (), kinds: Sequence[str] = ("null", "ablation", "mutation"),
                  progress: Callable[[str], None] | None = None) -> VariantAudit:
    """Audit one variant's tasks (all, or those named in `tasks`); `grade` answers a batch of items."""
    started = time.perf_counter()
    out = VariantAudit(variant)
    say = progress or (lambda _: None)
    grade = _chunked(grade)
    rows = [r for r in driver.ground_truth(python, variant) if not tasks or str(r["task"]) in tasks]
    missing = sorted(set(tasks) - {str(r["task"]) for r in rows})
    if missing:
        out.skipped.append(f"no such task here: {', '.join(missing)}")
    out.tasks = len(rows)
    for r in rows:
        if r.get("error"):
            out.gold_fails.append(f"{r['task']}: ground truth: {r['error']}")
    rows = [r for r in rows if not r.get("error")]
    # Per-call digests for the gold run (which calls change the state), the end state's for the wrong
    # runs (does it differ from the gold run's), none for the null run (its verdict is all it gives).
    # A wrong run's verdict is all that is read of it unless it passes (`verdict_only`: a driver may
    # answer a run that certainly fails without the rest of its grading).
    base: dict[str, Any] = {"trace": "final", "without_llm": True, "verdict_only": True}
    say(f"{variant}: null and gold runs of {len(rows)} task(s)")
    first = grade([{**base, "task": r["task"], "calls": c, "final": f, "trace": t, "verdict_only": not t}
                   for r in rows for c, f, t in (([], "empty", False), (r["calls"], "gold", True))])
    passing: list[tuple[dict[str, Any], dict[str, Any], list[int]]] = []
    reads: dict[str, set[int]] = {}
    writer_names: frozenset[str] | None = None
    for r, null, gold in zip(rows, first[0::2], first[1::2], strict=True):
        if gold.get("verdict") is not True:
            why = "; ".join(gold.get("errors") or []) or str(gold.get("why") or "the gold run fails")
            out.gold_fails.append(f"{r['task']}: {why[:200]}")
            continue
        out.audited += 1
        out.unjudged += bool(gold.get("unjudged"))
        if "changed" not in gold and writer_names is None and writers is not None:
            writer_names = writers()
        effects = _effects(r, gold, writer_names)
        start, end = gold.get("start_digest"), gold.get("digest")
        changes = bool(effects) if start is None or end is None else start != end
        if not changes:
            out.no_state_change += 1
            if "null" in kinds and null.get("verdict") is True:
                if null.get("unjudged"):
                    out.unjudged_null += 1  # its LLM-judged part might fail it: not reported
                else:
                    out.findings.append(_do_nothing(variant, r))
            continue
        if "null" in kinds and null.get("verdict") is True:
            out.findings.append(_finding("null", variant, r, (), "empty",
                                         "the grader passes a run that does nothing, while the gold run "
                                         f"changes the state ({len(effects)} state-changing call(s))"))
            continue  # every weaker run passes too: nothing more to learn from this task
        passing.append((r, gold, effects))
        reads[str(r["task"])] = information_reads(r["calls"], gold.get("results"), r.get("instruction"))
    items: list[dict[str, Any]] = []
    plans: list[tuple[dict[str, Any], dict[str, Any], str, int, Mutation | None]] = []
    if "ablation" in kinds:
        for r, gold, effects in passing:
            for i in effects:
                calls = [c for j, c in enumerate(r["calls"]) if j != i]
                items.append({**base, "task": r["task"], "calls": calls, "final": "gold"})
                plans.append((r, gold, "ablation", i, None))
        out.ablations = len(items)
    if "mutation" in kinds:
        sample = getattr(driver, "state_sample", None)
        if sample is None:
            out.skipped.append(f"argument mutation: {type(driver).__name__} has no state_sample "
                               "(no state to harvest legal values from)")
        elif passing:
            pool = harvest(sample(python, variant))
            golds = gold_values(rows)
            for r, gold, effects in passing:
                for change in mutations(r["calls"], effects, pool, golds):
                    calls = [dict(c) for c in r["calls"]]
                    args = _set(calls[change.index]["args"], change.field, change.new)
                    calls[change.index] = {**calls[change.index], "args": args}
                    items.append({**base, "task": r["task"], "calls": calls, "final": "gold"})
                    plans.append((r, gold, "mutation", change.index, change))
            out.mutations = len(items) - out.ablations
    if items:
        say(f"{variant}: {out.ablations} ablation(s), {out.mutations} mutation(s)")
        for (r, gold, kind, i, m), item, answer in zip(plans, items, grade(items), strict=True):
            if answer.get("verdict") is not True:
                continue
            if not _differs(answer, gold):
                if m is not None:
                    out.dropped_fields += 1
                    name = (str(r["calls"][i]["function"]), m.field)
                    out.dropped_calls += [name] if name not in out.dropped_calls else []
                continue
            if kind == "mutation" and len(answer.get("errors") or []) > len(gold.get("errors") or []):
                continue  # the replacement made the call fail: not a run an agent would call right
            if i in reads[str(r["task"])]:
                out.information_reads += 1
                continue
            if m is not None and not stated(m.old, r.get("instruction")):
                out.free_fields += 1
                continue
            call = r["calls"][i]["function"]
            if m is None:
                message = (f"the grader passes the gold run without its call {i + 1} `{call}`: "
                           "no grader checks that call's effect")
            else:
                message = (f"the grader passes the gold run with call {i + 1} `{call}`'s `{m.field}` changed "
                           f"from {_short(m.old)} to {_short(m.new)}: no grader checks that field")
            out.findings.append(_finding(kind, variant, r, item["calls"], "gold", message, call, i,
                                         m.field if m else ""))
    out.seconds = time.perf_counter() - started
    return out


def _do_nothing(variant: str, row: dict[str, Any]) -> AuditFinding:
    unchecked = "; the outputs the task lists are not checked" if row.get("outputs") else ""
    return _finding("null", variant, row, (), "empty",
                    "the grader passes a run that does nothing (no calls, an empty answer), and the gold "
                    f"run changes nothing either{unchecked}: the task cannot tell a do-nothing agent from a "
                    "right one (unless refusing is the task)", code=DO_NOTHING)


def _chunked(grade: Grade) -> Grade:
    """`grade` in chunks of `CHUNK` items, as many at once as the grader has interpreters (`Pool`)."""
    workers = grade.workers if isinstance(grade, Pool) else 1

    def chunked(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        chunks = [items[start:start + CHUNK] for start in range(0, len(items), CHUNK)]
        if isinstance(grade, Pool) and workers > 1 and len(chunks) > 1:
            grade.start_up_to(len(chunks))
            with ThreadPoolExecutor(max_workers=workers) as threads:
                return [a for answers in threads.map(grade, chunks) for a in answers]
        return [a for chunk in chunks for a in grade(chunk)]

    return chunked


def _finding(kind: str, variant: str, row: dict[str, Any], run: Sequence[dict[str, Any]], final: str,
             message: str, call: str = "", index: int | None = None, field_: str = "",
             code: str = "") -> AuditFinding:
    return AuditFinding(code or CODES[kind], kind, variant, str(row["task"]), message,
                        Location.of(row.get("grader")), Location.of(row.get("source")), tuple(run), final,
                        tuple(row["calls"]), call, index, field_)


def batch_grader(driver: BenchmarkDriver, python: str, variant: str) -> Grade:
    """`grade` of a batch through the driver's own `grade` (one interpreter per batch)."""
    return lambda items: driver.grade(python, variant, items)


class Pool:
    """A `Grade` over up to `workers` warm interpreters of a driver's path runner; batches graded at
    once go to different ones. Interpreters are started only by the thread that made the pool (a host
    dies with the thread that started it: PR_SET_PDEATHSIG), when a batch finds none idle or before
    several batches are graded at once (`start_up_to`); a small audit starts one."""

    def __init__(self, stack: contextlib.ExitStack, start: Callable[[], Any], variant: str,
                 workers: int) -> None:
        self.stack, self.start, self.variant, self.workers = stack, start, variant, workers
        self.idle: queue.Queue[Any] = queue.Queue()
        self.started = 0
        self.owner = threading.current_thread()

    def start_up_to(self, wanted: int) -> None:
        while self.started < min(wanted, self.workers) and threading.current_thread() is self.owner:
            self.idle.put(self.stack.enter_context(self.start()))
            self.started += 1

    def _take(self) -> Any:
        if self.idle.empty() and threading.current_thread() is self.owner:
            self.start_up_to(self.started + 1)
        if self.started == 0:
            raise RuntimeError("a grader pool's first interpreter is started by the thread that made it")
        return self.idle.get()

    def __call__(self, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        run = self._take()
        try:
            answers = run(self.variant, items)
        finally:
            self.idle.put(run)
        return [{**a, "verdict": None if a.get("reward") is None else a["reward"] >= 1.0} for a in answers]


def default_workers() -> int:
    """Interpreters a whole-variant audit grades with: one per CPU, at most two (each holds the
    benchmark's state; one benchmark's is 7 MB of JSON as Python objects)."""
    return max(1, min(2, os.cpu_count() or 1))


@contextlib.contextmanager
def warm_grader(driver: BenchmarkDriver, python: str, variant: str,
                workers: int | None = None) -> Iterator[Grade]:
    """A `Grade` for every batch of a variant: through the driver's warm path runner when it has one
    (`PathDriver`: up to `workers` interpreters, default `default_workers()`, kept for all batches; a
    reward of 1 passes), else `batch_grader`."""
    runner = getattr(driver, "path_runner", None)
    if runner is None:
        yield batch_grader(driver, python, variant)
        return
    with contextlib.ExitStack() as stack:
        session = getattr(driver, "session", None)  # one interpreter for its questions and a runner
        if session is not None:
            stack.enter_context(session(python))
        yield Pool(stack, lambda: runner(python), variant, workers or default_workers())


# --- witnesses --------------------------------------------------------------------------------------


def witness_json(found: AuditFinding, profile: str, python: str, package: Path) -> dict[str, Any]:
    """A finding as a witness `toollint replay` re-grades: the wrong run and the gold run."""
    data: dict[str, Any] = {
        "kind": WITNESS_KIND,
        "format": 1,
        "code": found.code,
        "message": found.message,
        "worker": {"profile": profile, "python": python, "package": str(package)},
        "variant": found.variant,
        "task": found.task,
        "run": {"calls": list(found.run), "final": found.final},
        "gold": {"calls": list(found.gold), "final": "gold"},
    }
    data["digest"] = witness_digest(data)
    return data


def witness_digest(data: dict[str, Any]) -> str:
    """`sha256:<hex>` of what a grader witness replays (code, variant, task, both runs): the host seal
    covers it, so a witness edited after toollint wrote it is no longer trusted."""
    covered = {k: data.get(k) for k in ("code", "variant", "task", "run", "gold")}
    text = json.dumps(covered, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class Replayed:
    code: int  # 1: the grader still passes the wrong run; 0: it no longer does; 2: not replayable
    sentence: str


def replay_witness(data: dict[str, Any], driver: BenchmarkDriver, python: str) -> Replayed:
    """Re-grade a grader witness's wrong run beside its gold run."""
    if data.get("digest") != witness_digest(data):
        return Replayed(2, "NOT REPLAYED: the grader witness was edited after toollint wrote it")
    try:
        run, gold = data["run"], data["gold"]
        items = [{"task": data["task"], "calls": list(x["calls"]), "final": x["final"], "trace": True,
                  "without_llm": True} for x in (gold, run)]
        variant, code = str(data["variant"]), str(data["code"])
    except (KeyError, TypeError) as exc:
        return Replayed(2, f"NOT REPLAYED: the grader witness lacks {exc}")
    answered = driver.grade(python, variant, items)
    g, w = answered[0], answered[1]
    task = f"{variant} task {data['task']}"
    if g.get("verdict") is not True:
        return Replayed(2, f"NOT REPLAYED: {task}'s gold run no longer passes its grader")
    wrong = w.get("verdict") is True and _differs(w, g)
    if code == CODES["null"]:
        wrong = w.get("verdict") is True and g.get("start_digest") != g.get("digest")
    if code == DO_NOTHING:  # the null run passes still (the gold run may write now: TL408's case too)
        wrong = w.get("verdict") is True
    if wrong:
        return Replayed(1, f"STILL PASSES ({code}): {task}: {data.get('message', '')}")
    return Replayed(0, f"FIXED ({code}): {task}'s grader now fails the wrong run")
