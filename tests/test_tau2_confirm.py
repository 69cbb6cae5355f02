"""tau2-bench confirmed end to end on the pinned snapshot, through the tau2 host adapter running in a
venv of tau2's own dependencies (the snapshot's `src/` on its sys.path).

The fast sample is the command a maintainer would type, `toollint check --confirm` over the domains:
the paper's two published defects come out as TL201 (refuel_data) and TL203 (cancel_reservation),
each re-confirmed in a fresh worker, exit 1, with witnesses that name the keys the predicates read.
The full bundled library (slow) gives the exact verdict table and the UNTESTABLE share. Both skip
with a one-line reason where the snapshot or Python 3.12 is absent.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from toollint.contracts.loader import load_contracts
from toollint.dynamic.checker import NO_RESET, NO_STATE, TYPE_ERROR, UNSUPPORTED
from toollint.dynamic.confirm import ConfirmRun, run_confirm

from toollint.settings import Settings

CONTRACTS = Path(__file__).resolve().parents[1] / "toollint" / "profiles" / "tau2" / "contracts"


class CommandRun:
    def __init__(self, proc: subprocess.CompletedProcess[str], cwd: Path) -> None:
        self.code, self.out, self.err, self.cwd = proc.returncode, proc.stdout, proc.stderr, cwd

    def finding(self, code: str, tool: str) -> str:
        return next(line for line in self.out.splitlines() if f" {code} " in line and f" {tool}(" in line)

    def witness(self, tool: str, clause: str) -> dict[str, Any]:
        line = self.finding("TL201" if clause.startswith("pre.") else "TL203", tool)
        path = re.search(r"-> toollint replay (\S+)", line).group(1)  # type: ignore[union-attr]
        return json.loads((self.cwd / path).read_text())  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def command(tau2_python: Path, tau2_checkout: Path, tmp_path_factory: pytest.TempPathFactory) -> CommandRun:
    tmp = tmp_path_factory.mktemp("tau2-confirm")
    witnesses = tmp / "witnesses"
    proc = subprocess.run(
        # No configuration and no contract of the user's: the tau2 profile is picked from the tree,
        # its adapter is told the checkout the linted files lie in, its contracts are bundled.
        [sys.executable, "-m", "toollint", "check", "--confirm", "--python", str(tau2_python),
         "--witness-dir", str(witnesses), str(tau2_checkout / "src" / "tau2" / "domains")],
        capture_output=True, text=True, timeout=1200, check=False, cwd=tmp)
    return CommandRun(proc, tmp)


def test_the_command_confirms_both_published_defects(command: CommandRun) -> None:
    assert command.code == 1, command.err
    refuel = command.finding("TL201", "refuel_data")
    assert "VIOLATES pre.line_active (TL201 Unenforced Precondition)" in refuel
    assert "succeeded although pre.line_active was false (where pre.agent_db.lines{line_id=L" in refuel
    assert "}.status='Suspended')" in refuel
    cancel = command.finding("TL203", "cancel_reservation")
    assert "VIOLATES eff.seats_released (TL203 Partial Effect)" in cancel and ".available_seats['" in cancel
    # Only these two: every other flagged tool with a contract conforms.
    verdicts = re.findall(r" (TL2\d\d) \[", command.out)
    assert sorted(verdicts) == ["TL201", "TL203"]
    summary = next(
        line for line in command.err.splitlines() if line.startswith("confirm: ") and "tool(s)" in line
    )
    assert "2 VIOLATES, 0 FLAKY" in summary and "0 UNTESTABLE; clause rows" in summary
    # The static findings that pointed at them carry the verdict of the clause that tests them.
    assert re.search(r"TL102 \[commented-out-guard\] `refuel_data` .*\[VIOLATES: ", command.out)
    unpaired = [
        line for line in command.out.splitlines() if "TL105" in line and "`cancel_reservation`" in line
    ]
    seats = next(line for line in unpaired if "available_seats" in line)
    assert "[VIOLATES: " in seats  # db.flights[*]...available_seats in the code, agent_db.flights[*]... read
    # The other, users' payment_methods, the bundled contract leaves out on purpose (a deferred refund).
    assert all("[LEFT_OUT: not tested: the bundled contract cancel_reservation.yaml leaves " in line
               for line in unpaired if line != seats)


def test_refuel_data_refuels_and_bills_a_suspended_line_its_customer_owns(command: CommandRun) -> None:
    w = command.witness("refuel_data", "pre.line_active")
    args = w["probe"]["effective_args"]
    line, customer = args["line_id"], args["customer_id"]
    # The line is Suspended and the customer owns it: only the commented-out check is violated.
    assert {"expr": f"pre.agent_db.lines{{line_id={line}}}.status", "value": "Suspended"} in w["evaluation"][
        "bindings"
    ]
    result = w["probe"]["result"]
    assert result["status"] == "ok"
    gb, charge = args["gb_amount"], result["value"]["charge"]
    assert (
        result["value"]["message"] == f"Successfully added {gb} GB of data for line {line} for ${charge:.2f}"
    )
    # What the agent saw: tau2's own rendering (numbers as strings), through get_response.
    assert json.loads(result["agent_view"])["charge"] == str(charge)
    diff = {op["path"]: op for op in w["probe"]["diff"]}
    assert diff[f"/agent_db/lines/{{line_id={line}}}/data_refueling_gb"]["after"] == gb
    # Billed: a new draft bill for the customer, or the charge added to the draft bill it has.
    bills = [op for op in w["probe"]["diff"] if op["path"].startswith("/agent_db/bills/")]
    added = [op["after"] for op in bills if op["op"] == "add" and op["path"].count("/") == 3]
    raised = [op for op in bills if op["path"].endswith("/total_due")]
    assert [(b["status"], b["total_due"], b["customer_id"]) for b in added] == [("Draft", charge, customer)] \
        or [op["after"] - op["before"] for op in raised] == [charge]
    assert w["clause"]["provenance"] == {
        "tier": "agent-visible", "kind": "docstring", "file": "domains/telecom/tools.py", "line": 613,
        "quote": "Checks: Line status must be Active", "note": None}
    assert w["determinism"]["shims"] == ["uuid4", "random", "clock"]
    assert w["confirmed"]["agrees"] and w["confirmed"]["fresh_process"]


def test_cancel_reservation_keeps_the_seats(command: CommandRun) -> None:
    w = command.witness("cancel_reservation", "eff.seats_released")
    assert w["probe"]["result"]["status"] == "ok" and w["probe"]["result"]["value"]["status"] == "cancelled"
    # Only the reservation changed: its status and the refunds; no flight's seat count.
    assert not any(op["path"].startswith("/agent_db/flights/") for op in w["probe"]["diff"])
    seats = [b for b in w["evaluation"]["bindings"] if ".available_seats[" in b["expr"]]
    pre = {b["expr"][4:]: b["value"] for b in seats if b["expr"].startswith("pre.")}
    post = {b["expr"][5:]: b["value"] for b in seats if b["expr"].startswith("post.")}
    assert pre and pre == post  # the seats of the cabin the reservation holds, unchanged
    cabin = w["probe"]["result"]["value"]["cabin"]
    assert all(path.endswith(f"available_seats['{cabin}']") for path in pre)
    assert w["clause"]["provenance"]["tier"] == "maintainer-comment"
    assert w["confirmed"]["agrees"] and w["confirmed"]["fresh_process"]


# --- the whole bundled library (slow) -------------------------------------------------------------------


@pytest.fixture(scope="module")
def library(tau2_python: Path, tau2_checkout: Path, tmp_path_factory: pytest.TempPathFactory) -> ConfirmRun:
    contracts, errors = load_contracts([CONTRACTS])
    assert errors == []
    return run_confirm(
        contracts,
        Settings(),
        python=str(tau2_python),
        witness_dir=tmp_path_factory.mktemp("w"),
        linted=[str(tau2_checkout / "src" / "tau2" / "domains")],
    )


@pytest.mark.slow
def test_the_library_finds_the_published_defects_and_one_more(library: ConfirmRun) -> None:
    violations = {(r.tool, row.clause_id, row.code) for r in library.reports for row in r.violations}
    assert violations == {
        ("refuel_data", "pre.line_active", "TL201"),
        ("cancel_reservation", "eff.seats_released", "TL203"),
        # Not in the paper: modifying several items of a pending order gives each of them the last
        # new item's price and options (retail tools.py:538-539 use the loop variable `variant`
        # left over from the validation loop), with the policy promising "an available new item of
        # the same product but of different product option".
        ("modify_pending_order_items", "eff.new_items_options", "TL203"),
        ("modify_pending_order_items", "eff.new_items_prices", "TL203"),
    }
    items = next(r for r in library.reports if r.tool == "modify_pending_order_items")
    row = next(row for row in items.violations if row.clause_id == "eff.new_items_prices")
    assert row.run is not None and len(row.run.args["item_ids"]) > 1  # one item alone is priced right
    assert len(library.reports) == 34 and all(r.error is None for r in library.reports)
    assert all(row.rerun and row.rerun["agrees"] for r in library.reports for row in r.violations)


@pytest.mark.slow
def test_untestable_clause_rows_are_under_ten_percent_and_each_is_named(library: ConfirmRun) -> None:
    counts = library.counts()
    rows = sum(counts.values())
    assert rows >= 170 and counts["FLAKY"] == 0
    assert counts["UNTESTABLE"] / rows < 0.10, counts  # the paper: 96 of 180
    untestable = [row for r in library.reports for row in r.clause_rows if row.verdict == "UNTESTABLE"]
    assert all(
        row.reason in (NO_STATE, TYPE_ERROR, NO_RESET, UNSUPPORTED) and row.detail for row in untestable
    )
    # What is left is preconditions no value in the pristine state violates (no bill awaiting payment,
    # no certificate owned by the user of a harvested reservation), never a host failure or a type error.
    assert Counter(row.reason for row in untestable) == Counter({NO_STATE: len(untestable)})
    assert all(row.kind == "pre" for row in untestable)
