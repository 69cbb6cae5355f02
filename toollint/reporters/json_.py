"""JSON output: a list of findings (ruff-like field names), and the rule table for `toollint rule`.

`--confirm`'s verdict, witness and trace are in each finding's `properties`; `message` is the
finding's own. File names that are not UTF-8 are shown with `\\xNN` escapes."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any, TextIO

from toollint import registry
from toollint.console import printable
from toollint.model import Finding, Fix
from toollint.registry import Rule
from toollint.reporters import Report


def _location(line: int | None, col: int | None) -> dict[str, int] | None:
    return None if line is None else {"row": line, "column": col or 1}


def _fix(fix: Fix | None) -> dict[str, Any] | None:
    if fix is None:
        return None
    return {
        "message": fix.description,
        "applicability": "safe" if fix.safe else "unsafe",
        "edits": [
            {
                "filename": printable(e.path),
                "content": e.replacement,
                "location": _location(e.line, e.col),
                "end_location": _location(e.end_line, e.end_col),
            }
            for e in fix.edits
        ],
    }


def finding_to_dict(finding: Finding) -> dict[str, Any]:
    rule = registry.get(finding.code)
    return {
        "code": finding.code,
        "name": registry.rule_name(finding.code),
        "message": printable(finding.message),
        "filename": printable(finding.path),
        "location": _location(finding.line, finding.col),
        "end_location": _location(finding.end_line, finding.end_col),
        "tool": finding.tool,
        "level": rule.level if rule else "warning",
        "fix": _fix(finding.fix),
        "related": [
            {
                "filename": printable(r.path),
                "location": _location(r.line, r.col),
                "message": printable(r.message),
            }
            for r in finding.related
        ],
        "properties": finding.properties,
        "confidence": finding.confidence.name.lower(),
        "evidence": finding.evidence.to_dict() if finding.evidence is not None else None,
        "url": rule.help_uri if rule else None,
        "suppressed": finding.suppressed,
    }


def dumps(data: Any) -> str:
    """Indented ASCII JSON: any stream can hold it (non-ASCII text, and a lone surrogate left in a
    property, become `\\u` escapes)."""
    return json.dumps(data, indent=2, default=str)


def write_json(report: Report, stream: TextIO) -> None:
    stream.write(dumps([finding_to_dict(f) for f in report.reported]) + "\n")


def write_statistics_json(report: Report, stream: TextIO) -> None:
    counts = Counter(f.code for f in report.reported)
    rows = [
        {"code": code, "name": registry.rule_name(code), "count": count}
        for code, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    ]
    json.dump(rows, stream, indent=2)
    stream.write("\n")


def rule_to_dict(rule: Rule) -> dict[str, Any]:
    return {
        "code": rule.code,
        "name": rule.name,
        "short": rule.short,
        "level": rule.level,
        "precision": rule.precision,
        "kind": rule.kind,
        "tags": list(rule.tags),
        "hint": rule.hint,
        "url": rule.help_uri,
        "doc": rule.doc,
    }
