"""# log-only-argument (TL103)

## What it does

Flags a parameter of a state-writing tool that is read only inside logging or `print` calls or
inside the returned message (f-string, `.format`, `%`, concatenation), or that is never read at all.
A parameter that reaches the state write, a lookup, a condition, or any call that could write
(including a call inside the `return` expression itself) does not fire.

## Why is this bad?

The agent is told the argument matters (it is in the signature and the schema) and the success
message even repeats it back, but the environment drops it. A task that asks for that value is
scored against a state that never received it (an *ignored argument*).

## Example

```python
from typing import Annotated

from benchmark.runtime import Depends


def reserve_car_rental(reservation: Annotated[dict, Depends("reservation")], company: str,
                       start_time: str, end_time: str) -> str:
    '''Reserve a car: company, start_time and end_time are stored on the reservation.'''
    reservation["title"] = company
    reservation["start_time"] = start_time
    return f"Reservation for a car at {company} from {start_time} to {end_time} has been made."
```

## Use instead

```python
from typing import Annotated

from benchmark.runtime import Depends


def reserve_car_rental(reservation: Annotated[dict, Depends("reservation")], company: str,
                       start_time: str, end_time: str) -> str:
    reservation["title"] = company
    reservation["start_time"] = start_time
    reservation["end_time"] = end_time
    return f"Reservation for a car at {company} from {start_time} to {end_time} has been made."
```

## Precision

High. Locals are followed through assignments and tuple unpacking (`key, value = str(key),
str(value)`), and parameters the framework fills (`self`, `ctx`, `run_manager`, a dispatcher's
`name`/`arguments`) are never reported. A parameter used as the key of a mutated container
(`self.folders[name].add(e)`) or passed to a helper that writes it is used. An update tool's
parameter that only feeds a computation (`booking.price = booking.rate * nights`) while the record's
own field of that name (`booking.nights`, used elsewhere in the module) is never stored is reported
too. A parameter kept only for logging on purpose is a true
finding by the rule's definition, but its severity is for a person to judge: its premise, that the
value belongs in state, is high confidence when a state field of that name is used by the module's
tools (`reservation.end_time`), medium when the docstring says it is stored, and low otherwise (a
`reason` that is only logged), so by default only the first two are reported. A parameter never read
at all is reported at high confidence.

## Options

- `tool-decorators`, `tools`, `tool-classes`, `state-roots`: which functions are tools, what is state.

## References

- docs/method.md, Part 1 (log-only argument) and Part 3 (Ignored Argument, TL202).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from toollint.analysis import FunctionSummary, ModuleAnalysis, ToolInfo, is_writer
from toollint.analysis.vocabulary import FRAMEWORK_PARAMS, first_word
from toollint.context import ModuleContext
from toollint.evidence import Evidence, EvidenceKind, Premise
from toollint.model import Finding
from toollint.registry import rule

ECHO_SINKS = {"log", "message"}


@rule(
    code="TL103",
    name="log-only-argument",
    short="A tool parameter is only logged or echoed in the returned message, never used",
    level="warning",
    precision="high",
    tags=("correctness", "ignored-argument"),
    hint="Ignored Argument",
)
def check(ctx: ModuleContext) -> Iterator[Finding]:
    analysis = ctx.analysis
    for tool in analysis.tools:
        summary = analysis.summary(tool)
        if not summary.writes_state or not is_writer(tool, summary):
            continue
        for param in summary.params:
            if param.state_root is not None or param.name in FRAMEWORK_PARAMS or param.name.startswith("_") \
                    or param.name in tool.framework_params:
                continue
            sinks = summary.sinks(param.name) - {"local"}
            writer = Premise(f"`{tool.name}` writes state", EvidenceKind.CODE,
                             f"line {summary.writes[0].line} writes `{summary.writes[0].path}`")
            if "state" in sinks:
                record = unstored_field(analysis, tool, summary, param.name)
                if record is None:
                    continue
                field = f"{record}.{param.name}"
                message = (
                    f"parameter `{param.name}` of `{tool.name}` only feeds a computation; the record's own "
                    f"`{field}` is never stored"
                )
                premise = Premise(f"the record has a field `{param.name}`", EvidenceKind.CODE,
                                  f"`{field}` is used elsewhere in the module")
            elif sinks - ECHO_SINKS:
                continue
            else:
                field = None
                where = " and ".join(
                    sorted({"logging" if s == "log" else "the returned message" for s in sinks})
                )
                use = f"only read in {where}" if sinks else "never read"
                message = (
                    f"parameter `{param.name}` of state-writing tool `{tool.name}` is {use}; "
                    "it never reaches state"
                )
                premise = Premise(f"`{param.name}` never reaches state", EvidenceKind.CODE,
                                  f"it is {use} in `{tool.name}` and the helpers it calls") if not sinks \
                    else meant_for_state(analysis, tool, param.name)
            yield ctx.finding(
                "TL103",
                param.node,
                message,
                tool=tool.qualname,
                evidence=Evidence(parameter=param.name, state_path=field, premises=(writer, premise)),
                param=param.name,
                sinks=sorted(sinks),
            )

UPDATE_VERBS = frozenset({"update", "modify", "change", "edit", "set", "adjust", "reschedule", "amend"})


def unstored_field(
    analysis: ModuleAnalysis, tool: ToolInfo, summary: FunctionSummary, name: str
) -> str | None:
    """The record an update tool writes whose field `name` (the parameter's own) other code of the
    module reads or writes, while this tool never writes it: `update_booking(nights)` computes
    `booking.price` from `nights` and leaves `booking.nights` as it was. The record's path, else None."""
    if first_word(tool.name) not in UPDATE_VERBS:
        return None
    records = {w.path.rsplit(".", 1)[0] for w in summary.writes if "." in w.path}
    if not records or any(w.field == name for w in summary.writes):
        return None
    elsewhere: set[str] = set()
    for other in analysis.tools:
        if other is not tool:
            elsewhere |= analysis.summary(other).referenced_paths()
    return next((r for r in sorted(records) if f"{r}.{name}" in elsewhere), None)


STORE_WORDS = re.compile(
    r"\b(?:stor(?:e|ed|es)|sav(?:e|ed|es)|record(?:ed|s)?|set(?:s)?|kept|keeps|written|persist\w*)\b",
    re.IGNORECASE,
)


def meant_for_state(analysis: ModuleAnalysis, tool: ToolInfo, name: str) -> Premise:
    """The premise of a parameter that is only logged or echoed: that its value belongs in state. A
    state field of that name that the module's tools use is code evidence (`reservation.end_time`);
    a docstring line saying it is stored, medium; otherwise only its place in the signature says it
    matters (low: a `reason` kept for the log is often by design)."""
    claim = f"`{name}` belongs in state"
    for other in analysis.tools:
        for access in [*analysis.summary(other).writes, *analysis.summary(other).reads]:
            if access.field == name:
                return Premise(
                    claim,
                    EvidenceKind.CODE,
                    f"`{other.name}` uses the field `{access.path}` (line {access.line})",
                )
    doc = next(
        (line for line in tool.docstring.splitlines() if re.search(rf"\b{re.escape(name)}\b", line)), ""
    )
    if doc and STORE_WORDS.search(doc):
        return Premise(claim, EvidenceKind.DOCSTRING, f"its docstring says {doc.strip()!r}")
    return Premise(
        claim,
        EvidenceKind.NAME,
        "only its place in the signature says it matters; no state field has its name",
    )
