"""The mutation operator library: each operator injects the defect it names into real tool code,
deterministically, and each control rewrite leaves behaviour unchanged."""

from __future__ import annotations

import ast
import copy
import dataclasses
import itertools
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from toollint.analysis import ParamInfo
from toollint.validate import mutation

MINIBANK = Path(__file__).parent / "fixtures" / "mutation" / "minibank" / "bank.py"
SOURCE = MINIBANK.read_text(encoding="utf-8")
_COUNTER = itertools.count()


def load(source: str) -> types.ModuleType:
    """Execute a (mutated) copy of minibank as a fresh module."""
    name = f"minibank_copy_{next(_COUNTER)}"
    module = types.ModuleType(name)
    sys.modules[name] = module  # dataclasses look their module up while the class is built
    try:
        exec(compile(source, name, "exec"), module.__dict__)  # noqa: S102 - our own fixture code
    finally:
        del sys.modules[name]
    return module


def state(bank: Any) -> dict[str, Any]:
    return dataclasses.asdict(bank)


def call(bank: Any, tool: str, **kwargs: Any) -> tuple[str, Any]:
    try:
        return "ok", getattr(bank, tool)(**kwargs)
    except Exception as exc:  # noqa: BLE001 - a tool's error is part of its behaviour
        return type(exc).__name__, str(exc)


# A fixed workload touching every tool, legal and illegal calls, falsy values included.
WORKLOAD: list[tuple[str, dict[str, Any]]] = [
    ("deposit", {"account_id": "A1", "amount": 5.0}),
    ("deposit", {"account_id": "C3", "amount": 5.0}),
    ("deposit", {"account_id": "ZZ", "amount": 5.0}),
    ("deposit", {"account_id": "A1", "amount": 0.0}),
    ("transfer", {"source_id": "A1", "target_id": "B2", "amount": 30.0, "memo": ""}),
    ("transfer", {"source_id": "D4", "target_id": "A1", "amount": 50.0}),
    ("transfer", {"source_id": "B2", "target_id": "B2", "amount": 1.0}),
    ("transfer", {"source_id": "ZZ", "target_id": "B2", "amount": 1.0}),
    ("transfer", {"source_id": "B2", "target_id": "ZZ", "amount": 1.0}),
    ("transfer", {"source_id": "B2", "target_id": "C3", "amount": 1.0}),
    ("transfer", {"source_id": "B2", "target_id": "A1", "amount": -1.0}),
    ("lock_account", {"account_id": "ZZ", "reason": "x"}),
    ("unlock_account", {"account_id": "ZZ"}),
    ("update_account", {"account_id": "ZZ", "owner": "x"}),
    ("charge_fee", {"account_id": "ZZ", "fee": 1.0}),
    ("get_balance", {"account_id": "ZZ"}),
    ("lock_account", {"account_id": "B2", "reason": "audit"}),
    ("unlock_account", {"account_id": "C3"}),
    ("update_account", {"account_id": "B2", "overdraft": False}),
    ("update_account", {"account_id": "A1", "owner": ""}),
    ("update_account", {"account_id": "A1"}),
    ("charge_fee", {"account_id": "A1", "fee": 0.0}),
    ("charge_fee", {"account_id": "D4", "fee": 2.5}),
    ("charge_fee", {"account_id": "D4", "fee": -1.0}),
    ("get_balance", {"account_id": "A1"}),
]


def behaviour(module: types.ModuleType) -> list[Any]:
    """Results and states of the workload in two environments built one after the other (so a
    leak between environments shows too)."""
    out = []
    for _ in range(2):
        bank = module.make_bank()
        for tool, kwargs in WORKLOAD:
            out.append((tool, call(bank, tool, **copy.deepcopy(kwargs)), state(bank)))
    return out


def test_fixture_tools_and_roots_are_found() -> None:
    facts = mutation.ModuleFacts(SOURCE, "minibank/bank.py")
    tools = {t.qualname: t for t in facts.targets if t.is_tool}
    assert set(tools) == {"Bank.deposit", "Bank.transfer", "Bank.lock_account", "Bank.unlock_account",
                          "Bank.update_account", "Bank.charge_fee", "Bank.get_balance"}
    assert tools["Bank.deposit"].roots == {"self": "Bank"}
    assert tools["Bank.transfer"].aliases == {"source", "target"}
    assert len(facts.writes(tools["Bank.transfer"])) == 3
    assert facts.writes(tools["Bank.get_balance"]) == []


