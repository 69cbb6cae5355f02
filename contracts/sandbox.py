"""Predicates under hard limits: evaluated in worker processes whose memory and time are capped from
outside the evaluated code.

The grammar and cost model of `predicate.py` bound the work a predicate can ask for, but a model
can have gaps, and a gap would run in toollint's own process. So the checker, the probe planner and
replay evaluate here: in a small pool of worker processes of toollint's own interpreter
(`python -m toollint.contracts.sandbox`), each of which

- caps its address space at its start-up size plus `memory` (RLIMIT_AS, default MEMORY_BUDGET): an
  allocation past it fails with MemoryError inside the worker, reported as PredicateBudgetError;
- caps its CPU time per request (RLIMIT_CPU: the kernel kills it with SIGXCPU), and
- is killed by toollint when one clause has not answered within `seconds` (default WALL_SECONDS)
  of wall-clock time.

Neither needs the evaluated code's cooperation: a C-level `10 ** (3 * 10**7)` is stopped as surely
as a Python loop. A killed worker is replaced for the next clause; the clause reads as
PredicateBudgetError (UNTESTABLE in the checker), the others of its batch are evaluated afresh.

Cost: a request is one pipe round trip per batch of clauses. Snapshots are sent once per worker and
named by a token afterwards, keyed by the identity of the object the caller passes (a snapshot is
never mutated once taken; the pool keeps a reference to each object it sent, so an identity cannot
be reused while its token lives). `bench/confirm.py --sandbox-overhead` prints what it costs.

`cost_problem(source)` is the load-time half: a predicate's constant sub-expressions (no `pre`,
`post`, `args` or `result` in them) are evaluated here once, so `round(1, -3 * 10**7) == 0` is
refused when the contract loads (TL302 "too costly") instead of on every probe.
"""

from __future__ import annotations

import ast
import atexit
import json
import marshal
import os
import selectors
import subprocess
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from toollint.contracts.host.predicate import (
    HELPERS,
    ForbiddenPredicate,
    Predicate,
    PredicateBudgetError,
    PredicateTypeError,
    compile_predicate,
)

MEMORY_BUDGET = 256 << 20  # address space a worker may add to its start-up size
WALL_SECONDS = 4.0  # per clause, then the worker is killed (the cost model's own clock stops at 3 s)
CPU_SECONDS = 30  # CPU per request (a batch), enforced by the kernel as a backstop to the wall clock
STATES_KEPT = 8  # snapshots a worker keeps by token (the pristine state, the current run's, ...)
MAX_WORKERS = 4
SLOW_SECONDS = 0.5  # an evaluation this long is slow: charged to the run's predicate budget (RunBudget)
STOPS_ALLOWED = 2  # a clause stopped by a time bound this often is not evaluated again in the run


