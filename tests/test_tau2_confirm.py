"""tau2-bench confirmed end to end on the pinned snapshot, through the tau2 host adapter running in a
venv of tau2's own dependencies (the snapshot's `src/` on its sys.path): the paper's two published
defects are confirmed and re-confirmed in a fresh worker, and the witnesses name the keys the
predicates read. Skips with a one-line reason where the snapshot or Python 3.12 is absent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from toollint.contracts.loader import load_contracts
from toollint.dynamic.confirm import ConfirmRun, run_confirm

from toollint.settings import Settings

PROFILE = Path(__file__).resolve().parents[1] / "toollint" / "profiles" / "tau2"
ADAPTER = PROFILE / "adapter.py"
CONTRACTS = PROFILE / "contracts"
SAMPLE = ("refuel_data", "cancel_reservation")


def tau2_settings(root: Path) -> Settings:
    return Settings(confirm={"adapter": str(ADAPTER), "options": {"root": str(root)}})


@pytest.fixture(scope="module")
def run(tau2_python: Path, tau2_checkout: Path, tmp_path_factory: pytest.TempPathFactory) -> ConfirmRun:
    contracts, errors = load_contracts([CONTRACTS])
    assert errors == []
    chosen = [c for c in contracts if c.tool_name in SAMPLE]
    assert sorted(c.tool_name for c in chosen) == sorted(SAMPLE)
    return run_confirm(chosen, tau2_settings(tau2_checkout), python=str(tau2_python),
                       witness_dir=tmp_path_factory.mktemp("witnesses"))


def witness(run: ConfirmRun, tool: str, clause: str) -> dict[str, Any]:
    found = next(f for f in run.findings if f.tool == tool and f.properties["clause"] == clause)
    return json.loads(Path(found.properties["witness"]).read_text())  # type: ignore[no-any-return]


def test_the_two_published_defects_are_the_only_violations(run: ConfirmRun) -> None:
    table = {r.tool: (r.verdict, {row.clause_id: row.code for row in r.violations}) for r in run.reports}
    assert table == {
        "refuel_data": ("VIOLATES", {"pre.line_active": "TL201"}),
        "cancel_reservation": ("VIOLATES", {"eff.seats_released": "TL203"}),
    }
    # Each re-confirmed in a fresh worker process.
    assert all(row.rerun and row.rerun["agrees"] and row.rerun["fresh_process"]
               for r in run.reports for row in r.violations)
    assert [(r.tool, row.clause_id) for r in run.reports for row in r.clause_rows
            if row.verdict == "UNTESTABLE"] == []


def test_refuel_data_refuels_and_bills_a_suspended_line_its_customer_owns(run: ConfirmRun) -> None:
    w = witness(run, "refuel_data", "pre.line_active")
    args = w["probe"]["effective_args"]
    line, customer = args["line_id"], args["customer_id"]
    # The line is Suspended and the customer owns it: only the commented-out check is violated.
    assert {"expr": f"pre.agent_db.lines{{line_id={line}}}.status", "value": "Suspended"} in w["evaluation"]["bindings"]
    result = w["probe"]["result"]
    assert result["status"] == "ok"
    gb, charge = args["gb_amount"], result["value"]["charge"]
    assert result["value"]["message"] == f"Successfully added {gb} GB of data for line {line} for ${charge:.2f}"
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


def test_cancel_reservation_keeps_the_seats(run: ConfirmRun) -> None:
    w = witness(run, "cancel_reservation", "eff.seats_released")
    assert w["probe"]["result"]["status"] == "ok" and w["probe"]["result"]["value"]["status"] == "cancelled"
    # Only the reservation changed: its status and the refunds; no flight's seat count.
    assert not any(op["path"].startswith("/agent_db/flights/") for op in w["probe"]["diff"])
    seats = [b for b in w["evaluation"]["bindings"] if ".available_seats[" in b["expr"]]
    pre = {b["expr"][4:]: b["value"] for b in seats if b["expr"].startswith("pre.")}
    post = {b["expr"][5:]: b["value"] for b in seats if b["expr"].startswith("post.")}
    assert pre and pre == post  # the cabin the reservation holds, unchanged
    reservation = w["probe"]["result"]["value"]
    assert all(f"available_seats['{reservation['cabin']}']" in path for path in pre)
    assert w["clause"]["provenance"]["tier"] == "maintainer-comment"
