"""Score-at-risk tracing: from a confirmed tool defect to the graded tasks whose verdicts read the
state it leaves wrong (METHOD.md Part 4).

- `readsites`: where a grader reads state (via `toollint.analysis`) and how a read exposes a field;
- `tasks`: task enumerators (AgentDojo task classes, tau2-style JSON task files, configured graders);
- `ledger`: the pipeline (`trace`, `trace_findings`), the per-basis ledger, TL401, SARIF attachment;
- `report_html`: the self-contained HTML report; `cli`: `toollint trace` and the `check` step.
"""

from toollint.trace.ledger import Defect, Ledger, LedgerRow, trace, trace_findings
from toollint.trace.readsites import BASES, ReadSite, classify

__all__ = ["BASES", "Defect", "Ledger", "LedgerRow", "ReadSite", "classify", "trace", "trace_findings"]
