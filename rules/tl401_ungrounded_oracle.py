"""# ungrounded-oracle (TL401)

## What it does

Flags a grader that decides a state change happened from the agent's own record (the request it
sent, the reply the tool gave it, the calls it made) and never reads the state that change would
leave. Two bases fire:

- *reads the record*: the grader reads no live state at all; it finds the write in the record
  (`"POST" in message.content`, `call.function == "send_money"`, `"accepted" in reply`) and checks
  its payload;
- *gated on state but grades the write from the record*: the grader reads live state only to decide
  whether a write is due (a GET of `Observation`), then grades the write itself (a POST of
  `MedicationRequest`) from the record, never reading it back.

A grader that reads the written state back (or reads any in-memory state its write would change)
is silent, and so is one that looks for a write in the record only to fail when it is there
("nothing should be ordered"). So is one that credits a write together with the call that undoes it
(`invite_user_to_slack`, then `remove_user_from_slack`: verb partners on the same nouns): the final
state cannot show a write the run took back, and the record is the only basis there is (basis
`undone_in_run` in `--show-graders`).

## Why is this bad?

The record says what the agent asked for and what the tool answered, not what happened. When the
tool answers "accepted" and writes nothing (a *phantom effect*), or writes something else, the
grader still passes the run: the score measures the agent's requests, and every defect of the
environment under it is invisible (the *ungrounded oracle* of docs/method.md).

## Example

```python
class UserTask7(BaseUserTask):
    def utility_from_traces(self, model_output, pre_environment, post_environment, traces):
        return any(call.function == "send_money" and call.args["amount"] == 10 for call in traces)
```

## Use instead

Read the write back from the state it leaves:

```python
class UserTask7(BaseUserTask):
    def utility(self, model_output, pre_environment, post_environment, strict=True):
        return any(t.amount == 10 for t in post_environment.bank_account.transactions)
```

## Precision

Medium. Graders are found by the profiles' patterns and by `graders = [...]`; the roles of their
parameters (live state, state before the run, the agent's record) come from the pattern or from the
parameters' names. A write is seen in the record only when a constant names it: an HTTP writing
verb, a tool named with a writing verb, or a reply announcing success; a grader that compares the
record with gold actions held in data (not in its code) is not flagged. Whether state reads cover
the write is judged only for HTTP reads of named resources against the write's URL; any other read
of live state counts as reading the write back, so a grader that reads unrelated fields of an
in-memory state is missed, never flagged. Helpers are followed three hops, across the modules of
the linted tree.

## Options

- `graders`: grader functions no profile pattern finds (`"pkg.mod:func"`, `"pkg.mod:Class.method"`).

## References

- docs/method.md, Part 4 (Ungrounded Oracle) and Part 3 (Phantom Effect).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from toollint.context import ModuleContext
from toollint.model import Finding, RelatedLocation
from toollint.registry import rule


@rule(
    code="TL401",
    name="ungrounded-oracle",
    short="A grader decides a state change happened from the agent's record, never reading the state",
    level="warning",
    precision="medium",
    tags=("correctness", "grader", "ungrounded-oracle"),
    hint="Ungrounded Oracle",
)
def check(ctx: ModuleContext) -> Iterator[Finding]:
    graders = ctx.analysis.graders
    if not graders:
        return
    from toollint.analysis.grading import BASIS_WORDS, ungrounded  # only where there are graders

    for grader in graders:
        flow = grader.flow
        basis = flow.basis
        if not ungrounded(basis):
            continue
        first = min(flow.credited, key=lambda d: d.line)
        claims = flow.credited_claims
        evidence = "; ".join(c.describe() for c in claims[:2]) or "a write the record claims"
        if basis == "gated_on_state":
            reads = ", ".join(dict.fromkeys(f"{r.what}, line {r.line}" for r in flow.reads))
            written = ", ".join(sorted(flow.targets))
            message = (
                f"`{grader.name}` reads live state ({reads}) only to decide whether a write is due, then "
                f"grades the write ({written}) from the agent's record ({evidence}), never reading it back"
            )
        else:
            message = (
                f"`{grader.name}` credits a write from the agent's record alone ({evidence}) and never "
                "reads the state that write would leave"
            )
        here = os.path.realpath(ctx.disk_path) if ctx.disk_path else ""
        related = [
            RelatedLocation(
                c.file if c.file and os.path.realpath(c.file) != here else ctx.path,
                c.line,
                getattr(c.node, "col_offset", 0) + 1,
                f"the record is searched for {c.what}",
            )
            for c in claims[:3]
        ]
        related += [
            RelatedLocation(
                ctx.path, r.line, getattr(r.node, "col_offset", 0) + 1, f"live state read: {r.what}"
            )
            for r in flow.reads[:3]
        ]
        yield ctx.finding(
            "TL401",
            first.node,
            message,
            tool=grader.qualname,
            related=related,
            grader=grader.qualname,
            basis=basis,
            basis_words=BASIS_WORDS[basis],
            claims=[c.describe() for c in claims],
            credited_lines=sorted({d.line for d in flow.credited}),
            state_reads=[r.what for r in flow.reads],
            targets=sorted(flow.targets),
        )
