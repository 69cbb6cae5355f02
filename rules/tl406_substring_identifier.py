"""# substring-identifier (TL406)

## What it does

Flags a grader that tests a gold identifier or path for being a substring of the predicted one
(`gold_id in pred_id`, `task.expected_path in pred["file_path"]`) where equality was meant: both
operands name one identifier or path (`id`, `uuid`, `path`, `file`, `filename`, `url`, ...), the
predicted one comes from the agent's record and the gold one does not.

## Why is this bad?

`"12" in "123"` and `"report.txt" in "old_report.txt"` are true: an agent that names another
record, a longer id or a different file that happens to contain the gold one passes. The score
counts wrong answers as right.

## Example

```python
class UserTask3(BaseUserTask):
    def utility(self, model_output, pre_environment, post_environment, strict=True):
        gold_id = post_environment.calendar.events[-1].id_
        pred_id = model_output.strip()
        return gold_id in pred_id
```

## Use instead

```python
class UserTask3(BaseUserTask):
    def utility(self, model_output, pre_environment, post_environment, strict=True):
        gold_id = post_environment.calendar.events[-1].id_
        pred_id = model_output.strip()
        return gold_id == pred_id
```

## Precision

High: both operands must name a single identifier or path (a name, field or key ending in `id`,
`path`, `file`, `url`, ... with `str()`, `.strip()` and `.lower()` looked through), so membership
in a list (`gold_id in pred_ids`) and a value looked for in a free-text answer
(`expected_path in model_output`, which is how free text is graded) are silent.

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
    code="TL406",
    name="substring-identifier",
    short="A grader tests a gold identifier or path as a substring of the predicted one, not for equality",
    level="warning",
    precision="high",
    tags=("correctness", "grader"),
    hint="Ungrounded Oracle",
)
def check(ctx: ModuleContext) -> Iterator[Finding]:
    yield from observations(ctx, "TL406")
