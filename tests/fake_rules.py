"""Throwaway rules for testing the engine's plumbing independently of the real rules' precision.

TL190 flags every function whose name starts with `bad_`; TL191 raises on files containing `CRASH`.
`install(monkeypatch)` registers both for one test; nothing is added to `rules/`.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

import pytest

from toollint import registry
from toollint.context import ModuleContext
from toollint.model import Finding

FLAG, CRASH = "TL190", "TL191"


def flag_bad_functions(ctx: ModuleContext) -> Iterator[Finding]:
    for node in ast.walk(ctx.tree):
        if isinstance(node, ast.FunctionDef) and node.name.startswith("bad_"):
            yield ctx.finding(FLAG, node, f"function `{node.name}` is bad", tool=node.name)


def crash_on_marker(ctx: ModuleContext) -> Iterator[Finding]:
    if "CRASH" in ctx.source:
        raise ZeroDivisionError("boom\nsecond line never shown")
    yield from ()


def install(monkeypatch: pytest.MonkeyPatch) -> None:
    registry.all_rules()  # load the real ones first so ours are added, not replaced
    doc = "## What it does\n\nTest rule.\n"
    monkeypatch.setitem(
        registry._RULES,
        FLAG,
        registry.Rule(FLAG, "flag-bad-function", "Bad function", doc, check=flag_bad_functions),
    )
    monkeypatch.setitem(
        registry._RULES, CRASH, registry.Rule(CRASH, "crash-on-marker", "Crashes", doc, check=crash_on_marker)
    )


@pytest.fixture
def fake_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    install(monkeypatch)
