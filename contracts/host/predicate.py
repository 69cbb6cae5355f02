"""Safe predicates: a whitelisted Python expression grammar, compiled once, evaluated on JSON only.

A predicate is one Python expression over four roots: `pre` and `post` (JSON snapshots of the
environment before and after the call), `args` (the call's effective arguments) and `result` (the
tool's JSON-able return value). It is parsed with `ast`, checked against a whitelist, rewritten so
that every attribute read, `**`, `*`, `%` and comprehension iteration goes through a bounded helper,
and compiled. It never sees a live object: snapshots are wrapped in read-only `View`s.

Data access:
    post.bank_account.balance             attribute = dict key (data keys win over any method name)
    post.inbox.emails["12"]               subscript on a dict (key) or a list (index or slice)
    post.slack.users.by(id=args.id)       the one element of a list (or dict values) whose fields
                                          equal the keyword values; None when no element matches
    rows(post.inbox.emails)               the elements of a list, or the values of a dict
    keys(post.slack.user_inbox)           the keys of a dict
    get(post.slack.user_inbox, args.user, [])   a dict lookup with a default

Pure helpers: any all len sum min max abs round sorted set list tuple str int float bool isinstance
(on the type names str int float bool list dict NoneType), plus `rows keys get one approx iso
timestamp`. `args.x` reads None when the argument was not passed.

Work is bounded by a cost model checked before each costly step: exponent, product and `round()`
sizes, the size of every string and list built (repetition, concatenation, `str()`, slices, `rows`,
`list`, `sorted`, ... all count against one budget per evaluation), the total number of
comprehension iterations and the wall-clock time (checked between iterations). Exceeding a bound
raises `PredicateBudgetError` (a `PredicateTypeError`). That model runs in whatever process calls
`evaluate`; `toollint.contracts.sandbox` evaluates under hard, kernel-enforced memory and CPU limits
as well, and the checker, the probe planner and replay evaluate there.

`Predicate.paths` are the canonical state paths the predicate reads, in the format
`toollint.analysis` uses: environment field names joined by dots, element selection as `[*]`, the
`pre`/`post` root stripped (`bank_account.scheduled_transactions[*].amount`).
"""

from __future__ import annotations

import ast
import datetime as _dt
import math
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from types import CodeType
from typing import Any

ROOTS = ("pre", "post", "args", "result")
STATE_ROOTS = ("pre", "post")

MAX_SOURCE_CHARS = 2000
MAX_NODES = 400
MAX_ITERATIONS = 200_000  # comprehension steps per evaluation, all comprehensions together
MAX_SEQUENCE = 100_000  # elements/characters a repetition may produce
MAX_POW_BITS = 4096  # bits an integer power may produce
MAX_EXPONENT = 1024  # for float powers
MAX_SECONDS = 3.0  # wall clock per evaluation, checked between comprehension steps (the sandbox kills at 4 s)
MAX_BUILT = 8_000_000  # characters and elements all the strings and lists one evaluation builds may hold
MAX_INT_BITS = 4096  # bits an integer product may have (repeated squaring doubles them per step)
MAX_ROUND_DIGITS = 1000  # |ndigits| of round(): round(1, -3 * 10**7) computes 10 ** 30000000

TYPE_NAMES: dict[str, type | tuple[type, ...]] = {
    "str": str,
    "int": int,
    "float": (int, float),
    "bool": bool,
    "list": (list, tuple),
    "dict": dict,
    "NoneType": type(None),
}


