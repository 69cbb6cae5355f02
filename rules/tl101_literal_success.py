"""# literal-success-in-writer (TL101)

## What it does

Flags a state-writing tool that returns a constant success message (a string, an f-string whose
literal text announces success, or a dict/tuple/list of such, like `{"message": "... updated."}`,
or MCP's `TextContent(text="...")`) on a path on which no state write is guaranteed: every write
sits under a condition the return does not share, or nothing is written at all; or some write sits
in a `try` whose `except` swallows its failure, so the reply can announce a write that failed.

## Why is this bad?

The agent, and often the grader, believe the message. When the write can be skipped while the
message still says it happened, the benchmark rewards an action that did not take place (a
*phantom effect*). Every score built on the tool inherits the lie.

## Example

```python
from typing import Annotated

from benchmark.runtime import Depends


def update_scheduled_transaction(account: Annotated[dict, Depends("bank_account")], id: int,
                                 amount: float | None = None) -> dict[str, str]:
    transaction = account["scheduled"][id]
    if amount:
        transaction["amount"] = amount
    return {"message": f"Transaction with ID {id} updated."}
```

## Use instead

Report what was written, or fail when nothing was:

```python
from typing import Annotated

from benchmark.runtime import Depends


def update_scheduled_transaction(account: Annotated[dict, Depends("bank_account")], id: int,
                                 amount: float | None = None) -> dict[str, str]:
    transaction = account["scheduled"][id]
    if amount is None:
        raise ValueError("nothing to update")
    transaction["amount"] = amount
    return {"message": f"Transaction with ID {id} updated."}
```

## Precision

Medium. A reply is a success claim only when its constant text has a success word and no error
or no-op word, no negation and no description of a standing state: `{"error": ...}` replies, "Card
already registered", honest no-ops such as "Roaming was already enabled" and "No user is currently
logged in", and a sentence only about the tool's own run ("Example tool executed successfully": a
tool that returns has run) never fire. A path without a write is a false claim only when the call asked for a
change: an optional-field updater whose every write sits under `if field is not None:` is silent
(its no-write path is a call that changed nothing), and so is a write made certain by a found flag
(`found = True` right after the write, `if not found: raise` after the loop). A helper's write that
can be refused (the helper returns `False` or an error text before writing) while the tool ignores
its answer is not guaranteed, and the message says which helper and where it refuses. A tool
declared not to write (`ToolType.READ`, `mutates_state=False`) never fires. Writes through helpers
are followed, in other modules of the linted tree too (`add_to_db(db=self.db)`); a tool that writes
nothing the analysis sees but calls something it cannot follow whose name writes (`cursor.execute`,
`client.chat_postMessage`) is not called "nothing written". Known misses: a write the analysis
cannot see at all (a registry dispatch, an HTTP call with no verb in its name).

## Options

- `tool-decorators`, `tools`, `tool-classes`, `state-roots`: which functions are tools, what is state.

## References

- docs/method.md, Part 1 (literal success) and Part 3 (Phantom Effect, TL204).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from toollint.analysis import (
    FunctionSummary,
    claims_to_write,
    contains,
    function_nodes,
    is_writer,
    write_guaranteed_before,
)
from toollint.analysis.dispatch import reply_call_of, unused_locals
from toollint.analysis.paths import no_change_requested, refused_write
from toollint.analysis.vocabulary import ERROR_KEYS, reply_claims_success
from toollint.context import ModuleContext
from toollint.evidence import Evidence, EvidenceKind, Premise
from toollint.model import Finding
from toollint.registry import rule


def literal_text(value: ast.expr) -> str | None:
    """The constant text of a message-shaped return value, or None when it is not constant-shaped.
    A dict's keys count as text too: `{"error": f"... {x}"}` reads as an error."""
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return value.value
    if isinstance(value, ast.JoinedStr):
        return "".join(
            v.value for v in value.values if isinstance(v, ast.Constant) and isinstance(v.value, str)
        )
    if isinstance(value, ast.Dict):
        keys = [k.value for k in value.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]
        if any(k.lower() in ERROR_KEYS for k in keys):
            return "error"
        texts = [literal_text(v) for v in value.values if v is not None]
        if texts and all(t is not None for t in texts):
            return " ".join(t for t in texts if t)
        return None
    if isinstance(value, (ast.Tuple, ast.List)):
        texts = [literal_text(v) if not isinstance(v, ast.Constant) else str(v.value) for v in value.elts]
        return None if not texts or any(t is None for t in texts) else " ".join(t for t in texts if t)
    if isinstance(value, ast.Call):  # MCP's `TextContent(type="text", text="Table created")`
        texts = [literal_text(k.value) for k in value.keywords if k.arg in REPLY_KEYWORDS]
        return texts[0] if len(texts) == 1 else None
    return None


REPLY_KEYWORDS = frozenset({"text", "content", "message"})


def is_success_message(value: ast.expr | None) -> bool:
    """A constant reply announcing that something happened: not an error reply (`{"error": ...}`,
    "Card already registered") and not an honest no-op ("Roaming was already enabled")."""
    text = literal_text(value) if value is not None else None
    return bool(text and reply_claims_success(text))


