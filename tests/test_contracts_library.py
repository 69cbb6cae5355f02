"""The bundled AgentDojo contract library, checked against the real agentdojo==0.1.35.

Uses the cached agentdojo venv from conftest (`agentdojo_python`, `agentdojo_src`): the library must
validate clean (quotes at their lines, tiers, state paths in the suites' schemas), `contracts draft`
must give a valid draft for every writer, and on live snapshots the clauses must hold on plain
calls and fail exactly where the known defects are.
"""

from __future__ import annotations

import io
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from toollint.contracts.cli import main
from toollint.contracts.draft import draft_contract
from toollint.contracts.host.predicate import PredicateTypeError
from toollint.contracts.loader import load_contract, load_contracts
from toollint.contracts.model import Contract
from toollint.contracts.validator import ValidationOptions, schema_has_path, validate
from toollint.dynamic.protocol import SERVICES

from toollint.profiles.agentdojo import CONTRACTS as AGENTDOJO_CONTRACTS
from toollint.profiles.agentdojo.contracts_support import state_schemas as agentdojo_state_schemas

TOOLS = "agentdojo.default_suites.v1.tools."
# Every AgentDojo v1 tool registered in a suite that writes environment state.
WRITERS = [
    "banking_client:send_money", "banking_client:schedule_transaction",
    "banking_client:update_scheduled_transaction", "user_account:update_password",
    "user_account:update_user_info", "slack:add_user_to_channel", "slack:send_direct_message",
    "slack:send_channel_message", "slack:invite_user_to_slack", "slack:remove_user_from_slack",
    "web:post_webpage", "web:get_webpage", "travel_booking_client:reserve_hotel",
    "travel_booking_client:reserve_restaurant", "travel_booking_client:reserve_car_rental",
    "email_client:send_email", "email_client:delete_email", "email_client:get_unread_emails",
    "calendar_client:create_calendar_event", "calendar_client:cancel_calendar_event",
    "calendar_client:reschedule_calendar_event", "calendar_client:add_calendar_event_participants",
    "cloud_drive_client:create_file", "cloud_drive_client:delete_file", "cloud_drive_client:append_to_file",
    "cloud_drive_client:share_file",
]

# Runs inside the agentdojo venv: each call in a fresh default environment, JSON snapshots around it.
PROBE = """
import json, sys
import pydantic_core
from agentdojo.functions_runtime import FunctionsRuntime
from agentdojo.task_suite import get_suites
suites = get_suites("v1")
out = []
for suite_name, tool, args in json.loads(sys.stdin.read()):
    suite = suites[suite_name]
    env = suite.load_and_inject_default_environment({})
    pre = env.model_dump(mode="json")
    result, error = FunctionsRuntime(suite.tools).run_function(env, tool, args)
    out.append({"tool": tool, "args": args, "pre": pre, "post": env.model_dump(mode="json"),
                "result": pydantic_core.to_jsonable_python(result), "error": error})
print(json.dumps(out))
"""

