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
`name`/`arguments`) are never reported. A parameter kept only for logging on purpose is a true
finding by the rule's definition, but its severity is for a person to judge.

## Options

- `tool-decorators`, `tools`, `tool-classes`, `state-roots`: which functions are tools, what is state.

## References

- docs/method.md, Part 1 (log-only argument) and Part 3 (Ignored Argument, TL202).
"""

from __future__ import annotations

from collections.abc import Iterator

from toollint.analysis import is_writer
from toollint.analysis.vocabulary import FRAMEWORK_PARAMS
from toollint.context import ModuleContext
from toollint.evidence import Evidence
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
            if sinks - ECHO_SINKS:
                continue
            where = " and ".join(sorted(
                {"logging" if s == "log" else "the returned message" for s in sinks}
            ))
            use = f"only read in {where}" if sinks else "never read"
            yield ctx.finding(
                "TL103",
                param.node,
                f"parameter `{param.name}` of state-writing tool `{tool.name}` is {use}; "
                "it never reaches state",
                tool=tool.qualname,
                evidence=Evidence(parameter=param.name),
                param=param.name,
                sinks=sorted(sinks),
            )
