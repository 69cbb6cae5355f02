"""Load contract YAML files into `Contract`s, with every problem as a `ContractError` (file, line, message).

YAML is read with a SafeLoader subclass that rejects duplicate keys, anchors and aliases, and records
the line of every key and value, so schema errors point at the offending line. The structure is
checked against the published JSON Schema (`contract.schema.json`) by a small interpreter of the
subset of JSON Schema that file uses, so the schema and the loader cannot disagree.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml
from toollint.contracts.host.predicate import ForbiddenPredicate, Predicate, compile_predicate
from toollint.contracts.model import (
    DERIVED,
    DRAFT_SUFFIX,
    Clause,
    Contract,
    LeftOut,
    OnViolation,
    Provenance,
    RoundTrip,
    Source,
)
from toollint.contracts.sandbox import cost_problem
from yaml.events import AliasEvent

from toollint.regular import UnreadableInput, read_regular

SCHEMA_FILE = Path(__file__).with_name("contract.schema.json")
CONTRACT_SUFFIXES = (".yaml", ".yml")
MAX_CONTRACT_BYTES = 16 << 20  # a contract is a few KB; a file this large (or a device) is not one


@dataclass(frozen=True)
class ContractError(Exception):
    """A problem with one contract file. `code` is the TL3xx code it is reported under."""

    code: str
    path: str
    line: int
    message: str
    col: int = 1
    clause: str | None = None

    def __str__(self) -> str:
        return f"{self.path}:{self.line}:{self.col}: {self.code} {self.message}"


def bundled_library_dirs() -> list[Path]:
    """The contracts shipped inside the package: every benchmark profile's `contracts_dir`."""
    from toollint.profiles import bundled_contract_dirs

    return bundled_contract_dirs()


@lru_cache(maxsize=1)
def contract_schema() -> dict[str, Any]:
    return json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


# --- YAML with positions --------------------------------------------------------------------------------


class LineDict(dict):  # type: ignore[type-arg]
    """A mapping that remembers where it, its keys and its values sit (1-based line, col)."""

    line: int = 1
    col: int = 1
    key_pos: dict[str, tuple[int, int]]
    value_pos: dict[str, tuple[int, int]]


class LineList(list):  # type: ignore[type-arg]
    line: int = 1
    col: int = 1
    item_pos: list[tuple[int, int]]


def _scalar_content_pos(node: yaml.Node, text_lines: list[str]) -> tuple[int, int]:
    """Where a scalar's text starts: the line after a `|`/`>` indicator, after the quote otherwise."""
    line, col = node.start_mark.line + 1, node.start_mark.column + 1
    style = getattr(node, "style", None)
    if style in ("|", ">"):
        line += 1
        text = text_lines[line - 1] if line - 1 < len(text_lines) else ""
        col = len(text) - len(text.lstrip(" ")) + 1
    elif style in ("'", '"'):
        col += 1
    return line, col


MAX_YAML_DEPTH = 64  # a contract is a few levels deep; far deeper nesting is a malformed (or hostile) file


