"""docs/rules.md is what SARIF's helpUri and the JSON output's `url` point at: it must list every code
under the anchor those links use, with the rule's current documentation."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from toollint import registry

DOC = Path(__file__).resolve().parents[1] / "docs" / "rules.md"


def test_rules_md_is_generated_from_the_registry() -> None:
    # Regenerate with:
    #   python -c "from toollint.registry import rules_markdown as r; open('docs/rules.md', 'w').write(r())"
    assert DOC.read_text() == registry.rules_markdown()


def test_every_help_uri_anchor_exists() -> None:
    # GitHub's anchor for "## TL104 truthiness-on-falsy-legal-arg": lower case, spaces to hyphens.
    anchors = {re.sub(r"[^a-z0-9 -]", "", h.lower()).replace(" ", "-")
               for h in re.findall(r"^## (.+)$", DOC.read_text(), re.MULTILINE)}
    for rule in registry.all_rules():
        assert rule.help_uri.rsplit("#", 1)[1] in anchors


def _block(doc: str, heading: str) -> str:
    section = doc.split(f"## {heading}", 1)[1].split("\n## ", 1)[0]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match, f"no python block under {heading!r}"
    return match.group(1)


@pytest.mark.parametrize("rule", registry.static_rules(), ids=lambda r: r.code)
def test_rule_doc_examples_run(rule: registry.Rule) -> None:
    """A doc example is a test: the Example fires the rule, the Use instead does not."""
    from toollint.engine import lint_source
    from toollint.settings import Settings

    settings = Settings(select=[rule.code])
    example, fixed = _block(rule.doc, "Example"), _block(rule.doc, "Use instead")
    fired = [f.code for f in lint_source(example, "example.py", settings).reported]
    assert rule.code in fired, f"{rule.code}'s Example does not fire it"
    assert lint_source(fixed, "fixed.py", settings).reported == [], f"{rule.code}'s Use instead still fires"


@pytest.mark.parametrize("rule", registry.static_rules(), ids=lambda r: r.code)
def test_rule_docs_cite_the_method_and_say_how_precise_they_are(rule: registry.Rule) -> None:
    assert "docs/method.md" in rule.doc and "METHOD.md" not in rule.doc.replace("docs/method.md", "")
    assert "## Precision" in rule.doc
