"""Discovery patterns: the data a benchmark family's profile gives the analysis about its code.

A profile's `patterns.py` (`toollint/profiles/<name>/patterns.py`) defines `PATTERNS = Patterns(...)`
from the marker types below; a third-party profile sets `Profile.patterns` to one. The analysis
applies the patterns of every profile and framework at once (`toollint.analysis.families`), so a tree
that mixes frameworks is read whole. Nothing here names a benchmark: the markers are data, and what they
mean is fixed here.

| marker              | marks                                                                     |
|---------------------|---------------------------------------------------------------------------|
| `ToolDecorator`     | `@name` / `@x.name(...)` on a function or method: a tool                   |
| `WriterKeyword`     | a keyword of a tool marker that declares whether it writes (`mutates_state=False`) |
| `WriterKind`        | a marker argument naming a kind (`ToolType.WRITE`): writer or not          |
| `StateAnnotation`   | `Annotated[T, Depends("name")]`: a parameter that is injected state       |
| `ToolBaseClass`     | a subclass of a base (across modules): its `_run` / `invoke` is the tool   |
| `ToolkitClass`      | a class named like a toolkit: every public method is a tool               |
| `RegistrationCall`  | `FunctionTool(fn)`, `StructuredTool.from_function(fn)`: `fn` is a tool     |
| `StateAccessor`     | `get_current_context()`: a call that returns benchmark state               |
| `ToolDispatcher`    | `@server.call_tool()`: one function serving many tools, one per name branch |
| `RequestDispatcher` | a function branching on the kind of the agent's request: one tool per branch |
| `ReplyCall`         | `session.inject(msg)`: a call that sends a branch's reply to the agent     |
| `GraderFunction`    | a function that decides a run's verdict, with the roles of its parameters  |
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from typing import Any, NamedTuple

from toollint.analysis.walk import walk_nodes


class ToolDecorator(NamedTuple):
    """`@name`, `@name(...)`, `@owner.name(...)`: the function is a tool. `name` is matched against
    the decorator's last dotted component, or against its whole dotted name when it has a dot."""

    name: str


class WriterKind(NamedTuple):
    """A positional or keyword argument of a tool marker whose last dotted component names the
    tool's kind: `@is_tool(ToolType.WRITE)` -> writer; `READ` -> not a writer."""

    kind: str
    writes: bool


class WriterKeyword(NamedTuple):
    """A keyword of a tool marker (or of a call nested in it) that declares whether the tool writes:
    `mutates_state=False` (writes when true), `readOnlyHint=True` (writes when false)."""

    keyword: str
    writes_when_true: bool = True


class StateAnnotation(NamedTuple):
    """`Annotated[T, marker("name")]`: the parameter is state injected by the framework, named by the
    marker's first string argument (else by the parameter's name)."""

    marker: str


class ToolBaseClass(NamedTuple):
    """A class deriving from `base` (directly or through classes of the linted tree, across modules)
    is a tool whose body is its first method named in `methods`. Parameters named in `state_params`
    are state (a static `invoke(data, ...)`); `self` is state for instance methods."""

    base: str
    methods: tuple[str, ...] = ("_run", "_arun", "run", "invoke", "__call__")
    state_params: tuple[str, ...] = ()


class ToolkitClass(NamedTuple):
    """A class whose name (or a base's name) matches `pattern` is a toolkit: every public method is a
    tool, unless some method carries a tool marker (then the marker decides) or it is in `exclude`."""

    pattern: str
    exclude: frozenset[str] = frozenset({"get_tools", "get_tool", "tools", "run", "close", "reset", "dict",
                                         "model_dump", "json", "copy"})


class RegistrationCall(NamedTuple):
    """A call that turns a function into a tool: `FunctionTool(fn)`, `Tool(func=fn)`,
    `StructuredTool.from_function(fn)`. `callee` is matched like `ToolDecorator.name`; the function is
    the first positional argument or one of `keywords`."""

    callee: str
    keywords: tuple[str, ...] = ("func", "fn", "function", "coroutine")


class StateAccessor(NamedTuple):
    """A call returning benchmark state, matched by the called name's last component:
    `get_current_context()` in `get_current_context().add_to_database(...)`."""

    name: str


