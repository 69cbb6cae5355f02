"""ToolSandbox and its multimodal fork (MM-ToolSandbox): `@register_as_tool(...)` functions whose
state is reached through the execution context (`get_current_context()`) or, in the fork's MINI
toolbox, through the backend module each tool dispatches to by name (`_get("venmo_add_friend")(...)`,
`m.alarms_create_alarm(...)`), which the analysis resolves (`toollint.analysis.dispatch`). Static
only: discovery patterns (`patterns.py`)."""

from __future__ import annotations

from toollint.profiles.api import Profile

PROFILE = Profile(
    name="toolsandbox",
    description="ToolSandbox / MM-ToolSandbox tools (`@register_as_tool`)",
    import_markers=("tool_sandbox", "mmtoolsandbox"),
    path_markers=("*/tool_sandbox/tools/*", "*/mmtoolsandbox/tools/*"),
)
