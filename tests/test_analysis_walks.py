"""The analysis's node walks (`toollint.analysis.summary.child_nodes` and the walks built on it) hand on
the same nodes as `ast.iter_child_nodes`, in its order, less the context and operator leaves."""

from __future__ import annotations

import ast

from toollint.analysis.walk import child_nodes, walk_nodes

LEAVES = (ast.expr_context, ast.boolop, ast.operator, ast.unaryop, ast.cmpop)

SAMPLE = '''
import os.path as p
from x import (a as b, c)
@deco(1, k=2)
async def f(a, /, b: int = 1, *args, c, d=None, **kw) -> dict[str, int]:
    global g
    x = {**kw, "k": -a + b * 2, 3: not c}
    y = [i for i in range(3) if i > 1 and i < 3]
    z = {k: v for k, v in x.items()}
    s = f"{a!r:>{b}} and {c}"
    del x["k"]
    async with lock() as held, other():
        async for i in gen():
            await i
    try:
        raise ValueError("no") from None
    except (KeyError, ValueError) as e:
        pass
    else:
        x[1:2:3] += 1
    finally:
        assert a is not b, "why"
    match y:
        case [1, *rest] if rest:
            pass
        case {"k": v, **others}:
            pass
        case Point(x=0, y=_) | None:
            pass
    return lambda q, *, r: (q, r) if q else ...
class C(Base, metaclass=M):
    attr: int
    def m(self): yield from self.n()
'''


def test_child_nodes_are_iter_child_nodes_without_the_leaves() -> None:
    tree = ast.parse(SAMPLE)
    seen = 0
    for node in ast.walk(tree):
        expected = [c for c in ast.iter_child_nodes(node) if not isinstance(c, LEAVES)]
        assert child_nodes(node) == expected, ast.dump(node)[:80]
        seen += 1
    assert seen > 200


def test_none_in_a_list_field_is_no_child() -> None:
    call = ast.parse("{**d, 'k': 1}\ndef f(*, a, b=2): pass").body
    assert [type(n).__name__ for n in child_nodes(call[0].value)] == ["Constant", "Name", "Constant"]
    arguments = call[1].args
    assert [type(n).__name__ for n in child_nodes(arguments)] == ["arg", "arg", "Constant"]


def test_a_node_built_by_hand_with_fields_left_out() -> None:
    """Stand-ins the analysis builds (`ast.Call(func, args, keywords)`) may lack optional fields."""
    call = ast.Call(ast.Name("f", ast.Load()), [ast.Constant(1)], [])
    assert [type(n).__name__ for n in child_nodes(call)] == ["Name", "Constant"]
    assert [type(n).__name__ for n in walk_nodes(ast.Return())] == ["Return"]


def test_function_nodes_are_kept_per_body() -> None:
    """A function's own nodes are walked once and kept; a stand-in copied off it with a body of its own
    (a dispatcher's branch) gets its own nodes, not the kept ones."""
    import copy

    from toollint.analysis.paths import function_nodes

    fn = ast.parse("def f(a):\n    if a:\n        g(a)\n    def inner(): h()\n    return lambda: k()").body[0]
    assert isinstance(fn, ast.FunctionDef)
    first = function_nodes(fn)
    calls = [n.func.id for n in first if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]
    assert calls == ["h", "g"]  # not into the lambda (a statement of the body is walked, even a `def`)
    assert function_nodes(fn) is first
    stand_in = copy.copy(fn)
    stand_in.body = [fn.body[-1]]
    assert [type(n).__name__ for n in function_nodes(stand_in)] == ["Return"]
    assert function_nodes(fn) is first


def test_ancestors_of_a_statement_are_those_of_the_whole_tree() -> None:
    """`FunctionSummary.ancestors` of a statement reads statement links only; the answer is the one
    the links of every node give (handlers and cases included), for statements at every depth."""
    from toollint.analysis.summary import FunctionSummary

    fn = ast.parse(
        "def f(x):\n"
        "    try:\n"
        "        if x:\n"
        "            return 1\n"
        "    except ValueError:\n"
        "        for i in x:\n"
        "            return 2\n"
        "    match x:\n"
        "        case [a]:\n"
        "            with open(a) as h:\n"
        "                return h\n"
        "    g = lambda: (yield 3)\n"
        "    return 4\n"
    ).body[0]
    assert isinstance(fn, ast.FunctionDef)
    parents = {id(c): p for s in fn.body for p in ast.walk(s) for c in ast.iter_child_nodes(p)}

    def expected(node: ast.AST) -> set[int]:
        out = {id(node)}
        while id(node) in parents:
            node = parents[id(node)]
            out.add(id(node))
        return out

    summary = FunctionSummary("f", fn, [])
    statements = [n for n in ast.walk(fn) if isinstance(n, ast.stmt) and n is not fn]
    assert len(statements) == 10
    for stmt in statements:
        assert summary.ancestors(stmt) == expected(stmt), ast.dump(stmt)[:60]
    call = next(n for n in ast.walk(fn) if isinstance(n, ast.Call))  # an expression: every link
    assert summary.ancestors(call) == expected(call)
    outside = ast.parse("x = 5").body[0]  # not of this function
    assert summary.ancestors(outside) == {id(outside)}


def test_walk_nodes_is_ast_walk_without_the_leaves() -> None:
    tree = ast.parse(SAMPLE)
    assert walk_nodes(tree) == [n for n in ast.walk(tree) if not isinstance(n, LEAVES)]
    for node in ast.walk(tree):
        if not isinstance(node, LEAVES):
            assert walk_nodes(node) == [n for n in ast.walk(node) if not isinstance(n, LEAVES)]


def test_function_nodes_order_is_a_stacks() -> None:
    """`function_nodes` hands out a function's nodes as a stack of `child_nodes` would: depth first,
    the last child first, not into nested functions, classes or lambdas below the body's statements."""
    from toollint.analysis.paths import function_nodes

    not_own = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
    for fn in ast.walk(ast.parse(SAMPLE)):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            stack: list[ast.AST] = list(fn.body)
            expected = []
            while stack:
                node = stack.pop()
                expected.append(node)
                stack.extend(c for c in child_nodes(node) if not isinstance(c, not_own))
            assert list(function_nodes(fn)) == expected
