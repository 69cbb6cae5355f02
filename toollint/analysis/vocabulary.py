"""The words the analysis reads code by, each table exactly once.

Every part of toollint that asks "does this call write?", "is this a log call?", "which falsy values
does this type admit?" or "which verbs undo each other?" imports the answer from here: the rules, the
mutation generator, the probe generator and the contract validator. A second copy of any of these
tables anywhere else is a bug (`tests/test_analysis_vocabulary.py` looks for one).
"""

from __future__ import annotations

import re
from typing import Any

# -- writes ------------------------------------------------------------------------------------------

# Methods that mutate the object they are called on.
MUTATORS = frozenset([
    "append", "extend", "insert", "update", "pop", "remove", "clear", "setdefault", "add", "discard",
    "popitem", "sort", "reverse", "__setitem__", "__delitem__", "appendleft", "extendleft",
])
# First words of method names that, called on state whose class the analysis cannot read, may write
# it (`inbox.send_email(...)`, `db.add_to_database(...)`). Matched on the first `_`-separated word.
WRITE_VERBS = frozenset([
    "add", "append", "book", "cancel", "create", "delete", "remove", "set", "update", "insert", "send",
    "schedule", "reschedule", "reserve", "release", "assign", "unassign", "grant", "revoke", "enable",
    "disable", "block", "unblock", "lock", "unlock", "open", "close", "suspend", "resume", "activate",
    "deactivate", "subscribe", "unsubscribe", "follow", "unfollow", "post", "put", "patch", "write",
    "save", "store", "register", "deregister", "move", "rename", "share", "transfer", "pay", "refund",
    "invite", "kick", "upsert", "modify", "edit", "change", "submit", "commit", "upload", "reset",
    "clear", "archive", "mark", "record", "charge", "deposit", "withdraw", "exchange", "return", "toggle",
    "push", "checkout",
])


def first_word(name: str) -> str:
    """`send_money` -> "send"; `_add_to_db` -> "add"; `addItem` -> "add"."""
    stripped = name.lstrip("_")
    word = stripped.split("_", 1)[0]
    camel = re.match(r"[a-z]+", word)
    return (camel.group(0) if camel else word).lower()


def verb_words(name: str) -> list[str]:
    """Every word of a name, snake or camel case: `chat_postMessage` -> ["chat", "post", "message"]."""
    return [w.lower() for w in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])", name)]


def is_write_verb(name: str) -> bool:
    return first_word(name) in WRITE_VERBS


# A called name that returns benchmark state (`get_current_context()`), besides the profiles' own.
STATE_ACCESSOR = re.compile(r"^get_(?:current_)?(?:context|state|db|database|env|environment|world|store)$")

# A private attribute named like this is the tool object's own bookkeeping (a client, a cache or memo
# of computed answers, a rate limiter's clock), not benchmark state: writing it does not make a tool a writer.
BOOKKEEPING_FIELD = re.compile(
    r"_\w*(?:cache|cached|client|clients|credential|credentials|session|lock|time|timestamp|logger|conn|"
    r"connection|sdk|pool|token|tokens|counter|initialized|initialised|loaded|lookup|memo|memos)"
)

# -- calls that only show text --------------------------------------------------------------------

LOG_FUNCS = frozenset({"print", "pprint", "warn"})
LOG_OBJECTS = frozenset({"logging", "logger", "log", "_logger", "LOGGER", "LOG", "warnings", "console"})
LOG_METHODS = frozenset(
    ["debug", "info", "warning", "warn", "error", "exception", "critical", "log", "print"]
)
FORMAT_METHODS = frozenset(["format", "format_map", "join"])

# Builtins that cannot write state through their arguments.
PURE_CALLS = frozenset([
    "len", "str", "int", "float", "bool", "repr", "abs", "min", "max", "sum", "round", "sorted", "list",
    "tuple", "set", "dict", "frozenset", "isinstance", "issubclass", "type", "id", "hash", "format", "any",
    "all", "enumerate", "zip", "range", "iter", "next", "reversed", "map", "filter", "getattr", "hasattr",
    "divmod", "ord", "chr", "bin", "hex", "oct",
])
# Methods of strings, dates and containers that compute a value without changing their receiver.
PURE_METHODS = frozenset([
    "strip", "lstrip", "rstrip", "lower", "upper", "title", "capitalize", "split", "rsplit", "join",
    "replace", "startswith", "endswith", "get", "keys", "values", "items", "isoformat", "date", "time",
    "strftime", "copy", "format", "count", "index", "find",
])
# Builtins that look at a container's shape or hand its elements on, without reading their fields.
SHAPE_CALLS = frozenset([
    "len", "isinstance", "issubclass", "type", "id", "bool", "iter", "next", "enumerate", "reversed", "zip",
    "range", "any", "all", "hasattr", "getattr", "filter", "map", "list", "tuple", "set", "frozenset",
    "sorted", "sum", "min", "max", "abs", "round", "int", "float",
])
# Methods on a state container that read it like an attribute access would.
READ_METHODS = frozenset(["get", "keys", "values", "items", "copy", "count", "index"])

