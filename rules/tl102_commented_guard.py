"""# commented-out-guard (TL102)

## What it does

Flags, inside a tool body or a helper the tool calls (resolved by name, up to three hops), a run of
comment lines that, uncommented and dedented, parses as a guard: an `if ...:` whose body raises or
returns an error, an `assert ...`, or a bare `raise ...`. Prose comments never fire: the text must
parse as Python and have a guard's shape.

## Why is this bad?

A guard that was commented out (to debug, or "temporarily") leaves the tool accepting calls its
docstring says it refuses. The agent is told the check exists; the environment no longer enforces
it, so tasks that depend on the refusal are scored against a world that behaves differently (an
*unenforced precondition*).

## Example

```python
class TelecomTools:
    @is_tool(ToolType.WRITE)
    def refuel_data(self, line_id: str, gb_amount: float) -> str:
        \"\"\"Refuel data. Checks: Line status must be Active.\"\"\"
        line = self.lines[line_id]
        # if line.status != "Active":
        #     raise ValueError("Line is not active")
        line.data_refueling_gb += gb_amount
        return "Data refuelled."
```

## Use instead

Restore the guard, or delete it and the docstring claim together:

```python
class TelecomTools:
    @is_tool(ToolType.WRITE)
    def refuel_data(self, line_id: str, gb_amount: float) -> str:
        \"\"\"Refuel data. Checks: Line status must be Active.\"\"\"
        line = self.lines[line_id]
        if line.status != "Active":
            raise ValueError("Line is not active")
        line.data_refueling_gb += gb_amount
        return "Data refuelled."
```

## Precision

High. A commented-out fault injector (its condition draws a random number or names a failure
rate, or the comment above it says it simulates failures) is switched off on purpose: it is never
reported, so `--unsafe-fixes` never turns it back on. A run of comments holding several guards
reports each.

## Options

None.

## References

- docs/method.md, Part 1 (commented-out guard) and Part 3 (Unenforced Precondition, TL201).
"""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Iterator

from toollint.analysis import ToolInfo
from toollint.analysis.vocabulary import ERROR_TEXT, FAULT_INJECTION, PROMISE_WORDS
from toollint.context import Comment, ModuleContext
from toollint.evidence import Evidence, EvidenceKind, Premise
from toollint.model import Finding, RelatedLocation
from toollint.registry import rule

MAX_GUARD_LINES = 8


def _uncomment(comment: Comment) -> str:
    text = comment.text[1:]
    return text.removeprefix(" ")


def _is_error_return(stmt: ast.stmt) -> bool:
    if not isinstance(stmt, ast.Return) or stmt.value is None:
        return False
    if isinstance(stmt.value, ast.Constant) and stmt.value.value in (False, None):
        return True
    return bool(ERROR_TEXT.search(ast.unparse(stmt.value)))


def guard_in(stmts: list[ast.stmt]) -> ast.stmt | None:
    """The first statement shaped like a guard, if every statement parsed is code-like."""
    for stmt in stmts:
        if isinstance(stmt, (ast.Assert, ast.Raise)):
            return stmt
        if isinstance(stmt, ast.If) and any(
            isinstance(s, ast.Raise) or _is_error_return(s) for s in stmt.body + stmt.orelse
        ):
            return stmt
    return None


# What a guard's text holds (`guard_in`: an assert, a raise, or an `if` that raises or returns).
_GUARD_WORD = re.compile(r"\b(?:assert|raise|return)\b")


def _parse(lines: list[str]) -> list[ast.stmt] | None:
    try:
        return ast.parse(textwrap.dedent("\n".join(lines))).body
    except (SyntaxError, ValueError):
        return None


def find_guard(run: list[Comment], begin: int = 0) -> tuple[int, int, ast.stmt] | None:
    """(first, last) indexes into `run` of the first window from `begin` that parses as a guard."""
    texts = [_uncomment(c) for c in run]
    # the last line of each that holds a guard's keyword: a window ending before it holds no guard, and
    # is not parsed (most comments are prose: each window tried was a parse)
    keyword = [i for i, t in enumerate(texts) if _GUARD_WORD.search(t)]
    for start in range(begin, len(texts)):
        if not texts[start].strip() or texts[start][:1] in " \t":
            continue  # a guard starts at the run's outermost indentation
        first_keyword = next((i for i in keyword if i >= start), None)
        if first_keyword is None:
            break
        for end in range(min(len(texts), start + MAX_GUARD_LINES), first_keyword, -1):
            body = _parse(texts[start:end])
            if body:
                guard = guard_in(body)
                if guard is not None:  # the guard's own lines, not the whole window that parsed
                    return start, start + (guard.end_lineno or guard.lineno) - 1, guard
    return None


def is_fault_injector(run: list[Comment], first: int, guard: ast.stmt) -> bool:
    """A commented-out `raise` that injects failures: its condition draws a random number or names a
    failure rate (`if random.random() < FAILURE_RATE:`), or the comments just above it say so
    ("# Simulate a flaky network"). Not a precondition: never a TL102, never an `--unsafe-fixes` edit."""
    condition = guard.test if isinstance(guard, (ast.If, ast.Assert)) else guard
    if FAULT_INJECTION.search(ast.unparse(condition)):
        return True
    return any(FAULT_INJECTION.search(c.text) for c in run[max(0, first - 2):first])


