"""SARIF 2.1.0 output that GitHub code scanning can use as is.

The log is built from plain dicts and written with `json.dumps` (the C encoder): no generated code,
and no object model to walk. Values equal to the schema's default are left out (`kind: "fail"`,
`enabled: true`, `language`, `newlineSequences`), except `level`, which is written on every result
and rule because GitHub reads it.

What GitHub reads and how this module provides it (see docs/integrations.md):
every registered rule in `rules[]` with help rendered from the rule doc; repository-relative URIs
under `%SRCROOT%`; UTF-16 columns; `primaryLocationLineHash` computed exactly as upload-sarif does
plus a `toollint/v1` fingerprint; `executionSuccessful: false` when a file could not be analysed;
suppressed findings left out; at most 25,000 results (GitHub's per-run limit), keeping the most
severe and most precise when there are more, with a warning that says how many were left out.

File names that are not valid UTF-8 (surrogate-escaped text) are percent-encoded byte for byte in
URIs and shown with `\\xNN` escapes in messages.
"""

from __future__ import annotations

import gc
import json
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any
from urllib.parse import quote

from toollint import __version__
from toollint.console import printable
from toollint.evidence import Confidence
from toollint.fingerprint import FINGERPRINT_KEY, line_hashes, relative_path, toollint_fingerprints
from toollint.model import Finding, Fix
from toollint.registry import Rule, docs_uri, reported_rules
from toollint.reporters import Report, untested_note

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
SRCROOT = "%SRCROOT%"
MAX_RESULTS = 25_000  # GitHub code scanning accepts at most this many results per run
# Findings that mean a file was not (fully) analysed: the run did not succeed on it.
FAILURE_CODES = frozenset({"TL901", "TL902", "TL903", "TL904"})
# Which results stay when there are more than the limit: errors before warnings before notes, then
# the most precise rules first, then source order.
LEVEL_RANK = {"error": 0, "warning": 1, "note": 2, "none": 3}
PRECISION_RANK = {"very-high": 0, "high": 1, "medium": 2, "low": 3}

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
Warn = Callable[[str], None]


@dataclass
class SarifOptions:
    root: Path | None = None  # paths are made relative to this (the project root); default: cwd
    category: str | None = None  # automationDetails.id, GitHub's analysis category
    include_suppressed: bool = False
    unsafe_fixes: bool = False
    max_results: int = MAX_RESULTS
    # Text of files by the path used in findings; files not given are read from disk when needed.
    sources: Mapping[str, str] = field(default_factory=dict)


# --------------------------------------------------------------------------------------------------
# Positions


def utf16_column(line_text: str | None, col: int) -> int:
    """A 1-based code-point column as a 1-based UTF-16 code-unit column."""
    if line_text is None or col <= 1 or line_text.isascii():
        return max(col, 1)
    prefix = line_text[: col - 1]
    extra = sum(1 for ch in prefix if ord(ch) > 0xFFFF)  # astral characters take two code units
    return col + extra


def artifact_uri(relative: str) -> tuple[str, bool]:
    """The URI of a file and whether it is relative to %SRCROOT%. Bytes that are not UTF-8 (carried as
    surrogate escapes) are percent-encoded as the bytes they are."""
    if relative.startswith("/"):  # outside the project root: an absolute file URI
        return Path(relative).as_uri(), False
    return quote(os.fsencode(relative), safe="/"), True


