"""ToolSandbox and its multimodal fork: `@register_as_tool(...)` functions whose state is reached
through the execution context (`get_current_context().add_to_database(...)`)."""

from toollint.analysis.patterns import Patterns, StateAccessor, ToolDecorator

PATTERNS = Patterns(
    family="toolsandbox",
    decorators=(ToolDecorator("register_as_tool"),),
    state_accessors=(StateAccessor("get_current_context"),),
)
