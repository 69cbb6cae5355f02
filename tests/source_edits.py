"""Hand-made defects for tests: one text edit inside one module-level function of a source file."""

from __future__ import annotations


def edit_function(source: str, function: str, old: str, new: str) -> str:
    """`source` with the one occurrence of `old` inside `def function(...)` replaced by `new`."""
    start = source.index(f"\ndef {function}(")
    end = source.find("\ndef ", start + 1)
    end = len(source) if end < 0 else end
    body = source[start:end]
    assert body.count(old) == 1, (function, old)
    return source[:start] + body.replace(old, new) + source[end:]
