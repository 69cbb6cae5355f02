"""AgentDojo's parts for the contract tools: the suites' state schemas (`contracts check --python`,
TL308) and the suite hints of `contracts draft`."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from toollint.profiles.api import GatewayError, Services

SCHEMA_VERSION = "v1"
ADAPTER = Path(__file__).parent / "host" / "adapter.py"  # the profile's `adapter`, whose helpers answer


def state_schemas(python: str, services: Services, version: str = SCHEMA_VERSION) -> dict[str, Any]:
    """The state JSON Schema of every AgentDojo suite, asked of the benchmark's own interpreter;
    empty when it cannot answer (TL308 is then skipped, as without `--python`)."""
    try:
        found = services.evaluate(python, "state_schemas(version)", module=ADAPTER,
                                  names={"version": version}, failure="reading AgentDojo's state schemas")
    except GatewayError:
        return {}
    return found if isinstance(found, dict) else {}


def draft_hints(tool_file: Path, rel: str, tool_name: str) -> dict[str, object]:
    """The suites registering a tool: AgentDojo lists tools in `default_suites/<v>/<suite>/task_suite.py`
    beside the `tools/` dir the tool lives in. The first is the contract's `suite`; all, `suites`."""
    if "tools" not in Path(rel).parts:
        return {}
    version_dir = tool_file.parents[1]
    found = []
    for suite_file in sorted(version_dir.glob("*/task_suite.py")):
        try:
            text = suite_file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if re.search(rf"^\s*{re.escape(tool_name)},", text, re.MULTILINE):
            found.append(suite_file.parent.name)
    hints: dict[str, object] = {}
    if found:
        hints["suite"] = found[0]
        if len(found) > 1:
            hints["suites"] = found
    return hints