def refusing_condition(guard: ast.stmt) -> ast.expr | None:
    """When the guard refuses: `c` of `if c: raise ...`, `not c` of `assert c`; None for a bare raise."""
    if isinstance(guard, ast.If):
        return guard.test
    if isinstance(guard, ast.Assert):
        return ast.UnaryOp(op=ast.Not(), operand=guard.test)
    return None


def guard_evidence(guard: ast.stmt, premises: tuple[Premise, ...] = ()) -> Evidence:
    """What a TL102 finding hands to `--confirm`: the check itself, when it refuses, and why it is
    believed to be a check."""
    return Evidence(guard=refusing_condition(guard), guard_statement=guard, premises=premises)


def comment_runs(comments: list[Comment], first: int, last: int) -> Iterator[list[Comment]]:
    run: list[Comment] = []
    for c in comments:
        if not (first <= c.line <= last) or not c.own_line:
            continue
        if run and c.line != run[-1].line + 1:
            yield run
            run = []
        run.append(c)
    if run:
        yield run


def promise_line(fn: ast.FunctionDef | ast.AsyncFunctionDef, guard: ast.stmt) -> int | None:
    """The docstring line that promises this check, judged by shared words with the guard."""
    doc = fn.body[0] if fn.body and isinstance(fn.body[0], ast.Expr) else None
    if doc is None or not isinstance(doc.value, ast.Constant) or not isinstance(doc.value.value, str):
        return None
    words = {w.lower() for w in re.findall(r"[A-Za-z]{3,}", ast.unparse(guard).replace("_", " "))}
    best: tuple[int, int] | None = None
    for offset, line in enumerate(doc.value.value.splitlines()):
        if not PROMISE_WORDS.search(line):
            continue
        shared = len(words & {w.lower() for w in re.findall(r"[A-Za-z]{3,}", line)})
        if shared and (best is None or shared > best[0]):
            best = (shared, doc.lineno + offset)
    return best[1] if best else None


@rule(
    code="TL102",
    name="commented-out-guard",
    short="A commented-out guard (if/raise, assert, raise) in a tool or a helper it calls",
    level="warning",
    precision="high",
    tags=("correctness", "unenforced-precondition"),
    hint="Unenforced Precondition",
)
def check(ctx: ModuleContext) -> Iterator[Finding]:
    tools = ctx.analysis.tools
    if not tools or "#" not in ctx.source:
        return
    for tool in tools:
        yield from _guards_in(ctx, tool, tool.node)
    # Helpers the tools call (by name, up to three hops): a guard moved into `_check_line()` and
    # commented out there is the same defect. A helper shared by several tools is reported once.
    # Only helpers of this file: one imported from another module has its comments there (that
    # module's own tools report it when it is linted).
    index = ctx.analysis.index
    here = {id(f) for f in index.functions.values()} | {
        id(m) for ms in index.methods.values() for m in ms.values()
    }
    seen = {id(tool.node) for tool in tools}
    for tool in tools:
        for helper in ctx.analysis.summary(tool).helpers:
            if id(helper) in here and id(helper) not in seen:
                seen.add(id(helper))
                yield from _guards_in(ctx, tool, helper)


def _guards_in(
    ctx: ModuleContext, tool: ToolInfo, fn: ast.FunctionDef | ast.AsyncFunctionDef
) -> Iterator[Finding]:
    for run in comment_runs(ctx.own_line_comments(fn), fn.lineno, fn.end_lineno or fn.lineno):
        yield from _run_guards(ctx, tool, fn, run)


def _run_guards(ctx: ModuleContext, tool: ToolInfo, fn: ast.FunctionDef | ast.AsyncFunctionDef,
                run: list[Comment]) -> Iterator[Finding]:
    begin = 0
    while (found := find_guard(run, begin)) is not None:
        first, last, guard = found
        injector = is_fault_injector(run[begin:], first - begin, guard)
        begin = last + 1
        if injector:
            continue  # switched off on purpose; reporting it would invite turning failures back on
        related = []
        promised = promise_line(tool.node, guard)
        if promised is not None:
            related.append(RelatedLocation(ctx.path, promised, 1, "the docstring promises this check"))
        start, end = run[first], run[last]
        where = f"`{tool.name}`" if fn is tool.node else f"`{fn.name}`, a helper of `{tool.name}`,"
        yield ctx.finding(
            "TL102",
            None,
            f"{where} has a commented-out guard: `{ast.unparse(guard).splitlines()[0]}`",
            line=start.line,
            col=start.col + 1,
            end_line=end.line,
            end_col=end.col + len(end.text) + 1,
            tool=tool.qualname,
            related=related,
            evidence=guard_evidence(guard, premises=(
                Premise("the commented-out lines are a guard", EvidenceKind.CODE,
                        f"line {start.line} parses as `{ast.unparse(guard).splitlines()[0]}`"),
                *([Premise("the check is promised", EvidenceKind.DOCSTRING, f"docstring line {promised}")]
                  if promised is not None else []))),
            guard=ast.unparse(guard),  # shown in the JSON and SARIF properties
        )
