"""Witness text names the key the predicate really used (issue 11, item 4).

Two wrong witnesses came from guessing after the fact: `pre.lines{device_id=D1003}.status` (a line
record has `device_id` as well as `line_id`, and the guess took the first `*_id` alphabetically) and
`available_seats['basic_economy']` for a predicate that read `available_seats[r.cabin]` with cabin
`economy` (the guess took the first key). Bindings now come from re-evaluating the predicate with
path-carrying views; the diff keys a list by the collection's own `<record>_id` first.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from toollint.contracts.bindings import bindings, trace
from toollint.contracts.host.predicate import compile_predicate
from toollint.contracts.model import Clause, Contract, Provenance, Source
from toollint.dynamic.checker import ClauseResult, ProbeRun, ToolReport
from toollint.dynamic.host.jsondiff import diff, identity_field
from toollint.dynamic.probes import Probe
from toollint.dynamic.witness import sentence

# `device_id` sorts before `line_id` and is unique too: only the collection's name tells them apart.
LINES = [
    {"line_id": "L1001", "device_id": "D1001", "status": "Active", "plan_id": "P1001"},
    {"line_id": "L1003", "device_id": "D1003", "status": "Suspended", "plan_id": "P1001"},
]
FLIGHTS = {
    "HAT170": {
        "dates": {"2024-05-22": {"available_seats": {"basic_economy": 9, "economy": 4, "business": 0}}}
    }
}
RESERVATION = {"reservation_id": "4WQ150", "cabin": "economy", "passengers": ["a", "b"],
               "flights": [{"flight_number": "HAT170", "date": "2024-05-22"}]}
STATE = {"agent_db": {"lines": LINES, "flights": FLIGHTS, "reservations": {"4WQ150": RESERVATION},
                      "customers": [{"customer_id": "C1001", "line_ids": ["L1001", "L1003"]}]}}
SEATS = (
    "all(post.agent_db.flights[f.flight_number].dates[f.date].available_seats[r.cabin]"
    " == pre.agent_db.flights[f.flight_number].dates[f.date].available_seats[r.cabin] + len(r.passengers)"
    " for r in [pre.agent_db.reservations[args.reservation_id]] for f in r.flights)"
)


def exprs(source: str, args: dict[str, Any], pre: Any = STATE, post: Any = STATE) -> dict[str, Any]:
    return {b["expr"]: b["value"] for b in bindings(compile_predicate(source), pre, post, args)}


def test_a_filtered_record_is_named_by_its_own_id_field() -> None:
    got = exprs("any(l.status == 'Active' for l in pre.agent_db.lines if l.line_id == args.line_id)",
                {"line_id": "L1003"})
    assert got == {"pre.agent_db.lines{line_id=L1003}.status": "Suspended"}


def test_by_names_the_fields_the_predicate_selected_with() -> None:
    got = exprs("pre.agent_db.lines.by(device_id=args.device).status == 'Active'", {"device": "D1003"})
    assert got == {"pre.agent_db.lines{device_id=D1003}.status": "Suspended"}  # what it did use


def test_a_dict_subscript_names_the_key_read_not_the_first_key() -> None:
    got = exprs(SEATS, {"reservation_id": "4WQ150"})
    seats = "agent_db.flights['HAT170'].dates['2024-05-22'].available_seats['economy']"
    assert got == {f"pre.{seats}": 4, f"post.{seats}": 4,
                   "pre.agent_db.reservations['4WQ150'].passengers": ["a", "b"]}
    assert not any("basic_economy" in e for e in got)
    # The pair that shows the seats were not given back comes first (the terminal line shows three).
    assert list(got)[:2] == [f"pre.{seats}", f"post.{seats}"]


def test_a_post_read_is_shown_beside_the_value_before_the_call() -> None:
    post = {"agent_db": {**STATE["agent_db"], "lines": [dict(LINES[0]), dict(LINES[1], status="Active")]}}
    got = bindings(compile_predicate("post.agent_db.lines.by(line_id=args.line_id).status == 'Suspended'"),
                   STATE, post, {"line_id": "L1003"})
    assert got == [{"expr": "pre.agent_db.lines{line_id=L1003}.status", "value": "Suspended"},
                   {"expr": "post.agent_db.lines{line_id=L1003}.status", "value": "Active"}]


def test_lists_of_ids_and_positional_elements() -> None:
    got = exprs(
        (
            "any(args.line_id in c.line_ids for c in pre.agent_db.customers "
            "if c.customer_id == args.customer_id)"
        ),
        {"line_id": "L1009", "customer_id": "C1001"},
    )
    assert got == {"pre.agent_db.customers{customer_id=C1001}.line_ids": ["L1001", "L1003"]}
    # A list without an identity field is addressed by position, as in the diff.
    assert exprs("pre.agent_db.reservations['4WQ150'].flights[0].date == 'x'", {}) == {
        "pre.agent_db.reservations['4WQ150'].flights[0].date": "2024-05-22"}
    # rows() of a dict keeps each value's key.
    assert exprs("all(r.cabin == 'business' for r in rows(pre.agent_db.reservations))", {}) == {
        "pre.agent_db.reservations['4WQ150'].cabin": "economy"}


def test_the_reads_are_the_evaluation_itself() -> None:
    reads = trace(
        compile_predicate(
            "pre.agent_db.lines[1].status == 'Active' and pre.agent_db.lines[0].plan_id == 'x'"
        ),
        STATE,
        STATE,
        {},
        None,
    )
    # `and` stopped at the first false operand: the other line was never read. (The record itself
    # is a read too; `bindings` drops a dict the predicate read further into.)
    assert [r.expr for r in reads] == [
        "pre.agent_db.lines{line_id=L1003}",
        "pre.agent_db.lines{line_id=L1003}.status",
    ]
    assert not any("L1001" in r.expr for r in reads)


def test_a_small_dict_is_shown_whole_unless_read_further() -> None:
    state = {"orders": {"#W1": {"items": [{"item_id": "I1", "options": {"color": "blue"}}]}},
             "variants": {"I1": {"options": {"color": "red"}}}}
    got = exprs("all(it.options == pre.variants[it.item_id].options for it in post.orders['#W1'].items)",
                {}, state, state)
    assert got == {"post.orders['#W1'].items{item_id=I1}.options": {"color": "blue"},
                   "pre.variants['I1'].options": {"color": "red"},
                   "pre.orders['#W1'].items{item_id=I1}.options": {"color": "blue"}}


def test_the_diff_keys_a_list_by_the_collections_own_id() -> None:
    after = {"lines": [dict(LINES[0]), dict(LINES[1], status="Active")]}
    assert [op["path"] for op in diff({"lines": LINES}, after)] == ["/lines/{line_id=L1003}/status"]
    # An order's `user_id` may be unique by chance; it still names the user, not the order.
    orders = [{"order_id": "#W1", "user_id": "ann"}, {"order_id": "#W2", "user_id": "bob"}]
    assert identity_field(orders, orders, "orders") == "order_id"
    assert identity_field(orders, orders) == "user_id"  # without the name, the shortest unique *_id
    assert identity_field([{"id": 1, "x_id": 2}], [{"id": 1, "x_id": 2}], "xs") == "id"


def test_the_terminal_line_uses_the_traced_keys() -> None:
    source = "any(l.status == 'Active' for l in pre.agent_db.lines if l.line_id == args.line_id)"
    clause = Clause(
        "pre.line_active", "pre", source, compile_predicate(source), Provenance("author-specified")
    )
    contract = Contract("t:T.refuel_data", "t", Source("t.py"), (clause,), Path("c.yaml"))
    run = ProbeRun(Probe("pre_violating", {"customer_id": "C1001", "line_id": "L1003"}, tool="refuel_data"),
                   result={"status": "ok", "value": {"message": "ok"}}, pre=STATE, post=STATE)
    row = ClauseResult("pre.line_active", "pre", "VIOLATES", code="TL201", run=run, clause=clause)
    line = sentence(ToolReport("refuel_data", contract), row)
    assert "(where pre.agent_db.lines{line_id=L1003}.status='Suspended')" in line
    assert "device_id" not in line
