"""Semgrep-style fixture tests: each file under tests/fixtures/rules/ marks the findings it must
produce on the lines themselves (`# expect: TL104`); every other line must stay silent."""

from __future__ import annotations

from pathlib import Path

import pytest
from expectations import expected

from toollint import registry
from toollint.engine import lint_source
from toollint.settings import Settings

FIXTURES = Path(__file__).parent / "fixtures" / "rules"


@pytest.mark.parametrize("least", ["medium", "low"])
@pytest.mark.parametrize("fixture", sorted(FIXTURES.glob("*.py")), ids=lambda p: p.stem)
def test_fixture_findings_match_annotations(fixture: Path, least: str) -> None:
    """At the default confidence (medium) and at `--confidence low`, which adds the `[low]` ones."""
    source = fixture.read_text()
    result = lint_source(source, str(fixture), Settings(select=["TL1"], confidence=least))
    got = {(f.line, f.code) for f in result.reported}
    assert got == expected(source, least)


def test_every_static_rule_has_a_fixture_that_fires_it() -> None:
    fired = set()
    # the grader rules' fixtures are tests/fixtures/graders/ (tests/test_graders.py runs them)
    for fixture in [*FIXTURES.glob("*.py"), *(FIXTURES.parent / "graders").glob("*.py")]:
        fired |= {code for _, code in expected(fixture.read_text())}
    assert {r.code for r in registry.static_rules()} <= fired


@pytest.mark.parametrize("rule", registry.static_rules(), ids=lambda r: r.code)
def test_rule_docs_have_ruff_headings(rule: registry.Rule) -> None:
    for heading in ("## What it does", "## Why is this bad?", "## Example", "## Use instead", "## Options",
                    "## References"):
        assert heading in rule.doc, f"{rule.code} doc lacks {heading!r}"
    assert rule.doc.startswith(f"# {rule.name} ({rule.code})")


def test_tl104_message_names_dropped_value_and_fix() -> None:
    src = (FIXTURES / "tl104_truthiness.py").read_text()
    findings = [f for f in lint_source(src, "x.py", Settings(select=["TL104"], confidence="low")).reported
                if f.line == 16]
    assert len(findings) == 1
    assert "0.0" in findings[0].message and "is not None" in findings[0].message
    assert findings[0].fix is not None and findings[0].fix.edits[0].replacement == "amount is not None"


def test_tl105_points_at_the_partners_write() -> None:
    src = (FIXTURES / "tl105_unpaired_verb_field.py").read_text()
    (finding,) = lint_source(src, "x.py", Settings(select=["TL105"])).reported
    assert finding.properties["field"] == "db.flights[*].available_seats"
    assert [r.line for r in finding.related] == [19]


def test_tl102_relates_the_docstring_promise() -> None:
    src = (FIXTURES / "tl102_commented_guard.py").read_text()
    first = min(lint_source(src, "x.py", Settings(select=["TL102"])).reported, key=lambda f: f.line)
    assert first.related and first.related[0].line == 20  # "Checks: Line status must be Active."


def test_bundled_example_fires_every_rule_and_nothing_else() -> None:
    import toollint.examples

    source_path = Path(toollint.examples.__file__).parent / "airline_tools.py"
    findings = lint_source(source_path.read_text(), str(source_path), Settings()).reported
    assert sorted(f.code for f in findings) == ["TL101", "TL102", "TL103", "TL104", "TL105"]


def test_tl101_names_a_swallowing_try_even_when_every_write_is_conditional() -> None:
    src = (
        "from typing import Annotated\n"
        "from agentdojo.functions_runtime import Depends\n"
        "def update(store: Annotated[dict, Depends('s')], a: int | None = None, "
        "b: int | None = None) -> str:\n"
        "    if a is not None:\n"
        "        try:\n"
        "            store['a'] = a\n"
        "        except KeyError:\n"
        "            pass\n"
        "    if b is not None:\n"
        "        store['b'] = b\n"
        "    return 'Updated.'\n"
    )
    (finding,) = lint_source(src, "x.py", Settings(select=["TL101"])).reported
    assert "every write sits under a condition" in finding.message
    assert "the write at line 6 is in a `try` whose `except` (line 7) swallows its failure" in finding.message


def test_unsafe_fixes_restore_a_guard_but_never_a_fault_injector() -> None:
    from toollint.fixes import fix_source

    path = FIXTURES / "precision_shapes.py"
    src = path.read_text()
    findings = lint_source(src, str(path), Settings(select=["TL102"])).reported
    fixed = fix_source(str(path), src, findings, unsafe=True).fixed
    assert '        if line["status"] != "active":' in fixed  # the precondition is back
    assert "        # if random.random() < 0.1:" in fixed  # the injector stays switched off
    assert "\n        if random.random()" not in fixed
