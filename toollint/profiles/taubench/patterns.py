"""tau-bench (v1): each tool is a `Tool` subclass whose static `invoke(data, ...)` receives the
whole environment database as `data`."""

from toollint.analysis.patterns import Patterns, ToolBaseClass

PATTERNS = Patterns(
    family="taubench",
    tool_bases=(ToolBaseClass("Tool", methods=("invoke",), state_params=("data",)),),
)
