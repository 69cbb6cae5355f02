"""What the validation harness asks of a benchmark: a profile's `validation` part.

The harness (`harness.py`), gold replay (`replay.py`) and constructed paths (`constructed.py`) are
generic; everything they need to know about one benchmark family comes from a `BenchmarkDriver`:
which files are its tool modules and how a mutant of one is hosted, which tools it registers, its
tasks' ground-truth calls, and how its own graders score a sequence of calls. Drivers reach the
benchmark's interpreter only through the host gateway (`toollint.dynamic.protocol`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from toollint.profiles import Profile, ProfileError, all_profiles, get_profile

if TYPE_CHECKING:
    from toollint.contracts.model import Contract
    from toollint.dynamic.protocol import WorkerSpec
    from toollint.validate.harness import Subject


class BenchmarkDriver(Protocol):
    """One benchmark family, for the validation harness. Failures are one-line exceptions:
    ValueError for bad input (a directory that is not the benchmark), RuntimeError for an
    interpreter that cannot answer."""

    label: str  # how messages name the benchmark
    # (tool module, variant) pairs the constructed-path positive control runs on (`bench/validate.py`)
    constructed_modules: tuple[tuple[str, str], ...]

    def check_package(self, package_dir: Path) -> str | None:
        """None when `package_dir` is the benchmark's package, else the one-line problem."""

    def registered_tools(self, python: str) -> frozenset[str]:
        """The tool names an agent can call, asked of the benchmark (ValueError when it cannot say)."""

    def subjects(self, package_dir: Path, python: str | None = None, modules: Sequence[str] | None = None,
                 registered: frozenset[str] | None = None) -> list[Subject]:
        """One mutation subject per tool module; hosted dynamically when `python` is given."""

    def variant_of(self, contract: Contract) -> str:
        """The variant (suite, domain) whose environment hosts a contract's tool."""

    def worker_spec(self, python: str, variant: str, env: dict[str, str] | None = None) -> WorkerSpec:
        """A host for one variant's environment."""

    def ground_truth(self, python: str, variant: str) -> list[dict[str, Any]]:
        """Each task's ground-truth calls: `{"task", "calls": [{"function", "args"}], "error"?}`."""

    def grade(self, python: str, variant: str, items: Sequence[dict[str, Any]],
              pythonpath: Path | None = None) -> list[dict[str, Any]]:
        """Each item's (`{"task", "calls"}`) verdict under the task's own grader: `{"verdict", "errors"}`;
        `pythonpath` puts an overlay of the package first."""

    def tool_module(self, package_dir: Path, module: str) -> tuple[Path, str]:
        """A tool module's file and its import name."""

    def for_package(self, package_dir: Path) -> BenchmarkDriver:
        """The driver bound to the benchmark at `package_dir` (a checkout, for a benchmark that is
        not installed); a driver for an installed package returns itself."""


class PathDriver(BenchmarkDriver, Protocol):
    """A driver that also runs whole paths (`toollint.validate.paths`): gold replay and constructed
    paths, each call with its requestor, graded by the benchmark's own evaluator."""

    def path_runner(self, python: str, pythonpath: Path | None = None
                    ) -> AbstractContextManager[Callable[[str, list[dict[str, Any]]], list[dict[str, Any]]]]:
        """A warm interpreter (an overlay of the package first on its path when `pythonpath` is given)
        as `run(variant, rows)`: each row `{"task", "calls": [{"function", "args", "requestor"?,
        "alternatives"?, "args_from"?, "watch"?}]}` run and graded, answered `{"reward", "why",
        "errors", "watched": [{"kind", "status", "holds", "state_changed"}]}`."""


def validating_profiles() -> list[Profile]:
    """The profiles that can be validated (they have a `validation` part)."""
    return [p for p in all_profiles() if p.has_part("validation")]


def driver_for(name: str) -> BenchmarkDriver:
    """The driver of the profile called `name`; ValueError (one line) when there is none."""
    try:
        profile = get_profile(name)
    except ProfileError as exc:
        raise ValueError(str(exc)) from None
    if not profile.has_part("validation"):
        names = ", ".join(p.name for p in validating_profiles()) or "none"
        raise ValueError(f"benchmark {name!r} has no validation driver (profiles with one: {names})")
    return profile.load_part("validation")  # type: ignore[no-any-return]
