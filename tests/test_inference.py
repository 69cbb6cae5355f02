"""Annotation aliases, local and imported (followed through astroid without importing anything)."""

from __future__ import annotations

import ast
from pathlib import Path

from expectations import expected

from toollint.analysis.resolver import resolve_alias
from toollint.engine import lint_paths, lint_source
from toollint.settings import Settings

BENCH = Path(__file__).parent / "fixtures" / "aliases" / "bench"


def test_imported_and_local_aliases_reach_tl104() -> None:
    tools = BENCH / "tools.py"
    result = lint_paths(
        [str(tools)], Settings(select=["TL104"], confidence="low")
    )  # the alias's reach, any premise
    got = {(f.line, f.code) for r in result.files for f in r.reported}
    assert got == expected(tools.read_text())


def test_newtype_and_optional_aliases_resolve() -> None:
    tree = ast.parse((BENCH / "tools.py").read_text())
    path = str(BENCH / "tools.py")
    amount = resolve_alias(tree, "bench.tools", path, "Amount")
    label = resolve_alias(tree, "bench.tools", path, "Label")
    assert amount is not None and ast.unparse(amount) == "Optional[float]"
    assert label is not None and ast.unparse(label) == "str"


def test_unresolvable_import_leaves_the_name_unknown() -> None:
    source = "from missing_pkg.types import Amount\n"
    assert resolve_alias(ast.parse(source), "x", "/nonexistent/x.py", "Amount") is None
    # and a tool using it is simply not judged on that parameter
    tool = (
        "from typing import Annotated\nfrom missing_pkg.types import Amount\n"
        "def f(db: Annotated[dict, Depends('db')], amount: Amount = None) -> None:\n"
        "    if amount:\n        db['a'] = amount\n"
    )
    assert lint_source(tool, "/nonexistent/x.py", Settings(select=["TL1"])).reported == []
