"""Bindings: the state values a predicate really read, under the keys it really used.

A witness says why a clause was false: `pre.agent_db.lines{line_id=L1003}.status` was `'Suspended'`.
Guessing those paths from the predicate's canonical paths afterwards (`lines[*].status`) cannot know
which element or key the predicate picked; a record has several `*_id` fields, and a dict keyed by
cabin has three keys. So the predicate is evaluated once more with its state roots wrapped in views
that carry their path, and every leaf read records the path it came through:

- attribute `x.f` -> `.f`; a dict subscript `d[k]` (also `get(d, k)`) -> `['k']`;
- a list element, by subscript, iteration or `rows()` -> the list's identity segment
  (`{line_id=L1003}`, `dynamic.jsondiff.key_segment`, the same key the diff uses), else `[i]`;
- `coll.by(f=v)` -> `{f=v}`: the fields the predicate selected with.

A value read from `post` is shown with the value at the same path before the call (a write that did
not happen reads the same in both), reads inside the records the call's arguments name come first,
and identity fields are left out (the segment already shows them).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any, NamedTuple

from toollint.contracts.host.predicate import (
    _R_ATTR,
    _R_BY,
    Predicate,
    PredicateTypeError,
    View,
    _attr,
    _by,
    unwrap,
    wrap,
)
from toollint.dynamic.host.jsondiff import identity_field, key_segment

MAX_BINDINGS = 8
MAX_LIST = 8  # a list of scalars longer than this is not shown as a value


# A path is a tuple of steps: ("attr", name), ("key", key), ("elem", field, value, index), ("by", fields).
Step = tuple[Any, ...]


class Read(NamedTuple):
    """One leaf read, as `trace` returns it."""

    root: str  # pre / post
    steps: tuple[Step, ...]
    value: Any

    @property
    def expr(self) -> str:
        return render(self.root, self.steps)


def render(root: str, steps: tuple[Step, ...]) -> str:
    out = root
    for step in steps:
        if step[0] == "attr":
            out += f".{step[1]}"
        elif step[0] == "key":
            out += f"[{step[1]!r}]"
        elif step[0] == "elem":
            _, field, value, index = step
            out += key_segment(field, {field: value}, index) if field is not None else f"[{index}]"
        else:  # by
            out += "{" + ",".join(f"{k}={v}" for k, v in step[1]) + "}"
    return out


class _Tracer:
    def __init__(self) -> None:
        # Each read as three parallel entries, no object per read: 10,000 records make 40,000 reads,
        # and every container kept alive is one more the cycle collector walks again and again.
        self.roots: list[str] = []
        self.paths: list[tuple[Step, ...]] = []
        self.values: list[Any] = []
        self.attr_steps: dict[str, Step] = {}  # one ("attr", name) step per name, shared by every path
        # A list's identity field, found once per list and name: asked per element, a scan of the
        # whole list each time made every iteration quadratic (10,000 records took minutes).
        self.identities: dict[tuple[int, str | None], str | None] = {}
        # The paths the predicate read further into (a child was read), marked by the view as it
        # reads: `bindings` drops a dict read at one of these. Collecting every prefix of every read
        # afterwards built a set larger than the reads themselves.
        self.further: dict[str, set[tuple[Step, ...]]] = {"pre": set(), "post": set()}

    def leaf(self, root: str, steps: tuple[Step, ...], value: Any) -> None:
        """Record a scalar, or a small list or dict of scalars (`options={'color': 'blue'}`): a dict
        the predicate reads further into is dropped later (`bindings`), its fields say more."""
        raw = unwrap(value)
        if showable(raw):
            self.roots.append(root)
            self.paths.append(steps)
            self.values.append(raw)

    def attr_step(self, name: str) -> Step:
        step = self.attr_steps.get(name)
        if step is None:
            step = self.attr_steps[name] = ("attr", name)
        return step


def showable(value: Any) -> bool:
    """A scalar, or a list or dict of at most MAX_LIST scalars."""
    if not isinstance(value, (dict, list)):
        return True
    values = value.values() if isinstance(value, dict) else value
    return len(value) <= MAX_LIST and not any(isinstance(x, (dict, list)) for x in values)


class _Traced(View):
    """A read-only view that knows the path it was reached by."""

    __slots__ = ("_elems", "_field", "_further", "_root", "_steps", "_tracer")

    def __init__(self, data: Any, root: str, steps: tuple[Step, ...], tracer: _Tracer,
                 elems: list[tuple[Step, ...]] | None = None) -> None:
        super().__init__(data)
        object.__setattr__(self, "_root", root)
        object.__setattr__(self, "_steps", steps)
        object.__setattr__(self, "_tracer", tracer)
        object.__setattr__(self, "_elems", elems)  # per-element paths of a derived list (rows, slices)
        object.__setattr__(self, "_field", _UNKNOWN)  # the list's identity field, once looked up
        object.__setattr__(self, "_further", False)  # a child of this path was read

    def child(self, value: Any, steps: tuple[Step, ...]) -> Any:
        if not self._further:
            # A showable dict holds only scalars, and every scalar read is recorded: so a child read
            # here is exactly a recorded read below this path.
            object.__setattr__(self, "_further", True)
            self._tracer.further[self._root].add(self._steps)
        self._tracer.leaf(self._root, steps, value)  # a scalar, or a short list of scalars
        if isinstance(value, (dict, list)):
            return _Traced(value, self._root, steps, self._tracer)
        return wrap(value)

    def element_steps(self, data: list[Any], index: int) -> tuple[Step, ...]:
        """The steps reaching `data[index]`, `data` being this view's list."""
        if self._elems is not None:
            return self._elems[index]
        field = self._field
        if field is _UNKNOWN:
            field = _identity(data, self._steps, self._tracer)
            object.__setattr__(self, "_field", field)
        record = data[index]
        if field is not None and isinstance(record, dict):
            return (*self._steps, ("elem", field, record[field], index))
        return (*self._steps, ("elem", None, None, index))

    def __getitem__(self, key: Any) -> Any:
        data = self.raw
        key = unwrap(key)
        if isinstance(data, list) and isinstance(key, slice):
            indices = list(range(len(data)))[key]
            return _Traced(data[key], self._root, self._steps, self._tracer,
                           [self.element_steps(data, i) for i in indices])
        value = super().__getitem__(key)  # the type and range errors of the plain view
        if isinstance(data, list):
            return self.child(unwrap(value), self.element_steps(data, key if key >= 0 else len(data) + key))
        return self.child(unwrap(value), (*self._steps, ("key", key)))

    def __iter__(self) -> Iterator[Any]:
        data = self.raw
        if isinstance(data, dict):
            return (wrap(k) for k in data)  # keys are values, not state reads
        return (self.child(x, self.element_steps(data, i)) for i, x in enumerate(data))


