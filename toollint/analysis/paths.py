"""Path reasoning over a summarised function: does every path to this `return` write state?

`write_guaranteed_before(body, ret, summary)` is what TL101 asks; `definitely_writes` and
`statement_definitely_writes` are its parts. All of it is iterative in the nesting of the code: an
`elif` chain of any length is decided bottom-up with a memo, and the descent to a target statement
is a loop, so no depth of real code can exhaust the interpreter's recursion limit.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from toollint.analysis.discovery import ToolInfo
from toollint.analysis.effects import outside_write
from toollint.analysis.summary import FunctionNode, FunctionSummary, elif_chain
from toollint.analysis.vocabulary import FAILURE_WORDS, is_write_verb
from toollint.analysis.walk import depth_first, kept_for_body, walk_nodes


def is_writer(tool: ToolInfo, summary: FunctionSummary) -> bool:
    """A tool writes state when it is declared a writer or when its body (or a helper) writes: a tool
    declared not to write (`ToolType.READ`, `mutates_state=False`) that writes all the same (a read that
    logs the call to the database the grader compares) is a writer, as its code says."""
    return bool(tool.declared_writer) or summary.writes_state


def claims_to_write(tool: ToolInfo) -> bool:
    """A tool that says it writes: declared a writer, or, undeclared, named with a writing verb
    (`send_money`, `update_user`) while it has state within reach. Such a tool that writes nothing
    is the phantom TL101 looks for."""
    if tool.declared_writer is not None:
        return tool.declared_writer
    return bool(tool.roots) and is_write_verb(tool.name)


def writer_reason(tool: ToolInfo, summary: FunctionSummary | None, declared: list[str] | None = None,
                  docs: tuple[str, ...] = (), modes: tuple[str, ...] = ()) -> tuple[bool, str]:
    """Whether a tool writes, and why, in words for `--show-tools`. `declared`: what the model is told
    the tool is (`toollint.analysis.effects.declaration`), for writes outside the state it sees."""
    if summary is None:
        return False, "not analysed (too complex)"
    if tool.declared_writer is False and not summary.writes:
        return False, f"declared not to write by {tool.declared_by or 'its marker'}"
    if summary.writes:
        first = summary.writes[0]
        via = f" through `{first.via[-1]}`" if first.via else ""
        more = (
            f" (+{len({w.path for w in summary.writes}) - 1} more)"
            if len({w.path for w in summary.writes}) > 1
            else ""
        )
        return True, f"writes `{first.path or 'self'}` at line {first.line}{via}{more}"
    if tool.declared_writer:
        return (
            True,
            f"declared a writer by {tool.declared_by or 'its marker'}; writes nothing the analysis sees",
        )
    outside = outside_write(summary, declared or [], docs, modes)
    if outside is not None:
        return True, f"writes outside the state it sees: {outside.describe()}"
    if summary.external:
        return False, f"may write outside the state it sees: `{summary.external[0].callee}` (not followed)"
    if not tool.roots and not summary.reads:
        return False, "no state within reach"
    return False, "writes nothing"


def terminates(stmts: list[ast.stmt]) -> bool:
    return bool(stmts) and isinstance(stmts[-1], (ast.Raise, ast.Return, ast.Continue, ast.Break))


def definitely_writes(stmts: list[ast.stmt], summary: FunctionSummary) -> bool:
    """Every path through `stmts` that falls through to the next statement wrote state."""
    for s in stmts:
        if statement_definitely_writes(s, summary):
            return True
        if isinstance(s, (ast.Raise, ast.Return)):
            return False
    return False


def _writes_or_leaves(stmts: list[ast.stmt], summary: FunctionSummary) -> bool:
    return definitely_writes(stmts, summary) or terminates(stmts)


def statement_definitely_writes(s: ast.stmt, summary: FunctionSummary) -> bool:
    memo = summary.definite
    if id(s) in memo:
        return memo[id(s)]
    if isinstance(s, ast.If):
        chain, _ = elif_chain(s)
        for branch in reversed(chain[1:]):  # bottom-up: each elif's answer is memoised before its parent's
            statement_definitely_writes(branch, summary)
    result = _decide(s, summary)
    memo[id(s)] = result
    return result


def _decide(s: ast.stmt, summary: FunctionSummary) -> bool:
    if id(s) not in summary.writing_nodes:
        return False
    if refused_write(s, summary) is not None:
        return False  # `helper(...)` whose write can be refused, its answer ignored
    if id(s) in summary.header_writes:
        return True  # `if not add_to_db(...):` writes before either branch
    if isinstance(s, ast.If):
        both = _writes_or_leaves(s.body, summary) and _writes_or_leaves(s.orelse, summary)
        return both and not (terminates(s.body) and terminates(s.orelse))
    if isinstance(s, (ast.With, ast.AsyncWith)):
        return definitely_writes(s.body, summary)
    if isinstance(s, ast.Try):
        # A handler that does not re-raise swallows the failure of the write.
        handlers_ok = all(_writes_or_leaves(h.body, summary) for h in s.handlers)
        return handlers_ok and (definitely_writes(s.body, summary) or definitely_writes(s.finalbody, summary))
    # A loop may run zero times; a match may take a case that does not write.
    return not isinstance(s, (ast.For, ast.AsyncFor, ast.While, ast.Match))


def refused_write(s: ast.stmt, summary: FunctionSummary) -> tuple[str, int] | None:
    """`self._add(x)` as a statement, where the helper can refuse: some `return False` (or `0`, or an
    error text) of it comes before any write is guaranteed. The caller ignores the answer, so the
    write is not guaranteed. (helper name, line of the refusing return), else None."""
    call = s.value if isinstance(s, ast.Expr) else None
    if isinstance(call, ast.Await):
        call = call.value
    sub = summary.helper_calls.get(id(call)) if isinstance(call, ast.Call) else None
    if sub is None or not sub.writes:
        return None
    for ret in sub.returns:
        value = ret.value
        refusal = isinstance(value, ast.Constant) and (
            value.value is False or (isinstance(value.value, str) and bool(FAILURE_WORDS.search(value.value)))
        )
        if refusal and not write_guaranteed_before(sub.node.body, ret, sub):
            return sub.name, ret.lineno
    return None


def write_guaranteed_before(stmts: list[ast.stmt], target: ast.stmt, summary: FunctionSummary) -> bool | None:
    """Whether every path from the start of `stmts` to `target` wrote state; None if not in `stmts`."""
    around = summary.ancestors(target)
    guaranteed = False
    block = stmts
    while True:
        cover = _WriteCover()
        holder: ast.stmt | None = None
        for s in block:
            if s is target:
                return guaranteed
            if id(s) in around:
                holder = s
                break
            guaranteed = guaranteed or statement_definitely_writes(s, summary) or cover.step(s, summary)
        if holder is None:
            return None
        guaranteed = guaranteed or id(holder) in summary.header_writes
        inner = _block_holding(holder, around)
        if inner is None:
            return guaranteed  # the target is inside an expression or a nested definition
        if isinstance(holder, ast.Try) and inner is holder.orelse:
            guaranteed = guaranteed or definitely_writes(holder.body, summary)
        block = inner


def _block_holding(s: ast.stmt, around: set[int]) -> list[ast.stmt] | None:
    for block in blocks(s):
        if any(id(x) in around for x in block):
            return block
    return None


def _literal(test: ast.expr) -> str | None:
    """A condition in a canonical text form, when it is a single comparison or truth test."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _literal(test.operand)
        return None if inner is None else _negate_literal(inner)
    if isinstance(test, (ast.Compare, ast.Name, ast.Attribute, ast.Subscript, ast.Call)):
        return ast.unparse(test)
    return None


