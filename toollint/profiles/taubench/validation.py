"""tau-bench's driver (`toollint.profiles.api.BenchmarkDriver`): ground truth and grading by the
benchmark's own reward code, for the grader audit and the validation harness.

- `ground_truth(python, variant)`: each task's gold actions (`Task.actions`), the outputs its reward
  looks for (`Task.outputs`), its instruction, where it is written and what grades it, asked of
  tau-bench itself (`host/validation_host.py`);
- `grade(python, variant, items)`: each item's calls run through `Env.step` from the task's fresh
  database and graded by `Env.calculate_reward`; `{"task", "calls": []}` is a do-nothing agent. The
  grader audit's item keys (`final`, `trace`) are honoured (`validation_host.grade`);
- `audit_variants()`, `state_sample(python, variant)`: what the grader audit covers (each domain's
  test split) and the database its tasks start from.

A variant is a domain (`airline`, `retail`: the test split) or `domain/split` (`retail/train`).

tau-bench is checked out, not installed: the driver is bound to a checkout (`for_package`), whose folder
the host helpers put first on `sys.path`; the interpreter (`python`) needs only tau-bench's dependencies
(pydantic, and litellm, which `tau_bench/envs/user.py` imports).

What does not apply, and says so in one line: the profile has no host adapter and no bundled contracts,
so `worker_spec` raises ValueError and `subjects` is empty (no tool module is hosted for mutation).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from toollint.contracts.model import Contract
from toollint.profiles.api import (
    CheckoutDriver,
    GatewayError,
    Interpreter,
    Subject,
    WorkerSpec,
)
from toollint.profiles.taubench.tasks import Layout, locate

HOST_HELPERS = Path(__file__).parent / "host" / "validation_host.py"
DEADLINE = 1800.0  # one variant graded whole: tau-bench reloads and hashes its database twice a task
DOMAINS = ("airline", "retail")


class TaubenchDriver(CheckoutDriver[Layout]):
    label = "tau-bench"
    constructed_modules: tuple[tuple[str, str], ...] = ()

    locate = staticmethod(locate)

    # -- tool modules -----------------------------------------------------------------------------

    def variant_of(self, contract: Contract) -> str:
        return str(contract.adapter.get("domain") or DOMAINS[0])

    def worker_spec(self, python: str, variant: str, env: dict[str, str] | None = None) -> WorkerSpec:
        raise ValueError("tau-bench has no host adapter in toollint: its tools cannot be hosted one by one")

    def tool_module(self, package_dir: Path, module: str) -> tuple[Path, str]:
        """`airline.book_reservation` -> its file and `tau_bench.envs.airline.tools.book_reservation`."""
        package = locate(package_dir).package
        domain, _, name = module.partition(".")
        return package / "envs" / domain / "tools" / f"{name}.py", f"tau_bench.envs.{domain}.tools.{name}"

    def subjects(self, package_dir: Path, python: str | None = None, modules: Sequence[str] | None = None,
                 registered: frozenset[str] | None = None) -> list[Subject]:
        """None: with no host adapter and no contracts, no tool module is a mutation subject yet."""
        locate(package_dir)
        return []

    # -- questions to tau-bench's interpreter -----------------------------------------------------

    @contextlib.contextmanager
    def _helper(self, python: str) -> Iterator[Interpreter]:
        src = str(self._layout().checkout)
        try:
            with self.services.interpreter(python, env={"PYTHONDONTWRITEBYTECODE": "1"},
                                           deadline=DEADLINE) as worker:
                worker.evaluate("setup(src)", module=HOST_HELPERS, names={"src": src},
                                failure=f"tau-bench from {src} does not import")
                yield worker
        except GatewayError:
            raise
        except Exception as exc:  # noqa: BLE001 - a worker that cannot start is one line
            raise GatewayError(f"tau-bench's interpreter {python}: {exc}") from None

    def registered_tools(self, python: str) -> frozenset[str]:
        try:
            with self._helper(python) as worker:
                found = worker.evaluate("registered_tools(variants)", module=HOST_HELPERS,
                                        names={"variants": list(DOMAINS)})
        except GatewayError as exc:
            raise ValueError(f"cannot list tau-bench's registered tools with {python}: {exc}") from None
        return frozenset(t for names in found.values() for t in names)

    def ground_truth(self, python: str, variant: str) -> list[dict[str, Any]]:
        """`{"task", "calls": [{"function", "args"}], "outputs", "instruction", "source", "grader"}` per
        task, in file order."""
        with self._helper(python) as worker:
            return list(worker.evaluate("tasks(variant)", module=HOST_HELPERS, names={"variant": variant},
                                        failure=f"could not read tau-bench's {variant} tasks"))

    def grade(self, python: str, variant: str, items: Sequence[dict[str, Any]],
              pythonpath: Path | None = None) -> list[dict[str, Any]]:
        """Each item's verdict under `Env.calculate_reward`: `{"verdict", "reward", "errors", ...}`.
        `pythonpath` (an overlay of the package) is not supported: ValueError."""
        if pythonpath is not None:
            raise ValueError("tau-bench's driver grades the checkout itself, not an overlay")
        with self._helper(python) as worker:
            return self.grade_in(worker, variant, items)

    @contextlib.contextmanager
    def path_runner(self, python: str, pythonpath: Path | None = None
                    ) -> Iterator[Callable[[str, list[dict[str, Any]]], list[dict[str, Any]]]]:
        """`run(variant, rows)` graded as `grade` grades them, in one interpreter kept warm across
        calls (the grader audit grades a variant in chunks)."""
        if pythonpath is not None:
            raise ValueError("tau-bench's driver grades the checkout itself, not an overlay")
        with self._helper(python) as worker:
            yield lambda variant, rows: self.grade_in(worker, variant, rows)

    def grade_in(self, worker: Interpreter, variant: str, items: Sequence[dict[str, Any]]
                 ) -> list[dict[str, Any]]:
        """`grade` in an interpreter already set up by `interpreter()` (several variants, one import)."""
        return list(worker.evaluate(
            "grade(variant, items)", module=HOST_HELPERS,
            names={"variant": variant, "items": [dict(i) for i in items]},
            failure=f"grading {len(items)} tau-bench {variant} task(s)"))

    # -- the grader audit (`toollint.validate.graders`) ---------------------------------------------

    def audit_variants(self) -> list[str]:
        """The test split of each domain."""
        return list(DOMAINS)

    def state_sample(self, python: str, variant: str) -> Any:
        """The database as the variant's tasks start (where the audit harvests legal argument values)."""
        with self._helper(python) as worker:
            return worker.evaluate("state_sample(variant)", module=HOST_HELPERS, names={"variant": variant},
                                   failure=f"could not read tau-bench's {variant} database")

    def interpreter(self, python: str) -> contextlib.AbstractContextManager[Interpreter]:
        """A warm interpreter with tau-bench imported, for several questions (`HOST_HELPERS`' functions)."""
        return self._helper(python)
