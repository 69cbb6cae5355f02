"""The grader audit (`toollint audit-graders`, `toollint.validate.graders`): null run (TL408), gold
ablation (TL409) and argument mutation (TL410), through a profile's validation driver.

The fixture benchmark (`tests/fixtures/audit_bench/minibench`) has one grader wrong each way, and the
negative controls patch each grader to check what it missed: the finding disappears. The CLI runs as
README.md and docs/grader-audit.md show it, and each finding's witness replays with `toollint replay`
(still passing: exit 1; once the grader is fixed: exit 0). A fast sample runs on AgentDojo's own
banking suite; the whole benchmarks are `bench/grader_audit.py`'s (and the slow tests').
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from profile_fixtures import registered
from toollint.dynamic.protocol import SERVICES

from toollint import cli
from toollint.validate import graders
from toollint.validate.graders import (
    VariantAudit,
    audit_variant,
    batch_grader,
    harvest,
    mutations,
    replacement,
    stated,
)

BENCH = Path(__file__).parent / "fixtures" / "audit_bench"
sys.path.insert(0, str(BENCH))

from audit_driver import PROFILE, MiniDriver
from minibench import tasks as mini_tasks


@pytest.fixture
def driver() -> MiniDriver:
    return MiniDriver(PROFILE, SERVICES, BENCH)


def _audit(driver: Any) -> VariantAudit:
    return audit_variant(driver, sys.executable, "main", batch_grader(driver, sys.executable, "main"))


def _found(audit: VariantAudit) -> set[tuple[str, str, str]]:
    return {(f.code, f.task, f.field or str(f.index if f.index is not None else "")) for f in audit.findings}


def test_each_kind_is_found_on_the_fixture(driver: MiniDriver) -> None:
    audit = _audit(driver)
    assert audit.tasks == 7 and audit.audited == 7 and not audit.gold_fails
    assert _found(audit) == {
        ("TL408", "spotify", ""),  # a payment of 50 to SPOTIFY was in the history already
        ("TL409", "meetings", "1"),  # the retro is never checked
        ("TL410", "meetings", "title"),
        ("TL410", "meetings", "start"),
        ("TL410", "pay_rent", "recipient"),  # the amount is checked, never who was paid
        ("TL410", "pay_rent", "subject"),
        ("TL410", "extend_stay", "nights"),  # any stay length passes (and the tool never stores it)
    }
    assert audit.no_state_change == 1  # lookup: its gold run reads only
    assert audit.free_fields == 1  # gift's subject: the task does not say what it should be
    assert audit.dropped == ["add_event.reminder"] and audit.dropped_fields == 2  # the tool drops it
    # invite_dora's page read: dropping it or reading another page still passes, but the replayed
    # invite carries the address the read found: counted, not reported
    assert audit.information_reads == 2
    effect = next(f for f in audit.findings if f.code == "TL409")
    assert effect.call == "add_event" and "call 2 `add_event`" in effect.message
    field = next(f for f in audit.findings if f.field == "recipient")
    assert '"LANDLORD" to "GROCER"' in field.message and field.grader is not None
    assert field.grader.name == "pay_rent_grader" and field.source is not None


def test_batches_are_graded_in_chunks_with_the_same_verdicts(driver: MiniDriver,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    sizes: list[int] = []

    def grade(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        sizes.append(len(items))
        return driver.grade(sys.executable, "main", items)

    whole = _found(audit_variant(driver, sys.executable, "main", grade))
    monkeypatch.setattr(graders, "CHUNK", 3)
    sizes.clear()
    assert _found(audit_variant(driver, sys.executable, "main", grade)) == whole
    assert max(sizes) == 3 and len(sizes) > 4


def _stricter(monkeypatch: pytest.MonkeyPatch, task: str, grader: Any) -> None:
    monkeypatch.setitem(mini_tasks.TASKS, task, {**mini_tasks.TASKS[task], "grader": grader})


def test_negative_control_vacuous(driver: MiniDriver, monkeypatch: pytest.MonkeyPatch) -> None:
    """A grader that asks for a new payment: the null run fails it, TL408 is gone."""
    _stricter(monkeypatch, "spotify", lambda pre, post: any(
        t["recipient"] == "SPOTIFY" and t["amount"] == 50
        for t in post["transactions"][len(pre["transactions"]):]))
    found = _found(_audit(driver))
    assert not any(code == "TL408" for code, _, _ in found)
    assert ("TL410", "pay_rent", "recipient") in found  # the other graders' findings stay


def test_negative_control_effect(driver: MiniDriver, monkeypatch: pytest.MonkeyPatch) -> None:
    """A grader that checks both events: dropping the retro fails it, TL409 (and its fields) are gone."""
    wanted = [("standup", "09:00"), ("retro", "16:00")]
    _stricter(monkeypatch, "meetings", lambda pre, post: all(
        {"title": t, "start": s} in post["events"] for t, s in wanted))
    found = _found(_audit(driver))
    assert not any(task == "meetings" for _, task, _ in found)


def test_negative_control_field(driver: MiniDriver, monkeypatch: pytest.MonkeyPatch) -> None:
    """A grader that checks the recipient too: that field's TL410 is gone, the subject's stays."""
    _stricter(monkeypatch, "pay_rent", lambda pre, post: any(
        t["amount"] == 1200 and t["recipient"] == "LANDLORD" for t in post["transactions"]))
    found = _found(_audit(driver))
    assert ("TL410", "pay_rent", "recipient") not in found
    assert ("TL410", "pay_rent", "subject") in found


def test_a_driver_without_a_state_sample_skips_mutation_and_says_why(driver: MiniDriver) -> None:
    class NoSample:
        def __getattr__(self, name: str) -> Any:
            if name == "state_sample":
                raise AttributeError(name)
            return getattr(driver, name)

    audit = _audit(NoSample())
    assert audit.mutations == 0 and not any(f.code == "TL410" for f in audit.findings)
    assert any("no state_sample" in why for why in audit.skipped)
    assert any(f.code == "TL409" for f in audit.findings)


def test_a_task_named_that_is_not_there_is_said(driver: MiniDriver) -> None:
    audit = audit_variant(driver, sys.executable, "main", batch_grader(driver, sys.executable, "main"),
                          tasks=["gift", "gfit"])
    assert audit.tasks == 1 and audit.skipped == ["no such task here: gfit"]


def test_a_gold_run_that_fails_is_not_audited(driver: MiniDriver, monkeypatch: pytest.MonkeyPatch) -> None:
    _stricter(monkeypatch, "spotify", lambda pre, post: False)
    audit = _audit(driver)
    assert audit.audited == 6 and [g.split(":")[0] for g in audit.gold_fails] == ["spotify"]
    assert not any(f.task == "spotify" for f in audit.findings)


# --- legal replacement values ----------------------------------------------------------------------------


def test_replacements_keep_the_kind_and_shape() -> None:
    pool = harvest({"tx": [{"date": "2022-03-01", "recipient": "DE89370400440532013000", "amount": 10.5},
                           {"date": "March", "recipient": "bob", "amount": 7}], "flag": True})
    assert replacement("2022-04-01", pool["date"]) == "2022-03-01"  # a date for a date
    assert replacement("GB29NWBK60161331926819", pool["recipient"]) == "DE89370400440532013000"
    assert replacement(7, pool["amount"]) == 10.5
    assert replacement(True, pool["flag"]) is False
    assert replacement(["bob"], pool["recipient"]) == ["DE89370400440532013000"]
    assert replacement("x", set()) is None


def test_mutations_reach_fields_of_records_and_only_state_changing_calls() -> None:
    calls = [{"function": "get", "args": {"id": "a"}},
             {"function": "book", "args": {"passengers": [{"name": "Ann"}], "cabin": "economy"}}]
    pool = harvest({"people": [{"name": "Bob"}], "cabins": [{"cabin": "business"}], "id": "b"})
    found = {(m.index, m.field, m.new) for m in mutations(calls, [1], pool, {})}
    assert found == {(1, "passengers[0].name", "Bob"), (1, "cabin", "business")}


def test_stated_reads_the_instruction() -> None:
    assert stated("LANDLORD", "Pay my rent to landlord.") and not stated("rent-2024", "Pay my rent.")
    assert stated(1200, "Pay 1200 now") and stated(50.0, "send 50 to them") and not stated(12, "1200")
    assert stated("anything", None)  # no instruction to read: every field counts


# --- the command line, as documented --------------------------------------------------------------------


@pytest.fixture
def minibench(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    with registered(monkeypatch, PROFILE):
        yield


def test_cli_sarif_at_the_grader_line_with_the_task_related(minibench: None, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "audit.sarif"
    code = cli.main(["audit-graders", str(BENCH), "--python", sys.executable, "-q",
                     "--output-format", "sarif", "-o", str(out), "--report", str(tmp_path / "audit.html")])
    assert code == 1
    table = capsys.readouterr()
    assert "vacuous" in table.out and "unchecked fields" in table.out
    run = json.loads(out.read_text())["runs"][0]
    results = {(r["ruleId"], r["properties"]["task"]): r for r in run["results"]}
    vacuous = results[("TL408", "spotify")]
    where = vacuous["locations"][0]["physicalLocation"]
    assert where["artifactLocation"]["uri"].endswith("minibench/tasks.py")
    lines = (BENCH / "minibench" / "tasks.py").read_text().splitlines()
    assert lines[where["region"]["startLine"] - 1].startswith("def spotify_grader")
    related = vacuous["relatedLocations"][0]
    assert '"spotify": {' in lines[related["physicalLocation"]["region"]["startLine"] - 1]
    assert {"TL408", "TL409", "TL410"} <= {r["id"] for r in run["tool"]["driver"]["rules"]}
    page = (tmp_path / "audit.html").read_text()
    assert "Grader audit" in page and "spotify" in page and "toollint replay" in page


def test_cli_witness_replays_and_stops_once_the_grader_is_fixed(minibench: None, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    assert cli.main(["audit-graders", str(BENCH), "--python", sys.executable, "-q"]) == 1
    shown = capsys.readouterr().out
    assert "TL409 [unchecked-effect] main task meetings" in shown
    witnesses = sorted((tmp_path / ".toollint" / "witnesses" / "grader-audit").glob("*.json"))
    assert len(witnesses) == 7
    for w in witnesses:
        assert cli.main(["replay", str(w)]) == 1, w.name
    assert "STILL PASSES (TL410)" in capsys.readouterr().out
    _stricter(monkeypatch, "pay_rent", lambda pre, post: any(
        t["amount"] == 1200 and t["recipient"] == "LANDLORD" for t in post["transactions"]))
    recipient = next(w for w in witnesses if w.name.endswith("recipient.json"))
    assert cli.main(["replay", str(recipient)]) == 0
    assert "FIXED (TL410)" in capsys.readouterr().out
    # A witness another's toollint wrote runs only the interpreter and tree named on the command line.
    effect = next(w for w in witnesses if w.name.startswith("TL409"))
    foreign = json.loads(effect.read_text())
    del foreign["host_seal"]
    effect.write_text(json.dumps(foreign))
    assert cli.main(["replay", str(effect)]) == 2
    assert "--python PY --root TREE" in capsys.readouterr().out
    assert cli.main(["replay", str(effect), "--python", sys.executable, "--root", str(BENCH)]) == 1
    # A witness edited after toollint wrote it is not replayed.
    data = json.loads(recipient.read_text())
    data["run"]["calls"][0]["args"]["recipient"] = "SOMEONE"
    recipient.write_text(json.dumps(data))
    assert cli.main(["replay", str(recipient)]) == 2


PY = ["--python", sys.executable]


@pytest.mark.parametrize(("args", "said"), [
    (["/nonexistent/tree", *PY], "not a directory"),
    ([str(BENCH), *PY, "--only", "nothing"], "--only 'nothing'"),
    ([str(BENCH), *PY, "--benchmark", "nosuchbench"], "nosuchbench"),
    ([str(BENCH), "--python", "/nonexistent/python"], "no such interpreter"),
])
def test_cli_bad_input_is_one_line(minibench: None, args: list[str], said: str,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["audit-graders", *args]) == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err


# --- real benchmarks: a fast sample ---------------------------------------------------------------------


def test_agentdojo_banking_sample_through_the_cli(agentdojo_python: Path, agentdojo_src: Path,
                                                  tmp_path: Path) -> None:
    """Two banking tasks of AgentDojo v1.2.2: UserTask5's grader looks for a Spotify payment of 50,
    which the history holds already (TL408); UserTask11's checks the amount, never the recipient."""
    run = subprocess.run([sys.executable, "-m", "toollint", "audit-graders", str(agentdojo_src), "--python",
                          str(agentdojo_python), "--variant", "banking", "--task", "user_task_5",
                          "--task", "user_task_11", "--output-format", "json", "-q"],
                         capture_output=True, text=True, cwd=tmp_path, timeout=600, check=False)
    assert run.returncode == 1, run.stderr
    found = {(f["code"], f["properties"]["task"], f["properties"]["field"]) for f in json.loads(run.stdout)}
    assert ("TL408", "user_task_5", "") in found
    assert {f["properties"]["variant"] for f in json.loads(run.stdout)} == {"v1.2.2/banking"}
    assert ("TL410", "user_task_11", "recipient") in found
    witness = next((tmp_path / ".toollint" / "witnesses" / "grader-audit").glob("TL408*.json"))
    replay = subprocess.run([sys.executable, "-m", "toollint", "replay", str(witness)], capture_output=True,
                            text=True, cwd=tmp_path, timeout=600, check=False)
    assert replay.returncode == 1 and "STILL PASSES (TL408)" in replay.stdout, replay.stdout + replay.stderr


