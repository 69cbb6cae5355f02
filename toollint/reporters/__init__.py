"""Output formats, as data: `FORMATS` maps each `--output-format` to the module and function that
writes it (imported only when chosen, so a plain run never pays for the SARIF or XML code).

Every writer has the signature `write(report: Report, stream: TextIO) -> None`. `Report` holds all
the run's findings, suppressed ones included (SARIF may keep them); the other formats show
`report.reported`. What `--confirm` learned about a finding is in its `properties`; each writer
renders it in its own way (`verdict_note` for the text-like formats, properties in JSON and SARIF,
where a finding left untested also says why in the result's message: `untested_note`), so a
finding's own message and its fingerprints never depend on the format or on `--confirm`.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from toollint import registry
from toollint.console import Style, printable
from toollint.model import Finding

# format -> (module, function, what it is); "text" is the flake8 word for concise.
FORMATS: dict[str, tuple[str, str, str]] = {
    "concise": ("toollint.reporters.text", "write_concise", "one line per finding (flake8 style)"),
    "text": ("toollint.reporters.text", "write_concise", "the same as concise"),
    "full": ("toollint.reporters.text", "write_full", "each finding with its source line and fix hint"),
    "json": ("toollint.reporters.json_", "write_json", "a list of findings (ruff-like fields)"),
    "sarif": ("toollint.reporters.sarif", "write_report", "SARIF 2.1.0 for GitHub code scanning"),
    "github": ("toollint.reporters.github", "write_github", "GitHub Actions workflow commands (annotations)"),
    "gitlab": ("toollint.reporters.gitlab", "write_gitlab", "GitLab Code Quality JSON"),
    "junit": ("toollint.reporters.junit", "write_junit", "JUnit XML, one test case per finding"),
}


@dataclass
class Report:
    """What every writer gets: the findings and how to show them."""

    findings: Sequence[Finding]  # all, suppressed included, in path/line order
    root: Path | None = None  # project root: paths in SARIF, GitLab and baselines are relative to it
    style: Style = field(default_factory=lambda: Style(False))
    warn: Callable[[str], None] = lambda message: None
    # SARIF only
    sarif_category: str | None = None
    sarif_include_suppressed: bool = False
    unsafe_fixes: bool = False

    @property
    def reported(self) -> list[Finding]:
        return [f for f in self.findings if not f.suppressed]


Writer = Callable[[Report, TextIO], None]


def writer(output_format: str) -> Writer:
    module, function, _ = FORMATS[output_format]
    found: Writer = getattr(importlib.import_module(module), function)
    return found


def level(code: str) -> str:
    """The SARIF level of a code: error, warning or note."""
    rule = registry.get(code)
    return rule.level if rule else "warning"


def show_path(path: str | Path, cwd: str | None = None) -> str:
    """A path as the user reads it: relative to the working directory when below it."""
    text = str(path)
    base = (cwd or os.getcwd()).rstrip(os.sep) + os.sep
    text = text.removeprefix(base)
    return printable(text)


def verdict_note(finding: Finding) -> str:
    """` [VIOLATES: .toollint/witnesses/x.json]`, ` [CONFORMS]`, ` [UNTESTABLE: why]`, or "" when
    `--confirm` put no verdict on the finding; a derived oracle's verdict says so (` [derived VIOLATES:
    ...]`). TL2xx findings are verdicts themselves: no note."""
    properties: dict[str, Any] = finding.properties
    verdict = properties.get("verdict")
    if not verdict or not finding.code.startswith("TL1"):
        return ""
    witness = properties.get("witness")
    extra = show_path(witness) if witness else properties.get("verdict_detail")
    # (An UNCHECKED says in its detail that no derived oracle could be made.)
    tier = "derived " if properties.get("verdict_oracle") == "derived" and verdict != "UNCHECKED" else ""
    return f" [{tier}{verdict}{': ' + str(extra) if extra else ''}]"


def unnoticed_note(finding: Finding) -> str:
    """` [`tool` drops `arg` (TL103 at f.py:9) and no grader would notice: ...]` on a TL410 the grader
    audit joined with a finding that the tool drops the same argument (`properties["unnoticed"]`, built
    once from both findings' typed evidence by `toollint.validate.audit`), else ""."""
    joined = finding.properties.get("unnoticed")
    sentence = joined.get("sentence") if isinstance(joined, dict) else None
    return f" [{sentence}]" if sentence else ""


# The verdicts that decide a finding: any other (UNTESTABLE, UNCHECKED, ...) leaves it untested.
DECIDED = ("VIOLATES", "FLAKY", "CONFORMS")


def untested_note(finding: Finding) -> str:
    """` [UNTESTABLE: why]`, ` [UNCHECKED: why]`: the verdict of a static finding `--confirm` could not
    decide, with its reason (`verdict_detail`); "" for a decided verdict, no verdict, or a TL2xx."""
    verdict = finding.properties.get("verdict")
    if not verdict or verdict in DECIDED or not finding.code.startswith("TL1"):
        return ""
    return verdict_note(finding)
