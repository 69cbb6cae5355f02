"""The report and the terminal of `toollint check --confirm --ledger l --report r.html`, run as the
README shows on the fixture benchmark `tests/fixtures/dynamic_bench` (its toy bank, with four graded
tasks configured beside it): each confirmed defect in one plain sentence with its confidence and the
replay command, a legend of the bases, the findings `--confirm` did not confirm with their reasons,
and a run that ends by saying where the report went and how many tasks are at risk, by basis. On a
terminal the progress line counts `[n/N]` with the elapsed time and says what is starting.

How the report looks in a browser is `tests/test_report_html.py`; the tau2 sentence is
`tests/test_tau2_zero_config.py`.
"""

from __future__ import annotations

import os
import re
import select
import shutil
import subprocess
import sys
from html import unescape
from pathlib import Path

import pytest
from test_dynamic_cli import CONFIG as BANK_CONFIG  # the fixture bank's host, as docs/confirm.md has it

from toollint.trace.plain import sentence, thing, witness_facts
from toollint.trace.readsites import BASES

FIXTURES = Path(__file__).parent / "fixtures"
CONFIG = BANK_CONFIG + """
[tool.toollint.trace.tasks]
frozen_balance = "graders.py:grade_frozen_balance"
statuses = "graders.py:grade_statuses"
whole = "graders.py:grade_whole"
audited = "graders.py:grade_audited"
message = "graders.py:grade_message"
"""
GRADERS = '''"""Graders of five tasks on the toy bank, one per basis and one reading the record only."""

from audit_tools import audit  # another package: what it reads cannot be followed


def grade_frozen_balance(model_output, post_environment):
    return post_environment.accounts[1]["balance"] == 50.0


def grade_statuses(model_output, post_environment):
    return [a["status"] for a in post_environment.accounts] == ["active", "frozen", "active"]


def grade_whole(model_output, pre_environment, post_environment):
    return pre_environment == post_environment


def grade_audited(model_output, post_environment):
    return audit(post_environment.accounts)


def grade_message(model_output):
    return "withdrawn" in model_output
'''
COMMAND = ["check", "--confirm", "--ledger", "l", "--report", "r.html", "bank.py"]


def bank_project(root: Path) -> Path:
    """A copy of the fixture bank with its configuration and graded tasks."""
    project = root / "bank"
    shutil.copytree(FIXTURES / "dynamic_bench", project)
    (project / "pyproject.toml").write_text(CONFIG, encoding="utf-8")
    (project / "graders.py").write_text(GRADERS, encoding="utf-8")
    return project


def toollint(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    return subprocess.run([sys.executable, "-m", "toollint", *args], capture_output=True, text=True,
                          timeout=600, check=False, cwd=cwd, env=env)


def bank_report(root: Path) -> tuple[subprocess.CompletedProcess[str], Path]:
    project = bank_project(root)
    return toollint(COMMAND, project), project


@pytest.fixture(scope="module")
def bank(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path]:
    return bank_report(tmp_path_factory.mktemp("report-cli"))


def text_of(html: str) -> str:
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html)))


def test_each_defect_is_one_sentence_with_its_confidence_and_replay_command(
        bank: tuple[subprocess.CompletedProcess[str], Path]) -> None:
    proc, project = bank
    assert proc.returncode == 1, proc.stderr
    html = (project / "r.html").read_text(encoding="utf-8")
    text = text_of(html)
    assert ("withdraw_unchecked took 100.0 from account A2's balance (50.0 -> -50.0), although account "
            "A2's status is 'frozen'") in text
    assert ("set_balance_truthy left the same state with balance=0.0 as with balance=100.0: it ignored "
            "balance") in text
    assert "archive_account_phantom replied \u201cAccount archived.\u201d but changed nothing" in text
    assert "Clause pre.account_active (TL201 Unenforced Precondition). Confidence: high" in text
    # the command as the terminal printed it, and where to run it
    printed = sorted(set(re.findall(r"-> (toollint replay \S+)", proc.stdout)))
    assert len(printed) == 7
    for command in printed:
        assert f"{command}</code>" in html
    assert f"(in {project.resolve()}, where the check ran)" in text or f"(in {project}, where" in text
    assert html.count('class="sentence"') == 7  # one per confirmed defect


