"""# truthiness-on-falsy-legal-arg (TL104)

## What it does

Flags `if x:`, `if not x:`, `x or default`, `x and ...`, `... if x else ...` and `bool(x)` on a
tool parameter whose annotation or default admits a meaningful falsy value (`int`, `float`,
`bool`, `str`, `list`, `dict`, or `Optional[...]` of those), where the test gates a state write and
the falsy value takes a path that skips it. The message names the legal value that is dropped (0,
0.0, False, "", [], {}) and the fix.

## Why is this bad?

`Optional` parameters use `None` to mean "leave unchanged"; a truth test also treats `0`, `False`
and `""` as "unchanged". An agent that correctly asks to set an amount to 0 or to turn recurrence
off gets a success reply and an unchanged state (an *ignored argument*, or a *partial effect* when
other fields of the same call are written).

## Example

```python
from typing import Annotated

from benchmark.runtime import Depends


def update_scheduled_transaction(account: Annotated[dict, Depends("bank_account")], id: int,
                                 amount: float | None = None, recurring: bool | None = None) -> str:
    transaction = account["scheduled"][id]
    if amount:
        transaction["amount"] = amount
    if recurring:
        transaction["recurring"] = recurring
    return "Transaction updated."
```

## Use instead

```python
from typing import Annotated

from benchmark.runtime import Depends


def update_scheduled_transaction(account: Annotated[dict, Depends("bank_account")], id: int,
                                 amount: float | None = None, recurring: bool | None = None) -> str:
    transaction = account["scheduled"][id]
    if amount is not None:
        transaction["amount"] = amount
    if recurring is not None:
        transaction["recurring"] = recurring
    return "Transaction updated."
```

## Precision

High. The gate is judged on the branch the falsy value takes: `if flag and taken: raise` exits on
the truthy value, so the falsy one flows on to the write and nothing fires; a value already stored
before the test (`settings.on = on; if on: switch_off_wifi()`) is not dropped. Whether the falsy
value is legal is read from evidence, which sets the finding's confidence: a declared default or
`Literal[...]`, a `bool` (high); the benchmark's own JSON/YAML data holding that field with that value
(high); a write of it elsewhere in the module (high); the parameter's docstring line speaking of it
(medium); the type alone (low, reported only with `--confidence low`, and never given a safe fix),
said so when the name or docstring declares a format (`date`, an IBAN, "format YYYY-MM-DD"). A value
the tool refuses (`if not x: raise`, a `validate_*(x)` call on a string) is not legal: no finding.
Silent where the falsy value is not dropped: the `else` branch also writes (`if enabled:
on() else: off()` on a required `bool`), the test refuses it out loud (`if not agent_id: raise`),
the alternative is the falsy value itself (`flag or False`), or a ternary on a required flag
chooses between two values. An identifier (`*_id`, `path`, `name`, `repo`, ...) names nothing when
empty, so its `""` is not a legal value; and an empty string or list counts only for a parameter
whose value is stored, not one that merely selects. Annotation aliases (`Amount =
Optional[float]`, `UserId = NewType("UserId", str)`) are followed, in the same module or in the
module they are imported from. A parameter whose docstring says it is non-empty (`non-empty`,
`must not be empty`) is exempt for `str`/`list`/`dict` types.

## Options

None.

## References

- docs/method.md, Part 1 (truthiness on a falsy-legal argument) and Part 3 (Ignored Argument, TL202).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from functools import partial

from toollint.analysis import ParamInfo, ToolInfo, contains, function_nodes
from toollint.analysis.legality import falsy_premise
from toollint.analysis.paths import blocks
from toollint.analysis.resolver import MAX_DEPTH as MAX_ALIAS_DEPTH
from toollint.analysis.resolver import resolve_alias
from toollint.analysis.summary import FunctionSummary
from toollint.analysis.vocabulary import (
    CONTAINER_TYPES,
    ERROR_TEXT,
    FALSY_BY_TYPE,
    NON_EMPTY,
    is_identifier_name,
)
from toollint.analysis.walk import walk_nodes
from toollint.context import ModuleContext
from toollint.evidence import Confidence, Evidence, EvidenceKind, Premise
from toollint.model import Edit, Finding, Fix
from toollint.registry import rule

FALSY = {name: text for name, (text, _) in FALSY_BY_TYPE.items()}
CONTAINER_FALSY = frozenset(FALSY[c] for c in CONTAINER_TYPES)
TYPING_NAMES = {"Optional", "Union", "Annotated", "List", "Dict", "Set", "Tuple", "None"}
Resolver = Callable[[str], "ast.expr | None"]


def _type_names(ann: ast.expr | None, resolve: Resolver | None = None, depth: int = 0) -> set[str]:
    """Base type names an annotation admits: `float | None` -> {"float", "None"}. Names that are
    neither builtins nor typing constructs are looked up as aliases through `resolve`."""
    if ann is None:
        return set()
    known = isinstance(ann, ast.Name) and (ann.id in FALSY or ann.id in TYPING_NAMES)
    if resolve is not None and depth < MAX_ALIAS_DEPTH and isinstance(ann, ast.Name) and not known:
        target = resolve(ann.id)
        if target is not None:
            return _type_names(target, resolve, depth + 1)
    if isinstance(ann, ast.Constant):
        if ann.value is None:
            return {"None"}
        if isinstance(ann.value, str):
            try:
                return _type_names(ast.parse(ann.value, mode="eval").body, resolve, depth)
            except SyntaxError:
                return set()
        return set()
    if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):
        return _type_names(ann.left, resolve, depth) | _type_names(ann.right, resolve, depth)
    if isinstance(ann, ast.Subscript):
        base = _type_names(ann.value)
        if base & {"Optional", "Union"}:
            items = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
            return set().union(*(_type_names(i, resolve, depth) for i in items)) | (
                {"None"} if "Optional" in base else set()
            )
        if "Annotated" in base:
            first = ann.slice.elts[0] if isinstance(ann.slice, ast.Tuple) else ann.slice
            return _type_names(first, resolve, depth)
        return {b.lower() if b in ("List", "Dict", "Set", "Tuple") else b for b in base}
    if isinstance(ann, ast.Attribute):
        return {ann.attr}
    if isinstance(ann, ast.Name):
        return {ann.id.lower() if ann.id in ("List", "Dict", "Set", "Tuple") else ann.id}
    return set()


def admitted_types(param: ParamInfo, resolve: Resolver | None = None) -> set[str]:
    """Type names a parameter admits, from its annotation, else its default."""
    names = _type_names(param.annotation, resolve)
    if not names and isinstance(param.default, ast.Constant) and param.default.value is not None:
        names = {type(param.default.value).__name__}
    return names


def falsy_values(param: ParamInfo, resolve: Resolver | None = None) -> list[str]:
    """The meaningful falsy values a parameter admits. An identifier (`agent_id`, `path`, `name`)
    names nothing when empty, so its "" and [] are not legal values."""
    values = [FALSY[n] for n in sorted(admitted_types(param, resolve)) if n in FALSY]
    if is_identifier_name(param.name):
        values = [v for v in values if v not in CONTAINER_FALSY]
    return values


def rejects_falsy(stmt: ast.stmt | None, test_node: ast.AST, form: str) -> bool:
    """`if not x: raise ...` / `return "Error: ..."`: the falsy value is refused out loud, not dropped."""
    if not (isinstance(stmt, ast.If) and stmt is test_node and form == "if not" and stmt.body):
        return False
    last = stmt.body[-1]
    if isinstance(last, ast.Raise):
        return True
    return (
        isinstance(last, ast.Return)
        and last.value is not None
        and bool(ERROR_TEXT.search(ast.unparse(last.value)))
    )


def keeps_falsy(test_node: ast.AST, name: ast.Name) -> bool:
    """`flag or False`, `count or 0`: the alternative is the falsy value itself, so nothing is lost."""
    if not isinstance(test_node, ast.BoolOp):
        return False
    values = test_node.values
    index = next((i for i, v in enumerate(values) if v is name), None)
    if index is None or index + 1 >= len(values):
        return False
    alternative = values[index + 1]
    return isinstance(alternative, ast.Constant) and alternative.value is not None and not alternative.value


def falsy_branch_writes(
    stmt: ast.stmt | None, test_node: ast.AST, form: str, summary: FunctionSummary
) -> bool:
    """`if flag: write_a() else: write_b()`: the falsy value takes a branch that writes too."""
    if not (isinstance(stmt, ast.If) and stmt is test_node):
        return False
    branch = stmt.orelse if form == "if" else stmt.body if form == "if not" else []
    return any(id(s) in summary.writing_nodes for s in branch)


def writes_after(
    fn: ast.FunctionDef | ast.AsyncFunctionDef, stmt: ast.stmt, summary: FunctionSummary
) -> bool:
    """Some statement that runs after `stmt` falls through writes: a later statement of its block or of
    a block around it. A write in another branch of an `if` around it (a dispatcher's sibling
    action) is not after it."""
    return any(id(s) in summary.writing_nodes for block, index in blocks_around(fn, stmt, summary)
               for s in block[index + 1:])


def blocks_around(fn: ast.FunctionDef | ast.AsyncFunctionDef, stmt: ast.stmt,
                  summary: FunctionSummary) -> Iterator[tuple[list[ast.stmt], int]]:
    """Each statement list from the function's body down to `stmt`, with the index in it of the
    statement that holds `stmt` (or is it)."""
    around = summary.ancestors(stmt)
    block: list[ast.stmt] = fn.body
    while True:
        index = next((i for i, s in enumerate(block) if id(s) in around), None)
        if index is None:
            return
        yield block, index
        holder = block[index]
        if holder is stmt:
            return
        inner = next((b for b in blocks(holder) if any(id(x) in around for x in b)), None)
        if inner is None:
            return
        block = inner


def _documented_non_empty(tool: ToolInfo, name: str) -> bool:
    return any(name in line and NON_EMPTY.search(line) for line in tool.docstring.splitlines())


def truth_tests(
    fn: ast.FunctionDef | ast.AsyncFunctionDef, names: set[str]
) -> Iterator[tuple[ast.Name, ast.AST, str]]:
    """(name node, the node testing it, the form) for every truthiness test of `names`."""
    for node in function_nodes(fn):
        if type(node) not in _TESTING:
            continue  # (one look-up for the nine nodes in ten that test nothing)
        tests: list[tuple[ast.expr, str]] = []
        if isinstance(node, (ast.If, ast.While, ast.IfExp)):
            tests.append((node.test, "if"))
        elif isinstance(node, ast.BoolOp):
            form = "or" if isinstance(node.op, ast.Or) else "and"
            tests += [(v, form) for v in node.values if isinstance(v, ast.Name)]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "bool"
            and node.args
        ):
            tests.append((node.args[0], "bool"))
        for test, form in tests:
            if (
                isinstance(test, ast.UnaryOp)
                and isinstance(test.op, ast.Not)
                and isinstance(test.operand, ast.Name)
            ):
                if test.operand.id in names:
                    yield test.operand, node, "if not"
            elif isinstance(test, ast.Name) and test.id in names:
                yield test, node, form


# The node classes a truth test is made with (the parser's own: none is subclassed)
_TESTING = frozenset({ast.If, ast.While, ast.IfExp, ast.BoolOp, ast.Call})


def _statement_of(fn: ast.FunctionDef | ast.AsyncFunctionDef, target: ast.AST,
                  summary: FunctionSummary | None = None) -> ast.stmt | None:
    """The innermost statement of `fn` that contains `target` (the nodes around it read off the
    summary's parent links when it is `fn`'s, rather than a walk of every statement)."""
    around = summary.ancestors(target) if summary is not None and summary.node is fn else None
    best: ast.stmt | None = None
    for node in function_nodes(fn):
        if not isinstance(node, ast.stmt) or not (
                id(node) in around if around is not None else contains(node, target)):
            continue
        if best is None or (node.lineno, node.col_offset) >= (best.lineno, best.col_offset):
            best = node
    return best


def _fix(ctx: ModuleContext, name: ast.Name, test_node: ast.AST, form: str, safe: bool = True) -> Fix | None:
    """`is not None` for the truth test: safe only when the falsy value's legality has evidence beyond
    the type (otherwise `""` would become a legal IBAN or date)."""
    if form not in ("if", "if not"):
        return None
    expr = test_node.test if isinstance(test_node, (ast.If, ast.While, ast.IfExp)) else None
    if expr is None or expr.end_lineno is None or expr.end_col_offset is None:
        return None
    new = f"{name.id} is None" if form == "if not" else f"{name.id} is not None"
    edit = Edit(ctx.path, expr.lineno, ctx.char_col(expr.lineno, expr.col_offset) + 1,
                expr.end_lineno, ctx.char_col(expr.end_lineno, expr.end_col_offset) + 1, new)
    return Fix(f"Replace the truth test with `{new}`", (edit,), safe=safe)


@rule(
    code="TL104",
    name="truthiness-on-falsy-legal-arg",
    short="A truth test on a parameter drops a legal falsy value (0, 0.0, False, \"\") before a state write",
    level="warning",
    precision="high",
    tags=("correctness", "ignored-argument"),
    hint="Ignored Argument / Partial Effect",
)
def check(ctx: ModuleContext) -> Iterator[Finding]:
    analysis = ctx.analysis
    for tool in analysis.tools:
        summary = analysis.summary(tool)
        if not summary.writes_state:
            continue
        # Types are worked out only for parameters that are truth-tested at all: following an
        # imported alias reads another module, which most parameters never need.
        tests = list(truth_tests(tool.node, {p.name for p in summary.params}))
        tested = {name.id for name, _, _ in tests}
        candidates: dict[str, list[str]] = {}
        resolver = partial(resolve_alias, ctx.tree, ctx.module_name, ctx.path)
        for p in summary.params:
            testable = p.state_root is None and p.name in tested and p.name not in tool.framework_params
            values = falsy_values(p, resolver) if testable else []
            if not values:
                continue  # (before the docstring is read below: most parameters are never tested)
            containers_only = all(v in CONTAINER_FALSY for v in values)
            if containers_only and (
                _documented_non_empty(tool, p.name) or "state" not in summary.sinks(p.name)
            ):
                continue  # an empty string or list matters as a value stored, not as a selector
            candidates[p.name] = values
        if not candidates:
            continue
        for name, test_node, form in (t for t in tests if t[0].id in candidates):
            stmt = test_node if isinstance(test_node, ast.stmt) else _statement_of(
                tool.node, test_node, summary)
            if not gates_write(tool.node, stmt, test_node, name, form, summary):
                continue
            if rejects_falsy(stmt, test_node, form) or falsy_branch_writes(stmt, test_node, form, summary):
                continue
            if stored_before(tool.node, stmt, name.id, summary):
                continue  # the value already reached state: the test only picks an extra side effect
            param = summary.param(name.id)
            default_is_none = bool(
                param and isinstance(param.default, ast.Constant) and param.default.value is None
            )
            optional = default_is_none or (param is not None and "None" in admitted_types(param, resolver))
            if isinstance(test_node, ast.IfExp) and not optional:
                continue  # `"A" if flag else "B"` on a required flag chooses between two values
            if form == "or" and keeps_falsy(test_node, name):
                continue
            premises = [falsy_premise(tool, param, v, ctx.tree, ctx.disk_path) for v in candidates[name.id]] \
                if param is not None else []
            legal = [(v, pr) for v, pr in zip(candidates[name.id], premises) if pr is not None]
            if not legal:
                continue  # the tool or a helper refuses every one of them: nothing legal is dropped
            values = [v for v, _ in legal]
            premise = max((pr for _, pr in legal if pr is not None), key=lambda pr: pr.confidence)
            dropped = " / ".join(values)
            advice = (
                f"test `{name.id} {'is None' if form == 'if not' else 'is not None'}` instead"
                if optional
                else f"handle {dropped} explicitly"
            )
            shown = {"if": f"if {name.id}:", "if not": f"if not {name.id}:", "or": f"{name.id} or ...",
                     "and": f"{name.id} and ...", "bool": f"bool({name.id})"}[form]
            guard = test_node.test if isinstance(test_node, (ast.If, ast.While, ast.IfExp)) else (
                stmt.test if isinstance(stmt, (ast.If, ast.While)) else None)
            yield ctx.finding(
                "TL104",
                name,
                f"`{shown}` in `{tool.name}` treats the legal value {dropped} of `{name.id}` as absent and "
                f"skips the state write; {advice}",
                tool=tool.qualname,
                fix=_fix(ctx, name, test_node, form, safe=premise.confidence > Confidence.LOW)
                if default_is_none else None,
                evidence=Evidence(parameter=name.id, guard=guard, premises=(
                    Premise(f"`{shown}` gates a state write the falsy value skips", EvidenceKind.CODE,
                            f"line {getattr(stmt, 'lineno', name.lineno)}"), premise)),
                param=name.id,
                form=form,
                dropped=values,
                default_is_none=default_is_none,
            )


def falsy_direction(test: ast.expr, name: ast.Name) -> bool | None:
    """The truth of an `if` test when `name` holds its falsy value: `x` -> False, `not x` -> True,
    `x and ...` -> False, `not x or ...` -> True; None when the other operands decide."""
    if test is name:
        return False
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = falsy_direction(test.operand, name)
        return None if inner is None else not inner
    if isinstance(test, ast.BoolOp):
        for value in test.values:
            d = falsy_direction(value, name)
            if d is False and isinstance(test.op, ast.And):
                return False
            if d is True and isinstance(test.op, ast.Or):
                return True
    return None


def gates_write(fn: ast.FunctionDef | ast.AsyncFunctionDef, stmt: ast.stmt | None, test_node: ast.AST,
                name: ast.Name, form: str, summary: FunctionSummary) -> bool:
    """The test decides whether a state write happens, and the falsy value takes the side without it.
    Judged on the branch the falsy value takes: `if flag and taken: raise` exits on the truthy value,
    so the falsy one flows on to the writes after it."""
    if stmt is None:
        return False
    if isinstance(stmt, ast.If) and contains(stmt.test, name):
        direction = falsy_direction(stmt.test, name)
        taken, other = (stmt.body, stmt.orelse) if direction else (stmt.orelse, stmt.body)
        if direction is not None:
            if _leaves(other) and not _writes(other, summary):
                return False  # the exit is on the truthy side: the falsy value goes on
            if _leaves(taken) and not _writes(taken, summary):
                return writes_after(fn, stmt, summary)
            return _writes(other, summary) and not _writes(taken, summary)
    gates = id(stmt) in summary.writing_nodes
    if (
        not gates
        and isinstance(stmt, ast.If)
        and stmt.body
        and isinstance(stmt.body[-1], (ast.Return, ast.Raise))
    ):
        gates = writes_after(fn, stmt, summary)  # `if not x: return ...` gates every write after it
    if not gates and isinstance(stmt, ast.Assign) and "state" in summary.sinks(name.id):
        gates = True  # `value = x or default` feeding a later write
    return gates


def _leaves(body: list[ast.stmt]) -> bool:
    return bool(body) and isinstance(body[-1], (ast.Return, ast.Raise))


def _writes(body: list[ast.stmt], summary: FunctionSummary) -> bool:
    return any(id(s) in summary.writing_nodes for s in body)


def stored_before(fn: ast.FunctionDef | ast.AsyncFunctionDef, stmt: ast.stmt | None, name: str,
                  summary: FunctionSummary) -> bool:
    """The parameter's value reached state on every path before the test: a plain statement of a
    block around the test, earlier than it, writes state and reads the parameter
    (`settings.on = on` / `save(on=on)` then `if on: also_switch_off_x()`)."""
    if stmt is None:
        return False
    return any(
        isinstance(earlier, (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign))
        and id(earlier) in summary.writing_nodes
        and any(isinstance(n, ast.Name) and n.id == name for n in walk_nodes(earlier))
        for block, index in blocks_around(fn, stmt, summary) for earlier in block[:index])
