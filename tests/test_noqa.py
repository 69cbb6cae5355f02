"""Suppression comments and TL900 (unused-noqa)."""

from __future__ import annotations

import pytest
from fake_rules import FLAG, fake_rules  # noqa: F401 - fixture

from toollint.engine import lint_source
from toollint.noqa import parse_codes
from toollint.settings import Settings

pytestmark = pytest.mark.usefixtures("fake_rules")
SETTINGS = Settings(select=[FLAG, "TL900"])


def lint(source: str, settings: Settings = SETTINGS) -> list[tuple[str, int, bool]]:
    return [(f.code, f.line, f.suppressed) for f in lint_source(source, "m.py", settings).findings]


@pytest.mark.parametrize(
    "comment",
    [
        "# noqa: TL190",
        "# noqa:TL190",
        "# NOQA: TL190",
        "# noqa: E501, TL190",
        "# noqa: E501 TL190",
        "# noqa: flag-bad-function",
        "# noqa: TL190 -- bad_ is the upstream name",
        "# noqa: TL190 because upstream",
        "# noqa",
        "# noqa -- whatever",
        "# noqa:",
        "# type: ignore  # noqa: TL190",
    ],
)
def test_line_noqa_variants_suppress(comment: str) -> None:
    assert lint(f"def bad_x():  {comment}\n    pass\n") == [(FLAG, 1, True)]


@pytest.mark.parametrize("comment", ["# noqa: TL104", "# noqa: E501", "# a prose comment about noqa"])
def test_noqa_for_other_codes_does_not_suppress(comment: str) -> None:
    found = lint(f"def bad_x():  {comment}\n    pass\n", Settings(select=[FLAG]))
    assert found == [(FLAG, 1, False)]


def test_noqa_inside_a_string_is_not_a_comment() -> None:
    assert lint('def bad_x(a="# noqa: TL190"):\n    pass\n') == [(FLAG, 1, False)]


def test_noqa_counts_only_on_the_findings_line() -> None:
    source = "def bad_x(\n    a,  # noqa: TL190\n):\n    pass\n"
    found = lint(source)
    assert (FLAG, 1, False) in found
    assert ("TL900", 2, False) in found


@pytest.mark.parametrize(
    "comment", ["# toollint: noqa", "# toollint: noqa: TL190", "#toollint:noqa:flag-bad-function"]
)
def test_file_level_noqa(comment: str) -> None:
    source = f"{comment}\ndef bad_a():\n    pass\ndef bad_b():\n    pass\n"
    assert lint(source) == [(FLAG, 2, True), (FLAG, 4, True)]


def test_file_level_noqa_for_another_code_leaves_findings() -> None:
    source = "# toollint: noqa: TL101\ndef bad_a():\n    pass\n"
    assert (FLAG, 2, False) in lint(source, Settings(select=[FLAG]))


def test_unused_noqa_code_is_reported_with_its_location() -> None:
    result = lint_source("def good():  # noqa: TL190, E501\n    pass\n", "m.py", SETTINGS)
    (finding,) = result.findings
    assert (finding.code, finding.line, finding.col) == ("TL900", 1, 14)
    assert "TL190" in finding.message and "E501" not in finding.message


def test_partly_used_noqa_reports_the_unused_code_only() -> None:
    settings = Settings(select=[FLAG, "TL101", "TL900"])
    result = lint_source("def bad_x():  # noqa: TL190, TL101\n    pass\n", "m.py", settings)
    unused = [f for f in result.findings if f.code == "TL900"]
    assert len(unused) == 1 and "TL101" in unused[0].message and "TL190" not in unused[0].message


def test_unknown_tl_code_in_noqa_is_reported() -> None:
    result = lint_source("x = 1  # noqa: TL999\n", "m.py", SETTINGS)
    assert [f.code for f in result.findings] == ["TL900"]
    assert "TL999 (unknown code)" in result.findings[0].message


def test_bare_noqa_and_foreign_codes_are_never_reported_unused() -> None:
    assert lint("x = 1  # noqa\ny = 2  # noqa: E501\n") == []


def test_codes_not_enabled_in_this_run_are_not_reported_unused() -> None:
    assert lint("x = 1  # noqa: TL104\n", Settings(select=[FLAG, "TL900"])) == []


def test_unused_noqa_can_be_ignored_or_silenced() -> None:
    source = "x = 1  # noqa: TL190\n"
    assert lint(source, Settings(select=[FLAG], ignore=["TL900"])) == []
    assert lint("x = 1  # noqa: TL190, TL900\n") == []
    assert lint("# toollint: noqa: TL900\n" + source) == []


def test_unused_file_level_code_is_reported() -> None:
    found = lint("# toollint: noqa: TL190\nx = 1\n")
    assert found == [("TL900", 1, False)]


def test_tl900_is_on_by_default() -> None:
    assert [c for c, _, _ in lint("x = 1  # noqa: TL190\n", Settings())] == ["TL900"]


def test_parse_codes_stops_at_the_reason() -> None:
    assert parse_codes(" TL104, log-only-argument E501 -- TL101 is fine") == ("TL104", "TL103", "E501")
    assert parse_codes(" because reasons") is None
