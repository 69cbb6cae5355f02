"""`toollint check --audit-graders`: the grader audit in the check's own run, as README.md and
docs/grader-audit.md show it, on the fixture benchmark (`tests/fixtures/audit_bench`, whose
`pyproject.toml` names its tools so the static rules lint them).

The audit's findings go through the check's reporters and exit code; `--report` gets a "Grader
audit" section; and the fixture's `extend_stay` task meets TL103 on one argument: `update_booking`
only feeds `nights` into the price (TL103), and the task's grader passes any stay length (TL410).
The two are joined, in every format, in one sentence; a TL410 with no such TL103 is not.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from profile_fixtures import registered

from toollint import cli
from toollint.model import Finding, RelatedLocation
from toollint.trace.ledger import Ledger
from toollint.trace.report_html import GraderAudit, GraderAuditRow, render_report

BENCH = Path(__file__).parent / "fixtures" / "audit_bench"
sys.path.insert(0, str(BENCH))

from audit_driver import PROFILE

JOIN = "`update_booking` drops `nights` (TL103 at "
NOTICE = "and no grader would notice"
SAW = "the grader audit saw it too"


@pytest.fixture
def minibench(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    monkeypatch.chdir(tmp_path)
    with registered(monkeypatch, PROFILE):
        yield tmp_path


def _check(*extra: str) -> int:
    # --witness-dir and --no-cache keep the run's files out of the fixture's project (its pyproject.toml)
    return cli.main(["check", "--audit-graders", "--python", sys.executable, str(BENCH), "--no-cache",
                     "--witness-dir", "w", *extra])


def test_check_audit_graders_report_has_the_section_and_the_join(minibench: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert _check("--report", "r.html") == 1
    out, err = capsys.readouterr()
    lines = out.splitlines()
    stay = [ln for ln in lines if "TL410 [unchecked-field] main task extend_stay" in ln]
    assert len(stay) == 1 and JOIN in stay[0] and "env.py:63)" in stay[0] and NOTICE in stay[0]
    rent = [ln for ln in lines if "task pay_rent" in ln]
    assert len(rent) == 2 and not any(NOTICE in ln for ln in rent)  # send_money drops nothing
    nights = [ln for ln in lines if "TL103 [log-only-argument] parameter `nights` of `update_booking`" in ln]
    assert len(nights) == 1 and SAW not in nights[0]  # a changed `nights` changes the price
    # add_event drops `reminder` (TL103), and the audit saw it: a changed reminder left the state as it was
    reminder = [ln for ln in lines if "TL103 [log-only-argument] parameter `reminder`" in ln]
    assert len(reminder) == 1 and reminder[0].endswith(
        f"[{SAW} (main): a gold `add_event` call with `reminder` changed left the final state as the gold "
        "run's, and no grader would notice]")
    assert any("TL408 [vacuous-grader] main task spotify" in ln for ln in lines)
    assert "unchecked fields" in err and "main " in err  # the per-suite table
    assert "1 on an argument the tool drops (TL103/TL202); 1 TL103/TL202 argument(s) it saw dropped" in err
    assert "report: r.html" in err
    page = (minibench / "r.html").read_text()
    assert '<h2>Grader audit</h2>' in page and "<td>main</td><td>7</td><td>7</td><td>1</td><td>1</td>" in page
    assert page.count(NOTICE) == 2 and "1 unchecked field(s) on an argument the tool drops" in page
    assert "<li>`add_event` drops `reminder` (TL103 at " in page and page.count(SAW) == 1
    assert "toollint replay w/grader-audit/TL410-main-extend_stay-0-nights.json" in page
    assert (minibench / "w" / "grader-audit" / "TL410-main-extend_stay-0-nights.json").is_file()
    assert "Score at risk" not in page  # nothing was confirmed: the page is the audit's


def test_the_join_in_sarif_json_and_github(minibench: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _check("--output-format", "sarif", "-o", "a.sarif") == 1
    results = json.loads((minibench / "a.sarif").read_text())["runs"][0]["results"]
    stay = next(r for r in results if r["ruleId"] == "TL410" and r["properties"]["task"] == "extend_stay")
    joined = stay["properties"]["unnoticed"]
    assert (joined["code"], joined["tool"], joined["argument"], joined["line"]) == \
        ("TL103", "update_booking", "nights", 63)
    related = [r for r in stay["relatedLocations"] if NOTICE in r["message"]["text"]]
    assert len(related) == 1 and related[0]["physicalLocation"]["region"]["startLine"] == 63
    assert related[0]["physicalLocation"]["artifactLocation"]["uri"].endswith("minibench/env.py")
    rent = [r for r in results if r["properties"].get("task") == "pay_rent"]
    assert len(rent) == 2 and not any("unnoticed" in r["properties"] for r in rent)
    assert _check("--output-format", "json") == 1
    found = json.loads(capsys.readouterr().out)
    assert [(f["code"], f["properties"]["unnoticed"]["sentence"]) for f in found
            if "unnoticed" in f["properties"] and f["code"] == "TL410"] == [("TL410", joined["sentence"])]
    seen = [f["properties"]["unnoticed"] for f in found
            if f["code"] == "TL103" and "unnoticed" in f["properties"]]
    assert [(s["tool"], s["argument"], s["variant"]) for s in seen] == [("add_event", "reminder", "main")]
    assert _check("--output-format", "github") == 1
    shown = capsys.readouterr().out.splitlines()
    assert sum(JOIN in ln for ln in shown) == 1 and sum(SAW in ln for ln in shown) == 1


def test_no_join_without_the_static_finding(minibench: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The join rests on the run's own findings: with TL103 ignored, the TL410 stands alone."""
    assert _check("--ignore", "TL103") == 1
    out = capsys.readouterr().out
    assert "task extend_stay" in out and NOTICE not in out and "TL103" not in out


