"""`toollint contracts check`: the eight checks on every contract file, reported as TL3xx findings.

1. the file matches the schema (TL300 YAML, TL301 schema)           -- loader
2. every predicate compiles under the grammar, no free names (TL302) -- loader
3. clause ids unique and well-formed, drafts marked (TL303)          -- loader
4. every provenance quote occurs at the cited file and line (TL304)
5. a cited tool-return line is a `return`/`raise` statement (TL305)
6. the tier agrees with the kind of line cited (TL306); a `derived` clause cites a static finding
   toollint really reports there (the cited file is linted again: an authored clause cannot pass
   for a derived one)
7. a cited prompt template contains the quote somewhere (TL307)
8. the paths a predicate reads exist in the state schema, and `args.x` are parameters (TL308)
plus TL309 when the tool's source file or function cannot be found.

Cited files are resolved relative to the benchmark's installed package dir (found with
`importlib.util.find_spec`, asked of a given `--python` interpreter through the host gateway, or an
explicit `--package-dir NAME=DIR`), the contract's dir and the working tree; `git show
<commit>:<file>` when pinned. State schemas (check 8) come from the contract's benchmark profile
(its `state_schemas` part, asked of `--python`).
"""

from __future__ import annotations

import ast
import dataclasses
import importlib.util
import io
import json
import re
import subprocess
import tokenize
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from toollint.contracts.loader import ContractError, bundled_library_dirs, contract_files, parse_contract
from toollint.contracts.model import (
    AGENT_VISIBLE_KINDS,
    DERIVED,
    MAINTAINER_KINDS,
    Clause,
    Contract,
    Provenance,
)

from toollint.analysis import depends_roots, type_aliases
from toollint.model import Finding
from toollint.profiles import find_profile, profile_for_package
from toollint.profiles.api import GatewayError, Services
from toollint.settings import Settings

NON_PYTHON_KINDS = ("template", "readme", "standard")
LOG_FUNCS = {"print", "debug", "info", "warning", "warn", "error", "exception", "critical", "log", "trace",
             "success"}
LOG_OWNERS = {"logger", "logging", "log", "LOGGER", "_logger", "warnings"}
SCHEMA_CALLS = {"Field", "field", "Parameter", "Argument"}

ProjectPaths = Iterable[Path | str]


# --- the cited source -------------------------------------------------------------------------------


