"""tau2-bench: a toolkit method decorated `@is_tool(ToolType.X)` (or the knowledge domain's
`@is_discoverable_tool`); WRITE declares a writer, READ/GENERIC/THINK do not, and an explicit
`mutates_state=` overrides the kind. The toolkit instance (`self`, its `db`) is the state.

Graders: the toolkits' `assert_*` methods (the env assertions a task names; the toolkit instance is
the live state) and the evaluators' `calculate_reward` (`environment_constructor` builds the state
the trajectory is replayed into; `full_trajectory` is the agent's record)."""

from toollint.analysis.patterns import GraderFunction, Patterns, ToolDecorator, WriterKeyword, WriterKind

PATTERNS = Patterns(
    family="tau2",
    decorators=(ToolDecorator("is_tool"), ToolDecorator("is_discoverable_tool")),
    writer_kinds=(WriterKind("WRITE", True), WriterKind("READ", False), WriterKind("GENERIC", False),
                  WriterKind("THINK", False)),
    writer_keywords=(WriterKeyword("mutates_state"),),
    graders=(
        GraderFunction(r"assert_\w+", within=r"\w*(?:Tools|Toolkit|ToolKit)", self_state=True),
        GraderFunction("calculate_reward", within=r"\w*Evaluator", state=("environment_constructor",),
                       record=("full_trajectory",)),
    ),
)