class RunBudget:
    """The per-run predicate budget, beside the per-clause bound.

    The per-clause bound stops one evaluation; a clause just under it would still cost that much on
    every probe (three 3.2 s clauses took a run from 5 s to 56 s). So an evaluation of `SLOW_SECONDS`
    or more (timed in the worker: the evaluation, not the state's transfer) marks its clause slow and
    is charged to the run's `seconds`; once they are spent, a slow clause is no longer evaluated, and
    an evaluation not yet known slow gets only `SLOW_SECONDS`. A clause stopped by a time bound twice
    is not evaluated again. Either way it reads as PredicateBudgetError (UNTESTABLE) for the rest of
    the run, saying why; fast clauses are never charged. Shared by the run's threads."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.spent = 0.0
        self.slow: set[str] = set()
        self.stops: dict[str, int] = {}
        self._lock = threading.Lock()

    def refusal(self, source: str) -> PredicateBudgetError | None:
        with self._lock:
            if self.stops.get(source, 0) >= STOPS_ALLOWED:
                return PredicateBudgetError(f"not evaluated: this clause was stopped by a time bound "
                                            f"{STOPS_ALLOWED} times in this run")
            if source in self.slow and self.spent >= self.seconds:
                return PredicateBudgetError(
                    f"not evaluated: the run's predicate budget ({self.seconds:g} s for "
                    f"clauses slower than {SLOW_SECONDS:g} s) is spent"
                )
        return None

    def deadline(self, per_clause: float) -> float:
        with self._lock:
            left = self.seconds - self.spent
        return max(SLOW_SECONDS, min(per_clause, left))

    def charge(self, source: str, seconds: float, stopped: bool) -> None:
        with self._lock:
            if seconds >= SLOW_SECONDS:
                self.slow.add(source)
                self.spent += seconds
                if stopped:
                    self.stops[source] = self.stops.get(source, 0) + 1


class _Worker:
    """One evaluator process, used by one thread at a time."""

    def __init__(self, memory: int, seconds: float, python: str) -> None:
        self.seconds = seconds
        self.proc = subprocess.Popen(
            [python, "-m", "toollint.contracts.sandbox", "--memory", str(memory), "--cpu", str(CPU_SECONDS)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        )
        self.buf = bytearray()
        self.sent: OrderedDict[int, tuple[int, Any]] = OrderedDict()  # id(obj) -> (token, obj)
        self.compiled: dict[str, int] = {}  # predicate source -> id in the worker
        self.next_token = 0
        self.tainted = False  # a budget error happened: retire it rather than trust its heap
        self.timed_out = False
        ready = self._line(max(seconds, 30.0))
        if ready is None or not ready.get("ready"):
            self.kill()
            raise OSError("the predicate sandbox did not start")

    @property
    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass

    def _ref(self, value: Any, states: dict[int, Any], forget: list[int]) -> list[Any]:
        """How a snapshot travels: inline when small, else by token, sent once per worker. Small is
        a few scalars: a snapshot of two databases has two keys and megabytes under them."""
        if not isinstance(value, (dict, list)) or (len(value) < 4 and not any(
                isinstance(v, (dict, list)) for v in (value.values() if isinstance(value, dict) else value))):
            return ["v", value]
        key = id(value)
        held = self.sent.get(key)
        if held is not None and held[1] is value:
            self.sent.move_to_end(key)
            return ["s", held[0]]
        self.next_token += 1
        token = self.next_token
        self.sent[key] = (token, value)
        states[token] = value
        while len(self.sent) > STATES_KEPT:
            _, (old, _obj) = self.sent.popitem(last=False)
            forget.append(old)
        return ["s", token]

    def run(self, predicates: Sequence[Predicate], pre: Any, post: Any, args: Any,
            result: Any, budget: RunBudget | None = None) -> list[Any]:
        """Outcomes in order; stops at the first clause the worker did not survive, leaving the rest
        out of the list (the caller evaluates them in a fresh worker)."""
        sources: dict[int, str] = {}
        for p in predicates:
            if p.source not in self.compiled:
                self.compiled[p.source] = len(self.compiled) + 1
                sources[self.compiled[p.source]] = p.source
        states: dict[int, Any] = {}
        forget: list[int] = []
        # `args` is a fresh dict per call and small: always inline, so it never evicts a snapshot.
        refs = [self._ref(pre, states, forget), self._ref(post, states, forget), ["v", args],
                self._ref(result, states, forget)]
        items = [self.compiled[p.source] for p in predicates]
        try:
            payload = marshal.dumps({"preds": sources, "states": states, "forget": forget, "items": items,
                                     "refs": refs})
        except ValueError as exc:  # not JSON data (marshal takes all of JSON's types)
            self.tainted = True  # its idea of what the worker holds is now wrong: retire it
            return [PredicateTypeError(f"the state is not JSON data: {exc}") for _ in predicates]
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write(len(payload).to_bytes(8, "big") + len(items).to_bytes(4, "big") + payload)
            self.proc.stdin.flush()
        except OSError:
            return []
        out: list[Any] = []
        began = time.monotonic()
        loaded = self._line(self.seconds)  # the states' transfer, on the per-clause clock as before
        if loaded is None:
            return [self._stopped(time.monotonic() - began, self.seconds)]
        pending = None if loaded.get("loaded") else loaded  # a worker that could not load answers at once
        for p in predicates:
            began = time.monotonic()
            seconds = budget.deadline(self.seconds) if budget is not None else self.seconds
            reply, pending = (pending, None) if pending is not None else (self._line(seconds), None)
            if reply is None:  # killed at the deadline, or died on its own
                out.append(self._stopped(time.monotonic() - began, seconds))
                if budget is not None:
                    budget.charge(p.source, time.monotonic() - began, stopped=self.timed_out)
                return out
            if reply.get("ok"):
                out.append(bool(reply["value"]))
            elif reply.get("kind") == "budget":
                self.tainted = True
                out.append(PredicateBudgetError(str(reply.get("message"))))
            else:
                out.append(PredicateTypeError(str(reply.get("message"))))
            if budget is not None:
                took = reply.get("s")
                budget.charge(p.source, float(took) if isinstance(took, (int, float)) else 0.0,
                              stopped=isinstance(out[-1], PredicateBudgetError))
        return out

    def _stopped(self, waited: float, seconds: float) -> PredicateBudgetError:
        self.kill()
        code = self.proc.returncode
        if self.timed_out:
            bound = f"the sandbox's {self.seconds:g} s bound" if seconds >= self.seconds else \
                f"what was left of the run's predicate budget, {seconds:.1f} s"
            return PredicateBudgetError(f"evaluation stopped after {waited:.1f} s ({bound})")
        if code == -24:  # SIGXCPU
            return PredicateBudgetError("evaluation stopped at the sandbox's CPU bound")
        return PredicateBudgetError(f"evaluation stopped: the sandbox worker died (exit status {code})")

    def _line(self, deadline: float) -> dict[str, Any] | None:
        """The next JSON line from the worker within `deadline` seconds; None (worker killed) else."""
        assert self.proc.stdout is not None
        end = time.monotonic() + deadline
        scanned = 0
        with selectors.DefaultSelector() as sel:
            sel.register(self.proc.stdout, selectors.EVENT_READ)
            while True:
                newline = self.buf.find(b"\n", scanned)
                if newline >= 0:
                    break
                scanned = len(self.buf)
                left = end - time.monotonic()
                if left <= 0 or not sel.select(left):
                    self.timed_out = True
                    self.kill()
                    return None
                chunk = os.read(self.proc.stdout.fileno(), 1 << 16)
                if not chunk:
                    return None
                self.buf += chunk
        line = bytes(self.buf[:newline])
        del self.buf[: newline + 1]
        try:
            data = json.loads(line)
        except ValueError:
            return None
        return data if isinstance(data, dict) else None


class Sandbox:
    """A pool of evaluator workers, shared by threads; workers start on demand."""

    def __init__(
        self,
        *,
        memory: int = MEMORY_BUDGET,
        seconds: float = WALL_SECONDS,
        workers: int | None = None,
        python: str | None = None,
        run_seconds: float | None = None,
    ) -> None:
        self.memory = memory
        self.seconds = seconds
        self.python = python or sys.executable  # toollint's own interpreter: the worker imports toollint
        self.max_workers = workers or max(1, min(MAX_WORKERS, os.cpu_count() or 1))
        self._idle: list[_Worker] = []
        self._count = 0
        self._ready = threading.Condition()
        self.requests = 0  # round trips made, for bench/confirm.py
        self.evaluations = 0
        self.started = 0
        self.budget = RunBudget(run_seconds if run_seconds is not None else seconds)

    def new_run(self, seconds: float | None = None) -> None:
        """Start a run's predicate budget afresh (`RunBudget`; default: the per-clause bound)."""
        self.budget = RunBudget(seconds if seconds is not None else self.seconds)

    def _acquire(self) -> _Worker:
        with self._ready:
            while True:
                while self._idle:
                    worker = self._idle.pop()
                    if worker.alive:
                        return worker
                    self._count -= 1
                if self._count < self.max_workers:
                    self._count += 1
                    break
                self._ready.wait()
        try:
            worker = _Worker(self.memory, self.seconds, self.python)
        except OSError:
            with self._ready:
                self._count -= 1
                self._ready.notify()
            raise
        self.started += 1
        return worker

    def _release(self, worker: _Worker) -> None:
        with self._ready:
            if worker.alive and not worker.tainted:
                self._idle.append(worker)
            else:
                worker.kill()
                self._count -= 1
            self._ready.notify()

    def evaluate_many(self, predicates: Sequence[Predicate], pre: Any, post: Any, args: Any,
                      result: Any) -> list[Any]:
        """Each predicate on the same data: True/False, or the PredicateTypeError (or
        PredicateBudgetError) it raised. One round trip per batch, unless a clause kills its worker."""
        budget = self.budget
        refused = {i: why for i, p in enumerate(predicates) if (why := budget.refusal(p.source)) is not None}
        if refused:  # clauses the run's budget no longer evaluates: the others in one batch, as usual
            rest = iter(self.evaluate_many([p for i, p in enumerate(predicates) if i not in refused],
                                           pre, post, args, result))
            return [refused[i] if i in refused else next(rest) for i in range(len(predicates))]
        out: list[Any] = []
        todo = list(predicates)
        args = dict(args or {})
        while todo:
            try:
                worker = self._acquire()
            except OSError as exc:  # no evaluation without the limits: every clause says why
                failure = PredicateTypeError(f"the predicate sandbox could not start ({exc})")
                out.extend(failure for _ in todo)
                break
            try:
                self.requests += 1
                got = worker.run(todo, pre, post, args, result, budget)
            finally:
                self._release(worker)
            if not got:  # the worker died before answering anything: one clause at a time, afresh
                got = [PredicateBudgetError("evaluation stopped: the sandbox worker could not be reached")] \
                    if len(todo) == 1 else self.evaluate_many(todo[:1], pre, post, args, result)
            out.extend(got)
            todo = todo[len(got):]
        self.evaluations += len(out)
        return out

    def evaluate(self, predicate: Predicate, pre: Any, post: Any, args: Any, result: Any) -> bool:
        """`predicate.evaluate` under the hard limits: True/False, or raises PredicateTypeError."""
        (outcome,) = self.evaluate_many([predicate], pre, post, args, result)
        if isinstance(outcome, PredicateTypeError):
            raise outcome
        return bool(outcome)

    def close(self) -> None:
        with self._ready:
            idle, self._idle = self._idle, []
            self._count -= len(idle)
        for worker in idle:
            worker.kill()


