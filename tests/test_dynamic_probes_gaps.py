"""Probe values no snapshot holds: a negative number for numeric parameters and optional arguments
left out together, offered to the precondition search only (docs/validation.md, survivor gap 3)."""

from __future__ import annotations

from pathlib import Path

from toollint.contracts.loader import load_contract
from toollint.dynamic.probes import NEGATIVE, Harvest, Plan, SchemaParam, make_plan

STATE = {"accounts": {"A1": {"owner": "Ada", "balance": 100.0, "overdraft": False},
                      "B2": {"owner": "Bob", "balance": 20.0, "overdraft": True}},
         "fees_collected": 0.0}
CONTRACT = """\
tool: bank:Bank.update
benchmark: fixture
source: {file: bank.py}
clauses:
  - id: pre.exists
    predicate: args.account_id in pre.accounts
    on_violation: {raises: ValueError}
    provenance: {tier: author-specified, inferred: true}
  - id: pre.fee_not_negative
    predicate: args.fee >= 0
    on_violation: {raises: ValueError}
    provenance: {tier: author-specified, inferred: true}
  - id: pre.something_to_update
    predicate: args.owner is not None or args.overdraft is not None
    on_violation: {raises: ValueError}
    provenance: {tier: author-specified, inferred: true}
  - id: eff.owner
    predicate: args.owner is None or post.accounts[args.account_id].owner == args.owner
    provenance: {tier: author-specified, inferred: true}
  - id: arg.overdraft
    falsy_legal: true
    provenance: {tier: author-specified, inferred: true}
  - id: arg.fee
    falsy_legal: true
    provenance: {tier: author-specified, inferred: true}
"""
META = {"parameters": {"properties": {
    "account_id": {"type": "string"},
    "fee": {"type": "number"},
    "owner": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
    "overdraft": {"anyOf": [{"type": "boolean"}, {"type": "null"}], "default": None},
}, "required": ["account_id", "fee"]}}


def test_numeric_parameters_get_a_negative_value_after_the_falsy_one() -> None:
    found = Harvest.of(STATE).values_for(SchemaParam("fee", {"number"}, True))
    values = [v for v, _ in found]
    assert found[-1] == (-100.0, NEGATIVE)  # below every stored magnitude
    assert values.index(0.0) < values.index(-100.0)  # 0 first: the boundary of `amount > 0`
    assert Harvest.of({}).values_for(SchemaParam("count", {"integer"}, True))[-1] == (-1, NEGATIVE)
    assert all(o != NEGATIVE for _, o in Harvest.of(STATE).values_for(SchemaParam("owner", {"string"}, True)))


def plan_of(tmp_path: Path) -> Plan:
    path = tmp_path / "update.yaml"
    path.write_text(CONTRACT)
    return make_plan(load_contract(path), META, STATE)


def test_a_sign_guard_and_a_joint_none_guard_get_violating_probes(tmp_path: Path) -> None:
    plan = plan_of(tmp_path)
    violating = {p.clause: p.args for p in plan.probes if p.kind == "pre_violating"}
    assert violating["pre.fee_not_negative"]["fee"] < 0
    assert plan.unreachable == {}
    joint = violating["pre.something_to_update"]
    assert joint["owner"] is None and joint["overdraft"] is None and joint["account_id"] in ("A1", "B2")


def test_negative_values_stay_out_of_legal_probes(tmp_path: Path) -> None:
    # A negative number is a call the contract may never have meant to allow; only the
    # precondition search uses it.
    plan = plan_of(tmp_path)
    legal = [p for p in plan.probes if p.kind != "pre_violating"]
    assert legal and all(p.args.get("fee", 0) >= 0 for p in legal)
    assert any(p.args.get("fee") == 0.0 for p in legal if p.varied == "fee")
