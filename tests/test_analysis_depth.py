"""The analysis never recurses on the depth of the code it reads: a 400-branch `elif` dispatcher and a
1000-term sum (both compile in CPython) are analysed like any tool, with no TL904; an expression
nested deeper than the summariser follows is a TL905 for that tool only."""

from __future__ import annotations

from toollint.engine import lint_source
from toollint.settings import Settings

HEADER = "from typing import Annotated\n"


def elif_dispatcher(branches: int) -> str:
    lines = [
        HEADER,
        "def dispatch(db: Annotated[dict, Depends('db')], op: str, flag: bool | None = None) -> str:\n",
    ]
    for i in range(branches):
        lines.append(f"    {'if' if i == 0 else 'elif'} op == 'op{i}':\n        db['k{i}'] = {i}\n")
    lines.append("    else:\n        return 'Unknown op'\n")
    lines.append("    if flag:\n        db['flag'] = flag\n")  # a real TL104 after the chain
    lines.append("    return 'Updated.'\n")
    return "".join(lines)


def test_a_400_branch_elif_chain_is_analysed() -> None:
    source = elif_dispatcher(400)
    compile(source, "x.py", "exec")
    result = lint_source(source, "x.py", Settings(select=["TL1", "TL9"]))
    codes = [(f.line, f.code) for f in result.reported]
    assert all(code not in ("TL904", "TL905") for _, code in codes), codes
    flag_line = source.splitlines().index("    if flag:") + 1
    assert (flag_line, "TL104") in codes
    assert result.tools is not None and [t.writes for t in result.tools] == [True]


def test_a_1000_term_sum_is_analysed() -> None:
    source = HEADER + (
        "def total(db: Annotated[dict, Depends('db')], a: int, note: str) -> str:\n"
        f"    db['t'] = {' + '.join(['a'] * 1000)}\n"
        "    return 'Saved.'\n"
    )
    compile(source, "x.py", "exec")
    result = lint_source(source, "x.py", Settings(select=["TL1", "TL9"]))
    assert [(f.line, f.code) for f in result.reported] == [(2, "TL103")]  # `note` is never read; `a` is


def test_an_expression_too_deep_to_follow_is_one_tl905_not_a_crash() -> None:
    nested = "not " * 300 + "x"  # each `not` is a level of the tree: deeper than the analysis follows
    source = HEADER + (
        "def deep(db: Annotated[dict, Depends('db')], x: int) -> str:\n"
        f"    db['v'] = {nested}\n"
        "    return 'Set.'\n"
        "def fine(db: Annotated[dict, Depends('db')], y: int, z: int) -> str:\n"
        "    db['y'] = y\n"
        "    return 'Set.'\n"
    )
    result = lint_source(source, "x.py", Settings(select=["TL1", "TL9"]))
    codes = sorted((f.line, f.code) for f in result.reported)
    assert (2, "TL905") in codes and (5, "TL103") in codes
    assert all(code != "TL904" for _, code in codes)


def test_a_1000_deep_attribute_chain_is_one_tl905() -> None:
    source = HEADER + (
        "def deep(db: Annotated[dict, Depends('db')], x: int) -> str:\n"
        f"    db['v'] = x{'.a' * 1000}\n"
        "    return 'Set.'\n"
    )
    compile(source, "x.py", "exec")
    result = lint_source(source, "x.py", Settings(select=["TL1", "TL9"]))
    assert [(f.line, f.code) for f in result.reported] == [(2, "TL905")]
