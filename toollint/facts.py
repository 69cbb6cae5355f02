"""What a run reports about each file's tools and graders, as plain data: picklable across `--jobs`
processes and into the results cache, and importable without the analysis that finds them (a run the
cache answers never imports it). The analysis builds these (`toollint.analysis.module`,
`toollint.analysis.discovery`, `toollint.analysis.graders` re-export them under their old names)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ToolFact:
    """One tool as a run reports it (`--show-tools`, JSON): plain data, picklable across processes."""

    qualname: str
    line: int
    family: str
    writes: bool
    why: str  # why it is (not) a writer
    found_by: str  # how discovery recognised it


@dataclass(frozen=True)
class Rejection:
    """A function that looks like a tool and was not taken, with why."""

    qualname: str
    line: int
    reason: str


@dataclass(frozen=True)
class Candidate:
    """A class or function that looks most like a tool in a tree where none was found: what it is,
    why it looks like one, and the `[tool.toollint]` line that would take it."""

    qualname: str
    line: int
    why: str
    config: str
    score: int


@dataclass(frozen=True)
class GraderFact:
    """One grader as a run reports it (`--show-graders`, JSON): plain data, picklable."""

    qualname: str
    line: int
    family: str
    basis: str  # reads_state / reads_record / gated_on_state / no_state / undone_in_run
    credits_write: bool  # it credits a write the record claims
    why: str
    found_by: str

    @property
    def ungrounded(self) -> bool:
        return self.basis in ("reads_record", "gated_on_state")