def test_a_printed_replay_command_runs_as_the_report_shows_it(
        bank: tuple[subprocess.CompletedProcess[str], Path]) -> None:
    _, project = bank
    html = (project / "r.html").read_text(encoding="utf-8")
    command = re.search(r'<code class="replay">(toollint replay [^<]*withdraw_unchecked[^<]*)</code>', html)
    assert command is not None
    replayed = toollint([*unescape(command.group(1)).split()[1:], "--repeat", "1"], project)
    assert replayed.returncode == 1 and replayed.stdout.startswith("STILL VIOLATES pre.account_active")


def test_the_report_has_a_legend_of_every_basis(bank: tuple[subprocess.CompletedProcess[str], Path]) -> None:
    _, project = bank
    text = text_of((project / "r.html").read_text(encoding="utf-8"))
    legend = text[text.index("What the bases mean"):]
    for basis, meaning, confidence in (
            ("exact_field", "reads the very field the defect leaves wrong", "high"),
            ("whole_state_hash", "compares the whole state", "high"),
            ("collection_only", "reads only the collection holding the field", "medium"),
            ("unresolved", "a read toollint cannot follow", "low")):
        entry = legend[legend.index(basis):]
        assert meaning in entry[:200] and confidence in entry[:260], entry[:260]


def test_the_run_ends_with_the_report_path_and_the_tasks_at_risk_by_basis(
        bank: tuple[subprocess.CompletedProcess[str], Path]) -> None:
    proc, _ = bank
    lines = proc.stderr.splitlines()
    assert lines[-3:] == [
        ("at risk: 4 of 5 graded task(s) from 7 confirmed defect(s): 1 exact_field, 1 whole_state_hash, "
         "1 collection_only, 1 unresolved"),
        "report: r.html",
        "ledger: l.csv, l.json",
    ], proc.stderr
    assert lines[-4].startswith("Found 14 findings")


def test_findings_confirm_did_not_confirm_are_listed_with_why(
        bank: tuple[subprocess.CompletedProcess[str], Path]) -> None:
    _, project = bank
    text = text_of((project / "r.html").read_text(encoding="utf-8"))
    assert "Findings --confirm did not confirm" in text
    assert "bank.py:91 TL104" in text and "refuted: the clauses testing it conform" in text


def test_an_untested_finding_says_why_in_the_report(tmp_path: Path) -> None:
    """verdict_bench (`docs/confirm.md`), its contract leaving `users[*].balance` out on purpose: the
    TL105 on that field ends LEFT_OUT, and the report, as the text line, says why."""
    from test_confirm_clauses import LEFT_OUT

    shutil.copytree(FIXTURES / "verdict_bench", tmp_path / "bench")
    (tmp_path / "bench" / "pyproject.toml").write_text(
        '[tool.toollint]\ncontract-dirs = ["contracts"]\ntool-decorators = ["tool"]\n\n'
        '[tool.toollint.confirm]\nadapter = "toolkit"\nfactory = "airline:make_airline"\nsys-path = ["."]\n',
        encoding="utf-8")
    contract = tmp_path / "bench" / "contracts" / "cancel_reservation.yaml"
    contract.write_text(contract.read_text() + LEFT_OUT)
    proc = toollint(["check", "--confirm", "--report", "r.html", "airline.py"], tmp_path / "bench")
    notes = re.findall(r"\[(LEFT_OUT|UNCHECKED|UNTESTABLE): (.+)\]$", proc.stdout, re.MULTILINE)
    assert [verdict for verdict, _ in notes] == ["LEFT_OUT"], proc.stdout
    text = text_of((tmp_path / "bench" / "r.html").read_text(encoding="utf-8"))
    for verdict, why in notes:
        assert f"{verdict} {why}" in text
    assert "1 not tested, 0 refuted" in text
    assert proc.stderr.splitlines()[-1] == "report: r.html"


