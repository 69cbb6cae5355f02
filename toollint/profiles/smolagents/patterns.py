"""smolagents: `@tool` functions and `Tool` subclasses whose `forward` is the tool."""

from toollint.analysis.patterns import Patterns, ToolBaseClass, ToolDecorator

PATTERNS = Patterns(
    family="smolagents",
    decorators=(ToolDecorator("tool"),),
    tool_bases=(ToolBaseClass("Tool", methods=("forward",)),),
)
