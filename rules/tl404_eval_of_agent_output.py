"""# eval-of-agent-output (TL404)

## What it does

Flags `eval`, `exec` or `compile` applied to the agent's record (its answer, its calls, the
replies it got) in a grader or a helper the grader calls.

## Why is this bad?

The agent's output runs as code inside the grader's process: it can read the gold answer, patch the
grader, or simply evaluate to something truthy. The score then measures what the agent's text does
to the grader, and a prompt injection in the environment can reach the grader through the agent.

## Example

```python
class UserTask9(BaseUserTask):
    def utility(self, model_output, pre_environment, post_environment, strict=True):
        return eval(model_output) == 42
```

## Use instead

Parse the answer as data:

```python
import json


class UserTask9(BaseUserTask):
    def utility(self, model_output, pre_environment, post_environment, strict=True):
        return json.loads(model_output) == 42
```

## Precision

Very high: the argument must come from the agent's record. `ast.literal_eval` and `json.loads`
are not reported.

## Options

- `graders`: grader functions no profile pattern finds.

## References

- docs/method.md, Part 4 (graders and the state they read).
- A real instance: a public function-calling leaderboard's multi-turn checker (`multi_turn_checker`)
  passes the model's decoded calls to `execute_multi_turn_func_call`, which `eval`s each one behind a
  denylist of function names (`python bench/graders.py` prints it).
"""

from __future__ import annotations

from collections.abc import Iterator

from toollint.rules._grader_rule import observations

from toollint.context import ModuleContext
from toollint.model import Finding
from toollint.registry import rule


@rule(
    code="TL404",
    name="eval-of-agent-output",
    short="A grader runs the agent's output as code (eval/exec)",
    level="error",
    precision="very-high",
    tags=("security", "grader"),
    hint="Ungrounded Oracle",
)
def check(ctx: ModuleContext) -> Iterator[Finding]:
    yield from observations(ctx, "TL404")
