"""AgentDojo's driver for the validation harness (`toollint.profiles.api.BenchmarkDriver`).

Mutation subjects are the v1 tool modules (`default_suites/v1/tools/*.py`); a mutant is hosted by
the AgentDojo adapter for the suite whose environment holds the module's tools, with an overlay of
the package first on `PYTHONPATH`. Ground truth, registered tools and grading are the host-side
helpers in `host/adapter.py`, evaluated in AgentDojo's venv through the host gateway.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from toollint.contracts.model import Contract
from toollint.profiles.api import DynamicHost, GatewayError, Profile, Services, Subject, WorkerSpec

VERSION = "v1"
AUDIT_VERSION = "v1.2.2"  # the benchmark's own default (`agentdojo.scripts.benchmark --benchmark-version`)
SUITES = ("banking", "slack", "travel", "workspace")
TOOLS_DIR = Path("default_suites/v1/tools")
# Tool module -> the suite whose environment hosts it (for the agentdojo adapter).
MODULE_SUITES = {
    "banking_client": "banking",
    "user_account": "banking",
    "slack": "slack",
    "web": "slack",
    "travel_booking_client": "travel",
    "calendar_client": "workspace",
    "email_client": "workspace",
    "cloud_drive_client": "workspace",
    "file_reader": "banking",
}
DEFAULT_SUITE = "banking"


def _split(variant: str) -> tuple[str, str]:
    """`v1.2.2/banking` -> its version and suite; a bare suite is at the harness's version."""
    version, _, suite = variant.rpartition("/")
    return version or VERSION, suite


def _no_bytecode(extra: dict[str, str] | None = None) -> dict[str, str]:
    # A mutant is written over the same file many times a second; a cached .pyc could stand in for it.
    env = {"PYTHONDONTWRITEBYTECODE": "1"}
    env.update(extra or {})
    return env


class AgentDojoDriver:
    label = "AgentDojo"
    # the modules whose tools drop legal falsy arguments (`if amount:`), in the suite hosting them
    constructed_modules: tuple[tuple[str, str], ...] = (
        ("banking_client", "banking"),
        ("user_account", "banking"),
    )

    def __init__(self, profile: Profile, services: Services) -> None:
        self.profile = profile
        self.services = services

    def for_package(self, package_dir: Path) -> AgentDojoDriver:
        return self  # installed, not checked out: one driver serves every package directory

    def check_package(self, package_dir: Path) -> str | None:
        if not (package_dir / TOOLS_DIR).is_dir():
            return f"{package_dir}: not an agentdojo package (no {TOOLS_DIR} inside)"
        return None

    def registered_tools(self, python: str) -> frozenset[str]:
        """What an agent can call: the tools AgentDojo v1's suites register (asked of the benchmark itself).
        `set_balance`, `set_iban` and `download_file` are tools by their signature but in no suite."""
        try:
            names = self.services.evaluate(python, "registered_tools(version)", module=self.profile.adapter,
                                           names={"version": VERSION})
        except GatewayError as exc:
            raise ValueError(f"cannot list AgentDojo's registered tools with {python}: {exc}") from None
        return frozenset(names)

    def variant_of(self, contract: Contract) -> str:
        return str(contract.adapter.get("suite") or DEFAULT_SUITE)

    def worker_spec(self, python: str, variant: str, env: dict[str, str] | None = None) -> WorkerSpec:
        return WorkerSpec(self.profile.name, {"suite": variant}, python, env=dict(env or {}))

    def tool_module(self, package_dir: Path, module: str) -> tuple[Path, str]:
        return package_dir / TOOLS_DIR / f"{module}.py", f"agentdojo.default_suites.v1.tools.{module}"

    def subjects(self, package_dir: Path, python: str | None = None, modules: Sequence[str] | None = None,
                 registered: frozenset[str] | None = None) -> list[Subject]:
        """One subject per AgentDojo v1 tool module of the installed package at `package_dir`.

        With `python` (the agentdojo venv's interpreter) each subject gets a dynamic host: the package
        is copied to an overlay root, the mutant written into the copy, and the root put first on
        PYTHONPATH of a host running the agentdojo adapter for the module's suite. Contracts come from
        the profile's bundled contracts (those whose tool lives in the module)."""
        bundled = self.profile.contracts_dir
        contracts = self.services.load_contracts([bundled] if bundled else [])
        if registered is None and python is not None:
            registered = self.registered_tools(python)
        out = []
        for f in sorted((package_dir / TOOLS_DIR).glob("*.py")):
            if f.stem == "__init__" or (modules and f.stem not in modules):
                continue
            _, module_name = self.tool_module(package_dir, f.stem)
            host = None
            if python is not None:
                mine = [c for c in contracts if c.module == module_name]
                suite = MODULE_SUITES.get(f.stem, DEFAULT_SUITE)

                def spec(root: Path, contract: Contract, suite: str = suite, py: str = python) -> WorkerSpec:
                    chosen = str(contract.adapter.get("suite") or suite)
                    return self.worker_spec(py, chosen, _no_bytecode({"PYTHONPATH": str(root)}))

                host = DynamicHost(package_dir, Path(package_dir.name) / TOOLS_DIR / f.name, mine, spec)
            out.append(
                Subject(
                    f"agentdojo:{f.stem}",
                    f,
                    module_name,
                    display=f"agentdojo/{TOOLS_DIR}/{f.name}",
                    host=host,
                    registered=registered,
                )
            )
        return out

    def ground_truth(self, python: str, variant: str) -> list[dict[str, Any]]:
        version, suite = _split(variant)
        found = self.services.evaluate(python, "ground_truth(version, suite)", module=self.profile.adapter,
                                       names={"version": version, "suite": suite},
                                       failure=f"could not read {variant}'s ground truth with {python}")
        return list(found)

    def grade(self, python: str, variant: str, items: Sequence[dict[str, Any]],
              pythonpath: Path | None = None) -> list[dict[str, Any]]:
        version, suite = _split(variant)
        env = _no_bytecode({"PYTHONPATH": str(pythonpath)} if pythonpath is not None else None)
        found = self.services.evaluate(python, "grade(version, suite, items)", module=self.profile.adapter,
                                       names={"version": version, "suite": suite, "items": list(items)},
                                       env=env, deadline=1800, failure=f"grading {variant} tasks failed")
        return list(found)

    # -- the grader audit (`toollint.profiles.api.GraderAuditDriver`) -------------------------------

    def audit_variants(self) -> list[str]:
        """Every suite of the benchmark's default version."""
        return [f"{AUDIT_VERSION}/{suite}" for suite in SUITES]

    def state_sample(self, python: str, variant: str) -> Any:
        version, suite = _split(variant)
        return self.services.evaluate(python, "state_sample(version, suite)", module=self.profile.adapter,
                                      names={"version": version, "suite": suite},
                                      failure=f"could not read {variant}'s environment with {python}")

