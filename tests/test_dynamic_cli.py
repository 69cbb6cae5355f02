"""`toollint check --confirm` on the main path and `toollint replay`, through toollint's own CLI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from toollint.cli import main

BENCH = Path(__file__).parent / "fixtures" / "dynamic_bench"
CONFIG = """
[tool.toollint]
contract-dirs = ["contracts"]
tool-decorators = ["tool"]

[tool.toollint.confirm]
adapter = "toolkit"
factory = "bank:make_bank"
sys-path = ["."]
deadline = 3
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copytree(BENCH, tmp_path / "proj")
    root = tmp_path / "proj"
    (root / "pyproject.toml").write_text(CONFIG)
    monkeypatch.chdir(root)
    return root


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[dict]]:  # type: ignore[type-arg]
    code = main(["check", *argv, "--output-format", "json", "bank.py"])
    return code, json.loads(capsys.readouterr().out)


def test_confirm_attaches_verdicts_to_static_findings(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, findings = run_json(capsys, "--confirm")
    assert code == 1
    static = {
        (f["code"], f.get("tool") or f["message"].split("`")[1]): f
        for f in findings
        if f["code"].startswith("TL1")
    }
    verdicts = {key: f["properties"].get("verdict") for key, f in static.items()}
    # A flagged tool the checker confirms is VIOLATES; one it cannot break is shown as CONFORMS, not hidden.
    assert "VIOLATES" in verdicts.values() and "CONFORMS" in verdicts.values()
    dynamic = [f for f in findings if f["code"].startswith("TL2")]
    assert {(f["code"], f["properties"]["clause"]) for f in dynamic} == {
        ("TL201", "pre.account_active"),
        ("TL202", "eff.balance_set"),
        ("TL202", "arg.balance"),
        ("TL205", "eff.balance_set"),
        ("TL205", "arg.balance"),  # set_balance_cached: static TL101, dynamic TL205
        # archive_account_phantom: "archive" is a writer verb of the shared vocabulary, so its constant
        # "Account archived." with nothing written is a static TL101 too, confirmed as TL204
        ("TL204", "eff.archived"),
        ("TL204", "success"),
    }
    assert all(f["filename"] == "bank.py" for f in dynamic)  # the same file as the static findings
    witnesses = sorted((project / ".toollint" / "witnesses").glob("*.json"))
    assert len(witnesses) == len(dynamic)  # one per confirmed violation
    assert main(["replay", str(witnesses[0]), "--repeat", "1"]) == 1


def test_confirm_all_checks_unflagged_tools_and_reports_contract_problems(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, findings = run_json(capsys, "--confirm-all", "--witness-dir", "w")
    assert code == 1
    codes = {f["code"] for f in findings}
    assert {"TL201", "TL202", "TL203", "TL204", "TL205", "TL206", "TL309"} <= codes
    missing = next(f for f in findings if f["code"] == "TL309")
    assert "'no_such_tool' is not among the 18 tools" in missing["message"]
    assert len(list((project / "w").glob("*.json"))) == sum(f["code"].startswith("TL2") for f in findings)


def test_sarif_carries_verdict_and_witness(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["check", "--confirm", "--output-format", "sarif", "bank.py"])
    sarif = json.loads(capsys.readouterr().out)
    results = sarif["runs"][0]["results"]
    tl201 = next(r for r in results if r["ruleId"] == "TL201")
    assert tl201["properties"]["verdict"] == "VIOLATES"
    assert tl201["properties"]["witness"].endswith(
        "withdraw_unchecked.pre.account_active.pre_violating.1.json"
    )
    guard = next(r for r in results if r["ruleId"] == "TL102")
    assert guard["properties"]["verdict"] == "VIOLATES"


def test_text_output_shows_the_verdict_next_to_the_finding(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["check", "--confirm", "bank.py"])
    lines = capsys.readouterr().out.splitlines()
    assert any("TL102" in x and x.endswith("withdraw_unchecked.pre.account_active.pre_violating.1.json]")
               for x in lines)
    assert any("set_balance_flaky" in x and x.endswith("[CONFORMS]") for x in lines)


def test_confirm_with_a_benchmark_that_cannot_start(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "pyproject.toml").write_text(CONFIG.replace("bank:make_bank", "broken:make"))
    code, findings = run_json(capsys, "--confirm")
    assert code == 1  # the static findings remain
    flagged = [f for f in findings if f["code"].startswith("TL1")]
    assert flagged and all(f["properties"]["verdict"] == "UNTESTABLE" for f in flagged)
    assert all(
        "RuntimeError: benchmark data missing: bank.db" in f["properties"]["verdict_detail"] for f in flagged
    )


def test_replay_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", str(tmp_path / "nope.json")]) == 2
    assert capsys.readouterr().out.strip() == f"NOT REPLAYED: no witness file {tmp_path / 'nope.json'}"
    assert main(["replay"]) == 2  # usage error, one line from argparse


def test_messages_and_fingerprints_are_the_same_with_and_without_confirm(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from toollint.fingerprint import toollint_fingerprints
    from toollint.model import Finding

    def static(*argv: str) -> list[tuple[str, str, str]]:
        findings = [f for f in run_json(capsys, *argv)[1] if f["code"].startswith("TL1")]
        as_findings = [Finding(f["code"], f["message"], f["filename"], f["location"]["row"], tool=f["tool"])
                       for f in findings]
        return [(f["code"], f["message"], fp) for f, fp in zip(findings, toollint_fingerprints(as_findings))]

    plain = static()
    assert plain == static("--confirm", "--witness-dir", "elsewhere")  # and test_sarif_cli: three ways
    main(["check", "--confirm", "--witness-dir", "w2", "bank.py"])
    text = capsys.readouterr().out  # the text report still shows the verdict, rendered from properties
    assert any(line.endswith(".json]") and "[VIOLATES: w2/" in line for line in text.splitlines())


def test_a_missing_interpreter_is_a_usage_error(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--confirm", "--python", "/no/such/python", "bank.py"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == ("toollint: error: --python: /no/such/python: no such file "
                                 "(the benchmark's interpreter, for --confirm)\n")
    (project / "pyproject.toml").write_text(CONFIG + 'python = "/no/such/python"\n')
    assert main(["check", "--confirm", "bank.py"]) == 2
    err = capsys.readouterr().err
    assert (
        err.startswith("toollint: error: 'python' in ") and "[tool.toollint.confirm]: /no/such/python" in err
    )
    assert main(["check", "bank.py"]) == 1  # without --confirm the interpreter is not needed
    capsys.readouterr()


@pytest.mark.parametrize(("line", "message"), [
    ("deadline = -1", "'deadline' in .* must be greater than 0"),
    ('deadline = "3"', "'deadline' in .* must be a number, not a string"),
    ("deadlin = 3", "unknown key 'deadlin' .* did you mean 'deadline'"),
])
def test_bad_confirm_settings_name_the_key(project: Path, capsys: pytest.CaptureFixture[str], line: str,
                                           message: str) -> None:
    import re

    (project / "pyproject.toml").write_text(CONFIG.replace("deadline = 3", line))
    assert main(["check", "--confirm", "bank.py"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and re.search(message, err) and "internal error" not in err
