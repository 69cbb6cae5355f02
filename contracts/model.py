"""A contract: what one tool declares it does, as machine-checkable clauses with provenance.

Built by `toollint.contracts.loader` from one YAML file; read by the validator, the dynamic checker
(`toollint.dynamic`) and the tracer. See docs/contracts.md for the file format.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from toollint.contracts.host.predicate import Predicate

ClauseKind = Literal["pre", "eff", "frame", "arg", "inv", "success"]
CLAUSE_KINDS: tuple[str, ...] = ("pre", "eff", "frame", "arg", "inv", "success")

Tier = Literal["agent-visible", "maintainer-comment", "author-specified", "derived"]
TIERS: tuple[str, ...] = ("agent-visible", "maintainer-comment", "author-specified", "derived")
# A clause toollint derived from one of its own static findings (`toollint.dynamic.derived`): it cites
# the finding (rule code, file, line, what it is about) instead of a declared text, and is counted
# apart from the authored tiers everywhere. The validator re-lints the cited file to check the claim.
DERIVED = "derived"

# What a provenance line is. The first group is shown to the agent, the second only to maintainers.
AGENT_VISIBLE_KINDS = ("docstring", "signature", "schema", "return", "template", "readme", "standard")
MAINTAINER_KINDS = ("comment", "log")
SOURCE_KINDS: tuple[str, ...] = AGENT_VISIBLE_KINDS + MAINTAINER_KINDS

DRAFT_SUFFIX = "_draft"


@dataclass(frozen=True)
class Provenance:
    """Where a clause comes from. `file` is relative to the benchmark's package dir or repository."""

    tier: str
    file: str | None = None
    line: int | None = None
    quote: str | None = None
    kind: str | None = None  # one of SOURCE_KINDS; None for author-specified clauses
    inferred: bool = False
    commit: str | None = None  # overrides the contract's source.commit for this citation
    note: str | None = None
    yaml_line: int = 0  # line of the `provenance:` mapping in the contract file
    finding: str | None = None  # derived only: the code of the static finding cited (TL101-TL105)
    about: str | None = None  # derived only: what that finding is about (its parameter, field or guard)

    @property
    def headline(self) -> bool:
        """A finding is headline-worthy only when its clause is agent-visible."""
        return self.tier == "agent-visible"

    @property
    def derived(self) -> bool:
        """Derived by toollint from a static finding, not authored from a declared surface."""
        return self.tier == DERIVED


@dataclass(frozen=True)
class OnViolation:
    """What a precondition-violating call must produce: an exception type and/or the state rule."""

    raises: str | None = None  # exception class name, e.g. "ValueError"
    state: Literal["unchanged", "any"] = "unchanged"
    # Text the refusal's message (or, without `raises`, the reply) contains when the precondition is
    # what refused the call; a refusal without it is not attributed to this precondition.
    message: str | None = None


@dataclass(frozen=True)
class RoundTrip:
    """An effect scored on a round trip: a legal call of `do`, then `undo` on what it made, in one
    environment; `pre` is the state before `do`, `post` the state after `undo`."""

    do: str  # tool names, as the benchmark registers them
    undo: str


@dataclass(frozen=True)
class Clause:
    id: str
    kind: str  # one of CLAUSE_KINDS, taken from the id's prefix
    predicate_source: str | None
    predicate: Predicate | None
    provenance: Provenance
    on_violation: OnViolation | None = None  # pre.* only
    arg: str | None = None  # arg.* only: the argument name (the id's suffix)
    falsy_legal: bool | None = None  # arg.* only: 0 / False / "" / [] are meaningful values
    biconditional: bool = False  # success only: success iff every declared non-deferred effect happened
    justification: str | None = None  # success only: why the biconditional reading is sound
    deferred: bool = False  # eff.* only: not observable right after the call, left out of biconditionals
    round_trip: RoundTrip | None = None  # eff.* only: scored on a do-then-undo sequence, not on one call
    draft: bool = False
    description: str | None = None
    line: int = 0  # 1-based line of the clause in the contract file
    predicate_line: int = 0
    predicate_col: int = 0

    @property
    def counted(self) -> bool:
        """Drafts are excluded from every count until a person writes the predicate."""
        return not self.draft

    @property
    def derived(self) -> bool:
        return self.provenance.derived


@dataclass(frozen=True)
class LeftOut:
    """A field (`path`) or parameter (`arg`) the contract leaves out on purpose, and the surface that
    allows it (a deferred effect, a policy): a finding about it is not tested, for this `reason`, instead
    of being left to an oracle that would call the omission a defect."""

    reason: str
    surface: Provenance
    path: str | None = None  # a state path, as a predicate reads it (`agent_db.users[*].payment_methods`)
    arg: str | None = None  # a parameter of the tool
    line: int = 0  # 1-based line of the entry in the contract file

    @property
    def subject(self) -> str:
        return self.path or f"args.{self.arg}"


@dataclass(frozen=True)
class Source:
    file: str
    package: str | None = None  # importable package the file path is relative to, e.g. "mybench"
    version: str | None = None
    commit: str | None = None
    repo: str | None = None  # repository dir for `git show <commit>:<file>`, relative to the contract


@dataclass(frozen=True)
class Contract:
    tool: str  # import-style reference "pkg.module:function" or "pkg.module:Class.method"
    benchmark: str
    source: Source
    clauses: tuple[Clause, ...]
    path: Path  # the YAML file
    adapter: dict[str, Any] = field(default_factory=dict)
    description: str | None = None
    line: int = 1
    left_out: tuple[LeftOut, ...] = ()  # what the contract leaves out on purpose, each with its reason

    @property
    def module(self) -> str:
        return self.tool.partition(":")[0]

    @property
    def qualname(self) -> str:
        """`Class.method` or `function`."""
        return self.tool.partition(":")[2]

    @property
    def tool_name(self) -> str:
        """The function name, as the benchmark registers the tool."""
        return self.qualname.rsplit(".", 1)[-1]

    def clauses_of(self, kind: str, *, include_drafts: bool = False) -> list[Clause]:
        return [c for c in self.clauses if c.kind == kind and (include_drafts or not c.draft)]

    @property
    def counted_clauses(self) -> list[Clause]:
        return [c for c in self.clauses if c.counted]

    @property
    def effective_args(self) -> dict[str, Clause]:
        """Effective arguments (non-draft `arg.*` clauses), by argument name, in file order."""
        return {c.arg: c for c in self.clauses_of("arg") if c.arg}

    @property
    def success(self) -> Clause | None:
        found = self.clauses_of("success")
        return found[0] if found else None

    def clause(self, clause_id: str) -> Clause | None:
        return next((c for c in self.clauses if c.id == clause_id), None)

    @property
    def is_draft(self) -> bool:
        return bool(self.clauses) and all(c.draft for c in self.clauses)

    @property
    def derived(self) -> bool:
        """Every clause derived from static findings (a contract `--confirm` wrote, or a maintainer
        kept from `contracts draft --from-findings`): its rows are counted apart from authored ones."""
        return bool(self.clauses) and all(c.derived for c in self.clauses)
