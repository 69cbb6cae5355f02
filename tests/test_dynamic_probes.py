"""The probe planner: values harvested from the snapshot, preconditions reached on other records."""

from __future__ import annotations

from pathlib import Path

from toollint.contracts.loader import load_contract
from toollint.dynamic.probes import Harvest, SchemaParam, make_plan, params_from_tool

STATE = {
    "accounts": [
        {"id": "A1", "status": "active", "balance": 100.0, "opened": "2024-01-02T09:30:00"},
        {"id": "A2", "status": "frozen", "balance": 50.0, "opened": "2024-02-03T10:00:00"},
    ],
    "emails": {"0": {"id_": "0", "subject": "hi"}, "1": {"id_": "1", "subject": "yo"}},
    "users": ["Alice", "Bob"],
    "web": {"www.a.com": "page a", "www.b.com": "page b"},
}
CONTRACT = """\
tool: bank:Bank.update
benchmark: fixture
source: {file: bank.py}
clauses:
  - id: pre.active
    predicate: "pre.accounts.by(id=args.account_id) is not None and
      pre.accounts.by(id=args.account_id).status == 'active'"
    on_violation: {raises: ValueError}
    provenance: {tier: author-specified, inferred: true}
  - id: eff.balance
    predicate: args.balance is None or post.accounts.by(id=args.account_id).balance == args.balance
    provenance: {tier: author-specified, inferred: true}
  - id: arg.balance
    falsy_legal: true
    provenance: {tier: author-specified, inferred: true}
  - id: arg.frozen
    falsy_legal: true
    provenance: {tier: author-specified, inferred: true}
"""
META = {"parameters": {"properties": {
    "account_id": {"type": "string"},
    "balance": {"anyOf": [{"type": "number"}, {"type": "null"}], "default": None},
    "frozen": {"anyOf": [{"type": "boolean"}, {"type": "null"}], "default": None},
}, "required": ["account_id"]}}


def values(param: SchemaParam) -> list[object]:
    return [v for v, _ in Harvest.of(STATE).values_for(param)]


def test_ids_come_from_records_and_keys_and_an_absent_one_is_derived() -> None:
    assert values(SchemaParam("account_id", {"string"}, True))[:2] == ["A1", "A2"]
    assert values(SchemaParam("account_id", {"string"}, True))[-2:] == ["A1-absent", ""]
    assert values(SchemaParam("email_id", {"string"}, True))[:2] == ["0", "1"]
    assert "2" in values(SchemaParam("email_id", {"string"}, True))  # numeric ids: max + 1


def test_plural_lists_dict_keys_and_enums() -> None:
    assert values(SchemaParam("user", {"string"}, True))[:2] == ["Alice", "Bob"]
    # Nothing is named `url`: keys of id-keyed dicts come first (the run-time search tries them in turn).
    assert {"www.a.com", "www.b.com"} <= set(values(SchemaParam("url", {"string"}, True))[:4])
    assert values(SchemaParam("mode", {"string"}, True, enum=["r", "rw"]))[:2] == ["r", "rw"]
    assert values(SchemaParam("users", {"array"}, True))[0] == ["Alice", "Bob"]


def test_documented_time_formats_rewrite_snapshot_timestamps() -> None:
    p = SchemaParam("start", {"string"}, True, description="Should be in ISO format 'YYYY-MM-DD HH:MM'.")
    assert p.time_format == "%Y-%m-%d %H:%M"
    assert values(p)[:2] == ["2024-01-02 09:30", "2024-02-03 10:00"]
    assert SchemaParam("day", {"string"}, True, description="format 'YYYY-MM-DD'").time_format == "%Y-%m-%d"


def test_plan_covers_every_kind_of_probe(tmp_path: Path) -> None:
    path = tmp_path / "update.yaml"
    path.write_text(CONTRACT)
    plan = make_plan(load_contract(path), META, STATE)
    params = params_from_tool(META)
    assert params["balance"].types == {"number", "null"} and not params["balance"].required
    kinds = [(p.kind, p.clause or p.varied) for p in plan.probes]
    assert kinds[0] == ("happy", None) and plan.happy_found
    happy = plan.probes[0].args
    assert happy["account_id"] == "A1" and happy["balance"] and happy["frozen"] is True
    violating = [p.args["account_id"] for p in plan.probes if p.kind == "pre_violating"]
    assert violating == ["A2"]  # the frozen account, found among the other records
    balances = [p.args["balance"] for p in plan.probes if p.varied == "balance" or p.kind == "happy"]
    assert 100.0 in balances and 0.0 in balances  # the record's current value and the falsy one
    assert [p.args["frozen"] for p in plan.probes if p.varied == "frozen"] == [False]
    joint = [p.args for p in plan.probes if p.kind == "joint_falsy"]
    assert joint == [{"account_id": "A1", "balance": 0.0, "frozen": False}]
    # Each optional argument left out once (its null branch is a legal call too); never varied as `arg`.
    omitted = [p for p in plan.probes if p.kind == "omitted"]
    assert sorted(tuple(sorted(p.args)) for p in omitted) == [
        ("account_id", "balance"),
        ("account_id", "frozen"),
    ]
    assert all(p.varied is None for p in omitted)


def test_a_list_of_names_gets_real_names_before_the_empty_list() -> None:
    state = {"restaurants": {"restaurant_list": [{"name": "Chez A", "address": "1 Rue"}, {"name": "B Bistro",
                                                                                       "address": "2 Rue"}]},
             "hotels": {"hotel_list": [{"name": "Hotel C"}]}}
    param = SchemaParam("restaurant_names", {"array"}, True, description="The names of the restaurants.",
                        items={"string"})
    values = [v for v, _ in Harvest.of(state).values_for(param)]
    assert values[:3] == [
        ["Chez A"],
        ["Chez A", "B Bistro"],
        ["B Bistro"],
    ]  # a restaurant's name, not a hotel's
    assert ["Chez A", "Chez A-absent"] in values and values[-1] == []
    # The schema's item type is kept, so the planner knows what the list holds.
    meta = {"parameters": {"properties": {"restaurant_names": {"type": "array", "items": {"type": "string"}}},
                           "required": ["restaurant_names"]}}
    assert params_from_tool(meta)["restaurant_names"].items == {"string"}


def test_a_value_the_happy_record_already_has_is_also_set_on_a_record_without_it(tmp_path: Path) -> None:
    # Setting frozen=True on an account already frozen shows no write, dropped or not.
    state = {"accounts": [{"id": "A1", "status": "active", "frozen": True},
                          {"id": "A2", "status": "active", "frozen": False}]}
    path = tmp_path / "update.yaml"
    path.write_text(CONTRACT)
    plan = make_plan(load_contract(path), META, state)
    happy = plan.probes[0].args
    assert happy["account_id"] == "A1" and happy["frozen"] is True
    rebased = [p.args for p in plan.probes if p.kind == "rebased"]
    assert {"account_id": "A2", "frozen": True} in [
        {k: a[k] for k in ("account_id", "frozen")} for a in rebased
    ]
