"""MedAgentBench (AgentBench's task framework): the agent's tools are the branches of the task loop
`MedAgentBench.start_sample`, which branches on the request's HTTP verb (`r.startswith('GET')`,
`r.startswith('POST')`) and answers through `session.inject(...)`; the verb dispatch needs no marker,
the reply call is named here. The graders are the reference solution's `taskN(case_data, results,
fhir_api_base)` in `refsol.py`: `results` is the agent's record (its `history` of requests and the
replies it got, its `result`), the FHIR server behind `fhir_api_base` is the live state (read with
GET requests)."""

from toollint.analysis.patterns import GraderFunction, Patterns, ReplyCall, RequestDispatcher

PATTERNS = Patterns(
    family="medagentbench",
    request_dispatchers=(RequestDispatcher("start_sample", within="Task"),),
    reply_calls=(ReplyCall("inject"),),
    graders=(
        GraderFunction(r"task\d+", params=("case_data", "results", "fhir_api_base"), record=("results",)),
    ),
)
