"""Reads semgrep-style expectations marked on fixture lines: `# expect: TL104` (or `TL101, TL104`)."""

from __future__ import annotations

import re

EXPECT = re.compile(r"#\s*expect:\s*([A-Z0-9, ]+)")


def expected(source: str) -> set[tuple[int, str]]:
    """{(line, code)} for every code a fixture says must be reported on that line."""
    out = set()
    for lineno, line in enumerate(source.splitlines(), 1):
        m = EXPECT.search(line)
        if m:
            out |= {(lineno, code.strip()) for code in m.group(1).split(",") if code.strip()}
    return out
