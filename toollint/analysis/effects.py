"""Writes outside the state the analysis sees: a tool whose effect lands in a database, a shell or a
remote service it reaches through a call the summariser cannot follow.

The summary lists such calls (`FunctionSummary.external`, and the state-free calls it used opaquely)
without deciding: a search that POSTs its query reaches the same `requests.post` as a webhook that
triggers an applet. `outside_write` decides from evidence of three kinds, each with a confidence:

- `runs the agent's code` (high): one of the tool's own arguments is handed to a command, code or SQL
  runner (`subprocess.run(cmd)`, `self.process.run(commands)`, `session.execute(text(sql_query))`),
  unless the SQL is spelled as a read or the tool declares itself read-only ("only SELECT").
- `writing SQL` (high): a statement the code spells as INSERT, UPDATE, DELETE, ... run on a connection.
- `declared action` (medium): what the model is told the tool does (its name, its `description` or the
  first line of its docstring) starts with an action verb (`close_session`, "Click on an element",
  "Invokes an automation") and its code reaches a call the analysis cannot follow. A declaration that
  only searches, reads or answers is no evidence, whatever its code POSTs.

The rules' own notion of a writer (`is_writer`, state paths) is untouched: this only classes the tool
for `--show-tools`, the tool facts and the discovery counts.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from toollint.analysis.dispatch import read_only_sql
from toollint.analysis.summary import EXTERNAL_EFFECT_CALLS, FunctionSummary, call_name
from toollint.analysis.vocabulary import FRAMEWORK_PARAMS, WRITE_VERBS, first_word, verb_words
from toollint.analysis.walk import kept_for_body, walk_nodes
from toollint.sources import parse_file, record_absent, record_read

Kind = Literal["runs the agent's code", "writing SQL", "declared action", "runs a configured action",
               "posts to a webhook", "runs a declared writing mode",
               "calls a function looked up by a writing name", "forwards an action to the environment"]

# module functions that run a command or a program
COMMAND_RUNNERS = frozenset({
    "subprocess.run", "subprocess.Popen", "subprocess.call", "subprocess.check_call",
    "subprocess.check_output", "subprocess.getoutput", "subprocess.getstatusoutput", "os.system", "os.popen",
})
# methods that run SQL on a connection, a cursor or a session
SQL_RUNNERS = frozenset({"execute", "executemany", "executescript", "execute_statement", "exec_driver_sql"})
# methods that run code, on a receiver named as something that runs it (`self.process.run(cmds)`)
CODE_RUNNERS = frozenset({"run", "run_python", "run_code", "exec_run", "exec_command", "notebook_exec"})
RUNNER_RECEIVER = re.compile(r"process|shell|sandbox|session|container|terminal|kernel|bash", re.IGNORECASE)
WRITING_SQL = re.compile(r"^\s*\(?\s*(?:insert|update|delete|replace|merge|upsert)\b", re.IGNORECASE)
PAYLOAD_KEYWORDS = frozenset({"statement", "sql", "query", "operation", "command", "cmd", "code", "args",
                              "commands", "script"})
RUN_WORDS = frozenset({"run", "execute", "trigger", "invoke", "perform"})
ACTION_FIELDS = frozenset({"action_id", "action_name"})  # a tool built for one action (`self.action_id`)
VALIDATOR = re.compile(r"validat|check|sanitiz|is_safe|read_only|readonly", re.IGNORECASE)
READ_ONLY_CLAIM = re.compile(r"\bonly\s+(?:valid\s+)?(?:select|read)\b|\bread[- ]only\b", re.IGNORECASE)
# verbs a declaration opens with that act on something beyond the answer (besides the writing verbs)
ACTION_VERBS = (WRITE_VERBS - {"open", "return"}) | {"click", "trigger", "invoke", "text", "email", "notify",
                                                    "deploy", "star"}
NOUNS = frozenset({"text", "email", "star", "record", "mark", "post"})  # "convert audio to text"
PURPOSE = re.compile(r"\bto\s+([a-z]+)(?:\s*(?:&|and|or)\s*([a-z]+))?\b")
# the words a description puts before its verb ("Use this tool to close ...", "A tool that sends ...")
_LEAD_IN = re.compile(r"^\s*(?:(?:use\s+)?(?:this\s+)?(?:a\s+)?tool\s+(?:that|to|for)\s+|this\s+tool\s+|"
                      r"use\s+this\s+to\s+)", re.IGNORECASE)


@dataclass(frozen=True)
class OutsideWrite:
    kind: Kind
    confidence: Literal["high", "medium"]
    callee: str
    line: int

    def describe(self) -> str:
        return f"{self.kind} ({self.confidence}): `{self.callee}` at line {self.line}"


def declaration(tool_node: ast.AST, class_node: ast.ClassDef | None) -> list[str]:
    """What the model is told the tool is: the class's constant `name` and `description`, else the
    function's name and the first line of its docstring."""
    if class_node is not None:
        out = []
        for s in class_node.body:
            target = s.target if isinstance(s, ast.AnnAssign) else s.targets[0] if isinstance(s, ast.Assign) \
                else None
            value = getattr(s, "value", None)
            if isinstance(target, ast.Name) and target.id in ("name", "description") and isinstance(
                    value, ast.Constant) and isinstance(value.value, str) and value.value.strip():
                out.append(value.value)
        return out
    name = getattr(tool_node, "name", "")
    doc = ast.get_docstring(tool_node) if isinstance(tool_node, (ast.FunctionDef, ast.AsyncFunctionDef)) \
        else None
    return [name] + ([doc.strip().splitlines()[0]] if doc and doc.strip() else [])


