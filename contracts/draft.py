"""`toollint contracts draft TOOLREF`: a draft contract from a tool's docstring and signature.

The tool is read by AST, never imported. Every claim the docstring makes becomes one `_draft` clause
with its provenance line and verbatim quote filled in and the placeholder predicate `True`; every
parameter becomes an `arg.*_draft` clause whose `falsy_legal` is inferred from its annotation. A
person writes the predicates (and drops the `_draft` suffix); nothing here invents them.

Recognised docstring shapes: the summary sentence; reST fields (`:param x:`, `:raises E:`,
`:return:`/`:returns:`); Google sections (`Args:`, `Checks:`, `Raises:`, `Returns:`); one-line
inline labels (`Checks: A, B.`, `Logic: ...`, `Warning: ...`) and sentences ("Requires ...",
"Raises E if ..."). Each condition of a check or a declared error is its own `pre.*` draft.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from toollint.contracts.validator import SourceResolver, depends_of, normalize_space, tool_parameters

FALSY_LEGAL_TYPES = {"int", "float", "bool", "complex", "Decimal"}
SECTION = re.compile(
    r"^(Args|Arguments|Parameters|Checks|Raises|Returns|Return|Yields|Notes?|Examples?)\s*:\s*$"
)
PARAM = re.compile(r"^:param\s+(?:[\w\[\], |.]+\s+)?(\w+)\s*:\s*(.*)$")
RAISES = re.compile(r"^:raises?\s+([\w.]+)\s*:\s*(.*)$")
RETURNS = re.compile(r"^:returns?\s*:\s*(.*)$")
GOOGLE_ARG = re.compile(r"^(\w+)\s*(?:\([^)]*\))?\s*:\s*(.+)$")
ERROR_WORDS = re.compile(r"not found|error|fail|invalid|denied|unknown|\b40[0-9]\b", re.IGNORECASE)
GOOGLE_RAISE = re.compile(r"^([A-Z]\w*(?:\.\w+)*)\s*:\s*(.+)$")
# "Checks: Line status must be Active, Customer owns the line." / "Logic: ..." / "Warning: ..." on one line.
INLINE_LABEL = re.compile(
    r"^(Checks?|Requires?|Preconditions?|Logic|Effects?|Warnings?|Notes?)\s*:\s*(\S.*)$", re.IGNORECASE
)
REQUIRES = re.compile(r"^Requires\s+(?!:)(.+)$")  # "Requires the line to be active."
RAISES_IF = re.compile(r"^Raises\s+([A-Z]\w*(?:\.\w+)*)\s+(?:if|when)\s+(.+)$")  # "Raises ValueError if ..."
# Where one condition ends and the next begins (see `split_conditions`).
CONDITION_BREAK = re.compile(r"(?i:,?\s+or\s+if\s+)|;\s*|(?<=[a-z0-9)])\.\s+(?=[A-Z])|,\s+(?=[A-Z])")


class DraftError(Exception):
    """The tool cannot be drafted (not found, not parseable); the message is one plain line."""


@dataclass
class DraftClause:
    id: str
    line: int
    quote: str
    kind: str  # provenance kind: docstring / signature / return
    extra: dict[str, object] = field(default_factory=dict)
    predicate: bool = True


@dataclass
class ToolSource:
    path: Path  # the .py file
    rel: str  # path relative to the package dir, as the contract cites it
    package: str
    module: str
    qualname: str
    text: str
    top_level: bool = False  # a module directly in a search dir, no package: `file` is its own name


def locate_tool(tool_ref: str, search: list[Path], resolver: SourceResolver | None = None) -> ToolSource:
    """Find the file defining `pkg.mod:qualname` under the search dirs (or the package's install dir)."""
    module, sep, qualname = tool_ref.partition(":")
    if not sep or not module or not qualname:
        raise DraftError(f"tool reference {tool_ref!r} must look like package.module:function")
    parts = module.split(".")
    package = parts[0]
    rel_parts = parts[1:]
    candidates: list[tuple[Path, Path]] = []  # (the dir `file` is cited relative to, file)
    for base in search:
        for pkg_dir in ((base / package), base) if base.name == package else ((base / package),):
            module_file = pkg_dir.joinpath(*rel_parts).with_suffix(".py")
            # `tools:save` with `--src DIR` may name DIR/tools.py, a top-level module: no package dir
            candidates.append((pkg_dir if rel_parts else module_file.parent, module_file))
            candidates.append((pkg_dir, pkg_dir.joinpath(*rel_parts, "__init__.py")))
    if resolver is not None and not search:
        mapped_dir = resolver.package_dir(package)
        if mapped_dir is not None:
            candidates.append((mapped_dir, mapped_dir.joinpath(*rel_parts).with_suffix(".py")))
            candidates.append((mapped_dir, mapped_dir.joinpath(*rel_parts, "__init__.py")))
    for pkg_dir, file in candidates:
        if file.is_file():
            try:
                text = file.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                raise DraftError(f"cannot read {file}: {exc}") from None
            return ToolSource(file, file.relative_to(pkg_dir).as_posix(), package, module, qualname, text,
                              top_level=not rel_parts and file.name != "__init__.py")
    where = ", ".join(str(s) for s in search) or f"the installed {package!r} package"
    raise DraftError(f"module {module!r} not found under {where} (pass --src DIR)")


def draft_contract(tool_ref: str, search: list[Path] | None = None, resolver: SourceResolver | None = None,
                   benchmark: str | None = None) -> str:
    """The YAML text of a draft contract for `tool_ref`."""
    src = locate_tool(tool_ref, list(search or []), resolver or SourceResolver())
    try:
        tree = ast.parse(src.text)
    except SyntaxError as exc:
        raise DraftError(f"{src.path}:{exc.lineno}: does not parse: {exc.msg}") from None
    from toollint.contracts.validator import SourceFile

    fn = SourceFile(str(src.path), src.text).function(src.qualname)
    if fn is None:
        raise DraftError(f"{src.qualname!r} is not defined in {src.path}")
    lines = src.text.splitlines()
    clauses = _docstring_clauses(fn, lines)
    clauses += _arg_clauses(fn, lines, tree)
    if not any(c.id.startswith("success") for c in clauses):
        clauses += _return_clauses(fn, lines)
    adapter = _adapter_hints(src, fn, tree)
    return _render(tool_ref, benchmark or src.package, src, adapter, clauses)


def _slug(text: str, fallback: str) -> str:
    words = re.findall(r"[a-z0-9]+", text.lower())
    stop = {
        "the",
        "a",
        "an",
        "of",
        "to",
        "is",
        "be",
        "in",
        "for",
        "and",
        "with",
        "given",
        "this",
        "that",
        "if",
    }
    kept = [w for w in words if w not in stop][:4]
    slug = "_".join(kept)
    if not slug or not slug[0].isalpha():
        slug = fallback
    return slug


def _docstring_lines(fn: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[str]) -> list[tuple[int, str]]:
    """(line number, stripped text) of each non-empty docstring line, quotes removed."""
    body = fn.body
    if not (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)):
        return []
    start, end = body[0].lineno, body[0].end_lineno or body[0].lineno
    out = []
    for n in range(start, end + 1):
        text = lines[n - 1].strip()
        for q in ('"""', "'''"):
            text = text.replace(q, "")
        text = re.sub(r'^[rRuU]?(?=")', "", text).strip()
        if text:
            out.append((n, text))
    return out


