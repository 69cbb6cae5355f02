"""What a grader's verdict rests on: the live state, or the agent's record.

`grade(grader, index)` walks one grader function (and the helpers it calls, up to
`MAX_HELPER_HOPS`, across the modules of the linted tree) once, keeping for every local what it is
derived from:

- `RECORD`: the agent's record (a `record` parameter: its calls, the replies it got, its answer);
- `CLAIM`: a part of the record that says a write happened: a record element selected by a test
  naming a write (`"POST" in msg.content`, `call.function == "send_money"`, `"accepted" in reply`),
  or a value computed from one (`payload = json.loads(...)` of such a message, a flag set under
  such a test, the list of them a helper returns);
- `STATE`: the live state after the run (a `state` parameter, a value a state factory builds, the
  instance of a toolkit assertion, a reply to an HTTP GET);
- `BEFORE`: the state before the run (never written by the agent).

Each place where a claim decides the verdict (a failing or passing exit, an `assert`, the returned
value) is a `Decision`: it *credits* the claimed write when, with the claim absent, the grader would
fail (`if len(posts) != 1: return False`, `assert payload["status"] == "active"`, `return any(...)`),
and *rejects* it when the grader fails only if the claim is there (`if check_has_post(r): return
False`). A grader's basis (`Basis`) follows: it reads state, it reads the record, or it reads state
only to decide whether a write is due and takes the write itself from the record (`gated_on_state`:
its state reads name other resources than the write's, e.g. GET `Observation` but POST
`MedicationRequest`). TL401 reports the second and third; the tracer asks the same question of every
task's graders (`toollint.trace.ledger`). The same walk collects what TL402-TL407 report.

Nothing is imported or run. The evaluation "with the claim absent" is three-valued (true, false,
unknown): an absent claim is falsy, empty, equal to nothing, and every field of it is absent too.
"""

from __future__ import annotations

import ast
import builtins
import enum
import itertools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any, Literal, cast

from toollint.analysis.resolver import ModuleSource
from toollint.analysis.summary import (
    MAX_HELPER_HOPS,
    FunctionIndex,
    FunctionNode,
    Helper,
    call_name,
    elif_chain,
)
from toollint.analysis.vocabulary import (
    FAILURE_MARKER,
    FAILURE_WORDS,
    HTTP_CLIENTS,
    HTTP_READ_FUNCS,
    HTTP_VERBS,
    OUTCOME_FIELD,
    SUCCESS_WORDS,
    is_write_verb,
    undoes,
)
from toollint.analysis.walk import depth_first, walk_nodes

Role = Literal["state", "before", "record"]
BasisName = Literal["reads_state", "reads_record", "gated_on_state", "no_state", "undone_in_run"]
BASIS_WORDS: dict[str, str] = {
    "reads_state": "reads state",
    "undone_in_run": "grades a write the run undoes, which only the record can show",
    "reads_record": "reads the record",
    "gated_on_state": "gated on state but grades the write from the record",
    "no_state": "reads no live state and credits no write",
}


class Taint(enum.IntFlag):
    NONE = 0
    RECORD = 1
    CLAIM = 2
    STATE = 4
    BEFORE = 8


# -- results -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Claim:
    """A test on the record that names a write: `'POST' in i.content` (`verb`), `c.function ==
    "send_money"` (`tool`), `"POST request accepted" in reply.content` (`reply`)."""

    kind: Literal["verb", "tool", "reply"]
    text: str  # the constant naming the write
    node: ast.AST
    where: str  # the function holding the test (the grader or a helper)
    file: str = ""  # the module holding it, when it is a file of the tree

    @property
    def line(self) -> int:
        return getattr(self.node, "lineno", 1)

    @property
    def what(self) -> str:
        return {"verb": f"a {self.text} request", "tool": f"a call to `{self.text}`",
                "reply": f"the reply {self.text!r}"}[self.kind]

    def describe(self) -> str:
        return f"{self.what} `{self.where}` finds in it, line {self.line}"


@dataclass(frozen=True)
class Decision:
    """A place where a claim decides the verdict, and whether it credits or rejects the claimed write."""

    node: ast.AST
    credits: bool
    gated: bool  # reached only under a test on live state
    targets: frozenset[str] = (
        frozenset()
    )  # resources the claimed write is checked against (`MedicationRequest`)
    claims: tuple[Claim, ...] = ()  # the record's claims this decision rests on

    @property
    def line(self) -> int:
        return getattr(self.node, "lineno", 1)


@dataclass(frozen=True)
class StateRead:
    node: ast.AST
    label: str | ast.AST  # `GET Observation`, or the access chain read (`post_environment.slack.users`)
    resource: str | None = None  # for an HTTP GET: the resource it names

    @property
    def line(self) -> int:
        return getattr(self.node, "lineno", 1)

    @property
    def what(self) -> str:
        """How the read is shown (the chain is unparsed only when a report asks)."""
        return self.label if isinstance(self.label, str) else _short(self.label)


@dataclass(frozen=True)
class Observation:
    """Something TL402-TL407 report: `code`, where, and the words that say what."""

    code: str
    node: ast.AST
    message: str
    detail: str = ""
    file: str = ""  # the module holding `node` ("" when unknown: the grader's own)
    # the grader's own call that leads to `node` when `node` is in a helper it calls: where the
    # finding goes when the helper is in another module (linting that module finds no grader)
    via: ast.AST | None = None


@dataclass
class GraderFlow:
    claims: list[Claim] = field(default_factory=list)
    decisions: list[Decision] = field(default_factory=list)
    reads: list[StateRead] = field(default_factory=list)
    observations: list[Observation] = field(default_factory=list)
    # how many times a walk asked to add to the flow (deduplicated or not): a helper walk that asked
    # nothing gives the same result in every grader (`_Walker.helper`)
    writes: int = field(default=0, compare=False, repr=False)

    def decided(self, decision: Decision) -> None:
        """A decision point, once (a loop body is walked twice: the later walk knows more)."""
        self.writes += 1
        self.decisions[:] = [d for d in self.decisions if d.node is not decision.node]
        self.decisions.append(decision)

    def observed(self, observation: Observation) -> None:
        self.writes += 1
        if not any(o.node is observation.node and o.code == observation.code for o in self.observations):
            self.observations.append(observation)

    @property
    def credited(self) -> list[Decision]:
        return [d for d in self.decisions if d.credits]

    @property
    def rejected(self) -> list[Decision]:
        return [d for d in self.decisions if not d.credits]

    @property
    def credited_claims(self) -> list[Claim]:
        """The claims the credited decisions rest on, in the order the grader decides on them."""
        found = dict.fromkeys(c for d in sorted(self.credited, key=lambda d: d.line) for c in d.claims)
        return list(found) or (self.claims if self.credited else [])

    @property
    def targets(self) -> frozenset[str]:
        return frozenset().union(*(d.targets for d in self.credited))

    @property
    def resources_read(self) -> frozenset[str]:
        return frozenset(r.resource for r in self.reads if r.resource)

    @property
    def undone(self) -> tuple[Claim, Claim] | None:
        """A credited write the record is searched for together with the call that undoes it
        (`invite_user_to_slack`, then `remove_user_from_slack`): the final state cannot show a write
        the run took back, so the record is the only basis there is (and the right one)."""
        credited = set(self.credited_claims)
        tools = [c for c in self.claims if c.kind == "tool"]
        for do, undo in itertools.permutations(tools, 2):
            if (do in credited or undo in credited) and undoes(undo.text, do.text):
                return do, undo
        return None

    @property
    def basis(self) -> BasisName:
        if self.credited and self.undone:
            return "undone_in_run"
        return decide_basis(bool(self.credited), [r.resource for r in self.reads], self.targets)