class ForbiddenPredicate(Exception):
    """A predicate uses a construct outside the grammar. Positions are relative to the contract file."""

    def __init__(self, message: str, *, filename: str = "<predicate>", line: int = 1, col: int = 1,
                 construct: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.filename = filename
        self.line = line
        self.col = col
        self.construct = construct

    def __str__(self) -> str:
        return f"{self.filename}:{self.line}:{self.col}: {self.message}"


class PredicateTypeError(Exception):
    """Evaluation failed on the data (wrong type, missing key, bad value). Maps to UNTESTABLE."""


class PredicateBudgetError(PredicateTypeError):
    """Evaluation exceeded a work bound (iterations, repetition, exponent)."""


# --- the data model: read-only views over JSON ------------------------------------------------------


class View:
    """A read-only view of a JSON dict or list. Attribute access reads dict keys."""

    __slots__ = ("_data",)

    def __init__(self, data: dict[str, Any] | list[Any]) -> None:
        object.__setattr__(self, "_data", data)

    def __getattr__(self, name: str) -> Any:
        # Only reached for names that are not slots; predicates never reach it directly (see _attr).
        raise AttributeError(name)

    def __setattr__(self, name: str, value: Any) -> None:
        raise PredicateTypeError("snapshots are read-only")

    def __getitem__(self, key: Any) -> Any:
        data = self._data
        if isinstance(key, View):
            key = key._data
        try:
            if isinstance(data, list) and isinstance(key, slice):
                return View(data[key])
            return wrap(data[key])
        except KeyError:
            raise PredicateTypeError(f"no key {key!r}") from None
        except IndexError:
            raise PredicateTypeError(f"index {key!r} out of range (length {len(data)})") from None
        except TypeError as exc:
            raise PredicateTypeError(f"bad subscript {key!r}: {exc}") from None

    def __iter__(self) -> Iterator[Any]:
        # Iterating a dict yields its keys, as in Python; rows() gives the values.
        return (wrap(x) for x in self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, item: Any) -> bool:
        raw = unwrap(item)
        try:
            return raw in self._data
        except TypeError:
            return False

    def __eq__(self, other: object) -> bool:
        return bool(self._data == unwrap(other))

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        raise PredicateTypeError("a dict or list cannot be a set element or dict key")

    def __bool__(self) -> bool:
        return bool(self._data)

    def __repr__(self) -> str:
        return f"View({self._data!r})"

    @property
    def raw(self) -> dict[str, Any] | list[Any]:
        return self._data  # type: ignore[no-any-return]


class ArgsView(View):
    """`args`: an argument that was not passed reads as None (its default for optional parameters)."""

    __slots__ = ()

    def __getitem__(self, key: Any) -> Any:
        data = self.raw
        key = unwrap(key)
        return wrap(data.get(key)) if isinstance(data, dict) and isinstance(key, str) else None


def wrap(value: Any) -> Any:
    if isinstance(value, (dict, list)):
        return View(value)
    if isinstance(value, tuple):
        return View(list(value))
    return value


def unwrap(value: Any) -> Any:
    return value._data if isinstance(value, View) else value


def _type_name(value: Any) -> str:
    raw = unwrap(value)
    return "null" if raw is None else type(raw).__name__


# --- rewritten operations (called from compiled code under reserved names) -----------------------------


class _Budget:
    """The work one evaluation may do: comprehension steps, wall-clock time, items built."""

    __slots__ = ("built", "deadline", "steps")

    def __init__(self) -> None:
        self.steps = 0
        self.built = 0
        self.deadline = time.monotonic() + MAX_SECONDS

    def charge(self, items: int, what: str) -> None:
        """Count `items` characters or elements about to be built; over MAX_BUILT it is refused."""
        self.built += items
        if self.built > MAX_BUILT:
            raise PredicateBudgetError(f"{what} would bring what this evaluation built to {self.built} "
                                       f"characters/elements (cap {MAX_BUILT})")


_current = threading.local()  # the budget of the evaluation running on this thread


def _budget() -> _Budget:
    budget = getattr(_current, "budget", None)
    if budget is None:  # a helper called outside an evaluation (tests): a budget of its own
        budget = _current.budget = _Budget()
    return budget  # type: ignore[no-any-return]


def _attr(obj: Any, name: str) -> Any:
    if isinstance(obj, ArgsView):
        data = obj.raw
        return wrap(data.get(name)) if isinstance(data, dict) else None
    if isinstance(obj, View):
        data = obj.raw
        if isinstance(data, dict):
            if name in data:
                return wrap(data[name])
            raise PredicateTypeError(f"no field {name!r} (fields: {', '.join(sorted(map(str, data))[:12])})")
        raise PredicateTypeError(f"cannot read field {name!r} of a list")
    raise PredicateTypeError(f"cannot read field {name!r} of {_type_name(obj)}")


def _by(obj: Any, **fields: Any) -> Any:
    """The unique element of a list (or of a dict's values) whose fields equal `fields`; None if none."""
    if not fields:
        raise PredicateTypeError("by() needs at least one field=value")
    want = {k: unwrap(v) for k, v in fields.items()}
    matches = []
    for row in _rows(obj):
        data = unwrap(row)
        if isinstance(data, dict) and all(k in data and data[k] == v for k, v in want.items()):
            matches.append(row)
    if len(matches) > 1:
        raise PredicateTypeError(f"by({', '.join(f'{k}={v!r}' for k, v in want.items())}) matches "
                                 f"{len(matches)} elements")
    return matches[0] if matches else None


def _rows(obj: Any) -> Any:
    data = unwrap(obj)
    if isinstance(data, dict):
        _budget().charge(len(data), "rows()")
        return View(list(data.values()))
    if isinstance(data, list):
        return View(data)
    raise PredicateTypeError(f"rows() needs a list or dict, got {_type_name(obj)}")


def _keys(obj: Any) -> Any:
    data = unwrap(obj)
    if isinstance(data, dict):
        _budget().charge(len(data), "keys()")
        return View(list(data.keys()))
    raise PredicateTypeError(f"keys() needs a dict, got {_type_name(obj)}")


def _get(obj: Any, key: Any, default: Any = None) -> Any:
    data = unwrap(obj)
    if not isinstance(data, dict):
        raise PredicateTypeError(f"get() needs a dict, got {_type_name(obj)}")
    key = unwrap(key)
    if not isinstance(key, (str, int, float, bool)) and key is not None:
        raise PredicateTypeError(f"get() key must be a scalar, got {_type_name(key)}")
    return wrap(data[key]) if key in data else default


def _one(obj: Any) -> Any:
    items = list(_rows(obj))
    if len(items) != 1:
        raise PredicateTypeError(f"one() needs exactly one element, got {len(items)}")
    return items[0]


def _approx(a: Any, b: Any, tol: Any = 1e-9) -> bool:
    a, b, tol = unwrap(a), unwrap(b), unwrap(tol)
    if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (a, b, tol)):
        raise PredicateTypeError("approx() needs numbers")
    return math.isclose(a, b, rel_tol=tol, abs_tol=tol)


