"""# agent-authored-verdict (TL405)

## What it does

Flags a grader whose verdict is a field of the agent's own record that states the outcome:
`return output["success"]`, `if result.get("completed") is True: return True`,
`report["status"] == "success"`, where `output`, `result`, `report` come from the agent; and a
grader whose first and only check is that the record exists: the last message's role is
`"assistant"` (`messages[-1]["role"] == "assistant"`), or the trajectory is not empty
(`len(trajectory) > 0`, `bool(messages)`).

## Why is this bad?

The agent authors the field: it says it succeeded, and the grader believes it. Nothing checks the
state the task was to change, so a run that did nothing but claim success passes.

## Example

```python
import json


class UserTask5(BaseUserTask):
    def utility(self, model_output, pre_environment, post_environment, strict=True):
        return json.loads(model_output)["success"] is True
```

## Use instead

```python
class UserTask5(BaseUserTask):
    def utility(self, model_output, pre_environment, post_environment, strict=True):
        return post_environment.calendar.events != pre_environment.calendar.events
```

## Precision

High: the field's name must state an outcome (success, done, completed, passed, resolved,
is_correct, or a `status` compared with a success word) and the value must come from the agent's
record with no live state in the same test. A role-only or non-empty check is reported only when
it is the grader's first test (nothing but assignments before it), so a guard before the real
comparison is silent.

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
    code="TL405",
    name="agent-authored-verdict",
    short="A grader's verdict is the agent's own claim of success (a field of its record)",
    level="warning",
    precision="high",
    tags=("correctness", "grader"),
    hint="Ungrounded Oracle",
)
def check(ctx: ModuleContext) -> Iterator[Finding]:
    yield from observations(ctx, "TL405")
