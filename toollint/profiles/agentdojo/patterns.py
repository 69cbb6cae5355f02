"""AgentDojo: a tool is a function registered with a suite whose state arrives as
`Annotated[T, Depends("env_field")]` parameters (directly or through a module alias such as
`AnnotatedSlack`); `make_function(fn)` registers one by a call."""

from toollint.analysis.patterns import Patterns, RegistrationCall, StateAnnotation

PATTERNS = Patterns(
    family="agentdojo",
    state_annotations=(StateAnnotation("Depends"),),
    registrations=(RegistrationCall("make_function"),),
)
