"""LangChain: `@tool` functions, `BaseTool` subclasses (directly or through an intermediate base
class such as a toolkit's own `GmailBaseTool`) whose `_run`/`_arun` is the tool, and functions
registered by a call (`StructuredTool.from_function(fn)`, `Tool(name=..., func=fn)`,
`StructuredTool(name=..., func=fn)`)."""

from toollint.analysis.patterns import Patterns, RegistrationCall, ToolBaseClass, ToolDecorator

PATTERNS = Patterns(
    family="langchain",
    decorators=(ToolDecorator("tool"),),
    tool_bases=(ToolBaseClass("BaseTool", methods=("_run", "_arun")),
                ToolBaseClass("StructuredTool", methods=("_run", "_arun"))),
    registrations=(RegistrationCall("StructuredTool.from_function"), RegistrationCall("Tool.from_function"),
                   RegistrationCall("Tool"), RegistrationCall("StructuredTool")),
)