class _PositionLoader(yaml.SafeLoader):
    def __init__(self, stream: str, path: str) -> None:
        super().__init__(stream)
        self.path = path
        self.text_lines = stream.splitlines()
        self.depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(AliasEvent):
            event = self.peek_event()
            raise ContractError(
                "TL300",
                self.path,
                event.start_mark.line + 1,
                "YAML aliases (*name) are not supported in contracts",
                event.start_mark.column + 1,
            )
        # PyYAML composes recursively: 100k nested brackets overflowed the stack (RecursionError) and
        # ended the whole run. Stop at a depth no contract needs, with the position.
        self.depth += 1
        try:
            if self.depth > MAX_YAML_DEPTH:
                mark = self.peek_event().start_mark
                raise ContractError("TL300", self.path, mark.line + 1,
                                    f"YAML nested more than {MAX_YAML_DEPTH} levels deep", mark.column + 1)
            node = super().compose_node(parent, index)
        finally:
            self.depth -= 1
        if node is not None and getattr(node, "anchor", None):
            raise ContractError(
                "TL300",
                self.path,
                node.start_mark.line + 1,
                "YAML anchors (&name) are not supported in contracts",
                node.start_mark.column + 1,
            )
        return node

    def construct_scalar(self, node: yaml.ScalarNode) -> Any:  # type: ignore[override]
        value = super().construct_scalar(node)
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as exc:
                # A `"\udcff"` escape makes a lone surrogate: no character, so no output format (text,
                # JSON, SARIF, a Python predicate) can carry it. Refuse it where it is written.
                line, col = _scalar_content_pos(node, self.text_lines)
                raise ContractError(
                    "TL300",
                    self.path,
                    line,
                    f"the string holds {value[exc.start]!r}, an unpaired "
                    "surrogate escape, which is not a character",
                    col,
                ) from None
        return value

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> LineDict:  # type: ignore[override]
        out = LineDict()
        out.line, out.col = node.start_mark.line + 1, node.start_mark.column + 1
        out.key_pos, out.value_pos = {}, {}
        for key_node, value_node in node.value:
            key = self.construct_object(key_node, deep=True)
            pos = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
            if not isinstance(key, str):
                raise ContractError(
                    "TL300", self.path, pos[0], f"mapping key {key!r} is not a string", pos[1]
                )
            if key in out:
                first = out.key_pos[key][0]
                raise ContractError("TL300", self.path, pos[0],
                                    f"duplicate key {key!r} (first defined at line {first})", pos[1])
            out[key] = self.construct_object(value_node, deep=True)
            out.key_pos[key] = pos
            out.value_pos[key] = (
                _scalar_content_pos(value_node, self.text_lines)
                if isinstance(value_node, yaml.ScalarNode)
                else (value_node.start_mark.line + 1, value_node.start_mark.column + 1)
            )
        return out

    def construct_sequence(self, node: yaml.SequenceNode, deep: bool = False) -> LineList:  # type: ignore[override]
        out = LineList(self.construct_object(child, deep=True) for child in node.value)
        out.line, out.col = node.start_mark.line + 1, node.start_mark.column + 1
        out.item_pos = [(c.start_mark.line + 1, c.start_mark.column + 1) for c in node.value]
        return out


_PositionLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _PositionLoader.construct_mapping
)
_PositionLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _PositionLoader.construct_sequence
)


def _yaml_message(exc: yaml.MarkedYAMLError, text: str) -> tuple[int, int, str]:
    mark = exc.problem_mark or exc.context_mark
    line = mark.line + 1 if mark else 1
    col = mark.column + 1 if mark else 1
    problem = (exc.problem or exc.context or "invalid YAML").strip()
    lines = text.splitlines()
    here = lines[line - 1] if 0 < line <= len(lines) else ""
    if "\t" in problem or "'\\t'" in problem or ("\t" in here[: max(col, 1)] and "token" in problem):
        return line, col, "tab character in indentation (YAML allows spaces only)"
    if "mapping values are not allowed" in problem or "expected <block end>" in problem:
        return line, col, f"bad indentation or structure: {problem}"
    return line, col, problem


def read_yaml(path: Path, display: str | None = None) -> Any:
    """Parse one YAML file with positions. Raises ContractError (TL300 or TL903-like io problems)."""
    shown = display or str(path)
    try:
        # Capped, regular files only: a contract path from a witness may name /dev/zero or a FIFO.
        text = read_regular(path, MAX_CONTRACT_BYTES).decode("utf-8")
    except UnreadableInput as exc:
        raise ContractError("TL300", shown, 1, f"cannot read file: {exc}") from None
    except UnicodeDecodeError as exc:
        raise ContractError("TL300", shown, 1, f"file is not valid UTF-8 ({exc.reason})") from None
    except OSError as exc:
        raise ContractError("TL300", shown, 1, f"cannot read file: {exc.strerror or exc}") from None
    loader = _PositionLoader(text, shown)
    try:
        return loader.get_single_data()
    except ContractError:
        raise
    except yaml.MarkedYAMLError as exc:
        line, col, message = _yaml_message(exc, text)
        raise ContractError("TL300", shown, line, message, col) from None
    except yaml.YAMLError as exc:
        raise ContractError("TL300", shown, 1, f"invalid YAML: {exc}") from None
    except RecursionError:  # nesting the depth check does not see (e.g. inside a flow scalar's parser)
        raise ContractError("TL300", shown, 1, "YAML nested too deeply to read") from None
    finally:
        loader.dispose()


