"""Is a falsy value (0, False, "", []) a legal value of a tool's parameter? Decided from evidence.

TL104's premise is that the value a truth test drops is one an agent may legitimately send. The type
alone (`str` admits "") is weak evidence: the same premise calls an empty IBAN or date a legal update.
So the premise is read from the benchmark, strongest evidence first:

evidence; kind (confidence); example:
- the signature's default or `Literal[...]` holds the value; schema (high); `recurring: bool = False`
- the benchmark's own state or task data holds it for that field; data (high); `recurring: false`
  in environment.yaml
- the module writes it to a field of that name elsewhere; code (high); `txn.recurring = False`
- the signature takes a `bool` (False is half of it); schema (high); `enabled: bool`
- the parameter's docstring line speaks of it; docstring (medium); `subject: may be empty`
- the annotation admits it, nothing more; type (low); `subject: str | None`

and it is *not* legal (no premise, no finding) when the tool or a helper refuses it out loud (`if
not x: raise`, a `validate_*(x)` call on a string); a declared format (a date, an IBAN, "format
YYYY-MM-DD") leaves only the type's low evidence, said so in the premise.

The data is found by walking up from the linted file to its project (the outermost package, or the
folder above it holding `pyproject.toml`/`setup.py`/`.git`) and reading its JSON and YAML files once
per process, only when a TL104 finding needs a premise.
"""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path

from toollint.analysis.discovery import ToolInfo
from toollint.analysis.paths import function_nodes
from toollint.analysis.summary import ParamInfo, call_name
from toollint.analysis.walk import walk_nodes
from toollint.evidence import EvidenceKind, Premise
from toollint.memos import file_memo

# A name or docstring that declares a format the empty value cannot have.
FORMAT_NAME = re.compile(
    r"(?:^|_)(?:date|time|datetime|timestamp|iban|email|phone|url|uri|uuid|currency|unit|zip|postcode|isbn)$",
    re.IGNORECASE,
)
FORMAT_DOC = re.compile(
    r"\bformat\b|YYYY|ISO[ -]?8601|\bIBAN\b|\bone of\b|\bmust be (?:a|an|one|in)\b", re.IGNORECASE
)
# Docstring words that speak of the falsy value itself as something one may send.
LEGAL_DOC = {
    '""': re.compile(r"\bempty\b|\bblank\b|\bclear(?:s|ed)?\b|\"\"|''", re.IGNORECASE),
    "0": re.compile(r"\b0\b|\bzero\b", re.IGNORECASE),
    "0.0": re.compile(r"\b0(?:\.0)?\b|\bzero\b|\bfree\b", re.IGNORECASE),
    "False": re.compile(r"\bfalse\b|\bwhether\b|\bturn(?:s|ed)? off\b|\bdisabl", re.IGNORECASE),
    "[]": re.compile(r"\bempty\b|\bclear(?:s|ed)?\b|\bnone\b", re.IGNORECASE),
    "{}": re.compile(r"\bempty\b|\bclear(?:s|ed)?\b", re.IGNORECASE),
}
VALIDATOR_CALL = re.compile(r"^_?(?:validate|check|ensure|assert|require|verify)_?", re.IGNORECASE)
PROJECT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")
DATA_SUFFIXES = (".json", ".jsonl", ".yaml", ".yml")
SKIP_DIRS = frozenset(
    {".git", ".venv", "venv", "node_modules", "__pycache__", ".tox", ".mypy_cache", "site-packages"}
)
MAX_DATA_FILE = 8 * 1024 * 1024  # bytes: larger files (whole task dumps) are not read
MAX_DATA_FILES = 4000
MAX_DIRS = 5000  # folders walked at most: a loose file in a home directory must not walk all of it
MAX_DEPTH = 8
# `"key": ""` in JSON, `key: ''` in YAML: a field holding a falsy literal.
FALSY_FIELD = re.compile(
    r"""["']?([A-Za-z_]\w*)["']?\s*:\s*(""|''|0\.0|0|false|False|\[\]|\{\})\s*(?=[,}\]\r\n]|$)""",
    re.MULTILINE,
)
DATA_LITERAL = {
    '""': '""',
    "''": '""',
    "0": "0",
    "0.0": "0.0",
    "false": "False",
    "False": "False",
    "[]": "[]",
    "{}": "{}",
}
SAME_VALUE = {"0": {"0", "0.0"}, "0.0": {"0", "0.0"}}


