"""MCP servers: FastMCP / MCPServer `@mcp.tool()` (at module level or nested in a factory
function), and the low-level `Server`, whose one `@server.call_tool()` handler (or the handler passed
as `Server(..., on_call_tool=fn)`) branches on the tool name, or serves one tool.
`ToolAnnotations(readOnlyHint=True)` declares a reader."""

from toollint.analysis.patterns import Patterns, ToolDecorator, ToolDispatcher, WriterKeyword

PATTERNS = Patterns(
    family="mcp",
    decorators=(ToolDecorator("tool"),),
    writer_keywords=(WriterKeyword("readOnlyHint", writes_when_true=False),
                     WriterKeyword("read_only", writes_when_true=False)),
    dispatchers=(ToolDispatcher("call_tool", keyword="on_call_tool"),),
)