# --- the JSON Schema subset -------------------------------------------------------------------------------

_JSON_TYPES = {
    "object": (dict,), "array": (list,), "string": (str,), "integer": (int,), "number": (int, float),
    "boolean": (bool,), "null": (type(None),),
}


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    for name in ("object", "array", "string", "integer", "number"):
        if isinstance(value, _JSON_TYPES[name]):
            return name
    return type(value).__name__


def _is_type(value: Any, name: str) -> bool:
    if name in ("integer", "number") and isinstance(value, bool):
        return False
    return isinstance(value, _JSON_TYPES[name])


def _where(trail: list[str]) -> str:
    return " in " + " > ".join(trail) if trail else " at top level"


def schema_errors(
    data: Any,
    schema: dict[str, Any],
    *,
    path: str,
    line: int = 1,
    trail: list[str] | None = None,
    root: dict[str, Any] | None = None,
) -> Iterator[ContractError]:
    """Errors of `data` against `schema` (the subset of JSON Schema contract.schema.json uses)."""
    root = root or schema
    trail = trail or []
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        yield from schema_errors(data, root["$defs"][name], path=path, line=line, trail=trail, root=root)
        return
    expected = schema.get("type")
    if expected is not None:
        names = expected if isinstance(expected, list) else [expected]
        if not any(_is_type(data, n) for n in names):
            yield ContractError("TL301", path, line,
                                f"expected {' or '.join(names)}, got {_json_type(data)}{_where(trail)}")
            return
    if "enum" in schema and data not in schema["enum"]:
        yield ContractError("TL301", path, line, f"{data!r} is not one of "
                            f"{', '.join(map(str, schema['enum']))}{_where(trail)}")
    if isinstance(data, str):
        if "minLength" in schema and len(data) < schema["minLength"]:
            yield ContractError("TL301", path, line, f"must not be empty{_where(trail)}")
        if "pattern" in schema and not re.search(schema["pattern"], data):
            yield ContractError("TL301", path, line, f"{data!r} is not well-formed{_where(trail)}")
    if _is_type(data, "number") and "minimum" in schema and data < schema["minimum"]:
        yield ContractError(
            "TL301", path, line, f"{data} is below the minimum {schema['minimum']}{_where(trail)}"
        )
    if isinstance(data, dict):
        props: dict[str, Any] = schema.get("properties", {})
        key_pos = getattr(data, "key_pos", {})
        value_pos = getattr(data, "value_pos", {})
        here = getattr(data, "line", line)
        for key in schema.get("required", []):
            if key not in data:
                yield ContractError("TL301", path, here, f"missing required key {key!r}{_where(trail)}")
        extra = schema.get("additionalProperties", True)
        for key, value in data.items():
            sub_trail = [*trail, _label(key, value)]
            key_line = key_pos.get(key, (here, 1))[0]
            if key in props:
                yield from schema_errors(
                    value,
                    props[key],
                    path=path,
                    line=value_pos.get(key, (key_line, 1))[0],
                    trail=sub_trail,
                    root=root,
                )
            elif extra is False:
                allowed = ", ".join(sorted(props))
                yield ContractError("TL301", path, key_line,
                                    f"unknown key {key!r}{_where(trail)} (allowed: {allowed})")
            elif isinstance(extra, dict):
                yield from schema_errors(value, extra, path=path, line=value_pos.get(key, (key_line, 1))[0],
                                         trail=sub_trail, root=root)
    if isinstance(data, list) and "items" in schema:
        item_pos = getattr(data, "item_pos", [])
        for i, item in enumerate(data):
            item_line = item_pos[i][0] if i < len(item_pos) else getattr(data, "line", line)
            yield from schema_errors(item, schema["items"], path=path, line=item_line,
                                     trail=[*trail, _label(f"[{i}]", item)], root=root)


def _label(key: str, value: Any) -> str:
    """How a trail step is named in messages: clauses by their id."""
    if isinstance(value, dict) and isinstance(value.get("id"), str):
        return f"clause {value['id']!r}"
    return key


# --- building the model ------------------------------------------------------------------------------------