def _parse_datetime(value: Any) -> _dt.datetime:
    raw = unwrap(value)
    if not isinstance(raw, str):
        raise PredicateTypeError(f"expected an ISO date/time string, got {_type_name(raw)}")
    try:
        parsed = _dt.datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        raise PredicateTypeError(f"not an ISO date/time: {raw!r}") from None
    return parsed


def _iso(value: Any) -> str:
    """Canonical ISO-8601 form, so '2024-05-01 10:00' equals the snapshot's '2024-05-01T10:00:00'."""
    return _parse_datetime(value).isoformat()


def _timestamp(value: Any) -> float:
    """Seconds since the epoch (naive times taken as UTC), for durations and ordering."""
    parsed = _parse_datetime(value)
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=_dt.timezone.utc)
    return parsed.timestamp()


def _isinstance(value: Any, type_name: Any) -> bool:
    raw = unwrap(value)
    type_name = _HELPER_TYPE_NAMES.get(id(type_name), type_name)
    if isinstance(type_name, str) and type_name in TYPE_NAMES:
        target = TYPE_NAMES[type_name]
        if type_name in ("int", "float") and isinstance(raw, bool):
            return False
        return isinstance(raw, target)
    raise PredicateTypeError(f"isinstance() takes a type name in quotes: one of {', '.join(TYPE_NAMES)}")


def _seq_len(value: Any) -> int | None:
    raw = unwrap(value)
    return len(raw) if isinstance(raw, (str, list, tuple)) else None


def _mul(a: Any, b: Any) -> Any:
    for seq, count in ((a, b), (b, a)):
        n = _seq_len(seq)
        if n is not None and isinstance(count, int):
            if n * max(count, 0) > MAX_SEQUENCE:
                raise PredicateBudgetError(f"repetition would produce {n * count} items (cap {MAX_SEQUENCE})")
            _budget().charge(n * max(count, 0), "a repetition")
            return wrap(unwrap(seq) * count)
    a, b = unwrap(a), unwrap(b)
    if isinstance(a, int) and isinstance(b, int) and a.bit_length() + b.bit_length() > MAX_INT_BITS:
        # Squaring in nested comprehensions doubles the bits per level: 20 levels made a 400 MB integer.
        raise PredicateBudgetError(f"a product of {a.bit_length()}- and {b.bit_length()}-bit integers is too "
                                   f"large (cap {MAX_INT_BITS} bits)")
    return a * b


def _pow(a: Any, b: Any) -> Any:
    a, b = unwrap(a), unwrap(b)
    if isinstance(a, int) and isinstance(b, int):
        if b > 0 and abs(a) > 1 and abs(a).bit_length() * b > MAX_POW_BITS:
            raise PredicateBudgetError(f"{a} ** {b} is too large (cap {MAX_POW_BITS} bits)")
    elif isinstance(b, (int, float)) and abs(b) > MAX_EXPONENT:
        raise PredicateBudgetError(f"exponent {b} is too large (cap {MAX_EXPONENT})")
    return a**b


def _mod(a: Any, b: Any) -> Any:
    if isinstance(unwrap(a), str):
        raise PredicateTypeError("'%' string formatting is not allowed")
    return unwrap(a) % unwrap(b)


