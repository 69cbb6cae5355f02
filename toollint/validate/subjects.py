"""The code the harness mutates: a benchmark profile's tool modules (its driver's `subjects`), and
minibank, a fixture benchmark that conforms to its contracts by construction (so any flag on it is
a false positive)."""

from __future__ import annotations

import sys
from pathlib import Path

from toollint.contracts.model import Contract
from toollint.dynamic.protocol import WorkerSpec
from toollint.validate.harness import DynamicHost, Subject

MINIBANK_TOOLS = ["deposit", "transfer", "lock_account", "unlock_account", "update_account", "charge_fee",
                  "get_balance"]


def _no_bytecode(extra: dict[str, str] | None = None) -> dict[str, str]:
    # A mutant is written over the same file many times a second; a cached .pyc could stand in for it.
    env = {"PYTHONDONTWRITEBYTECODE": "1"}
    env.update(extra or {})
    return env


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
                                          "tools": MINIBANK_TOOLS}, sys.executable, env=_no_bytecode())

        host = DynamicHost(fixture_dir, Path(fixture_dir.name) / "bank.py", contracts, spec)
    return Subject(
        "minibank",
        fixture_dir / "bank.py",
        "minibank.bank",
        display="minibank/bank.py",
        host=host,
        clean=True,
    )