@dataclass
class SourceFile:
    """One cited file: its text, and for Python files what kind of line each line is."""

    display: str
    text: str

    @cached_property
    def lines(self) -> list[str]:
        return self.text.splitlines()

    @cached_property
    def tree(self) -> ast.Module | None:
        try:
            return ast.parse(self.text)
        except (SyntaxError, ValueError):
            return None

    @cached_property
    def _spans(self) -> dict[str, list[tuple[int, int]]]:
        """Line ranges by kind: docstring, return, log, schema, signature."""
        spans: dict[str, list[tuple[int, int]]] = {k: [] for k in ("docstring", "return", "log", "schema",
                                                                    "signature")}
        if self.tree is None:
            return spans
        for node in ast.walk(self.tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                first = node.body[0] if node.body else None
                if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                        and isinstance(first.value.value, str):
                    spans["docstring"].append((first.lineno, first.end_lineno or first.lineno))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
                spans["signature"].append((node.lineno, node.body[0].lineno - 1))
            if isinstance(node, (ast.Return, ast.Raise)):
                spans["return"].append((node.lineno, node.end_lineno or node.lineno))
            if isinstance(node, ast.Call):
                name = _call_name(node.func)
                owner = _call_owner(node.func)
                span = (node.lineno, node.end_lineno or node.lineno)
                if name == "print" or (name in LOG_FUNCS and owner in LOG_OWNERS):
                    spans["log"].append(span)
                elif name in SCHEMA_CALLS:
                    spans["schema"].append(span)
        return spans

    @cached_property
    def comments(self) -> dict[int, str]:
        out: dict[int, str] = {}
        try:
            for tok in tokenize.generate_tokens(io.StringIO(self.text).readline):
                if tok.type == tokenize.COMMENT:
                    out[tok.start[0]] = tok.string
        except (tokenize.TokenError, IndentationError, SyntaxError):
            pass
        return out

    def in_span(self, kind: str, line: int) -> bool:
        return any(a <= line <= b for a, b in self._spans[kind])

    def classify(self, line: int, quote: str) -> str:
        """What the cited text is. A quote inside a comment is a comment even on a code line."""
        comment = self.comments.get(line)
        if comment and normalize_space(quote) in normalize_space(comment):
            return "comment"
        for kind in ("docstring", "log", "return", "schema", "signature"):
            if self.in_span(kind, line):
                return kind
        return "code"

    def quote_at(self, line: int, quote: str) -> bool:
        """The quote starts on `line` (it may run on over the following lines; white space collapsed)."""
        if not 1 <= line <= len(self.lines):
            return False
        if quote in self.lines[line - 1]:
            return True
        want = normalize_space(quote)
        first = normalize_space(self.lines[line - 1])
        joined = first
        for extra in self.lines[line: line + 20]:
            joined = f"{joined} {normalize_space(extra)}"
            at = joined.find(want)
            if at != -1:
                return at < len(first)
            if len(joined) > len(want) + len(first) + 200:
                break
        return False

    def find_quote(self, quote: str) -> int | None:
        for i, text in enumerate(self.lines, 1):
            if quote in text or self.quote_at(i, quote):
                return i
        return None

    def contains(self, quote: str) -> bool:
        return normalize_space(quote) in normalize_space(self.text)

    def function(self, qualname: str) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        if self.tree is None:
            return None
        scope: list[ast.stmt] = self.tree.body
        *classes, name = qualname.split(".")
        for cls in classes:
            found = next((n for n in scope if isinstance(n, ast.ClassDef) and n.name == cls), None)
            if found is None:
                return None
            scope = found.body
        return next(
            (n for n in scope if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name),
            None,
        )


def normalize_space(text: str) -> str:
    return " ".join(text.split())


def _call_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _call_owner(func: ast.expr) -> str | None:
    if isinstance(func, ast.Attribute):
        value = func.value
        if isinstance(value, ast.Name):
            return value.id
        if isinstance(value, ast.Attribute):
            return value.attr
    return None


def tool_parameters(
    fn: ast.FunctionDef | ast.AsyncFunctionDef, tree: ast.Module | None = None
) -> dict[str, ast.arg]:
    """The agent-facing parameters: not self/cls, not injected state (`Annotated[..., Depends(...)]`,
    directly or through a module-level alias such as
    `AnnotatedSlack = Annotated[Slack, Depends("slack")]`)."""
    injected = depends_of(fn, tree)
    out: dict[str, ast.arg] = {}
    for i, a in enumerate([*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]):
        if (i == 0 and a.arg in ("self", "cls")) or a.arg in injected:
            continue
        out[a.arg] = a
    return out


def depends_of(fn: ast.FunctionDef | ast.AsyncFunctionDef, tree: ast.Module | None = None) -> dict[str, str]:
    """Parameter -> environment field for injected-state parameters (`Depends("field")`, aliases
    resolved), as the shared analysis reads them."""
    return depends_roots(fn, type_aliases(tree) if tree is not None else {})


# --- finding the files ------------------------------------------------------------------------------------


@dataclass
class SourceResolver:
    """Finds a cited file: pinned commit, installed package, contract dir, working tree."""

    package_dirs: dict[str, Path] = field(default_factory=dict)
    python: str | None = None  # the benchmark's interpreter, to locate packages not importable here
    roots: list[Path] = field(default_factory=list)
    settings: Settings | None = None  # how a cited file is linted again for a derived clause's claim
    services: Services | None = None  # the host gateway `python` is asked through (the front end's)
    _packages: dict[str, Path | None] = field(default_factory=dict)
    _cache: dict[tuple[str, ...], SourceFile | None] = field(default_factory=dict)
    _findings: dict[tuple[str, str], list[Finding]] = field(default_factory=dict)

    def findings_in(self, source: SourceFile, module: str) -> list[Finding]:
        """The static findings toollint reports on a cited file (linted once per file)."""
        key = (source.display, module)
        if key not in self._findings:
            from toollint.engine import lint_source

            # a derived clause cites a finding whatever its confidence: every premise counts here
            every = dataclasses.replace(self.settings or Settings(), confidence="low")
            result = lint_source(source.text, source.display, every, module)
            self._findings[key] = [f for f in result.findings if f.code.startswith("TL1")]
        return self._findings[key]

    def package_dir(self, package: str) -> Path | None:
        if package in self.package_dirs:
            return self.package_dirs[package]
        if package not in self._packages:
            self._packages[package] = self._locate(package)
        return self._packages[package]

    def _locate(self, package: str) -> Path | None:
        if self.python and self.services is not None:
            try:
                return self.services.locate_package(self.python, package)
            except GatewayError:
                return None
        try:
            spec = importlib.util.find_spec(package)
        except (ImportError, ValueError):
            return None
        if spec is None or not spec.origin or spec.submodule_search_locations is None:
            return None  # not a package (a script of the same name on the path is not the benchmark)
        return Path(spec.origin).parent

    def get(self, contract: Contract, file: str, commit: str | None) -> SourceFile | None:
        key = (str(contract.path.parent), contract.source.package or "", file, commit or "",
               contract.source.repo or "")
        if key not in self._cache:
            self._cache[key] = self._read(contract, file, commit)
        return self._cache[key]

    def _read(self, contract: Contract, file: str, commit: str | None) -> SourceFile | None:
        if commit:
            repo = contract.path.parent / contract.source.repo if contract.source.repo else Path.cwd()
            try:
                out = subprocess.run(
                    ["git", "-C", str(repo), "show", f"{commit}:{file}"],
                    capture_output=True,
                    timeout=60,
                    check=False,
                )
            except (OSError, subprocess.TimeoutExpired):
                return None
            if out.returncode != 0:
                return None
            return SourceFile(f"{commit}:{file}", out.stdout.decode("utf-8", "replace"))
        candidates: list[Path] = []
        if contract.source.package:
            pkg = self.package_dir(contract.source.package)
            if pkg is not None:
                candidates.append(pkg / file)
        candidates += [contract.path.parent / file, *(r / file for r in self.roots), Path.cwd() / file]
        for candidate in candidates:
            if candidate.is_file():
                try:
                    return SourceFile(str(candidate), candidate.read_text(encoding="utf-8"))
                except (OSError, UnicodeDecodeError):
                    return None
        return None


# --- state schemas (check 8) ----------------------------------------------------------------------------

def schema_has_path(schema: Mapping[str, Any], path: str) -> bool:
    """Whether a canonical path (`a.b[*].c`) exists in a JSON Schema (refs, unions and maps followed)."""
    defs = {**schema.get("$defs", {}), **schema.get("definitions", {})}
    segments = re.findall(r"\[\*\]|[^.\[\]]+", path)

    def resolve(node: Mapping[str, Any]) -> list[Mapping[str, Any]]:
        if "$ref" in node:
            target = defs.get(str(node["$ref"]).rsplit("/", 1)[-1])
            return resolve(target) if target is not None else []
        for key in ("anyOf", "oneOf", "allOf"):
            if key in node:
                return [r for sub in node[key] for r in resolve(sub)]
        return [node]

    def walk(nodes: list[Mapping[str, Any]], rest: list[str]) -> bool:
        if not rest:
            return bool(nodes)
        seg, tail = rest[0], rest[1:]
        nxt: list[Mapping[str, Any]] = []
        for node in (r for n in nodes for r in resolve(n)):
            if node == {} or node.get("type") in (None,) and not any(
                    k in node for k in ("properties", "items", "additionalProperties")):
                return True  # an unconstrained value: anything below it may exist
            if seg == "[*]":
                if isinstance(node.get("items"), dict):
                    nxt.append(node["items"])
                if isinstance(node.get("additionalProperties"), dict):
                    nxt.append(node["additionalProperties"])
                # A computed key on a record (`t[k]`) reads some field of it.
                nxt.extend(node.get("properties", {}).values())
                if node.get("type") == "array" and "items" not in node:
                    return True
            else:
                props = node.get("properties", {})
                if seg in props:
                    nxt.append(props[seg])
                elif isinstance(node.get("additionalProperties"), dict):
                    nxt.append(node["additionalProperties"])
        return walk(nxt, tail) if nxt else False

    return walk([schema], segments)


# --- the checks -------------------------------------------------------------------------------------------


@dataclass
class ValidationOptions:
    package_dirs: dict[str, Path] = field(default_factory=dict)
    python: str | None = None  # the benchmark's interpreter: locates packages and gives state schemas
    services: Services | None = None  # how `python` is asked (`toollint.dynamic.protocol.SERVICES`)
    state_schemas: dict[str, Any] = field(default_factory=dict)  # variant (suite, domain) -> JSON Schema
    roots: list[Path] = field(default_factory=list)


def default_contract_paths(settings: Settings) -> list[Path]:
    base = settings.project_root or Path.cwd()
    return [*bundled_library_dirs(), *((base / d) for d in settings.contract_dirs)]


def validate(
    paths: ProjectPaths | None,
    settings: Settings | None = None,
    options: ValidationOptions | None = None,
    warn: Callable[[str], None] | None = None,
) -> list[Finding]:
    """TL3xx findings for every contract file under `paths` (the bundled library and the configured
    contract dirs when `paths` is empty). Contracts whose benchmark package is not installed here get
    the file-level checks only; `warn` is told which, once per package."""
    settings = settings or Settings()
    options = options or ValidationOptions()
    targets = [Path(p) for p in paths] if paths else default_contract_paths(settings)
    resolver = SourceResolver(dict(options.package_dirs), options.python,
                              [*options.roots, *([settings.project_root] if settings.project_root else [])],
                              settings, options.services)
    schemas = dict(options.state_schemas)
    findings: list[Finding] = []
    for target in targets:
        if not target.exists():
            findings.append(_finding(ContractError("TL300", str(target), 1, "no such file or directory")))
    contracts: list[Contract] = []
    for file in contract_files(targets):
        contract, errors = parse_contract(file)
        findings.extend(_finding(e) for e in errors)
        if contract is not None:
            contracts.append(contract)
    if options.python and options.services is not None and not schemas:
        schemas = profile_state_schemas(contracts, options.python, options.services)
    unchecked: list[Contract] = []
    for contract in contracts:
        findings.extend(_finding(e) for e in check_contract(contract, resolver, schemas, unchecked))
    if warn is not None:
        for package in sorted({c.source.package for c in unchecked if c.source.package}):
            count = sum(1 for c in unchecked if c.source.package == package)
            hint = f", or --{package}-src DIR" if profile_for_package(package) is not None else ""
            warn(
                f"package {package!r} is not installed here, so the cited sources of {count} contract"
                f"{'s' if count != 1 else ''} were not checked "
                f"(pass --python PY, --package-dir {package}=DIR{hint})"
            )
    return sorted(findings, key=Finding.sort_key)


def _finding(error: ContractError) -> Finding:
    props: dict[str, Any] = {"clause": error.clause} if error.clause else {}
    return Finding(code=error.code, message=error.message, path=error.path, line=error.line, col=error.col,
                   properties=props)


def check_contract(
    contract: Contract,
    resolver: SourceResolver,
    state_schemas: Mapping[str, Any] | None = None,
    unchecked: list[Contract] | None = None,
) -> Iterator[ContractError]:
    """Checks 4-8 and TL309 on a loaded contract. With `unchecked`, a contract whose benchmark package
    cannot be located at all is appended there instead of reported as TL309."""
    shown = str(contract.path)
    source = resolver.get(contract, contract.source.file, contract.source.commit)
    fn = None
    if source is None and unchecked is not None and contract.source.package and not contract.source.commit \
            and resolver.package_dir(contract.source.package) is None:
        unchecked.append(contract)  # the benchmark is not installed here: nothing to check against
        return
    if source is None:
        if contract.source.commit:
            where = (
                f"commit {contract.source.commit} "
                f"(git show, in {contract.source.repo or 'the working directory'})"
            )
        elif contract.source.package:
            where = f"package {contract.source.package!r}"
        else:
            where = "the working tree"
        yield ContractError("TL309", shown, contract.line,
                            f"source file {contract.source.file!r} not found in {where}")
    else:
        fn = source.function(contract.qualname)
        if fn is None:
            yield ContractError("TL309", shown, contract.line,
                                f"{contract.qualname!r} is not defined in {contract.source.file}")
    for clause in contract.clauses:
        if source is None and (clause.provenance.file or contract.source.file) == contract.source.file:
            continue  # the missing file is reported once, above
        yield from _check_provenance(contract, clause, resolver)
    for entry in contract.left_out:
        if source is not None or (entry.surface.file or contract.source.file) != contract.source.file:
            yield from _check_cited(contract, entry.surface, f"left_out {entry.subject}", entry.line,
                                    resolver)
    if fn is not None:
        params = tool_parameters(fn, source.tree if source is not None else None)
        for clause in contract.clauses:
            read = set(clause.predicate.args_read) if clause.predicate else set()
            if clause.arg:
                read.add(clause.arg)
            for name in sorted(read - set(params)):
                yield ContractError("TL308", shown, clause.predicate_line or clause.line,
                                    f"{clause.id}: 'args.{name}' is not a parameter of {contract.tool_name} "
                                    f"(parameters: {', '.join(params) or 'none'})", clause.predicate_col or 1,
                                    clause=clause.id)
        for entry in contract.left_out:
            if entry.arg is not None and entry.arg not in params:
                yield ContractError("TL308", shown, entry.line,
                                    f"left_out: 'args.{entry.arg}' is not a parameter of "
                                    f"{contract.tool_name} (parameters: {', '.join(params) or 'none'})")
    schema = _state_schema(contract, state_schemas or {})
    if isinstance(schema, ContractError):
        yield schema
    elif schema is not None:
        for clause in contract.clauses:
            if clause.predicate is None:
                continue
            for path in sorted(clause.predicate.paths):
                if not schema_has_path(schema, path):
                    yield ContractError("TL308", shown, clause.predicate_line or clause.line,
                                        f"{clause.id}: state path {path!r} is not in the state schema",
                                        clause.predicate_col or 1, clause=clause.id)
        for entry in contract.left_out:
            if entry.path is not None and not schema_has_path(schema, entry.path):
                yield ContractError("TL308", shown, entry.line,
                                    f"left_out: state path {entry.path!r} is not in the state schema")


def _state_schema(
    contract: Contract, state_schemas: Mapping[str, Any]
) -> Mapping[str, Any] | ContractError | None:
    hint = contract.adapter.get("state_schema")
    if isinstance(hint, str):
        file = contract.path.parent / hint
        try:
            return json.loads(file.read_text(encoding="utf-8"))  # type: ignore[no-any-return]
        except (OSError, ValueError) as exc:
            return ContractError("TL301", str(contract.path), contract.line,
                                 f"adapter.state_schema {hint!r} cannot be read: {exc}")
    profile = find_profile(contract.benchmark)
    for variant in profile.variants_of(contract.adapter) if profile is not None else ():
        if variant in state_schemas:
            return state_schemas[variant]  # type: ignore[no-any-return]
    return None


def profile_state_schemas(contracts: Iterable[Contract], python: str, services: Services) -> dict[str, Any]:
    """The state schemas, by variant, of every benchmark profile the contracts name that can give
    them (its `state_schemas` part, asked of the benchmark's interpreter)."""
    out: dict[str, Any] = {}
    for name in sorted({c.benchmark for c in contracts}):
        profile = find_profile(name)
        if profile is not None and profile.has_part("state_schemas"):
            out.update(profile.state_schema_reader()(python, services))
    return out


def _check_provenance(
    contract: Contract, clause: Clause, resolver: SourceResolver
) -> Iterator[ContractError]:
    if clause.provenance.tier == DERIVED:
        yield from _check_derived(contract, clause, resolver)
        return
    yield from _check_cited(contract, clause.provenance, clause.id, clause.line, resolver)


def _check_cited(
    contract: Contract, prov: Provenance, label: str, line: int, resolver: SourceResolver
) -> Iterator[ContractError]:
    """What an authored provenance (a clause's, or a `left_out` entry's surface, `label`) cites: the
    quote at the cited line, of the kind and tier it says."""
    shown = str(contract.path)
    at = prov.yaml_line or line

    def err(code: str, message: str) -> ContractError:
        return ContractError(code, shown, at, f"{label}: {message}", clause=label)

    if prov.tier == "author-specified":
        if prov.kind is not None:
            yield err("TL306", f"author-specified clause names a source kind {prov.kind!r}; "
                      "cite the line with its real tier instead")
        return
    if prov.kind in MAINTAINER_KINDS and prov.tier != "maintainer-comment":
        yield err("TL306", f"a {prov.kind} is not shown to the agent: tier must be maintainer-comment, "
                  f"not {prov.tier}")
    elif prov.kind in AGENT_VISIBLE_KINDS and prov.tier != "agent-visible":
        yield err(
            "TL306", f"a {prov.kind} is shown to the agent: tier must be agent-visible, not {prov.tier}"
        )
    if prov.quote is None or prov.line is None:
        return  # reported by the loader
    file = prov.file or contract.source.file
    commit = prov.commit or contract.source.commit
    cited = resolver.get(contract, file, commit)
    if cited is None:
        yield err("TL304", f"cited file {file!r} not found" + (f" at commit {commit}" if commit else ""))
        return
    where = f"{file}:{prov.line}"
    if prov.kind == "template":  # check 7: the weaker, file-level test
        if not cited.contains(prov.quote):
            yield err("TL307", f"template {file!r} does not contain the quote {prov.quote!r}")
        return
    if not cited.quote_at(prov.line, prov.quote):
        elsewhere = cited.find_quote(prov.quote)
        hint = f"; it occurs at line {elsewhere}" if elsewhere else "; it does not occur in the file"
        actual = (
            cited.lines[prov.line - 1].strip() if 0 < prov.line <= len(cited.lines) else "<past end of file>"
        )
        yield err("TL304", f"quote {prov.quote!r} not found at {where} (line reads {actual!r}){hint}")
        return
    if prov.kind in NON_PYTHON_KINDS or not file.endswith(".py"):
        return
    actual_kind = cited.classify(prov.line, prov.quote)
    if prov.kind == "return" and actual_kind != "return":
        yield err("TL305", f"{where} is cited as a tool return but is a {actual_kind} line, not a return or "
                  "raise statement")
        return
    if actual_kind == prov.kind:
        return
    if actual_kind == "code":
        yield err("TL306", f"{where} is cited as a {prov.kind} but is plain code, which the agent never sees")
        return
    expected_tier = "maintainer-comment" if actual_kind in MAINTAINER_KINDS else "agent-visible"
    if expected_tier != prov.tier:
        yield err(
            "TL306", f"{where} is a {actual_kind} line, so its tier is {expected_tier}, not {prov.tier}"
        )
    else:
        yield err("TL306", f"{where} is cited as a {prov.kind} but is a {actual_kind} line")


def finding_subject(finding: Finding) -> str | None:
    """What a static finding is about, as a derived clause's `provenance.about` names it: the
    parameter (TL103/TL104), the field (TL105), the guard's first line (TL102); None for TL101,
    which is about the tool's reply as a whole."""
    evidence = finding.evidence
    if evidence is None:
        return None
    if evidence.parameter or evidence.state_path:
        return evidence.parameter or evidence.state_path
    if evidence.guard_statement is not None:
        return ast.unparse(evidence.guard_statement).splitlines()[0].strip()
    return None


def _check_derived(contract: Contract, clause: Clause, resolver: SourceResolver) -> Iterator[ContractError]:
    """A derived clause's provenance: the quote at the cited line, and a static finding of the cited
    code there, on the contract's tool and about what `about` says, that toollint itself reports."""
    prov = clause.provenance
    at = prov.yaml_line or clause.line

    def err(code: str, message: str) -> ContractError:
        return ContractError(code, str(contract.path), at, f"{clause.id}: {message}", clause=clause.id)

    if prov.kind is not None and prov.kind not in ("comment", "return", "signature", "docstring"):
        yield err(
            "TL306", f"a derived clause cites a finding's line; kind {prov.kind!r} says nothing about it"
        )
    if prov.quote is None or prov.line is None or prov.finding is None:
        return  # reported by the loader
    file = prov.file or contract.source.file
    commit = prov.commit or contract.source.commit
    cited = resolver.get(contract, file, commit)
    where = f"{file}:{prov.line}"
    if cited is None:
        yield err("TL304", f"cited file {file!r} not found" + (f" at commit {commit}" if commit else ""))
        return
    if not cited.quote_at(prov.line, prov.quote):
        actual = (
            cited.lines[prov.line - 1].strip() if 0 < prov.line <= len(cited.lines) else "<past end of file>"
        )
        yield err("TL304", f"quote {prov.quote!r} not found at {where} (line reads {actual!r})")
        return
    found = [f for f in resolver.findings_in(cited, contract.module) if f.code == prov.finding]
    on_tool = [f for f in found if f.line == prov.line
               and (f.tool or "").rsplit(".", 1)[-1] == contract.tool_name]
    if not any(prov.about is None or finding_subject(f) == prov.about for f in on_tool):
        there = ", ".join(sorted({f"{f.code} about {finding_subject(f)!r}" if finding_subject(f) else f.code
                                  for f in on_tool})) or "none"
        elsewhere = sorted({f.line for f in found if f not in on_tool})
        hint = (
            f"; {prov.finding} is reported at line(s) {', '.join(map(str, elsewhere[:5]))}"
            if elsewhere
            else ""
        )
        about = f" about {prov.about!r}" if prov.about else ""
        yield err("TL306", f"tier derived claims a {prov.finding} finding{about} on {contract.tool_name} at "
                  f"{where}, but toollint reports {there} there{hint}")