def parse_contract(
    path: Path | str, display: str | None = None
) -> tuple[Contract | None, list[ContractError]]:
    """Every loader-level problem of one file (YAML, schema, predicates, ids), and the contract when usable.

    Never raises: a file that breaks the loader in a way no check foresaw is reported as TL300 on
    that file, so one malformed contract never ends a run that has others to check.
    """
    shown = display or str(path)
    try:
        return _parse_contract(Path(path), shown)
    except (
        RecursionError,
        MemoryError,
        ValueError,
        TypeError,
        KeyError,
        AttributeError,
        UnicodeError,
    ) as exc:
        return None, [
            ContractError("TL300", shown, 1, f"cannot load the contract ({type(exc).__name__}: {exc})")
        ]


def _parse_contract(path: Path, shown: str) -> tuple[Contract | None, list[ContractError]]:
    try:
        data = read_yaml(path, shown)
    except ContractError as exc:
        return None, [exc]
    if data is None:
        return None, [ContractError("TL301", shown, 1, "the file is empty")]
    errors = list(schema_errors(data, contract_schema(), path=shown))
    if errors:
        return None, errors
    clauses: list[Clause] = []
    for raw in data.get("clauses", []):
        clause, clause_errors = _build_clause(raw, shown)
        errors.extend(clause_errors)
        if clause is not None:
            clauses.append(clause)
    errors.extend(_id_errors(clauses, shown))
    left_out: list[LeftOut] = []
    for raw in data.get("left_out", []):
        entry, entry_errors = _left_out(raw, shown)
        errors.extend(entry_errors)
        if entry is not None:
            left_out.append(entry)
    src = data["source"]
    contract = Contract(
        tool=data["tool"],
        benchmark=data["benchmark"],
        source=Source(file=src["file"], package=src.get("package"), version=src.get("version"),
                      commit=src.get("commit"), repo=src.get("repo")),
        clauses=tuple(clauses),
        path=path,
        adapter=_plain(data.get("adapter", {})),
        description=data.get("description"),
        line=getattr(data, "line", 1),
        left_out=tuple(left_out),
    )
    return contract, errors