_UNKNOWN: Any = object()


def _identity(data: list[Any], steps: tuple[Step, ...], tracer: _Tracer) -> str | None:
    name = next((s[1] for s in reversed(steps) if s[0] in ("attr", "key")), None)
    key = (id(data), str(name) if name is not None else None)  # the state outlives the trace: ids are stable
    if key not in tracer.identities:
        tracer.identities[key] = identity_field(data, data, key[1])
    return tracer.identities[key]


def _traced_attr(obj: Any, name: str) -> Any:
    if isinstance(obj, _Traced) and isinstance(obj.raw, dict) and name in obj.raw:
        return obj.child(obj.raw[name], (*obj._steps, obj._tracer.attr_step(name)))
    return _attr(obj, name)


def _traced_by(obj: Any, **fields: Any) -> Any:
    found = _by(obj, **fields)
    if found is None or not isinstance(obj, _Traced):
        return found
    want = tuple((k, unwrap(v)) for k, v in fields.items())
    return _Traced(unwrap(found), obj._root, (*obj._steps, ("by", want)), obj._tracer)


def _traced_rows(obj: Any) -> Any:
    if isinstance(obj, _Traced) and isinstance(obj.raw, dict):
        items = list(obj.raw.items())
        return _Traced([v for _, v in items], obj._root, obj._steps, obj._tracer,
                       [(*obj._steps, ("key", k)) for k, _ in items])
    from toollint.contracts.host.predicate import HELPERS

    return HELPERS["rows"](obj)