def decide_basis(credits: bool, reads: list[str | None], targets: frozenset[str]) -> BasisName:
    """The one decision the rule and the tracer share. `reads`: one entry per live-state read (the
    resource an HTTP GET names, None for any other read); `targets`: the resources the credited write
    is checked against. State reads cover the write unless they are all HTTP reads of named
    resources, the write names its resources, and none of them is read."""
    if not credits:
        return "reads_state" if reads else "no_state"
    if not reads:
        return "reads_record"
    named = {r for r in reads if r}
    if targets and len(named) == len(reads) and not named & targets:
        return "gated_on_state"
    return "reads_state"


def ungrounded(basis: BasisName) -> bool:
    """TL401: the grader credits a write it never reads back from the state."""
    return basis in ("reads_record", "gated_on_state")


# -- constants that name a write ---------------------------------------------------------------------

_IDENTIFIER = re.compile(r"^[a-z_][a-z0-9_]*$")


@lru_cache(maxsize=4096)
def names_write(text: str) -> Literal["verb", "tool", "reply"] | None:
    """How a constant names a write: an HTTP writing verb (`POST`, `"POST "`), a tool named with a
    writing verb (`send_money`), or a reply announcing one (`"Transfer completed"`)."""
    stripped = text.strip()
    if stripped.upper() in HTTP_VERBS and HTTP_VERBS[stripped.upper()] and stripped.isupper():
        return "verb"
    if _IDENTIFIER.match(stripped) and "_" in stripped and is_write_verb(stripped):
        return "tool"
    if stripped and not _IDENTIFIER.match(stripped) and SUCCESS_WORDS.search(stripped) \
            and not FAILURE_WORDS.search(stripped):
        return "reply"
    return None


