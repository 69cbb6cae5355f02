"""The validation harness: kill accounting, negative controls, the CI sample with its kill-rate floor,
AgentDojo mutants hosted through an overlay, and the command line's bad-input handling."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from profile_fixtures import registered

from toollint.model import Finding
from toollint.profiles import Profile
from toollint.validate import main, mutation, report
from toollint.validate.drivers import driver_for
from toollint.validate.harness import (
    KILLED,
    NOT_RUN,
    SURVIVED,
    DynamicRunner,
    MutantResult,
    StaticOutcome,
    Subject,
    lint,
    new_findings,
    overlay,
    run,
    static_outcome,
)
from toollint.validate.subjects import minibank_subject

AGENTDOJO = driver_for("agentdojo")

agentdojo_subjects = AGENTDOJO.subjects
agentdojo_registered_tools = AGENTDOJO.registered_tools

MINIBANK_DIR = Path(__file__).parent / "fixtures" / "mutation" / "minibank"

# The CI sample: a fixed seed and a small budget (docs/validation.md has the full-run figures). It
# measures 93% overall (13 of 14; the survivor is a static-only shape) and 100% in every behavioural
# class, so the floors are the targets: 90% overall and 75% per class.
CI_SEED, CI_BUDGET = 7, 14
CI_FLOOR_OVERALL, CI_FLOOR_CLASS = 0.9, 0.75


def _finding(code: str, tool: str, message: str, line: int = 1) -> Finding:
    return Finding(code=code, message=message, path="m.py", line=line, tool=tool)


def test_new_findings_is_a_multiset_difference_that_ignores_moved_lines() -> None:
    base = [_finding("TL104", "t", "`if a:` at line 3"), _finding("TL104", "t", "`if b:` at line 4")]
    after = [_finding("TL104", "t", "`if a:` at line 5", 5), _finding("TL104", "t", "`if b:` at line 6", 6),
             _finding("TL104", "t", "`if b:` at line 6", 7), _finding("TL103", "u", "x", 9)]
    assert [(f.code, f.line) for f in new_findings(base, after)] == [("TL104", 7), ("TL103", 9)]
    assert new_findings(after, base) == []


def test_minibank_contracts_pass_every_validator_check() -> None:
    """The fixture's contracts are real contracts: provenance quotes verified against bank.py."""
    from toollint.contracts.validator import ValidationOptions, validate

    repo = Path(__file__).resolve().parents[1]
    findings = validate([MINIBANK_DIR / "contracts"], options=ValidationOptions(roots=[repo]))
    assert [f"{f.code} {f.message}" for f in findings] == []


def test_static_kill_needs_a_new_finding_on_an_affected_tool() -> None:
    subject = minibank_subject(MINIBANK_DIR, dynamic=False)
    source = subject.path.read_text(encoding="utf-8")
    baseline = lint(subject, source)
    commented = next(m for m in mutation.mutants(source, "m.py", ["comment-guard"])
                     if m.function == "Bank.charge_fee")
    outcome = static_outcome(subject, baseline, commented)
    assert outcome.killed and {f.code for f in outcome.new} == {"TL102"}
    assert {f.tool for f in outcome.new} == {"Bank.charge_fee"}
    frame = mutation.mutants(source, "m.py", ["extra-write"])[0]
    assert not static_outcome(subject, baseline, frame).killed  # no static rule looks at frames


def test_static_only_run_reports_controls_and_clean_subject_flags_by_name() -> None:
    subject = minibank_subject(MINIBANK_DIR, dynamic=False)
    result = run([subject], seed=0, budget=20)
    assert len(result.mutants) == 20
    assert all(r.dynamic.status == NOT_RUN for r in result.mutants)
    rewrites = [c for c in result.controls if c.control is not None]
    assert {c.control.operator for c in rewrites if c.control} == {
        "rename-locals", "reorder-independent", "explicit-none-check"}
    assert all(c.false_positives == [] for c in rewrites)
    # minibank conforms by construction: whatever the linter says about the original is a false
    # positive, and the report names every one of them.
    baseline = result.baseline["minibank"]
    named = report.false_positives(result)
    assert [(fp["code"], fp["tool"]) for fp in named] == [(f["code"], f["tool"]) for f in baseline]
    assert all(fp["control"] == "minibank:unmutated" for fp in named)
    data = report.to_json(result)
    assert data["mutation"]["total"]["mutants"] == 20
    assert sum(r["mutants"] for r in data["mutation"]["by_class"]) == 20
    assert json.loads(json.dumps(data)) == data
    text = report.to_text(result)
    assert "Mutation arm, by defect class" in text and "Negative controls" in text