def _declared_verb(texts: list[str]) -> str | None:
    for text in texts:
        if " " not in text.strip():  # a name: `close_multion_session` (a private one the model never sees)
            word = first_word(text.strip()) if not text.startswith("_") else ""
        else:
            rest = _LEAD_IN.sub("", text)
            match = re.match(r"\s*([A-Za-z]+)", rest)
            word = match.group(1).lower() if match else ""
            word = word[:-1] if word.endswith("s") and word[:-1] in ACTION_VERBS else word  # "Invokes"
            # the purpose its first sentence gives: "This calls the service to analyze & store data"
            purpose = PURPOSE.search(re.split(r"\.\s", text.strip(), maxsplit=1)[0])
            if word not in ACTION_VERBS and purpose is not None:
                verbs = [w.lower() for w in purpose.groups() if w and w.lower() in ACTION_VERBS - NOUNS]
                word = verbs[0] if verbs else word
        if word in ACTION_VERBS:
            return word
    return None


def _param_names(fn: ast.AST) -> set[str]:
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return set()
    args = fn.args
    names = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]} - FRAMEWORK_PARAMS
    # `_run(self, **kwargs)`: the agent's arguments arrive as the keywords
    return names | {a.arg for a in (args.vararg, args.kwarg) if a is not None}


def _carries(value: ast.expr, names: set[str]) -> bool:
    """`value` is one of `names` as text: itself, an item of it, a string built from it (not a value
    some other call computed from it, such as a statement built around the agent's parameters)."""
    if isinstance(value, ast.Name):
        return value.id in names
    if isinstance(value, (ast.Subscript, ast.Starred)):
        return _carries(value.value, names)
    if isinstance(value, ast.JoinedStr):  # `f"PRAGMA table_info({t})"`: the code spells the statement
        if value.values and isinstance(value.values[0], ast.Constant) and str(value.values[0].value).strip():
            return False
        return any(isinstance(v, ast.FormattedValue) and _carries(v.value, names) for v in value.values)
    if isinstance(value, ast.BinOp):
        if isinstance(value.left, ast.Constant) and str(value.left.value).strip():
            return False
        return _carries(value.left, names) or _carries(value.right, names)
    if isinstance(value, (ast.List, ast.Tuple)):
        return any(_carries(e, names) for e in value.elts)
    if isinstance(value, ast.Call):  # `kwargs.get("query")`, `text(sql)`, `code.strip()`
        func = value.func
        if isinstance(func, ast.Attribute) and func.attr in ("get", "strip", "format", "pop"):
            return _carries(func.value, names) or any(_carries(a, names) for a in value.args[1:])
        return isinstance(func, ast.Name) and len(value.args) == 1 and _carries(value.args[0], names)
    return False


def _agent_values(assigns: list[ast.Assign], names: set[str]) -> set[str]:
    """`names` and the locals of a function (its `assigns`) computed from them (two passes:
    `cmd = [py, code]`)."""
    names = set(names)
    for _ in range(2):
        for a in assigns:
            if _carries(a.value, names):
                names |= {t.id for t in a.targets if isinstance(t, ast.Name)}
    return names