_DEFAULT: list[Sandbox] = []
_DEFAULT_LOCK = threading.Lock()


def default_sandbox() -> Sandbox:
    with _DEFAULT_LOCK:
        if not _DEFAULT:
            _DEFAULT.append(Sandbox())
        return _DEFAULT[0]


@atexit.register
def _close_default() -> None:
    for sandbox in _DEFAULT:
        sandbox.close()


def evaluate(predicate: Predicate, pre: Any, post: Any, args: Any, result: Any) -> bool:
    """`predicate` on one snapshot pair under the sandbox's hard limits (raises PredicateTypeError)."""
    return default_sandbox().evaluate(predicate, pre, post, args, result)


def new_run(seconds: float | None = None) -> None:
    """A fresh per-run predicate budget for the default sandbox (`RunBudget`)."""
    default_sandbox().new_run(seconds)


def evaluate_many(predicates: Sequence[Predicate], pre: Any, post: Any, args: Any, result: Any) -> list[Any]:
    """Several predicates on the same data in one round trip; outcomes as `Sandbox.evaluate_many`."""
    return default_sandbox().evaluate_many(predicates, pre, post, args, result)


# --- the load-time check -----------------------------------------------------------------------------------


def constant_parts(source: str) -> list[str]:
    """The maximal sub-expressions of `source` that can grow beyond their literals from constants
    alone (a comprehension, `*`, `**`, `+`, `%`, `round()`), with no root and no name bound outside
    them: the parts worth evaluating at load. Anything else on constants is as small as the
    (length-capped) source."""
    try:
        tree = ast.parse(f"({source.strip()}\n)", mode="eval")
    except (SyntaxError, ValueError):
        return []
    out: list[str] = []

    def free_names(node: ast.AST) -> set[str]:
        bound = {t.id for n in ast.walk(node) if isinstance(n, ast.comprehension)
                 for t in ast.walk(n.target) if isinstance(t, ast.Name)}
        return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
                and n.id not in bound and n.id not in HELPERS}

    def computes(node: ast.AST) -> bool:
        return any(isinstance(n, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp))
                   or (isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Mult, ast.Pow, ast.Add, ast.Mod)))
                   or (isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "round")
                   for n in ast.walk(node))

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.expr) and computes(node) and not free_names(node):  # roots are free names
            out.append(ast.unparse(node))
            return
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree.body)
    return out


