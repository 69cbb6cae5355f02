"""The README's commands on the tau2 snapshot, typed as a user types them, with no configuration file
(issue 23, items 1 and 2): `check --confirm --python P --ledger l --report r.html DOMAINS` traces the
confirmed defects over the tasks of the checkout the linted files lie in, and each `toollint replay W`
printed beside a violation works as printed, with no flags.

The fast sample lints the telecom domain (refuel_data: 1,120 exact_field + 15 collection_only, 0 of
another domain) and replays its printed witness; the whole `domains` folder (slow) gives both published
defects' figures (and cancel_reservation's 50 whole_state_hash). Both skip where the snapshot or
Python 3.12 is absent.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
import subprocess
import sys
from collections import Counter
from html import escape, unescape
from pathlib import Path

import pytest


def toollint(args: list[str], cwd: Path, env: dict[str, str] | None = None,
             timeout: int = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "toollint", *args], capture_output=True, text=True,
                          timeout=timeout, check=False, cwd=cwd, env=env)


def ledger_counts(ledger_csv: Path) -> Counter[tuple[str, str, str]]:
    with ledger_csv.open(encoding="utf-8", newline="") as fh:
        return Counter((row["tool"].rsplit(".", 1)[-1], row["suite"], row["basis"])
                       for row in csv.DictReader(fh))


def printed_replays(out: str) -> list[str]:
    return sorted(set(re.findall(r"-> (toollint replay \S+)", out)))


@pytest.fixture(scope="module")
def telecom(tau2_python: Path, tau2_checkout: Path,
            tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path]:
    cwd = tmp_path_factory.mktemp("tau2-zero-config")  # no pyproject.toml: nothing configured
    proc = toollint(["check", "--confirm", "--python", str(tau2_python), "--ledger", "l", "--report",
                     "r.html", str(tau2_checkout / "src" / "tau2" / "domains" / "telecom")], cwd)
    return proc, cwd


def test_the_readme_command_traces_the_checkouts_tasks_with_no_configuration(
        telecom: tuple[subprocess.CompletedProcess[str], Path]) -> None:
    proc, cwd = telecom
    assert proc.returncode == 1, proc.stderr
    assert not (cwd / "pyproject.toml").exists()
    counts = ledger_counts(cwd / "l.csv")
    assert counts == {("refuel_data", "telecom", "exact_field"): 1120,
                      ("refuel_data", "telecom", "collection_only"): 15}, counts
    data = json.loads((cwd / "l.json").read_text())
    assert data["tasks_traced"] > 1135 and data["untraced"] == {}
    assert "No task is exposed" not in (cwd / "r.html").read_text()
    assert "nothing traced" not in proc.stderr and "no task" not in proc.stderr, proc.stderr


def test_every_printed_replay_still_violates_with_no_flags(
        telecom: tuple[subprocess.CompletedProcess[str], Path]) -> None:
    proc, cwd = telecom
    commands = printed_replays(proc.stdout)
    assert commands, proc.stdout
    for command in commands:
        replayed = toollint([*command.split()[1:], "--repeat", "1"], cwd, timeout=300)
        assert replayed.returncode == 1, replayed.stdout + replayed.stderr
        assert replayed.stdout.startswith("STILL VIOLATES pre.line_active (TL201)"), replayed.stdout


def test_the_report_says_the_defect_in_one_sentence_with_the_replay_command(
        telecom: tuple[subprocess.CompletedProcess[str], Path]) -> None:
    """Issue 23, item 7: the report of the README's command names refuel_data's defect in words a reader
    who never read the paper follows, gives the replay command the terminal printed, and the run ends
    with the report's path and the tasks at risk by basis."""
    proc, cwd = telecom
    html = (cwd / "r.html").read_text(encoding="utf-8")
    text = re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", " ", html)))
    said = re.search(r"refuel_data added [\d.]+ to line (L\d+)'s data_refueling_gb \([\d.]+ -> [\d.]+\)"
                     r"[^;]*, although line \1's status is 'Suspended'; its docstring says "
                     r"\u201cLine status must be Active\u201d\.", text)
    assert said is not None, text[:3000]
    assert "Confidence: high" in text and "What the bases mean" in text
    for command in printed_replays(proc.stdout):
        assert f'<code class="replay">{command}</code>' in html
    traced = json.loads((cwd / "l.json").read_text())["tasks_traced"]
    assert proc.stderr.splitlines()[-3:-1] == [
        (f"at risk: 1135 of {traced} graded task(s) from 1 confirmed defect(s): 1120 exact_field, "
         "0 whole_state_hash, 15 collection_only, 0 unresolved"),
        "report: r.html"], proc.stderr


def test_a_moved_checkout_or_interpreter_is_one_line_naming_the_flag(
        telecom: tuple[subprocess.CompletedProcess[str], Path], tau2_checkout: Path,
        tmp_path: Path) -> None:
    from toollint.dynamic.witness import save_witness

    proc, cwd = telecom
    witness = cwd / printed_replays(proc.stdout)[0].split()[-1]
    data = json.loads(witness.read_text())
    project = tmp_path / "project"
    wdir = project / ".toollint" / "witnesses"
    wdir.mkdir(parents=True)
    for key, value, flag in (("python", str(tmp_path / "gone" / "bin" / "python"), "--python PATH"),
                             ("root", str(tmp_path / "moved-away"), "--root DIR")):
        changed = json.loads(json.dumps(data))
        if key == "python":
            changed["worker"]["python"] = value
        else:
            changed["worker"]["options"]["root"] = value
        path = wdir / f"{key}.json"
        save_witness(path, changed)  # written by this toollint, as `check --confirm` writes one
        out = toollint(["replay", str(path.relative_to(project))], project, timeout=120)
        assert out.returncode == 2 and out.stdout.count("\n") == 1, out.stdout + out.stderr
        assert value in out.stdout and flag in out.stdout, out.stdout
    fixed = toollint(["replay", ".toollint/witnesses/root.json", "--repeat", "1",
                      "--root", str(tau2_checkout)], project, timeout=300)
    assert fixed.returncode == 1, fixed.stdout + fixed.stderr