def _agent_map(summary: FunctionSummary, scopes: _Scopes) -> dict[int, set[str]]:
    """For the tool and each helper it reaches (in call order), the names holding the agent's values: a
    helper's parameter does only where some call of it passes one (`_execute_query(arguments["query"])`,
    not `_execute_query("SELECT name FROM sqlite_master")`)."""
    out = {id(summary.node): _agent_values(scopes.assigns[id(summary.node)], _param_names(summary.node))}
    done: list[ast.AST] = [summary.node]
    for helper in summary.helpers:
        params = [a.arg for a in [*helper.args.posonlyargs, *helper.args.args]]
        skip = 1 if params[:1] in (["self"], ["cls"]) else 0
        passed: set[str] = set()
        for fn in done:
            for c in scopes.calls[id(fn)]:
                if scopes.callee[id(c)] == helper.name:
                    for i, a in enumerate(c.args):
                        if i + skip < len(params) and _carries(a, out[id(fn)]):
                            passed.add(params[i + skip])
                    passed |= {kw.arg for kw in c.keywords if kw.arg and _carries(kw.value, out[id(fn)])}
        out[id(helper)] = _agent_values(scopes.assigns[id(helper)], passed)
        done.append(helper)
    return out


class _Scopes:
    """Which of a tool's functions (itself, then its helpers) holds each call, and each one's calls and
    assignments (in `ast.walk` order): walked once per tool, not again for every call it makes
    (quadratic on a long tool: a third of a cold run on an MCP server's 600-line tool)."""

    def __init__(self, summary: FunctionSummary) -> None:
        self.tool = summary.node
        self.owner: dict[int, ast.AST] = {}
        self.calls: dict[int, list[ast.Call]] = {}
        self.callee: dict[int, str] = {}  # a call's last name: `helper` of `self.helper(...)`
        self.assigns: dict[int, list[ast.Assign]] = {}
        self.assigned: dict[int, dict[str, list[ast.expr]]] = {}
        # whether a function's nodes hold an attribute naming an action (`self.action_id`, `x.action.id`)
        self.names_action: dict[int, bool] = {}
        for fn in [summary.node, *summary.helpers]:
            if id(fn) in self.calls:
                continue
            calls, callees, assigns, values, self.names_action[id(fn)] = _scan(fn)
            for n in calls:
                self.owner.setdefault(id(n), fn)
            self.callee.update(callees)
            self.calls[id(fn)], self.assigns[id(fn)], self.assigned[id(fn)] = calls, assigns, values

    def enclosing(self, node: ast.Call) -> ast.AST:
        return self.owner.get(id(node), self.tool)

    def local_value(self, name: str, fn: ast.AST) -> ast.expr | None:
        """The one value `fn` assigns to `name`, if it assigns exactly one."""
        values = self.assigned[id(fn)].get(name, [])
        return values[0] if len(values) == 1 else None


_Scan = tuple[list[ast.Call], dict[int, str], list[ast.Assign], dict[str, list[ast.expr]], bool]


def _scan(fn: ast.AST) -> _Scan:
    """A function's calls (in `ast.walk` order) with each one's last name, its assignments, the values
    each local is assigned, and whether an attribute of it names an action (`_runs_configured_action`):
    read once per function and kept on its node, for every tool that reaches it (a module's helper is
    reached by most of its tools)."""
    return kept_for_body(fn, _SCAN, _scanned)


def _scanned(fn: ast.AST) -> _Scan:
    calls: list[ast.Call] = []
    callees: dict[int, str] = {}  # a call's last name: `helper` of `self.helper(...)`
    assigns: list[ast.Assign] = []
    values: dict[str, list[ast.expr]] = {}
    names_action = False
    for n in walk_nodes(fn):
        if isinstance(n, ast.Call):  # (only calls are asked for their function: `enclosing`)
            calls.append(n)
            callees[id(n)] = call_name(n).rsplit(".", 1)[-1]
        elif isinstance(n, ast.Attribute):
            names_action = names_action or n.attr in ACTION_FIELDS or n.attr == "action"
        elif isinstance(n, ast.Assign):
            assigns.append(n)
            for name in dict.fromkeys(t.id for t in n.targets if isinstance(t, ast.Name)):
                values.setdefault(name, []).append(n.value)
    return calls, callees, assigns, values, names_action


_SCAN = "_toollint_scan"


def _select_guard(summary: FunctionSummary) -> bool:
    """`if not query.strip().upper().startswith("SELECT"): raise ...`: only reads get through."""
    for fn in [summary.node, *summary.helpers]:
        for n in walk_nodes(fn):
            test = n.test if isinstance(n, ast.If) else None
            check = test.operand if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) else None
            if isinstance(check, ast.Call) and call_name(check).endswith("startswith") and any(
                    isinstance(c, ast.Constant) and isinstance(c.value, str) and read_only_sql(c)
                    for a in check.args for c in walk_nodes(a)):
                return True
    return False