def falsy_premise(
    tool: ToolInfo, param: ParamInfo, value: str, tree: ast.Module, path: str
) -> Premise | None:
    """The premise that `value` (source text: "0", '""', "False") is legal for `param`, from the strongest
    evidence there is; None when the tool or a helper refuses the value, so it is not legal at all."""
    name = param.name
    claim = f"{value} is legal for {name}"
    if refused(tool, name, value):
        return None
    if isinstance(param.default, ast.Constant) and param.default.value is not None \
            and _text(param.default.value) in SAME_VALUE.get(value, {value}):
        return Premise(claim, EvidenceKind.SCHEMA, f"its declared default is {ast.unparse(param.default)}")
    if _literal_allows(param.annotation, value):
        return Premise(claim, EvidenceKind.SCHEMA, f"its `{ast.unparse(param.annotation)}` lists it")  # type: ignore[arg-type]
    seen = data_source(path, name, value)
    if seen:
        return Premise(claim, EvidenceKind.DATA, f"{seen} has {name}={value}")
    written = written_elsewhere(tree, tool.node, name, value)
    if written:
        return Premise(claim, EvidenceKind.CODE, f"line {written} writes {name}={value}")
    doc = _doc_line(tool.docstring, name)
    if doc and LEGAL_DOC.get(value, re.compile(r"$^")).search(doc.split(name, 1)[-1]):
        return Premise(claim, EvidenceKind.DOCSTRING, f"its docstring says {doc.strip()!r}")
    if value == "False":
        # A `bool` has two values: a signature that takes one declares False a value to send.
        return Premise(claim, EvidenceKind.SCHEMA, "its signature takes a `bool`, whose other value is True")
    typed = (
        f"only its annotation `{ast.unparse(param.annotation)}` admits it"
        if param.annotation is not None
        else "only its default's type admits it"
    )
    if value == '""' and (FORMAT_NAME.search(name) or (doc and FORMAT_DOC.search(doc))):
        typed += "; its name or docstring declares a format the empty value does not have"
    return Premise(claim, EvidenceKind.TYPE, typed)


def _text(value: object) -> str:
    return '""' if value == "" else repr(value)


def _literal_allows(ann: ast.expr | None, value: str) -> bool:
    """`Literal["", "a"]` (or `Optional[Literal[...]]`) lists the value."""
    if ann is None:
        return False
    for node in walk_nodes(ann):
        if isinstance(node, ast.Subscript) and isinstance(node.value, (ast.Name, ast.Attribute)) \
                and (node.value.id if isinstance(node.value, ast.Name) else node.value.attr) == "Literal":
            items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            if any(
                isinstance(i, ast.Constant) and _text(i.value) in SAME_VALUE.get(value, {value})
                for i in items
            ):
                return True
    return False


def _doc_line(doc: str, name: str) -> str:
    """The docstring line that documents `name` (`:param name:`, `name: ...`, `name (str): ...`)."""
    pattern = re.compile(rf"(?:^|[\s(]|:param\s+|`){re.escape(name)}\b\s*(?:\([^)]*\))?\s*:")
    return next((line for line in doc.splitlines() if pattern.search(line)), "")


def refused(tool: ToolInfo, name: str, value: str) -> bool:
    """The tool refuses the value out loud: `if not name: raise`, `if name == "": raise`, or it hands a
    string to a validator (`validate_phone_number(name)`), which refuses the empty string."""
    for node in function_nodes(tool.node):
        if (
            isinstance(node, ast.If)
            and node.body
            and isinstance(node.body[-1], ast.Raise)
            and _tests_empty(node.test, name)
        ):
            return True
        if (
            value == '""'
            and isinstance(node, ast.Call)
            and VALIDATOR_CALL.match(call_name(node).rsplit(".", 1)[-1])
            and any(
                isinstance(a, ast.Name) and a.id == name
                for a in [*node.args, *(k.value for k in node.keywords)]
            )
        ):
            return True
    return False