def split_conditions(text: str) -> list[str]:
    """The separate conditions of one docstring item, each verbatim from it.

    "Line status must be Active, Customer owns the line." is two checks (a comma before a capital
    starts a new one; so do `;` and a sentence end); "If customer or line not found, or if line is
    not active." is two error conditions (", or if"). A leading "If " is dropped; a comma inside one
    condition ("customer, line, or plan not found") is kept.
    """
    parts = [p.strip() for p in CONDITION_BREAK.split(text) if p and p.strip()]
    out = []
    for part in parts:
        part = re.sub(r"^(?:if|when)\s+", "", part, flags=re.IGNORECASE)
        if re.search(r"[A-Za-z]", part):
            out.append(part)
    return out or [text]


def _docstring_clauses(fn: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[str]) -> list[DraftClause]:
    """One draft per claim, in docstring order.

    Preconditions come from a `Checks:`/`Requires:` section or inline label (each condition of an
    item its own `pre.*`, see `split_conditions`), a "Requires ..." sentence, a "Raises E if ..."
    sentence, and each condition of a `Raises:`/`:raises E:` entry (with `on_violation.raises`).
    A `Logic:` label is an effect; a `Warning:`/`Note:` paragraph is read as commentary, not a claim.
    When every declared error names one exception type, the checks' drafts declare it too.
    """
    out: list[DraftClause] = []
    used: set[str] = set()

    def add(prefix: str, text: str, line: int, fallback: str, **extra: object) -> None:
        base = f"{prefix}.{_slug(text, fallback)}" if prefix != "success" else "success"
        cid, n = f"{base}_draft", 2
        while cid in used:
            cid, n = f"{base}_{n}_draft", n + 1
        used.add(cid)
        out.append(DraftClause(cid, line, text, "docstring", dict(extra)))

    def checks(text: str, line: int, i: int, raises: str | None = None) -> None:
        for k, part in enumerate(split_conditions(text)):
            violation: dict[str, object] = {"raises": raises} if raises else {"state": "unchanged"}
            add("pre", part, line, f"check_{i}_{k}" if k else f"check_{i}", on_violation=violation)

    doc = _docstring_lines(fn, lines)
    section = "summary"
    previous = 0
    for i, (line, text) in enumerate(doc):
        if previous and line > previous + 1 and section in ("check", "note", "logic"):
            section = "rest"  # a blank line ends an inline-labelled paragraph
        previous = line
        m = SECTION.match(text)
        if m:
            section = m.group(1).lower().rstrip("s")
            continue
        if PARAM.match(text):
            section = "param"
            continue  # parameter lines are quoted by their arg clauses
        if (r := RAISES.match(text)) is not None:
            for k, part in enumerate(split_conditions(r.group(2) or r.group(1))):
                add("pre", part, line, f"raises_{k}" if k else "raises", on_violation={"raises": r.group(1)})
            section = "rest"
            continue
        if RETURNS.match(text):
            if not any(c.id.startswith("success") for c in out):
                add("success", text, line, "success")
            section = "rest"
            continue
        if (label := INLINE_LABEL.match(text)) is not None:
            kind, rest = label.group(1).lower(), label.group(2)
            if kind.startswith(("check", "require", "precondition")):
                checks(rest, line, i)
                section = "check"
            elif kind.startswith(("logic", "effect")):
                add("eff", rest, line, f"effect_{i + 1}")
                section = "logic"
            else:  # Warning / Note: what the tool does not do is no claim it makes
                section = "note"
            continue
        if section not in ("raise", "arg", "argument", "parameter") and (
                (req := REQUIRES.match(text)) is not None):
            checks(req.group(1), line, i)
            continue
        if section not in ("raise", "arg", "argument", "parameter") and (
                (rif := RAISES_IF.match(text)) is not None):
            for k, part in enumerate(split_conditions(rif.group(2))):
                add(
                    "pre", part, line, f"raises_{k}" if k else "raises", on_violation={"raises": rif.group(1)}
                )
            continue
        item = text.lstrip("-*• ").strip()
        if section == "summary":
            if i == 0:
                add("eff", item, line, "effect")
            else:
                add("eff", item, line, f"effect_{i + 1}")
        elif section == "param":
            # A sentence continuing a parameter's description is often a behavioural claim
            # ("The end time is automatically set to be two hours after the start").
            add("eff", item, line, f"effect_{i + 1}")
        elif section == "logic":
            add("eff", item, line, f"effect_{i + 1}")
        elif section == "check":
            checks(item, line, i)
        elif section == "raise":
            g = GOOGLE_RAISE.match(item)
            if g:
                for k, part in enumerate(split_conditions(g.group(2))):
                    add("pre", part, line, f"raises_{i}_{k}" if k else f"raises_{i}",
                        on_violation={"raises": g.group(1)})
        elif section in ("return", "yield") and not any(c.id.startswith("success") for c in out):
            add("success", item, line, "success")
    declared = set()
    for c in out:
        violation = c.extra.get("on_violation")
        if isinstance(violation, dict) and "raises" in violation:
            declared.add(violation["raises"])
    if len(declared) == 1:
        for c in out:
            if c.extra.get("on_violation") == {"state": "unchanged"}:
                c.extra["on_violation"] = {"raises": next(iter(declared)), "state": "unchanged"}
    return out


