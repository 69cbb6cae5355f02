"""LlamaIndex: functions registered by `FunctionTool.from_defaults(fn=...)`, and `*ToolSpec`
classes, every public method of which is a tool."""

from toollint.analysis.patterns import Patterns, RegistrationCall, ToolkitClass

PATTERNS = Patterns(
    family="llamaindex",
    registrations=(RegistrationCall("FunctionTool.from_defaults"),),
    toolkit_classes=(ToolkitClass(r"ToolSpec$", exclude=frozenset({"to_tool_list", "get_fn_schema_from_fn_name"})),),
)