def _runs_agent_code(call: ast.Call, summary: FunctionSummary, read_only: bool,
                     agents: dict[int, set[str]], scopes: _Scopes) -> Kind | None:
    name = call_name(call)
    attr = call.func.attr if isinstance(call.func, ast.Attribute) else ""
    receiver = name.rsplit(".", 1)[0] if "." in name else ""
    sql = attr in SQL_RUNNERS
    if not (name in COMMAND_RUNNERS or sql or (attr in CODE_RUNNERS and RUNNER_RECEIVER.search(receiver))):
        return None
    # what is run: the first argument, or the keyword that names it (`statement=query`)
    args = call.args[:1] or [kw.value for kw in call.keywords if kw.arg in PAYLOAD_KEYWORDS]
    if sql and call.args and isinstance(call.args[0], (ast.Constant, ast.JoinedStr)):
        return "writing SQL" if WRITING_SQL.match(_text(call.args[0])) else None
    if sql and (read_only or (call.args and read_only_sql(call.args[0]))):
        return None
    fn = scopes.enclosing(call)
    agent = agents.get(id(fn), set())
    if not any(_carries(a, agent) for a in args):
        return None
    if sql and isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Name) and _scratch(
            scopes.local_value(call.func.value.id, fn)):
        return None  # `db = SQLiteDatabase(":memory:")`: a scratch database the tool opens and drops
    if sql and (_validated(args, fn, agent) or _select_guard(summary)):
        return None
    return "runs the agent's code"


def _scratch(opened: ast.expr | None) -> bool:
    """A store opened from constants alone (`sqlite3.connect(":memory:")`), not from where the tool's
    database lives (`Session()` bound elsewhere, `connect(self.uri)`)."""
    return isinstance(opened, ast.Call) and bool(opened.args) and all(
        isinstance(a, ast.Constant) for a in opened.args) and any(
        isinstance(a, ast.Constant) and isinstance(a.value, str) for a in opened.args)


def _runs_configured_action(call: ast.Call, summary: FunctionSummary, scopes: _Scopes) -> bool:
    """`service.run_action(self.action.id, ...)`, `self.composio_action(**kw)`, a POST to
    `f"{base}/actions/{self.action_name}/execute"`: the tool runs the third-party action it was built
    for (an automation platform's: send an email, create a task), not a search of it."""
    if id(call) in summary.helper_calls:
        return False
    func = call.func
    words = verb_words(func.attr) if isinstance(func, ast.Attribute) else []
    if "action" in words and (words[-1] == "action" and isinstance(func, ast.Attribute)
                              and call_name(call).startswith("self.") and len(words) > 1
                              or any(w in RUN_WORDS for w in words)):
        return True
    fn = scopes.enclosing(call)
    if id(call) in scopes.owner and not scopes.names_action[id(fn)]:
        return False  # (the function holding the call, its arguments and their values names no action)
    args = [*call.args, *(kw.value for kw in call.keywords)]
    args += [v for a in args if isinstance(a, ast.Name) and (v := scopes.local_value(a.id, fn)) is not None]
    return any(isinstance(n, ast.Attribute) and n.attr in ACTION_FIELDS and dotted_root(n) == "self"
               or isinstance(n, ast.Attribute) and n.attr == "id" and isinstance(n.value, ast.Attribute)
               and n.value.attr == "action" for a in args for n in walk_nodes(a))


def dotted_root(node: ast.expr) -> str:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else ""


def _text(node: ast.expr) -> str:
    if isinstance(node, ast.Constant):
        return str(node.value)
    if isinstance(node, ast.JoinedStr):
        return "".join(str(v.value) for v in node.values if isinstance(v, ast.Constant))
    return ""


def _effect_named(callee: str) -> bool:
    """`requests.post`, `client.send_message`: not `Image.open` (a file read, most often)."""
    last = callee.rsplit(".", 1)[-1]
    return last in EXTERNAL_EFFECT_CALLS or any(w in ACTION_VERBS for w in verb_words(last))


def _validated(name_args: list[ast.expr], fn: ast.AST, agent: set[str]) -> bool:
    """The agent's SQL goes through a validator first (`valid, msg = self._validate_query(sql)`)."""
    carried = {n.id for a in name_args for n in walk_nodes(a) if isinstance(n, ast.Name) and n.id in agent}
    return any(isinstance(c, ast.Call) and VALIDATOR.search(call_name(c).rsplit(".", 1)[-1])
               and any(isinstance(a, ast.Name) and a.id in carried for a in c.args)
               for c in walk_nodes(fn))


