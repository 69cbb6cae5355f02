"""docs/rules.md is what SARIF's helpUri and the JSON output's `url` point at: it must list every code
under the anchor those links use, with the rule's current documentation."""

from __future__ import annotations

import re
from pathlib import Path

from toollint import registry

DOC = Path(__file__).resolve().parents[1] / "docs" / "rules.md"


def test_rules_md_is_generated_from_the_registry() -> None:
    # Regenerate with: python -c "from toollint.registry import rules_markdown as r; open('docs/rules.md', 'w').write(r())"
    assert DOC.read_text() == registry.rules_markdown()


def test_every_help_uri_anchor_exists() -> None:
    # GitHub's anchor for "## TL104 truthiness-on-falsy-legal-arg": lower case, spaces to hyphens.
    anchors = {re.sub(r"[^a-z0-9 -]", "", h.lower()).replace(" ", "-")
               for h in re.findall(r"^## (.+)$", DOC.read_text(), re.MULTILINE)}
    for rule in registry.all_rules():
        assert rule.help_uri.rsplit("#", 1)[1] in anchors