def _plain(value: Any) -> Any:
    """Drop the position subclasses, so consumers get plain dicts and lists."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _build_clause(raw: LineDict, shown: str) -> tuple[Clause | None, list[ContractError]]:
    errors: list[ContractError] = []
    cid: str = raw["id"]
    kind = cid.split(".", 1)[0].removesuffix(DRAFT_SUFFIX)
    line = raw.line

    def err(code: str, message: str, key: str | None = None) -> None:
        at = raw.key_pos.get(key, (line, 1))[0] if key else line
        errors.append(ContractError(code, shown, at, message, clause=cid))

    for key, allowed_kind in (("on_violation", "pre"), ("falsy_legal", "arg"), ("biconditional", "success"),
                              ("justification", "success"), ("deferred", "eff"), ("round_trip", "eff")):
        if key in raw and kind != allowed_kind:
            err("TL301", f"{key!r} is only allowed on {allowed_kind} clauses, not on {cid!r}", key)
    if raw.get("biconditional") and not raw.get("justification"):
        err("TL301", f"clause {cid!r} is biconditional but gives no 'justification'", "biconditional")
    if kind == "arg" and "falsy_legal" not in raw and not raw.get("draft"):
        err("TL301", f"clause {cid!r} must say whether falsy values are legal ('falsy_legal: true/false')")

    prov_raw: LineDict = raw["provenance"]
    provenance = _provenance(prov_raw, repr(cid), lambda code, message: err(code, message, "provenance"))

    source = raw.get("predicate")
    predicate: Predicate | None = None
    pline, pcol = raw.value_pos.get("predicate", (line, 1))
    if source is None:
        if kind != "arg":
            err("TL301", f"clause {cid!r} needs a 'predicate'")
    else:
        try:
            predicate = compile_predicate(source, filename=shown, line=pline, col=pcol)
        except ForbiddenPredicate as exc:
            errors.append(
                ContractError("TL302", shown, exc.line, f"{cid}: {exc.message}", exc.col, clause=cid)
            )
        else:
            costly = cost_problem(predicate.source)  # a constant part over a bound: costly on any data
            if costly is not None:
                errors.append(ContractError("TL302", shown, pline, f"{cid}: {costly}", pcol, clause=cid))

    on_violation = None
    if "on_violation" in raw:
        ov = raw["on_violation"]
        on_violation = OnViolation(raises=ov.get("raises"), state=ov.get("state", "unchanged"),
                                   message=ov.get("message"))
    round_trip = (
        RoundTrip(raw["round_trip"]["do"], raw["round_trip"]["undo"]) if "round_trip" in raw else None
    )
    clause = Clause(
        id=cid,
        kind=kind,
        predicate_source=source,
        predicate=predicate,
        provenance=provenance,
        on_violation=on_violation,
        arg=cid.split(".", 1)[1].removesuffix(DRAFT_SUFFIX) if kind == "arg" else None,
        falsy_legal=raw.get("falsy_legal"),
        biconditional=bool(raw.get("biconditional", False)),
        justification=raw.get("justification"),
        deferred=bool(raw.get("deferred", False)),
        round_trip=round_trip,
        draft=bool(raw.get("draft", False)),
        description=raw.get("description"),
        line=line,
        predicate_line=pline,
        predicate_col=pcol,
    )
    return clause, errors


def _left_out(raw: LineDict, shown: str) -> tuple[LeftOut | None, list[ContractError]]:
    """One `left_out` entry: a field (`path`) or a parameter (`arg`), never both, with its reason and the
    cited surface that allows leaving it out (an authored tier: a derived finding allows nothing)."""
    errors: list[ContractError] = []
    what = raw.get("path") or (f"args.{raw['arg']}" if raw.get("arg") else None)
    label = f"left_out {what!r}" if what else "a left_out entry"

    def err(code: str, message: str, key: str | None = None) -> None:
        at = raw.key_pos.get(key, (raw.line, 1))[0] if key else raw.line
        errors.append(ContractError(code, shown, at, message))

    if ("path" in raw) == ("arg" in raw):
        err("TL301", f"{label} must name one field ('path') or one parameter ('arg'), not "
            f"{'both' if 'path' in raw else 'neither'}")
    surface: LineDict = raw["surface"]
    if surface["tier"] == DERIVED:
        err("TL306", f"the surface of {label} is a finding toollint derived; cite the benchmark's own text "
            "(its docstring, policy or a maintainer's comment) that allows leaving it out", "surface")
    provenance = _provenance(surface, f"{label}'s surface",
                             lambda code, message: err(code, message, "surface"))
    if errors:
        return None, errors
    return LeftOut(raw["reason"], provenance, raw.get("path"), raw.get("arg"), raw.line), errors


def _provenance(prov_raw: LineDict, what: str, err: Callable[[str, str], None]) -> Provenance:
    """A clause's provenance or a left-out entry's surface (`what` names it in messages), its tier's
    requirements checked: what it cites, or that it is inferred."""
    tier = prov_raw["tier"]
    if tier == "author-specified":
        if prov_raw.get("inferred") is not True:
            err("TL301", f"author-specified provenance of {what} must say 'inferred: true'")
        if "quote" in prov_raw:
            err("TL301", f"author-specified provenance of {what} has no source to quote; remove 'quote'")
    elif tier == DERIVED:
        # Derived clauses cite the static finding they test, not a declared text (the validator
        # re-lints the cited line to check the claim).
        missing = [k for k in ("line", "quote", "finding") if k not in prov_raw]
        if missing:
            err("TL301", f"derived provenance of {what} needs {', '.join(repr(k) for k in missing)}")
        if prov_raw.get("inferred"):
            err("TL306", f"{what} is derived from a finding, not inferred; remove 'inferred'")
    else:
        missing = [k for k in ("line", "quote", "kind") if k not in prov_raw]
        if missing:
            err("TL301", f"{tier} provenance of {what} needs {', '.join(repr(k) for k in missing)}")
        if prov_raw.get("inferred"):
            err("TL306", f"{what} cites a source yet says 'inferred: true'; inferred clauses are "
                "author-specified")
    for key in ("finding", "about"):
        if key in prov_raw and tier != DERIVED:
            err("TL301", f"{key!r} is only allowed in derived provenance, not in {tier} provenance of {what}")
    return Provenance(
        tier=tier,
        file=prov_raw.get("file"),
        line=prov_raw.get("line"),
        quote=prov_raw.get("quote"),
        kind=prov_raw.get("kind"),
        inferred=bool(prov_raw.get("inferred", False)),
        commit=prov_raw.get("commit"),
        note=prov_raw.get("note"),
        yaml_line=prov_raw.line,
        finding=prov_raw.get("finding"),
        about=prov_raw.get("about"),
    )


def _id_errors(clauses: Iterable[Clause], shown: str) -> Iterator[ContractError]:
    """Check 3: ids unique; a draft is marked by all of: `_draft` suffix, `draft: true`, predicate `True`."""
    seen: dict[str, int] = {}
    success_count = 0
    for c in clauses:
        if c.id in seen:
            yield ContractError(
                "TL303",
                shown,
                c.line,
                f"duplicate clause id {c.id!r} (first at line {seen[c.id]})",
                clause=c.id,
            )
        else:
            seen[c.id] = c.line
        if c.kind == "success":
            success_count += 1
            if success_count == 2:
                yield ContractError("TL303", shown, c.line, "more than one success clause", clause=c.id)
        suffixed = c.id.endswith(DRAFT_SUFFIX)
        trivial = c.predicate_source is not None and c.predicate_source.strip() == "True"
        if suffixed and not c.draft:
            yield ContractError(
                "TL303", shown, c.line, f"{c.id!r} has the _draft suffix but not 'draft: true'", clause=c.id
            )
        elif c.draft and not suffixed:
            yield ContractError("TL303", shown, c.line, f"{c.id!r} says 'draft: true' but its id lacks the "
                                "_draft suffix", clause=c.id)
        elif c.draft and c.predicate_source is not None and not trivial:
            yield ContractError(
                "TL303",
                shown,
                c.line,
                f"draft {c.id!r} has a real predicate: drop the _draft "
                "suffix and 'draft: true' so it is counted",
                clause=c.id,
            )
        elif c.draft and c.kind != "arg" and c.predicate_source is None:
            yield ContractError(
                "TL303", shown, c.line, f"draft {c.id!r} needs the placeholder 'predicate: True'", clause=c.id
            )


def load_contract(path: Path | str) -> Contract:
    """One contract, or the first ContractError (never a traceback for bad input)."""
    contract, errors = parse_contract(path)
    if errors:
        raise errors[0]
    assert contract is not None  # parse_contract returns a contract whenever it reports no error
    return contract


def contract_files(dirs: Iterable[Path | str]) -> list[Path]:
    """Every contract file under `dirs` (files are taken as they are), sorted, without duplicates."""
    found: dict[Path, None] = {}
    for d in dirs:
        p = Path(d)
        if p.is_file():
            found[p] = None
        elif p.is_dir():
            for f in sorted(p.rglob("*")):
                if f.suffix in CONTRACT_SUFFIXES and f.is_file():
                    found[f] = None
    return list(found)


def load_contracts(dirs: Iterable[Path | str]) -> tuple[list[Contract], list[ContractError]]:
    """All loadable contracts under `dirs`, and every problem found while loading them."""
    contracts: list[Contract] = []
    errors: list[ContractError] = []
    dirs = list(dirs)
    for d in dirs:
        if not Path(d).exists():
            errors.append(ContractError("TL300", str(d), 1, "no such file or directory"))
    for f in contract_files(dirs):
        contract, file_errors = parse_contract(f)
        errors.extend(file_errors)
        if contract is not None and not file_errors:
            contracts.append(contract)
    return contracts, errors


def find_contract(tool_ref_or_name: str, dirs: Iterable[Path | str] | None = None) -> Contract | None:
    """The contract for a tool, by full reference (`pkg.mod:func`) or bare name; the bundled contracts
    are searched when no dirs are given. A bare name shared by two contracts is ambiguous: None."""
    contracts, _ = load_contracts(list(dirs) if dirs is not None else bundled_library_dirs())
    exact = [c for c in contracts if c.tool == tool_ref_or_name]
    if exact:
        return exact[0]
    by_name = [c for c in contracts if tool_ref_or_name in (c.tool_name, c.qualname)]
    return by_name[0] if len(by_name) == 1 else None