def mode_prompts(class_node: ast.ClassDef, path: str) -> tuple[str, ...]:
    """A tool class built once per mode (a `mode` field, its `description` left empty for the toolkit
    to fill) declares its modes in the prompts module beside it (`prompt.py`: `CREATE_FILE_PROMPT`,
    `GET_ISSUES_PROMPT`): the names of those prompts, when the class is such a tool."""
    fields = {t.target.id: t.value for t in class_node.body
              if isinstance(t, ast.AnnAssign) and isinstance(t.target, ast.Name)}
    empty = isinstance(fields.get("description"), ast.Constant) and not getattr(
        fields["description"], "value", "x")
    if "mode" not in fields or not empty or not path:
        return ()
    for name in ("prompt.py", "prompts.py"):
        # parsed once per process, the tree shared with the engine when it lints the module, and recorded
        # as what the tool's facts rest on (the cache's key: an edit of the prompts is seen)
        prompts = str(Path(path).with_name(name))
        parsed = parse_file(prompts)
        if parsed is None:
            record_absent(path, (prompts,))
            continue
        record_read(path, prompts)
        if parsed.tree is None:
            return ()
        return tuple(t.id for s in parsed.tree.body if isinstance(s, ast.Assign) for t in s.targets
                     if isinstance(t, ast.Name) and t.id.endswith("PROMPT"))
    return ()


def outside_write(summary: FunctionSummary, declared: list[str],
                  docs: tuple[str, ...] = (), modes: tuple[str, ...] = ()) -> OutsideWrite | None:
    """Evidence that the tool changes something outside the state the analysis sees, or None. `docs`:
    what the developer wrote beside it (its class's docstring), read only for a read-only claim;
    `modes`: the prompts its modes are declared by (`mode_prompts`)."""
    docs = (*docs, ast.get_docstring(summary.node) or "")
    read_only = any(READ_ONLY_CLAIM.search(t) for t in [*declared, *docs])
    calls = [e.node for e in summary.external] + [o.node for o in summary.opaque if o.how == "call"]
    seen: set[int] = set()
    scopes = _Scopes(summary)
    agents = _agent_map(summary, scopes)
    for fn in [summary.node, *summary.helpers]:  # also the runners the summary used no state with
        calls += scopes.calls[id(fn)]
    for node in calls:
        call = node if isinstance(node, ast.Call) else None
        if call is None or id(call) in seen:
            continue
        seen.add(id(call))
        kind = _runs_agent_code(call, summary, read_only, agents, scopes)
        if kind is not None:
            return OutsideWrite(kind, "high", call_name(call), call.lineno)
    if read_only:
        return None
    for node in calls:
        if isinstance(node, ast.Call) and _runs_configured_action(node, summary, scopes):
            return OutsideWrite("runs a configured action", "medium", call_name(node), node.lineno)
    writing_modes = [m for m in modes if any(w in WRITE_VERBS - {"open", "return"} for w in verb_words(m))]
    for node in calls:  # `self.api_wrapper.run(self.mode, query)`, where a mode creates or updates
        if writing_modes and isinstance(node, ast.Call) and id(node) not in summary.helper_calls and any(
                isinstance(a, ast.Attribute) and a.attr == "mode" and dotted_root(a) == "self"
                for a in node.args):
            return OutsideWrite("runs a declared writing mode", "medium",
                                f"{call_name(node)} (modes: {', '.join(writing_modes[:3])})", node.lineno)
    for node in calls:  # `_get_app_func(app, "delete_account")()`: a function the tree does not hold
        looked_up = node.func if isinstance(node, ast.Call) else None
        if isinstance(node, ast.Call) and isinstance(looked_up, ast.Call) and any(
                isinstance(a, ast.Constant) and isinstance(a.value, str) and "_" in a.value
                and first_word(a.value) in WRITE_VERBS - {"open", "return"} for a in looked_up.args):
            return OutsideWrite("calls a function looked up by a writing name", "medium",
                                f"{call_name(looked_up)}(...)", node.lineno)
    posts = [e for e in summary.external if e.callee.rsplit(".", 1)[-1] in ("post", "put", "patch")]
    if posts and any("webhook" in t.lower() for t in [*declared, *docs]):
        return OutsideWrite("posts to a webhook", "medium", posts[0].callee,
                            getattr(posts[0].node, "lineno", summary.node.lineno))
    verb = _declared_verb(declared)
    if verb is None:
        return None
    # a call named as an effect (`requests.post`, `client.send`), or one named by the declared verb
    # itself (declared "click", `page.click(selector)`): not a constructor or a form it fills in
    reached = [(e.callee, e.node) for e in summary.external if _effect_named(e.callee)] + [
        (call_name(c), c) for c in calls if isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute)
        and id(c) not in summary.helper_calls and verb in verb_words(c.func.attr)]
    if reached:
        callee, node = reached[0]
        return OutsideWrite("declared action", "medium", f"{callee} (declared: {verb})",
                            getattr(node, "lineno", summary.node.lineno))
    return None


