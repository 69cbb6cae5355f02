"""The probe plan: argument assignments for one tool, every value harvested from the pristine snapshot.

METHOD.md Part 3: per precondition a satisfying and a violating assignment, one happy path that
satisfies all of them, per effective argument a set of assignments differing only in that argument
(harvested values, the record's current value, the type's legal falsy values 0, 0.0, False, ""),
the happy value of each effective argument set on another record whose value differs, each optional
argument of the happy path left out (its null branch), and a joint-falsy assignment when two or
more effective arguments admit falsy values.

Two kinds of value no snapshot holds are derived for the precondition search only (never for happy
or argument probes, where they would be calls the contract never promised to accept): a negative
number for every numeric parameter (`fee >= 0` has no stored negative fee to harvest), and the
optional arguments left out together, all of them and every pair (`owner is not None or overdraft
is not None` is false only when both are).

Preconditions are evaluated here on the pristine snapshot (they read `pre` and `args` only), so the
search for a violating assignment costs no tool call: we walk the candidate values of one argument
at a time from the happy base, then the whole (capped) product, before declaring a clause
unreachable, and the reason says how far the search went.
"""

from __future__ import annotations

import datetime as _dt
import functools
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from toollint.contracts import sandbox
from toollint.contracts.host.predicate import PredicateTypeError
from toollint.contracts.model import Clause, Contract
from toollint.dynamic.host.jsondiff import identity_field

from toollint.analysis.vocabulary import ANNOTATION_JSON_TYPE, falsy_json_values

MAX_PRODUCT = 4000  # assignments tried when searching the full product of candidates
MAX_VALUES_PER_ARG = 8
ARG_VALUES = 3  # truthy values per effective argument, besides the current one and the falsy ones
MAX_HAPPY_SEARCH = 40  # calls spent looking for an accepted happy path
MAX_FALLBACK = 24  # candidates taken from unrelated fields when nothing is named like the argument
NEGATIVE = "derived:negative"  # origin of the negative number offered to numeric parameters
_TYPE_OF_ANNOTATION = ANNOTATION_JSON_TYPE  # the shared table, under the name this module always used


@dataclass
class SchemaParam:
    """A tool parameter as the benchmark's host declares it (its JSON schema, or annotations it
    reports), which the probes are generated from. Not the analysis's `ParamInfo` (a parameter of
    the source, as an AST): the host's schema holds what the source may not (required, enum values,
    a description's format, element types), and the probes run where no source is at hand."""

    name: str
    types: set[str]  # JSON-schema type names; empty means unknown (anything)
    required: bool
    default: Any = None
    description: str = ""
    enum: list[Any] = field(default_factory=list)  # the only legal values, when the schema says so
    items: set[str] = field(default_factory=set)  # JSON-schema types of an array's elements

    @property
    def time_format(self) -> str | None:
        """A strftime format when the description names one ("ISO format 'YYYY-MM-DD HH:MM'")."""
        m = re.search(r"'?(YYYY-MM-DD(?:[ T]HH:MM(?::SS)?)?)'?", self.description)
        if not m:
            return None
        return (m.group(1).replace("YYYY", "%Y").replace("MM-DD", "%m-%d").replace("HH", "%H")
                .replace(":MM", ":%M").replace("SS", "%S"))

    def admits(self, value: Any) -> bool:
        if not self.types:
            return True
        return json_type(value) in self.types or (json_type(value) == "integer" and "number" in self.types)

    @property
    def falsy_values(self) -> list[Any]:
        return [v for t in sorted(self.types) for v in falsy_json_values(t)]


@dataclass
class Probe:
    kind: str  # happy, pre_violating, arg, rebased, omitted, joint_falsy
    args: dict[str, Any]
    tool: str = ""
    clause: str | None = None  # the pre clause a pre_violating probe targets
    varied: str | None = None  # the effective argument an arg probe varies
    harvested_from: dict[str, str] = field(default_factory=dict)  # arg -> keyed path of the value's origin
    satisfies: list[str] = field(default_factory=list)  # pre clauses true on this assignment
    # A round trip (`kind` "round_trip"): calls made in the same environment before and after this
    # one, each {"tool": name, "args": {...}}; the probe's pre/post states enclose all of them.
    before: list[dict[str, Any]] = field(default_factory=list)
    after: list[dict[str, Any]] = field(default_factory=list)
    # Derived guard clauses whose commented-out line a watched run of this call passed with the
    # guard's condition true (`toollint.dynamic.derived`): a later refusal is then not the guard's.
    past_guard: list[str] = field(default_factory=list)

    def key(self) -> str:
        own = repr(sorted(self.args.items(), key=lambda kv: kv[0]))
        if not self.before and not self.after:
            return own
        calls = [(c.get("tool"), sorted((c.get("args") or {}).items())) for c in (*self.before, *self.after)]
        return f"{own} around {calls!r}"


