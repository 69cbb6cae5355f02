"""SARIF from real `toollint check` runs: every log is checked against the OASIS schema and the
GitHub profile (`test_sarif.assert_valid_sarif`)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from test_sarif import assert_valid_sarif

from toollint.cli import main
from toollint.fingerprint import line_hashes

FIXTURE = Path(__file__).parent / "fixtures" / "frontends" / "banking_tools.py"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "pyproject.toml").write_text("[tool.toollint]\nselect = ['TL1', 'TL9']\n", encoding="utf-8")
    (tmp_path / "suite").mkdir()
    shutil.copy(FIXTURE, tmp_path / "suite" / "banking_tools.py")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _load(path: str | Path) -> dict[str, Any]:
    log: dict[str, Any] = json.loads(Path(path).read_text(encoding="utf-8"))
    return log


def _by_rule(log: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The first result of each rule."""
    return {r["ruleId"]: r for r in reversed(log["runs"][0]["results"])}


def test_text_and_several_sarif_outputs_in_one_run(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["check", "--sarif-output", "a.sarif", "--sarif-output", "b.sarif", "suite"])
    assert code == 1
    out = capsys.readouterr().out
    assert "suite/banking_tools.py:28:8: TL104" in out  # the text report, on stdout as usual
    a, b = _load("a.sarif"), _load("b.sarif")
    assert_valid_sarif(a)
    assert a == b
    assert sorted(_by_rule(a)) == ["TL101", "TL102", "TL103", "TL104", "TL105"]
    assert a["runs"][0]["invocations"][0]["executionSuccessful"] is True


def test_sarif_result_details_from_a_real_run(project: Path) -> None:
    assert main(["check", "--output-format", "sarif", "-o", "toollint.sarif", "suite"]) == 1
    log = _load("toollint.sarif")
    assert_valid_sarif(log)
    results = _by_rule(log)
    text = (project / "suite" / "banking_tools.py").read_text(encoding="utf-8")
    hashes = line_hashes(text)
    for r in log["runs"][0]["results"]:
        region = r["locations"][0]["physicalLocation"]["region"]
        assert r["partialFingerprints"]["primaryLocationLineHash"] == hashes[region["startLine"]]
        assert r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "suite/banking_tools.py"
    # TL103 sits after a non-BMP character on its line: one more UTF-16 code unit than code points.
    tl103 = results["TL103"]["locations"][0]["physicalLocation"]["region"]
    assert tl103["startLine"] == 37 and tl103["startColumn"] == 79
    # TL102: the docstring line that promises the check is a related location.
    (promise,) = results["TL102"]["relatedLocations"]
    assert promise["physicalLocation"]["region"]["startLine"] == 24
    # TL105: the partner's write is a related location.
    (partner,) = results["TL105"]["relatedLocations"]
    assert partner["physicalLocation"]["region"]["startLine"] == 58 and "writes" in partner["message"]["text"]
    assert results["TL104"]["fixes"][0]["artifactChanges"][0]["replacements"][0]["insertedContent"] == {
        "text": "amount is not None"
    }
    assert results["TL104"]["properties"]["param"] == "amount"


def test_paths_are_relative_to_the_project_root_from_a_subdirectory(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project / "suite")
    assert main(["check", "--output-format", "sarif", "-o", str(project / "out.sarif"), "."]) == 1
    log = _load(project / "out.sarif")
    assert_valid_sarif(log)
    uris = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in log["runs"][0]["results"]
    }
    assert uris == {"suite/banking_tools.py"}
    assert log["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"] == project.resolve().as_uri() + "/"


def test_parse_failure_and_category(project: Path) -> None:
    (project / "suite" / "broken.py").write_text("def f(:\n    pass\n", encoding="utf-8")
    code = main(["check", "--sarif-output", "t.sarif", "--sarif-category", "toollint/banking", "-q", "suite"])
    assert code == 1
    log = _load("t.sarif")
    assert_valid_sarif(log)
    run = log["runs"][0]
    assert run["automationDetails"]["id"] == "toollint/banking/"
    invocation = run["invocations"][0]
    assert invocation["executionSuccessful"] is False
    (note,) = invocation["toolExecutionNotifications"]
    assert note["descriptor"]["id"] == "TL901" and note["message"]["text"].startswith("suite/broken.py: ")
    assert "TL104" in _by_rule(log)  # the other file is still reported


