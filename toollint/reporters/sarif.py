"""SARIF 2.1.0 output that GitHub code scanning can use as is.

The log is built from `sarif_om` objects and written by `to_json_obj`, a small walker over their attrs
fields that takes each JSON name from the field's `schema_property_name` metadata. The usual
`jschema_to_python` serialiser is not used: it drops every value equal to its schema default (so
`level: "warning"` vanishes) and is slow (1.2 s for 5,000 results in the linter-anchors notes).

What GitHub reads and how this module provides it (see docs/integrations.md):
every registered rule in `rules[]` with help rendered from the rule doc; repository-relative URIs
under `%SRCROOT%`; UTF-16 columns; `primaryLocationLineHash` computed exactly as upload-sarif does
plus a `toollint/v1` fingerprint; `executionSuccessful: false` when a file could not be analysed;
suppressed findings left out; at most 5,000 results.
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

import attr
import sarif_om as om

from toollint import __version__
from toollint.fingerprint import FINGERPRINT_KEY, line_hashes, relative_path, toollint_fingerprints
from toollint.model import Finding, Fix
from toollint.registry import Rule, all_rules

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://github.com/toollint/toollint"
SRCROOT = "%SRCROOT%"
MAX_RESULTS = 5000  # GitHub displays at most this many results per run
# Findings that mean a file was not (fully) analysed: the run did not succeed on it.
FAILURE_CODES = frozenset({"TL901", "TL902", "TL903", "TL904"})

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


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
# Serialisation

_SCALARS = frozenset({str, int, float, bool})
_CONVERTERS: dict[type, Callable[[Any], Any]] = {}


def _converter(cls: type) -> Callable[[Any], Any]:
    """A function writing one sarif-om class as a dict, generated once per class for speed.

    Field names come from the `schema_property_name` metadata. sarif-om marks "not set" integers
    with -1 (ruleIndex, rank, index...), so those are skipped; every other default (level "warning",
    kind "fail") is a real value and is written.
    """
    lines = ["def convert(obj):", "    d = obj.__dict__", "    out = {}"]
    value = "v if v.__class__ in SCALARS else (CONVERTERS.get(v.__class__) or walk)(v)"
    for a in attr.fields(cls):
        unset = "v is None"
        if not isinstance(a.default, bool) and a.default in (-1, -1.0):
            unset += " or v == -1"
        lines += [
            f"    v = d[{a.name!r}]",
            f"    if not ({unset}):",
            f"        out[{a.metadata['schema_property_name']!r}] = {value}",
        ]
    lines.append("    return out")
    namespace: dict[str, Any] = {"SCALARS": _SCALARS, "CONVERTERS": _CONVERTERS, "walk": to_json_obj}
    exec(compile("\n".join(lines), f"<sarif {cls.__name__}>", "exec"), namespace)  # noqa: S102
    convert: Callable[[Any], Any] = namespace["convert"]
    return convert


def to_json_obj(value: Any) -> Any:
    """Plain JSON data for a sarif-om object tree; dicts, lists and scalars pass through."""
    cls = value.__class__
    if value is None or cls in _SCALARS:
        return value
    convert = _CONVERTERS.get(cls)
    if convert is not None:
        return convert(value)
    if attr.has(cls):
        convert = _CONVERTERS[cls] = _converter(cls)
        return convert(value)
    if isinstance(value, Mapping):
        return _mapping(value)
    if isinstance(value, (list, tuple, set, frozenset)):
        return _sequence(value)
    if isinstance(value, (str, int, float, bool)):  # subclasses (enums)
        return value
    return str(value)


def _mapping(value: Mapping[Any, Any]) -> dict[str, Any]:
    get = _CONVERTERS.get
    return {
        str(k): v if v.__class__ in _SCALARS else (get(v.__class__) or to_json_obj)(v)
        for k, v in value.items()
    }


def _sequence(value: Iterable[Any]) -> list[Any]:
    get = _CONVERTERS.get
    return [v if v.__class__ in _SCALARS else (get(v.__class__) or to_json_obj)(v) for v in value]


# The common containers skip the attrs and ABC checks above.
_CONVERTERS.update({dict: _mapping, list: _sequence, tuple: _sequence})


# --------------------------------------------------------------------------------------------------
# Positions


def utf16_column(line_text: str | None, col: int) -> int:
    """A 1-based code-point column as a 1-based UTF-16 code-unit column."""
    if line_text is None or col <= 1 or line_text.isascii():
        return max(col, 1)
    prefix = line_text[: col - 1]
    extra = sum(1 for ch in prefix if ord(ch) > 0xFFFF)  # astral characters take two code units
    return col + extra


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
        self._artifacts: dict[str, om.ArtifactLocation] = {}

    def relative(self, path: str) -> str:
        return relative_path(path, self._root)

    def text(self, path: str) -> str | None:
        if path not in self._text:
            if path in self._given:
                self._text[path] = self._given[path]
            else:
                try:
                    self._text[path] = Path(self._cwd, path).read_bytes().decode("utf-8", "replace")
                except OSError:
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

    def artifact(self, path: str) -> om.ArtifactLocation:
        """One shared (never mutated) object per file."""
        loc = self._artifacts.get(path)
        if loc is None:
            rel = self.relative(path)
            if rel.startswith("/"):  # outside the project root: no base id, an absolute file URI
                loc = om.ArtifactLocation(uri=Path(rel).as_uri())
            else:
                loc = om.ArtifactLocation(uri=quote(rel, safe="/"), uri_base_id=SRCROOT)
            self._artifacts[path] = loc
        return loc

    def region(self, path: str, line: int, col: int, end_line: int | None, end_col: int | None) -> om.Region:
        text = self.line(path, line)
        if end_line is None or end_line < line:
            end_line = line
        end_text = text if end_line == line else self.line(path, end_line)
        if end_col is None:  # no end given: the region runs to the end of its last line
            end_col = len(end_text) + 1 if end_text is not None else col
        if end_line == line and end_col < col:
            end_col = col
        return om.Region(
            start_line=line,
            start_column=utf16_column(text, col),
            end_line=end_line,
            end_column=utf16_column(end_text, end_col),
        )

    def location(
        self,
        path: str,
        line: int,
        col: int,
        end_line: int | None,
        end_col: int | None,
        **kw: Any,
    ) -> om.Location:
        physical = om.PhysicalLocation(
            artifact_location=self.artifact(path), region=self.region(path, line, col, end_line, end_col)
        )
        return om.Location(physical_location=physical, **kw)


# --------------------------------------------------------------------------------------------------
# Rules


def _plain_text(markdown: str) -> str:
    """help.text: the rule doc without Markdown syntax that reads badly as plain text."""
    text = re.sub(r"^#+\s*", "", markdown, flags=re.MULTILINE)
    text = re.sub(r"^```\w*\n?", "", text, flags=re.MULTILINE)
    return text.replace("`", "").strip()


def rule_descriptor(r: Rule) -> om.ReportingDescriptor:
    markdown = r.doc.strip() or r.short
    tags = list(dict.fromkeys([*r.tags, r.kind]))[:20]  # GitHub keeps at most 20 tags
    properties: dict[str, Any] = {
        "tags": tags,
        "precision": r.precision,
        "problem.severity": r.severity,
    }
    if r.hint:
        properties["defect-class"] = r.hint
    return om.ReportingDescriptor(
        id=r.code,
        name=r.name,
        short_description=om.MultiformatMessageString(text=r.short),
        full_description=om.MultiformatMessageString(text=r.full),
        help=om.MultiformatMessageString(text=_plain_text(markdown), markdown=markdown),
        help_uri=r.help_uri,
        default_configuration=om.ReportingConfiguration(level=r.level),
        properties=properties,
    )


# --------------------------------------------------------------------------------------------------
# Results


def _fix(fix: Fix, files: _Files) -> om.Fix:
    by_path: dict[str, list[om.Replacement]] = {}
    for e in fix.edits:
        region = files.region(e.path, e.line, e.col, e.end_line, e.end_col)
        by_path.setdefault(e.path, []).append(
            om.Replacement(deleted_region=region, inserted_content=om.ArtifactContent(text=e.replacement))
        )
    return om.Fix(
        description=om.Message(text=fix.description),
        artifact_changes=[
            om.ArtifactChange(artifact_location=files.artifact(p), replacements=reps)
            for p, reps in by_path.items()
        ],
    )


def _result(
    f: Finding,
    fingerprint: str,
    rule_index: Mapping[str, int],
    rule_level: Mapping[str, str],
    opts: SarifOptions,
    files: _Files,
) -> om.Result:
    partial = {FINGERPRINT_KEY: fingerprint}
    line_hash = files.line_hash(f.path, f.line)
    if line_hash is not None:
        partial["primaryLocationLineHash"] = line_hash
    properties: dict[str, Any] = dict(f.properties)
    # Threads of steps (path, line, col, message), e.g. the tracer's tool write -> field -> grader read.
    code_flow = properties.pop("code_flow", None)
    if f.tool:
        properties.setdefault("tool", f.tool)
    result = om.Result(
        rule_id=f.code,
        rule_index=rule_index.get(f.code, -1),
        level=rule_level.get(f.code, "warning"),
        kind="fail",
        message=om.Message(text=f.message),
        locations=[files.location(f.path, f.line, f.col, f.end_line, f.end_col)],
        partial_fingerprints=partial,
        properties=properties or None,
    )
    if f.related:
        result.related_locations = [
            files.location(
                r.path, r.line, r.col, r.end_line, r.end_col, id=i, message=om.Message(text=r.message)
            )
            for i, r in enumerate(f.related, 1)
        ]
    if code_flow:
        result.code_flows = [_code_flow(code_flow, files)]
    if f.fix is not None and f.fix.edits and (f.fix.safe or opts.unsafe_fixes):
        result.fixes = [_fix(f.fix, files)]
    if f.suppressed:
        result.suppressions = [om.Suppression(kind="inSource")]
    return result


def _code_flow(threads: Sequence[Sequence[Mapping[str, Any]]], files: _Files) -> om.CodeFlow:
    return om.CodeFlow(
        thread_flows=[
            om.ThreadFlow(
                locations=[
                    om.ThreadFlowLocation(
                        location=files.location(
                            str(step["path"]),
                            int(step.get("line") or 1),
                            int(step.get("col") or 1),
                            None,
                            None,
                            message=om.Message(text=str(step.get("message", ""))),
                        )
                    )
                    for step in thread
                ]
            )
            for thread in threads
        ]
    )


def _notification(f: Finding, files: _Files) -> om.Notification:
    return om.Notification(
        level="error",
        message=om.Message(text=f"{files.relative(f.path)}: {f.message}"),
        descriptor=om.ReportingDescriptorReference(id=f.code),
        locations=[files.location(f.path, f.line, f.col, f.end_line, f.end_col)],
    )


def build_sarif(
    findings: Iterable[Finding],
    options: SarifOptions | None = None,
    rules: Sequence[Rule] | None = None,
    warn: Callable[[str], None] | None = None,
) -> om.SarifLog:
    """One SARIF log with exactly one run for `findings`."""
    opts = options or SarifOptions()
    rules = list(rules) if rules is not None else all_rules()
    everything = sorted(findings, key=Finding.sort_key)
    # Fingerprints count over all findings, suppressed or not, so they do not shift when a noqa is added.
    fingerprints = dict(zip(map(id, everything), toollint_fingerprints(everything, opts.root)))
    shown = [f for f in everything if opts.include_suppressed or not f.suppressed]
    failures = [f for f in everything if f.code in FAILURE_CODES]
    shown_capped = shown[: opts.max_results]
    hashed_upto: dict[str, int] = {}
    for f in shown_capped:
        hashed_upto[f.path] = max(hashed_upto.get(f.path, 0), f.line)
    files = _Files(opts.sources, opts.root, hashed_upto)

    notifications = [_notification(f, files) for f in failures]
    if len(shown) > opts.max_results:
        message = (
            f"{len(shown)} results; only the first {opts.max_results} are written "
            "(GitHub code scanning displays at most 5,000 per run)"
        )
        if warn is not None:
            warn(message)
        notifications.append(om.Notification(level="warning", message=om.Message(text=message)))
    shown = shown_capped

    rule_index = {r.code: i for i, r in enumerate(rules)}
    rule_level = {r.code: r.level for r in rules}
    results = [_result(f, fingerprints[id(f)], rule_index, rule_level, opts, files) for f in shown]

    root = (opts.root or Path.cwd()).resolve()
    invocation = om.Invocation(
        execution_successful=not failures,
        tool_execution_notifications=notifications or None,
    )
    run = om.Run(
        tool=om.Tool(
            driver=om.ToolComponent(
                name="toollint",
                version=__version__,
                semantic_version=__version__,
                information_uri=INFORMATION_URI,
                rules=[rule_descriptor(r) for r in rules],
            )
        ),
        results=results,
        invocations=[invocation],
        original_uri_base_ids={SRCROOT: om.ArtifactLocation(uri=root.as_uri().rstrip("/") + "/")},
        column_kind="utf16CodeUnits",
    )
    if opts.category:
        # GitHub reads the category as the part of the id up to its last "/".
        category = opts.category if opts.category.endswith("/") else opts.category + "/"
        run.automation_details = om.RunAutomationDetails(id=category)
    return om.SarifLog(version="2.1.0", schema_uri=SCHEMA_URI, runs=[run])


def render_sarif(
    findings: Iterable[Finding],
    options: SarifOptions | None = None,
    rules: Sequence[Rule] | None = None,
    warn: Callable[[str], None] | None = None,
) -> str:
    # The log is tens of thousands of small acyclic objects: the cyclic GC would only rescan them
    # (a quarter of the time at 5,000 results), so it is paused while they are built, as in the engine.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        log = to_json_obj(build_sarif(findings, options, rules, warn))
    finally:
        if was_enabled:
            gc.enable()
    # Compact: json's C encoder only runs without `indent`, and GitHub caps uploads by size.
    return json.dumps(log, ensure_ascii=False, separators=(",", ":"))


def write_sarif(
    out: IO[str],
    findings: Iterable[Finding],
    options: SarifOptions | None = None,
    rules: Sequence[Rule] | None = None,
    warn: Callable[[str], None] | None = None,
) -> None:
    out.write(render_sarif(findings, options, rules, warn))
    out.write("\n")
