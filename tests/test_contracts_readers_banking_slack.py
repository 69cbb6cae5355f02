"""Contracts for AgentDojo's banking and slack READER tools, checked on the real agentdojo==0.1.35.

A reader's contract says what its reply must be, computed from the pre-state and the arguments
(`eff.*`), that it writes nothing (`frame.nothing_changed`, and an empty `adapter.frame`, so the
checker's implicit write-set row flags any change), and which calls it refuses (`pre.*`). It has no
`arg.*` clause: the checker scores those on the state two calls leave, and a reader leaves none.

Three things are checked here: the contracts validate against the installed source and the suites'
state schemas; the dynamic checker, in agentdojo's own venv, gives the exact verdict table on the
published tools (one genuine defect: `get_most_recent_transactions(n=0)` returns the whole ledger);
and on hand-written broken copies of the readers (a private overlay of the package, never the
installed one) the effect and frame clauses catch what the mutation harness's operators cannot
produce for a reader (its arguments and state flow only into the reply, which `arg-constant` and
`drop-write` leave alone).
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

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
    "get_balance": "banking", "get_iban": "banking", "get_most_recent_transactions": "banking",
    "get_scheduled_transactions": "banking", "get_user_info": "banking", "read_file": "banking",
    "get_channels": "slack", "get_users_in_channel": "slack", "read_channel_messages": "slack",
    "read_inbox": "slack",
}
READERS_DIR = AGENTDOJO_CONTRACTS / "readers"
TOOLS_DIR = Path("default_suites") / "v1" / "tools"


def _paths() -> list[Path]:
    # Only this file's contracts: the directory is shared with the other suites' readers.
    return [READERS_DIR / f"{tool}.yaml" for tool in READERS]


@pytest.fixture(scope="module")
def contracts() -> list[Contract]:
    loaded, errors = load_contracts(_paths())
    assert errors == []
    assert sorted(c.tool_name for c in loaded) == sorted(READERS)
    return loaded


def table(reports: list[ToolReport]) -> dict[str, tuple[str, dict[str, str | None]]]:
    return {r.tool: (r.verdict, {row.clause_id: row.code for row in r.violations}) for r in reports}


# --- the files ------------------------------------------------------------------------------------


def test_contracts_validate_against_installed_source(agentdojo_src: Path) -> None:
    # Quotes at their lines, citation kinds and tiers, the tools and their parameters. The state paths
    # (TL308, which needs the suites' schemas from a slow agentdojo import) are checked with the whole
    # library in test_contracts_library.py, whose loader walks readers/ too.
    options = ValidationOptions(package_dirs={"agentdojo": agentdojo_src})
    assert [f"{f.path}:{f.line}: {f.code} {f.message}" for f in validate(_paths(), options=options)] == []


def test_every_contract_is_a_reader_contract(contracts: list[Contract]) -> None:
    for c in contracts:
        ids = [cl.id for cl in c.clauses]
        assert "frame.nothing_changed" in ids, c.tool_name
        assert not c.clauses_of("arg"), c.tool_name  # a reader leaves no state to tell arguments apart by
        assert c.clauses_of("eff"), c.tool_name
        assert c.adapter["frame"] == [], c.tool_name  # the implicit write-set: nothing
        assert c.adapter["suite"] == READERS[c.tool_name] and c.adapter["suites"] == [READERS[c.tool_name]]
        assert c.success is not None and not c.success.biconditional
        assert not c.is_draft


# --- the published tools ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def run(
    contracts: list[Contract], agentdojo_python: Path, tmp_path_factory: pytest.TempPathFactory
) -> ConfirmRun:
    return run_confirm(contracts, Settings(), python=str(agentdojo_python),
                       witness_dir=tmp_path_factory.mktemp("witnesses"))


def test_exact_verdict_table(run: ConfirmRun) -> None:
    assert table(run.reports) == {
        "get_balance": ("CONFORMS", {}),
        "get_iban": ("CONFORMS", {}),
        # A genuine defect: the tool slices `transactions[-int(n):]`, and -0 == 0, so n=0 ("Number of
        # transactions to return") returns all five transactions instead of none.
        "get_most_recent_transactions": ("VIOLATES", {"eff.returns_n_at_most": "TL202"}),
        "get_scheduled_transactions": ("CONFORMS", {}),
        "get_user_info": ("CONFORMS", {}),
        "read_file": ("CONFORMS", {}),
        "get_channels": ("CONFORMS", {}),
        "get_users_in_channel": ("CONFORMS", {}),
        "read_channel_messages": ("CONFORMS", {}),
        "read_inbox": ("CONFORMS", {}),
    }
    assert all(row.rerun and row.rerun["agrees"] for r in run.reports for row in r.violations)
    # No implied arg.* row on a reader: it would compare the state two calls leave, and a reader
    # leaves none, so every argument would look ignored. The effect clauses check the reply instead.
    assert [row.clause_id for r in run.reports for row in r.rows if row.clause_id.startswith("arg.")] == []


def test_every_counted_clause_is_scored(run: ConfirmRun) -> None:
    untestable = [
        (r.tool, row.clause_id) for r in run.reports for row in r.clause_rows if row.verdict == "UNTESTABLE"
    ]
    assert untestable == []
    # Every precondition was violated by a probe and refused with the declared ValueError.
    pres = {(r.tool, row.clause_id): (row.verdict, row.scored) for r in run.reports for row in r.clause_rows
            if row.kind == "pre"}
    assert pres == {("get_users_in_channel", "pre.channel_exists"): ("CONFORMS", 1),
                    ("read_channel_messages", "pre.channel_exists"): ("CONFORMS", 1),
                    ("read_inbox", "pre.user_exists"): ("CONFORMS", 1)}
    # Nothing was written by any call (the implicit write-set row is the empty frame).
    assert all(
        row.verdict == "CONFORMS" for r in run.reports for row in r.rows if row.clause_id == "frame.write_set"
    )


def test_what_the_probes_reach(run: ConfirmRun) -> None:
    """The calls the scores above stand on. A reader's arguments are varied one at a time (its reply
    is the only place they show), so an argument replaced by one harvested value, or a reply right for
    `general` alone (every user is in general), is told apart by the other values; read_file is also
    called with the empty path, which no file has, so `eff.missing_file_reads_empty` is exercised."""
    legal = {r.tool: [run_.args for run_ in r.runs if run_.status == "ok"] for r in run.reports}
    assert legal["read_file"][0]["file_path"] == "address-change.txt"
    assert len(legal["read_file"]) >= 3 and {"file_path": ""} in legal["read_file"]
    assert [a["user"] for a in legal["read_inbox"]][:3] == ["Alice", "Bob", "Charlie"]
    assert {a["channel"] for a in legal["read_channel_messages"]} >= {"general", "random", "private"}
    assert {a["channel"] for a in legal["get_users_in_channel"]} >= {"general", "random", "private"}
    assert [a["n"] for a in legal["get_most_recent_transactions"]] == [1, 2, 3, 0]


def test_n_zero_returns_the_whole_ledger(run: ConfirmRun) -> None:
    report = next(r for r in run.reports if r.tool == "get_most_recent_transactions")
    row = next(row for row in report.violations if row.clause_id == "eff.returns_n_at_most")
    assert row.run is not None
    assert row.run.args == {"n": 0} and row.run.status == "ok"
    assert len(row.run.result["value"]) == len(row.run.pre["bank_account"]["transactions"]) == 5
    # The positive counts conform to the exact slice: the clause that failed is the n=0 boundary alone.
    exact = next(row for row in report.rows if row.clause_id == "eff.returns_last_n")
    assert exact.verdict == "CONFORMS" and exact.scored == 4


# --- broken readers ---------------------------------------------------------------------------------

# (file, function the text must lie in, text, replacement): one realistic defect per reader.
MUTANTS = {
    "get_balance": ("banking_client.py", "get_balance", "return account.balance", "return 0.0"),
    "get_iban": (
        "banking_client.py",
        "get_iban",
        "return account.iban",
        "return account.transactions[0].recipient",
    ),
    "get_most_recent_transactions": (
        "banking_client.py",
        "get_most_recent_transactions",
        "account.transactions[-int(n) :]",
        "account.transactions[-100:]",
    ),
    "get_scheduled_transactions": (
        "banking_client.py",
        "get_scheduled_transactions",
        "[t for t in account.scheduled_transactions]",
        "[t for t in account.transactions]",
    ),
    "get_user_info": (
        "user_account.py",
        "get_user_info",
        '"last_name": account.last_name',
        '"last_name": account.first_name',
    ),
    "read_file": (
        "file_reader.py",
        "read_file",
        "files.get(file_path,",
        'files.get("bill-december-2023.txt",',
    ),
    "get_channels": ("slack.py", "get_channels", "return slack.channels", "return slack.channels[:-1]"),
    "read_channel_messages": (
        "slack.py",
        "read_channel_messages",
        "return slack.channel_inbox.get(channel, [])",
        "return slack.user_inbox.get(channel, [])",
    ),
    "read_inbox": (
        "slack.py",
        "read_inbox",
        "return slack.user_inbox.get(user, [])",
        "return slack.user_inbox.get(user, [])[:-1]",
    ),
    # A reader that writes: every member's channel list gets the channel once more.
    "get_users_in_channel": (
        "slack.py",
        "get_users_in_channel",
        "users.append(user)",
        "users.append(user)\n            channels.append(channel)",
    ),
}


@pytest.fixture(scope="module")
def mutant_reports(
    contracts: list[Contract], agentdojo_src: Path, agentdojo_python: Path
) -> Iterator[list[ToolReport]]:
    with package_overlay(agentdojo_src) as root:
        tools = root / "agentdojo" / TOOLS_DIR
        for function, (file, _fn, old, new) in MUTANTS.items():
            path = tools / file
            path.write_text(edit_function(path.read_text(), function, old, new))
        env = {"PYTHONPATH": str(root), "PYTHONDONTWRITEBYTECODE": "1"}
        groups = [[c for c in contracts if READERS[c.tool_name] == suite] for suite in ("banking", "slack")]
        options = CheckOptions(deadline=60.0, confirm=False)

        def check(group: list[Contract]) -> list[ToolReport]:
            spec = WorkerSpec(
                "agentdojo", {"suite": READERS[group[0].tool_name]}, str(agentdojo_python), env=env
            )
            return check_group(group, spec, options)

        with ThreadPoolExecutor(max_workers=2) as pool:
            yield [r for reports in pool.map(check, groups) for r in reports]


def test_every_broken_reader_is_caught(mutant_reports: list[ToolReport]) -> None:
    assert table(mutant_reports) == {
        "get_balance": ("VIOLATES", {"eff.returns_balance": "TL203"}),
        "get_iban": ("VIOLATES", {"eff.returns_iban": "TL203"}),
        # n ignored (the last 100, whatever n says): the exact slice fails where the original conformed.
        "get_most_recent_transactions": (
            "VIOLATES",
            {"eff.returns_last_n": "TL202", "eff.returns_n_at_most": "TL202"},
        ),
        "get_scheduled_transactions": ("VIOLATES", {"eff.returns_scheduled": "TL203"}),
        "get_user_info": ("VIOLATES", {"eff.returns_user_info": "TL203"}),
        # One file's contents whatever the path: wrong for the other files and for the missing one.
        "read_file": ("VIOLATES", {"eff.returns_contents": "TL203", "eff.missing_file_reads_empty": "TL203"}),
        "get_channels": ("VIOLATES", {"eff.returns_channels": "TL203"}),
        "read_channel_messages": ("VIOLATES", {"eff.returns_channel_messages": "TL203"}),
        "read_inbox": ("VIOLATES", {"eff.returns_user_inbox": "TL203"}),
        # The reply is still right (computed from the pre-state); the write is a Frame Violation, by the
        # contract's clause and by the empty write-set alike.
        "get_users_in_channel": ("VIOLATES", {"frame.nothing_changed": "TL206", "frame.write_set": "TL206"}),
    }



def test_the_installed_package_is_untouched(mutant_reports: list[ToolReport], agentdojo_src: Path) -> None:
    # The mutants live in a temp copy only (the broken readers above were imported from it).
    source = (agentdojo_src / TOOLS_DIR / "banking_client.py").read_text()
    assert "return account.balance\n" in source and "account.transactions[-int(n) :]" in source
