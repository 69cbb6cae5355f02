"""What an undo need not give back: the writes of a do/undo pair's doing side that a derived round
trip (TL105) leaves out of the state it demands back.

A cancel that gave back an id counter would hand the next booking an id already used; one that
deleted from a history or log would rewrite what happened. Neither is a Partial Effect, so a round
trip demanding them back would confirm a false finding. Names alone (`next_id`, `history`) are what
the static rule already reads; here the write is judged from code and state shape:

- a **monotonic id counter**: the do increments the field by a constant (`self.serial += 1`), reads
  it again to name what it makes (`f"O{self.serial}"`), and no function of the module lowers or
  sets it outside construction; the snapshot holds an integer there;
- an **append-only log**: the do appends to the field (`self.activity.append({...})`) something that
  is not the key of a record it writes (`user.orders.append(order_id)` next to `self.orders[order_id]
  = ...` is a reference, which an undo deleting the record must drop), and no function of the module
  removes from it or replaces it outside construction; the snapshot holds a list there.

Stdlib and AST only: `dynamic/derived.py` asks before a round-trip clause is written.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

APPENDS = frozenset({"append", "appendleft", "extend", "insert"})
REMOVES = frozenset({"pop", "popleft", "popitem", "remove", "clear", "discard"})
# Where a field is set up rather than written by a tool: the environment's construction and reset.
CONSTRUCTION = frozenset({"__init__", "__post_init__", "reset", "_reset", "setup", "setUp"})


@dataclass(frozen=True)
class Unrestorable:
    """A write the undo need not give back: its shape in the snapshot (`counter`: an integer, `log`:
    a list) and why, in words a finding's verdict can carry."""

    shape: str
    why: str

    def holds_on(self, values: list[Any]) -> bool:
        """The snapshot agrees: every value at the field has the shape (an absent field proves nothing)."""
        if not values:
            return False
        if self.shape == "counter":
            return all(isinstance(v, int) and not isinstance(v, bool) for v in values)
        return all(isinstance(v, list) for v in values)


def _leaf(node: ast.expr) -> str | None:
    """The field a target names last: `self.db.serial` -> serial, `state["log"]` -> log."""
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) \
            and isinstance(node.slice.value, str):
        return node.slice.value
    if isinstance(node, ast.Name):
        return node.id
    return None


def _functions(tree: ast.Module) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def _changes_otherwise(tree: ast.Module, leaf: str) -> str | None:
    """A function outside construction that lowers, sets, replaces or removes from the field `leaf`:
    `name (line N)`, or None when the do's kind of write is the only one there is."""
    for fn in _functions(tree):
        if fn.name in CONSTRUCTION:
            continue
        for node in ast.walk(fn):
            hit = False
            if isinstance(node, ast.AugAssign) and _leaf(node.target) == leaf:
                hit = not isinstance(node.op, ast.Add)  # `+=` is the do's own kind of write
            elif isinstance(node, ast.Assign) or (isinstance(node, ast.AnnAssign) and node.value is not None):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                hit = any(_leaf(t) == leaf or (isinstance(t, ast.Subscript) and _leaf(t.value) == leaf)
                          for t in targets)
            elif isinstance(node, ast.Delete):
                hit = any(_leaf(t.value if isinstance(t, ast.Subscript) else t) == leaf for t in node.targets)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                    and node.func.attr in REMOVES:
                hit = _leaf(node.func.value) == leaf
            if hit:
                return f"{fn.name} (line {getattr(node, 'lineno', fn.lineno)})"
    return None


def unrestorable(tree: ast.Module, writer: ast.FunctionDef | ast.AsyncFunctionDef, line: int,
                 field_leaf: str) -> Unrestorable | None:
    """Whether the do's write of `field_leaf` at `line` is one an undo need not give back."""
    for node in ast.walk(writer):
        if getattr(node, "lineno", None) != line:
            continue
        if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add) \
                and _leaf(node.target) == field_leaf and isinstance(node.value, ast.Constant) \
                and type(node.value.value) is int and node.value.value > 0:
            return _counter(tree, writer, node, field_leaf)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in APPENDS \
                and _leaf(node.func.value) == field_leaf and node.args:
            return _log(tree, writer, node, field_leaf)
    return None


def _counter(tree: ast.Module, writer: ast.FunctionDef | ast.AsyncFunctionDef, inc: ast.AugAssign,
             leaf: str) -> Unrestorable | None:
    shown = ast.unparse(inc.target)
    names = any(
        isinstance(n, type(inc.target)) and n is not inc.target and ast.unparse(n) == shown
        and isinstance(getattr(n, "ctx", None), ast.Load)
        for n in ast.walk(writer)
    )
    if not names:
        return None  # a count the do keeps (`self.open_orders += 1`) is the undo's to give back
    if _changes_otherwise(tree, leaf) is not None:
        return None
    return Unrestorable("counter", (
        f"`{writer.name}` increments `{leaf}` by {ast.unparse(inc.value)} (line {inc.lineno}) and names what "
        f"it makes with it, and no tool lowers or sets it: a monotonic id counter, which an undo does not "
        f"give back"))


def _log(tree: ast.Module, writer: ast.FunctionDef | ast.AsyncFunctionDef, call: ast.Call,
         leaf: str) -> Unrestorable | None:
    method = call.func.attr if isinstance(call.func, ast.Attribute) else ""
    item = call.args[-1] if method == "insert" else call.args[0]
    if isinstance(item, (ast.Name, ast.Attribute)):
        shown = ast.unparse(item)
        keyed = any(isinstance(n, ast.Subscript) and ast.unparse(n.slice) == shown for n in ast.walk(writer))
        if keyed:
            return None  # the key of a record the do writes: a reference the undo must drop with it
    changed = _changes_otherwise(tree, leaf)
    if changed is not None:
        return None
    return Unrestorable("log", (
        f"`{writer.name}` appends to `{leaf}` (line {call.lineno}) and no tool removes from it or replaces "
        f"it: an append-only log, which an undo adds to rather than rewrites"))


def values_at(node: Any, segs: list[str]) -> list[Any]:
    """Every value at snapshot segments `segs` (`[*]` fans out over a mapping's values or a list)."""
    if not segs:
        return [node]
    head, rest = segs[0], segs[1:]
    if head == "[*]":
        children = list(node.values()) if isinstance(node, dict) else node if isinstance(node, list) else []
        return [v for c in children for v in values_at(c, rest)]
    return values_at(node[head], rest) if isinstance(node, dict) and head in node else []
