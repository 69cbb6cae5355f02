"""What `toollint contracts draft` adds to a tau2-bench tool's `adapter:` block: the domain whose
environment hosts it and the toolkit it belongs to, read from where its file sits
(`domains/<domain>/tools.py` is the agent's toolkit, `user_tools.py` the user simulator's)."""

from __future__ import annotations

from pathlib import Path

USER_TOOLKIT_FILES = ("user_tools.py",)


def draft_hints(tool_file: Path, rel: str, tool_name: str) -> dict[str, object]:
    parts = Path(rel).parts
    if "domains" not in parts or parts.index("domains") + 2 > len(parts):
        return {}
    domain = parts[parts.index("domains") + 1]
    toolkit = "user" if Path(rel).name in USER_TOOLKIT_FILES else "agent"
    return {"domain": domain, "toolkit": toolkit}
