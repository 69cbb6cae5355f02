"""tau2-bench: a toolkit method decorated `@is_tool(ToolType.X)` (or the knowledge domain's
`@is_discoverable_tool`); WRITE declares a writer, READ/GENERIC/THINK do not, and an explicit
`mutates_state=` overrides the kind. The toolkit instance (`self`, its `db`) is the state."""

from toollint.analysis.patterns import Patterns, ToolDecorator, WriterKeyword, WriterKind

PATTERNS = Patterns(
    family="tau2",
    decorators=(ToolDecorator("is_tool"), ToolDecorator("is_discoverable_tool")),
    writer_kinds=(WriterKind("WRITE", True), WriterKind("READ", False), WriterKind("GENERIC", False),
                  WriterKind("THINK", False)),
    writer_keywords=(WriterKeyword("mutates_state"),),
)