# calls that carry out an action the agent chose (`env.step(action)`, `container.execute(command)`)
STEP_CALLS = frozenset({"step", "execute", "execute_shell", "execute_command", "exec_run", "act"})
_BRANCH = re.compile(r"(?:\w+\.)*(\w+)\[([^\]]+)\]")


def _assigned(body: list[ast.stmt]) -> tuple[set[str], dict[str, str]]:
    """The locals a branch binds, and the constant it puts under each key of a record
    (`ret["action"] = "bash"` -> {"action": "bash"})."""
    names: set[str] = set()
    keys: dict[str, str] = {}
    for node in (n for s in body for n in walk_nodes(s)):
        if not isinstance(node, ast.Assign):
            continue
        for t in node.targets:
            if isinstance(t, ast.Name):
                names.add(t.id)
            elif isinstance(t, ast.Subscript) and isinstance(t.slice, ast.Constant) and isinstance(
                    node.value, ast.Constant) and isinstance(node.value.value, str):
                keys[str(t.slice.value)] = node.value.value
    return names, keys


def _steps(fn: ast.AST, methods: dict[str, ast.FunctionDef | ast.AsyncFunctionDef]) -> list[ast.Call]:
    """The step calls in `fn` and in the methods of its class it calls (one hop)."""
    calls = [c for c in walk_nodes(fn) if isinstance(c, ast.Call)]
    hop = [c.func.attr for c in calls if isinstance(c.func, ast.Attribute)
           and c.func.attr in methods and call_name(c).startswith("self.")]
    calls += [n for name in hop for n in walk_nodes(methods[name]) if isinstance(n, ast.Call)]
    return [c for c in calls if isinstance(c.func, ast.Attribute) and c.func.attr in STEP_CALLS]


def deferred_action(tool_node: ast.AST, qualname: str, cls: str | None,
                    methods: dict[str, ast.FunctionDef | ast.AsyncFunctionDef]) -> OutsideWrite | None:
    """A branch of a dispatcher that only builds the action the environment then carries out: the
    dispatcher steps the environment with the local the branch set (`action = f"click[{x}]"` ...
    `env.step(action)`), for a branch whose name declares an action (click, not search); or a caller
    of the dispatcher, on the action constant the branch put in its record (`ret["action"] = "bash"`),
    executes it (`if action == "bash": ... container.execute(command)`)."""
    match = _BRANCH.fullmatch(qualname)
    body = getattr(tool_node, "body", [])
    if match is None or cls is None or match.group(1) not in methods:
        return None
    dispatcher = methods[match.group(1)]
    names, keys = _assigned(body)
    inside = range(getattr(tool_node, "lineno", 0), (getattr(tool_node, "end_lineno", 0) or 0) + 1)
    for call in _steps(dispatcher, {}):  # a step after the branch, of what the branch set
        if call.lineno not in inside and any(isinstance(a, ast.Name) and a.id in names for a in call.args) \
                and _declared_verb([match.group(2)]):
            return OutsideWrite("forwards an action to the environment", "medium", call_name(call),
                                call.lineno)
    action = keys.get("action")
    if action is None:
        return None
    for caller in methods.values():
        for node in walk_nodes(caller):
            if isinstance(node, ast.If) and isinstance(node.test, ast.Compare) and any(
                    isinstance(c, ast.Constant) and c.value == action for c in node.test.comparators) \
                    and any(isinstance(c, ast.Call) and call_name(c).endswith(f"self.{match.group(1)}")
                            for c in walk_nodes(caller)):
                for call in _steps(ast.Module(body=node.body, type_ignores=[]), methods):
                    return OutsideWrite("forwards an action to the environment", "medium", call_name(call),
                                        call.lineno)
    return None