def _constants(expr: ast.expr) -> list[str]:
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return [expr.value]
    if isinstance(expr, (ast.Tuple, ast.List, ast.Set)):
        return [e.value for e in expr.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


def url_text(expr: ast.expr | None) -> str | None:
    """`f"{base}Observation?patient={mrn}"` -> `{}Observation?patient={}`."""
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return expr.value
    if isinstance(expr, ast.JoinedStr):
        return "".join(
            v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else "{}" for v in expr.values
        )
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        left, right = url_text(expr.left), url_text(expr.right)
        return (left if left is not None else "{}") + (right if right is not None else "{}")
    return None


def url_resource(text: str | None) -> str | None:
    """The resource a URL names: its last path segment that is not a placeholder, before the query
    (`{}Observation?patient={}` -> `Observation`; `https://h/api/users/{}` -> `users`)."""
    if not text:
        return None
    path = re.sub(r"^[a-z]+://[^/]*", "", text.split("?", 1)[0].split("#", 1)[0])
    segments = [s for s in re.split(r"/|\{\}", path) if s.strip()]
    return segments[-1] if segments else None


def _endpoint(expr: ast.expr) -> bool:
    """A request URL built on an API base (`f"{base}MedicationRequest"`) or an absolute path (`"/orders"`)."""
    if isinstance(expr, ast.JoinedStr):
        return bool(expr.values) and isinstance(expr.values[0], ast.FormattedValue)
    return isinstance(expr, ast.Constant) and isinstance(expr.value, str) and expr.value.startswith("/")


def _url_like(expr: ast.expr) -> bool:
    if isinstance(expr, ast.JoinedStr):
        return bool(expr.values) and isinstance(expr.values[0], ast.FormattedValue)
    return (
        isinstance(expr, ast.Constant)
        and isinstance(expr.value, str)
        and ("/" in expr.value or "://" in expr.value)
    )


# -- the three-valued evaluation ----------------------------------------------------------------------


class _Absent:
    """A claim that is not there: falsy, empty, equal to nothing; its fields are absent too."""

    def __repr__(self) -> str:
        return "ABSENT"


class _Unknown:
    def __repr__(self) -> str:
        return "UNKNOWN"


ABSENT: Any = _Absent()
UNKNOWN: Any = _Unknown()


def truth(value: Any) -> bool | None:
    if value is UNKNOWN:
        return None
    if value is ABSENT:
        return False
    try:
        return bool(value)
    except Exception:  # noqa: BLE001 -- an odd constant's truth is unknown, not a crash
        return None


def _compare(op: ast.cmpop, left: Any, right: Any) -> Any:
    if left is ABSENT or right is ABSENT:
        if isinstance(op, (ast.Eq, ast.Is)):
            if isinstance(op, ast.Is) and (left is False or right is False):
                return True  # an absent claim-flag is False
            return left is right
        if isinstance(op, (ast.NotEq, ast.IsNot)):
            if isinstance(op, ast.IsNot) and (left is False or right is False):
                return False
            return left is not right
        if isinstance(op, ast.In):
            return False if right is ABSENT else UNKNOWN
        if isinstance(op, ast.NotIn):
            return True if right is ABSENT else UNKNOWN
        return UNKNOWN
    if left is UNKNOWN or right is UNKNOWN:
        return UNKNOWN
    try:
        return {ast.Eq: lambda: left == right, ast.NotEq: lambda: left != right, ast.Lt: lambda: left < right,
                ast.LtE: lambda: left <= right, ast.Gt: lambda: left > right, ast.GtE: lambda: left >= right,
                ast.Is: lambda: left is right, ast.IsNot: lambda: left is not right,
                ast.In: lambda: left in right, ast.NotIn: lambda: left not in right}[type(op)]()
    except Exception:  # noqa: BLE001 -- comparing two constants of odd types: unknown
        return UNKNOWN


# -- the walk ----------------------------------------------------------------------------------------

FAIL, PASS = "fail", "pass"
_BUILTINS = frozenset(dir(builtins))


def exit_kind(stmts: list[ast.stmt]) -> str | None:
    """`return False` / `return 0` / `raise` leave failing; `return True` / `return 1` passing."""
    if not stmts:
        return None
    last = stmts[-1]
    if isinstance(last, ast.Raise):
        return FAIL
    if isinstance(last, ast.Return) and isinstance(last.value, ast.Constant):
        value = last.value.value
        if value is True or (isinstance(value, (int, float)) and not isinstance(value, bool) and value == 1):
            return PASS
        if value is False or value is None or (isinstance(value, (int, float)) and value == 0):
            return FAIL
    return None


@dataclass
class _HelperResult:
    returns: Taint
    http_params: frozenset[int]  # positions of parameters that become an HTTP GET's URL
    origins: frozenset[Claim] = frozenset()  # the claims its return value carries
    # the walk's inputs (function, index, class, hops, roots) when its result is the same in any
    # grader: it added nothing to the flow and used only such results of other helpers; else None
    pure_for: tuple[object, ...] | None = None


# The walk's inputs -> a pure helper result, shared by a module's graders (`FunctionIndex.helper_results`)
SharedResults = dict[tuple[object, ...], _HelperResult]


class _Walker:
    """One function's walk: taint of its locals in statement order, with the tests around each statement."""

    def __init__(self, fn: FunctionNode, index: FunctionIndex, cls: str | None, roots: Mapping[str, Taint],
                 flow: GraderFlow, hops: int, cache: dict[tuple[int, tuple[int, ...]], _HelperResult],
                 top: bool, state_factories: frozenset[str] = frozenset(),
                 node_lists: dict[int, list[ast.AST]] | None = None,
                 shared: SharedResults | None = None) -> None:
        self.fn = fn
        self.index = index
        self.cls = cls
        self.flow = flow
        self.hops = hops
        self.cache = cache
        self.top = top  # the grader itself (decisions are its own), not a helper
        self.taint: dict[str, Taint] = dict(roots)
        self.factories = set(state_factories)
        self.strings: dict[str, ast.expr] = {}  # locals bound to a string or f-string (URLs)
        self.conditions: list[
            tuple[ast.expr, Taint, Claim | None]
        ] = []  # enclosing tests: expr, taint, claim
        self.origin: dict[str, frozenset[Claim]] = {}  # which claims a claim-derived local comes from
        self.call_origins: dict[int, frozenset[Claim]] = {}  # same, for helper calls
        self.return_origins: frozenset[Claim] = frozenset()
        self.returns = Taint.NONE
        self.http_params: set[int] = set()
        self.reported: set[int] = set()  # nodes an observation already covers
        self.memo: dict[int, Taint] = {}  # taint of expressions of the statement being looked at
        self.resolved: dict[int, Helper | None] = {}
        self.node_lists = node_lists if node_lists is not None else {}
        self.shared: SharedResults = shared if shared is not None else {}
        self.used_impure = False  # a helper result this walk used depends on the grader around it
        self.params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
        self.read_lines: set[tuple[int, str | int]] = set()
        self.read_names: set[tuple[int, str]] = set()
        # names bound to the live state itself (a state parameter, what a state factory built): a load
        # of one is a read of state; a value merely derived from state is not a new read
        self.objects: set[str] = {name for name, t in roots.items() if t & Taint.STATE} if top else set()

    # -- taint ---------------------------------------------------------------------------------------
    def nodes(self, expr: ast.AST) -> list[ast.AST]:
        """The nodes of an expression (not inside lambdas), parents first; listed once per module's
        graders: every question a walk asks of a statement looks at the same nodes, and the module's
        graders walk the same helpers."""
        found = self.node_lists.get(id(expr))
        if found is None:
            found = self.node_lists[id(expr)] = _walk_expr(expr)
        return found

    def of(self, expr: ast.AST | None) -> Taint:
        """What an expression is derived from (reads of live state are recorded on the way). Memoised
        while one statement is looked at: the taint of its parts does not change meanwhile."""
        if expr is None:
            return Taint.NONE
        known = self.memo.get(id(expr))
        if known is not None:
            return known
        out = Taint.NONE
        for node in self.nodes(expr):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                out |= self.taint.get(node.id, Taint.NONE)
            elif isinstance(node, ast.Call):
                out |= self.call(node)
        self.memo[id(expr)] = out
        return out

    def in_claim_region(self) -> bool:
        return any(claim is not None for _, _, claim in self.conditions)

    def region_claims(self) -> frozenset[Claim]:
        return frozenset(claim for _, _, claim in self.conditions if claim is not None)

    def origins_of(self, expr: ast.AST | None) -> frozenset[Claim]:
        out: frozenset[Claim] = frozenset()
        if expr is None:
            return out
        for node in self.nodes(expr):
            if isinstance(node, ast.Name):
                out |= self.origin.get(node.id, frozenset())
            elif isinstance(node, ast.Call):
                out |= self.call_origins.get(id(node), frozenset())
        return out

    def call(self, call: ast.Call) -> Taint:
        name = call_name(call)
        last = name.rsplit(".", 1)[-1]
        if self.is_http_read(call, name):
            self.http_read(call, call.args[0] if call.args else None)
            return Taint.STATE
        if isinstance(call.func, ast.Name) and call.func.id in self.factories:
            return Taint.STATE
        helper = self.resolve(call)
        if helper is not None and self.hops < MAX_HELPER_HOPS:
            result = self.helper(helper, call)
            if result is not None:
                if result.origins:
                    self.call_origins[id(call)] = result.origins
                for position in result.http_params:
                    arg = call.args[position] if position < len(call.args) else None
                    self.http_read(call, arg)
                return result.returns | (Taint.STATE if result.http_params else Taint.NONE)
        if last in ("eval", "exec", "compile") and isinstance(call.func, ast.Name) and call.args and \
                self.taint_no_calls(call.args[0]) & (Taint.RECORD | Taint.CLAIM):
            where = "" if self.top else f" (in `{self.fn.name}`, which the grader calls)"
            self.flow.observed(
                Observation(
                    "TL404",
                    call,
                    f"`{name}(...)` runs the agent's output (`{_short(call.args[0])}`) as code{where}",
                    name,
                    self.index.module.path if self.index.module is not None else "",
                )
            )
        return Taint.NONE

    def resolve(self, call: ast.Call) -> Helper | None:
        """The helper a call reaches (once per call site; builtins are never looked up)."""
        if id(call) in self.resolved:
            return self.resolved[id(call)]
        func = call.func
        if isinstance(func, ast.Name) and func.id in _BUILTINS and func.id not in self.index.functions:
            found = None
        else:
            found = self.index.resolve(call, self.cls)
        self.resolved[id(call)] = found
        return found

    def taint_no_calls(self, expr: ast.AST) -> Taint:
        out = Taint.NONE
        for node in self.nodes(expr):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                out |= self.taint.get(node.id, Taint.NONE)
        return out

    def is_http_read(self, call: ast.Call, name: str) -> bool:
        if name in HTTP_READ_FUNCS:
            return True
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr in ("get", "head") and call.args and \
                isinstance(func.value, ast.Name) and func.value.id in HTTP_CLIENTS:
            first = call.args[0]
            return _url_like(first) or (isinstance(first, ast.Name) and first.id in self.strings) or \
                (isinstance(first, ast.Name) and first.id in self.params)
        return False

    def http_read(self, call: ast.Call, url: ast.expr | None) -> None:
        if isinstance(url, ast.Name) and url.id in self.params and not self.top:
            self.http_params.add(self.params.index(url.id))
            return
        if isinstance(url, ast.Name):
            url = self.strings.get(url.id, url)
        resource = url_resource(url_text(url))
        self.read(call, f"GET {resource or _short(url) if url is not None else '?'}", resource)

    def read(self, node: ast.AST, what: str | ast.AST, resource: str | None = None) -> None:
        key = (getattr(node, "lineno", 0), what if isinstance(what, str) else id(what))
        if key not in self.read_lines:
            self.read_lines.add(key)
            self.flow.writes += 1
            self.flow.reads.append(StateRead(node, what, resource))

    def helper(self, helper: Helper, call: ast.Call) -> _HelperResult | None:
        fn = helper.node
        params = [a.arg for a in fn.args.posonlyargs + fn.args.args]
        offset = 1 if helper.cls is not None and params[:1] in (["self"], ["cls"]) else 0
        roots: dict[str, Taint] = {}
        for i, arg in enumerate(call.args):
            if i + offset < len(params) and not isinstance(arg, ast.Starred):
                roots[params[i + offset]] = self.of(arg)
        for kw in call.keywords:
            if kw.arg:
                roots[kw.arg] = self.of(kw.value)
        if offset and isinstance(call.func, ast.Attribute):
            roots[params[0]] = self.of(call.func.value)
        key = (id(fn), tuple(int(roots.get(p, 0)) for p in params))
        inputs = (fn, helper.index, helper.cls, self.hops + 1, frozenset(roots.items()))
        cached = self.cache.get(key)
        if cached is not None:
            if cached.pure_for != inputs:  # a cycle's stand-in, or a walk with other inputs
                self.used_impure = True
            return cached
        shared = self.shared.get(inputs)
        if shared is not None:  # walked for an earlier grader, adding nothing to its flow
            self.cache[key] = shared
            return shared
        self.cache[key] = _HelperResult(Taint.NONE, frozenset())  # a cycle sees nothing more
        walker = _Walker(fn, helper.index, helper.cls, roots, self.flow, self.hops + 1, self.cache, top=False,
                         node_lists=self.node_lists, shared=self.shared)
        for name, taint in roots.items():
            if taint & Taint.STATE and name not in walker.taint:
                walker.taint[name] = taint
        seen = len(self.flow.observations)
        writes = self.flow.writes
        walker.block(fn.body)
        if self.top:
            self.flow.observations[seen:] = [o if o.via is not None else replace(o, via=call)
                                             for o in self.flow.observations[seen:]]
        pure = self.flow.writes == writes and not walker.used_impure
        result = _HelperResult(walker.returns, frozenset(walker.http_params), walker.return_origins,
                               inputs if pure else None)
        self.cache[key] = result
        if pure:
            self.shared[inputs] = result
        else:
            self.used_impure = True
        return result

    # -- claims ------------------------------------------------------------------------------------
    def claim_test(self, test: ast.expr) -> Claim | None:
        """The first sub-test of `test` that looks in the record for a write."""
        for node in self.nodes(test):
            found: tuple[str, ast.expr] | None = None
            if isinstance(node, ast.Compare):
                operands = [node.left, *node.comparators]
                for op, left, right in zip(node.ops, operands, operands[1:]):
                    if not isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn)):
                        continue
                    for const_side, other in ((left, right), (right, left)):
                        hit = next((t for t in _constants(const_side) if names_write(t)), None)
                        if hit is not None and self.taint_no_calls(other) & (Taint.RECORD | Taint.CLAIM):
                            found = (hit, node)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                    node.func.attr in ("startswith", "endswith") and node.args:
                hit = next((t for t in _constants(node.args[0]) if names_write(t)), None)
                if hit is not None and self.taint_no_calls(node.func.value) & (Taint.RECORD | Taint.CLAIM):
                    found = (hit, node)
            if found is not None:
                kind = names_write(found[0])
                assert kind is not None
                claim = Claim(kind, found[0], found[1], self.fn.name,
                              self.index.module.path if self.index.module is not None else "")
                self.flow.writes += 1
                if claim not in self.flow.claims:
                    self.flow.claims.append(claim)
                return claim
        return None

    # -- evaluation with the claim absent ------------------------------------------------------------
    def absent(self, expr: ast.expr) -> Any:
        """The value of `expr` when the record holds no claimed write (three-valued)."""
        if isinstance(expr, ast.Constant):
            return expr.value
        if isinstance(expr, (ast.Tuple, ast.List)):
            items = [self.absent(e) for e in expr.elts]
            return UNKNOWN if any(i is UNKNOWN or i is ABSENT for i in items) else \
                (tuple(items) if isinstance(expr, ast.Tuple) else list(items))
        if self.claim_test_here(expr):
            return False
        if isinstance(expr, ast.BoolOp):
            result: Any = isinstance(expr.op, ast.And)
            unknown = False
            for value in expr.values:
                t = truth(self.absent(value))
                if t is None:
                    unknown = True
                elif isinstance(expr.op, ast.And) and not t:
                    return False
                elif isinstance(expr.op, ast.Or) and t:
                    return True
            return UNKNOWN if unknown else result
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
            t = truth(self.absent(expr.operand))
            return UNKNOWN if t is None else not t
        if isinstance(expr, ast.Compare):
            left = self.absent(expr.left)
            result = True
            for op, right_node in zip(expr.ops, expr.comparators):
                right = self.absent(right_node)
                step = _compare(op, left, right)
                t = truth(step)
                if t is None:
                    result = UNKNOWN
                elif not t:
                    return False
                left = right
            return result
        if isinstance(expr, ast.Call):
            name = call_name(expr)
            if name == "len" and expr.args:
                inner = self.absent(expr.args[0])
                return 0 if inner is ABSENT else UNKNOWN
            if name in ("any", "bool") and expr.args:
                inner = self.absent(expr.args[0])
                return False if inner is ABSENT else UNKNOWN
            if name == "all" and expr.args:
                return True if self.absent(expr.args[0]) is ABSENT else UNKNOWN
            return (
                ABSENT if self.taint_no_calls(expr) & Taint.CLAIM or self.of(expr) & Taint.CLAIM else UNKNOWN
            )
        if isinstance(expr, (ast.GeneratorExp, ast.ListComp, ast.SetComp)):
            return ABSENT if self.comprehension_claims(expr) else UNKNOWN
        if isinstance(expr, (ast.Name, ast.Attribute, ast.Subscript)):
            return ABSENT if self.taint_no_calls(expr) & Taint.CLAIM else UNKNOWN
        return UNKNOWN

    def claim_test_here(self, expr: ast.expr) -> bool:
        """`expr` is itself a test naming a write in the record (no claim-tainted local needed)."""
        if not isinstance(expr, (ast.Compare, ast.Call)):
            return False
        if isinstance(expr, ast.Call) and not (isinstance(expr.func, ast.Attribute) and
                                               expr.func.attr in ("startswith", "endswith")):
            return False
        return self.claim_test(expr) is not None

    def comprehension_claims(self, expr: ast.GeneratorExp | ast.ListComp | ast.SetComp) -> bool:
        """`any(c.function == "send_money" for c in traces)`: a comprehension over the record that
        keeps (or yields) what a test naming a write selects."""
        saved, saved_memo = dict(self.taint), self.memo
        self.memo = {}  # the loop variables below are bound for this comprehension only
        try:
            for gen in expr.generators:
                taint = self.of(gen.iter)
                for n in walk_nodes(gen.target):
                    if isinstance(n, ast.Name):
                        self.taint[n.id] = taint
            tests = [cond for gen in expr.generators for cond in gen.ifs] + [expr.elt]
            if any(self.claim_test(t) is not None for t in tests):
                return True
            return bool(self.of(expr.elt) & Taint.CLAIM)
        finally:
            self.taint, self.memo = saved, saved_memo

    def decide(self, node: ast.AST, test: ast.expr, fails_when: bool) -> None:
        """A decision point: the grader fails when `test` is `fails_when` (or, for a verdict returned
        as is, when it is false). Recorded when a claim takes part."""
        if not self.top or not self.may_involve_claim(test):
            return
        involved = (
            self.claim_test(test) is not None
            or bool(self.taint_no_calls(test) & Taint.CLAIM)
            or any(
                self.comprehension_claims(c)
                for c in self.nodes(test)
                if isinstance(c, (ast.GeneratorExp, ast.ListComp, ast.SetComp))
            )
            or bool(self.of(test) & Taint.CLAIM)
        )
        if not involved or not self.top:
            return
        t = truth(self.absent(test))
        credits = True if t is None else (t == fails_when)
        gated = any(taint & Taint.STATE for _, taint, _ in self.conditions)
        own = self.claim_test(test)
        claims = self.origins_of(test) | self.region_claims() | ({own} if own is not None else set())
        self.flow.decided(Decision(node, credits, gated, self.targets_in(test),
                                   tuple(sorted(claims, key=lambda c: (c.file, c.line)))))

    def may_involve_claim(self, test: ast.expr) -> bool:
        """A cheap first look: a claim-derived name, a helper call that returned claims, or a constant
        naming a write is in the test (else no claim can take part in it)."""
        for node in self.nodes(test):
            if isinstance(node, ast.Name) and self.taint.get(node.id, Taint.NONE) & Taint.CLAIM:
                return True
            if isinstance(node, ast.Call) and id(node) in self.call_origins:
                return True
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and names_write(node.value):
                return True
        return False

    def targets_in(self, test: ast.expr) -> frozenset[str]:
        """Resources a claimed write is compared with: `url != f"{base}MedicationRequest"`."""
        out: set[str] = set()
        for node in self.nodes(test):
            if isinstance(node, ast.Compare):
                operands = [node.left, *node.comparators]
                for a, b in itertools.pairwise(operands):
                    for url, other in ((a, b), (b, a)):
                        if _endpoint(url) and self.taint_no_calls(other) & Taint.CLAIM:
                            resource = url_resource(url_text(url))
                            if resource:
                                out.add(resource)
        return frozenset(out)

    # -- statements --------------------------------------------------------------------------------
    def block(self, stmts: list[ast.stmt]) -> None:
        for s in stmts:
            self.stmt(s)

    def assign(self, target: ast.expr, taint: Taint, value: ast.expr | None) -> None:
        origins = self.origins_of(value)
        if self.in_claim_region() and (
            taint & (Taint.RECORD | Taint.CLAIM) or isinstance(value, ast.Constant)
        ):
            taint |= Taint.CLAIM
            origins |= self.region_claims()
        for node in walk_nodes(target):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                self.taint[node.id] = taint
                self.origin[node.id] = origins if taint & Taint.CLAIM else frozenset()
                self.objects.discard(node.id)
                if isinstance(target, ast.Name) and value is not None and url_text(value) is not None and \
                        isinstance(value, (ast.Constant, ast.JoinedStr, ast.BinOp)):
                    self.strings[node.id] = value
                elif node.id in self.strings:
                    del self.strings[node.id]
        if isinstance(target, (ast.Subscript, ast.Attribute)):
            base: ast.expr = target
            while isinstance(base, (ast.Subscript, ast.Attribute)):
                base = base.value
            if isinstance(base, ast.Name):
                self.taint[base.id] = self.taint.get(base.id, Taint.NONE) | taint
                if taint & Taint.CLAIM:
                    self.origin[base.id] = self.origin.get(base.id, frozenset()) | origins
        elif isinstance(target, ast.Name) and value is not None and self.builds_state(value):
            self.objects.add(target.id)  # `env = environment_constructor()`: the state itself

    def stmt(self, s: ast.stmt) -> None:
        self.memo.clear()
        if isinstance(s, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            value = s.value
            taint = self.of(value) if value is not None else Taint.NONE
            self.note_reads(value)
            self.observe_value(value)
            targets = s.targets if isinstance(s, ast.Assign) else [s.target]
            for t in targets:
                if isinstance(s, ast.AugAssign) and isinstance(t, ast.Name):
                    taint |= self.taint.get(t.id, Taint.NONE)
                self.assign(t, taint, value)
        elif isinstance(s, ast.Expr):
            self.note_reads(s.value)
            self.observe_value(s.value)
            call = s.value
            if (
                isinstance(call, ast.Call)
                and isinstance(call.func, ast.Attribute)
                and isinstance(call.func.value, ast.Name)
                and call.func.attr in ("append", "extend", "add", "insert", "update")
            ):
                # `posts.append((url, payload))` under a test naming a write: the list holds claims
                taint = Taint.NONE
                for a in call.args:
                    taint |= self.of(a)
                origins = (
                    frozenset().union(*(self.origins_of(a) for a in call.args)) if call.args else frozenset()
                )
                if self.in_claim_region() and taint:
                    taint |= Taint.CLAIM
                    origins |= self.region_claims()
                owner = call.func.value.id
                self.taint[owner] = self.taint.get(owner, Taint.NONE) | taint
                if taint & Taint.CLAIM:
                    self.origin[owner] = self.origin.get(owner, frozenset()) | origins
            else:
                self.of(s.value)
        elif isinstance(s, ast.Return):
            if s.value is not None:
                self.note_reads(s.value)
                self.observe_value(s.value)
                taint = self.of(s.value)
                origins = self.origins_of(s.value)
                if self.in_claim_region() and (
                    taint or isinstance(s.value, ast.Constant) and s.value.value is True
                ):
                    taint |= Taint.CLAIM
                    origins |= self.region_claims()
                self.returns |= taint
                if taint & Taint.CLAIM:
                    self.return_origins |= origins
                if not (isinstance(s.value, ast.Constant)):
                    self.decide(s, s.value, fails_when=False)
                    self.observe_verdict(s, s.value)
        elif isinstance(s, ast.If):
            self.if_chain(s)
        elif isinstance(s, (ast.For, ast.AsyncFor)):
            taint = self.of(s.iter)
            self.note_reads(s.iter)
            self.assign(s.target, taint, None)
            before = dict(self.taint)
            self.block(s.body)
            if self.taint != before:
                self.block(s.body)  # again: a flag set late in the body is seen by the tests before it
            self.block(s.orelse)
        elif isinstance(s, ast.While):
            self.note_reads(s.test)
            self.block(s.body)
            self.block(s.orelse)
        elif isinstance(s, (ast.With, ast.AsyncWith)):
            for item in s.items:
                taint = self.of(item.context_expr)
                if item.optional_vars is not None:
                    self.assign(item.optional_vars, taint, None)
            self.block(s.body)
        elif isinstance(s, ast.Try) or type(s).__name__ == "TryStar":
            self.block(s.body)  # type: ignore[attr-defined]
            for h in s.handlers:  # type: ignore[attr-defined]
                self.block(h.body)
            self.block(s.orelse)  # type: ignore[attr-defined]
            self.block(s.finalbody)  # type: ignore[attr-defined]
        elif isinstance(s, ast.Assert):
            self.note_reads(s.test)
            self.observe_value(s.test)
            self.decide(s, s.test, fails_when=False)
        elif isinstance(s, ast.Match):
            self.of(s.subject)
            for case in s.cases:
                self.block(case.body)
        elif isinstance(s, ast.Import):
            pass

    def if_chain(self, s: ast.If) -> None:
        chain, final = elif_chain(s)
        pushed = 0
        for branch in chain:
            taint = self.of(branch.test)
            self.note_reads(branch.test)
            self.observe_value(branch.test)
            claim = self.claim_test(branch.test)
            for stmts, fails_when in (
                (branch.body, True),
                (branch.orelse if branch is chain[-1] else [], False),
            ):
                kind = exit_kind(stmts)
                if kind == FAIL:
                    self.decide(branch, branch.test, fails_when=fails_when)
                elif kind == PASS:
                    self.decide(branch, branch.test, fails_when=not fails_when)
                if kind == PASS and fails_when:
                    self.observe_pass(branch)
            self.conditions.append((branch.test, taint, claim))
            self.block(branch.body)
            self.conditions.pop()
            # the later branches run where this test was false: a claim test no longer selects a claim
            self.conditions.append((branch.test, taint, None))
            pushed += 1
        self.block(final)
        del self.conditions[len(self.conditions) - pushed:]

    def builds_state(self, value: ast.expr) -> bool:
        return (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Name)
            and value.func.id in self.factories
        )

    def note_reads(self, expr: ast.AST | None) -> None:
        """Record a read of live state for every load of the state itself in the expression (once a
        line and name: the text shown is the longest access chain from it)."""
        if expr is None or not self.objects:
            return
        for node in self.nodes(expr):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in self.objects:
                key = (node.lineno, node.id)
                if key not in self.read_names:
                    self.read_names.add(key)
                    self.read(node, _chain_around(self.nodes(expr), node))

    # -- what TL402, TL403 and TL405 look for -------------------------------------------------------
    def observe_value(self, expr: ast.AST | None) -> None:
        if expr is None:
            return
        if not self.top:  # a helper's coercion table turns the answer before the grader compares it
            for node in self.nodes(expr):
                if isinstance(node, (ast.Call, ast.Subscript)):
                    self.observe_coercion(node)
            return
        for node in self.nodes(expr):
            if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
                last = node.values[-1]
                if (
                    isinstance(last, ast.Compare)
                    and isinstance(last.left, ast.Constant)
                    and last.left.value == ""
                    and isinstance(last.ops[0], ast.In)
                ):
                    first = _short(node.values[0])
                    self.reported.add(id(last))
                    self.flow.observed(
                        Observation(
                            "TL403",
                            node,
                            f'`{_short(node)}` parses as `{first} or ("" in ...)`: `"" in` any text '
                            f"is true, so the check passes whenever `{first}` is set, or always",
                            "empty-needle",
                        )
                    )
                    continue
            if isinstance(node, (ast.Call, ast.Subscript)):
                self.observe_coercion(node)
            if isinstance(node, ast.Compare):
                self.observe_substring(node)
                operands = [node.left, *node.comparators]
                for op, left, right in zip(node.ops, operands, operands[1:]):
                    if isinstance(op, ast.In) and isinstance(left, ast.Constant) and left.value == "" and \
                            id(node) not in self.reported:
                        self.flow.observed(
                            Observation(
                                "TL403",
                                node,
                                f"`{_short(node)}` is true for every text: the empty string is in all "
                                "of them",
                                "empty-needle",
                            )
                        )
                    if isinstance(op, ast.In) and _empty_fallback(left) and \
                            self.taint_no_calls(left) & (Taint.RECORD | Taint.STATE | Taint.BEFORE):
                        self.flow.observed(
                            Observation(
                                "TL403",
                                node,
                                f'`{_short(left)}` falls back to `""` when the value is missing, and '
                                '`""` is in every text: the check passes',
                                "empty-needle",
                            )
                        )

    def observe_coercion(self, node: ast.Call | ast.Subscript) -> None:
        """TL403 through a table: `NULLS.get(answer, answer)` or `NULLS[answer]` where `NULLS` maps
        `""`, None, "null" or "nan" to a value gold may hold (`"0"`)."""
        if isinstance(node, ast.Call):
            if not (isinstance(node.func, ast.Attribute) and node.func.attr == "get" and node.args):
                return
            table_expr, key = node.func.value, node.args[0]
        else:
            table_expr, key = node.value, node.slice
        if not self.taint_no_calls(key) & Taint.RECORD:
            return
        table = self.dict_literal(table_expr)
        if table is None:
            return
        nulls = [(k.value, v.value) for k, v in zip(table.keys, table.values)
                 if isinstance(k, ast.Constant) and _null_like(k.value) and isinstance(v, ast.Constant)
                 and not _null_like(v.value)]
        if nulls:
            shown = ", ".join(dict.fromkeys(repr(k) for k, _ in nulls))
            became = ", ".join(dict.fromkeys(repr(v) for _, v in nulls))
            where = "" if self.top else f" (in `{self.fn.name}`, which the grader calls)"
            self.flow.observed(Observation(
                "TL403", node, f"the answer `{_short(key)}` is looked up in `{_short(table_expr, 30)}`, "
                f"which turns {shown} into {became}{where}: an empty or missing answer passes when gold "
                f"is {became}",
                "coercion-table", self.index.module.path if self.index.module is not None else ""))

    def dict_literal(self, expr: ast.expr) -> ast.Dict | None:
        """`{...}` itself, or a name bound to one in this function or at the top of its module."""
        if isinstance(expr, ast.Dict):
            return expr
        if not isinstance(expr, ast.Name):
            return None
        bodies = [self.fn.body] + ([self.index.module.tree.body] if self.index.module is not None else [])
        for body in bodies:
            for s in body:
                if isinstance(s, (ast.Assign, ast.AnnAssign)) and isinstance(s.value, ast.Dict) and any(
                    isinstance(t, ast.Name) and t.id == expr.id
                    for t in (s.targets if isinstance(s, ast.Assign) else [s.target])
                ):
                    return s.value
        return None

    def observe_substring(self, node: ast.Compare) -> None:
        """TL406: `gold_id in pred_id`: a gold identifier or path looked for inside the predicted one."""
        if len(node.ops) != 1 or not isinstance(node.ops[0], ast.In):
            return
        gold, pred = node.left, node.comparators[0]
        gold_name, pred_name = _identifier_name(gold), _identifier_name(pred)
        if gold_name is None or pred_name is None:
            return
        if self.taint_no_calls(pred) & Taint.RECORD and not self.taint_no_calls(gold) & Taint.RECORD:
            self.flow.observed(Observation(
                "TL406", node, f"`{_short(node)}` tests that the gold {gold_name} is a substring of the "
                f"predicted {pred_name}: a longer or different one that contains it passes",
                f"{gold_name} in {pred_name}"))

    def constant_verdict(self) -> None:
        """TL407: the grader's body is only `return True` (or another constant verdict)."""
        body = [s for s in self.fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
                and not isinstance(s, ast.Pass)]
        if len(body) > 1 or _abstract(self.fn):
            return
        if not body:  # reported only when its comments hold the code (the rule reads the comments)
            self.flow.observed(Observation(
                "TL407", self.fn.body[-1], "the grader's body is empty: it returns None and fails every "
                "run, whatever the agent did", "empty"))
            return
        kind = exit_kind(body)
        value = body[0].value if isinstance(body[0], ast.Return) else None
        if kind is None or not isinstance(value, ast.Constant) or value.value is None:
            return  # a `raise` or `return None`: a stub, not a verdict
        verdict = "passes every run" if kind == PASS else "fails every run"
        self.flow.observed(Observation(
            "TL407", body[0], f"the grader returns the constant `{ast.unparse(value)}`: it {verdict}, "
            "whatever the agent did", kind))

    def absence_only_failures(self) -> None:
        """TL402's second shape: the grader fails only when a failure marker is in the record, and
        otherwise passes: `if "error" in output: return False` ... `return True`."""
        body = [
            s for s in self.fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
        ]
        if not body or exit_kind(body[-1:]) != PASS:
            return
        markers: list[tuple[ast.If, str]] = []
        for s in body[:-1]:
            if isinstance(s, ast.If):
                marker = self.marker_present(s.test)
                if marker is None or exit_kind(s.body) != FAIL or s.orelse:
                    return
                markers.append((s, marker))
            elif not isinstance(s, (ast.Assign, ast.AnnAssign, ast.Expr)):
                return
        if markers:
            shown = ", ".join(repr(m) for _, m in markers)
            self.flow.observed(
                Observation(
                    "TL402",
                    body[-1],
                    f"the grader fails only when {shown} is in the record and passes otherwise: a "
                    "run that did nothing, and printed nothing, passes",
                    markers[0][1],
                )
            )

    def marker_present(self, test: ast.expr) -> str | None:
        """`"error" in output` (or `a or b` of such): the failure marker tested for."""
        parts = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or) else [test]
        found = None
        for part in parts:
            marker = self.marker_test(part, ast.In)
            if marker is None:
                return None
            found = found or marker
        return found

    def marker_test(self, test: ast.expr, op: type[ast.cmpop]) -> str | None:
        """The failure marker of `"error" <op> <the record>` (`op` is `in` or `not in`), else None."""
        if (
            isinstance(test, ast.Compare)
            and len(test.ops) == 1
            and isinstance(test.ops[0], op)
            and isinstance(test.left, ast.Constant)
            and isinstance(test.left.value, str)
            and FAILURE_MARKER.search(test.left.value)
            and self.taint_no_calls(test.comparators[0]) & Taint.RECORD
        ):
            return test.left.value
        return None

    def observe_verdict(self, node: ast.AST, value: ast.expr) -> None:
        """The returned verdict: an accepted empty answer, an agent-authored outcome field."""
        for alternative in (
            value.values if isinstance(value, ast.BoolOp) and isinstance(value.op, ast.Or) else [value]
        ):
            self.observe_accepting(node, alternative)

    def observe_pass(self, branch: ast.If) -> None:
        test = branch.test
        for alternative in (
            test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or) else [test]
        ):
            self.observe_accepting(branch, alternative)

    def observe_accepting(self, node: ast.AST, test: ast.expr) -> None:
        """`test` alone makes the grader pass."""
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Eq, ast.In)):
            left, right = test.left, test.comparators[0]
            for empty, answer in ((left, right), (right, left)):
                if _empty_literal(empty) and self.taint_no_calls(answer) & Taint.RECORD:
                    self.flow.observed(
                        Observation(
                            "TL403",
                            test,
                            f"the empty answer `{ast.unparse(empty)}` passes (`{_short(test)}`): an "
                            "agent that finds nothing and says nothing is graded correct",
                            "empty-answer",
                        )
                    )
                    return
            for coerced, other in ((left, right), (right, left)):
                fallback = _coerced_missing(coerced)
                if fallback is not None and self.taint_no_calls(coerced) & Taint.RECORD and \
                        not _empty_literal(other):
                    self.flow.observed(
                        Observation(
                            "TL403",
                            test,
                            f"a missing answer becomes `{fallback}` (`{_short(coerced)}`) and is compared "
                            f"with `{_short(other)}`: when that is {fallback}, no answer passes",
                            "coerced-answer",
                        )
                    )
                    return
        role = _role_only(test)
        if role and self.taint_no_calls(test) & Taint.RECORD and not self.taint_no_calls(test) & Taint.STATE \
                and self.first_check(node):
            self.flow.observed(Observation(
                "TL405", test, f"the verdict is only {role} (`{_short(test)}`): the task passes whatever "
                "the agent said or did", "role-only"))
        field_name = _outcome_field(test)
        if (
            field_name
            and self.taint_no_calls(test) & Taint.RECORD
            and not self.taint_no_calls(test) & Taint.STATE
        ):
            self.flow.observed(
                Observation(
                    "TL405",
                    test,
                    f"the verdict is the record's own `{field_name}` field (`{_short(test)}`): the agent's "
                    "word that it succeeded, not a check that it did",
                    field_name,
                )
            )
        marker = self.marker_test(test, ast.NotIn)
        if marker is not None and isinstance(test, ast.Compare):
            self.flow.observed(Observation(
                "TL402", test, f"the grader passes when {marker!r} is absent from "
                f"`{_short(test.comparators[0])}`: a run that did nothing, and printed nothing, passes",
                marker))


    def first_check(self, node: ast.AST) -> bool:
        """`node` is a statement of the grader's own body with no test, loop or call before it that
        could decide the verdict first (a docstring and plain assignments only)."""
        for s in self.fn.body:
            if s is node:
                return True
            if isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant):
                continue
            if not isinstance(s, (ast.Assign, ast.AnnAssign)):
                return False
        return False


