"""`--output-format github`: GitHub Actions workflow commands, one annotation per finding.

`::warning file=pkg/tools.py,line=28,col=8,endLine=28,endColumn=14,title=toollint (TL104)::TL104 ...`
GitHub shows these on the pull request's diff without code scanning (the route for private
repositories without GitHub Advanced Security). The level is the rule's: `error`, `warning`, or
`notice` for notes. Escaping follows the Actions toolkit (`@actions/core`): in the message `%`, CR
and LF become `%25`, `%0D`, `%0A`; in the properties also `:` and `,` become `%3A` and `%2C`.
"""

from __future__ import annotations

from typing import TextIO

from toollint import registry
from toollint.console import printable
from toollint.model import Finding
from toollint.reporters import Report, level, unnoticed_note, verdict_note

_COMMAND = {"error": "error", "warning": "warning", "note": "notice", "none": "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(finding: Finding) -> str:
    properties = [("file", printable(finding.path)), ("line", str(finding.line)), ("col", str(finding.col))]
    if finding.end_line is not None:
        properties.append(("endLine", str(finding.end_line)))
        if finding.end_col is not None:
            properties.append(("endColumn", str(finding.end_col)))
    properties.append(("title", f"toollint ({finding.code})"))
    head = ",".join(f"{name}={escape_property(value)}" for name, value in properties)
    message = (
        f"{finding.code} [{registry.rule_name(finding.code)}] "
        f"{printable(finding.message)}{verdict_note(finding)}{printable(unnoticed_note(finding))}"
    )
    return f"::{_COMMAND.get(level(finding.code), 'warning')} {head}::{escape_data(message)}"


def write_github(report: Report, stream: TextIO) -> None:
    stream.writelines(annotation(f) + "\n" for f in report.reported)