def test_every_operator_applies_to_the_fixture_and_every_mutant_compiles() -> None:
    all_mutants = mutation.mutants(SOURCE, "minibank/bank.py")
    assert {m.operator for m in all_mutants} == set(mutation.OPERATORS_BY_NAME)
    assert {m.defect_class for m in all_mutants} == set(mutation.DEFECT_CLASSES)
    assert len({m.id for m in all_mutants}) == len(all_mutants)
    for m in all_mutants:
        assert m.source != SOURCE
        compile(m.source, m.id, "exec")
        assert m.tools and m.line >= 1


def test_every_behavioural_mutant_changes_behaviour_on_the_workload() -> None:
    """Not a hand-picked sample: every mutant that is not a static-only shape must behave differently
    from the original on a fixed workload (a guard whose removal is caught by the next line still
    changes the error: a KeyError instead of the declared ValueError)."""
    original = behaviour(load(SOURCE))
    same = [m.id for m in mutation.mutants(SOURCE, "minibank/bank.py")
            if not m.static_only and behaviour(load(m.source)) == original]
    # Guards whose removal is caught by the next line anyway (a KeyError instead of a ValueError
    # still changes the error type, so these do differ) leave no equivalent survivors either.
    assert same == []


def test_controls_preserve_behaviour() -> None:
    controls = mutation.controls(SOURCE, "minibank/bank.py")
    assert {c.operator for c in controls} == {"rename-locals", "reorder-independent", "explicit-none-check"}
    original = behaviour(load(SOURCE))
    for c in controls:
        assert c.source != SOURCE
        assert behaviour(load(c.source)) == original, c.id


def _one(operator: str, function: str, source: str = SOURCE) -> list[mutation.Mutant]:
    return [m for m in mutation.mutants(source, "m.py", [operator]) if m.function == function]


def test_drop_write_deletes_exactly_one_write() -> None:
    found = _one("drop-write", "Bank.transfer")
    assert len(found) == 3
    removed = {m.description for m in found}
    assert "drop the state write `source.balance = source.balance - amount`" in removed
    for m in found:  # same number of lines: the write became `pass`
        assert len(m.source.splitlines()) == len(SOURCE.splitlines())


def test_truthify_turns_none_checks_into_truth_tests() -> None:
    found = _one("truthify", "Bank.update_account")
    texts = {m.description for m in found}
    assert "`owner is not None` turned into the truth test `owner`" in texts
    assert "`overdraft is not None` turned into the truth test `overdraft`" in texts
    m = next(x for x in found if "overdraft is not None" in x.description)
    assert m.argument == "overdraft"
    bank = load(m.source).make_bank()
    bank.update_account(account_id="B2", overdraft=False)
    assert bank.accounts["B2"].overdraft is True  # the legal False was dropped


def test_comment_guard_keeps_the_guard_as_comments() -> None:
    m = _one("comment-guard", "Bank.charge_fee")[1]
    assert "        # if fee < 0:\n        #     raise ValueError(\"Fee must not be negative\")\n" in m.source
    bank = load(m.source).make_bank()
    assert call(bank, "charge_fee", account_id="D4", fee=-1.0)[0] == "ok"


def test_pin_state_leaks_state_across_environments() -> None:
    m = _one("pin-state", "Bank.deposit")[0]
    module = load(m.source)
    first, second = module.make_bank(), module.make_bank()
    first.deposit(account_id="A1", amount=1.0)
    second.deposit(account_id="A1", amount=1.0)
    assert second.accounts["A1"].balance == 100.0  # the write went to the pinned first environment
    assert first.accounts["A1"].balance == 102.0


def test_drop_copy_makes_environments_share_module_state() -> None:
    found = mutation.mutants(SOURCE, "m.py", ["drop-copy"])
    assert [m.description.split("`")[1] for m in found] == [
        "copy.deepcopy(DEFAULT_ACCOUNTS)", "copy.deepcopy(DEFAULT_TRANSFERS)", "copy.deepcopy(DEFAULT_NOTES)"]
    assert set(found[0].tools) >= {"Bank.deposit", "Bank.transfer"}
    module = load(found[0].source)
    module.make_bank().deposit(account_id="A1", amount=1.0)
    assert module.make_bank().accounts["A1"].balance == 101.0