_NULL_TEXT = frozenset({"", "null", "none", "nan", "n/a", "na", "nil", "undefined"})
_ID_OR_PATH = re.compile(r"(?:^|_)(id|uuid|path|filepath|filename|file|url|uri)$", re.IGNORECASE)
_ROLE_WORDS = frozenset({"assistant", "model", "ai"})


def _null_like(value: object) -> bool:
    return value is None or (isinstance(value, str) and value.strip().lower() in _NULL_TEXT)


def _identifier_name(expr: ast.expr) -> str | None:
    """What an operand names when it names one identifier or path (`gold_id`, `task.expected_path`,
    `pred["file_path"]`, `str(pred_id).strip()`): `id`, `path`, ...; None for anything else."""
    while isinstance(expr, ast.Call):
        if isinstance(expr.func, ast.Name) and expr.func.id == "str" and len(expr.args) == 1:
            expr = expr.args[0]
        elif isinstance(expr.func, ast.Attribute) and not expr.args and \
                expr.func.attr in ("lower", "strip", "upper", "casefold"):
            expr = expr.func.value
        else:
            return None
    name = None
    if isinstance(expr, ast.Name):
        name = expr.id
    elif isinstance(expr, ast.Attribute):
        name = expr.attr
    elif isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Constant) and \
            isinstance(expr.slice.value, str):
        name = expr.slice.value
    match = _ID_OR_PATH.search(name) if name else None
    return match.group(1).lower() if match else None