def _param_doc_lines(
    fn: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[str]
) -> dict[str, tuple[int, str]]:
    docs: dict[str, tuple[int, str]] = {}
    section = ""
    for line, text in _docstring_lines(fn, lines):
        m = SECTION.match(text)
        if m:
            section = m.group(1).lower()
            continue
        p = PARAM.match(text)
        if p:
            docs.setdefault(p.group(1), (line, text))
        elif section in ("args", "arguments", "parameters"):
            g = GOOGLE_ARG.match(text)
            if g:
                docs.setdefault(g.group(1), (line, text))
    return docs


def falsy_legal(annotation: ast.expr | None) -> bool:
    """Whether the annotated type admits a meaningful falsy value (0, 0.0, False)."""
    if annotation is None:
        return False
    names = {n.id for n in ast.walk(annotation) if isinstance(n, ast.Name)}
    names |= {n.attr for n in ast.walk(annotation) if isinstance(n, ast.Attribute)}
    return bool(names & FALSY_LEGAL_TYPES)


def _arg_clauses(
    fn: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[str], tree: ast.Module
) -> list[DraftClause]:
    docs = _param_doc_lines(fn, lines)
    out = []
    for name, arg in tool_parameters(fn, tree).items():
        legal = falsy_legal(arg.annotation)
        if name in docs:
            line, text = docs[name]
            kind = "docstring"
        else:
            line = arg.lineno
            text = lines[line - 1][arg.col_offset: arg.end_col_offset].strip() or name
            kind = "signature"
        out.append(
            DraftClause(f"arg.{name}_draft", line, text, kind, {"falsy_legal": legal}, predicate=False)
        )
    return out