_NEGATED_OPS = [(" is not ", " is "), (" != ", " == "), (" not in ", " in ")]


def _negate_literal(text: str) -> str:
    for positive, negative in _NEGATED_OPS:
        if positive in text:
            return text.replace(positive, negative, 1)
        if negative in text:
            return text.replace(negative, positive, 1)
    return text[4:] if text.startswith("not ") else f"not {text}"


def _negation(test: ast.expr) -> frozenset[str] | None:
    """`not test` as a disjunction of literals: `a is None and b is None` ->
    {a is not None, b is not None}."""
    parts = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
    if len(parts) > 16:
        return None
    literals = [_literal(p) for p in parts]
    if any(lit is None for lit in literals):
        return None
    return frozenset(_negate_literal(lit) for lit in literals if lit is not None)


class _WriteCover:
    """Guards that leave, followed by conditional writes that together cover what the guards let
    through: `if a is None and b is None: raise` then `if a is not None: write` and
    `if b is not None: write` guarantees a write although each write alone is conditional. A found
    flag counts too: `found = False`, a loop that sets `found = True` only right after a write, then
    `if not found: raise` guarantees the write."""

    def __init__(self) -> None:
        self.known: list[frozenset[str]] = []  # disjunctions that hold after the guards seen so far
        self.written_when: set[str] = set()  # conditions under which some write definitely happened

    def step(self, s: ast.stmt, summary: FunctionSummary) -> bool:
        if (
            isinstance(s, ast.If)
            and not s.orelse
            and terminates(s.body)
            and _found_flag_guard(s.test, summary)
        ):
            return True
        if isinstance(s, ast.If) and not s.orelse:
            if terminates(s.body):
                negation = _negation(s.test)
                if negation is not None:
                    self.known.append(negation)
            elif definitely_writes(s.body, summary):
                literal = _literal(s.test)
                if literal is not None:
                    self.written_when.add(literal)
        return any(disjunction <= self.written_when for disjunction in self.known)