@rule(
    code="TL101",
    name="literal-success-in-writer",
    short="A state-writing tool returns a constant success message on a path where no write is guaranteed",
    level="warning",
    precision="medium",
    tags=("correctness", "phantom-effect"),
    hint="Phantom Effect",
)
def check(ctx: ModuleContext) -> Iterator[Finding]:
    analysis = ctx.analysis
    for tool in analysis.tools:
        summary = analysis.summary(tool)
        if not (is_writer(tool, summary) or claims_to_write(tool)):
            continue
        swallowed = swallowed_writes(tool.node, summary)
        for ret in summary.returns:
            if not is_success_message(ret.value):
                continue
            outside = [(w, h) for w, h in swallowed if not contains(w, ret)]
            swallows = "".join(
                f"; the write at line {w.lineno} is in a `try` whose `except` (line {h.lineno}) "
                "swallows its failure"
                for w, h in outside[:2]
            )
            if not write_guaranteed_before(tool.node.body, ret, summary):
                if not summary.writes and summary.external:
                    continue  # it may write where the analysis cannot see (a database, an API)
                if no_change_requested(tool.node.body, ret, summary, _optional(summary)) and not outside:
                    continue  # every write is an optional field's; the path without one asked for no change
                refused = _refused(tool.node, summary)
                refusal = _refusal_premise(summary, *refused) if refused and summary.writes else None
                why = (
                    "nothing is written at all" + _dropped(tool.node)
                    if not summary.writes
                    else f"the write in `{refused[0]}` is not guaranteed: "
                    f"it can refuse (`return` at line {refused[1]}) "
                    "and its answer is ignored"
                    if refused
                    else "every write sits under a condition or a swallowed `try` this return does not share"
                ) + swallows  # name the swallowing `try` too: it is a second, separate repair
            elif outside:
                why = swallows[2:]
            else:
                continue
            reply = reply_call_of(ret)
            sends = f"replies through `{reply}(...)` with" if reply else "returns"
            writes = sorted({w.path for w in summary.writes})
            writer = (
                Premise(
                    f"`{tool.name}` writes state",
                    EvidenceKind.CODE,
                    f"line {summary.writes[0].line} writes `{summary.writes[0].path}`",
                )
                if summary.writes
                else Premise(
                    f"`{tool.name}` writes state", EvidenceKind.CODE, f"declared by {tool.declared_by}"
                )
                if tool.declared_writer
                else Premise(
                    f"`{tool.name}` is meant to write state",
                    EvidenceKind.CODE,
                    "its name's verb and its own success reply say so",
                )
            )
            yield ctx.finding(
                "TL101",
                ret,
                f"`{tool.name}` {sends} a literal success message on a path where no state write is "
                f"guaranteed: {why}",
                tool=tool.qualname,
                # No state_path: the finding is about the reply on a path, not one field (its `writes` are
                # every field the tool writes, which --confirm matches whole).
                evidence=Evidence(
                    premises=(
                        writer,
                        Premise(
                            "the reply claims success",
                            EvidenceKind.CODE,
                            f"line {ret.lineno} returns {literal_text(ret.value)!r}" if ret.value else "",
                        ),
                        *([refusal] if refusal is not None and not outside else []),
                    )
                ),
                writes=writes,
            )


def _refused(fn: ast.FunctionDef | ast.AsyncFunctionDef,
             summary: FunctionSummary) -> tuple[str, int, ast.stmt] | None:
    """The first helper call of the tool whose write can be refused while its answer is ignored: the
    helper, the line where it refuses, the calling statement."""
    for node in sorted((n for n in function_nodes(fn) if isinstance(n, ast.Expr)), key=lambda n: n.lineno):
        found = refused_write(node, summary)
        if found is not None:
            return (*found, node)
    return None


def _refusal_premise(summary: FunctionSummary, helper: str, line: int, call: ast.stmt) -> Premise:
    """That this tool's call can be refused: code evidence when the agent's own arguments reach the
    call (`add_to_db(id_from(card, user), ...)`: the same arguments twice are refused); otherwise only
    the helper's status return says so, nothing the call sends decides it (low)."""
    claim = f"a call of `{summary.name}` can make `{helper}` refuse"
    agent = [p.name for p in summary.params if p.state_root is None
             and any(contains(call, node) for _, node in summary.flows.get(p.name, []))]
    if agent:
        return Premise(
            claim,
            EvidenceKind.CODE,
            f"`{agent[0]}` reaches the call at line {call.lineno}; `{helper}` refuses at line {line}",
        )
    return Premise(claim, EvidenceKind.TYPE,
                   f"`{helper}` returns a refusal at line {line}, but no argument of the call decides it")


def _optional(summary: FunctionSummary) -> frozenset[str]:
    """Parameters whose default says "not given": None or a sentinel constant (`NOT_GIVEN`)."""
    return frozenset(p.name for p in summary.params if p.has_default and (
        (isinstance(p.default, ast.Constant) and p.default.value is None)
        or (isinstance(p.default, ast.Name) and p.default.id.isupper())))


def _dropped(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    """`; `payload` (line 87) is assigned and never used`: what the tool computed and then dropped."""
    names = unused_locals(fn)[:2]
    return "".join(f"; `{n.id}` (line {n.lineno}) is assigned and never used" for n in names)


def swallowed_writes(fn: ast.FunctionDef | ast.AsyncFunctionDef,
                     summary: FunctionSummary) -> list[tuple[ast.stmt, ast.ExceptHandler]]:
    """Writing statements inside a `try` one of whose handlers neither re-raises nor returns: the
    write can fail while the tool goes on to report success."""
    out = []
    for node in function_nodes(fn):
        if not isinstance(node, ast.Try):
            continue
        handler = next((h for h in node.handlers if not _leaves(h.body)), None)
        if handler is None:
            continue
        for stmt in node.body:
            if id(stmt) in summary.writing_nodes:
                out.append((stmt, handler))
    return sorted(out, key=lambda pair: pair[0].lineno)


def _leaves(body: list[ast.stmt]) -> bool:
    return any(isinstance(s, (ast.Raise, ast.Return)) for s in body)

