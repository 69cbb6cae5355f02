"""crewAI: `@tool("name")` functions and `BaseTool` subclasses whose `_run` is the tool, or
their `run` when a class overrides that instead (the LangChain profile's `BaseTool` marker covers
the class form too)."""

from toollint.analysis.patterns import Patterns, ToolBaseClass, ToolDecorator

PATTERNS = Patterns(
    family="crewai",
    decorators=(ToolDecorator("tool"),),
    tool_bases=(ToolBaseClass("BaseTool", methods=("_run", "_arun", "run")),),
)
