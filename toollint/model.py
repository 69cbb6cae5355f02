"""The objects every part of toollint exchanges: findings, their locations, and fixes.

A `Finding` is what a rule (static TL1xx), the dynamic checker (TL2xx), the contract validator
(TL3xx), the tracer (TL4xx) or the engine itself (TL9xx) reports. Reporters (text, json, sarif) and
front ends (CLI, flake8, pre-commit) only ever see these. Its `message` is fixed when it is made:
what later steps learn (a `--confirm` verdict and witness, a trace) goes into `properties`, which
each reporter renders in its own way, so a finding's message and fingerprint are the same with and
without `--confirm`, whatever `--witness-dir` and whatever the output format.

This module imports only `toollint.evidence`: everything else imports it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from toollint.evidence import Confidence, Evidence


@dataclass(frozen=True)
class RelatedLocation:
    """Evidence elsewhere: the partner tool's write (TL105), the docstring promise (TL102), a grader read."""

    path: str
    line: int
    col: int
    message: str
    end_line: int | None = None
    end_col: int | None = None


@dataclass(frozen=True)
class Edit:
    """Replace the text between two 1-based (line, col) positions; `end` is exclusive."""

    path: str
    line: int
    col: int
    end_line: int
    end_col: int
    replacement: str


@dataclass(frozen=True)
class Fix:
    """A change that removes a finding: its edits, and whether applying it is safe."""

    description: str
    edits: tuple[Edit, ...]
    safe: bool = True


@dataclass
class Finding:
    """One reported problem. Lines and columns are 1-based; `end_col` is exclusive."""

    code: str
    message: str
    path: str
    line: int
    col: int = 1
    end_line: int | None = None
    end_col: int | None = None
    tool: str | None = None  # qualified name of the enclosing tool, e.g. "BankingTools.update"
    related: list[RelatedLocation] = field(default_factory=list)
    fix: Fix | None = None
    properties: dict[str, Any] = field(default_factory=dict)
    suppressed: bool = False  # by a noqa comment; reporters leave these out unless asked
    evidence: Evidence | None = None  # the typed premise, parameter, state path and guard (TL1xx)

    @property
    def confidence(self) -> Confidence:
        return self.evidence.confidence if self.evidence is not None else Confidence.HIGH

    def sort_key(self) -> tuple[str, int, int, str]:
        return (self.path, self.line, self.col, self.code)