# -- module-level objects -----------------------------------------------------------------------------

# Module-level objects that are plumbing, not benchmark state.
NOT_STATE_CALLS = frozenset([
    "FastMCP", "Server", "MCPServer", "FastAPI", "Flask", "APIRouter", "Blueprint", "Lock", "RLock", "Event",
    "Semaphore", "getLogger", "TypeVar", "NamedTuple", "namedtuple", "ParamSpec", "compile", "Path",
    "ContextVar", "Field", "PrivateAttr", "ConfigDict", "Enum",
])
STATE_CALLS = frozenset({"dict", "list", "set", "defaultdict", "OrderedDict", "Counter", "deque"})

# -- values ------------------------------------------------------------------------------------------

# The legal falsy value of each type an annotation can name, as source text and as a value. TL104,
# the mutation generator and the probe generator all read this one table.
FALSY_BY_TYPE: dict[str, tuple[str, Any]] = {
    "int": ("0", 0), "float": ("0.0", 0.0), "bool": ("False", False), "str": ('""', ""),
    "list": ("[]", []), "dict": ("{}", {}), "set": ("set()", set()), "tuple": ("()", ()),
    "bytes": ('b""', b""), "Decimal": ("Decimal(0)", 0),
}
CONTAINER_TYPES = frozenset({"str", "list", "dict", "set", "tuple", "bytes"})
SCALAR_FALSY_TYPES = frozenset({"int", "float", "bool", "Decimal"})
# JSON-schema type names (the probe generator's view of a parameter) to the Python type above.
JSON_TYPE_OF = {"integer": "int", "number": "float", "boolean": "bool", "string": "str", "array": "list",
                "object": "dict"}
ANNOTATION_JSON_TYPE = {
    "int": "integer",
    "float": "number",
    "str": "string",
    "bool": "boolean",
    "list": "array",
    "dict": "object",
    "None": "null",
    "NoneType": "null",
}


def falsy_json_values(json_type: str) -> list[Any]:
    """The legal falsy value of a JSON-schema type (`"number"` -> `[0.0]`), fresh each call."""
    python = JSON_TYPE_OF.get(json_type)
    if python is None:
        return []
    value = FALSY_BY_TYPE[python][1]
    return [type(value)() if isinstance(value, (list, dict)) else value]


# A parameter named like this identifies something (`agent_id`, `path`, `file_name`): its empty
# value names nothing, so rejecting or skipping it is right, not a dropped legal value.
IDENTIFIER_NAME = re.compile(
    r"(?:^|_)(?:id|ids|uuid|guid|path|paths|dir|directory|folder|url|uri|urls|filename|filenames|slug|"
    r"name|names|username|repo|repository|database|schema|table|bucket|collection|namespace|branch)$",
    re.IGNORECASE,
)
# ... except a name that is a value a record holds (`first_name`, `display_name`): clearing it is an
# ordinary update, so `if first_name:` before the write still drops a legal value.
VALUE_NAME = re.compile(
    r"^(?:first|last|middle|display|nick|full|given|family|new|user)_?name$", re.IGNORECASE
)


def is_identifier_name(name: str) -> bool:
    return bool(IDENTIFIER_NAME.search(name)) and not VALUE_NAME.match(name)


# -- replies ------------------------------------------------------------------------------------------

