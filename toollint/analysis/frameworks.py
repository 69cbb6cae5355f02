"""The agent frameworks' tool markers, as data: how LangChain, crewAI, MCP servers, LlamaIndex,
AutoGen, the OpenAI Agents SDK and smolagents mark a tool. A framework is not a benchmark: it has no
tasks, graders, host or contracts, so it has no profile, only these patterns, which the analysis
applies beside every benchmark profile's own (`all_patterns()`).

A new framework is one more `Patterns(...)` in `FRAMEWORKS`; the markers are documented in
`toollint.analysis.patterns`.
"""

from __future__ import annotations

from toollint.analysis.patterns import (
    Patterns,
    RegistrationCall,
    ToolBaseClass,
    ToolDecorator,
    ToolDispatcher,
    ToolkitClass,
    WriterKeyword,
)

FRAMEWORKS: tuple[Patterns, ...] = (
    # AutoGen: functions registered by `FunctionTool(fn, description=...)`.
    Patterns(family="autogen", registrations=(RegistrationCall("FunctionTool"),)),
    # crewAI: `@tool("name")` functions and `BaseTool` subclasses whose `_run` is the tool, or their
    # `run` when a class overrides that instead (LangChain's `BaseTool` marker covers the class form too).
    Patterns(
        family="crewai",
        decorators=(ToolDecorator("tool"),),
        tool_bases=(ToolBaseClass("BaseTool", methods=("_run", "_arun", "run")),),
    ),
    # LangChain: `@tool` functions, `BaseTool` subclasses (directly or through an intermediate base
    # class such as a toolkit's own `GmailBaseTool`) whose `_run`/`_arun` is the tool, and functions
    # registered by a call (`StructuredTool.from_function(fn)`, `Tool(name=..., func=fn)`,
    # `StructuredTool(name=..., func=fn)`).
    Patterns(
        family="langchain",
        decorators=(ToolDecorator("tool"),),
        tool_bases=(
            ToolBaseClass("BaseTool", methods=("_run", "_arun")),
            ToolBaseClass("StructuredTool", methods=("_run", "_arun")),
        ),
        registrations=(
            RegistrationCall("StructuredTool.from_function"),
            RegistrationCall("Tool.from_function"),
            RegistrationCall("Tool"),
            RegistrationCall("StructuredTool"),
        ),
    ),
    # LlamaIndex: functions registered by `FunctionTool.from_defaults(fn=...)`, and `*ToolSpec` classes,
    # every public method of which is a tool.
    Patterns(
        family="llamaindex",
        registrations=(RegistrationCall("FunctionTool.from_defaults"),),
        toolkit_classes=(
            ToolkitClass(r"ToolSpec$", exclude=frozenset({"to_tool_list", "get_fn_schema_from_fn_name"})),
        ),
    ),
    # MCP servers: FastMCP / MCPServer `@mcp.tool()` (at module level or nested in a factory function),
    # and the low-level `Server`, whose one `@server.call_tool()` handler (or the handler passed as
    # `Server(..., on_call_tool=fn)`) branches on the tool name, or serves one tool.
    # `ToolAnnotations(readOnlyHint=True)` declares a reader.
    Patterns(
        family="mcp",
        decorators=(ToolDecorator("tool"),),
        writer_keywords=(
            WriterKeyword("readOnlyHint", writes_when_true=False),
            WriterKeyword("read_only", writes_when_true=False),
        ),
        dispatchers=(ToolDispatcher("call_tool", keyword="on_call_tool"),),
    ),
    # OpenAI Agents SDK: `@function_tool` functions.
    Patterns(family="openai_agents", decorators=(ToolDecorator("function_tool"),)),
    # smolagents: `@tool` functions and `Tool` subclasses whose `forward` is the tool.
    Patterns(
        family="smolagents",
        decorators=(ToolDecorator("tool"),),
        tool_bases=(ToolBaseClass("Tool", methods=("forward",)),),
    ),
)
