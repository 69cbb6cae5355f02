"""The pieces of a derived oracle, without a host: a guard's condition rewritten over the snapshot,
records located by the arguments that select them, state paths matched to the snapshot's roots,
replies read from the returned literal, a round trip's undo bound to what the do made, and the
findings' own properties (TL105's side of the pair)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from toollint.contracts.host.predicate import compile_predicate
from toollint.contracts.model import Clause, OnViolation, Provenance
from toollint.dynamic.checker import ProbeRun, crashed_past_guard, kept_references
from toollint.dynamic.derived import (
    bind_undo,
    derive_tools,
    guard_condition,
    locate,
    projection,
    reply_predicate,
    resolve_path,
    translate_guard,
)
from toollint.dynamic.probes import Probe

from toollint.engine import lint_source
from toollint.settings import Settings

STATE = {
    "agent_db": {
        "lines": [{"line_id": "L1", "status": "Active", "plan_id": "P1"},
                  {"line_id": "L2", "status": "Suspended", "plan_id": "P1"}],
        "customers": [{"customer_id": "C1", "line_ids": ["L1", "L2"]}],
        "reservations": {"R1": {"reservation_id": "R1", "status": "booked"},
                         "R2": {"reservation_id": "R2", "status": "cancelled"}},
    },
    "user_db": {"device": {"on": True}},
}


def observed(names: dict[str, dict[str, object]], constants: dict[str, object] | None = None,
             chains: dict[str, object] | None = None) -> dict[str, object]:
    return {
        "reached": True,
        "value": True,
        "names": names,
        "constants": constants or {},
        "chains": chains or {},
    }


def test_a_guard_on_a_local_record_becomes_a_precondition_over_the_arguments() -> None:
    line = STATE["agent_db"]["lines"][0]  # type: ignore[index]
    obs = observed({"target_line": {"kind": "local", "value": line}, "LineStatus": {"kind": "global"}},
                   {"LineStatus.ACTIVE": "Active"}, {"target_line": line, "target_line.status": "Active"})
    pred, why = translate_guard("target_line.status != LineStatus.ACTIVE", obs,
                                {"customer_id": "C1", "line_id": "L1", "gb_amount": 2.0}, STATE)
    assert (pred, why) == ("pre.agent_db.lines.by(line_id=args.line_id).status == 'Active'", "")
    compiled = compile_predicate(pred)
    assert compiled.evaluate(STATE, STATE, {"line_id": "L1"}, None) is True
    assert compiled.evaluate(STATE, STATE, {"line_id": "L2"}, None) is False  # the guard would refuse it


def test_a_guard_on_a_keyed_collection_and_a_parameter() -> None:
    obs = observed({"self": {"kind": "local"}, "reservation_id": {"kind": "param"}},
                   chains={"self.db.reservations": STATE["agent_db"]["reservations"],  # type: ignore[index]
                           "self.db": STATE["agent_db"], "self": "<toolkit>"})
    pred, _ = translate_guard(
        "reservation_id not in self.db.reservations", obs, {"reservation_id": "R1"}, STATE
    )
    assert pred == "args.reservation_id in pre.agent_db.reservations"


@pytest.mark.parametrize("names, chains, words", [
    ({"n": {"kind": "local", "value": 3}}, {"n": 3}, "the guard reads the local `n`, which is no record"),
    ({"helper": {"kind": "unbound"}}, {}, "the guard reads `helper`, which the tool never binds"),
    ({"LIMIT": {"kind": "global"}}, {}, "the global `LIMIT`, whose value is no constant"),
])
def test_a_guard_that_cannot_be_rewritten_says_why(names: dict[str, dict[str, object]],
                                                     chains: dict[str, object], words: str) -> None:
    condition = next(iter(names)) + " > 1"
    pred, why = translate_guard(condition, observed(names, chains=chains), {"x": 1}, STATE)
    assert pred is None and words in why


def test_records_are_located_only_when_an_argument_selects_them() -> None:
    reservation = STATE["agent_db"]["reservations"]["R1"]  # type: ignore[index]
    assert locate(reservation, STATE, {"reservation_id": "R1"}) == \
        "get(pre.agent_db.reservations, args.reservation_id, None)"
    assert locate(reservation, STATE, {"other": "X"}) is None  # a fixed record would not generalise
    assert locate(STATE["agent_db"], STATE, {}) == "pre.agent_db"  # type: ignore[index]
    assert locate("Active", STATE, {}) is None  # a scalar could be anywhere
    changed = dict(STATE["agent_db"]["lines"][1], status="Active")  # type: ignore[index]
    # a record the call already changed is found by its identity fields
    assert (
        locate(changed, STATE, {"line_id": "L2"}, root="post")
        == "post.agent_db.lines.by(line_id=args.line_id)"
    )


def test_analysis_paths_are_matched_to_the_snapshots_roots() -> None:
    assert resolve_path("db.lines[*].status", STATE) == ["agent_db", "lines", "[*]", "status"]
    assert resolve_path("lines[*].status", STATE) == ["agent_db", "lines", "[*]", "status"]
    assert resolve_path("db.reservations[*]", STATE) == [
        "agent_db",
        "reservations",
    ]  # a computed key: the mapping
    assert resolve_path("db.nothing[*].here", STATE) is None
    seats = projection("post", ["agent_db", "lines", "[*]", "status"])
    assert seats == "[x0.status for x0 in rows(post.agent_db.lines) if 'status' in x0]"
    assert compile_predicate(f"{seats} == 1").paths >= {"agent_db.lines[*].status"}


def test_replies_are_read_from_the_returned_literal() -> None:
    def reply(src: str) -> str | None:
        return reply_predicate(ast.parse(src, mode="eval").body, ["id", "amount"])

    assert reply('"Done"') == "result == 'Done'"
    assert (
        reply('f"Transaction with ID {id} updated."')
        == "result == 'Transaction with ID ' + str(args.id) + ' updated.'"
    )
    assert reply('f"Charged {amount:.2f} to you"') == "result[:8] == 'Charged '"
    assert (
        reply('{"message": f"Updated {id}.", "count": n}')
        == "result.message == 'Updated ' + str(args.id) + '.'"
    )
    assert reply("f'{x}'") is None  # nothing literal to recognise it by


def test_the_undo_is_bound_to_what_the_do_made() -> None:
    meta = {"parameters": {"properties": {"reservation_id": {"type": "string"}, "reason": {"type": "string"}},
                           "required": ["reservation_id"]}}
    made = ProbeRun(Probe("search", {}), result={"status": "ok", "value": {"reservation_id": "R9"}})
    assert bind_undo(meta, {"user_id": "u"}, made) == {"reservation_id": "R9"}
    added = ProbeRun(
        Probe("search", {}),
        result={"status": "ok", "value": "ok"},
        diff=[{"op": "add", "path": "/agent_db/reservations/R7", "after": {"reservation_id": "R7"}}],
    )
    assert bind_undo(meta, {}, added) == {"reservation_id": "R7"}
    nothing = ProbeRun(Probe("search", {}), result={"status": "ok", "value": None})
    assert bind_undo(meta, {}, nothing) is None  # a required argument stays unbound


def test_a_soft_delete_keeps_its_references() -> None:
    kept = ProbeRun(
        Probe("round_trip", {}),
        diff=[
            {
                "op": "add",
                "path": "/agent_db/reservations/R9",
                "after": {"reservation_id": "R9", "status": "cancelled"},
            },
            {"op": "add", "path": "/agent_db/users/u1/reservations/3", "after": "R9"},
        ],
    )
    assert kept_references(kept, ["agent_db.users", "agent_db.users[*].reservations"])
    leaked = ProbeRun(Probe("round_trip", {}), diff=[
        {"op": "add", "path": "/agent_db/reservations/R9", "after": {"reservation_id": "R9"}},
        {"op": "replace", "path": "/agent_db/flights/F1/seats", "before": 5, "after": 4}])
    assert not kept_references(leaked, ["agent_db.flights[*].seats"])


PAIR = '''
def tool(fn):
    return fn

class Shop:
    def __init__(self):
        self.items = {}
        self.returns = []

    @tool
    def add_item(self, item_id: str) -> str:
        self.items[item_id] = 1
        return "added"

    @tool
    def remove_item(self, item_id: str) -> str:
        del self.items[item_id]
        self.returns.append(item_id)
        return "removed"
'''


def test_the_round_trip_runs_do_then_undo_whichever_side_is_flagged(tmp_path: Path) -> None:
    path = tmp_path / "shop.py"
    path.write_text(PAIR)
    findings = [f for f in lint_source(PAIR, str(path), Settings()).reported if f.code == "TL105"]
    assert [(f.tool, f.properties["field"], f.properties["role"]) for f in findings] == [
        ("Shop.add_item", "returns", "do")]  # remove writes `returns`; add, the do side, never touches it
    # (a `log` or `history` it appended to would be no obligation: issue 21)
    [tool] = derive_tools(findings)
    [trip] = tool.round_trips
    assert (trip.do, trip.undo) == ("add_item", "remove_item")


@pytest.mark.parametrize("first_line, condition", [
    ("if target_line.status != LineStatus.ACTIVE:", "target_line.status != LineStatus.ACTIVE"),
    ("elif amount <= 0:", "amount <= 0"),
    ("assert amount > 0, 'positive'", "not amount > 0"),
    ("if (amount <= 0 and", None),  # the rest of the condition is on lines the first one does not hold
    ("amount = 0", None),
])
def test_a_guards_condition_is_read_from_its_first_line(first_line: str, condition: str | None) -> None:
    assert guard_condition(first_line) == condition


def _guard_clause(raises: str = "ValueError") -> Clause:
    return Clause(
        "pre.commented_guard_105",
        "pre",
        "x",
        None,
        Provenance("derived", line=105, finding="TL102", about="if account_id not in accounts:"),
        on_violation=OnViolation(raises=raises),
    )


@pytest.mark.parametrize("error_type, past, counted", [
    ("KeyError", True, True),  # watched past the guard's line, then a crash: no check refused it
    ("KeyError", False, False),  # not seen past the line: an earlier check may have refused it
    ("PermissionError", True, False),  # a deliberate refusal further on: the guard moved, not removed
    ("ValueError", True, False),  # the guard's own exception, raised later: refused as the guard would
])
def test_only_a_crash_past_the_guards_line_counts_as_unrefused(
    error_type: str, past: bool, counted: bool
) -> None:
    run = ProbeRun(Probe("pre_violating", {"account_id": "A9"}, clause="pre.commented_guard_105",
                         past_guard=["pre.commented_guard_105"] if past else []),
                   result={"status": "tool_error", "error_type": error_type})
    assert crashed_past_guard(_guard_clause(), run) is counted


NOOP = '''\
def tool(fn):
    return fn


class Ledger:
    def __init__(self):
        self.entries = []

    @tool
    def record_entry(self, text: str) -> str:
        """Record an entry in the ledger."""
        return "Entry recorded."

    @tool
    def add_entry(self, text: str) -> str:
        """Add an entry to the ledger."""
        if text:
            self.entries.append(text)
        return "Entry added."
'''


def test_a_tool_that_writes_nothing_at_all_must_change_the_state_when_it_says_success(tmp_path: Path) -> None:
    from toollint.dynamic.derived import static_clauses

    path = tmp_path / "ledger.py"
    path.write_text(NOOP)
    findings = [f for f in lint_source(NOOP, str(path), Settings()).reported if f.code == "TL101"]
    by_tool = {str(f.tool): f.properties["writes"] for f in findings}
    assert by_tool["Ledger.record_entry"] == []  # "nothing is written at all"
    assert by_tool["Ledger.add_entry"] != []  # a write under a condition: not this oracle's case
    tools = {t.name: t for t in derive_tools(findings)}
    clauses = static_clauses(tools["record_entry"], {"entries": []}, {}).clauses
    assert [(c.id, c.predicate) for c in clauses] == [("success", "result == 'Entry recorded.'"),
                                                     ("eff.changes_state", "post != pre")]
    assert all(c.basis.code == "TL101" for c in clauses)
    assert [c.id for c in static_clauses(tools["add_entry"], {"entries": []}, {}).clauses] == []


def test_a_guard_on_a_records_truth_becomes_a_boolean_precondition() -> None:
    """`if not account: raise ...` after `account = self.accounts.get(account_id)`: the precondition is
    that the record is there, as true or false; the record itself is no verdict."""
    reservations = STATE["agent_db"]["reservations"]  # type: ignore[index]
    obs = observed({"reservation": {"kind": "local", "value": reservations["R1"]}},
                   chains={"reservation": reservations["R1"]})
    pred, why = translate_guard("not reservation", obs, {"reservation_id": "R1"}, STATE)
    assert (pred, why) == ("bool(get(pre.agent_db.reservations, args.reservation_id, None))", "")
    compiled = compile_predicate(pred)
    assert compiled.evaluate(STATE, STATE, {"reservation_id": "R1"}, None) is True
    assert compiled.evaluate(STATE, STATE, {"reservation_id": "R9"}, None) is False
