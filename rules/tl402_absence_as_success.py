"""# absence-as-success (TL402)

## What it does

Flags a grader whose passing verdict rests on a failure marker being absent from the agent's
record: `return "error" not in output`, `if "Traceback" not in log: return True`, or a grader that
fails only when `"error" in output` and passes otherwise.

## Why is this bad?

An absent marker is what a run that did nothing leaves too: an environment that never ran the
action, a tool that answered nothing, an agent that gave up all print no error. The grader passes
them, so the score counts runs in which nothing happened as successes.

## Example

```python
class UserTask4(BaseUserTask):
    def utility(self, model_output, pre_environment, post_environment, strict=True):
        return "error" not in model_output.lower()
```

## Use instead

Check for what success leaves, not for the absence of a failure:

```python
class UserTask4(BaseUserTask):
    def utility(self, model_output, pre_environment, post_environment, strict=True):
        return any(f.filename == "report.txt" for f in post_environment.cloud_drive.files.values())
```

## Precision

High for what it reports: the marker must be a constant naming a failure (error, fail, exception,
traceback, invalid, denied, timeout, ...) and the text it is looked for in must come from the
agent's record. A grader that checks the absence of a state item (a deleted file no longer in the
drive) is not flagged: that is evidence of a change, not the absence of a message.

## Options

- `graders`: grader functions no profile pattern finds.

## References

- docs/method.md, Part 4 (graders and the state they read).
"""

from __future__ import annotations

from collections.abc import Iterator

from toollint.rules._grader_rule import observations

from toollint.context import ModuleContext
from toollint.model import Finding
from toollint.registry import rule


@rule(
    code="TL402",
    name="absence-as-success",
    short="A grader passes when a failure marker is absent, so a run that did nothing passes",
    level="warning",
    precision="high",
    tags=("correctness", "grader"),
    hint="Ungrounded Oracle",
)
def check(ctx: ModuleContext) -> Iterator[Finding]:
    yield from observations(ctx, "TL402")
