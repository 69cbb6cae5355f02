"""tau-bench (v1): tools are `Tool` subclasses whose static `invoke(data, ...)` receives the whole
environment database as `data`. Static only: discovery patterns (`patterns.py`)."""

from __future__ import annotations

from toollint.profiles.api import Profile

PROFILE = Profile(
    name="taubench",
    description="tau-bench v1 tools (`Tool.invoke(data, ...)`)",
)
