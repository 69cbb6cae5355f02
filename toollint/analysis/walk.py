"""The analysis's one walker of syntax trees: a node's children read off the fields its class's grammar
says hold nodes, and the walks built on it. `ast.walk` and `ast.iter_child_nodes` take each node
through two layers of generators and hand on the context and operator leaves (`Load`, `Add`); the
analysis's walks of a tool, a helper, a decorator or an expression go through here instead. (A walk
of a whole module keeps `ast.walk`: these hand out a list, and a large module's would cost memory.)
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Sequence
from typing import TypeVar

_T = TypeVar("_T")
_Node = TypeVar("_Node", bound=ast.AST)


def child_nodes(node: ast.AST) -> list[ast.AST]:
    """The child nodes of `node` that hold something, in `ast.iter_child_nodes` order, read off the
    fields its class's grammar says hold nodes (`_node_fields`): the context and operator leaves
    (`Load`, `Add`, `Eq`: the parser's shared singletons) are left out, and the names and constants are
    not looked at. Every walk of the analysis (tools, helpers, expressions) goes through here: a Name or
    a Constant has no field to read, and a third fewer nodes are handed on."""
    fields = _NODE_FIELDS.get(type(node))
    if fields is None:
        fields = _node_fields(type(node))
    out: list[ast.AST] = []
    for name, how in fields:
        value = getattr(node, name, None)
        if value is None:
            continue
        if how is _ONE:
            out.append(value)
        elif how is _MANY:
            out.extend(value)
        elif isinstance(value, list):  # (a loop, not a comprehension's frame: most lists hold a node or two)
            for item in value:
                if isinstance(item, ast.AST):
                    out.append(item)
        elif isinstance(value, ast.AST):
            out.append(value)
    return out


# How many nodes a field holds: one (or None), a list of them, or either, tested (a list that may hold
# None, a field of a class whose grammar is not known)
_ONE, _MANY, _TESTED = "one", "many", "tested"
# Types of the grammar that are not nodes, or are leaves no walk looks at (the context and operator classes)
_LEAF_TYPES = frozenset({"identifier", "string", "constant", "int", "expr_context", "boolop", "operator",
                         "unaryop", "cmpop"})
_FIELD_DECL = re.compile(r"(\w+)([*?]?) (\w+)")
_NODE_FIELDS: dict[type, tuple[tuple[str, str], ...]] = {}


def _node_fields(cls: type) -> tuple[tuple[str, str], ...]:
    """(field, how many nodes it holds) for the fields of `cls` that hold nodes, read off its grammar
    line (`ast.Compare.__doc__` is `Compare(expr left, cmpop* ops, expr* comparators)`); each field
    tested, for a class whose line does not name its fields."""
    doc = cls.__doc__ or ""
    decls = _FIELD_DECL.findall(doc[doc.find("(") + 1:doc.rfind(")")]) if doc.startswith(cls.__name__) else []
    fields: tuple[str, ...] = getattr(cls, "_fields", ())
    if [name for _, _, name in decls] != list(fields):
        found = tuple((name, _TESTED) for name in fields)
    else:
        # `{**d}` has a None key, `def f(*, a)` a None keyword default: the lists that may hold None
        holes = {(ast.Dict, "keys"), (ast.arguments, "kw_defaults")}
        found = tuple((name, _TESTED if (cls, name) in holes else _MANY if mark == "*" else _ONE)
                      for kind, mark, name in decls if kind not in _LEAF_TYPES)
    _NODE_FIELDS[cls] = found
    return found


def walk_nodes(root: ast.AST) -> list[ast.AST]:
    """`list(ast.walk(root))`, in its order, less the leaves `child_nodes` leaves out (its loop written
    out here: the call and the list of each node's children were a third of a walk)."""
    todo = [root]
    append, extend = todo.append, todo.extend
    for node in todo:  # (the list grows as it is read: breadth first, as `ast.walk`)
        kind = type(node)
        if kind in LEAF_NODES:
            continue
        fields = _NODE_FIELDS.get(kind)
        if fields is None:
            fields = _node_fields(kind)
        for name, how in fields:
            value = getattr(node, name, None)
            if value is None:
                continue
            if how is _ONE:
                append(value)
            elif how is _MANY:
                extend(value)
            elif isinstance(value, list):
                extend([item for item in value if isinstance(item, ast.AST)])
            elif isinstance(value, ast.AST):
                append(value)
    return todo


# The nodes that hold no node (a third of a tool's): a walk does not ask for their children
LEAF_NODES = frozenset({ast.Name, ast.Constant})


def depth_first(start: Sequence[ast.AST], skip: frozenset[type]) -> list[ast.AST]:
    """The nodes from `start` down, depth first as a stack hands them out (the last child first), less
    the leaves `child_nodes` leaves out, and not handing out a child whose class is in `skip` (nor what
    is below it; a node of `start` is looked into whatever its class): a function's own nodes
    (`toollint.analysis.paths.function_nodes`), an expression's without its lambdas."""
    out: list[ast.AST] = []
    stack = list(start)
    append, push, extend = out.append, stack.append, stack.extend
    while stack:
        node = stack.pop()
        append(node)
        kind = type(node)
        if kind in LEAF_NODES:
            continue
        fields = _NODE_FIELDS.get(kind)
        if fields is None:
            fields = _node_fields(kind)
        for name, how in fields:
            value = getattr(node, name, None)
            if value is None:
                continue
            if how is _ONE:
                if type(value) not in skip:
                    push(value)
            elif how is _MANY:
                # (the test in C first: a list rarely holds what is skipped)
                extend(value if skip.isdisjoint(map(type, value)) else
                       [item for item in value if type(item) not in skip])
            elif isinstance(value, list):
                extend([item for item in value if isinstance(item, ast.AST) and type(item) not in skip])
            elif isinstance(value, ast.AST) and type(value) not in skip:
                push(value)
    return out


def kept_for_body(node: _Node, key: str, compute: Callable[[_Node], _T]) -> _T:
    """`compute(node)`, kept on `node` under `key` for every later ask while its body is the one it was
    computed from: a function's walk made once for every tool that reaches it. (A stand-in copied off a
    function shares the attributes of its node but has a body of its own: it is computed afresh.)"""
    body = getattr(node, "body", None)
    kept = node.__dict__.get(key)
    if kept is not None and kept[0] is body:
        return kept[1]
    found = compute(node)
    setattr(node, key, (body, found))
    return found