HAPPY = [
    [
        "banking",
        "send_money",
        {"recipient": "GB29NWBK60161331926819", "amount": 50.0, "subject": "Lunch", "date": "2024-05-01"},
    ],
    [
        "banking",
        "schedule_transaction",
        {
            "recipient": "GB29NWBK60161331926819",
            "amount": 50.0,
            "subject": "Gym",
            "date": "2024-06-01",
            "recurring": True,
        },
    ],
    ["banking", "update_scheduled_transaction", {"id": 7, "amount": 1200.0, "subject": "Rent 2"}],
    ["banking", "update_password", {"password": "hunter2"}],
    ["banking", "update_user_info", {"city": "Berlin"}],
    ["slack", "add_user_to_channel", {"user": "Alice", "channel": "private"}],
    ["slack", "send_direct_message", {"recipient": "Bob", "body": "hi"}],
    ["slack", "send_channel_message", {"channel": "general", "body": "hi all"}],
    ["slack", "invite_user_to_slack", {"user": "Dora", "user_email": "dora@example.com"}],
    ["slack", "remove_user_from_slack", {"user": "Alice"}],
    ["slack", "post_webpage", {"url": "https://www.example.com", "content": "hello"}],
    ["slack", "get_webpage", {"url": "www.awesome-news.com"}],
    [
        "travel",
        "reserve_hotel",
        {"hotel": "Le Marais Boutique", "start_day": "2024-05-01", "end_day": "2024-05-05"},
    ],
    ["travel", "reserve_restaurant", {"restaurant": "Chez Nous", "start_time": "2024-05-01 19:00"}],
    [
        "travel",
        "reserve_car_rental",
        {"company": "Paris Rent-a-Car", "start_time": "2024-05-01 09:00", "end_time": "2024-05-05 09:00"},
    ],
    [
        "travel",
        "create_calendar_event",
        {
            "title": "Trip",
            "start_time": "2024-05-01 09:00",
            "end_time": "2024-05-01 10:00",
            "participants": ["a@b.com"],
        },
    ],
    ["travel", "send_email", {"recipients": ["a@b.com"], "subject": "Hi", "body": "Body"}],
    [
        "workspace",
        "create_calendar_event",
        {"title": "Sync", "start_time": "2024-05-20 09:00", "end_time": "2024-05-20 10:00"},
    ],
    ["workspace", "cancel_calendar_event", {"event_id": "6"}],
    ["workspace", "reschedule_calendar_event", {"event_id": "6", "new_start_time": "2024-05-16 10:00"}],
    ["workspace", "add_calendar_event_participants", {"event_id": "6", "participants": ["x@y.com"]}],
    [
        "workspace",
        "send_email",
        {"recipients": ["a@b.com"], "subject": "Hi", "body": "Body", "cc": ["c@d.com"]},
    ],
    ["workspace", "delete_email", {"email_id": "0"}],
    ["workspace", "get_unread_emails", {}],
    ["workspace", "create_file", {"filename": "notes.txt", "content": "abc"}],
    ["workspace", "delete_file", {"file_id": "0"}],
    ["workspace", "append_to_file", {"file_id": "0", "content": "more"}],
    ["workspace", "share_file", {"file_id": "0", "email": "x@y.com", "permission": "rw"}],
]

# The known defects, each as a probe and the agent-visible clause it must break.
DEFECTS = [
    (["banking", "update_scheduled_transaction", {"id": 7, "amount": 0}], "eff.amount_set"),
    (["banking", "update_scheduled_transaction", {"id": 6, "recurring": False}], "eff.recurring_set"),
    (["banking", "update_user_info", {"street": ""}], "eff.street_set"),
    (["travel", "reserve_car_rental", {"company": "Paris Rent-a-Car", "start_time": "2024-05-01 09:00",
                                       "end_time": "2024-05-05 09:00"}], "eff.end_time_stored"),
    (["workspace", "add_calendar_event_participants", {"event_id": "6", "participants": ["x@y.com"]}],
     "eff.new_participants_emailed"),
]


@pytest.fixture(scope="module")
def library() -> dict[str, Contract]:
    """The writers' contracts (the readers' live in `agentdojo/readers/`, checked in their own tests)."""
    contracts, errors = load_contracts([AGENTDOJO_CONTRACTS])
    assert errors == []
    return {c.tool_name: c for c in contracts if c.path.parent.name != "readers"}


INVITES = [
    ["slack", "invite_user_to_slack", {"user": "Dora", "user_email": "dora@example.com"}],
    ["slack", "invite_user_to_slack", {"user": "Dora", "user_email": "someone.else@example.com"}],
]


@pytest.fixture(scope="module")
def probes(agentdojo_python: Path) -> dict[str, list[dict[str, Any]]]:
    """Every probe of this module in one agentdojo process (its import dominates the cost)."""
    groups = {"happy": HAPPY, "defects": [call for call, _ in DEFECTS], "invites": INVITES}
    calls = [call for group in groups.values() for call in group]
    out = subprocess.run([str(agentdojo_python), "-c", PROBE], input=json.dumps(calls), capture_output=True,
                         text=True, timeout=600, check=True)
    records = json.loads(out.stdout.strip().splitlines()[-1])
    result, start = {}, 0
    for name, group in groups.items():
        result[name] = records[start:start + len(group)]
        start += len(group)
    return result


def broken_clauses(contract: Contract, record: dict[str, Any]) -> dict[str, str]:
    """Clause id -> tier, for every clause whose predicate is false (or cannot be evaluated)."""
    broken = {}
    for clause in contract.counted_clauses:
        if clause.predicate is None:
            continue
        try:
            ok = clause.predicate.evaluate(record["pre"], record["post"], record["args"], record["result"])
        except PredicateTypeError as exc:
            raise AssertionError(f"{contract.tool_name} {clause.id}: {exc}") from None
        if not ok:
            broken[clause.id] = clause.provenance.tier
    return broken


