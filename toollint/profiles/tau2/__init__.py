"""tau2-bench: tools are `@is_tool(ToolType.WRITE|READ|...)` methods of per-domain toolkit classes
holding a pydantic DB in `self.db`; tasks are JSON files graded by `evaluation_criteria`.

The host adapter (`adapter.py`) and the bundled contracts (`contracts/`) live beside this file; a
path that does not exist yet counts as absent, so the profile is usable while it is filled in.
"""

from __future__ import annotations

from pathlib import Path

from toollint.profiles import Profile

HERE = Path(__file__).parent

PROFILE = Profile(
    name="tau2",
    description="tau2-bench domains (airline, retail, telecom, ...)",
    import_markers=("tau2",),
    path_markers=("*/tau2/domains/*",),
    adapter=HERE / "adapter.py",
    contracts_dir=HERE / "contracts",
    package="tau2",
)
