"""tau2-bench (verified on c3398666, tau2 1.0.1): tools are `@is_tool(ToolType.WRITE|READ|...)`
methods of per-domain toolkit classes holding a pydantic DB in `self.db`, the agent's in
`domains/<domain>/tools.py` and the user simulator's in `user_tools.py`; tasks are JSON files graded
by `evaluation_criteria`.

- `host/adapter.py`: the host-side adapter (runs in tau2's own interpreter; stdlib + tau2 only): builds a
  domain's environment through its own `get_environment()`, calls through `get_response`;
- `contracts/<domain>/`: the bundled contracts, every state-mutating tool of airline, retail and
  telecom, agent and user side;
- `locate.py`: the checkout a linted file lies in, passed to the adapter as `root`, so
  `toollint check --confirm TAU2/src/tau2/domains` needs no configuration;
- `drafting.py`: the domain and toolkit `contracts draft` writes into a draft's `adapter:` block;
- `tasks.py`: the task and grader enumerator of the tracer (read as syntax and data);
- `validation.py` (+ `host/validation_host.py`, run in tau2's interpreter): the validation harness's
  driver: mutation subjects, gold replay and constructed paths graded by tau2's own evaluator.

tau2-bench is checked out, not installed: the adapter puts the checkout's `src/` on `sys.path` and
points `TAU2_DATA_DIR` at its `data/`. The interpreter (`--python`) needs only tau2's dependencies.
"""

from __future__ import annotations

from pathlib import Path

from toollint.profiles.api import DraftHints, DriverFactory, HostOptions, Profile, TaskEnumerator

HERE = Path(__file__).parent


def _host_options() -> HostOptions:
    from toollint.profiles.tau2.locate import host_options

    return host_options


def _draft_hints() -> DraftHints:
    from toollint.profiles.tau2.drafting import draft_hints

    return draft_hints


def _tasks() -> TaskEnumerator:
    from toollint.profiles.tau2.tasks import tasks

    return tasks


def _validation() -> DriverFactory:
    from toollint.profiles.tau2.validation import Tau2Driver

    return Tau2Driver


PROFILE = Profile(
    name="tau2",
    description="tau2-bench domains (airline, retail, telecom, mock, banking_knowledge)",
    import_markers=("tau2",),
    path_markers=("*/tau2/domains/*",),
    adapter=HERE / "host" / "adapter.py",
    contracts_dir=HERE / "contracts",
    package="tau2",
    variant_option="domain",
    host_options=_host_options,
    draft_hints=_draft_hints,
    tasks=_tasks,
    validation=_validation,
)