# (snapshot, its harvest), newest first: `Harvest.of` reuses a walk by the snapshot's identity.
_HARVESTS: list[tuple[Any, Harvest]] = []


@dataclass
class Plan:
    probes: list[Probe]
    unreachable: dict[str, str]  # pre clause id -> why no violating assignment exists
    happy_found: bool
    params: dict[str, SchemaParam]
    alternatives: list[dict[str, Any]] = field(default_factory=list)  # other bases if the happy path fails


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def params_from_tool(meta: dict[str, Any]) -> dict[str, SchemaParam]:
    """Parameters from the host's tool metadata: a JSON schema (a profile's adapter) or annotations
    (toolkit)."""
    schema = meta.get("parameters") or {}
    out: dict[str, SchemaParam] = {}
    if isinstance(schema.get("properties"), dict):
        required = set(schema.get("required") or [])
        defs = schema.get("$defs") or schema.get("definitions") or {}
        for name, prop in schema["properties"].items():
            prop = _deref(prop, defs)
            items = _deref(prop.get("items") or {}, defs) if isinstance(prop.get("items"), dict) else {}
            out[name] = SchemaParam(name, _schema_types(prop), name in required, prop.get("default"),
                              str(prop.get("description") or ""), _enum(prop, defs), _schema_types(items))
        return out
    for name, info in schema.items():
        ann = str((info or {}).get("annotation") or "")
        types = {_TYPE_OF_ANNOTATION[t] for t in re.findall(r"[A-Za-z_]+", ann) if t in _TYPE_OF_ANNOTATION}
        if "Optional" in ann:
            types.add("null")
        out[name] = SchemaParam(name, types, bool((info or {}).get("required")), None)
    return out


