"""Score-at-risk tracing: from a confirmed tool defect to the graded tasks whose verdicts read the
state it leaves wrong (METHOD.md Part 4).

- `readsites`: where a grader reads state (via `toollint.analysis`) and how a read exposes a field;
- `tasks`: task enumerators (a profile's own, JSON task files, configured graders);
- `ledger`: the pipeline (`trace`, `trace_findings`), the per-basis ledger, TL401, SARIF attachment;
- `report_html`: the self-contained HTML report; `cli`: `toollint trace`; `check`: the `check` step.
"""

from __future__ import annotations

import importlib
from typing import Any

# Imported on first use: `toollint check` imports this package for its check step on every run.
_EXPORTS = {
    "Defect": "ledger", "Ledger": "ledger", "LedgerRow": "ledger", "trace": "ledger",
    "trace_findings": "ledger", "BASES": "readsites", "ReadSite": "readsites", "classify": "readsites",
}
__all__ = ["BASES", "Defect", "Ledger", "LedgerRow", "ReadSite", "classify", "trace", "trace_findings"]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"toollint.trace.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module 'toollint.trace' has no attribute {name!r}")
