"""Tool discovery across the built-in profiles (MCP, LangChain, OpenAI Agents, ToolSandbox) and the
configured ones (`tools`, `tool-decorators`), on annotated fixtures: nothing is imported."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from expectations import expected

from toollint.analysis import discover_tools
from toollint.engine import lint_source
from toollint.settings import Settings

FIXTURES = Path(__file__).parent / "fixtures" / "discovery"
# Discovery is the point here, not the premises' evidence: every finding counts (confidence "low").
CONFIGURED = Settings(select=["TL1"], tools=["configured:Env.update_email"], tool_decorators=["expose"],
                      confidence="low")


@pytest.mark.parametrize("name", ["mcp_server", "langchain_tools", "openai_agents"])
def test_builtin_profiles(name: str) -> None:
    source = (FIXTURES / f"{name}.py").read_text()
    result = lint_source(source, f"{name}.py", Settings(select=["TL1"], confidence="low"))
    assert {(f.line, f.code) for f in result.reported} == expected(source)


def test_configured_tools_and_decorators() -> None:
    source = (FIXTURES / "configured.py").read_text()
    result = lint_source(source, "configured.py", CONFIGURED, module_name="configured")
    assert {(f.line, f.code) for f in result.reported} == expected(source)


def test_unconfigured_methods_are_not_tools() -> None:
    tree = ast.parse((FIXTURES / "configured.py").read_text())
    assert [t.qualname for t in discover_tools(tree, Settings(), "configured")] == []


def test_mcp_module_state_is_a_state_root() -> None:
    from toollint.analysis import analyze_module

    analysis = analyze_module(ast.parse((FIXTURES / "mcp_server.py").read_text()))
    assert [t.name for t in analysis.tools] == ["add_note", "delete_note"]
    add = analysis.summary(analysis.tools[0])
    assert {w.path for w in add.writes} == {"NOTES[*]", "NOTES[*].pinned"}  # a constant key is a field


def test_tau2_read_and_generic_tools_are_not_writers() -> None:
    source = """
class T:
    @is_tool(ToolType.READ)
    def get(self, k): return self.db[k]
    @is_tool(ToolType.WRITE)
    def put(self, k, v): self.db[k] = v
    @is_tool(ToolType.GENERIC)
    def think(self, thought): return "ok"
"""
    tools = discover_tools(ast.parse(source), Settings())
    assert {t.name: t.declared_writer for t in tools} == {"get": False, "put": True, "think": False}