def _found_flag_guard(test: ast.expr, summary: FunctionSummary) -> bool:
    """`if not found:` where every `found = True` of the function follows a definite write in its own
    block (`record.x = v; found = True; break`): past this guard, the write happened."""
    if not (
        isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and isinstance(test.operand, ast.Name)
    ):
        return False
    flag = test.operand.id
    sets = 0
    for block in _all_blocks(summary.node.body):
        for i, s in enumerate(block):
            if (
                isinstance(s, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == flag for t in s.targets)
                and isinstance(s.value, ast.Constant)
                and s.value.value is True
            ):
                sets += 1
                if not definitely_writes(block[:i], summary):
                    return False
    return sets > 0


def _all_blocks(body: list[ast.stmt]) -> Iterator[list[ast.stmt]]:
    """Every statement list of a function body (not of nested definitions), iteratively."""
    stack = [body]
    while stack:
        block = stack.pop()
        yield block
        for s in block:
            if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                stack.extend(blocks(s))


def no_change_requested(body: list[ast.stmt], target: ast.stmt, summary: FunctionSummary,
                        optional: frozenset[str]) -> bool:
    """An optional-field updater: every write before `target` (a return of the function's own body)
    sits under `if field is not None:` (or `is not NOT_GIVEN`) for an optional parameter, so the only
    path on which nothing is written is a call that asked for no change."""
    if target not in body:
        return False
    guarded = 0
    for s in body[:body.index(target)]:
        if isinstance(s, ast.If) and terminates(s.body) and any(
                isinstance(n, ast.Name) and n.id in optional for n in walk_nodes(s.test)):
            return False  # `if a is None: raise`: the call must ask for something, and may not get it
        if id(s) not in summary.writing_nodes:
            continue
        if not (isinstance(s, ast.If) and _asks_for_change(s.test, optional)) and not _applies_updates(
            s, summary
        ):
            return False
        guarded += 1
    return guarded > 0


def _applies_updates(s: ast.stmt, summary: FunctionSummary) -> bool:
    """`for key, value in updates.items(): if value is not None: record[key] = value`: a loop over a
    parameter writing each entry given, so the path without a write is a call that gave none."""
    if not isinstance(s, ast.For):
        return False
    source = s.iter.func.value if isinstance(s.iter, ast.Call) and isinstance(s.iter.func, ast.Attribute) \
        else s.iter
    if not (isinstance(source, ast.Name) and source.id in {p.name for p in summary.params}):
        return False
    entries = frozenset(n.id for n in walk_nodes(s.target) if isinstance(n, ast.Name))
    return (
        all(
            statement_definitely_writes(b, summary)
            or (isinstance(b, ast.If) and _asks_for_change(b.test, entries))
            for b in s.body
            if id(b) in summary.writing_nodes
        )
        and not s.orelse
    )


def _asks_for_change(test: ast.expr, optional: frozenset[str]) -> bool:
    """`x is not None`, `x != None`, `x is not NOT_GIVEN` on an optional parameter (or an `or` of them)."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        return all(_asks_for_change(v, optional) for v in test.values)
    return (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], (ast.IsNot, ast.NotEq))
        and isinstance(test.left, ast.Name)
        and test.left.id in optional
        and (
            isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value is None
            or isinstance(test.comparators[0], ast.Name)
            and test.comparators[0].id.isupper()
        )
    )


def blocks(s: ast.stmt) -> list[list[ast.stmt]]:
    """The statement lists directly inside a compound statement."""
    if isinstance(s, ast.Match):
        return [c.body for c in s.cases]
    out = [b for b in (getattr(s, "body", None), getattr(s, "orelse", None), getattr(s, "finalbody", None))
           if isinstance(b, list)]
    out[1:1] = [h.body for h in getattr(s, "handlers", [])]
    return out


def contains(outer: ast.AST, target: ast.AST) -> bool:
    """`target` is `outer` or a node inside it (by identity)."""
    return any(n is target for n in walk_nodes(outer))


def function_nodes(fn: FunctionNode) -> tuple[ast.AST, ...]:
    """Nodes of a function body, not descending into nested functions, classes or lambdas. Walked once
    per function and kept on its node: TL101, TL104, the legality test and the grader finder each walk
    the same tools and helpers (a stand-in copied off a function has a body of its own, so the list
    kept is checked to be of this very body)."""
    return kept_for_body(fn, _OWN_NODES, _own_nodes)


def _own_nodes(fn: FunctionNode) -> tuple[ast.AST, ...]:
    return tuple(depth_first(fn.body, _NOT_OWN))


_OWN_NODES = "_toollint_own_nodes"
_NOT_OWN = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda})
