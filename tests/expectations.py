"""Reads semgrep-style expectations marked on fixture lines: `# expect: TL104` (or `TL101, TL104`);
`TL104[low]` marks a finding whose premise has only low confidence, reported at `confidence = "low"`."""

from __future__ import annotations

import re

EXPECT = re.compile(r"#\s*expect:\s*([A-Z0-9, \[\]a-z]+?)(?:\s+\(|\s*--|\s*$)")
LEVELS = ("low", "medium", "high")


def expected(source: str, least: str = "low") -> set[tuple[int, str]]:
    """{(line, code)} for every code a fixture says must be reported on that line when findings of at
    least confidence `least` are (`TL104[low]` only at "low")."""
    out = set()
    for lineno, line in enumerate(source.splitlines(), 1):
        m = EXPECT.search(line)
        if not m:
            continue
        for item in (c.strip() for c in m.group(1).split(",")):
            code, _, level = item.partition("[")
            if code and LEVELS.index(level.rstrip("]") or "high") >= LEVELS.index(least):
                out.add((lineno, code.strip()))
    return out


TOOL = re.compile(r"#\s*tool(?::\s*(writer))?\b")
REJECTED = re.compile(r"#\s*rejected\b")


def expected_tools(source: str) -> set[tuple[int, bool]]:
    """{(line, writes)} for every line a fixture marks `# tool` (a reader) or `# tool: writer`."""
    out = set()
    for lineno, line in enumerate(source.splitlines(), 1):
        m = TOOL.search(line)
        if m:
            out.add((lineno, bool(m.group(1))))
    return out


def expected_rejections(source: str) -> set[int]:
    """Lines of functions a fixture marks `# rejected`: they look like tools and must not be taken."""
    return {lineno for lineno, line in enumerate(source.splitlines(), 1) if REJECTED.search(line)}