def _add(a: Any, b: Any) -> Any:
    a, b = unwrap(a), unwrap(b)
    if isinstance(a, (str, list, tuple)) and isinstance(b, (str, list, tuple)):
        _budget().charge(len(a) + len(b), "a concatenation")  # `x + x` nested doubles per level
    return wrap(a + b)


def _slice(obj: Any, lower: Any, upper: Any, step: Any) -> Any:
    """`x[a:b:c]`: a copy, so it counts against the budget (a slice per iteration of a loop adds up)."""
    key = slice(unwrap(lower), unwrap(upper), unwrap(step))
    if isinstance(obj, View):
        out = obj[key]
    elif isinstance(obj, (str, list, tuple)):
        try:
            out = wrap(obj[key])
        except TypeError as exc:
            raise PredicateTypeError(f"bad slice: {exc}") from None
    else:
        raise PredicateTypeError(f"cannot slice {_type_name(obj)}")
    _budget().charge(_seq_len(out) or 0, "a slice")
    return out


def _round(*a: Any) -> Any:
    values = [unwrap(x) for x in a]
    if len(values) == 2 and isinstance(values[1], int) and abs(values[1]) > MAX_ROUND_DIGITS:
        raise PredicateBudgetError(f"round() to {values[1]} digits is too costly (cap {MAX_ROUND_DIGITS})")
    return round(*values)


def repr_size(value: Any, cap: int) -> int:
    """A lower estimate of `len(str(value))` for JSON-like data, walked without recursion and
    stopped once it passes `cap` (so a list of 100k references to one 100k-character string is not
    walked to the end)."""
    size = 0
    todo = [value]
    while todo:
        item = unwrap(todo.pop())
        if isinstance(item, str):
            size += len(item) + 2
        elif isinstance(item, bool) or item is None:
            size += 5
        elif isinstance(item, int):
            size += item.bit_length() * 30103 // 100000 + 2
        elif isinstance(item, float):
            size += 8
        elif isinstance(item, dict):
            size += 2 + 4 * len(item)
            todo.extend(item.keys())
            todo.extend(item.values())
        elif isinstance(item, (list, tuple, set, frozenset)):
            size += 2 + 2 * len(item)
            todo.extend(item)
        else:
            size += 16
        if size > cap:
            return size
    return size