def test_html_section_is_self_contained_and_escaped() -> None:
    from html.parser import HTMLParser

    subject = minibank_subject(MINIBANK_DIR, dynamic=False)
    data = report.to_json(run([subject], seed=0, budget=6))
    data["mutation"]["mutants"][0].update(killed=False, description="<script>alert(1)</script>")
    html = report.to_html(data)
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "http" not in html and "src=" not in html  # nothing to fetch

    class Tags(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.open: list[str] = []
            self.rows = 0

        def handle_starttag(self, tag: str, attrs: object) -> None:
            self.open.append(tag)
            self.rows += tag == "tr"

        def handle_endtag(self, tag: str) -> None:
            assert self.open and self.open.pop() == tag  # every element closed, in order

    tags = Tags()
    tags.feed(html)
    assert tags.open == []
    by_class = len(data["mutation"]["by_class"]) + 2  # header and total
    assert tags.rows >= by_class + len(data["mutation"]["by_operator"]) + 1


def test_ci_sample_meets_its_kill_rate_floor_with_the_dynamic_half() -> None:
    subject = minibank_subject(MINIBANK_DIR)
    result = run([subject], seed=CI_SEED, budget=CI_BUDGET, dynamic=True)
    assert len(result.mutants) == CI_BUDGET
    behavioural = [r for r in result.mutants if not r.mutant.static_only]
    assert all(r.dynamic.status in (KILLED, SURVIVED) for r in behavioural)
    assert report.floor_failures(result, CI_FLOOR_OVERALL, CI_FLOOR_CLASS) == []
    # the dynamic half must confirm nothing on the conforming original (it would be listed here)
    assert [
        c for c in result.controls if c.control is None and any(f["line"] is None for f in c.false_positives)
    ] == []
    for r in result.mutants:
        if not r.killed:
            assert r.explanation()  # every survivor is explained


def test_agentdojo_mutants_are_hosted_through_an_overlay(agentdojo_src: Path, agentdojo_python: Path) -> None:
    (subject,) = agentdojo_subjects(agentdojo_src, str(agentdojo_python), ["user_account"])
    assert subject.host is not None and {c.tool_name for c in subject.host.contracts} >= {"update_password"}
    result = run([subject], dynamic=True, operators=["phantom-write"], tools=["update_password"])
    by_tool = {r.mutant.function: r for r in result.mutants}
    # Without its write, update_password still answers "Password updated.": only the probes see it.
    phantom = by_tool["update_password"]
    assert phantom.dynamic.status == KILLED, phantom.dynamic
    assert any(v["tool"] == "update_password" for v in phantom.dynamic.violations)
    # the installed package itself was never touched
    assert (
        "account.password = password"
        in (agentdojo_src / subject.host.relpath.relative_to("agentdojo")).read_text()
    )


def test_an_original_defect_on_the_same_clause_does_not_mask_a_mutant(
        agentdojo_src: Path, agentdojo_python: Path) -> None:
    # update_user_info already drops "" (truth tests), so its eff.first_name_set is violated on the
    # original; dropping the write of first_name makes it false on calls the original passes too.
    (subject,) = agentdojo_subjects(agentdojo_src, str(agentdojo_python), ["user_account"])
    assert subject.host is not None
    mutant = next(
        m
        for m in mutation.mutants(
            subject.path.read_text(encoding="utf-8"),
            subject.shown,
            ["drop-write"],
            ["update_user_info"],
            module_name=subject.module_name,
        )
        if "account.first_name = first_name" in m.description
    )
    with overlay(subject.host) as root:
        runner = DynamicRunner(subject, root)
        runner.run_baseline(["update_user_info"])
        assert any(
            r["clause"] == "eff.first_name_set" for r in runner.baseline_rows
        )  # the original's own defect
        dropped = runner.outcome(mutant)
    assert dropped.status == KILLED, dropped
    clauses = {v["clause"] for v in dropped.violations}
    assert clauses & {"eff.first_name_set", "arg.first_name"}


def test_cli_runs_and_writes_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "v.json"
    html = tmp_path / "v.html"
    rc = main(
        [str(MINIBANK_DIR / "bank.py"), "--budget", "6", "--json", str(out), "--html", str(html), "--quiet"]
    )
    data = json.loads(out.read_text())
    assert html.read_text().startswith('<section class="toollint-validation">')
    assert data["mutation"]["total"]["mutants"] == 6
    assert rc == 0  # no floor asked for; a plain file is not treated as a clean subject
    assert "Mutation arm" in capsys.readouterr().out
    assert main([str(MINIBANK_DIR / "bank.py"), "--budget", "6", "--fail-under", "1.0", "--quiet"]) == 1


@pytest.mark.parametrize(
    ("setup", "args", "message"),
    [
        (None, ["missing.py"], "missing.py: no such file"),
        ("bad.py:\xff\xfe", ["bad.py"], "not UTF-8"),
        ("bad.py:def f(:\n", ["bad.py"], "bad.py:1: not valid Python"),
        ("bad.py:x = 1\x00\n", ["bad.py"], "not valid Python"),
        ("ok.py:x = 1\n", ["ok.py", "--operators", "nope"], "unknown operator(s) nope"),
        ("ok.py:x = 1\n", ["ok.py", "--budget", "0"], "--budget must be at least 1"),
        ("ok.py:x = 1\n", ["ok.py", "--jobs", "0"], "--jobs must be at least 1, got 0"),
        ("ok.py:x = 1\n", ["ok.py", "--fail-under", "90"], "--fail-under is a rate between 0 and 1"),
        (None, ["--agentdojo", "."], "not an agentdojo package"),
        (None, ["--benchmark", "agentdojo", "--package", "."], "not an agentdojo package"),
        (None, ["--benchmark", "agentdjo", "--package", "."], "did you mean 'agentdojo'?"),
        (None, ["--package", "."], "--package needs --benchmark NAME"),
        (
            None,
            ["--benchmark", "agentdojo"],
            "benchmark agentdojo needs its package directory (--package DIR)",
        ),
        (
            None,
            ["--agentdojo", ".", "--benchmark", "tau2"],
            "options name more than one benchmark: agentdojo, tau2",
        ),
        (None, ["--minibank", "."], "not the minibank fixture"),
        (None, [], "nothing to validate"),
    ],
)
def test_bad_input_gets_one_clear_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str], setup: str | None,
                                       args: list[str], message: str) -> None:
    monkeypatch.chdir(tmp_path)
    if setup:
        name, _, text = setup.partition(":")
        (tmp_path / name).write_bytes(text.encode("latin-1"))
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1 and "Traceback" not in err


