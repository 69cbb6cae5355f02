"""AgentDojo: a tool is a function registered with a suite whose state arrives as
`Annotated[T, Depends("env_field")]` parameters (directly or through a module alias such as
`AnnotatedSlack`); `make_function(fn)` registers one by a call. The graders are the user tasks'
`utility`/`utility_from_traces` and the injection tasks' `security`/`security_from_traces`:
`post_environment` is the live state after the run, `pre_environment` the state before it,
`model_output` and `traces` the agent's record."""

from toollint.analysis.patterns import GraderFunction, Patterns, RegistrationCall, StateAnnotation

PATTERNS = Patterns(
    family="agentdojo",
    state_annotations=(StateAnnotation("Depends"),),
    registrations=(RegistrationCall("make_function"),),
    graders=(GraderFunction(r"(?:utility|security)(?:_from_traces)?", within=r"\w*(?:User|Injection)Task\w*",
                            state=("post_environment",), before=("pre_environment",),
                            record=("model_output", "traces")),),
)
