"""AgentDojo (verified on agentdojo 0.1.35): tools are functions registered in task suites, their
state injected as `Annotated[..., Depends("field")]` parameters; user tasks are classes in
`default_suites/v*/<suite>/user_tasks.py` graded by `utility(model_output, pre_environment,
post_environment)`.

- `host/adapter.py`: the host-side adapter (runs inside AgentDojo's venv; stdlib + agentdojo only), and
  the host-side helpers the gateway evaluates there (ground truth, grading, registered tools,
  state schemas);
- `contracts/`: the bundled contract library, all 69 tools AgentDojo v1 registers;
- `tasks.py`: the user-task enumerator (read as syntax, nothing imported);
- `validation.py`: the validation harness's driver (mutation subjects, gold replay, grading);
- `contracts_support.py`: state schemas for `contracts check` and the suite hints of `contracts draft`.
"""

from __future__ import annotations

from pathlib import Path

from toollint.profiles.api import DraftHints, DriverFactory, Profile, StateSchemas, TaskEnumerator

HERE = Path(__file__).parent
CONTRACTS = HERE / "contracts"


def _tasks() -> TaskEnumerator:
    from toollint.profiles.agentdojo.tasks import tasks

    return tasks


def _state_schemas() -> StateSchemas:
    from toollint.profiles.agentdojo.contracts_support import state_schemas

    return state_schemas


def _draft_hints() -> DraftHints:
    from toollint.profiles.agentdojo.contracts_support import draft_hints

    return draft_hints


def _validation() -> DriverFactory:
    from toollint.profiles.agentdojo.validation import AgentDojoDriver

    return AgentDojoDriver


PROFILE = Profile(
    name="agentdojo",
    description="AgentDojo task suites (banking, slack, travel, workspace)",
    import_markers=("agentdojo",),
    path_markers=("*/agentdojo/default_suites/*",),
    adapter=HERE / "host" / "adapter.py",
    contracts_dir=CONTRACTS,
    package="agentdojo",
    variant_option="suite",
    tasks=_tasks,
    state_schemas=_state_schemas,
    draft_hints=_draft_hints,
    validation=_validation,
)
