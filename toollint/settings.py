"""Resolved settings for one run. `toollint.config` builds these from pyproject and the CLI."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Settings:
    select: list[str] = field(default_factory=lambda: ["TL1", "TL9"])
    ignore: list[str] = field(default_factory=list)
    extend_select: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)  # glob -> codes
    exclude: list[str] = field(default_factory=list)
    extend_exclude: list[str] = field(default_factory=list)
    tool_decorators: list[str] = field(default_factory=list)  # extra decorator names marking tools
    tools: list[str] = field(default_factory=list)  # "pkg.mod:Class.method" references
    tool_classes: list[str] = field(default_factory=list)  # "pkg.mod:Class": every public method is a tool
    state_roots: list[str] = field(default_factory=list)  # accessor calls and parameter names that reach state
    contract_dirs: list[str] = field(default_factory=list)
    confirm: dict[str, Any] = field(default_factory=dict)  # [tool.toollint.confirm]
    trace: dict[str, Any] = field(default_factory=dict)  # [tool.toollint.trace]
    project_root: Path | None = None  # where pyproject.toml was found; SARIF paths are relative to it
    config_file: Path | None = None

    def tool_refs_for(self, module_name: str) -> set[str]:
        """Qualified names ("Class.method" or "function") configured as tools in this module."""
        return _refs_in(self.tools, module_name)

    def tool_classes_for(self, module_name: str) -> set[str]:
        """Class names configured in `tool-classes` that live in this module."""
        return _refs_in(self.tool_classes, module_name)


def _refs_in(refs: list[str], module_name: str) -> set[str]:
    """The qualified names of "pkg.mod:Qual" references whose module is `module_name`."""
    out = set()
    for ref in refs:
        mod, _, qual = ref.partition(":")
        if qual and (module_name == mod or module_name.endswith("." + mod) or mod.endswith("." + module_name)):
            out.add(qual)
    return out
