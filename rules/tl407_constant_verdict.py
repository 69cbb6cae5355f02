"""# constant-verdict (TL407)

## What it does

Flags a grader whose body is a constant verdict: `return True` (or `1`, `False`, `0`) and nothing
else but a docstring or `pass`; and a grader whose body is commented out, leaving only `pass` (it
returns None and fails every run). When comment lines in the grader parse as code, the message
says the check was commented out.

## Why is this bad?

A grader that returns `True` passes every run, the idle one included; one that returns `False`
fails every run, so the task measures nothing either way. Most often the real check was commented
out while debugging and never restored.

## Example

```python
class UserTask2(BaseUserTask):
    def utility(self, model_output, pre_environment, post_environment, strict=True):
        # return post_environment.bank_account.balance == 90
        return True
```

## Use instead

```python
class UserTask2(BaseUserTask):
    def utility(self, model_output, pre_environment, post_environment, strict=True):
        return post_environment.bank_account.balance == 90
```

## Precision

Very high for what it reports: the body holds nothing but the constant return (an abstract method,
decorated `@abstractmethod`, is silent); an empty body only when its comments parse as code (a
stub that holds only `pass` or `...` is silent). A grader that calls a helper which asserts, then returns
`True`, is not reported.

## Options

- `graders`: grader functions no profile pattern finds.

## References

- docs/method.md, Part 4 (graders and the state they read).
"""

from __future__ import annotations

from collections.abc import Iterator

from toollint.rules._grader_rule import observations

from toollint.analysis.graders import commented_code
from toollint.context import ModuleContext
from toollint.model import Finding
from toollint.registry import rule


@rule(
    code="TL407",
    name="constant-verdict",
    short="A grader returns a constant verdict (its check is missing or commented out)",
    level="warning",
    precision="very-high",
    tags=("correctness", "grader"),
    hint="Ungrounded Oracle",
)
def check(ctx: ModuleContext) -> Iterator[Finding]:
    nodes = {grader.qualname: grader.node for grader in ctx.analysis.graders or []}
    for finding in observations(ctx, "TL407"):
        node = nodes.get(finding.properties.get("grader", ""))
        code_lines = commented_code(ctx.lines, node) if node is not None else []
        if finding.properties.get("detail") == "empty" and not code_lines:
            continue  # a stub (`pass`, `...`) with no commented-out check: a base class's, most likely
        if code_lines:
            shown = ("lines " if len(code_lines) > 1 else "line ") + ", ".join(map(str, code_lines[:3]))
            finding.message += f"; its check is commented out ({shown})"
        yield finding