def test_a_witness_copied_from_elsewhere_still_needs_consent(
        telecom: tuple[subprocess.CompletedProcess[str], Path], tmp_path: Path) -> None:
    """The seal is this user's: a witness whose host another toollint sealed (or nobody) is checked
    against the project's configuration as before (issue 28)."""
    proc, cwd = telecom
    data = json.loads((cwd / printed_replays(proc.stdout)[0].split()[-1]).read_text())
    data["host_seal"] = "hmac-sha256:" + "0" * 64
    project = tmp_path / "project"
    (project / ".toollint" / "witnesses").mkdir(parents=True)
    path = project / ".toollint" / "witnesses" / "w.json"
    path.write_text(json.dumps(data))
    out = toollint(["replay", str(path), "--repeat", "1"], project, timeout=120)
    assert out.returncode == 2 and "--trust-witness" in out.stdout, out.stdout
    # outside the project's witness folder, even this user's own sealed witness asks for consent
    elsewhere = tmp_path / "elsewhere.json"
    shutil.copy(cwd / printed_replays(proc.stdout)[0].split()[-1], elsewhere)
    out = toollint(["replay", str(elsewhere), "--repeat", "1"], project, timeout=120)
    assert out.returncode == 2 and "--trust-witness" in out.stdout, out.stdout


def test_a_trace_that_finds_no_task_says_why_and_what_to_set(tmp_path: Path) -> None:
    from toollint.settings import TraceSettings
    from toollint.trace.tasks import linted_tasks

    tool = tmp_path / "tools.py"
    tool.write_text("def f():\n    return 'ok'\n")
    found = linted_tasks([tool], TraceSettings())
    assert found.tasks == [] and len(found.problems) == 1
    assert "[tool.toollint.trace]" in found.problems[0].message
    found = linted_tasks([tool], TraceSettings(), benchmark="tau2")
    assert "'tau2' is not located without --python" in found.problems[0].message
    assert 'package = "path/to/tau2"' in found.problems[0].message


@pytest.mark.slow
def test_the_readme_command_on_all_domains_gives_the_papers_figures(
        tau2_python: Path, tau2_checkout: Path, tmp_path: Path) -> None:
    proc = toollint(["check", "--confirm", "--python", str(tau2_python), "--ledger", "l", "--report",
                     "r.html", str(tau2_checkout / "src" / "tau2" / "domains")], tmp_path, timeout=1500)
    assert proc.returncode == 1, proc.stderr
    counts = ledger_counts(tmp_path / "l.csv")
    assert counts == {("refuel_data", "telecom", "exact_field"): 1120,
                      ("refuel_data", "telecom", "collection_only"): 15,
                      ("cancel_reservation", "airline", "whole_state_hash"): 50}, counts
    commands = printed_replays(proc.stdout)
    assert len(commands) == 2, proc.stdout
    for command in commands:
        replayed = toollint([*command.split()[1:], "--repeat", "1"], tmp_path, timeout=300)
        assert replayed.returncode == 1 and replayed.stdout.startswith("STILL VIOLATES"), replayed.stdout


def test_an_untestable_finding_says_why_in_text_and_json() -> None:
    """Issue 23, item 6: a finding whose clauses all ran and none could be scored carries the reason
    (code and detail, once per reason) in the text note and the JSON properties."""
    from toollint.contracts.loader import load_contract
    from toollint.dynamic.checker import UNTESTABLE, ClauseResult, ToolReport
    from toollint.dynamic.confirm import attach_verdict, clauses_testing

    from toollint.model import Finding
    from toollint.reporters import verdict_note
    from toollint.reporters.json_ import finding_to_dict

    contracts = Path(__file__).resolve().parents[1] / "toollint" / "profiles" / "tau2" / "contracts"
    contract = load_contract(contracts / "telecom" / "refuel_data.yaml")
    finding = Finding(code="TL101", message="m", path="tools.py", line=1, tool="refuel_data")
    ids, _ = clauses_testing(finding, contract)
    rows = [ClauseResult(i, i.split(".")[0], UNTESTABLE, "no_state", "the snapshot holds no lines")
            for i in ids]
    attach_verdict(finding, ToolReport("refuel_data", contract, rows=rows))
    expected = f"no_state (the snapshot holds no lines): {', '.join(ids)}"
    assert verdict_note(finding) == f" [UNTESTABLE: {expected}]"
    props = finding_to_dict(finding)["properties"]
    assert props["verdict_detail"] == expected and props["verdict_reason"] == "no_state"
    # ... and in SARIF (the result's message and its properties) and the HTML report
    from toollint.reporters.sarif import SarifOptions, render_sarif
    from toollint.trace.ledger import Ledger
    from toollint.trace.report_html import render_report

    (result,) = json.loads(render_sarif([finding], SarifOptions()))["runs"][0]["results"]
    assert result["message"]["text"] == f"m [UNTESTABLE: {expected}]"
    assert result["properties"]["verdict_detail"] == expected
    html = render_report(Ledger(), [finding])
    assert f"<td>UNTESTABLE</td><td>{escape(expected)}</td>" in html
