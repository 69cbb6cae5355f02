"""`--output-format gitlab`: a GitLab Code Quality report (a JSON list of issues).

Each issue has `description`, `check_name` (the code), `fingerprint` (the `toollint/v1` fingerprint,
so GitLab tracks an issue across pipelines as code scanning does), `severity` (`major` for the
error-level codes, `minor` for warnings, `info` for notes) and `location.path` relative to the
project root with `location.lines.begin`/`end`. Upload it as `artifacts:reports:codequality`.
"""

from __future__ import annotations

import json
from typing import Any, TextIO

from toollint import registry
from toollint.console import printable
from toollint.fingerprint import relative_path, toollint_fingerprints
from toollint.reporters import Report, level, verdict_note

SEVERITY = {"error": "major", "warning": "minor", "note": "info", "none": "info"}


def issues(report: Report) -> list[dict[str, Any]]:
    # Fingerprints over every finding (suppressed ones too), as in SARIF and baselines.
    fingerprints = dict(zip(map(id, report.findings), toollint_fingerprints(report.findings, report.root)))
    out = []
    for f in report.reported:
        out.append({
            "description": f"{f.code} [{registry.rule_name(f.code)}] {printable(f.message)}{verdict_note(f)}",
            "check_name": f.code,
            "fingerprint": fingerprints[id(f)],
            "severity": SEVERITY.get(level(f.code), "minor"),
            "location": {
                "path": printable(relative_path(f.path, report.root)),
                "lines": {"begin": f.line, "end": f.end_line or f.line},
            },
        })
    return out


def write_gitlab(report: Report, stream: TextIO) -> None:
    stream.write(json.dumps(issues(report), indent=2) + "\n")
