"""tau-bench (v1, verified on sierra-research/tau-bench 59a200c6): each tool is a `Tool` subclass whose
static `invoke(data, ...)` receives the whole environment database as `data`; tasks are `Task(...)`
lists per domain and split (`envs/<domain>/tasks_<split>.py`), all graded by `Env.calculate_reward`.

- `patterns.py`: discovery patterns (the tool base class, the grader);
- `tasks.py`: the task enumerator of the tracer (read as syntax): each task, its grader, its tools;
- `validation.py` (+ `host/validation_host.py`, run in tau-bench's interpreter): the driver: each
  task's gold actions, and any path graded by tau-bench's own `calculate_reward`.

tau-bench is checked out, not installed: the driver puts the checkout first on `sys.path`; the
interpreter (`--python`) needs only its dependencies.
"""

from __future__ import annotations

from toollint.profiles.api import DriverFactory, Profile, TaskEnumerator


def _tasks() -> TaskEnumerator:
    from toollint.profiles.taubench.tasks import tasks

    return tasks


def _validation() -> DriverFactory:
    from toollint.profiles.taubench.validation import TaubenchDriver

    return TaubenchDriver


PROFILE = Profile(
    name="taubench",
    description="tau-bench v1 tools (`Tool.invoke(data, ...)`)",
    import_markers=("tau_bench",),
    path_markers=("*/tau_bench/envs/*",),
    package="tau_bench",
    variant_option="domain",
    tasks=_tasks,
    validation=_validation,
)
