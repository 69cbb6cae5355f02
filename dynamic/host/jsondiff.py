"""Keyed JSON diff, canonical hash and path globs for state snapshots.

Stdlib only and Python 3.9-compatible: the host loads this very file by path inside the benchmark's
own interpreter (so the diff is computed next to the state), and the parent imports it as
`toollint.dynamic.host.jsondiff` for replay and frame checks. One implementation, both sides.

A diff is a list of ``{"op", "path", "ptr", "before", "after"}`` dicts sorted by path. ``path`` uses
keyed segments for lists of records (``/lines/{line_id=L1009}/data_refueling_gb``) so that it reads
like the grader's own addressing and stays stable when records are inserted; ``ptr`` is the plain
RFC 6901 pointer for generic JSON tooling.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

Op = dict[str, Any]


def canonical_json(state: Any) -> str:
    return json.dumps(state, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def state_hash(state: Any) -> str:
    return "sha256:" + hashlib.sha256(canonical_json(state).encode("utf-8")).hexdigest()


def _escape(segment: str) -> str:
    return segment.replace("~", "~0").replace("/", "~1")


def singular(name: str) -> str:
    """`lines` -> `line`, `companies` -> `company`, `addresses` -> `address` (for `<record>_id`)."""
    if name.endswith("ies"):
        return name[:-3] + "y"
    if name.endswith(("sses", "ches", "shes", "xes")):
        return name[:-2]
    return name[:-1] if name.endswith("s") and not name.endswith("ss") else name


def identity_field(before: Sequence[Any], after: Sequence[Any], name: str | None = None) -> str | None:
    """The field that identifies records in both list versions: `id`, else the collection's own
    `<record>_id` (`line_id` for `lines`, when `name` is the list's key), else the shortest unique `*_id`.

    Uniqueness is required within each side separately (a record may legitimately change while
    keeping its id, so checking the union would wrongly reject the key). The collection's own field
    comes before a shorter one: a line's `device_id` or an order's `user_id` may be unique by chance,
    but it names another record, not this one.
    """
    items = list(before) + list(after)
    if not items or not all(isinstance(x, dict) for x in items):
        return None
    common = set(items[0])
    for x in items[1:]:
        common &= set(x)
    own = f"{singular(name)}_id" if name else None
    candidates = sorted((k for k in common if k == "id" or k.endswith("_id")),
                        key=lambda k: (k != "id", k != own, len(k), k))
    for key in candidates:
        ok = True
        for side in (before, after):
            values = [x[key] for x in side]
            if not all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in values):
                ok = False
                break
            if len(set(values)) != len(values):
                ok = False
                break
        if ok:
            return key
    return None


def diff(before: Any, after: Any, tags: Mapping[str, Sequence[str]] | None = None,
         same: bool | None = None) -> list[Op]:
    """Ops turning `before` into `after`; `tags` maps a tag name to path globs (volatile/derived).

    `same` is what the caller knows from the two state hashes (None: not known). Unchanged subtrees
    are pruned with `==` at C speed; `==` equates True with 1 and 1 with 1.0, so when that pass finds
    nothing although the JSON texts differ, a strict pass compares the JSON text of equal subtrees.
    """
    if same:
        return []
    ops: list[Op] = []
    _diff(before, after, "", "", ops, strict=False)
    if not ops and (same is False or canonical_json(before) != canonical_json(after)):
        _diff(before, after, "", "", ops, strict=True)
    ops.sort(key=lambda o: o["path"])
    if tags:
        for op in ops:
            hit = [name for name, globs in tags.items() if any(path_matches(g, op["path"]) for g in globs)]
            if hit:
                op["tags"] = sorted(hit)
    return ops


def key_segment(field: str | None, record: Any, index: int) -> str:
    """The keyed segment naming one list element: `{line_id=L1009}`, or its position without a key.
    Diffs (`/lines/{line_id=L1009}`) and witness bindings (`.lines{line_id=L1009}`) both use it."""
    if field is not None and isinstance(record, dict) and field in record:
        return "{" + field + "=" + _escape(str(record[field])) + "}"
    return str(index)


def _diff(a: Any, b: Any, path: str, ptr: str, ops: list[Op], strict: bool, name: str | None = None) -> None:
    if a == b and type(a) is type(b) and (
            not strict or not isinstance(a, (dict, list)) or canonical_json(a) == canonical_json(b)):
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b), key=str):
            seg = "/" + _escape(str(key))
            if key not in b:
                ops.append(
                    {"op": "remove", "path": path + seg, "ptr": ptr + seg, "before": a[key], "after": None}
                )
            elif key not in a:
                ops.append(
                    {"op": "add", "path": path + seg, "ptr": ptr + seg, "before": None, "after": b[key]}
                )
            else:
                _diff(a[key], b[key], path + seg, ptr + seg, ops, strict, str(key))
        return
    if isinstance(a, list) and isinstance(b, list):
        key = identity_field(a, b, name)
        if key is not None:
            pos_a = {x[key]: i for i, x in enumerate(a)}
            pos_b = {x[key]: i for i, x in enumerate(b)}
            for ident in sorted(set(pos_a) | set(pos_b), key=str):
                seg = "/" + key_segment(key, {key: ident}, 0)
                if ident not in pos_b:
                    ops.append({"op": "remove", "path": path + seg, "ptr": f"{ptr}/{pos_a[ident]}",
                                "before": a[pos_a[ident]], "after": None})
                elif ident not in pos_a:
                    ops.append({"op": "add", "path": path + seg, "ptr": f"{ptr}/{pos_b[ident]}",
                                "before": None, "after": b[pos_b[ident]]})
                else:
                    _diff(a[pos_a[ident]], b[pos_b[ident]], path + seg, f"{ptr}/{pos_b[ident]}", ops, strict)
            return
        for i in range(max(len(a), len(b))):
            seg = f"/{i}"
            if i >= len(b):
                ops.append(
                    {"op": "remove", "path": path + seg, "ptr": ptr + seg, "before": a[i], "after": None}
                )
            elif i >= len(a):
                ops.append({"op": "add", "path": path + seg, "ptr": ptr + seg, "before": None, "after": b[i]})
            else:
                _diff(a[i], b[i], path + seg, ptr + seg, ops, strict)
        return
    ops.append({"op": "replace", "path": path or "/", "ptr": ptr, "before": a, "after": b})


def canonical_covers(canonical: str, path: str) -> bool:
    """Whether a keyed diff path (`/agent_db/flights/HAT001/dates/2024-05-16/available_seats/economy`)
    lies under a predicate's canonical path (`agent_db.flights[*].dates[*].available_seats`)."""
    import re

    want = re.findall(r"\[\*\]|[^.\[\]]+", canonical)
    have = split_path(path)
    return len(have) >= len(want) and all(w == "[*]" or w == h for w, h in zip(want, have))


def most_specific(paths: Iterable[str]) -> list[str]:
    """The canonical paths no other one extends (`a.b[*].c`, not `a.b` or `a.b[*]`): what a predicate
    reading a field through its collection is about."""
    paths = sorted(set(paths))
    return [p for p in paths if not any(q != p and q.startswith((p + ".", p + "[")) for q in paths)]


def split_path(path: str) -> list[str]:
    """Segments of a keyed path; `/a/{id=7}/b` -> ['a', '{id=7}', 'b']."""
    return [s for s in path.split("/") if s != ""]


def path_matches(pattern: str, path: str) -> bool:
    """Glob over keyed paths: `*` matches within one segment, `**` any number of whole segments.

    A pattern also covers everything below what it names (`/bank_account` covers
    `/bank_account/balance`), which is how write-sets are declared.
    """
    return _match(split_path(pattern), split_path(path))


def _match(pat: list[str], segs: list[str]) -> bool:
    if not pat:
        return True  # a prefix covers its subtree
    head = pat[0]
    if head == "**":
        return any(_match(pat[1:], segs[i:]) for i in range(len(segs) + 1))
    if not segs:
        return False
    return fnmatch.fnmatchcase(segs[0], head) and _match(pat[1:], segs[1:])