class _Files:
    """The files findings point into: their text (read once, as bytes, so CRLF survives for the line
    hash), lines, line hashes and SARIF artifact locations."""

    def __init__(self, given: Mapping[str, str], root: Path | None, hashed_upto: Mapping[str, int]) -> None:
        self._given = given
        self._hashed_upto = hashed_upto  # the last line whose hash each file's results need
        self._root = root
        self._cwd = os.getcwd()
        self._text: dict[str, str | None] = {}
        self._lines: dict[str, list[str]] = {}
        self._hashes: dict[str, dict[int, str]] = {}
        self._artifacts: dict[str, dict[str, str]] = {}

    def relative(self, path: str) -> str:
        return relative_path(path, self._root)

    def text(self, path: str) -> str | None:
        if path not in self._text:
            if path in self._given:
                self._text[path] = self._given[path]
            else:
                try:
                    self._text[path] = Path(self._cwd, path).read_bytes().decode("utf-8", "replace")
                except (OSError, ValueError):
                    self._text[path] = None
        return self._text[path]

    def line(self, path: str, line: int) -> str | None:
        lines = self._lines.get(path)
        if lines is None:
            text = self.text(path)
            lines = self._lines[path] = _LINE_BREAK.split(text) if text is not None else []
        return lines[line - 1] if 1 <= line <= len(lines) else None

    def line_hash(self, path: str, line: int) -> str | None:
        hashes = self._hashes.get(path)
        if hashes is None:
            text = self.text(path)
            upto = self._hashed_upto.get(path)
            hashes = self._hashes[path] = line_hashes(text, upto) if text is not None else {}
        return hashes.get(line)

    def artifact(self, path: str) -> dict[str, str]:
        """One shared (never mutated) dict per file."""
        loc = self._artifacts.get(path)
        if loc is None:
            uri, under_root = artifact_uri(self.relative(path))
            loc = self._artifacts[path] = {"uri": uri, "uriBaseId": SRCROOT} if under_root else {"uri": uri}
        return loc

    def region(
        self, path: str, line: int, col: int, end_line: int | None, end_col: int | None
    ) -> dict[str, int]:
        text = self.line(path, line)
        if end_line is None or end_line < line:
            end_line = line
        end_text = text if end_line == line else self.line(path, end_line)
        if end_col is None:  # no end given: the region runs to the end of its last line
            end_col = len(end_text) + 1 if end_text is not None else col
        if end_line == line and end_col < col:
            end_col = col
        return {
            "startLine": line,
            "startColumn": utf16_column(text, col),
            "endLine": end_line,
            "endColumn": utf16_column(end_text, end_col),
        }

    def location(
        self, path: str, line: int, col: int, end_line: int | None, end_col: int | None, **extra: Any
    ) -> dict[str, Any]:
        physical = {
            "artifactLocation": self.artifact(path),
            "region": self.region(path, line, col, end_line, end_col),
        }
        return {**extra, "physicalLocation": physical}


# --------------------------------------------------------------------------------------------------
# Rules


def _plain_text(markdown: str) -> str:
    """help.text: the rule doc without Markdown syntax that reads badly as plain text."""
    text = re.sub(r"^#+\s*", "", markdown, flags=re.MULTILINE)
    text = re.sub(r"^```\w*\n?", "", text, flags=re.MULTILINE)
    return text.replace("`", "").strip()


def rule_descriptor(r: Rule) -> dict[str, Any]:
    markdown = r.doc.strip() or r.short
    tags = list(dict.fromkeys([*r.tags, r.kind]))[:20]  # GitHub keeps at most 20 tags
    properties: dict[str, Any] = {"tags": tags, "precision": r.precision, "problem.severity": r.severity}
    if r.hint:
        properties["defect-class"] = r.hint
    return {
        "id": r.code,
        "name": r.name,
        "shortDescription": {"text": r.short},
        "fullDescription": {"text": r.full},
        "help": {"text": _plain_text(markdown), "markdown": markdown},
        "helpUri": r.help_uri,
        "defaultConfiguration": {"level": r.level},
        "properties": properties,
    }


# --------------------------------------------------------------------------------------------------
# Results


def _fix(fix: Fix, files: _Files) -> dict[str, Any]:
    by_path: dict[str, list[dict[str, Any]]] = {}
    for e in fix.edits:
        region = files.region(e.path, e.line, e.col, e.end_line, e.end_col)
        by_path.setdefault(e.path, []).append(
            {"deletedRegion": region, "insertedContent": {"text": e.replacement}}
        )
    return {
        "description": {"text": fix.description},
        "artifactChanges": [
            {"artifactLocation": files.artifact(p), "replacements": reps} for p, reps in by_path.items()
        ],
    }


RANK = {Confidence.HIGH: 90.0, Confidence.MEDIUM: 60.0, Confidence.LOW: 30.0}


