"""tau2-bench's driver for the validation harness (`toollint.profiles.api.BenchmarkDriver`).

- Mutation subjects are the tool modules of the domains with bundled contracts (`domains/<domain>/
  tools.py`, and `user_tools.py` where the user has a toolkit); a mutant is written into an overlay copy
  of the `tau2` package, put first on `PYTHONPATH` of a host running the tau2 adapter, whose data
  directory stays the checkout's (`TAU2_DATA_DIR`).
- Paths (gold replay and constructed paths, `toollint.validate.paths`) run in tau2's interpreter
  through the gateway (`host/validation_host.py`): tau2's own environment, `get_response` for every call
  with its requestor (a gold path mixes agent and user calls), and tau2's own evaluator for the reward.
- The one-hunk fixes and the constructed paths of the two published defects are data here (`FIXES`,
  `constructed_rows`): `refuel_data`'s commented-out "Line must be active" guard, restored; and
  `cancel_reservation`'s seats, released.

A driver is bound to one checkout (`for_package`), since tau2 is checked out, not installed.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from toollint.contracts.model import Clause, Contract
from toollint.profiles.api import (
    CheckoutDriver,
    DynamicHost,
    Fix,
    GatewayError,
    Interpreter,
    PathRow,
    Subject,
    Watch,
    WorkerSpec,
)
from toollint.profiles.tau2.tasks import PACKAGE, Layout, locate

HOST_HELPERS = Path(__file__).parent / "host" / "validation_host.py"
TOOLKIT_FILES = {"agent": "tools.py", "user": "user_tools.py"}
PATH_DEADLINE = 900.0  # one batch of paths (each builds two or three environments and runs the evaluator)

REFUEL = "tau2.domains.telecom.tools:TelecomTools.refuel_data"
CANCEL = "tau2.domains.airline.tools:AirlineTools.cancel_reservation"
FIXES = {
    REFUEL: Fix(REFUEL, "domains/telecom/tools.py",
                "        # if target_line.status != LineStatus.ACTIVE:\n"
                "        #     raise ValueError(\"Line must be active to refuel data\")\n",
                "        if target_line.status != LineStatus.ACTIVE:\n"
                "            raise ValueError(\"Line must be active to refuel data\")\n",
                "the docstring's check \"Line status must be Active\", commented out at the pin, restored"),
    CANCEL: Fix(CANCEL, "domains/airline/tools.py",
                "        logger.warning(\"Seats release not implemented for cancellation!!!\")\n",
                "        for flight in reservation.flights:\n"
                "            seats = getattr(self._get_flight_instance(flight.flight_number, flight.date),\n"
                "                            \"available_seats\", None)\n"
                "            if seats is not None:\n"
                "                seats[reservation.cabin] += len(reservation.passengers)\n",
                "book_reservation takes len(passengers) seats of the cabin on every flight; give them back"),
}
CONSTRUCTED_REASON = "toollint constructed path"


class Tau2Driver(CheckoutDriver[Layout]):
    label = "tau2-bench"
    _shared: _Shared | None = None  # the open session's interpreter (`session`)
    constructed_modules: tuple[tuple[str, str], ...] = ()  # the falsy-argument arm finds no `if arg:` here

    locate = staticmethod(locate)

    # -- tool modules and hosts -----------------------------------------------------------------------

    def variant_of(self, contract: Contract) -> str:
        domain = str(contract.adapter.get("domain") or "")
        return domain + ("/user" if contract.adapter.get("toolkit") == "user" else "")

    def worker_spec(self, python: str, variant: str, env: dict[str, str] | None = None) -> WorkerSpec:
        domain, _, toolkit = variant.partition("/")
        options: dict[str, Any] = {"domain": domain, "toolkit": toolkit or "agent"}
        extra = dict(env or {})
        if "PYTHONPATH" not in extra:  # no overlay: the checkout itself
            options["root"] = str(self._layout().checkout)
        else:  # the overlay's `tau2` first on the path, the checkout's data
            extra.setdefault("TAU2_DATA_DIR", str(self._layout().data))
        return WorkerSpec(self.profile.name, options, python, env={"PYTHONDONTWRITEBYTECODE": "1", **extra})

    def tool_module(self, package_dir: Path, module: str) -> tuple[Path, str]:
        """`telecom.user_tools` -> its file and `tau2.domains.telecom.user_tools`."""
        package = locate(package_dir).package
        domain, _, name = module.partition(".")
        return package / "domains" / domain / f"{name}.py", f"{PACKAGE}.domains.{domain}.{name}"

    def _contracts(self) -> list[Contract]:
        bundled = self.profile.contracts_dir
        return self.services.load_contracts([bundled] if bundled else [])

    def subjects(self, package_dir: Path, python: str | None = None, modules: Sequence[str] | None = None,
                 registered: frozenset[str] | None = None) -> list[Subject]:
        """One subject per tool module that bundled contracts cover (`airline.tools`, `telecom.user_tools`,
        ...); hosted dynamically when `python` (an interpreter with tau2's dependencies) is given."""
        layout = locate(package_dir)
        driver = Tau2Driver(self.profile, self.services, layout)
        contracts = self._contracts()
        by_module: dict[str, list[Contract]] = {}
        for c in contracts:
            by_module.setdefault(c.module, []).append(c)
        out = []
        for module_name in sorted(by_module):
            short = module_name.removeprefix(f"{PACKAGE}.domains.")
            if modules and short not in modules:
                continue
            path, _ = self.tool_module(package_dir, short)
            if not path.is_file():
                continue
            host = None
            if python is not None:
                def spec(root: Path, contract: Contract, py: str = python) -> WorkerSpec:
                    return driver.worker_spec(py, driver.variant_of(contract), {"PYTHONPATH": str(root)})

                host = DynamicHost(layout.package, Path(PACKAGE) / path.relative_to(layout.package),
                                   by_module[module_name], spec, deadline=60.0)
            out.append(
                Subject(
                    f"tau2:{short}",
                    path,
                    module_name,
                    display=f"tau2/{path.relative_to(layout.package)}",
                    host=host,
                    registered=registered,
                )
            )
        return out

    # -- questions to tau2's interpreter ------------------------------------------------------------

    @contextlib.contextmanager
    def session(self, python: str) -> Iterator[None]:
        """While open, the driver's questions to `python` about the checkout (ground truth, the state
        sample, one path runner at a time) share one interpreter: importing tau2 takes seconds."""
        with self._helper(python) as worker:
            self._shared = _Shared(python, worker)
            try:
                yield
            finally:
                self._shared = None

    @contextlib.contextmanager
    def _helper(self, python: str, pythonpath: Path | None = None, runner: bool = False
                ) -> Iterator[Interpreter]:
        """A plain interpreter with the host helpers' tau2 imported from the checkout, or from the
        overlay at `pythonpath` (which holds a copy of the `tau2` package); the session's when one is
        open (`session`) and, for a path runner (`runner`), no other runner holds it."""
        shared = self._shared
        if shared is not None and shared.python == python and pythonpath is None:
            with shared.lend(runner) as lent:
                if lent is not None:
                    yield lent
                    return
        layout = self._layout()
        src = str(pythonpath) if pythonpath is not None else str(layout.package.parent)
        try:
            with self.services.interpreter(python, env={"PYTHONDONTWRITEBYTECODE": "1"},
                                           deadline=PATH_DEADLINE) as worker:
                worker.evaluate(
                    "setup(src, data)",
                    module=HOST_HELPERS,
                    names={"src": src, "data": str(layout.data)},
                    failure=f"tau2 from {src} does not import",
                )
                yield worker
        except GatewayError:
            raise
        except Exception as exc:  # noqa: BLE001 - a worker that cannot start is one line
            raise GatewayError(f"tau2's interpreter {python}: {exc}") from None

    def registered_tools(self, python: str) -> frozenset[str]:
        try:
            with self._helper(python) as worker:
                found = worker.evaluate("registered_tools(domains)", module=HOST_HELPERS,
                                        names={"domains": ["airline", "retail", "telecom"]})
        except GatewayError as exc:
            raise ValueError(f"cannot list tau2's registered tools with {python}: {exc}") from None
        return frozenset(t for kits in found.values() for names in kits.values() for t in names)

    def ground_truth(self, python: str, variant: str) -> list[dict[str, Any]]:
        return self.ground_truths(python, [variant])[variant]

    def ground_truths(self, python: str, variants: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
        """`ground_truth` of several variants, asked of one interpreter (importing tau2 costs seconds)."""
        with self._helper(python) as worker:
            return {v: list(worker.evaluate("tasks(domain)", module=HOST_HELPERS,
                                            names={"domain": v.partition("/")[0]})) for v in variants}

    @contextlib.contextmanager
    def path_runner(self, python: str, pythonpath: Path | None = None
                    ) -> Iterator[Callable[[str, list[dict[str, Any]]], list[dict[str, Any]]]]:
        """`run(variant, rows)`: each row's path through tau2's environment, graded by its evaluator
        (`validation_host.run_paths`), in one interpreter kept warm across calls."""
        with self._helper(python, pythonpath, runner=True) as worker:
            def run(variant: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
                return list(worker.evaluate("run_paths(domain, rows, predicates)", module=HOST_HELPERS,
                                            names={"domain": variant.partition("/")[0], "rows": rows,
                                                   "predicates": str(self.services.predicate_module)},
                                            failure=f"running {len(rows)} {variant} path(s)"))

            yield run

    def grade(self, python: str, variant: str, items: Sequence[dict[str, Any]],
              pythonpath: Path | None = None) -> list[dict[str, Any]]:
        """Each item's verdict (`{"task", "calls"}`) under tau2's evaluator: `{"verdict", "errors"}`."""
        keys = ("task", "calls", "final", "trace", "without_llm", "verdict_only")
        with self.path_runner(python, pythonpath) as run:
            answers = run(variant, [{k: i[k] for k in keys if k in i} for i in items])
        return [
            {
                "verdict": None if a.get("reward") is None else a["reward"] >= 1.0,
                "errors": a.get("errors", []),
                **({"why": a["why"]} if a.get("why") else {}),
                **{k: a[k] for k in ("changed", "start_digest", "digest", "unjudged", "results", "preflight")
                   if a.get(k)},
            }
            for a in answers
        ]

    # -- the grader audit (`toollint.profiles.api.GraderAuditDriver`) -------------------------------

    def audit_variants(self) -> list[str]:
        return ["airline", "retail", "telecom"]

    def state_sample(self, python: str, variant: str) -> Any:
        with self._helper(python) as worker:
            return worker.evaluate("state_sample(domain)", module=HOST_HELPERS,
                                   names={"domain": variant.partition("/")[0]},
                                   failure=f"could not read {variant}'s state")



class _Shared:
    """A session's interpreter (`Tau2Driver.session`): lent to any question, and to one path runner at
    a time; each question holds it alone (`evaluate` under a lock: a path runner grades from a pool's
    thread)."""

    def __init__(self, python: str, worker: Interpreter) -> None:
        self.python, self.worker = python, worker
        self.lock = threading.Lock()
        self.runner = False

    @contextlib.contextmanager
    def lend(self, runner: bool) -> Iterator[Interpreter | None]:
        if runner and self.runner:
            yield None
            return
        self.runner = self.runner or runner
        try:
            yield self
        finally:
            if runner:
                self.runner = False

    def evaluate(self, expr: str, *, module: Path | str | None = None, names: dict[str, Any] | None = None,
                 failure: str = "") -> Any:
        with self.lock:
            return self.worker.evaluate(expr, module=module, names=names, failure=failure)


# --- the paths of the two published defects -----------------------------------------------------------


def gold_rows(
    ground_truth: Sequence[dict[str, Any]], variant: str, tool: str, clause: Clause
) -> list[PathRow]:
    """Every task's gold path, each call of `tool` watched: which tasks call it, and which of those
    calls meet the clause's trigger, is what the replay finds (`Figures.called`, `.reached`), not
    something chosen beforehand from the task file."""
    return [PathRow("gold", task["task"], variant,
                    [{**c, "_watch": True} if c["function"] == tool else dict(c) for c in task["calls"]],
                    tool, Watch(clause))
            for task in ground_truth]


def refuel_rows(ground_truth: Sequence[dict[str, Any]], clause: Clause) -> list[PathRow]:
    """C1: `suspend_line` of the refuelled line inserted before the gold `refuel_data` call, so the
    refuel meets a Suspended line; C2: C1 plus `resume_line` right after it, so the line ends Active."""
    out = []
    for task in ground_truth:
        calls = [dict(c) for c in task["calls"]]
        at = next((i for i, c in enumerate(calls) if c["function"] == "refuel_data"), None)
        if at is None:
            continue
        line = {"customer_id": calls[at]["args"]["customer_id"], "line_id": calls[at]["args"]["line_id"]}
        suspend = {"function": "suspend_line", "args": {**line, "reason": CONSTRUCTED_REASON},
                   "requestor": "assistant"}
        resume = {"function": "resume_line", "args": dict(line), "requestor": "assistant"}
        refuel = {**calls[at], "_watch": True}
        c1 = [*calls[:at], suspend, refuel, *calls[at + 1:]]
        c2 = [*calls[:at], suspend, refuel, resume, *calls[at + 1:]]
        out.append(PathRow("C1", task["task"], "telecom", c1, "refuel_data", Watch(clause)))
        out.append(PathRow("C2", task["task"], "telecom", c2, "refuel_data", Watch(clause)))
    return out


def cancel_rows(ground_truth: Sequence[dict[str, Any]], clause: Clause) -> list[PathRow]:
    """F3: every airline task's gold path, then a `book_reservation` (the domain's gold bookings, the
    first that succeeds on the task's state) and a `cancel_reservation` of that booking."""
    bookings = [c["args"] for t in ground_truth for c in t["calls"] if c["function"] == "book_reservation"]
    if not bookings:
        return []
    out = []
    for task in ground_truth:
        book = {"function": "book_reservation", "args": dict(bookings[0]), "requestor": "assistant",
                "alternatives": [dict(b) for b in bookings[1:]]}
        cancel = {"function": "cancel_reservation", "args": {}, "requestor": "assistant",
                  "args_from": {"reservation_id": [len(task["calls"]), "reservation_id"]}, "_watch": True}
        out.append(PathRow("F3", task["task"], "airline", [*map(dict, task["calls"]), book, cancel],
                           "cancel_reservation", Watch(clause)))
    return out
