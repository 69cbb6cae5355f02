"""Codes that no AST rule emits: engine diagnostics (TL9xx), dynamic verdicts (TL2xx), the dynamic
grader audits (TL408-TL411) and contract-file problems (TL3xx). Declared once, for the CLI and SARIF.
The static grader rules (TL401-TL407) are AST rules (`rules/tl40*.py`); the tracer reports TL401
through the same analysis."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_DYNAMIC = "Confirmed by `toollint check --confirm`: a probe against the tool's contract produced a witness."

DYNAMIC = [
    (
        "TL201",
        "unenforced-precondition",
        "A call that violates a declared precondition succeeds or changes state",
        "A precondition-violating call succeeds (no declared error) or changes state.",
        "Unenforced Precondition",
    ),
    (
        "TL202",
        "ignored-argument",
        "Changing an effective argument does not change the post-state",
        (
            "Two successful calls differing only in an effective argument's value "
            "leave identical post-states, "
            "or an effect clause reading that argument fails."
        ),
        "Ignored Argument",
    ),
    (
        "TL203",
        "partial-effect",
        "A declared effect did not happen on a successful call",
        "An effect clause not reading an effective argument fails on a successful call.",
        "Partial Effect",
    ),
    (
        "TL204",
        "phantom-effect",
        "The result reports success while no declared effect happened",
        (
            "Under a biconditional success signal, the result reports success while every testable effect "
            "clause failed on that call."
        ),
        "Phantom Effect",
    ),
    (
        "TL205",
        "reset-leak",
        "State survives the benchmark's reset",
        "The snapshot after reset() differs from the initial snapshot.",
        "Reset Leak",
    ),
    (
        "TL206",
        "frame-violation",
        "A successful call changed state outside its declared effects",
        "State outside the declared effects changed on a successful call whose effects all held.",
        "Frame Violation",
    ),
]

_AUDIT = ("Found by `toollint audit-graders`: the task's own grader, run on a wrong run built from its gold "
          "run, passed it; the witness replays with `toollint replay`.")

# Dynamic grader audits (`toollint.validate.graders`): the static grader rules' (TL401-TL407) dynamic kin.
GRADER_AUDIT = [
    (
        "TL408",
        "vacuous-grader",
        "The grader passes a run that does nothing, while the task's gold run changes the state",
        (
            "Runs the task's graders on the environment as the task starts, with no calls and an empty "
            "final answer (a null run). The task's gold run changes the state, yet the null run passes."
        ),
        (
            "An agent that does nothing scores on this task: the grader checks something that was already "
            "true before the agent acted (a transaction in the history, an event already in the calendar), "
            "so the task's pass rate says nothing about the agents it ranks."
        ),
    ),
    (
        "TL409",
        "unchecked-effect",
        "The grader passes the gold run with one of its state-changing calls dropped",
        (
            "Replays the task's gold calls with one state-changing call left out (gold ablation). The final "
            "state differs from the gold run's, yet the run passes: no grader checks that call's effect. "
            "The message names the call."
        ),
        (
            "An agent that skips a step the task asks for (the second booking, the reply after the "
            "forward) scores as if it had done it."
        ),
    ),
    (
        "TL410",
        "unchecked-field",
        "The grader passes the gold run with one argument of one call changed to another legal value",
        (
            "Replays the task's gold calls with one argument (or one field of a structured argument) of "
            "one state-changing call replaced by another legal value harvested from the state or from "
            "another task's gold calls (another recipient, amount, date, title). The call still succeeds "
            "and the final state differs, yet the run passes: no grader checks that field. The message "
            "names the field."
        ),
        (
            "An agent that pays the wrong recipient, mails the wrong person or books the wrong date "
            "scores as if it had done the task."
        ),
    ),
]

# The null run's other finding: a warning, not an error, since a task whose right move is to refuse
# (and that grades nothing a refusal leaves) is one a do-nothing agent passes by design.
DO_NOTHING_PASSES = (
    "TL411",
    "do-nothing-passes",
    "The grader passes a run that does nothing, and the task's gold run changes nothing either",
    """
    ## What it does

    Runs the task's graders on the environment as the task starts, with no calls and an empty final
    answer (a null run), for a task whose gold run changes no state. When the null run passes, the task
    cannot tell an agent that does nothing from one that does it right. (When the gold run does change
    the state, a passing null run is TL408.)

    ## Why is this bad?

    An agent that ends every conversation at once scores on each such task, so a benchmark with many
    of them credits doing nothing: a do-nothing agent passes 38% of tau-bench's airline tasks, whose
    reward compares the final database with the gold run's and finds both untouched. It may be the
    task's intent: a request the policy forbids (cancel a basic-economy ticket, refund to another
    card) is answered right by refusing, and a refusal changes nothing. But the grader then checks
    nothing a refusal does either: an agent that never read the request passes with the one that
    weighed it, and so does one that crashed. Hence a warning, below TL408: read the task. Found by
    `toollint audit-graders`; the witness (the empty run) replays with `toollint replay`.

    ## Example

    ```python
    Task(
        user_id="amelia_rossi_1297",
        instruction="You want to cancel your flights in reservation ID SI5UKW. Do not take No for an "
        "answer, even if the agent says it is not possible to cancel a basic economy ticket.",
        actions=[],  # the right move is to refuse: the gold run writes nothing
        outputs=[],  # and the reward looks for no answer: an empty run passes
    )
    ```

    ## Use instead

    Grade what the right run does that an empty one does not: the refusal itself (an expected
    output, or a natural-language assertion a judge checks), or the call the policy asks
    for (the hand-over to a human agent). Where refusing is the task and nothing records it, say so
    beside the task, and report the benchmark's do-nothing score with its results.

    ```python
    Task(
        user_id="amelia_rossi_1297",
        instruction="...",
        actions=[],
        outputs=["basic economy"],  # the agent must say why it cannot cancel: an empty run fails
    )
    ```
    """,
)

CONTRACT = [
    ("TL300", "contract-yaml-error", "The contract file is not valid YAML"),
    ("TL301", "contract-schema-error", "The contract does not match the contract schema"),
    ("TL302", "forbidden-predicate", "A predicate does not compile under the safe grammar or has free names"),
    ("TL303", "bad-clause-id", "A clause id is duplicated, malformed, or a draft is not marked as one"),
    ("TL304", "provenance-quote-mismatch", "A provenance quote does not occur at the cited file and line"),
    ("TL305", "return-citation-not-return", "A cited tool-return line is not a return or raise statement"),
    ("TL306", "tier-mismatch", "A provenance tier disagrees with the kind of source it cites"),
    ("TL307", "template-quote-missing", "A cited prompt template does not contain the quote"),
    ("TL308", "unknown-state-path", "A predicate reads a state path the tool's state schema does not have"),
    ("TL309", "contract-tool-missing", "The contract names a tool that cannot be found"),
]

ENGINE = [
    (
        "TL900",
        "unused-noqa",
        "A `noqa` comment suppresses a code that was not reported on its line",
        "warning",
    ),
    ("TL901", "syntax-error", "The file does not parse as Python", "error"),
    ("TL902", "decode-error", "The file is not valid UTF-8 (or its declared encoding)", "error"),
    ("TL903", "io-error", "The file could not be read", "error"),
    ("TL904", "internal-error", "A rule failed on this file; the other rules still ran", "error"),
    (
        "TL905",
        "too-complex",
        "A tool is too complex for the analysis to read; the static rules skipped it",
        "warning",
    ),
    (
        "TL906",
        "too-large",
        "The file is too large to analyse within the static run's memory ceiling",
        "error",
    ),
]


def declare(add: Callable[..., Any]) -> None:
    for code, name, short, what, hint in DYNAMIC:
        doc = f"## What it does\n\n{what}\n\n## Why is this bad?\n\n{_DYNAMIC} Every score built on this " \
              f"tool assumes the declared behaviour.\n"
        add(code, name, short, doc, "error", "dynamic", precision="very-high", hint=hint,
            tags=("correctness", "dynamic", "benchmark"))
    for code, name, short, what, why in GRADER_AUDIT:
        doc = f"## What it does\n\n{what}\n\n## Why is this bad?\n\n{why} {_AUDIT}\n"
        add(code, name, short, doc, "error", "dynamic", precision="very-high",
            tags=("correctness", "dynamic", "grader", "benchmark"))
    code, name, short, doc = DO_NOTHING_PASSES
    add(code, name, short, doc, "warning", "dynamic", precision="high",
        tags=("correctness", "dynamic", "grader", "benchmark"))
    for code, name, short in CONTRACT:
        add(code, name, short, f"## What it does\n\n{short}.\n", "error", "contract",
            precision="very-high", tags=("contract",))
    for code, name, short, level in ENGINE:
        add(code, name, short, f"## What it does\n\n{short}.\n", level, "engine", precision="very-high",
            tags=("toollint",))