def _pty_run(args: list[str], cwd: Path) -> str:
    """Run toollint on a pseudo-terminal (where the progress line is drawn); everything it wrote."""
    import pty

    master, slave = pty.openpty()
    env = {**os.environ, "TERM": "xterm"}
    proc = subprocess.Popen([sys.executable, "-m", "toollint", *args], cwd=cwd, stdin=slave, stdout=slave,
                            stderr=slave, env=env, close_fds=True)
    os.close(slave)
    out = b""
    while True:
        ready, _, _ = select.select([master], [], [], 1.0)
        if ready:
            try:
                data = os.read(master, 65536)
            except OSError:  # the child closed the terminal
                break
            if not data:
                break
            out += data
        elif proc.poll() is not None:
            break
    proc.wait(timeout=60)
    os.close(master)
    return out.decode("utf-8", "replace")


@pytest.mark.skipif(sys.platform == "win32", reason="no pseudo-terminal")
def test_on_a_terminal_progress_counts_n_of_n_with_the_elapsed_time(tmp_path: Path) -> None:
    project = bank_project(tmp_path)
    out = _pty_run(COMMAND, project)
    drawn = [re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", part) for part in out.split("\r")]
    assert any(re.fullmatch(r"confirm \d+ s loading contracts and choosing the tools to probe", d)
               for d in drawn), drawn
    starting = r"confirm \[0/5\] \d+ s starting 1 toolkit host for 5 tools"
    assert any(re.fullmatch(starting, d) for d in drawn), drawn
    counted = [int(m.group(1)) for d in drawn if (m := re.fullmatch(r"confirm \[(\d)/5\] \d+ s \w+", d))]
    assert counted == [1, 2, 3, 4, 5], drawn
    assert any(re.fullmatch(r"trace \d+ s reading the tasks \[tool.toollint.trace\] names", d) for d in drawn)
    assert "report: r.html" in out


# --- the sentence, from witness data ---------------------------------------------------------------

TAU2_WITNESS = {  # the shape of the witness `check --confirm` writes for tau2's refuel_data
    "code": "TL201", "tool": "refuel_data",
    "clause": {"id": "pre.line_active", "provenance": {
        "tier": "agent-visible", "kind": "docstring", "line": 613,
        "quote": "Checks: Line status must be Active"}},
    "probe": {
        "kind": "pre_violating", "tool": "refuel_data",
        "args": {"customer_id": "C1001", "line_id": "L1003", "gb_amount": 2.0},
        "result": {"status": "ok", "value": {"message": "Successfully added 2.0 GB of data for line L1003"}},
        "diff": [
            {"op": "add", "path": "/agent_db/bills/{bill_id=B1003}/line_items/0", "after": {"amount": 10.0}},
            {"op": "replace", "path": "/agent_db/bills/{bill_id=B1003}/total_due", "before": 0.0,
             "after": 10.0},
            {"op": "replace", "path": "/agent_db/lines/{line_id=L1003}/data_refueling_gb", "before": 0.0,
             "after": 2.0}]},
    "evaluation": {"bindings": [{"expr": "pre.agent_db.lines{line_id=L1003}.status", "value": "Suspended"}]},
    "replay": "toollint replay .toollint/witnesses/refuel_data.pre.line_active.pre_violating.1.json",
}


def test_the_sentence_names_the_change_in_the_record_the_clause_read() -> None:
    facts = witness_facts(TAU2_WITNESS)
    assert facts is not None
    assert sentence(facts) == (
        "refuel_data added 2.0 to line L1003's data_refueling_gb (0.0 -> 2.0) and made 2 more changes, "
        "although line L1003's status is 'Suspended'; its docstring says "
        "\u201cLine status must be Active\u201d.")
    assert facts.replay == TAU2_WITNESS["replay"]


def test_a_derived_clause_says_where_toollint_derived_it_from() -> None:
    data = {**TAU2_WITNESS, "clause": {"id": "pre.commented_guard_629", "provenance": {
        "tier": "derived", "finding": "TL102", "line": 629, "about": "if target_line.status != 'Active'"}}}
    facts = witness_facts(data)
    assert facts is not None and sentence(facts).endswith(
        "; toollint derived this check from its TL102 finding at line 629 about if target_line.status != "
        "'Active'.")


def test_a_round_trip_names_the_calls_and_what_stayed_changed() -> None:
    data = {"code": "TL203", "tool": "cancel_reservation", "clause": {"id": "eff.undoes_book_seats"},
            "probe": {"kind": "round_trip", "tool": "cancel_reservation", "args": {"reservation_id": "R9"},
                      "before": [{"tool": "book_reservation", "args": {"flight": "F1"}}],
                      "result": {"status": "ok"},
                      "diff": [{"op": "replace", "path": "/flights/{id=F1}/available_seats", "before": 10,
                                "after": 9}]}}
    facts = witness_facts(data)
    assert facts is not None
    assert sentence(facts) == ("book_reservation(flight='F1') then cancel_reservation(reservation_id='R9') "
                               "left flight F1's available_seats changed: the undo did not undo it.")


@pytest.mark.parametrize(("path", "words"), [
    ("/agent_db/lines/{line_id=L1003}/data_refueling_gb", "line L1003's data_refueling_gb"),
    ("/agent_db/bills/{bill_id=B1003}/line_items/0", "bill B1003's line_items"),  # an entry's index left out
    ("/agent_db/reservations/XEHM4B/payment_history/1", "reservation XEHM4B's payment_history"),
    ("pre.agent_db.flights['HAT005'].dates['2024-05-20'].available_seats['basic_economy']",
     "flight HAT005's dates['2024-05-20'].available_seats['basic_economy']"),
    ("post.accounts{id=A1}.balance", "account A1's balance"),
    ("/stats/calls", "stats.calls"),
    ("/agent_db/users/mia_li_3668/name", "agent_db.users.mia_li_3668.name"),  # a key like a field name
])
def test_state_paths_in_words(path: str, words: str) -> None:
    assert thing(path) == words


@pytest.mark.parametrize("data", [None, [], {"probe": "x"}, {"code": "TL201"}])
def test_what_is_not_a_witness_gives_no_sentence(data: object) -> None:
    assert witness_facts(data) is None


def test_every_basis_is_in_the_legend() -> None:
    from toollint.trace.report_html import BASIS_MEANING

    assert tuple(BASIS_MEANING) == BASES


def test_a_derived_defect_is_as_confident_as_the_weakest_finding_it_confirmed() -> None:
    """An authored clause's reproduced violation is the TL2xx finding's confidence (high); a derived
    oracle rests on the premise of the static finding it was derived from, so that bounds it."""
    from toollint.evidence import Confidence, Evidence, EvidenceKind, Premise
    from toollint.model import Finding
    from toollint.trace.ledger import Defect
    from toollint.trace.report_html import confidence

    witness = "w/set_subject.arg.subject.arg.1.json"
    own = Finding("TL202", "m", "t.py", 3, properties={"clause": "arg.subject", "witness": witness,
                                                        "confirmed": {"agrees": True, "runs": 2}})
    premise = Premise('"" is legal for subject', EvidenceKind.TYPE, "the annotation `str`")
    static = Finding("TL104", "m", "t.py", 5, properties={"verdict": "VIOLATES", "witness": witness},
                     evidence=Evidence(parameter="subject", premises=(premise,)))
    derived = Defect("d", "m:set_subject", "arg.subject", ("x",), code="TL202", witness=witness,
                     tier="derived")
    level, why = confidence(derived, [own, static])
    assert level is Confidence.LOW
    assert why == ("a check toollint derived from TL104, reproduced in 2 fresh runs; its premise: "
                   '"" is legal for subject: the annotation `str`')
    authored = Defect("d", "m:set_subject", "arg.subject", ("x",), code="TL202", witness=witness,
                      tier="agent-visible")
    assert confidence(authored, [own, static]) == (
        Confidence.HIGH, "a clause of an authored contract, reproduced in 2 fresh runs")