def test_suppressed_only_with_the_flag(project: Path) -> None:
    tools = project / "suite" / "banking_tools.py"
    tools.write_text(
        tools.read_text(encoding="utf-8").replace("    if amount:\n", "    if amount:  # noqa: TL104\n"),
        encoding="utf-8",
    )
    main(["check", "-q", "--sarif-output", "plain.sarif", "suite"])
    main(["check", "-q", "--sarif-output", "all.sarif", "--sarif-include-suppressed", "suite"])
    plain, everything = _load("plain.sarif"), _load("all.sarif")
    assert_valid_sarif(plain)
    assert_valid_sarif(everything, allow_suppressed=True)
    lines = [
        r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in plain["runs"][0]["results"]
    ]
    assert 28 not in lines
    suppressed = [r for r in everything["runs"][0]["results"] if "suppressions" in r]
    assert [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in suppressed] == [28]
    # The fingerprints of the other results do not move when a finding is suppressed.
    fp = {r["partialFingerprints"]["toollint/v1"] for r in plain["runs"][0]["results"]}
    assert fp <= {r["partialFingerprints"]["toollint/v1"] for r in everything["runs"][0]["results"]}


def test_unwritable_sarif_output_is_one_line_exit_2(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "blocker").write_text("")  # a file where the SARIF's folder would be
    assert main(["check", "-q", "--sarif-output", "blocker/x.sarif", "suite"]) == 2
    err = capsys.readouterr().err
    assert "cannot write blocker/x.sarif: blocker is not a directory" in err and "Traceback" not in err