def test_library_covers_every_writer_once(library: dict[str, Contract]) -> None:
    assert sorted(c.tool for c in library.values()) == sorted(TOOLS + w for w in WRITERS)
    for contract in library.values():
        assert contract.adapter["name"] == "agentdojo"
        assert contract.adapter["suite"] in ("banking", "slack", "travel", "workspace")
        assert contract.adapter["depends"], contract.tool_name
        assert not contract.is_draft and contract.clauses_of("eff")


def test_bundled_library_validates_clean_against_installed_agentdojo(
        agentdojo_src: Path, agentdojo_python: Path) -> None:
    schemas = agentdojo_state_schemas(str(agentdojo_python), SERVICES)
    assert sorted(schemas) == ["banking", "slack", "travel", "workspace"]
    options = ValidationOptions(package_dirs={"agentdojo": agentdojo_src}, state_schemas=schemas)
    assert [f"{f.path}:{f.line}: {f.code} {f.message}" for f in validate([], options=options)] == []
    # Check 8 is live against the real schema: a misspelt collection is not a path.
    assert schema_has_path(schemas["banking"], "bank_account.scheduled_transactions[*].recurring")
    assert not schema_has_path(schemas["banking"], "bank_account.scheduled_transaction[*].recurring")


def test_cli_check_with_no_dirs_checks_the_bundled_library(agentdojo_src: Path) -> None:
    from _corpora import Unavailable, tau2_root

    # Every profile's bundled contracts are checked: tau2's too, against its checkout when there is one.
    try:
        tau2 = ["--tau2-src", str(tau2_root() / "src" / "tau2")]
    except Unavailable:
        tau2 = []
    out, err = io.StringIO(), io.StringIO()
    assert main(["check", "--agentdojo-src", str(agentdojo_src), *tau2], stdout=out, stderr=err) == 0
    if tau2:
        assert out.getvalue() == "All contracts passed.\n"
    else:  # only tau2's cited sources went unchecked, and a warning says so
        assert "package 'tau2' is not installed here" in err.getvalue() and "agentdojo" not in err.getvalue()


def test_library_finds_a_moved_quote(agentdojo_src: Path, tmp_path: Path) -> None:
    """Check 4 really reads the installed file: shift one line and the citation breaks."""
    fake = tmp_path / "agentdojo"
    target = fake / "default_suites" / "v1" / "tools"
    target.mkdir(parents=True)
    source = (agentdojo_src / "default_suites" / "v1" / "tools" / "banking_client.py").read_text()
    (target / "banking_client.py").write_text("\n" + source)
    contract = AGENTDOJO_CONTRACTS / "update_scheduled_transaction.yaml"
    findings = validate([contract], options=ValidationOptions(package_dirs={"agentdojo": fake}))
    assert findings and {f.code for f in findings} == {"TL304"}


@pytest.mark.parametrize("writer", WRITERS)
def test_draft_for_every_writer_is_valid(writer: str, agentdojo_src: Path, tmp_path: Path) -> None:
    out = tmp_path / "draft.yaml"
    err = io.StringIO()
    code = main(["draft", TOOLS + writer, "--src", str(agentdojo_src), "-o", str(out)], stderr=err)
    assert code == 0, err.getvalue()
    contract = load_contract(out)
    assert contract.tool == TOOLS + writer and contract.is_draft and contract.counted_clauses == []
    assert contract.clauses_of("eff", include_drafts=True)
    assert contract.adapter["depends"] == load_contract(
        AGENTDOJO_CONTRACTS / f"{contract.tool_name}.yaml").adapter["depends"]
    assert validate([out], options=ValidationOptions(package_dirs={"agentdojo": agentdojo_src})) == []


def test_clauses_hold_on_plain_calls_except_where_the_tool_is_defective(
        probes: dict[str, list[dict[str, Any]]], library: dict[str, Contract]) -> None:
    records = probes["happy"]
    assert {r["tool"] for r in records} == {c.tool_name for c in library.values()}
    broken = {}
    for record in records:
        assert record["error"] is None, record
        found = broken_clauses(library[record["tool"]], record)
        if found:
            broken[record["tool"]] = found
    assert broken == {
        # real defects, agent-visible
        "reserve_car_rental": {"eff.end_time_stored": "agent-visible"},
        "add_calendar_event_participants": {"eff.new_participants_emailed": "agent-visible"},
        # where the docstring is silent: author-specified, never headline
        "send_money": {"eff.balance_debited": "author-specified"},
        "reschedule_calendar_event": {"eff.notification_names_event": "author-specified"},
    }


def test_known_defects_break_their_agent_visible_clauses(
        probes: dict[str, list[dict[str, Any]]], library: dict[str, Contract]) -> None:
    records = probes["defects"]
    for record, (_, clause_id) in zip(records, DEFECTS):
        assert record["error"] is None
        broken = broken_clauses(library[record["tool"]], record)
        assert broken.get(clause_id) == "agent-visible", (record["args"], broken)


