"""Contracts for AgentDojo's workspace READER tools (email, calendar, cloud drive), checked on the
real agentdojo==0.1.35.

A reader's contract says what its reply must be, computed from the pre-state and the arguments
(`eff.*`: exactly the records the arguments select, as stored), that it writes nothing
(`frame.nothing_changed`, and an empty `adapter.frame`, so the checker's implicit write-set row
flags any change), and which calls it refuses (`pre.*`). It has no `arg.*` clause: the checker
scores those on the state two calls leave, and a reader leaves none.

The predicate language has no `str.lower()`, and the searches match case-insensitively, so the
contracts fold case by rendering a string as the repr of its list of lowered characters (see the
contracts' descriptions); the first tests pin that reading down on hand-made states, without the
benchmark. The rest run the dynamic checker once, in agentdojo's own venv.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from source_edits import edit_function
from toollint.contracts.loader import load_contracts
from toollint.contracts.model import Contract
from toollint.contracts.validator import ValidationOptions, validate
from toollint.dynamic.checker import CheckOptions, ToolReport, check_group
from toollint.dynamic.confirm import ConfirmRun, run_confirm
from toollint.dynamic.protocol import WorkerSpec

from toollint.profiles.agentdojo import CONTRACTS as AGENTDOJO_CONTRACTS
from toollint.settings import Settings
from toollint.validate.harness import package_overlay

READERS = {
    "get_draft_emails": "email_client", "get_received_emails": "email_client",
    "get_sent_emails": "email_client", "search_contacts_by_email": "email_client",
    "search_contacts_by_name": "email_client", "search_emails": "email_client",
    "get_current_day": "calendar_client", "get_day_calendar_events": "calendar_client",
    "search_calendar_events": "calendar_client",
    "get_file_by_id": "cloud_drive_client", "list_files": "cloud_drive_client",
    "search_files": "cloud_drive_client", "search_files_by_filename": "cloud_drive_client",
}
# Every suite that registers the tool (agentdojo 0.1.35's get_suites("v1")).
ALSO_IN_TRAVEL = {"get_day_calendar_events", "search_calendar_events"}
READERS_DIR = AGENTDOJO_CONTRACTS / "readers"
TOOLS_DIR = Path("default_suites") / "v1" / "tools"


def _paths() -> list[Path]:
    # Only this file's contracts: the directory is shared with the other suites' readers.
    return [READERS_DIR / f"{tool}.yaml" for tool in READERS]


@pytest.fixture(scope="module")
def contracts() -> dict[str, Contract]:
    loaded, errors = load_contracts(_paths())
    assert errors == []
    assert sorted(c.tool_name for c in loaded) == sorted(READERS)
    return {c.tool_name: c for c in loaded}


def table(reports: list[ToolReport]) -> dict[str, tuple[str, dict[str, str | None]]]:
    return {r.tool: (r.verdict, {row.clause_id: row.code for row in r.violations}) for r in reports}


# --- the files ------------------------------------------------------------------------------------


def test_contracts_validate_against_installed_source(agentdojo_src: Path) -> None:
    # Quotes at their lines, tiers, kinds, ids, grammar. The state paths (TL308) are checked below
    # against the live snapshot: the suites' JSON Schemas cost a 20 s start of the agentdojo venv.
    options = ValidationOptions(package_dirs={"agentdojo": agentdojo_src})
    assert [f"{f.path}:{f.line}: {f.code} {f.message}" for f in validate(_paths(), options=options)] == []


def test_every_contract_is_a_reader_contract(contracts: dict[str, Contract]) -> None:
    for name, c in contracts.items():
        assert c.module == f"agentdojo.default_suites.v1.tools.{READERS[name]}", name
        assert "frame.nothing_changed" in [cl.id for cl in c.clauses], name
        assert not c.clauses_of("arg"), name  # a reader leaves no state to tell arguments apart by
        assert c.clauses_of("eff"), name
        assert c.adapter["frame"] == [], name  # the implicit write-set: nothing
        suites = ["travel", "workspace"] if name in ALSO_IN_TRAVEL else ["workspace"]
        assert c.adapter["suite"] == "workspace" and c.adapter["suites"] == suites, name
        assert c.success is not None and not c.success.biconditional, name
        assert not c.is_draft, name


# --- the case-folded matching, on hand-made states -------------------------------------------------


def _email(id_: str, sender: str, subject: str, body: str, status: str = "received") -> dict[str, Any]:
    return {"id_": id_, "sender": sender, "subject": subject, "body": body, "status": status}


INBOX = {"inbox": {"emails": {
    "0": _email("0", "Lily.White@gmail.com", "Birthday PARTY", "Come at 6."),
    "1": _email("1", "bob@x.com", "Lunch", "After the party, lunch?"),
    "2": _email("2", "lily.white@gmail.com", "Invoice", "It's attached: 'draft' copy."),
    "3": _email("3", "carol@x.com", "Parts list", "p, a, r, t, y"),
}}}


def _eval(contract: Contract, clause_id: str, args: dict[str, Any], result: Any, state: Any) -> bool:
    clause = next(c for c in contract.clauses if c.id == clause_id)
    assert clause.predicate is not None
    return bool(clause.predicate.evaluate(state, state, args, result))


@pytest.mark.parametrize(("query", "sender", "ids"), [
    ("party", None, ["0", "1"]),          # subject in capitals, and a body
    ("PARTY", None, ["0", "1"]),          # the query's case does not matter either
    ("party", "LILY.WHITE@gmail.com", ["0"]),  # nor the sender's
    ("", None, ["0", "1", "2", "3"]),     # "If empty, all emails are returned."
    ("", "lily.white@gmail.com", ["0", "2"]),
    ("it's attached: 'draft'", None, ["2"]),  # quotes and punctuation survive the folding
    ("t, y", None, ["3"]),                # separators inside the text are not the rendering's own
    ("p', 'a", None, []),                 # nor can a query straddle two characters' reprs
])
def test_search_emails_reply_is_exactly_the_case_insensitive_matches(
        contracts: dict[str, Contract], query: str, sender: str | None, ids: list[str]) -> None:
    c = contracts["search_emails"]
    args = {"query": query, "sender": sender}
    exact = [INBOX["inbox"]["emails"][i] for i in ids]
    assert _eval(c, "eff.returns_matches", args, exact, INBOX)
    assert _eval(c, "pre.some_email_matches", args, None, INBOX) is bool(ids)
    every = list(INBOX["inbox"]["emails"].values())
    if len(ids) < len(every):  # a reply that ignores the query or the sender is not the reply
        assert not _eval(c, "eff.returns_matches", args, every, INBOX)
    if ids:
        assert not _eval(c, "eff.returns_matches", args, exact[1:], INBOX)  # one left out
    assert not _eval(c, "eff.returns_matches", args, None, INBOX)  # a raise is no reply


def test_search_emails_reply_records_must_be_the_stored_ones(contracts: dict[str, Contract]) -> None:
    c = contracts["search_emails"]
    args = {"query": "lunch", "sender": None}
    stored = INBOX["inbox"]["emails"]["1"]
    assert _eval(c, "eff.records_as_stored", args, [stored], INBOX)
    assert not _eval(c, "eff.records_as_stored", args, [{**stored, "body": "no lunch"}], INBOX)
    assert not _eval(c, "eff.only_from_sender", {"query": "", "sender": "bob@x.com"},
                     [stored, INBOX["inbox"]["emails"]["3"]], INBOX)


def test_contact_and_file_searches_match_part_of_a_field_ignoring_case(
    contracts: dict[str, Contract],
) -> None:
    contacts = [{"email": "support@bluesparrowtech.com", "name": "Support"},
                {"email": "support@techservices.com", "name": "Support"},
                {"email": "emma.johnson@bluesparrowtech.com", "name": "Emma Johnson"}]
    state = {"inbox": {"contact_list": contacts}}
    by_name, by_email = contracts["search_contacts_by_name"], contracts["search_contacts_by_email"]
    assert _eval(by_name, "eff.returns_matches", {"query": "SUPP"}, contacts[:2], state)
    assert not _eval(by_name, "eff.returns_matches", {"query": "SUPP"}, contacts[:1], state)  # one of two
    assert not _eval(by_name, "eff.returns_matches", {"query": "emma"},  # not as stored
                     [{**contacts[2], "name": "Emma"}], state)
    assert _eval(
        by_email, "eff.returns_matches", {"query": "BlueSparrowTech.com"}, [contacts[0], contacts[2]], state
    )
    assert not _eval(
        by_email, "pre.contact_found", {"query": "Emma Johnson"}, None, state
    )  # a name, not an email
    files = {"cloud_drive": {"files": {
        "0": {"id_": "0", "filename": "Budget-2024.xlsx", "content": "Q1 TOTAL: 100"},
        "1": {"id_": "1", "filename": "notes.txt", "content": "budget notes"},
    }}}
    rows = files["cloud_drive"]["files"]
    search, by_filename = contracts["search_files"], contracts["search_files_by_filename"]
    assert _eval(search, "eff.returns_matches", {"query": "total"}, [rows["0"]], files)
    assert _eval(
        search, "eff.returns_matches", {"query": "Budget"}, [rows["1"]], files
    )  # content, not the name
    assert not _eval(search, "pre.some_file_matches", {"query": "xlsx"}, None, files)
    assert _eval(by_filename, "eff.returns_matches", {"filename": "budget"}, [rows["0"]], files)
    assert _eval(
        by_filename, "eff.returns_matches", {"filename": "pdf"}, [], files
    )  # no match: an empty list


def test_searches_by_date_keep_the_events_that_start_that_day(contracts: dict[str, Contract]) -> None:
    events = {"calendar": {"events": {
        "1": {"id_": "1", "title": "Team Sync", "description": "", "start_time": "2024-05-15T10:00:00"},
        "2": {"id_": "2", "title": "Lunch", "description": "team lunch", "start_time": "2024-05-15T12:00:00"},
        "3": {"id_": "3", "title": "TEAM offsite", "description": "", "start_time": "2024-05-16T09:00:00"},
    }}}
    search = contracts["search_calendar_events"]
    rows = events["calendar"]["events"]
    assert _eval(
        search, "eff.returns_matches", {"query": "team", "date": "2024-05-15"}, [rows["1"], rows["2"]], events
    )
    assert _eval(search, "eff.returns_matches", {"query": "team", "date": None}, list(rows.values()), events)
    assert not _eval(
        search, "eff.returns_matches", {"query": "team", "date": "2024-05-15"}, list(rows.values()), events
    )
    assert not _eval(search, "pre.date_format", {"query": "team", "date": "15/05/2024"}, None, events)
    day = contracts["get_day_calendar_events"]
    assert _eval(day, "eff.returns_day_events", {"day": "2024-05-16"}, [rows["3"]], events)
    assert not _eval(day, "eff.returns_day_events", {"day": "2024-05-16"}, [], events)
    assert not _eval(day, "pre.day_format", {"day": ""}, None, events)


# --- the published tools ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def run(checked: tuple[ConfirmRun, list[ToolReport]]) -> ConfirmRun:
    return checked[0]


def test_exact_verdict_table(run: ConfirmRun) -> None:
    assert table(run.reports) == {name: ("CONFORMS", {}) for name in READERS}
    for r in run.reports:
        # A reader's optional arguments imply no arg.* row: the checker would compare the state two
        # calls leave, and a reader leaves none (it used to report a false TL202 on search_emails's
        # `sender` and search_calendar_events's `date`).
        assert not [row for row in r.rows if row.kind == "arg"], r.tool
        assert all(row.verdict == "CONFORMS" for row in r.rows if row.clause_id == "frame.write_set"), r.tool


def test_every_counted_clause_is_scored(run: ConfirmRun) -> None:
    untestable = [(r.tool, row.clause_id, row.reason) for r in run.reports for row in r.clause_rows
                  if row.verdict == "UNTESTABLE"]
    # search_files's "no match -> ValueError" is probed with a query that occurs in no string of the
    # snapshot (an unused id such as "26" still occurs inside some file's text).
    assert untestable == []
    # Every precondition was violated by a probe and refused with the declared ValueError.
    pres = {
        (r.tool, row.clause_id): row.verdict
        for r in run.reports
        for row in r.clause_rows
        if row.kind == "pre"
    }
    assert pres == {
        ("search_contacts_by_email", "pre.contact_found"): "CONFORMS",
        ("search_contacts_by_name", "pre.contact_found"): "CONFORMS",
        ("search_emails", "pre.some_email_matches"): "CONFORMS",
        ("get_day_calendar_events", "pre.day_format"): "CONFORMS",
        ("search_calendar_events", "pre.date_format"): "CONFORMS",
        ("search_calendar_events", "pre.some_event_matches"): "CONFORMS",
        ("get_file_by_id", "pre.file_exists"): "CONFORMS",
        ("search_files", "pre.some_file_matches"): "CONFORMS",
    }
    refused = [(r.tool, p.probe.clause, p.result.get("error_type")) for r in run.reports for p in r.runs
               if p.probe.kind == "pre_violating"]
    assert refused and all(err == "ValueError" for _, _, err in refused)
    assert {(tool, clause) for tool, clause, _ in refused} == {k for k, v in pres.items() if v == "CONFORMS"}


def _resolves(node: Any, segments: list[str]) -> bool:
    """Whether a canonical state path (`inbox.emails[*].subject`) names data in a JSON snapshot."""
    if not segments:
        return True
    head, rest = segments[0], segments[1:]
    if head == "[*]":
        items = node if isinstance(node, list) else list(node.values()) if isinstance(node, dict) else None
        return items is not None and all(_resolves(item, rest) for item in items)
    return isinstance(node, dict) and head in node and _resolves(node[head], rest)


def test_every_state_path_read_is_in_the_live_snapshot(
    contracts: dict[str, Contract], run: ConfirmRun
) -> None:
    pristine = {r.tool: r.runs[0].pre for r in run.reports}
    for name, c in contracts.items():
        paths = {p for cl in c.clauses if cl.predicate is not None for p in cl.predicate.paths}
        assert paths, name
        for path in paths:
            assert _resolves(pristine[name], re.findall(r"\[\*\]|[^.\[\]]+", path)), (name, path)
    # The check can fail: a misspelt field is not in the snapshot.
    assert not _resolves(pristine["search_emails"], ["inbox", "emails", "[*]", "sendr"])


def test_what_the_probes_reach(run: ConfirmRun) -> None:
    """The calls the scores above stand on: each reply was checked against the set the contract
    computes from the pre-state, so an argument is only as tested as the values it was given."""
    legal = {r.tool: [p.args for p in r.runs if p.status == "ok"] for r in run.reports}
    # search_emails: a real subject from lily.white, another sender with a match, other queries.
    assert legal["search_emails"][0] == {"query": "Birthday Party", "sender": "lily.white@gmail.com"}
    assert len({a["sender"] for a in legal["search_emails"]}) >= 2
    assert len({a["query"] for a in legal["search_emails"]}) >= 3
    for tool, arg in (("search_contacts_by_name", "query"), ("search_contacts_by_email", "query"),
                      ("get_file_by_id", "file_id"), ("get_day_calendar_events", "day"),
                      ("search_files_by_filename", "filename"), ("search_files", "query")):
        assert len({a[arg] for a in legal[tool]}) >= 3, tool
    # search_calendar_events: its docstring's "event titles" names the `title` field, so real titles
    # are searched on the day they are on (another day would make the call illegal: no match).
    assert legal["search_calendar_events"][0] == {"query": "Team Sync", "date": "2024-05-15"}
    assert len({a["query"] for a in legal["search_calendar_events"]}) >= 3
    eff = {
        (r.tool, row.clause_id): row.scored for r in run.reports for row in r.clause_rows if row.kind == "eff"
    }
    assert all(n >= 1 for n in eff.values())


# --- broken readers ---------------------------------------------------------------------------------

# The harness's operators make mutants of 4 of these 13 tools only (arguments that flow into the
# reply and reads are left alone), so each reader gets one realistic hand-made defect here:
# function -> (text in the function, replacement). Applied together to a private copy of the
# package (never the installed one) and checked in one worker.
MUTANTS = {
    "get_draft_emails": ("return inbox.drafts", "return inbox.sent"),  # the wrong folder
    "get_received_emails": ("return inbox.received", "return inbox.received[:-1]"),  # one lost
    # Bodies cut short: the right emails, but not what the inbox holds.
    "get_sent_emails": (
        "return inbox.sent",
        'return [e.model_copy(update={"body": e.body[:100]}) for e in inbox.sent]',
    ),
    "search_contacts_by_email": ("inbox.find_contacts_by_email(query)", "inbox.find_contacts_by_name(query)"),
    "search_contacts_by_name": (
        "inbox.find_contacts_by_name(query)",
        "inbox.find_contacts_by_name(query)[:1]",
    ),
    "search_emails": ("inbox.search_emails(query, sender)", "inbox.search_emails(query)"),  # sender ignored
    # US style, not ISO. (today() would be no defect here: the host freezes the benchmark's clock.)
    "get_current_day": ("calendar.current_day.isoformat()", 'calendar.current_day.strftime("%m/%d/%Y")'),
    "get_day_calendar_events": (
        "calendar.get_by_day(date.date())",
        "calendar.get_by_day((date + datetime.timedelta(days=1)).date())",
    ),
    "search_calendar_events": ("calendar.search_events(query, date_)", "calendar.search_events(query, None)"),
    "get_file_by_id": ("cloud_drive.get_file_by_id(file_id)", 'cloud_drive.get_file_by_id("0")'),
    "list_files": (
        "return list(cloud_drive.files.values())",  # only the files the user owns
        "return [f for f in cloud_drive.files.values() if f.owner == cloud_drive.account_email]",
    ),
    "search_files": ("cloud_drive.search_files(query)", "cloud_drive.search_files_by_filename(query)"),
    # An exact name where the tool matches part of one.
    "search_files_by_filename": (
        "return cloud_drive.search_files_by_filename(filename)",
        "return [f for f in cloud_drive.files.values() if f.filename == filename]",
    ),
}


@pytest.fixture(scope="module")
def mutant_reports(checked: tuple[ConfirmRun, list[ToolReport]]) -> list[ToolReport]:
    return checked[1]


@pytest.fixture(scope="module")
def checked(contracts: dict[str, Contract], agentdojo_src: Path, agentdojo_python: Path,
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ConfirmRun, list[ToolReport]]]:
    """The published readers (run_confirm, as `--confirm` runs them) and the broken copies, checked
    side by side: each is one worker's start-up and probes, so together they take the time of one."""
    chosen = list(contracts.values())
    with package_overlay(agentdojo_src) as root:
        tools = root / "agentdojo" / TOOLS_DIR
        for function, (old, new) in MUTANTS.items():
            path = tools / f"{READERS[function]}.py"
            path.write_text(edit_function(path.read_text(), function, old, new))
        env = {"PYTHONPATH": str(root), "PYTHONDONTWRITEBYTECODE": "1"}
        spec = WorkerSpec("agentdojo", {"suite": "workspace"}, str(agentdojo_python), env=env)
        with ThreadPoolExecutor(max_workers=2) as pool:
            published = pool.submit(run_confirm, chosen, Settings(), python=str(agentdojo_python),
                                    witness_dir=tmp_path_factory.mktemp("witnesses"))
            broken = pool.submit(check_group, chosen, spec, CheckOptions(deadline=60.0, confirm=False))
            yield published.result(), broken.result()