class ToolDispatcher(NamedTuple):
    """A function decorated `@x.<decorator>()` that serves many tools: each branch comparing its
    name parameter (the first) with a string (`if name == "add":`, `match name: case "add":`) is one
    tool. Registry and HTTP-verb dispatch are other dispatch patterns (see `discovery.DISPATCH`).
    `keyword`: the same handler registered by a call's keyword instead (`Server(on_call_tool=fn)`)."""

    decorator: str
    keyword: str = ""


class RequestDispatcher(NamedTuple):
    """A function (its whole name matching the regular expression `name`; a method of a class whose
    name or a base's name matches `within`, when given) that serves the agent's requests by kind: each
    branch comparing one subject with a string (`if r.startswith("POST"):`, `elif action ==
    "create":`) is one tool. A function branching on two or more HTTP verbs needs no marker."""

    name: str
    within: str = ""


class ReplyCall(NamedTuple):
    """A call that sends a dispatcher branch's reply to the agent instead of a `return`:
    `session.inject(msg)` (`method="inject"`), `history.append(msg)` (`method="append"`,
    `owners=("history",)`: the receiver's last name must be one of them; empty matches any)."""

    method: str
    owners: tuple[str, ...] = ()


class GraderFunction(NamedTuple):
    """A function that decides a run's verdict. Its whole name matches the regular expression `name`;
    with `within`, it is a method of a class whose name or a base's name matches that expression; with
    `params`, its leading parameters (after `self`/`cls`) are exactly these. The roles of its
    parameters, by name: `state` the live state after the run (a value, or a factory whose calls build
    it), `before` the state before the run, `record` the agent's record (its calls, the replies it got,
    its answer). `self_state`: the instance itself is the live state (an assertion method of a
    toolkit). A parameter with no role is task data (the gold answer, the case)."""

    name: str
    within: str = ""
    params: tuple[str, ...] = ()
    state: tuple[str, ...] = ()
    before: tuple[str, ...] = ()
    record: tuple[str, ...] = ()
    self_state: bool = False


class Patterns(NamedTuple):
    """Every marker a family uses (combine two with `merge`); a family's module exposes one as `PATTERNS`."""

    family: str = ""
    decorators: tuple[ToolDecorator, ...] = ()
    writer_kinds: tuple[WriterKind, ...] = ()
    writer_keywords: tuple[WriterKeyword, ...] = ()
    state_annotations: tuple[StateAnnotation, ...] = ()
    tool_bases: tuple[ToolBaseClass, ...] = ()
    toolkit_classes: tuple[ToolkitClass, ...] = ()
    registrations: tuple[RegistrationCall, ...] = ()
    state_accessors: tuple[StateAccessor, ...] = ()
    dispatchers: tuple[ToolDispatcher, ...] = ()
    request_dispatchers: tuple[RequestDispatcher, ...] = ()
    reply_calls: tuple[ReplyCall, ...] = ()
    graders: tuple[GraderFunction, ...] = ()

    def merge(self, other: Patterns) -> Patterns:
        """Both families' markers (this one's first); the first non-empty family name."""
        merged: dict[str, Any] = {name: _union(getattr(self, name), getattr(other, name))
                                  for name in self._fields if name != "family"}
        return Patterns(family=self.family or other.family, **merged)


def _union(a: tuple[Any, ...], b: tuple[Any, ...]) -> tuple[Any, ...]:
    return a + tuple(x for x in b if x not in a)


class CompiledPatterns(NamedTuple):
    """All families' patterns, indexed for the lookups discovery makes on every function."""

    decorators: dict[str, str]  # name -> family
    writer_kinds: dict[str, bool]  # upper-cased kind -> writes
    writer_keywords: dict[str, bool]  # keyword -> writes when true
    state_annotations: dict[str, str]  # marker -> family
    # base -> every (marker, family) naming it (two families' `Tool` bases differ in method)
    tool_bases: dict[str, tuple[tuple[ToolBaseClass, str], ...]]
    toolkit_classes: tuple[tuple[re.Pattern[str], ToolkitClass, str], ...]
    registrations: dict[str, tuple[RegistrationCall, str]]
    state_accessors: frozenset[str]
    dispatchers: dict[str, str]  # decorator -> family
    request_dispatchers: tuple[
        tuple[re.Pattern[str], re.Pattern[str] | None, str], ...
    ]  # name, within, family
    reply_calls: dict[str, frozenset[str]]  # method -> receiver names (empty: any receiver)
    graders: tuple[tuple[GraderFunction, re.Pattern[str], re.Pattern[str] | None, str], ...]
    dispatcher_keywords: dict[str, str] = {}  # keyword naming a dispatcher handler -> family  # noqa: RUF012
    tool_base_methods: frozenset[str] = frozenset()  # every tool method of `tool_bases` (`_run`, `invoke`)