def cost_problem(source: str, sandbox: Sandbox | None = None) -> str | None:
    """Why `source` is provably too costly to evaluate (a constant part of it exceeds a bound on
    any data), or None. Only constant parts are tried, each in the sandbox."""
    parts = constant_parts(source)
    if not parts:
        return None
    compiled = []
    for part in parts:
        try:
            compiled.append(compile_predicate(part))
        except ForbiddenPredicate:
            continue
    if not compiled:
        return None
    for part, outcome in zip(parts, (sandbox or default_sandbox()).evaluate_many(compiled, {}, {}, {}, None)):
        if isinstance(outcome, PredicateBudgetError):
            return f"too costly to evaluate: `{part}`: {outcome}"
    return None


# --- the worker --------------------------------------------------------------------------------------------


def _limit(memory: int) -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # a worker killed at its CPU bound leaves no core file
    try:
        with open("/proc/self/statm") as f:
            base = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        base = 0
    if base:
        _soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        limit = base + memory
        resource.setrlimit(
            resource.RLIMIT_AS, (limit if hard == resource.RLIM_INFINITY else min(limit, hard), hard)
        )


def _cpu_bound(cpu: int) -> None:
    import resource

    used = resource.getrusage(resource.RUSAGE_SELF)
    soft = int(used.ru_utime + used.ru_stime) + cpu
    _old, hard = resource.getrlimit(resource.RLIMIT_CPU)
    resource.setrlimit(
        resource.RLIMIT_CPU, (soft if hard == resource.RLIM_INFINITY else min(soft, hard), hard)
    )