SUCCESS_WORDS = re.compile(
    r"\b(success\w*|succeeded|updated|created|deleted|added|removed|cancel+ed|booked|sent|scheduled|"
    r"done|completed|saved|reserved|changed|accepted|executed|invited|made|applied|confirmed|ok|"
    r"deposited|withdrawn|transferred|charged|paid|refunded|locked|unlocked|enabled|disabled|"
    r"activated|deactivated|suspended|resumed|assigned|unassigned|granted|revoked|posted|moved|"
    r"renamed|shared|uploaded|stored|registered|submitted|approved|placed|issued|processed|modified|"
    r"inserted|marked|archived|published|closed|opened|released|restored|reset|set|recorded|logged|cleared|"
    r"voided|purged|emptied|edited|toggled|refuelled|refueled|suspended)\b",
    re.IGNORECASE,
)
# A reply with one of these is an error, or reports that nothing needed doing: neither claims a write.
FAILURE_WORDS = re.compile(
    r"\b(error\w*|not found|fail\w*|cannot|can't|could not|couldn't|unable|invalid|no such|denied|not|"
    r"already|nothing|unknown|missing|refused|rejected|forbidden|unauthori[sz]ed|exceeds?|insufficient|"
    r"no\s+\w+\s+(?:found|exists?|available))\b",
    re.IGNORECASE,
)
# A reply that says nothing happened or describes a state rather than a change: "No user is currently
# logged in", "There are no pending orders", "User is still logged in". Success words inside such a
# sentence ("logged") describe the state, they do not claim an action.
NEGATED_REPLY = re.compile(
    r"^\W*no\b|\bno\s+(?:\w+\s+){0,2}(?:is|are|was|were|has|have|exists?|matche[sd]|left)\b|\bnever\b|n't\b|"
    r"\bnone\b",
    re.IGNORECASE,
)
STATUS_REPLY = re.compile(r"\b(?:is|are)\s+(?:currently|still|now\s+not|presently)\b", re.IGNORECASE)
# A reply about the tool's own run, not about state: "Example tool executed successfully", "Tool with
# logging executed successfully" (placeholders and SDK examples). Every tool that returns has run, so
# the sentence claims no change; the words between are not success words ("Tool saved and executed"
# still claims the save).
TOOL_RAN = re.compile(
    r"\b(?:tool|function)(?:\s+(?!" + SUCCESS_WORDS.pattern + r")\w+){0,3}?\s+(?:was\s+|has\s+been\s+)?"
    r"(?:executed|ran|run|called|invoked|completed|finished)(?:\s+successfully)?\b",
    re.IGNORECASE,
)


def reply_claims_success(text: str) -> bool:
    """The constant text of a reply claims that something was done: a success word, and no error
    word, no negation and no description of a standing state ("is currently logged in"); a sentence
    saying only that the tool itself ran claims nothing."""
    return bool(SUCCESS_WORDS.search(TOOL_RAN.sub(" ", text))) and not FAILURE_WORDS.search(text) \
        and not NEGATED_REPLY.search(text) and not STATUS_REPLY.search(text)


# Keys of a reply dict that mark it an error reply: `{"error": "..."}`, `{"status": "failed"}`.
ERROR_KEYS = frozenset({"error", "errors", "err", "failure", "exception", "detail"})

# -- requests and replies of dispatchers -------------------------------------------------------------

# HTTP verbs a request-kind dispatcher branches on, and whether the verb writes.
HTTP_VERBS: dict[str, bool] = {"GET": False, "HEAD": False, "OPTIONS": False, "POST": True, "PUT": True,
                               "PATCH": True, "DELETE": True}
# Calls that send a dispatcher branch's reply to the agent (method -> receiver names; empty: any),
# besides the profiles' `ReplyCall`s.
REPLY_CALLS: dict[str, frozenset[str]] = {
    "inject": frozenset({"session", "conversation", "chat", "dialog", "dialogue"}),
    "append": frozenset(
        {"history", "messages", "conversation", "transcript", "chat_history", "replies", "outbox"}
    ),
}

# -- graders ------------------------------------------------------------------------------------------

# Roles of a configured grader's parameters, by name (a profile's `GraderFunction` names its own).
GRADER_STATE_PARAMS = frozenset({"post_environment", "post_state", "final_state", "env", "environment",
                                 "state", "db", "world", "environment_constructor"})
GRADER_BEFORE_PARAMS = frozenset({"pre_environment", "pre_state", "initial_state", "initial_environment"})
GRADER_RECORD_PARAMS = frozenset(
    {
        "model_output",
        "output",
        "traces",
        "trajectory",
        "full_trajectory",
        "messages",
        "history",
        "results",
        "result",
        "response",
        "transcript",
        "answer",
        "prediction",
        "completion",
        "tool_calls",
        "calls",
    }
)
# ... and by the words of a longer name (`model_result_list_decoded`, `agent_response`): a name with
# a record word is the record unless it also has a word of the gold side (`expected_output`,
# `ground_truth_result`), which is task data.
GRADER_RECORD_WORDS = frozenset(
    {
        "output",
        "outputs",
        "result",
        "results",
        "response",
        "responses",
        "trajectory",
        "traces",
        "messages",
        "history",
        "transcript",
        "answer",
        "answers",
        "prediction",
        "predictions",
        "completion",
        "completions",
        "calls",
    }
)
GRADER_GOLD_WORDS = frozenset({"gold", "golden", "ground", "truth", "expected", "reference", "ref", "target",
                               "label", "labels", "solution", "oracle", "gt", "correct", "possible"})