def test_extra_write_changes_a_field_the_tool_does_not_own() -> None:
    found = _one("extra-write", "Bank.lock_account")
    codes = {m.description.split("`")[1] for m in found}
    assert "self.fees_collected = self.fees_collected + 1" in codes
    assert all("self.notes" not in c for c in codes)  # lock_account writes notes itself


def test_arg_operators_leave_messages_and_guards_alone() -> None:
    m = next(x for x in _one("arg-constant", "Bank.lock_account") if x.argument == "reason")
    assert 'self.notes[account_id] = "toollint-mutant"' in m.source
    assert 'f"Account {account_id} locked."' in m.source
    swap = next(x for x in _one("arg-swap", "Bank.transfer") if x.argument == "source_id")
    assert "source = self.accounts[target_id]" in swap.source
    assert "if source_id not in self.accounts:" in swap.source


def test_generation_and_sampling_are_deterministic() -> None:
    a = mutation.mutants(SOURCE, "m.py")
    b = mutation.mutants(SOURCE, "m.py")
    assert [m.id for m in a] == [m.id for m in b]
    s1 = mutation.sample(a, 12, seed=3)
    assert [m.id for m in s1] == [m.id for m in mutation.sample(b, 12, seed=3)]
    assert [m.id for m in s1] != [m.id for m in mutation.sample(a, 12, seed=4)]
    assert len(s1) == 12
    assert {m.defect_class for m in s1} == set(mutation.DEFECT_CLASSES)  # spread over every class
    assert mutation.sample(a, None, seed=0) == a
    assert len(mutation.sample(a, 10_000, seed=0)) == len(a)


def test_a_module_without_tools_has_no_mutants() -> None:
    assert mutation.mutants("def f(x):\n    return x\n", "m.py") == []
    assert mutation.controls("", "m.py") == []


AGENTDOJO_EXPECTED = {
    # module: (operator, function, description fragment) that must be among its mutants
    "banking_client": ("truthy-gate", "set_balance", "`balance`"),
    "slack": ("comment-guard", "add_user_to_channel", "if user not in slack.users"),
    "calendar_client": ("truthify", "reschedule_calendar_event", "`new_end_time is not None`"),
    "travel_booking_client": ("drop-write", "reserve_car_rental", "reservation.end_time"),
    "email_client": ("drop-write", "Inbox.delete_email", "self.trash[email_id] = email"),
}


@pytest.mark.parametrize("module", sorted(AGENTDOJO_EXPECTED))
def test_operators_find_sites_in_real_agentdojo_code(agentdojo_src: Path, module: str) -> None:
    path = agentdojo_src / "default_suites" / "v1" / "tools" / f"{module}.py"
    found = mutation.mutants(path.read_text(encoding="utf-8"), str(path),
                             module_name=f"agentdojo.default_suites.v1.tools.{module}")
    operator, function, fragment = AGENTDOJO_EXPECTED[module]
    assert any(m.operator == operator and m.function == function and fragment in m.description for m in found)
    for m in found:
        compile(m.source, m.id, "exec")


def test_agentdojo_helper_mutants_name_the_tools_they_affect(agentdojo_src: Path) -> None:
    path = agentdojo_src / "default_suites" / "v1" / "tools" / "calendar_client.py"
    found = mutation.mutants(path.read_text(encoding="utf-8"), str(path), ["phantom-write"])
    helper = next(m for m in found if m.function == "Calendar.cancel_event")
    assert helper.tools == ("cancel_calendar_event",)


def test_the_mutation_arm_reads_parameters_from_the_shared_analysis() -> None:
    # One parameter model (ParamInfo): the base type and optionality the operators pick values by.
    from toollint.analysis import function_params

    fn = ast.parse("def f(a: float | None, b: Optional[list[str]] = None, *, c: 'Tx', d=1): pass").body[0]
    assert isinstance(fn, ast.FunctionDef)
    got = [(p.name, p.annotation_text, p.base, p.optional, p.has_default) for p in function_params(fn)]
    assert got == [
        ("a", "float | None", "float", True, False),
        ("b", "Optional[list[str]]", "list", True, True),
        ("c", "'Tx'", "'Tx'", False, False),
        ("d", "", "", False, True),
    ]
    facts = mutation.ModuleFacts(MINIBANK.read_text(encoding="utf-8"), str(MINIBANK))
    assert any(t.params for t in facts.targets)
    assert all(isinstance(p, ParamInfo) for t in facts.targets for p in t.params)