def worker_main(argv: Sequence[str]) -> int:
    memory = int(argv[argv.index("--memory") + 1]) if "--memory" in argv else MEMORY_BUDGET
    cpu = int(argv[argv.index("--cpu") + 1]) if "--cpu" in argv else CPU_SECONDS
    _limit(memory)
    inp, out = sys.stdin.buffer, sys.stdout
    predicates: dict[int, Predicate | ForbiddenPredicate] = {}
    states: dict[int, Any] = {}

    def reply(data: dict[str, Any]) -> None:
        out.write(json.dumps(data) + "\n")
        out.flush()

    reply({"ready": True})
    while True:
        head = inp.read(12)
        if len(head) < 12:
            return 0
        count = int.from_bytes(head[8:], "big")
        _cpu_bound(cpu)
        try:
            request = marshal.loads(inp.read(int.from_bytes(head[:8], "big")))
            for pid, source in request["preds"].items():
                try:
                    predicates[pid] = compile_predicate(source)
                except ForbiddenPredicate as exc:
                    predicates[pid] = exc
            states.update(request["states"])
            for token in request["forget"]:
                states.pop(token, None)
            values = [states[r[1]] if r[0] == "s" else r[1] for r in request["refs"]]
            reply({"loaded": True})  # the transfer is done: each item's clock starts here
        except MemoryError:
            for _ in range(count):
                reply(
                    {"ok": False, "kind": "budget", "message": "the state does not fit the sandbox's memory"}
                )
            return 1
        for pid in request["items"]:
            predicate = predicates[pid]
            began = time.monotonic()  # the evaluation alone, not the transfer: what the run budget counts

            def answer(data: dict[str, Any]) -> None:
                reply({**data, "s": round(time.monotonic() - began, 3)})  # noqa: B023 - called in this iteration

            try:
                if isinstance(predicate, ForbiddenPredicate):
                    raise PredicateTypeError(str(predicate))
                answer({"ok": True, "value": predicate.evaluate(*values)})
            except PredicateBudgetError as exc:
                answer({"ok": False, "kind": "budget", "message": str(exc)})
            except PredicateTypeError as exc:
                answer({"ok": False, "kind": "type", "message": str(exc)})
            except MemoryError:
                answer(
                    {"ok": False, "kind": "budget", "message": "evaluation ran out of the sandbox's memory"}
                )
            except Exception as exc:  # noqa: BLE001 - whatever a predicate raises is its outcome, not a crash
                answer({"ok": False, "kind": "type", "message": f"{type(exc).__name__}: {exc}"})


if __name__ == "__main__":
    sys.exit(worker_main(sys.argv[1:]))