def _deref(prop: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """Inline a local `$ref` (pydantic puts enums and nested models under `$defs`)."""
    ref = prop.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        target = defs.get(ref.rsplit("/", 1)[-1])
        if isinstance(target, dict):
            merged = dict(target)
            merged.update({k: v for k, v in prop.items() if k != "$ref"})
            return merged
    return prop


def _enum(prop: dict[str, Any], defs: dict[str, Any]) -> list[Any]:
    if isinstance(prop.get("enum"), list):
        return list(prop["enum"])
    for alt in prop.get("anyOf") or []:
        values = _enum(_deref(alt, defs), defs)
        if values:
            return values
    return []


def _schema_types(prop: dict[str, Any]) -> set[str]:
    if "type" in prop:
        t = prop["type"]
        return set(t) if isinstance(t, list) else {t}
    out: set[str] = set()
    for alt in prop.get("anyOf") or prop.get("oneOf") or []:
        out |= _schema_types(alt)
    if prop.get("format") in ("date-time", "date"):
        out.add("string")
    return out


# --- harvesting -------------------------------------------------------------------------------------


@dataclass
class Harvest:
    """Scalar leaves of a snapshot by field name, with the keyed path each came from."""

    by_field: dict[str, list[tuple[Any, str]]] = field(default_factory=dict)
    all_values: list[tuple[str, Any, str]] = field(default_factory=list)  # (field, value, path)
    keys: list[tuple[str, str]] = field(default_factory=list)  # keys of id-keyed dicts, with their path

    @classmethod
    def of(cls, state: Any) -> Harvest:
        """The harvest of a snapshot; the tools of one host share its pristine snapshot, so the walk
        (a second or more on a multi-megabyte state) is made once per snapshot, not once per plan."""
        for seen, harvest in _HARVESTS:
            if seen is state:
                return harvest
        h = cls()
        h._walk(state, "", "")
        _HARVESTS.insert(0, (state, h))
        del _HARVESTS[4:]  # the pristine states of the hosts checked side by side
        return h

    def _walk(self, node: Any, name: str, path: str) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                self._walk(v, str(k), f"{path}/{k}")
            if name and _keyed_collection(node):  # a dict keyed by ids/urls: its keys are values too
                for k in node:
                    self.keys.append((k, f"{path}/{k}"))
            return
        if isinstance(node, list):
            if name and all(not isinstance(v, (dict, list)) for v in node):
                self.by_field.setdefault(name, []).append((node, path))  # the whole list, for array params
            key = identity_field(node, node, name or None)
            for i, v in enumerate(node):
                seg = f"{{{key}={v[key]}}}" if key else str(i)
                # Elements of a scalar list are named after the list (`participants` -> one participant).
                self._walk(v, name if not isinstance(v, (dict, list)) else "", f"{path}/{seg}")
            return
        if name:
            self.by_field.setdefault(name, []).append((node, path))
            self.all_values.append((name, node, path))

    def values_for(self, param: SchemaParam) -> list[tuple[Any, str]]:
        """Candidate values for `param`, best first: same-named fields, id fields, same-shaped strings."""
        seen: set[str] = set()
        out: list[tuple[Any, str]] = []

        def add(value: Any, origin: str) -> None:
            k = repr(value)
            if k not in seen and param.admits(value):
                seen.add(k)
                out.append((value, origin))

        for value in param.enum:
            add(value, "schema:enum")
        # `user` is harvested from `user` fields and from the elements of `users` lists.
        same = [
            x for n in (param.name, param.name + "s", param.name + "es") for x in self.by_field.get(n, [])
        ]
        if not same and "_" in param.name:
            # `restaurant_name`: the `name` fields of records under a path that says "restaurant".
            owner, leaf = param.name.rsplit("_", 1)
            same = [(v, o) for v, o in self.by_field.get(leaf, []) if owner in o.lower()]
        for value, origin in same:
            add(value, origin)
        if param.name == "id" or param.name.endswith("_id"):
            stem = param.name[:-3] if param.name.endswith("_id") else ""
            for fname, value, origin in self.all_values:
                if fname in ("id", "id_") and (not stem or stem in origin):
                    add(value, origin)
            for key, origin in self.keys:
                if not stem or stem in origin:
                    add(key, origin)
        # Values shaped like the same-named ones (ISO timestamps, IBANs): a second legal value to vary to.
        shapes = {_shape(v) for v, _ in same if isinstance(v, str)}
        if shapes:
            for _fname, value, origin in self.all_values:
                if isinstance(value, str) and _shape(value) in shapes:
                    add(value, origin)
        fmt = param.time_format
        if fmt:  # timestamps from the snapshot, written the way the docstring asks for them
            for _fname, value, origin in self.all_values:
                stamp = _as_datetime(value)
                if stamp is not None:
                    add(stamp.strftime(fmt), origin)
        numbers = [v for v, _ in out if isinstance(v, (int, float)) and not isinstance(v, bool)]
        if numbers and param.types & {"integer", "number"}:
            bumped = max(numbers) + 1
            add(float(bumped) if "integer" not in param.types else int(bumped), "derived:max+1")
        if "boolean" in param.types:
            add(True, "type:boolean")
            add(False, "type:boolean")
        if not out and "array" in param.types and param.items - {"array", "object"}:
            # A list of names (`restaurant_names`): lists of one, two, and one plus an absent element,
            # from the candidates of one element; an empty list alone would make every reply trivial.
            element = SchemaParam(_singular(param.name), set(param.items), True,
                                  description=param.description)
            elements = self.values_for(element)
            found = [(v, o) for v, o in elements if v and not o.startswith(("type:", "derived:"))]
            absent = [v for v, o in elements if o == "derived:absent"]
            for (a, origin), (b, _) in zip(found, found[1:] + found[:1]):
                add([a], origin)
                if a != b:
                    add([a, b], origin)
                if len(out) >= 4:
                    break
            if found and absent:
                add([found[0][0], absent[0]], "derived:absent")
        if not out and param.description:  # fields the description names ("the name of the company")
            said = re.findall(r"[a-z_]+", param.description.lower())
            words = set(said) | {_singular(w) for w in said}  # "event titles" names the `title` field
            named = [(f, v, o) for f, v, o in self.all_values if f in words]
            # Records under a path the description also names come first ("restaurant" ->
            # /restaurants/restaurant_list/...): the name of a restaurant, not of a hotel.
            named.sort(key=lambda fvo: -sum(w in fvo[2].lower() for w in words if len(w) > 3))
            for _fname, value, origin in named:
                if len(out) >= MAX_FALLBACK:
                    break
                add(value, origin)
        if not out:  # nothing named like it: keys of id-keyed dicts, then any value of its type
            pool = [(k, o) for k, o in self.keys] + [(v, o) for _f, v, o in self.all_values]
            for value, origin in pool:
                if param.types and json_type(value) in param.types - {"null"}:
                    add(value, origin)
                if len(out) >= MAX_FALLBACK:
                    break
        truthy = [v for v, _ in out if isinstance(v, str) and v]
        if "string" in param.types and len(truthy) == 1 and not fmt:
            add(truthy[0] + "-2", "derived:variant")  # a second legal value to vary free text to
        if "string" in param.types and truthy and not fmt:
            # A value no record has, so "must exist" preconditions can be violated.
            digits = [int(v) for v in truthy if v.isdigit()]
            add(str(max(digits) + 1) if digits else truthy[0] + "-absent", "derived:absent")
            if digits:  # an unused id can still occur inside free text; this occurs in no string
                add(self.unseen_text(), "derived:absent")
        for value in param.falsy_values:
            add(value, "type:falsy")
        if param.types & {"integer", "number"}:
            # Below every stored magnitude, so a sign guard (`fee >= 0`) can be violated. After the
            # falsy 0, which the search tries first: it is the boundary of `amount > 0`.
            size = max((abs(v) for v, _ in out if isinstance(v, (int, float)) and not isinstance(v, bool)),
                       default=0) or 1
            add(-float(size) if "integer" not in param.types else -int(size), NEGATIVE)
        if fmt:  # the docstring fixes the format: values written otherwise are not legal calls
            out = [(v, o) for v, o in out if not isinstance(v, str) or not v or _fits(v, fmt)]
        return out

    def unseen_text(self) -> str:
        """A string that is no part of any string in the snapshot ("no match" for a search)."""
        texts = [v for _f, v, _o in self.all_values if isinstance(v, str)]
        candidate, n = "zq-no-match", 0
        while any(candidate in t for t in texts):
            n += 1
            candidate = f"zq-no-match-{n}"
        return candidate

    def current_value(self, param: SchemaParam, base: dict[str, Any]) -> Any:
        """The value field `param.name` has in the record the base assignment addresses (`{id=6}` in
        its path), written in the parameter's documented time format if it has one."""
        marks = {f"={v}}}" for v in base.values() if isinstance(v, (str, int)) and not isinstance(v, bool)}
        marks |= {f"/{v}/" for v in base.values() if isinstance(v, (str, int)) and not isinstance(v, bool)}
        fmt = param.time_format
        for value, origin in self.by_field.get(param.name, []):
            if any(m in origin + "/" for m in marks):
                stamp = _as_datetime(value) if fmt else None
                value = stamp.strftime(fmt) if stamp is not None and fmt else value
                return value if param.admits(value) else None
        return None


def _as_datetime(value: Any) -> _dt.datetime | None:
    if not isinstance(value, str) or len(value) < 10 or not value[:4].isdigit():
        return None
    try:
        return _dt.datetime.fromisoformat(value)
    except ValueError:
        return None


def _singular(name: str) -> str:
    """`restaurant_names` -> `restaurant_name`, `companies` -> `company`, `addresses` -> `address`."""
    if name.endswith("ies"):
        return name[:-3] + "y"
    if name.endswith(("sses", "ches", "shes", "xes")):
        return name[:-2]
    return name[:-1] if name.endswith("s") and not name.endswith("ss") else name


def _trim(values: list[tuple[Any, str]]) -> list[tuple[Any, str]]:
    """At most 2 * MAX_VALUES_PER_ARG harvested values; derived, enum and falsy values are always kept."""
    kept = [x for x in values if x[1].startswith(("derived:", "type:", "schema:"))]
    harvested = [x for x in values if x not in kept][: MAX_VALUES_PER_ARG * 2]
    return harvested + kept


def _fits(text: str, fmt: str) -> bool:
    try:
        _dt.datetime.strptime(text, fmt)
    except ValueError:
        return False
    return True


def _keyed_collection(node: dict[Any, Any]) -> bool:
    """Records keyed by id (`emails: {"0": {...}}`) or by url-like keys, not a record's own fields."""
    if len(node) < 2:
        return False
    if all(isinstance(v, dict) for v in node.values()):
        return True
    return all(isinstance(k, str) and not k.replace("_", "").isalpha() for k in node)


@functools.lru_cache(maxsize=65536)
def _shape(text: str) -> str:
    return re.sub(r"[A-Za-z]", "a", re.sub(r"\d", "9", text))


# --- planning ---------------------------------------------------------------------------------------


class _PreEvaluator:
    """Evaluates precondition predicates on the pristine snapshot for a candidate assignment."""

    def __init__(self, pres: Sequence[Clause], pristine: Any, params: dict[str, SchemaParam]) -> None:
        self.pres = [c for c in pres if c.predicate is not None]
        self.pristine = pristine
        self.params = params
        self.evaluated = 0

    def values(self, args: dict[str, Any]) -> dict[str, bool | None]:
        full = {name: p.default for name, p in self.params.items()}
        full.update(args)
        # Every precondition in one round trip to the predicate sandbox (contracts/sandbox.py).
        outcomes = sandbox.evaluate_many([c.predicate for c in self.pres if c.predicate is not None],
                                         self.pristine, self.pristine, full, None)
        self.evaluated += len(outcomes)
        return {
            c.id: None if isinstance(o, PredicateTypeError) else bool(o) for c, o in zip(self.pres, outcomes)
        }


def effective_arguments(contract: Contract, params: dict[str, SchemaParam]) -> list[str]:
    """Declared `arg.*` arguments, then optional arguments that an effect clause reads."""
    out = [a for a in contract.effective_args if a in params or not params]
    for clause in contract.clauses_of("eff"):
        if clause.predicate is None:
            continue
        for name in sorted(clause.predicate.args_read):
            p = params.get(name)
            if p is not None and not p.required and name not in out:
                out.append(name)
    return out


def writes_nothing(contract: Contract) -> bool:
    """A reader: its contract declares an empty write set (`adapter.frame: []`)."""
    return contract.adapter.get("frame") == []


def varied_arguments(contract: Contract, params: dict[str, SchemaParam]) -> list[str]:
    """The arguments the plan varies one at a time: the effective ones, and for a reader every
    argument an effect clause reads. A reader's arguments show only in its reply, which its effect
    clauses check on each call; a single call on the first harvested value would prove little."""
    out = effective_arguments(contract, params)
    if writes_nothing(contract):
        for clause in contract.clauses_of("eff"):
            for name in sorted(clause.predicate.args_read if clause.predicate else ()):
                if name in params and name not in out:
                    out.append(name)
    return out


def make_plan(contract: Contract, tool_meta: dict[str, Any], pristine: Any,
              happy: dict[str, Any] | None = None) -> Plan:
    """The probe plan; `happy` replaces the searched happy path (after a run-time search found one
    that the tool accepts)."""
    params = params_from_tool(tool_meta)
    harvest = Harvest.of(pristine)
    candidates = {name: _trim(harvest.values_for(p)) for name, p in params.items()}
    _prepend_examples(candidates, tool_meta.get("examples"))
    pres = _PreEvaluator(contract.clauses_of("pre"), pristine, params)
    effective = varied_arguments(contract, params)
    origin = {name: {repr(v): o for v, o in cands} for name, cands in candidates.items()}

    def origins(args: dict[str, Any]) -> dict[str, str]:
        return {k: origin.get(k, {}).get(repr(v), "default") for k, v in args.items()}

    # Happy path: required params from the candidates, effective args set to a non-falsy harvested value.
    names = [n for n, p in params.items() if p.required or n in effective]
    pools: dict[str, list[Any]] = {}
    for n in names:
        pool = [v for v, o in candidates[n] if v is not None and o != NEGATIVE]
        if n in effective:  # a falsy value would hide the effect the happy path is meant to show
            pool = [v for v in pool if v] or pool
        pools[n] = pool or [params[n].default]
    if happy is None:
        happy = _search_satisfying({n: pools[n][0] for n in names}, pools, pres)
    happy_found = happy is not None
    if happy is None:
        happy = {n: pools[n][0] for n in names}
    alternatives = _alternatives(happy, pools, pres)
    probes = [Probe("happy", dict(happy), harvested_from=origins(happy),
                    satisfies=[c for c, v in pres.values(happy).items() if v])]

    # Violating assignment per precondition: one argument at a time from the happy base, then the product.
    unreachable: dict[str, str] = {}
    omittable = [n for n, p in params.items() if not p.required and "null" in p.types]
    for clause in pres.pres:
        found = _find_violating(clause.id, happy, candidates, pres, omittable)
        if found is None:
            unreachable[clause.id] = (
                f"no assignment of values harvested from the snapshot makes {clause.id} false "
                f"(searched {pres.evaluated} assignments over "
                f"{', '.join(sorted(candidates)) or 'no arguments'})"
            )
            continue
        probes.append(Probe("pre_violating", found, clause=clause.id, harvested_from=origins(found)))

    # Per effective argument: assignments differing from the happy path only in that argument.
    falsy_args: list[str] = []
    for name in effective:
        arg_clause = contract.effective_args.get(name)
        harvested = [v for v, o in candidates[name] if v is not None and o != NEGATIVE]
        # The addressed record's current value, a few other legal values, and the type's falsy values:
        # an argument ignored when falsy leaves the same state as the current value does.
        current = harvest.current_value(params[name], happy)

        def legal(value: Any, name: str = name) -> bool:
            trial = dict(happy)
            trial[name] = value
            return all(v is not False for v in pres.values(trial).values())

        values = ([current] if current is not None else []) + [v for v in harvested if v and legal(v)][
            :ARG_VALUES
        ]
        # A derived contract sends a falsy value as a legal input only where a clause says it is legal
        # (TL104's data/schema/code premise), or for a bool, whose False its signature declares.
        unproven = contract.derived and not (arg_clause is not None and arg_clause.falsy_legal) \
            and "boolean" not in params[name].types
        if (arg_clause is not None and arg_clause.falsy_legal is False) or unproven:
            pass
        elif params[name].falsy_values:
            falsy_args.append(name)
            values += [v for v in harvested if not v]
        for value in values:
            args = dict(happy)
            args[name] = value
            if args == happy or not all(v is not False for v in pres.values(args).values()):
                continue
            probes.append(Probe("arg", args, varied=name, harvested_from=origins(args)))
    # A write that never happens hides on the happy record when the call sets the value the record
    # already has (`recurring=True` on a transaction already recurring): the happy value is also set
    # on another legal record whose current value differs.
    for name in effective:
        value = happy.get(name)
        if value is None or harvest.current_value(params[name], happy) != value:
            continue  # the happy call already changes it: its write shows
        for base in alternatives:
            if harvest.current_value(params[name], base) in (None, value):
                continue
            args = dict(base)
            args[name] = value
            if all(v is not False for v in pres.values(args).values()):
                probes.append(Probe("rebased", args, harvested_from=origins(args)))
                break
    # Each optional argument the happy path passes, left out: the branch a docstring gives to null
    # ("If `null`, the end time will be computed...") is a legal call too. Not an `arg` probe: the
    # left-out value usually means "unchanged", which would pair with the current value as ignored.
    for name in [n for n in happy if not params[n].required and "null" in params[n].types]:
        args = {k: v for k, v in happy.items() if k != name}
        if all(v is not False for v in pres.values(args).values()):
            probes.append(Probe("omitted", args, harvested_from=origins(args)))
    if len(falsy_args) >= 2:
        args = dict(happy)
        for name in falsy_args:
            args[name] = params[name].falsy_values[0]
        if all(v is not False for v in pres.values(args).values()):
            probes.append(Probe("joint_falsy", args, harvested_from=origins(args)))
    unique: dict[str, Probe] = {}
    for p in probes:  # a violating probe is kept per clause; other duplicates are dropped
        unique.setdefault(p.key() + (p.clause or ""), p)
    return Plan(list(unique.values()), unreachable, happy_found, params, alternatives)


def _prepend_examples(candidates: dict[str, list[tuple[Any, str]]], examples: Any) -> None:
    """Calls the host declares legal (a benchmark's own gold actions) put their values first, in
    order: the first example becomes the happy path's start, and the next ones the coherent
    alternatives `_alternatives` moves every argument to at once. A record a call needs whole (a
    list of flights with their dates, a payment that adds up) is there; no snapshot field holds it."""
    for n, example in enumerate(reversed(examples if isinstance(examples, list) else [])):
        if not isinstance(example, dict):
            continue
        for name, value in example.items():
            if name in candidates:
                pool = [c for c in candidates[name] if repr(c[0]) != repr(value)]
                candidates[name] = [(value, f"example:{len(examples) - 1 - n}"), *pool]


def _alternatives(happy: dict[str, Any], pools: dict[str, list[Any]], pres: _PreEvaluator,
                  limit: int = MAX_HAPPY_SEARCH) -> list[dict[str, Any]]:
    """Other legal base assignments to try when the tool rejects the happy path: every argument
    moved to its next candidate together (a coherent record), then one argument at a time."""
    out: list[dict[str, Any]] = []
    seen = {repr(sorted(happy.items()))}

    def offer(args: dict[str, Any]) -> None:
        key = repr(sorted(args.items()))
        if key not in seen and all(v is not False for v in pres.values(args).values()):
            seen.add(key)
            out.append(args)

    width = max((len(p) for p in pools.values()), default=0)
    for i in range(1, width):
        offer({n: pool[i % len(pool)] for n, pool in pools.items()})
    for i in range(1, width):
        for name, pool in pools.items():
            if i < len(pool):
                trial = dict(happy)
                trial[name] = pool[i]
                offer(trial)
    return out[:limit]


def _search_satisfying(start: dict[str, Any], pools: dict[str, list[Any]],
                       pres: _PreEvaluator) -> dict[str, Any] | None:
    """An assignment making every precondition true: coordinate ascent from `start` (one argument at
    a time, keeping any value that makes more preconditions true), then the capped product over the
    arguments the still-false preconditions read."""

    def score(args: dict[str, Any]) -> int:
        return sum(1 for v in pres.values(args).values() if v is True)

    goal = len(pres.pres)
    best, best_score = dict(start), score(start)
    improved = True
    while best_score < goal and improved:
        improved = False
        for name, pool in pools.items():
            for value in pool:
                trial = dict(best)
                trial[name] = value
                s = score(trial)
                if s > best_score:
                    best, best_score, improved = trial, s, True
    if best_score == goal:
        return best
    read = {a for c in pres.pres if c.predicate is not None for a in c.predicate.args_read}
    names = [n for n in pools if n in read]
    for combo in itertools.islice(itertools.product(*(pools[n] for n in names)), MAX_PRODUCT):
        trial = dict(best)
        trial.update(zip(names, combo))
        if score(trial) == goal:
            return trial
    return None


def _find_violating(clause_id: str, happy: dict[str, Any], candidates: dict[str, list[tuple[Any, str]]],
                    pres: _PreEvaluator, omittable: Sequence[str] = ()) -> dict[str, Any] | None:
    """A violating assignment: one argument changed from the happy base, then optional arguments
    left out together (None: all of them, then every pair), then the capped product of candidates.
    One that keeps the other preconditions true is preferred."""
    def ok(args: dict[str, Any]) -> tuple[bool, bool]:
        vals = pres.values(args)
        others = all(v is True for k, v in vals.items() if k != clause_id)
        return vals.get(clause_id) is False, others

    fallback = None
    for name, cands in candidates.items():
        for value, _ in cands:
            args = dict(happy)
            args[name] = value
            target, others = ok(args)
            if target and others:
                return args
            if target and fallback is None:
                fallback = args
    # None is never a harvested candidate, so only this step leaves two optional arguments out at once.
    groups = [list(omittable)] + [list(pair) for pair in itertools.combinations(omittable, 2)]
    for group in groups if len(omittable) >= 2 else []:
        args = dict(happy)
        args.update(dict.fromkeys(group))
        target, others = ok(args)
        if target and others:
            return args
        if target and fallback is None:
            fallback = args
    names = list(candidates)
    pools = [[v for v, _ in candidates[n]] or [happy.get(n)] for n in names]
    for combo in itertools.islice(itertools.product(*pools), MAX_PRODUCT):
        args = dict(zip(names, combo))
        target, others = ok(args)
        if target and others:
            return args
        if target and fallback is None:
            fallback = args
    return fallback
