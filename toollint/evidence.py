"""The typed evidence a finding carries: what its premise is, where that premise comes from, and so
how far a maintainer should trust it (bandit's confidence levels are the model).

A rule states its premise once, as data (`Premise`), instead of leaving it in the message for a later
step to parse again: the reporters print it (`--output-format full`, SARIF), `--confidence` selects on
it, `--fix` refuses a safe fix built on a low-confidence premise, and the derived oracles and
`contracts draft` read the parameter, state path and guard from here rather than from the source text.

This module imports nothing of toollint: `toollint.model` imports it.
"""

from __future__ import annotations

import ast
import enum
from dataclasses import dataclass, field


class Confidence(enum.IntEnum):
    """How strongly the evidence behind a finding's premise holds; ordered, so `>=` selects."""

    LOW = 1
    MEDIUM = 2
    HIGH = 3

    @classmethod
    def parse(cls, text: str) -> Confidence:
        return cls[text.strip().upper()]


class EvidenceKind(enum.Enum):
    """Where a premise was read from. The benchmark's own data, schema and code are high evidence; its
    prose is medium; a type annotation or a name alone is low."""

    DATA = "data"  # the benchmark's task or state data (a task passes subject="")
    SCHEMA = "schema"  # a declared default, enum or format in the tool's schema
    CODE = "code"  # the benchmark's code (a write of the value elsewhere, a helper that refuses it)
    DOCSTRING = "docstring"
    TYPE = "type"  # the annotation alone (`str` admits "")
    NAME = "name"  # a name or word alone

    @property
    def confidence(self) -> Confidence:
        if self in (EvidenceKind.DATA, EvidenceKind.SCHEMA, EvidenceKind.CODE):
            return Confidence.HIGH
        if self is EvidenceKind.DOCSTRING:
            return Confidence.MEDIUM
        return Confidence.LOW


@dataclass(frozen=True)
class Premise:
    """One claim a finding rests on, e.g. claim='"" is legal for subject', kind=DATA,
    source='data/tasks.json passes subject=""'."""

    claim: str
    kind: EvidenceKind
    source: str = ""

    @property
    def confidence(self) -> Confidence:
        return self.kind.confidence

    def describe(self) -> str:
        return f"{self.claim}: {self.source}" if self.source else self.claim


@dataclass(frozen=True)
class Evidence:
    """What a TL1 finding hands to later steps, typed: the parameter and state path it is about, the
    guard's condition as an expression (TL102, TL104), and the premises it rests on. Its confidence is
    that of its weakest premise (HIGH when it rests on none beyond the code it points at).

    For TL102, `guard` is the condition under which the commented-out check refuses (`c` of `if c:
    raise ...`, `not c` of `assert c`; None for a bare `raise`) and `guard_statement` the check itself,
    whose refusal (the exception or error reply) a derived oracle expects. AST nodes pickle, so the
    evidence crosses `--jobs` worker processes with its finding."""

    parameter: str | None = None
    state_path: str | None = None
    # AST nodes compare by identity: left out of ==, so a finding linted twice is equal to itself
    # (its properties["guard"] holds the same check as text).
    guard: ast.expr | None = field(default=None, compare=False)
    premises: tuple[Premise, ...] = ()
    guard_statement: ast.stmt | None = field(default=None, compare=False)

    @property
    def confidence(self) -> Confidence:
        return min((p.confidence for p in self.premises), default=Confidence.HIGH)