def test_selection_and_exit_codes_are_the_checks(minibench: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _check("--exit-zero") == 0
    capsys.readouterr()
    assert _check("--select", "TL408") == 1  # the null runs alone
    out, err = capsys.readouterr()
    assert "TL408" in out and "TL410" not in out and "TL103" not in out
    assert "main: 0 ablation(s) and 0 mutation(s) graded" in err
    assert _check("--select", "TL1") == 1
    out, err = capsys.readouterr()
    assert "TL103" in out and "TL4" not in out and "selection leaves out TL408, TL409, TL410" in err


def test_selecting_tl411_alone_runs_the_null_runs(minibench: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    # TL411 comes from the null run as TL408 does: a selection of TL411 alone still audits
    assert _check("--select", "TL411") == 1
    out, err = capsys.readouterr()
    assert "TL411" in out and "TL408" not in out and "TL103" not in out
    assert "nothing to audit" not in err and "main: 0 ablation(s) and 0 mutation(s) graded" in err


@pytest.mark.parametrize(("argv", "said"), [
    (["check", "--audit-graders", str(BENCH)], "--audit-graders: name the benchmark's interpreter"),
    (["check", "--audit-graders", "--python", sys.executable, str(BENCH / "minibench" / "env.py")],
     "give the benchmark's tree (a directory) as PATH"),
    (["check", "--audit-graders", "--python", "/nonexistent/python", str(BENCH)], "no such interpreter"),
    (["check", "--audit-graders", "--python", sys.executable, str(BENCH), "--witness-dir", "w", "--report",
      str(BENCH / "pyproject.toml" / "r.html")], "cannot write"),
])
def test_bad_input_is_one_line_and_exit_2(minibench: Path, argv: list[str], said: str,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main([*argv, "--no-cache"]) == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err


def test_a_benchmark_that_fails_midway_loses_no_static_finding(
        minibench: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The benchmark's interpreter failing (a RuntimeError, as a host's GatewayError is) is one line
    and exit 2; the static findings of the run are still reported."""
    from audit_driver import MiniDriver

    def broken(self: MiniDriver, python: str, variant: str) -> list[dict[str, object]]:
        raise RuntimeError("the benchmark's interpreter died")

    monkeypatch.setattr(MiniDriver, "ground_truth", broken)
    assert _check() == 2
    out, err = capsys.readouterr()
    assert "TL103 [log-only-argument]" in out and "TL41" not in out
    assert "--audit-graders: " in err and "the benchmark's interpreter died" in err and "Traceback" not in err


def test_with_confirm_the_section_follows_the_score_at_risk(minibench: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """`check --confirm --audit-graders --report`: one page, the score at risk first (nothing of
    minibench is confirmable: it has no contracts, nor tasks to trace), then the grader audit."""
    assert _check("--confirm", "--report", "r.html") == 1
    out, err = capsys.readouterr()
    assert sum(JOIN in ln for ln in out.splitlines()) == 1 and "report: r.html" in err
    page = (minibench / "r.html").read_text()
    assert page.index("<h1>Score at risk</h1>") < page.index("<h2>Grader audit</h2>")
    assert page.count(JOIN) == 1 and page.count(SAW) == 1


def test_a_confirmed_run_gets_the_section_after_the_score_at_risk() -> None:
    """With --confirm the report is the score-at-risk page, the grader audit a section of it."""
    finding = Finding("TL410", "main task t: the grader passes ...", "tasks.py", 3,
                      related=[RelatedLocation("env.py", 9, 1, "`f` drops `a` (TL103 at env.py:9) and no "
                                               "grader would notice: the task passes with it changed")],
                      properties={"witness": "w.json", "unnoticed": {"sentence": "`f` drops `a` (TL103 at "
                                  "env.py:9) and no grader would notice: the task passes with it changed"}})
    audit = GraderAudit("bench", (GraderAuditRow("main", 3, 2, 0, 0, 1, 1.5),), (finding,))
    page = render_report(Ledger(), [], audit)
    assert page.index("<h1>Score at risk</h1>") < page.index("<h2>Grader audit</h2>")
    # do-nothing passes (TL411, 0 by default) sit before vacuous
    assert "<td>main</td><td>3</td><td>2</td><td>0</td><td>0</td><td>0</td><td>1</td><td>1.5 s</td>" in page
    assert page.count("no grader would notice") == 1 and "toollint replay w.json" in page
    assert "task at <code>env.py:9</code>" not in page  # the join's location is said once, as the join


def test_the_join_reads_typed_evidence_tool_argument_and_tree(tmp_path: Path) -> None:
    """TL103's parameter and TL202's argument (its ignored-argument clause's), on the same tool, in the
    audited tree: nothing is read from a message."""
    from toollint.evidence import Evidence
    from toollint.validate.audit import unnoticed_join
    from toollint.validate.graders import AuditFinding

    tools = tmp_path / "bench" / "tools.py"
    mutated = AuditFinding("TL410", "mutation", "main", "t", "...", None, None, (), "gold", (),
                           call="book", index=0, field="rooms[0].nights")
    assert mutated.argument == "rooms"

    def static(code: str, argument: str, tool: str = "Hotel.book", path: Path = tools) -> Finding:
        if code == "TL103":
            return Finding(code, "the message says nothing the join reads", str(path), 7, tool=tool,
                           evidence=Evidence(parameter=argument))
        return Finding(code, "", str(path), 9, tool=tool, properties={"argument": argument})

    tree = tmp_path / "bench"
    join = unnoticed_join(mutated, [static("TL103", "nights"), static("TL202", "rooms")], tree)
    assert join is not None
    assert (join.code, join.tool, join.argument, join.line) == ("TL202", "book", "rooms", 9)
    assert unnoticed_join(mutated, [static("TL103", "rooms")], tree) is not None
    assert unnoticed_join(mutated, [static("TL103", "rooms", tool="Hotel.cancel")], tree) is None
    assert unnoticed_join(mutated, [static("TL103", "rooms", path=tmp_path / "other" / "t.py")], tree) is None
    ablated = AuditFinding("TL409", "ablation", "main", "t", "...", None, None, (), "gold", (), call="book",
                           index=0)
    assert unnoticed_join(ablated, [static("TL103", "rooms")], tree) is None
