"""The one analysis every part of toollint shares: which functions are tools, which write state, and
the canonical state paths every function reads and writes, following helpers and base classes across
the modules of the linted tree.

| module        | what it holds                                                                    |
|---------------|----------------------------------------------------------------------------------|
| `vocabulary`  | the tables: writer verbs, mutators, log calls, pure calls, legal falsy values, verb pairs |
| `patterns`    | the discovery marker types the profiles fill (`toollint/profiles/*/patterns.py`)  |
| `discovery`   | which functions are tools (and which look like tools but are not, and why)       |
| `dispatch`    | dispatch shapes: request-kind branches, replies through a call, calls by name    |
| `graders`     | which functions are graders, the roles of their parameters, `--show-graders` facts |
| `grading`     | what a grader's verdict rests on: live state or the agent's record (TL401-TL407) |
| `resolver`    | where a name comes from: annotation aliases, imported helpers and base classes    |
| `summary`     | the summariser: reads, writes, parameter flows, returns of one function          |
| `paths`       | path reasoning: is a write guaranteed before this return? is this tool a writer? |
| `statepath`   | `StatePath`: the one parser of a state path's text (`db.lines[*].status`)         |
| `module`      | `analyze_module`: a module's tools and their summaries, as the rules see them     |
| `walk`        | the one walker of syntax trees: a node's children off its grammar, the walks on them |

The rules (`rules/`), the mutation generator, the probe generator, the contract validator and the
tracer import from here; none re-derives tools, writes or guards.
"""

from toollint.analysis.discovery import (
    Discovery,
    Rejection,
    ToolInfo,
    annotated_class,
    depends_roots,
    discover,
    discover_tools,
    module_state_names,
    resolve_annotation,
    type_aliases,
)
from toollint.analysis.module import ModuleAnalysis, ToolFact, analyze_module
from toollint.analysis.paths import (
    claims_to_write,
    contains,
    definitely_writes,
    function_nodes,
    is_writer,
    statement_definitely_writes,
    write_guaranteed_before,
    writer_reason,
)
from toollint.analysis.statepath import ELEMENT, StatePath
from toollint.analysis.summary import (
    MAX_HELPER_HOPS,
    ExternalCall,
    FunctionIndex,
    FunctionSummary,
    OpaqueUse,
    ParamInfo,
    Sink,
    StateAccess,
    TooComplex,
    base_annotation,
    call_name,
    chain_base,
    chain_keys,
    function_params,
    is_format_call,
    is_log_call,
    names_in,
    summarize,
)
from toollint.analysis.vocabulary import MUTATORS, WRITE_VERBS

__all__ = [
    "ELEMENT",
    "MAX_HELPER_HOPS",
    "MUTATORS",
    "WRITE_VERBS",
    "Discovery",
    "ExternalCall",
    "FunctionIndex",
    "FunctionSummary",
    "ModuleAnalysis",
    "OpaqueUse",
    "ParamInfo",
    "Rejection",
    "Sink",
    "StateAccess",
    "StatePath",
    "TooComplex",
    "ToolFact",
    "ToolInfo",
    "analyze_module",
    "annotated_class",
    "base_annotation",
    "call_name",
    "chain_base",
    "chain_keys",
    "claims_to_write",
    "contains",
    "definitely_writes",
    "depends_roots",
    "discover",
    "discover_tools",
    "function_nodes",
    "function_params",
    "is_format_call",
    "is_log_call",
    "is_writer",
    "module_state_names",
    "names_in",
    "resolve_annotation",
    "statement_definitely_writes",
    "summarize",
    "type_aliases",
    "write_guaranteed_before",
    "writer_reason",
]