# Calls that read live state over HTTP: `requests.get(url)`, `httpx.get(url)`, `client.get(url)`.
HTTP_READ_FUNCS = frozenset(
    {"requests.get", "httpx.get", "urlopen", "urllib.request.urlopen", "requests.head"}
)
HTTP_CLIENTS = frozenset(
    {"session", "client", "http", "api", "requests", "httpx", "s", "sess", "async_client"}
)
# A field of the agent's record whose name claims the outcome itself (`{"success": true}`).
OUTCOME_FIELD = re.compile(
    r"^(?:success|succeeded|successful|is_success|done|is_done|complete|completed|is_complete|finished|passed|"
    r"resolved|solved|is_correct|correct|task_completed|task_complete|achieved|goal_achieved|accomplished)$",
    re.IGNORECASE,
)
# Text that declares a failure when it is absent from output is expected to be: `"error" not in log`.
FAILURE_MARKER = re.compile(
    r"error|fail|exception|traceback|invalid|denied|refused|timeout|timed out|abort|panic", re.IGNORECASE
)

# -- guards -------------------------------------------------------------------------------------------

# Error text in a commented-out `return` that makes it a guard's early exit.
ERROR_TEXT = re.compile(r"error|invalid|not |cannot|fail|denied|forbidden|unauthori", re.IGNORECASE)
# A docstring line that promises a check.
PROMISE_WORDS = re.compile(
    r"\b(must|should|only|check|checks|require[sd]?|cannot|can't|not allowed|raises?)\b", re.IGNORECASE
)
# A commented-out "guard" that injects failures (`if random.random() < 0.1: raise ...`) is a fault
# injector someone switched off on purpose, not a precondition: never report it, never re-enable it.
FAULT_INJECTION = re.compile(
    r"\brandom\b|\brandint\b|\buniform\b|fault|inject|chaos|flak[ey]|simulat|fail(?:ure)?_?(?:rate|prob)|"
    r"\bjitter\b|\bmonkey\b",
    re.IGNORECASE,
)
# A docstring that says a parameter must not be empty exempts its container types from TL104.
NON_EMPTY = re.compile(
    r"non-?empty|not be empty|cannot be empty|must not be blank|at least one", re.IGNORECASE
)

# -- parameters ---------------------------------------------------------------------------------------

# Conventional names for parameters that exist for the framework, not the agent.
FRAMEWORK_PARAMS = frozenset({"self", "cls", "ctx", "context", "_", "run_manager", "config", "kwargs", "args",
                              "callbacks", "tool_call_id", "state", "runtime"})

# -- verb pairs ---------------------------------------------------------------------------------------

# Verbs whose tools undo each other; TL105 pairs tools by these and by their shared noun.
VERB_PAIRS = (
    ("book", "cancel"), ("reserve", "cancel"), ("reserve", "release"), ("add", "remove"),
    ("add", "delete"), ("create", "delete"), ("create", "remove"), ("open", "close"),
    ("suspend", "resume"), ("enable", "disable"), ("block", "unblock"), ("lock", "unlock"),
    ("subscribe", "unsubscribe"), ("activate", "deactivate"), ("assign", "unassign"),
    ("grant", "revoke"), ("follow", "unfollow"), ("check_in", "check_out"), ("insert", "delete"),
    ("attach", "detach"), ("mount", "unmount"), ("invite", "remove"), ("join", "leave"),
    ("start", "stop"), ("pause", "resume"), ("archive", "unarchive"), ("pin", "unpin"),
    ("star", "unstar"), ("mute", "unmute"), ("hold", "release"), ("schedule", "cancel"),
)
PARTNERS: dict[str, frozenset[str]] = {}
for _a, _b in VERB_PAIRS:
    PARTNERS[_a] = PARTNERS.get(_a, frozenset()) | {_b}
    PARTNERS[_b] = PARTNERS.get(_b, frozenset()) | {_a}
# Words between a verb and its noun that do not name the noun (`invite_user_to_slack`).
CONNECTIVES = frozenset({"to", "from", "in", "into", "on", "of", "for", "a", "an", "the", "at", "by", "with"})


def split_name(name: str) -> tuple[str, frozenset[str]] | None:
    """`check_in_passenger` -> ("check_in", {"passenger"}); nouns are singularised, connectives
    dropped, so `invite_user_to_slack` and `remove_user_from_slack` share {"user", "slack"}."""
    parts = name.lower().strip("_").split("_")
    for size in (2, 1):
        verb = "_".join(parts[:size])
        if verb in PARTNERS and len(parts) > size:
            nouns = {p[:-1] if p.endswith("s") and len(p) > 3 else p for p in parts[size:]} - CONNECTIVES
            return verb, frozenset(nouns)
    return None


def undoes(undo: str, do: str) -> bool:
    """`remove_user_from_slack` undoes `invite_user_to_slack`: verb partners on the same nouns."""
    a, b = split_name(undo), split_name(do)
    return a is not None and b is not None and a[0] in PARTNERS[b[0]] and a[1] == b[1]
