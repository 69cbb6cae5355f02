"""Evidence on the real benchmark: the bundled AgentDojo contracts checked through the host running in
agentdojo 0.1.35's own venv. The two published AgentDojo defects are confirmed, conforming tools
conform, and a witness replays."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from toollint.contracts.loader import load_contracts
from toollint.dynamic.confirm import ConfirmRun, run_confirm, verdict_for
from toollint.dynamic.replay import replay

from toollint.evidence import Evidence
from toollint.model import Finding
from toollint.profiles.agentdojo import CONTRACTS as AGENTDOJO_CONTRACTS
from toollint.settings import Settings

TOOLS = ("update_scheduled_transaction", "schedule_transaction", "reserve_car_rental", "reserve_hotel",
         "reserve_restaurant")


@pytest.fixture(scope="module")
def run(agentdojo_python: Path, tmp_path_factory: pytest.TempPathFactory) -> ConfirmRun:
    contracts, errors = load_contracts([AGENTDOJO_CONTRACTS])
    assert errors == []
    chosen = [c for c in contracts if c.tool_name in TOOLS]
    assert sorted(c.tool_name for c in chosen) == sorted(TOOLS)
    return run_confirm(chosen, Settings(), python=str(agentdojo_python),
                       witness_dir=tmp_path_factory.mktemp("witnesses"))


def test_exact_verdict_table(run: ConfirmRun) -> None:
    table = {r.tool: (r.verdict, {row.clause_id: row.code for row in r.violations}) for r in run.reports}
    assert table == {
        "update_scheduled_transaction": ("VIOLATES", {
            "eff.amount_set": "TL202", "arg.amount": "TL202",
            "eff.recurring_set": "TL202", "arg.recurring": "TL202",
            "eff.subject_set": "TL202", "arg.subject": "TL202",  # `if subject:` drops "" the same way
        }),
        "reserve_car_rental": ("VIOLATES", {"eff.end_time_stored": "TL202", "arg.end_time": "TL202"}),
        "schedule_transaction": ("CONFORMS", {}),
        "reserve_hotel": ("CONFORMS", {}),
        "reserve_restaurant": ("CONFORMS", {}),
    }
    assert all(row.rerun and row.rerun["agrees"] for r in run.reports for row in r.violations)
    untestable = [
        (r.tool, row.clause_id) for r in run.reports for row in r.clause_rows if row.verdict == "UNTESTABLE"
    ]
    assert untestable == []


def _witness(run: ConfirmRun, clause: str, tool: str) -> dict:  # type: ignore[type-arg]
    f = next(f for f in run.findings if f.tool == tool and f.properties["clause"] == clause)
    return json.loads(Path(f.properties["witness"]).read_text())


def test_amount_zero_is_ignored(run: ConfirmRun) -> None:
    w = _witness(run, "arg.amount", "update_scheduled_transaction")
    assert w["probe"]["effective_args"]["amount"] == 0.0
    assert w["probe"]["result"]["status"] == "ok"
    assert w["probe"]["result"]["value"]["message"].endswith("updated.")
    # Its partner differs only in amount (the transaction's current value) and left the same state.
    assert w["partner"]["effective_args"]["amount"] != 0.0
    assert {k: v for k, v in w["partner"]["effective_args"].items() if k != "amount"} == \
        {k: v for k, v in w["probe"]["effective_args"].items() if k != "amount"}
    assert w["probe"]["post_state_hash"] == w["partner"]["post_state_hash"]
    assert w["benchmark"]["version"] == "0.1.35" and w["benchmark"]["variant"] == "v1.2.2/banking"


def test_recurring_false_is_ignored(run: ConfirmRun) -> None:
    w = _witness(run, "eff.recurring_set", "update_scheduled_transaction")
    assert w["probe"]["effective_args"]["recurring"] is False
    tid = w["probe"]["effective_args"]["id"]
    assert {"expr": f"pre.bank_account.scheduled_transactions{{id={tid}}}.recurring", "value": True} in \
        w["evaluation"]["bindings"]
    assert not any(op["path"].endswith("/recurring") for op in w["probe"]["diff"])


def test_car_rental_end_time_is_never_stored(run: ConfirmRun) -> None:
    w = _witness(run, "eff.end_time_stored", "reserve_car_rental")
    end = w["probe"]["effective_args"]["end_time"]
    after = {op["path"]: op["after"] for op in w["probe"]["diff"]}
    assert after["/reservation/end_time"] == after["/reservation/start_time"]  # start_time stored twice
    assert after["/reservation/end_time"] != end.replace(" ", "T") + ":00"
    assert f"to {end} has been made successfully" in w["probe"]["result"]["value"]


def test_witness_replays_in_a_fresh_agentdojo_worker(run: ConfirmRun, agentdojo_python: Path) -> None:
    f = next(f for f in run.findings if f.properties["clause"] == "arg.amount")
    outcome = replay(f.properties["witness"], repeat=1, python=str(agentdojo_python))
    assert outcome.code == 1, outcome.sentence
    assert outcome.sentence.startswith("STILL VIOLATES arg.amount (TL202): update_scheduled_transaction(")


def test_a_static_finding_on_an_argument_gets_that_arguments_verdict(run: ConfirmRun) -> None:
    # toollint's TL104 flags `if amount:` and `if date:` alike; the contract says 0 is a legal amount
    # but "" is not a legal date, so only the first is confirmed.
    report = next(r for r in run.reports if r.tool == "update_scheduled_transaction")

    def flagged(param: str) -> Finding:
        return Finding(
            "TL104", "truthiness", "banking_client.py", 138, tool=report.tool, properties={"param": param},
            evidence=Evidence(parameter=param),  # what --confirm reads (issue 25's typed evidence)
        )

    verdict, witness, scope = verdict_for(flagged("amount"), report)
    assert (
        (verdict, scope) == ("VIOLATES", "argument") and witness and "update_scheduled_transaction" in witness
    )
    assert verdict_for(flagged("date"), report) == ("CONFORMS", None, "argument")
    assert verdict_for(flagged("recurring"), report)[0] == "VIOLATES"
    assert verdict_for(Finding("TL101", "literal", "banking_client.py", 149, tool=report.tool), report)[
        ::2
    ] == ("VIOLATES", "tool")


def test_each_static_finding_gets_the_verdict_of_the_clauses_that_test_it(
        agentdojo_python: Path, agentdojo_src: Path, tmp_path: Path) -> None:
    """On the real banking tools: the five TL104 findings of update_scheduled_transaction each get
    their own argument's clauses, so `if recipient:`/`if date:` CONFORM beside three VIOLATES, each
    with its own witness; TL101 is tested by the effects reading what the tool writes."""
    from toollint.dynamic.confirm import confirm

    from toollint.engine import lint_paths

    tool_file = str(agentdojo_src / "default_suites" / "v1" / "tools" / "banking_client.py")
    static = lint_paths([tool_file], Settings(confidence="low")).reported  # the type-only premises too
    _, run = confirm(static, Settings(), python=str(agentdojo_python), witness_dir=tmp_path / "w",
                     linted=[tool_file])
    assert [r.tool for r in run.reports] == ["update_scheduled_transaction"]
    got = {(f.code, f.properties.get("param")): (f.properties["verdict"], f.properties["verdict_scope"],
                                                 f.properties["clauses"],
                                                 Path(f.properties.get("witness") or "-").name)
           for f in static if f.tool == "update_scheduled_transaction"}
    assert got == {
        ("TL104", "recipient"): ("CONFORMS", "argument", ["eff.recipient_set", "arg.recipient"], "-"),
        ("TL104", "amount"): ("VIOLATES", "argument", ["eff.amount_set", "arg.amount"],
                              "update_scheduled_transaction.eff.amount_set.arg.1.json"),
        ("TL104", "subject"): ("VIOLATES", "argument", ["eff.subject_set", "arg.subject"],
                               "update_scheduled_transaction.eff.subject_set.arg.1.json"),
        ("TL104", "date"): ("CONFORMS", "argument", ["eff.date_set", "arg.date"], "-"),
        ("TL104", "recurring"): ("VIOLATES", "argument", ["eff.recurring_set", "arg.recurring"],
                                 "update_scheduled_transaction.eff.recurring_set.arg.1.json"),
        ("TL101", None): ("VIOLATES", "state", ["eff.recipient_set", "eff.amount_set", "eff.subject_set",
                                                 "eff.date_set", "eff.recurring_set", "eff.unset_fields_kept",
                                                 "success"],
                          "update_scheduled_transaction.eff.amount_set.arg.1.json"),
    }