def _tests_empty(test: ast.expr, name: str) -> bool:
    """`not name`, `name == ""`, `len(name) == 0`, alone or as one side of an `or`."""
    parts = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or) else [test]
    for p in parts:
        if isinstance(p, ast.UnaryOp) and isinstance(p.op, ast.Not) and isinstance(p.operand, ast.Name) \
                and p.operand.id == name:
            return True
        if isinstance(p, ast.Compare) and len(p.ops) == 1 and isinstance(p.ops[0], ast.Eq):
            left, right = p.left, p.comparators[0]
            if isinstance(left, ast.Call) and call_name(left) == "len" and left.args:
                left = left.args[0]
                right_ok = isinstance(right, ast.Constant) and right.value == 0
            else:
                right_ok = (
                    isinstance(right, ast.Constant) and right.value in ("", 0) and right.value is not False
                )
            if isinstance(left, ast.Name) and left.id == name and right_ok:
                return True
    return False


def written_elsewhere(tree: ast.Module, tool: ast.AST, name: str, value: str) -> int | None:
    """The line of a write of the value to a field called `name` outside the tool: `x.name = False`,
    `x["name"] = ""`, `{"name": 0}`, `Record(name=False)`."""
    accepted = SAME_VALUE.get(value, {value})

    def falsy(node: ast.expr | None) -> bool:
        if isinstance(node, (ast.List, ast.Dict)) and not (
            node.keys if isinstance(node, ast.Dict) else node.elts
        ):
            return ("[]" if isinstance(node, ast.List) else "{}") in accepted
        return isinstance(node, ast.Constant) and node.value is not None and _text(node.value) in accepted

    own = {id(n) for n in walk_nodes(tool)}
    for node in ast.walk(tree):
        if id(node) in own:
            continue
        if isinstance(node, ast.Assign) and falsy(node.value):
            for t in node.targets:
                if (isinstance(t, ast.Attribute) and t.attr == name) or (
                    isinstance(t, ast.Subscript)
                    and isinstance(t.slice, ast.Constant)
                    and t.slice.value == name
                ):
                    return node.lineno
        elif isinstance(node, ast.Dict):
            for k, v in zip(node.keys, node.values):
                if isinstance(k, ast.Constant) and k.value == name and falsy(v):
                    return node.lineno
        elif isinstance(node, ast.Call) and any(k.arg == name and falsy(k.value) for k in node.keywords):
            return node.lineno
    return None


# -- the benchmark's data -----------------------------------------------------------------------------


def data_source(path: str, name: str, value: str) -> str | None:
    """A data file of the linted file's project that holds `name` with the value (relative path), if any."""
    if not path or not os.path.isfile(path):
        return None
    root = project_root(Path(path).resolve().parent)
    files = data_index(root).get(name, {})
    for literal in sorted(SAME_VALUE.get(value, {value})):
        if literal in files:
            return files[literal]
    return None


def project_root(start: Path) -> Path:
    """The outermost package holding `start`, or a folder at most three above it that marks a project;
    for a file outside any package, its own folder."""
    top = start
    if not (top / "__init__.py").is_file():
        return top  # a loose file: its data sits beside it
    while (top.parent / "__init__.py").is_file():
        top = top.parent
    for above in [top, *list(top.parents)[:3]]:
        if any((above / m).exists() for m in PROJECT_MARKERS):
            return above
    return top


@file_memo(16)
def data_index(root: Path) -> dict[str, dict[str, str]]:
    """field name -> {falsy literal -> the first data file (relative to root) holding it}."""
    index: dict[str, dict[str, str]] = {}
    count = folders = 0
    for folder, dirs, files in os.walk(root):
        folders += 1
        if folders > MAX_DIRS:
            return index
        deep = len(Path(folder).relative_to(root).parts) >= MAX_DEPTH
        dirs[:] = [] if deep else sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
        for file in sorted(files):
            if not file.endswith(DATA_SUFFIXES):
                continue
            count += 1
            if count > MAX_DATA_FILES:
                return index
            full = Path(folder) / file
            try:
                if full.stat().st_size > MAX_DATA_FILE:
                    continue
                text = full.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            rel = full.relative_to(root).as_posix()
            for match in FALSY_FIELD.finditer(text):
                index.setdefault(match.group(1), {}).setdefault(DATA_LITERAL[match.group(2)], rel)
    return index