def test_documented_workflow_is_consistent_with_the_cli() -> None:
    """The upload-sarif workflow in docs/integrations.md parses, and its toollint command is one the
    CLI accepts, writing the file the upload step reads."""
    import re
    import shlex

    import yaml

    from toollint.cli import build_parser

    doc = (Path(__file__).parents[1] / "docs" / "integrations.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```yaml\n(.*?)```", doc, flags=re.DOTALL)
    workflow = next(yaml.safe_load(b) for b in blocks if "upload-sarif" in b)
    steps = workflow["jobs"]["toollint"]["steps"]
    command = next(s["run"] for s in steps if str(s.get("run", "")).startswith("toollint "))
    args = build_parser().parse_args(shlex.split(command)[1:])
    upload = next(s for s in steps if "upload-sarif" in s.get("uses", ""))
    assert args.sarif_output == [upload["with"]["sarif_file"]]
    assert args.sarif_category == upload["with"]["category"]
    hooks = next(yaml.safe_load(b) for b in blocks if "pre-commit" in b or "hooks:" in b)
    hook_ids = [h["id"] for repo in hooks["repos"] for h in repo["hooks"]]
    manifest = yaml.safe_load(
        (Path(__file__).parents[1] / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")
    )
    assert hook_ids == [manifest[0]["id"]]


def test_several_outputs_are_rendered_once(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from toollint.reporters import sarif

    calls: list[int] = []
    real = sarif.build_sarif

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(sarif, "build_sarif", counting)
    main(["check", "-q", "--sarif-output", "a.sarif", "--sarif-output", "b.sarif", "suite"])
    assert len(calls) == 1  # so a cap warning is printed once, too
    assert _load("a.sarif") == _load("b.sarif")


def test_text_alias_with_a_sarif_side_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """The issue's own example: `--output-format text --sarif-output toollint.sarif`."""
    (tmp_path / "t.py").write_text(
        "from typing import Annotated\n"
        "def f(db: Annotated[dict, Depends('db')], n: bool | None = None) -> None:\n"
        "    if n:\n        db['n'] = n\n"
    )
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--output-format", "text", "--sarif-output", "toollint.sarif", "t.py"]) == 1
    assert "t.py:3:8: TL104 [truthiness-on-falsy-legal-arg]" in capsys.readouterr().out
    assert json.loads((tmp_path / "toollint.sarif").read_text())["runs"][0]["results"][0]["ruleId"] == "TL104"


def test_fingerprints_and_messages_do_not_change_with_confirm_on_agentdojo(
    agentdojo_python: Path, agentdojo_src: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str]
) -> None:
    """The real banking tools: the TL1xx results of a plain run, of `--confirm`, and of `--confirm`
    with another `--witness-dir` carry the same fingerprints and messages; the verdict and witness
    are in `properties` (they used to be appended to the message, and so to the fingerprint)."""
    shutil.copy(agentdojo_src / "default_suites" / "v1" / "tools" / "banking_client.py", tmp_path)
    monkeypatch.chdir(tmp_path)
    runs = {}
    for name, extra in (("plain", []), ("confirm", ["--confirm"]),
                        ("elsewhere", ["--confirm", "--witness-dir", "other/witnesses"])):
        main(
            [
                "check",
                "--python",
                str(agentdojo_python),
                *extra,
                "--confidence",
                "low",
                "--output-format",
                "sarif",
                "-o",
                f"{name}.sarif",
                "banking_client.py",
            ]
        )
        results = json.loads((tmp_path / f"{name}.sarif").read_text())["runs"][0]["results"]
        runs[name] = [r for r in results if r["ruleId"].startswith("TL1")]
    capsys.readouterr()

    def keys(results: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
        return [(r["ruleId"], r["message"]["text"], r["partialFingerprints"]["toollint/v1"]) for r in results]

    assert len(runs["plain"]) == 6
    assert keys(runs["plain"]) == keys(runs["confirm"]) == keys(runs["elsewhere"])
    assert all("verdict" not in r.get("properties", {}) for r in runs["plain"])
    verdicts = {r["properties"]["verdict"] for r in runs["confirm"]}
    assert verdicts == {"VIOLATES", "CONFORMS"}
    witnesses = [r["properties"]["witness"] for r in runs["elsewhere"] if "witness" in r["properties"]]
    assert witnesses and all("other/witnesses" in w for w in witnesses)


VERDICT_BENCH = Path(__file__).parent / "fixtures" / "verdict_bench"


def test_an_untested_finding_says_why_in_sarif_as_in_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`docs/confirm.md`'s verdict_bench run, its contract leaving `users[*].balance` out on purpose:
    the text line's `[LEFT_OUT: why]` is in the SARIF result's message too, and the reason in its
    properties (so would an UNTESTABLE's or an UNCHECKED's be)."""
    from test_confirm_clauses import LEFT_OUT

    shutil.copytree(VERDICT_BENCH, tmp_path / "bench")
    (tmp_path / "bench" / "pyproject.toml").write_text(
        '[tool.toollint]\ncontract-dirs = ["contracts"]\ntool-decorators = ["tool"]\n\n'
        '[tool.toollint.confirm]\nadapter = "toolkit"\nfactory = "airline:make_airline"\nsys-path = ["."]\n',
        encoding="utf-8")
    contract = tmp_path / "bench" / "contracts" / "cancel_reservation.yaml"
    contract.write_text(contract.read_text() + LEFT_OUT)
    monkeypatch.chdir(tmp_path / "bench")
    assert main(["check", "--confirm", "--sarif-output", "out.sarif", "airline.py"]) == 1
    text = [line for line in capsys.readouterr().out.splitlines()
            if re.search(r"\[(LEFT_OUT|UNCHECKED|UNTESTABLE): ", line)]
    log = _load("out.sarif")
    assert_valid_sarif(log)
    untested = [r for r in log["runs"][0]["results"]
                if r.get("properties", {}).get("verdict") not in (None, "VIOLATES", "FLAKY", "CONFORMS")]
    assert untested and len(untested) == len(text)
    for result, line in zip(untested, text):
        detail = result["properties"]["verdict_detail"]
        note = f"[{result['properties']['verdict']}: {detail}]"
        assert detail and result["message"]["text"].endswith(note) and line.endswith(note)
