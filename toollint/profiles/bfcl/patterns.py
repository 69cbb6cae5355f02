"""BFCL multi-turn (the Berkeley Function Calling Leaderboard's `eval_checker`): its tools are the
public methods of API classes that describe themselves with `_api_description`, and its checkers are
found by their data flow (they compare the model's result with the ground truth); discovery needs no
help for either. What only this profile knows: `state_checker` and `method_invoke_order_checker`
receive, as `model_instances`, the API instances the model's calls ran against, so they read the live
state after the run, not the agent's record."""

from toollint.analysis.patterns import GraderFunction, Patterns

PATTERNS = Patterns(
    family="bfcl",
    graders=(
        GraderFunction("state_checker|method_invoke_order_checker", params=("model_instances",),
                       state=("model_instances",)),
    ),
)