def compile_patterns(families: Iterable[Patterns]) -> CompiledPatterns:
    decorators: dict[str, str] = {}
    kinds: dict[str, bool] = {}
    keywords: dict[str, bool] = {}
    annotations: dict[str, str] = {}
    bases: dict[str, tuple[tuple[ToolBaseClass, str], ...]] = {}
    toolkits: list[tuple[re.Pattern[str], ToolkitClass, str]] = []
    registrations: dict[str, tuple[RegistrationCall, str]] = {}
    accessors: set[str] = set()
    dispatchers: dict[str, str] = {}
    dispatcher_keywords: dict[str, str] = {}
    request_dispatchers: list[tuple[re.Pattern[str], re.Pattern[str] | None, str]] = []
    replies: dict[str, frozenset[str]] = {}
    graders: list[tuple[GraderFunction, re.Pattern[str], re.Pattern[str] | None, str]] = []
    for p in families:
        for d in p.decorators:
            decorators.setdefault(d.name, p.family)
        for k in p.writer_kinds:
            kinds.setdefault(k.kind.upper(), k.writes)
        for w in p.writer_keywords:
            keywords.setdefault(w.keyword, w.writes_when_true)
        for a in p.state_annotations:
            annotations.setdefault(a.marker, p.family)
        for b in p.tool_bases:
            bases[b.base] = (*bases.get(b.base, ()), (b, p.family))
        toolkits += [(re.compile(t.pattern), t, p.family) for t in p.toolkit_classes]
        for r in p.registrations:
            registrations.setdefault(r.callee, (r, p.family))
        accessors.update(a.name for a in p.state_accessors)
        for x in p.dispatchers:
            dispatchers.setdefault(x.decorator, p.family)
            if x.keyword:
                dispatcher_keywords.setdefault(x.keyword, p.family)
        request_dispatchers += [(re.compile(r.name), re.compile(r.within) if r.within else None, p.family)
                                for r in p.request_dispatchers]
        for reply in p.reply_calls:
            # owners accumulate; one family that matches any receiver makes the method match any
            known = replies.get(reply.method)
            owners = frozenset(reply.owners)
            replies[reply.method] = frozenset() if (known is not None and not known) or not owners else \
                (known or frozenset()) | owners
        graders += [
            (g, re.compile(g.name), re.compile(g.within) if g.within else None, p.family) for g in p.graders
        ]
    return CompiledPatterns(decorators, kinds, keywords, annotations, bases, tuple(toolkits),
                            registrations, frozenset(accessors), dispatchers, tuple(request_dispatchers),
                            replies, tuple(graders), dispatcher_keywords,
                            frozenset(m for markers in bases.values() for b, _ in markers for m in b.methods))


def declared_writer(dec: ast.expr, patterns: CompiledPatterns) -> tuple[bool | None, str]:
    """What a tool marker declares about writing: `mutates_state=`/`readOnlyHint=` (anywhere in the
    call) first, then a kind argument (`ToolType.WRITE`). Here, beside the marker types, so that a
    profile's task reader reads markers as discovery does."""
    if not isinstance(dec, ast.Call):
        return None, ""
    for sub in walk_nodes(dec):
        if isinstance(sub, ast.Call):
            for kw in sub.keywords:
                if kw.arg in patterns.writer_keywords and isinstance(kw.value, ast.Constant) and \
                        isinstance(kw.value.value, bool):
                    writes = kw.value.value == patterns.writer_keywords[kw.arg]
                    return writes, f"`{kw.arg}={kw.value.value}`"
    for arg in [*dec.args, *(k.value for k in dec.keywords)]:
        text = _dotted(arg) or (
            arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, str) else ""
        )
        kind = text.rsplit(".", 1)[-1].upper()
        if kind in patterns.writer_kinds:
            return patterns.writer_kinds[kind], f"`{text}`"
    return None, ""


def _dotted(expr: ast.expr) -> str:
    if isinstance(expr, ast.Attribute):
        inner = _dotted(expr.value)
        return f"{inner}.{expr.attr}" if inner else ""
    return expr.id if isinstance(expr, ast.Name) else ""