def _result(
    f: Finding,
    fingerprint: str,
    rule_index: Mapping[str, int],
    rule_level: Mapping[str, str],
    opts: SarifOptions,
    files: _Files,
) -> dict[str, Any]:
    partial = {FINGERPRINT_KEY: fingerprint}
    line_hash = files.line_hash(f.path, f.line)
    if line_hash is not None:
        partial["primaryLocationLineHash"] = line_hash
    properties: dict[str, Any] = dict(f.properties)  # the verdict and witness of --confirm among them
    # Threads of steps (path, line, col, message), e.g. the tracer's tool write -> field -> grader read.
    code_flow = properties.pop("code_flow", None)
    if f.tool:
        properties.setdefault("tool", f.tool)
    if f.evidence is not None:
        properties["confidence"] = f.confidence.name.lower()
        properties["premises"] = [p.describe() for p in f.evidence.premises]
    result: dict[str, Any] = {"ruleId": f.code}
    if f.code in rule_index:
        result["ruleIndex"] = rule_index[f.code]
    result["level"] = rule_level.get(f.code, "warning")
    # A finding --confirm could not decide says why where a reader looks (the message), not only in
    # properties.verdict_detail; the fingerprints are the finding's own message's, so they stay put.
    result["message"] = {"text": printable(f.message + untested_note(f))}
    result["locations"] = [files.location(f.path, f.line, f.col, f.end_line, f.end_col)]
    result["partialFingerprints"] = partial
    if f.evidence is not None:  # SARIF's 0-100 priority: how far the premise's evidence goes
        result["rank"] = RANK[f.confidence]
    if properties:
        result["properties"] = properties
    if f.related:
        result["relatedLocations"] = [
            files.location(
                r.path, r.line, r.col, r.end_line, r.end_col, id=i, message={"text": printable(r.message)}
            )
            for i, r in enumerate(f.related, 1)
        ]
    if code_flow:
        result["codeFlows"] = [_code_flow(code_flow, files)]
    if f.fix is not None and f.fix.edits and (f.fix.safe or opts.unsafe_fixes):
        result["fixes"] = [_fix(f.fix, files)]
    if f.suppressed:
        result["suppressions"] = [{"kind": "inSource"}]
    return result


def _code_flow(threads: Sequence[Sequence[Mapping[str, Any]]], files: _Files) -> dict[str, Any]:
    return {
        "threadFlows": [
            {
                "locations": [
                    {
                        "location": files.location(
                            str(step["path"]),
                            int(step.get("line") or 1),
                            int(step.get("col") or 1),
                            None,
                            None,
                            message={"text": printable(str(step.get("message", "")))},
                        )
                    }
                    for step in thread
                ]
            }
            for thread in threads
        ]
    }


def _notification(f: Finding, files: _Files) -> dict[str, Any]:
    return {
        "level": "error",
        "message": {"text": printable(f"{files.relative(f.path)}: {f.message}")},
        "descriptor": {"id": f.code},
        "locations": [files.location(f.path, f.line, f.col, f.end_line, f.end_col)],
    }


def _keep_most_important(
    shown: list[Finding], limit: int, rules: Mapping[str, Rule]
) -> tuple[list[Finding], list[Finding]]:
    """At most `limit` findings, the most severe and precise first; both lists in source order."""
    if len(shown) <= limit:
        return shown, []

    def importance(item: tuple[int, Finding]) -> tuple[int, int, int]:
        position, f = item
        r = rules.get(f.code)
        return (
            LEVEL_RANK.get(r.level if r else "warning", 1),
            PRECISION_RANK.get(r.precision if r else "low", 3),
            position,
        )

    ranked = sorted(enumerate(shown), key=importance)
    kept = sorted(ranked[: max(limit, 0)])
    dropped = sorted(ranked[max(limit, 0):])
    return [f for _, f in kept], [f for _, f in dropped]