def test_every_broken_reader_is_caught(mutant_reports: list[ToolReport]) -> None:
    assert table(mutant_reports) == {
        "get_draft_emails": ("VIOLATES", {"eff.returns_draft_emails": "TL203"}),
        "get_received_emails": ("VIOLATES", {"eff.returns_received_emails": "TL203"}),
        "get_sent_emails": ("VIOLATES", {"eff.records_as_stored": "TL203"}),
        # The happy query is an address, which no contact's name contains: a legal call that raised.
        "search_contacts_by_email": ("VIOLATES", {"eff.returns_matches": "TL203"}),
        "search_contacts_by_name": ("VIOLATES", {"eff.returns_matches": "TL203"}),
        # Another sender's "Project Update" is found for lily.white, who sent none: the refusal is
        # gone too. The effect clauses read the optional `sender`: Ignored Argument.
        "search_emails": ("VIOLATES", {"pre.some_email_matches": "TL201", "eff.returns_matches": "TL202",
                                       "eff.only_from_sender": "TL202"}),
        "get_current_day": ("VIOLATES", {"eff.returns_current_day": "TL203"}),
        "get_day_calendar_events": ("VIOLATES", {"eff.returns_day_events": "TL203"}),
        # The date dropped: also answers a query whose only matches are on other days, which must refuse.
        "search_calendar_events": ("VIOLATES", {"eff.returns_matches": "TL202", "eff.only_on_date": "TL202",
                                                "pre.some_event_matches": "TL201"}),
        # File "0" for every id, also for one that does not exist.
        "get_file_by_id": ("VIOLATES", {"pre.file_exists": "TL201", "eff.returns_file": "TL203"}),
        "list_files": ("VIOLATES", {"eff.returns_all_files": "TL203"}),
        "search_files": ("VIOLATES", {"eff.returns_matches": "TL203"}),
        "search_files_by_filename": ("VIOLATES", {"eff.returns_matches": "TL203"}),
    }
    # Nothing was written: every catch is on the reply (or the refusal), not the state.
    assert all(row.verdict == "CONFORMS" for r in mutant_reports for row in r.rows if row.kind == "frame")