def _str(value: Any = "") -> Any:
    raw = unwrap(value)
    budget = _budget()
    if isinstance(raw, (dict, list, tuple, set, frozenset)):
        budget.charge(repr_size(raw, MAX_BUILT - budget.built + 1), "str()")
    out = str(raw)
    if not isinstance(raw, str):
        budget.charge(len(out) // 4, "str()")  # escapes the estimate did not see
    return out


def _make_iter(budget: _Budget) -> Callable[[Any], Iterator[Any]]:
    def bounded(iterable: Any) -> Iterator[Any]:
        if not isinstance(iterable, (View, str, set, frozenset, list, tuple)):
            raise PredicateTypeError(f"cannot iterate over {_type_name(iterable)}")
        for item in iterable:
            budget.steps += 1
            if budget.steps > MAX_ITERATIONS:
                raise PredicateBudgetError(f"more than {MAX_ITERATIONS} comprehension steps")
            if budget.steps % 64 == 0 and time.monotonic() > budget.deadline:
                raise PredicateBudgetError(f"evaluation took longer than {MAX_SECONDS:g} s")
            yield item

    return bounded


def _unwrapping(fn: Callable[..., Any]) -> Callable[..., Any]:
    """A builtin applied to plain data; containers it returns are wrapped again."""

    def call(*a: Any) -> Any:
        return wrap(fn(*(unwrap(x) if not isinstance(x, Iterator) else x for x in a)))

    call.__name__ = fn.__name__
    return call


def _sorted(values: Any) -> Any:
    out = sorted(unwrap(x) for x in (values if isinstance(values, (View, Iterator)) else unwrap(values)))
    _budget().charge(len(out), "sorted()")
    return View(out)


def _set(values: Any = ()) -> set[Any]:
    out = {unwrap(x) for x in values}
    _budget().charge(len(out), "set()")
    return out


def _list(values: Any = ()) -> Any:
    out = [unwrap(x) for x in values]
    _budget().charge(len(out), "list()")
    return View(out)


def _len(value: Any) -> int:
    if isinstance(value, (View, str)):
        return len(value)
    if isinstance(value, (set, frozenset, tuple, list)):
        return len(value)
    raise PredicateTypeError(f"len() of {_type_name(value)}")


def _num_reduce(fn: Callable[..., Any]) -> Callable[..., Any]:
    def call(*a: Any) -> Any:
        if len(a) == 1:
            return fn(unwrap(x) for x in a[0])
        return fn(*(unwrap(x) for x in a))

    call.__name__ = fn.__name__
    return call


HELPERS: dict[str, Callable[..., Any]] = {
    "any": lambda it: any(unwrap(x) for x in it),
    "all": lambda it: all(unwrap(x) for x in it),
    "len": _len,
    "sum": lambda it: sum(unwrap(x) for x in it),
    "min": _num_reduce(min),
    "max": _num_reduce(max),
    "abs": _unwrapping(abs),
    "round": _round,
    "sorted": _sorted,
    "set": _set,
    "list": _list,
    "tuple": _list,
    "str": _str,
    "int": _unwrapping(int),
    "float": _unwrapping(float),
    "bool": _unwrapping(bool),
    "isinstance": _isinstance,
    "rows": _rows,
    "keys": _keys,
    "get": _get,
    "one": _one,
    "approx": _approx,
    "iso": _iso,
    "timestamp": _timestamp,
}
# `isinstance(x, str)` passes the `str` helper itself; map it back to its type name.
_HELPER_TYPE_NAMES = {id(HELPERS[n]): n for n in ("str", "int", "float", "bool", "list")}
# Helpers whose result stands for elements of their first argument, for path extraction.
_ELEMENT_HELPERS = {"get", "one"}
_COLLECTION_HELPERS = {"rows"}  # the same collection, iterable as a list (`keys` yields keys, not state)
METHODS = {"by"}  # the only call allowed on an attribute: `coll.by(field=value)`

# Reserved names the rewriter introduces; source names may not start with `_`, so these are unreachable.
_R_ATTR, _R_BY, _R_MUL, _R_POW, _R_MOD, _R_ADD, _R_ITER, _R_SLICE = (
    "__attr", "__by", "__mul", "__pow", "__mod", "__add", "__iter", "__slice")


# --- the grammar ---------------------------------------------------------------------------------------

_ALLOWED_NODES: tuple[type[ast.AST], ...] = (
    ast.Expression, ast.BoolOp, ast.And, ast.Or, ast.UnaryOp, ast.Not, ast.USub, ast.UAdd,
    ast.BinOp, ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow,
    ast.Compare, ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.In, ast.NotIn, ast.Is, ast.IsNot,
    ast.IfExp, ast.Constant, ast.List, ast.Tuple, ast.Set, ast.Dict, ast.Subscript, ast.Slice,
    ast.Attribute, ast.Name, ast.Load, ast.Store, ast.GeneratorExp, ast.ListComp, ast.SetComp,
    ast.DictComp, ast.comprehension, ast.Call, ast.keyword,
)

_CONSTRUCT_NAMES: dict[type[ast.AST], str] = {
    ast.Lambda: "lambda", ast.NamedExpr: "walrus (:=)", ast.JoinedStr: "f-string",
    ast.FormattedValue: "f-string", ast.Starred: "starred expression", ast.Await: "await",
    ast.Yield: "yield", ast.YieldFrom: "yield", ast.BitAnd: "bitwise operator", ast.BitOr: "bitwise operator",
    ast.BitXor: "bitwise operator", ast.LShift: "shift operator", ast.RShift: "shift operator",
    ast.Invert: "bitwise operator", ast.MatMult: "matrix multiplication",
}


@dataclass(frozen=True)
class Predicate:
    """A compiled predicate. Evaluate with `evaluate(pre, post, args, result)`."""

    source: str
    code: CodeType = field(repr=False, compare=False)
    paths: frozenset[str] = frozenset()  # canonical state paths read
    args_read: frozenset[str] = frozenset()  # argument names read via `args.x`
    reads_result: bool = False

    @property
    def is_trivial(self) -> bool:
        """The draft placeholder `True`."""
        return self.source.strip() == "True"

    def evaluate(self, pre: Any, post: Any, args: Mapping[str, Any] | None, result: Any, *,
                 overrides: Mapping[str, Any] | None = None) -> bool:
        """`overrides` replaces entries of the evaluation namespace (`contracts.bindings` traces reads)."""
        budget = _Budget()
        env: dict[str, Any] = {"__builtins__": {}}
        env.update(HELPERS)
        env.update({
            _R_ATTR: _attr, _R_BY: _by, _R_MUL: _mul, _R_POW: _pow, _R_MOD: _mod, _R_ADD: _add,
            _R_ITER: _make_iter(budget), _R_SLICE: _slice,
            # Roots go in globals: generator expressions are nested scopes and do not see eval's locals.
            "pre": wrap(pre), "post": wrap(post), "args": ArgsView(dict(args or {})), "result": wrap(result),
        })
        env.update(overrides or {})
        outer = getattr(_current, "budget", None)
        _current.budget = budget
        try:
            value = eval(self.code, env)
        except PredicateTypeError:
            raise
        except MemoryError:
            raise PredicateBudgetError("evaluation ran out of memory") from None
        except (TypeError, ValueError, KeyError, IndexError, ZeroDivisionError, OverflowError,
                AttributeError, RecursionError) as exc:
            raise PredicateTypeError(f"{type(exc).__name__}: {exc}") from None
        finally:
            _current.budget = outer
        value = unwrap(value)
        if not isinstance(value, bool):
            raise PredicateTypeError(f"predicate gave {_type_name(value)}, not true/false")
        return value


def compile_predicate(
    source: str, *, filename: str = "<predicate>", line: int = 1, col: int = 1
) -> Predicate:
    """Check `source` against the grammar and compile it. `line`/`col` place the predicate in its file,
    so errors point into the contract. Raises `ForbiddenPredicate`."""

    def fail(message: str, node: ast.AST | None = None, construct: str = "") -> ForbiddenPredicate:
        # Operator nodes carry no position; they are reported at the predicate's start (offset 1,
        # after the parenthesis the parser is given).
        node_line = getattr(node, "lineno", 1)
        node_col = getattr(node, "col_offset", 1)
        return ForbiddenPredicate(
            message, filename=filename, line=line + node_line - 1,
            col=(col + node_col) if node_line == 1 else node_col + 1, construct=construct or message,
        )

    if not isinstance(source, str) or not source.strip():
        raise fail("empty predicate", construct="empty")
    if len(source) > MAX_SOURCE_CHARS:
        raise fail(f"predicate is {len(source)} characters long (limit {MAX_SOURCE_CHARS})", construct="size")
    text = source.strip()
    # Parenthesised, so a predicate may span lines as YAML block scalars leave them; columns on the
    # first line shift by the one added character.
    col -= 1
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:  # a lone surrogate (a "\udcff" escape in YAML) is no character
        raise fail(f"predicate holds {text[exc.start]!r}, an unpaired surrogate, which is not a character",
                   construct="syntax") from None
    try:
        tree = ast.parse(f"({text}\n)", mode="eval")
    except SyntaxError as exc:
        err = ForbiddenPredicate(f"not a Python expression: {exc.msg}", filename=filename,
                                 line=line + min(exc.lineno or 1, text.count("\n") + 1) - 1,
                                 col=max(col + (exc.offset or 1) - 1, 1),
                                 construct="syntax")
        raise err from None
    nodes = list(ast.walk(tree))
    if len(nodes) > MAX_NODES:
        raise fail(f"predicate has {len(nodes)} syntax nodes (limit {MAX_NODES})", construct="size")
    _check_grammar(tree, fail)
    paths, args_read, reads_result = _extract_paths(tree)
    rewritten = ast.fix_missing_locations(_Rewriter().visit(tree))
    code = compile(rewritten, filename, "eval")
    return Predicate(text, code, frozenset(paths), frozenset(args_read), reads_result)


def _check_grammar(tree: ast.Expression, fail: Callable[..., ForbiddenPredicate]) -> None:
    # Three passes, so the most telling construct is named: node kinds first (lambda, walrus, ...),
    # then reaches into internals (`_`-names), then calls and constants.
    # In source order, innermost first, so `pre.__class__.__mro__` names `__class__`.
    nodes = sorted(
        ast.walk(tree),
        key=lambda n: (
            getattr(n, "lineno", 0),
            getattr(n, "col_offset", 0),
            getattr(n, "end_lineno", 0),
            getattr(n, "end_col_offset", 0),
        ),
    )
    for node in nodes:
        if isinstance(node, tuple(_CONSTRUCT_NAMES)):
            name = _CONSTRUCT_NAMES[type(node)]
            raise fail(f"{name} is not allowed in a predicate", node, name)
    for node in nodes:
        if not isinstance(node, _ALLOWED_NODES):
            name = type(node).__name__
            raise fail(f"{name} is not allowed in a predicate", node, name)
    for node in nodes:
        if isinstance(node, ast.Attribute) and node.attr.startswith("_"):
            raise fail(f"attribute {node.attr!r} is not allowed (names starting with '_' are internal)",
                       node, "underscore attribute")
        if isinstance(node, ast.Name) and node.id.startswith("_"):
            raise fail(f"name {node.id!r} is not allowed (names starting with '_' are internal)",
                       node, "underscore name")
    for node in nodes:
        if isinstance(node, ast.Constant) and not (
            node.value is None or isinstance(node.value, (str, int, float, bool))
        ):
            raise fail(f"constant of type {type(node.value).__name__} is not allowed", node, "constant")
        if isinstance(node, ast.comprehension) and node.is_async:
            raise fail("async comprehension is not allowed", node, "async comprehension")
        if isinstance(node, ast.Call):
            _check_call(node, fail)
    _check_names(tree.body, set(), fail)


def _check_call(node: ast.Call, fail: Callable[..., ForbiddenPredicate]) -> None:
    func = node.func
    if isinstance(func, ast.Attribute):
        if func.attr not in METHODS:
            raise fail(f"call of method {func.attr!r} is not allowed (only .by(field=value))", node,
                       f"method call .{func.attr}()")
        if node.args or not node.keywords or any(k.arg is None for k in node.keywords):
            raise fail(".by() takes keyword arguments only, e.g. .by(id=args.id)", node, "by() arguments")
        return
    if not isinstance(func, ast.Name):
        raise fail("only named helpers can be called", node, "computed call")
    if func.id not in HELPERS:
        raise fail(f"call of {func.id!r} is not allowed (allowed: {', '.join(sorted(HELPERS))})", node,
                   f"call {func.id}()")
    if node.keywords:
        raise fail(f"{func.id}() takes no keyword arguments here", node, "keyword argument")


def _check_names(node: ast.AST, bound: set[str], fail: Callable[..., ForbiddenPredicate]) -> None:
    """No free names: roots, helpers and comprehension targets only (comprehension scoping respected)."""
    if isinstance(node, (ast.GeneratorExp, ast.ListComp, ast.SetComp, ast.DictComp)):
        scope = set(bound)
        for gen in node.generators:
            _check_names(gen.iter, scope, fail)
            for target in ast.walk(gen.target):
                if isinstance(target, ast.Name):
                    if target.id in ROOTS or target.id in HELPERS:
                        raise fail(f"comprehension variable {target.id!r} shadows a root or helper", target,
                                   "shadowing")
                    scope.add(target.id)
                elif not isinstance(target, (ast.Tuple, ast.Store)):
                    raise fail("comprehension targets must be names or tuples of names", target, "target")
            for cond in gen.ifs:
                _check_names(cond, scope, fail)
        elts = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
        for elt in elts:
            _check_names(elt, scope, fail)
        return
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
        if node.id not in bound and node.id not in ROOTS and node.id not in HELPERS:
            raise fail(f"free name {node.id!r} (allowed roots: {', '.join(ROOTS)})", node, "free name")
        return
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        for child in [*node.args, *node.keywords]:
            _check_names(child, bound, fail)
        return
    for child in ast.iter_child_nodes(node):
        _check_names(child, bound, fail)


class _Rewriter(ast.NodeTransformer):
    """Route attribute reads, `.by()`, `*`, `**`, `%`, `+` and comprehension iteration through the
    bounded helpers, so no attribute of a real Python object is ever read by predicate code."""

    @staticmethod
    def _call(name: str, args: list[ast.expr], keywords: list[ast.keyword] | None = None) -> ast.Call:
        return ast.Call(func=ast.Name(id=name, ctx=ast.Load()), args=args, keywords=keywords or [])

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        value = self.visit(node.value)
        return ast.copy_location(self._call(_R_ATTR, [value, ast.Constant(node.attr)]), node)

    def visit_Call(self, node: ast.Call) -> ast.AST:
        if isinstance(node.func, ast.Attribute):  # .by(...)
            target = self.visit(node.func.value)
            keywords = [ast.keyword(arg=k.arg, value=self.visit(k.value)) for k in node.keywords]
            return ast.copy_location(self._call(_R_BY, [target], keywords), node)
        node.args = [self.visit(a) for a in node.args]
        return node

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        left, right = self.visit(node.left), self.visit(node.right)
        helper = {ast.Mult: _R_MUL, ast.Pow: _R_POW, ast.Mod: _R_MOD, ast.Add: _R_ADD}.get(type(node.op))
        if helper is None:
            node.left, node.right = left, right
            return node
        return ast.copy_location(self._call(helper, [left, right]), node)

    def visit_Subscript(self, node: ast.Subscript) -> ast.AST:
        if not isinstance(node.slice, ast.Slice):
            return self.generic_visit(node)
        value = self.visit(node.value)
        parts = [self.visit(p) if p is not None else ast.Constant(None)
                 for p in (node.slice.lower, node.slice.upper, node.slice.step)]
        return ast.copy_location(self._call(_R_SLICE, [value, *parts]), node)

    def visit_comprehension(self, node: ast.comprehension) -> ast.AST:
        node.iter = self._call(_R_ITER, [self.visit(node.iter)])
        node.ifs = [self.visit(c) for c in node.ifs]
        return node


# --- state paths ------------------------------------------------------------------------------------


def _extract_paths(tree: ast.Expression) -> tuple[set[str], set[str], bool]:
    paths: set[str] = set()
    args_read: set[str] = set()
    reads_result = False

    def chain(node: ast.AST, scope: dict[str, str | None]) -> str | None:
        """The canonical path of an expression rooted at pre/post ("" for the root), else None."""
        if isinstance(node, ast.Name):
            if node.id in STATE_ROOTS:
                return ""
            return scope.get(node.id)
        if isinstance(node, ast.Attribute):
            base = chain(node.value, scope)
            if base is None:
                return None
            return f"{base}.{node.attr}" if base else node.attr
        if isinstance(node, ast.Subscript):
            base = chain(node.value, scope)
            if base is not None and isinstance(node.slice, ast.Slice):
                return base  # `e.start_time[:10]`: a part of the same field, not an element of it
            return None if base is None else _element(base)
        if _is_filter(node):
            # `[t for t in coll if ...]` selects elements of `coll`: treat it as the collection.
            gen = node.generators[0]  # type: ignore[attr-defined]
            inner = dict(scope)
            inner.pop(gen.target.id, None)
            return chain(gen.iter, inner)
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Attribute) and node.func.attr in METHODS:
                base = chain(node.func.value, scope)
                if base is None:
                    return None
                for kw in node.keywords:
                    if kw.arg:
                        paths.add(f"{_element(base)}.{kw.arg}")
                return _element(base)
            if isinstance(node.func, ast.Name) and node.args:
                if node.func.id in _ELEMENT_HELPERS:
                    base = chain(node.args[0], scope)
                    return None if base is None else _element(base)
                if node.func.id in _COLLECTION_HELPERS:
                    return chain(node.args[0], scope)
        return None

    def visit(node: ast.AST, scope: dict[str, str | None]) -> None:
        nonlocal reads_result
        path = None if _is_comprehension(node) else chain(node, scope)
        if path is not None:
            if path:
                paths.add(path)
            # Descend only into the parts of the chain that are not the chain itself.
            for sub in _chain_side_parts(node):
                visit(sub, scope)
            return
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "args":
            args_read.add(node.attr)
            return
        if isinstance(node, ast.Name) and node.id == "result":
            reads_result = True
            return
        if isinstance(node, (ast.GeneratorExp, ast.ListComp, ast.SetComp, ast.DictComp)):
            inner = dict(scope)
            for gen in node.generators:
                visit(gen.iter, inner)
                source = chain(gen.iter, inner)
                for target in ast.walk(gen.target):
                    if isinstance(target, ast.Name):
                        # A tuple target's parts are not modelled; the element path is a fair
                        # over-approximation.
                        inner[target.id] = _element(source) if source is not None else None
                for cond in gen.ifs:
                    visit(cond, inner)
            for elt in ([node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]):
                visit(elt, inner)
            return
        for child in ast.iter_child_nodes(node):
            visit(child, scope)

    visit(tree.body, {})
    return paths, args_read, reads_result


def _is_comprehension(node: ast.AST) -> bool:
    return isinstance(node, (ast.GeneratorExp, ast.ListComp, ast.SetComp, ast.DictComp))


def _is_filter(node: ast.AST) -> bool:
    """A one-generator comprehension yielding its own target: a filtered view of a collection."""
    return (isinstance(node, (ast.GeneratorExp, ast.ListComp, ast.SetComp)) and len(node.generators) == 1
            and isinstance(node.elt, ast.Name) and isinstance(node.generators[0].target, ast.Name)
            and node.elt.id == node.generators[0].target.id)


def _element(base: str) -> str:
    return f"{base}[*]" if base else "[*]"


def _chain_side_parts(node: ast.AST) -> Iterable[ast.AST]:
    """Sub-expressions hanging off a path chain: subscript keys, by() values, extra helper arguments."""
    while True:
        if _is_comprehension(node):
            yield node  # visited in full, with its own scope
            return
        if isinstance(node, ast.Attribute):
            node = node.value
        elif isinstance(node, ast.Subscript):
            yield node.slice
            node = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            yield from (k.value for k in node.keywords)
            node = node.func.value
        elif isinstance(node, ast.Call) and node.args:
            yield from node.args[1:]
            node = node.args[0]
        else:
            return