def test_a_profile_without_a_validation_driver_is_a_usage_error(monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    with registered(monkeypatch, Profile("bare")):
        assert main(["--benchmark", "bare", "--package", "."]) == 2
    err = capsys.readouterr().err
    assert "benchmark 'bare' has no validation driver (profiles with one: agentdojo" in err
    assert len(err.strip().splitlines()) == 1


def test_confirm_on_agentdojo_needs_its_interpreter(
    agentdojo_src: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--agentdojo", str(agentdojo_src), "--confirm"]) == 2
    assert "needs --agentdojo-python" in capsys.readouterr().err
    # the long form names the long option
    assert main(["--benchmark", "agentdojo", "--package", str(agentdojo_src), "--confirm"]) == 2
    assert (
        "--confirm on AgentDojo needs --benchmark-python (its venv's interpreter)" in capsys.readouterr().err
    )


def test_unknown_cli_flag_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--no-such-flag"]) == 2
    assert "unrecognized arguments" in capsys.readouterr().err


def test_subject_for_any_module_runs_static_half(tmp_path: Path) -> None:
    tool = tmp_path / "tools.py"
    tool.write_text(
        "from typing import Annotated\n\n"
        "class Depends:\n    def __init__(self, name):\n        self.name = name\n\n"
        "def set_limit(db: Annotated[dict, Depends('db')], limit: int | None = None) -> str:\n"
        "    if limit is not None:\n        db['limit'] = limit\n    return 'ok'\n"
    )
    result = run([Subject("tools", tool, "tools")], operators=["truthify"])
    assert [r.mutant.description for r in result.mutants] == [
        "`limit is not None` turned into the truth test `limit`"]
    assert result.mutants[0].static.killed  # TL104 on `if limit:`


def test_survivor_diagnosis_names_undeclared_errors_and_legal_calls_that_raised() -> None:
    from types import SimpleNamespace

    from toollint.contracts.model import OnViolation

    from toollint.validate.harness import (
        DynamicOutcome,
        MutantResult,
        StaticOutcome,
        _legal_errors,
        _wrong_errors,
    )

    clause = SimpleNamespace(on_violation=OnViolation(raises="ValueError"))
    contract = SimpleNamespace(clause=lambda cid: clause if cid == "pre.exists" else None)

    def run_(kind: str, status: str, error: str | None, pre: str | None = None) -> SimpleNamespace:
        return SimpleNamespace(probe=SimpleNamespace(kind=kind, clause=pre), status=status,
                               result={"error_type": error, "error_message": "boom"})

    report_ = SimpleNamespace(tool="t", contract=contract, runs=[
        run_("pre_violating", "tool_error", "KeyError", "pre.exists"),
        run_("pre_violating", "tool_error", "ValueError", "pre.exists"),  # declared: fine
        run_("happy", "tool_error", "KeyError"), run_("happy", "ok", None)])
    assert _wrong_errors([report_]) == ["t pre.exists: raised KeyError, declared ValueError"]
    assert _legal_errors([report_]) == ["t: KeyError: boom"]
    m = mutation.mutants(MINIBANK_DIR.joinpath("bank.py").read_text(), "m.py", ["drop-guard"])[0]
    survivor = MutantResult(
        "minibank",
        m,
        StaticOutcome(False, []),
        DynamicOutcome(SURVIVED, covering=["t:pre.exists"], wrong_errors=_wrong_errors([report_])),
    )
    assert survivor.explanation().startswith("checker gap: the violating call was refused with another error")
    masked = MutantResult("minibank", m, StaticOutcome(False, []),
                          DynamicOutcome(SURVIVED, covering=["t:pre.exists"], masked=["t:eff.x"]))
    assert masked.explanation().startswith("masked: the original already violates t:eff.x")


def test_mutants_of_code_no_suite_registers_are_listed_but_not_counted(
        agentdojo_src: Path, agentdojo_python: Path) -> None:
    registered = agentdojo_registered_tools(str(agentdojo_python))
    assert (
        "send_money" in registered and "set_balance" not in registered and "download_file" not in registered
    )
    (subject,) = agentdojo_subjects(agentdojo_src, modules=["banking_client"], registered=registered)
    result = run([subject], operators=["phantom-write"], tools=["set_balance", "send_money"])
    by_function = {r.mutant.function: r for r in result.mutants}
    assert by_function["set_balance"].unreachable and not by_function["send_money"].unreachable
    assert by_function["set_balance"].explanation().startswith("unreachable: the benchmark registers no tool")
    _, total = report.rows(result.mutants)
    assert total.unreachable == 1 and total.mutants == len(result.mutants) - 1
    text = report.to_text(result)
    assert (
        "Unreachable, not counted (1):" in text and "set_balance" in text.split("Unreachable, not counted")[1]
    )


def test_registered_tools_need_a_working_interpreter(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(ValueError, match="cannot list AgentDojo's registered tools"):
        agentdojo_registered_tools(str(tmp_path / "no-python"))
    fake = tmp_path / "agentdojo" / "default_suites" / "v1" / "tools"
    fake.mkdir(parents=True)
    assert (
        main(["--agentdojo", str(tmp_path / "agentdojo"), "--agentdojo-python", str(tmp_path / "no-python")])
        == 2
    )
    err = capsys.readouterr().err
    assert "cannot list AgentDojo's registered tools" in err and "Traceback" not in err


def test_a_survivor_no_probe_tells_apart_is_named_as_such() -> None:
    # A semantics-preserving rewrite dressed as a mutant: every call replies and writes as the original.
    subject = minibank_subject(MINIBANK_DIR)
    assert subject.host is not None
    source = subject.path.read_text(encoding="utf-8")
    rewrite = next(c for c in mutation.controls(source, subject.shown, module_name=subject.module_name)
                   if c.operator == "rename-locals" and c.function == "Bank.deposit")
    equivalent = mutation.Mutant("equivalent", "drop-write", mutation.PARTIAL_EFFECT, rewrite.function,
                                 rewrite.tools, rewrite.line, "a rename only", rewrite.source)
    real = next(m for m in mutation.mutants(source, subject.shown, ["phantom-write"], ["Bank.deposit"],
                                            module_name=subject.module_name))
    with overlay(subject.host) as root:
        runner = DynamicRunner(subject, root)
        runner.run_baseline(["Bank.deposit"])
        same, broken = runner.outcome(equivalent), runner.outcome(real)
    assert same.status == SURVIVED and same.indistinguishable and same.indistinguishable > 3
    explained = MutantResult("minibank", equivalent, StaticOutcome(False, []), same).explanation()
    assert explained.startswith(f"no probe tells it apart: all {same.indistinguishable} calls")
    assert broken.status == KILLED and broken.indistinguishable is None
