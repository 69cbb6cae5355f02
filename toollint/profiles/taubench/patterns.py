"""tau-bench (v1): each tool is a `Tool` subclass whose static `invoke(data, ...)` receives the
whole environment database as `data`. The grader is the environment's own `calculate_reward()`: it
replays the gold actions on a fresh copy of the data and compares hashes, so the instance (its
`data`) is the live state it reads; data flow alone finds it, but not that `self` is the state."""

from toollint.analysis.patterns import GraderFunction, Patterns, ToolBaseClass

PATTERNS = Patterns(
    family="taubench",
    tool_bases=(ToolBaseClass("Tool", methods=("invoke",), state_params=("data",)),),
    graders=(GraderFunction("calculate_reward", within=r"Env", self_state=True),),
)