def _return_clauses(fn: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[str]) -> list[DraftClause]:
    """A success clause citing the first return of a literal message, when the docstring has none."""
    for node in ast.walk(fn):
        if isinstance(node, ast.Return) and node.value is not None and isinstance(
                node.value, (ast.Constant, ast.JoinedStr, ast.Dict)):
            for n in range(node.lineno, (node.end_lineno or node.lineno) + 1):
                text = lines[n - 1].strip()
                if ERROR_WORDS.search(text):
                    break  # an error message is not the success signal
                if re.search(r"[A-Za-z]{3,}", text.removeprefix("return")):
                    return [DraftClause("success_draft", n, text.removeprefix("return ").strip(), "return")]
    return []


def _adapter_hints(
    src: ToolSource, fn: ast.FunctionDef | ast.AsyncFunctionDef, tree: ast.Module
) -> dict[str, object]:
    """The `adapter:` block: an adapter that exists (the profile's whose package the tool is in, else
    the generic `toolkit`), the profile's own hints (e.g. the variant registering the tool), and
    the injected state parameters."""
    from toollint.profiles import profile_for_package

    profile = profile_for_package(src.package)
    adapter = profile.name if profile is not None and profile.adapter_file is not None else "toolkit"
    hints: dict[str, object] = {"name": adapter}
    if profile is not None and profile.has_part("draft_hints"):
        hints.update(profile.draft_hinter()(src.path, src.rel, fn.name))
    depends = depends_of(fn, tree)
    if depends:
        hints["depends"] = depends
        hints["frame"] = sorted(set(depends.values()))
    return hints


def _scalar(value: object) -> str:
    """A YAML scalar: JSON's double-quoted strings are valid YAML."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    return json.dumps(str(value), ensure_ascii=False)


def _render(tool_ref: str, benchmark: str, src: ToolSource, adapter: dict[str, object],
            clauses: list[DraftClause]) -> str:
    out = [
        f"# Draft contract for {tool_ref}, generated by `toollint contracts draft`.",
        "# Every clause is a draft (predicate True, excluded from counts). For each: write the predicate,",
        "# drop the `_draft` suffix and `draft: true`, and check the tier and falsy_legal.",
        f"tool: {tool_ref}",
        f"benchmark: {_scalar(benchmark)}",
        "source:",
        # a top-level module is no package: its file is found beside the contract or in the roots
        *([] if src.top_level else [f"  package: {_scalar(src.package)}"]),
        f"  file: {_scalar(src.rel)}",
        "adapter:",
    ]
    for key, value in adapter.items():
        if isinstance(value, dict):
            inner = ", ".join(f"{k}: {_scalar(v)}" for k, v in value.items())
            out.append(f"  {key}: {{{inner}}}")
        elif isinstance(value, list):
            out.append(f"  {key}: [{', '.join(_scalar(v) for v in value)}]")
        else:
            out.append(f"  {key}: {_scalar(value)}")
    out.append("clauses:")
    for c in clauses:
        out.append(f"  - id: {c.id}")
        out.append("    draft: true")
        if c.predicate:
            out.append("    predicate: 'True'")
        for key, value in c.extra.items():
            if isinstance(value, dict):
                inner = ", ".join(f"{k}: {_scalar(v)}" for k, v in value.items())
                out.append(f"    {key}: {{{inner}}}")
            else:
                out.append(f"    {key}: {_scalar(value)}")
        out += [
            "    provenance:",
            "      tier: agent-visible",
            f"      kind: {c.kind}",
            f"      line: {c.line}",
            f"      quote: {_scalar(normalize_space(c.quote))}",
        ]
    return "\n".join(out) + "\n"