def _traced_get(obj: Any, key: Any, default: Any = None) -> Any:
    from toollint.contracts.host.predicate import HELPERS

    if isinstance(obj, _Traced) and isinstance(obj.raw, dict):
        raw_key = unwrap(key)
        if isinstance(raw_key, (str, int, float, bool)) and raw_key in obj.raw:
            return obj.child(obj.raw[raw_key], (*obj._steps, ("key", raw_key)))
    return HELPERS["get"](obj, key, default)


def _traced_one(obj: Any) -> Any:
    items = list(_traced_rows(obj))
    if len(items) != 1:
        raise PredicateTypeError(f"one() needs exactly one element, got {len(items)}")
    return items[0]


def trace(
    predicate: Predicate, pre: Any, post: Any, args: Mapping[str, Any] | None, result: Any
) -> list[Read]:
    """Every state leaf the predicate read on this data, in evaluation order (a type error stops the
    evaluation; the reads made until then are returned)."""
    with _collector_paused():
        tracer = _run(predicate, pre, post, args, result)
        return [Read(*read) for read in zip(tracer.roots, tracer.paths, tracer.values)]


@contextmanager
def _collector_paused() -> Iterator[None]:
    """The cycle collector off while a trace keeps tens of thousands of paths alive: each young
    collection walks them again, which made 10x the records cost 13x the time (none of them is
    in a cycle; a cycle made meanwhile is collected once the collector is back on)."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def _run(predicate: Predicate, pre: Any, post: Any, args: Mapping[str, Any] | None, result: Any) -> _Tracer:
    tracer = _Tracer()
    overrides = {
        _R_ATTR: _traced_attr,
        _R_BY: _traced_by,
        "rows": _traced_rows,
        "get": _traced_get,
        "one": _traced_one,
        "pre": _Traced(pre, "pre", (), tracer) if isinstance(pre, (dict, list)) else wrap(pre),
        "post": _Traced(post, "post", (), tracer) if isinstance(post, (dict, list)) else wrap(post),
    }
    try:
        predicate.evaluate(pre, post, args, result, overrides=overrides)
    except PredicateTypeError:
        pass
    return tracer


def resolve(state: Any, steps: tuple[Step, ...],
            memo: dict[tuple[int, str], dict[Any, Any]] | None = None) -> tuple[bool, Any]:
    """The value at `steps` in another snapshot (the pre-state of a post read): (found, value).
    `memo` keeps each list's records by identity field across calls, so resolving every read of a
    long list is linear, not a scan per read."""
    node = state
    for step in steps:
        if step[0] in ("attr", "key"):
            if not isinstance(node, dict) or step[1] not in node:
                return False, None
            node = node[step[1]]
        elif step[0] == "elem":
            _, field, value, index = step
            if not isinstance(node, list):
                return False, None
            if field is None:
                if not 0 <= index < len(node):
                    return False, None
                node = node[index]
            else:
                node = _record(node, field, value, memo if memo is not None else {})
                if node is _MISSING:
                    return False, None
        else:
            rows = node.values() if isinstance(node, dict) else node if isinstance(node, list) else []
            node = next((x for x in rows if isinstance(x, dict) and all(
                k in x and x[k] == v for k, v in step[1])), _MISSING)
            if node is _MISSING:
                return False, None
    return True, node


_MISSING = object()


def _record(records: list[Any], field: str, value: Any,
            memo: dict[tuple[int, str], dict[Any, Any]]) -> Any:
    """The first record of `records` whose `field` is `value`, from a per-list map built once."""
    key = (id(records), field)
    table = memo.get(key)
    if table is None:
        table = {}
        for x in records:
            if isinstance(x, dict) and field in x:
                try:
                    table.setdefault(x[field], x)
                except TypeError:  # an unhashable id: not an identity field after all
                    pass
        memo[key] = table
    try:
        return table.get(value, _MISSING)
    except TypeError:
        return next((x for x in records if isinstance(x, dict) and x.get(field) == value), _MISSING)


def bindings(predicate: Predicate, pre: Any, post: Any, args: Mapping[str, Any] | None,
             result: Any = None, limit: int = MAX_BINDINGS) -> list[dict[str, Any]]:
    """`{"expr", "value"}` for the state the predicate read. Each `post` read is shown next to the value
    at the same path before the call, and those pairs come first (a write that did not happen reads the
    same in both), then reads in the records the arguments name; identity fields, and values the path
    of another read already shows as a key, are left out.

    Linear in the reads: each path is hashed once, to its number in evaluation order, and the rest
    works on those numbers (10,000 records make 40,000 reads)."""
    with _collector_paused():
        return _bindings(_run(predicate, pre, post, args, result), pre, args, limit)


def _bindings(tracer: _Tracer, pre: Any, args: Mapping[str, Any] | None, limit: int) -> list[dict[str, Any]]:
    wanted = {repr(v) for v in (args or {}).values()
              if isinstance(v, (str, int, float)) and not isinstance(v, bool)}
    order: dict[tuple[Step, ...], int] = {}  # each path read, numbered in evaluation order
    values: dict[str, dict[int, Any]] = {"pre": {}, "post": {}}  # root -> path number -> first value
    further = tracer.further
    for root, steps, value in zip(tracer.roots, tracer.paths, tracer.values):
        if _names_itself(steps, value) or (isinstance(value, dict) and steps in further[root]):
            continue
        number = order.setdefault(steps, len(order))
        values[root].setdefault(number, value)
    paths = list(order)
    before, after = values["pre"], values["post"]
    memo: dict[tuple[int, str], dict[Any, Any]] = {}
    for number in sorted(after.keys() - before.keys()):
        found, value = resolve(pre, paths[number], memo)
        if found and showable(value):
            before[number] = value
    # A value used as a key further on (`f.flight_number` in `flights['HAT1']`) is shown by that path.
    keys_used = {repr(step[1]) for steps in paths for step in steps if step[0] == "key"}
    if keys_used:
        for side in (before, after):
            for number in [n for n, v in side.items() if (
                    paths[n] and paths[n][-1][0] == "attr" and not isinstance(v, list)
                    and repr(v) in keys_used)]:
                del side[number]
    # Rank: pre/post pairs first, then reads in the records the arguments name, then evaluation
    # order, `pre` before `post`. A path's rank group is a small number: no sort key per read.
    groups = [2 * (n not in before or n not in after) + (not _addressed(paths[n], wanted))
              for n in range(len(paths))]
    shown: list[dict[str, Any]] = []
    for group in range(4):
        for number, in_group in enumerate(groups):
            if in_group != group:
                continue
            for root, side in (("pre", before), ("post", after)):
                if number in side and len(shown) < limit:
                    shown.append({"expr": render(root, paths[number]), "value": side[number]})
            if len(shown) >= limit:
                return shown
    return shown


def _names_itself(steps: tuple[Step, ...], value: Any) -> bool:
    """A read of the field that identifies its record (`l.line_id` under `{line_id=L1}`), or that
    repeats the key it sits under (`reservations['ZFA04Y'].reservation_id`): the path already says it."""
    if len(steps) < 2 or steps[-1][0] != "attr":
        return False
    leaf, parent = steps[-1][1], steps[-2]
    if parent[0] == "elem":
        return bool(parent[1] == leaf)
    if parent[0] == "by":
        return any(k == leaf for k, _ in parent[1])
    return bool(parent[0] == "key" and value == parent[1])


def _addressed(steps: tuple[Step, ...], wanted: set[str]) -> bool:
    """Inside a record the call's arguments name (`{line_id=L1}`, `['ZFA04Y']`, `{id=7}`)."""
    for step in steps:
        if step[0] == "elem" and step[1] is not None and repr(step[2]) in wanted:
            return True
        if step[0] == "key" and repr(step[1]) in wanted:
            return True
        if step[0] == "by" and any(repr(v) in wanted for _, v in step[1]):
            return True
    return False