def _abstract(fn: FunctionNode) -> bool:
    return any((isinstance(d, ast.Name) and "abstract" in d.id) or
               (isinstance(d, ast.Attribute) and "abstract" in d.attr) for d in fn.decorator_list)


def _field_of(expr: ast.expr) -> str | None:
    if isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Constant) and \
            isinstance(expr.slice.value, str):
        return expr.slice.value
    if isinstance(expr, ast.Attribute):
        return expr.attr
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "get" and \
            expr.args and isinstance(expr.args[0], ast.Constant) and isinstance(expr.args[0].value, str):
        return expr.args[0].value
    return None


def _role_only(test: ast.expr) -> str | None:
    """`messages[-1]["role"] == "assistant"`, `len(trajectory) > 0`, `bool(messages)`: what the check
    amounts to, when it says nothing about what the agent said or did."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        left, op, right = test.left, test.ops[0], test.comparators[0]
        if isinstance(op, (ast.Eq, ast.Is)):
            for const, other in ((left, right), (right, left)):
                if isinstance(const, ast.Constant) and isinstance(const.value, str) and \
                        const.value.lower() in _ROLE_WORDS and _field_of(other) == "role":
                    return f"that a message's role is {const.value!r}"
        if isinstance(left, ast.Call) and call_name(left) == "len" and _plain_chain(left) and \
                isinstance(right, ast.Constant) and (
                    (isinstance(op, ast.Gt) and right.value == 0)
                    or (isinstance(op, ast.GtE) and right.value == 1)
                    or (isinstance(op, ast.NotEq) and right.value == 0)):
            return f"that `{_short(left.args[0])}` is not empty"
    if isinstance(test, ast.Call) and call_name(test) == "bool" and _plain_chain(test):
        return f"that `{_short(test.args[0])}` is not empty"
    return None


def _plain_chain(call: ast.Call) -> bool:
    """`len(messages)`, `bool(result.trajectory)`: of the record itself, not of a value computed from it
    (`len(set(pred) & set(gold))` is an overlap, a real check)."""
    if len(call.args) != 1:
        return False
    arg = call.args[0]
    while isinstance(arg, (ast.Attribute, ast.Subscript)):
        arg = arg.value
    return isinstance(arg, ast.Name)


def _empty_literal(expr: ast.expr) -> bool:
    if isinstance(expr, (ast.List, ast.Tuple, ast.Set)) and not expr.elts:
        return True
    if isinstance(expr, ast.Dict) and not expr.keys:
        return True
    return isinstance(expr, ast.Constant) and expr.value == "" and isinstance(expr.value, str)


def _empty_fallback(expr: ast.expr) -> bool:
    """`x or ""`: a needle that is the empty string when `x` is missing."""
    return (
        isinstance(expr, ast.BoolOp)
        and isinstance(expr.op, ast.Or)
        and isinstance(expr.values[-1], ast.Constant)
        and expr.values[-1].value == ""
    )


def _coerced_missing(expr: ast.expr) -> str | None:
    """`float(x or 0)`, `int(answer or 0)`, `x or 0`, `x if x else 0`: the value a missing answer becomes."""
    inner = expr
    if (
        isinstance(inner, ast.Call)
        and call_name(inner) in ("float", "int", "str", "round", "abs")
        and inner.args
    ):
        inner = inner.args[0]
    if (
        isinstance(inner, ast.BoolOp)
        and isinstance(inner.op, ast.Or)
        and isinstance(inner.values[-1], ast.Constant)
    ):
        value = inner.values[-1].value
        if value in (0, 0.0, "") and not isinstance(value, bool):
            return repr(value)
    if (
        isinstance(inner, ast.IfExp)
        and isinstance(inner.orelse, ast.Constant)
        and inner.orelse.value in (0, 0.0)
        and not isinstance(inner.orelse.value, bool)
    ):
        return repr(inner.orelse.value)
    return None


def _outcome_field(test: ast.expr) -> str | None:
    """`output["success"]`, `result.done`, `r.get("completed")`, `out["status"] == "success"`."""
    target = test
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Eq, ast.Is)):
        right = test.comparators[0]
        ok = isinstance(right, ast.Constant) and (right.value is True or (
            isinstance(right.value, str) and SUCCESS_WORDS.fullmatch(right.value.strip()) is not None) or
            right.value in ("success", "ok", "passed", "done"))
        if not ok:
            return None
        target = test.left
    name: str | None = None
    if (
        isinstance(target, ast.Subscript)
        and isinstance(target.slice, ast.Constant)
        and isinstance(target.slice.value, str)
    ):
        name = target.slice.value
    elif isinstance(target, ast.Attribute):
        name = target.attr
    elif (
        isinstance(target, ast.Call)
        and isinstance(target.func, ast.Attribute)
        and target.func.attr == "get"
        and target.args
        and isinstance(target.args[0], ast.Constant)
        and isinstance(target.args[0].value, str)
    ):
        name = target.args[0].value
    if name is None:
        return None
    if OUTCOME_FIELD.match(name) or (name == "status" and target is not test):
        return name
    return None


def _walk_expr(expr: ast.AST) -> list[ast.AST]:
    """Nodes of an expression, not descending into lambdas."""
    return depth_first([expr], _LAMBDA)


_LAMBDA = frozenset({ast.Lambda})


def _chain_around(nodes: list[ast.AST], name: ast.Name) -> ast.AST:
    """The longest attribute/subscript chain among an expression's nodes that starts at `name`:
    `post.slack.users`."""
    best: ast.AST = name
    best_depth = 0
    for node in nodes:
        if isinstance(node, (ast.Attribute, ast.Subscript)):
            base: ast.AST = node
            depth = 0
            while isinstance(base, (ast.Attribute, ast.Subscript)):
                base = base.value
                depth += 1
            if base is name and depth > best_depth:
                best, best_depth = node, depth
    return best


def _short(node: ast.AST | None, limit: int = 60) -> str:
    if node is None:
        return ""
    text = " ".join(ast.unparse(node).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


# -- the grader as a whole -----------------------------------------------------------------------------


def grade(fn: FunctionNode, roles: Mapping[str, Role], index: FunctionIndex, cls: str | None = None,
          factories: frozenset[str] = frozenset()) -> GraderFlow:
    """The flow of one grader: its claims, decisions, state reads and what TL402-TL407 report.
    `roles` gives each parameter's role; a `state` parameter in `factories` is a factory whose calls
    build the state (`environment_constructor()`)."""
    flow = GraderFlow()
    roots = {name: {"state": Taint.STATE, "before": Taint.BEFORE, "record": Taint.RECORD}[role]
             for name, role in roles.items() if name not in factories}
    walker = _Walker(fn, index, cls, roots, flow, 0, {}, top=True, state_factories=factories,
                     node_lists=index.expr_nodes,
                     shared=cast(SharedResults, index.helper_results))
    walker.block(fn.body)
    walker.absence_only_failures()
    walker.constant_verdict()
    return flow


def module_index(module: ModuleSource) -> FunctionIndex:
    """The (cached) function index of a module of the tree, as the summariser builds it."""
    return FunctionIndex.of(module)