def test_effective_arguments_declared_for_the_ignored_argument_defects(
        probes: dict[str, list[dict[str, Any]]], library: dict[str, Contract]) -> None:
    ust = library["update_scheduled_transaction"].effective_args
    assert ust["amount"].falsy_legal and ust["recurring"].falsy_legal
    for clause_id, arg in (("eff.amount_set", "amount"), ("eff.recurring_set", "recurring")):
        clause = library["update_scheduled_transaction"].clause(clause_id)
        assert clause is not None and clause.predicate is not None and arg in clause.predicate.args_read
    assert library["update_user_info"].effective_args["street"].falsy_legal
    # invite_user_to_slack: two calls differing only in user_email leave identical post-states.
    assert "user_email" in library["invite_user_to_slack"].effective_args
    a, b = probes["invites"]
    assert a["error"] is None and b["error"] is None and a["post"] == b["post"]


def test_the_worked_example_in_the_docs_validates(agentdojo_src: Path, tmp_path: Path) -> None:
    doc = (Path(__file__).parent.parent / "docs" / "contracts.md").read_text()
    example = doc.split("```yaml\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "update_scheduled_transaction.yaml"
    path.write_text(example)
    assert validate([path], options=ValidationOptions(package_dirs={"agentdojo": agentdojo_src})) == []
    contract = load_contract(path)
    assert list(contract.effective_args) == ["amount", "recurring"]


def test_draft_keeps_claims_that_continue_a_parameter_description(agentdojo_src: Path) -> None:
    text = draft_contract(TOOLS + "travel_booking_client:reserve_restaurant", [agentdojo_src])
    assert '"The end time is automatically set to be two hours after the start of the reservation."' in text
    assert "      line: 369\n" in text


# What a plain call may change without any frame clause noticing: the fields each tool is declared to
# write. Perturbing any other field of any part of the post-state must break a frame clause.
DECLARED_WRITES = {
    "send_money": {"bank_account.balance"},  # eff.balance_debited (the ledger entry is checked by position)
    "update_password": {"user_account.password"},
    "update_user_info": {"user_account.city"},  # the one argument the probe passes
    "invite_user_to_slack": {
        "slack.users",
        "slack.user_channels",
        "slack.user_inbox",
    },  # the new user's entries
    "post_webpage": {"web.web_content", "web.web_requests"},  # the posted page and its logged request
    "get_webpage": {"web.web_requests"},
    **{
        tool: {
            "reservation." + f
            for f in ("reservation_type", "title", "start_time", "end_time", "contact_information")
        }
        for tool in ("reserve_hotel", "reserve_restaurant", "reserve_car_rental")
    },
    **{
        tool: {"inbox.emails", "inbox.sent"}  # the email sent (the last one), nothing else of the inbox
        for tool in (
            "send_email",
            "create_calendar_event",
            "cancel_calendar_event",
            "reschedule_calendar_event",
        )
    },
    "delete_email": {"inbox.trash"},  # the trashed email is the trash's only entry
}


def _perturbed(value: Any) -> Any:
    """A different value of the same shape: one element fewer (or one more when empty), a changed scalar."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1
    if isinstance(value, str):
        return value + " (x)"
    if isinstance(value, list):
        return value[:-1] if value else ["x"]
    if isinstance(value, dict):
        return dict(list(value.items())[:-1]) if value else {"x": None}
    return "x"


def _holds(clause: Any, record: dict[str, Any], post: Any) -> bool | None:
    try:
        return clause.predicate.evaluate(record["pre"], post, record["args"], record["result"]) is True
    except PredicateTypeError:
        return None


def test_frame_clauses_cover_every_field_the_tool_is_not_declared_to_write(
        probes: dict[str, list[dict[str, Any]]], library: dict[str, Contract]) -> None:
    unnoticed: dict[str, set[str]] = {}
    for record in probes["happy"]:
        frames = [c for c in library[record["tool"]].clauses_of("frame") if c.predicate is not None]
        assert frames and all(_holds(c, record, record["post"]) for c in frames), record["tool"]
        for part, fields in record["post"].items():
            for field in fields:
                post = json.loads(json.dumps(record["post"]))
                post[part][field] = _perturbed(post[part][field])
                if not any(_holds(c, record, post) is False for c in frames):
                    unnoticed.setdefault(record["tool"], set()).add(f"{part}.{field}")
    assert unnoticed == DECLARED_WRITES
