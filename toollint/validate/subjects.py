"""The code the harness mutates: AgentDojo v1's tool modules, and minibank, a fixture benchmark that
conforms to its contracts by construction (so any flag on it is a false positive)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from toollint.contracts.model import Contract
from toollint.dynamic.protocol import WorkerSpec
from toollint.validate.harness import DynamicHost, Subject

AGENTDOJO_TOOLS = Path("default_suites/v1/tools")
# Tool module -> the suite whose environment hosts it (for the agentdojo adapter).
AGENTDOJO_SUITES = {
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
MINIBANK_TOOLS = ["deposit", "transfer", "lock_account", "unlock_account", "update_account", "charge_fee",
                  "get_balance"]


def _no_bytecode(root: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    # A mutant is written over the same file many times a second; a cached .pyc could stand in for it.
    env = {"PYTHONDONTWRITEBYTECODE": "1"}
    env.update(extra or {})
    return env


# Runs in the agentdojo venv: the names of every tool any v1 suite registers.
_REGISTERED = """
import json
from agentdojo.task_suite import get_suites
print(json.dumps(sorted({t.name for s in get_suites("v1").values() for t in s.tools})))
"""


def agentdojo_registered_tools(python: str) -> frozenset[str]:
    """What an agent can call: the tools AgentDojo v1's suites register (asked of the benchmark itself).
    `set_balance`, `set_iban` and `download_file` are tools by their signature but in no suite."""
    try:
        out = subprocess.run([python, "-c", _REGISTERED], capture_output=True, text=True, timeout=300, check=True)
        return frozenset(json.loads(out.stdout.strip().splitlines()[-1]))
    except (OSError, subprocess.SubprocessError, ValueError, IndexError) as exc:
        raise ValueError(f"cannot list AgentDojo's registered tools with {python}: {exc}") from None


def agentdojo_subjects(agentdojo_src: Path, python: str | None = None,
                       modules: Sequence[str] | None = None,
                       registered: frozenset[str] | None = None) -> list[Subject]:
    """One subject per AgentDojo v1 tool module of the installed package at `agentdojo_src`.

    With `python` (the agentdojo venv's interpreter) each subject gets a dynamic host: the package is
    copied to an overlay root, the mutant written into the copy, and the root put first on PYTHONPATH
    of a host running the agentdojo adapter for the module's suite. Contracts come from the bundled
    library (those whose tool lives in the module)."""
    from toollint.contracts.loader import bundled_library_dir, load_contracts

    contracts, _ = load_contracts([bundled_library_dir()])
    if registered is None and python is not None:
        registered = agentdojo_registered_tools(python)
    out = []
    for f in sorted((agentdojo_src / AGENTDOJO_TOOLS).glob("*.py")):
        if f.stem == "__init__" or (modules and f.stem not in modules):
            continue
        module_name = f"agentdojo.default_suites.v1.tools.{f.stem}"
        host = None
        if python is not None:
            mine = [c for c in contracts if c.module == module_name]
            suite = AGENTDOJO_SUITES.get(f.stem, "banking")
            py = python

            def spec(root: Path, contract: Contract, suite: str = suite, py: str = py) -> WorkerSpec:
                chosen = str(contract.adapter.get("suite") or suite)
                return WorkerSpec("agentdojo", {"suite": chosen}, py, env=_no_bytecode(root, {"PYTHONPATH": str(root)}))

            host = DynamicHost(agentdojo_src, Path("agentdojo") / AGENTDOJO_TOOLS / f.name, mine, spec)
        out.append(Subject(f"agentdojo:{f.stem}", f, module_name, display=f"agentdojo/{AGENTDOJO_TOOLS}/{f.name}",
                           host=host, registered=registered))
    return out


def minibank_subject(fixture_dir: Path, dynamic: bool = True) -> Subject:
    """minibank (`tests/fixtures/mutation/minibank`), hosted by the toolkit adapter in this interpreter."""
    from toollint.contracts.loader import load_contracts

    host = None
    if dynamic:
        contracts, errors = load_contracts([fixture_dir / "contracts"])
        if errors:
            raise ValueError(f"minibank contracts do not load: {errors[0]}")

        def spec(root: Path, contract: Contract) -> WorkerSpec:
            return WorkerSpec("toolkit", {"factory": "minibank.bank:make_bank", "sys_path": [str(root)],
                                          "tools": MINIBANK_TOOLS}, sys.executable, env=_no_bytecode(root))

        host = DynamicHost(fixture_dir, Path(fixture_dir.name) / "bank.py", contracts, spec)
    return Subject("minibank", fixture_dir / "bank.py", "minibank.bank", display="minibank/bank.py", host=host,
                   clean=True)