def _count_by_code(findings: Iterable[Finding]) -> str:
    counts: dict[str, int] = {}
    for f in findings:
        counts[f.code] = counts.get(f.code, 0) + 1
    return ", ".join(f"{n} {code}" for code, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def build_sarif(
    findings: Iterable[Finding],
    options: SarifOptions | None = None,
    rules: Sequence[Rule] | None = None,
    warn: Warn | None = None,
) -> dict[str, Any]:
    """One SARIF log, as JSON data, with exactly one run for `findings`."""
    opts = options or SarifOptions()
    rules = list(rules) if rules is not None else reported_rules()
    by_code = {r.code: r for r in rules}
    everything = sorted(findings, key=Finding.sort_key)
    # Fingerprints count over all findings, suppressed or not, so they do not shift when a noqa is added.
    fingerprints = dict(zip(map(id, everything), toollint_fingerprints(everything, opts.root)))
    shown = [f for f in everything if opts.include_suppressed or not f.suppressed]
    failures = [f for f in everything if f.code in FAILURE_CODES]
    shown, dropped = _keep_most_important(shown, opts.max_results, by_code)
    hashed_upto: dict[str, int] = {}
    for f in shown:
        hashed_upto[f.path] = max(hashed_upto.get(f.path, 0), f.line)
    files = _Files(opts.sources, opts.root, hashed_upto)

    notifications = [_notification(f, files) for f in failures]
    if dropped:
        message = (
            f"{len(dropped)} of {len(shown) + len(dropped)} results left out of the SARIF file "
            f"({_count_by_code(dropped)}): "
            f"GitHub code scanning accepts at most {opts.max_results:,} per run; "
            "the ones kept are the most severe, then the most precise"
        )
        if warn is not None:
            warn(message)
        notifications.append({"level": "warning", "message": {"text": message}})

    rule_index = {r.code: i for i, r in enumerate(rules)}
    rule_level = {r.code: r.level for r in rules}
    results = [_result(f, fingerprints[id(f)], rule_index, rule_level, opts, files) for f in shown]

    root = (opts.root or Path.cwd()).resolve()
    invocation: dict[str, Any] = {"executionSuccessful": not failures}
    if notifications:
        invocation["toolExecutionNotifications"] = notifications
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "toollint",
                "version": __version__,
                "semanticVersion": __version__,
                "informationUri": docs_uri("method.md"),  # the shipped docs: no public site yet
                "rules": [rule_descriptor(r) for r in rules],
            }
        },
        "invocations": [invocation],
        "originalUriBaseIds": {SRCROOT: {"uri": root.as_uri().rstrip("/") + "/"}},
        "columnKind": "utf16CodeUnits",
        "results": results,
    }
    if opts.category:
        # GitHub reads the category as the part of the id up to its last "/".
        category = opts.category if opts.category.endswith("/") else opts.category + "/"
        run["automationDetails"] = {"id": category}
    return {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}


def json_text(data: Any) -> str:
    """Compact JSON that any UTF-8 writer accepts: a string holding a lone surrogate (an undecodable
    file-name byte in a property) is escaped, never left to fail the write."""
    # Compact: json's C encoder only runs without `indent`, and GitHub caps uploads by size.
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(_printable_data(data), ensure_ascii=False, separators=(",", ":"), default=str)
    return text


def _printable_data(value: Any) -> Any:
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, Mapping):
        return {printable(str(k)): _printable_data(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_printable_data(v) for v in value]
    return value


def render_sarif(
    findings: Iterable[Finding],
    options: SarifOptions | None = None,
    rules: Sequence[Rule] | None = None,
    warn: Warn | None = None,
) -> str:
    # The log is tens of thousands of small acyclic objects: the cyclic GC would only rescan them
    # (a quarter of the time at 5,000 results), so it is paused while they are built, as in the engine.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return json_text(build_sarif(findings, options, rules, warn))
    finally:
        if was_enabled:
            gc.enable()


def write_sarif(
    out: IO[str],
    findings: Iterable[Finding],
    options: SarifOptions | None = None,
    rules: Sequence[Rule] | None = None,
    warn: Warn | None = None,
) -> None:
    out.write(render_sarif(findings, options, rules, warn))
    out.write("\n")


def write_report(report: Report, stream: IO[str]) -> None:
    """`--output-format sarif` / `--sarif-output`: every finding (the writer leaves out suppressed
    ones unless asked to keep them)."""
    options = SarifOptions(
        root=report.root,
        category=report.sarif_category,
        include_suppressed=report.sarif_include_suppressed,
        unsafe_fixes=report.unsafe_fixes,
    )
    write_sarif(stream, report.findings, options, warn=report.warn)