@pytest.mark.slow
def test_agentdojo_every_suite(agentdojo_python: Path, agentdojo_src: Path, tmp_path: Path) -> None:
    """The whole of AgentDojo v1.2.2: every gold run passes its grader, and the audit finds each kind."""
    run = subprocess.run([sys.executable, "-m", "toollint", "audit-graders", str(agentdojo_src), "--python",
                          str(agentdojo_python), "--output-format", "json", "-q"],
                         capture_output=True, text=True, cwd=tmp_path, timeout=3600, check=False)
    assert run.returncode == 1, run.stderr
    codes = {f["code"] for f in json.loads(run.stdout)}
    assert codes == {"TL408", "TL409", "TL410"}


def test_tau2_airline_sample_through_the_cli(tau2_checkout: Path, tau2_python: Path, tmp_path: Path) -> None:
    """Two airline tasks: task 0 has no gold action (its null run passes rightly, and is not reported);
    task 7 changes three reservations, and tau2's whole-database comparison fails its null run and
    each of its three ablations: nothing to report."""
    run = subprocess.run([sys.executable, "-m", "toollint", "audit-graders", str(tau2_checkout), "--python",
                          str(tau2_python), "--variant", "airline", "--task", "0", "--task", "7",
                          "--only", "null,ablation", "-q"],
                         capture_output=True, text=True, cwd=tmp_path, timeout=900, check=False)
    assert run.returncode == 0, run.stdout + run.stderr
    row = next(line.split() for line in run.stdout.splitlines() if line.startswith("airline "))
    assert row[1:6] == ["2", "2", "0", "0", "0"], run.stdout
    assert "airline: 1 whose gold run changes no state" in run.stdout
    assert "airline: 3 ablation(s) and 0 mutation(s) graded" in run.stdout
