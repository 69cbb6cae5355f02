"""Host-side helpers of the tau2 validation driver: run inside tau2's own interpreter (Python 3.12+)
through the host gateway (`toollint.dynamic.protocol.evaluate_in`), stdlib + tau2 only.

Everything goes through tau2's own code, as its orchestrator and evaluator do (the method of the
snapshot's `provenance/gold_replay.py`, written against tau2's API):

- an environment is `registry.get_env_constructor(domain)()` with `Environment.set_state(...)` from
  the task's initial state;
- each call of a path is `Environment.get_response(ToolCall(..., requestor))`, the call the
  orchestrator makes for agent and user tool calls; the trajectory is the messages the orchestrator
  would record, ending with an assistant message carrying the task's `communicate_info`;
- the verdict is `tau2.evaluator.evaluator.evaluate_simulation(..., EvaluationType.ALL)`: the reward
  the task's `reward_basis` gives (tasks whose basis needs an LLM judge, `NL_ASSERTION`, are not graded);
- a watched call is scored against a contract clause by toollint's own predicate module (loaded by
  file path: stdlib only), on the pre- and post-call snapshots `{"agent_db", "user_db"}` as the
  adapter takes them: that is the independent predicate, reported beside the evaluator's reward.

`setup(src, data)` must come first: it puts a tau2 source tree first on `sys.path` (the snapshot's,
or an overlay holding a one-hunk fix) and points `TAU2_DATA_DIR` at the data before tau2 is imported.
"""

from __future__ import annotations

import copy
import importlib.util
import os
import sys
import time
import uuid
from typing import Any

_STATE: dict[str, Any] = {}


def setup(src: str, data: str) -> dict[str, Any]:
    """Import tau2 from `src` with its data at `data`; the interpreter serves that tree from then on."""
    if "src" in _STATE:
        if _STATE["src"] != src:
            raise ValueError(f"this interpreter already runs tau2 from {_STATE['src']}, not {src}")
        return {"tau2": _STATE["tau2"]}
    sys.dont_write_bytecode = True  # never write into the audited tree, or an overlay of it
    os.environ["TAU2_DATA_DIR"] = data
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no price-map fetch at import
    sys.path.insert(0, src)
    from loguru import logger

    logger.remove()
    logger.add(sys.stderr, level="ERROR")
    import tau2

    if not os.path.abspath(tau2.__file__).startswith(os.path.abspath(src)):
        raise ValueError(f"tau2 was imported from {tau2.__file__}, not from {src}")
    _STATE.update(src=src, tau2=tau2.__file__)
    return {"tau2": tau2.__file__}


def _tau2() -> Any:
    from tau2.registry import registry

    return registry


def tasks(domain: str) -> list[dict[str, Any]]:
    """Every task of the domain's default task set with its gold actions, in file order."""
    loaded = _tasks(domain)
    lines = _task_lines(domain)
    out = []
    for task in loaded.values():
        criteria = task.evaluation_criteria
        actions = (criteria.actions or []) if criteria is not None else []
        basis = [b.value for b in criteria.reward_basis] if criteria is not None else []
        row: dict[str, Any] = {
            "task": task.id,
            "reward_basis": basis,
            "calls": [
                {"function": a.name, "args": dict(a.arguments), "requestor": a.requestor} for a in actions
            ],
        }
        scenario = getattr(task, "user_scenario", None)
        if scenario is not None:  # what the simulated user is told to ask for
            row["instruction"] = str(getattr(scenario, "instructions", None) or scenario)
        if task.id in lines[1]:
            row["source"] = {"file": lines[0], "line": lines[1][task.id]}
        row.update(_grader_of(basis))
        out.append(row)
    return out


def _task_lines(domain: str) -> tuple[str, dict[str, int]]:
    """The domain's task file and the line of each task's `"id"` in it (for reports)."""
    import importlib
    import re

    utils = importlib.import_module(f"tau2.domains.{domain}.utils")
    path = next((str(v) for k, v in vars(utils).items() if k.endswith("_TASK_SET_PATH")), "")
    if not path or not os.path.isfile(path):
        return path, {}
    found: dict[str, int] = {}
    pattern = re.compile(r'^\s*"id":\s*"([^"]+)"')
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            m = pattern.match(line)
            if m and m.group(1) not in found:
                found[m.group(1)] = n
    return path, found


def _grader_of(basis: list[str]) -> dict[str, Any]:
    """The evaluator that checks the state for this reward basis (the environment's, for DB and
    ENV_ASSERTION; else the action or communicate evaluator), as `{"grader": {"file", "line", "name"}}`."""
    import inspect

    from tau2.evaluator.evaluator_action import ActionEvaluator
    from tau2.evaluator.evaluator_communicate import CommunicateEvaluator
    from tau2.evaluator.evaluator_env import EnvironmentEvaluator

    cls = (EnvironmentEvaluator if {"DB", "ENV_ASSERTION"} & set(basis)
           else ActionEvaluator if "ACTION" in basis else CommunicateEvaluator)
    fn = cls.calculate_reward
    try:
        return {"grader": {"file": inspect.getsourcefile(fn), "line": inspect.getsourcelines(fn)[1],
                           "name": f"{cls.__name__}.calculate_reward"}}
    except (OSError, TypeError):
        return {}


def state_sample(domain: str) -> dict[str, Any]:
    """The domain's state as a fresh environment holds it (`{"agent_db", "user_db"?}`)."""
    return _snapshot(_tau2().get_env_constructor(domain)())


def _digest(env: Any) -> str:
    """A digest of the state `_snapshot` takes, from pydantic's own serialiser (a tenth of the time of
    dumping to Python and back to JSON on a 7 MB database)."""
    import hashlib

    h = hashlib.sha256(env.tools.db.model_dump_json().encode())
    if env.user_tools is not None and getattr(env.user_tools, "db", None) is not None:
        h.update(env.user_tools.db.model_dump_json().encode())
    return h.hexdigest()[:16]


def _tasks(domain: str) -> dict[str, Any]:
    cache = _STATE.setdefault("tasks", {})
    if domain not in cache:
        cache[domain] = {t.id: t for t in _tau2().get_tasks_loader(domain)(None)}
    return cache[domain]  # type: ignore[no-any-return]


def registered_tools(domains: list[str]) -> dict[str, dict[str, list[str]]]:
    """domain -> {"agent": [...], "user": [...]}: the tools each toolkit offers an agent or user."""
    out: dict[str, dict[str, list[str]]] = {}
    for domain in domains:
        env = _tau2().get_env_constructor(domain)()
        out[domain] = {"agent": sorted(env.tools.get_tools()) if env.tools is not None else [],
                       "user": sorted(env.user_tools.get_tools()) if env.user_tools is not None else []}
    return out


# --- predicates -------------------------------------------------------------------------------------


def _predicates(path: str) -> Any:
    module = _STATE.get("predicate_module")
    if module is None:
        spec = importlib.util.spec_from_file_location("toollint_host_predicate", path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load {path}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        _STATE["predicate_module"] = module
        _STATE["compiled"] = {}
    return module


def _holds(
    predicates: Any, source: str, pre: Any, post: Any, args: dict[str, Any], result: Any
) -> bool | None:
    compiled = _STATE["compiled"]
    if source not in compiled:
        compiled[source] = predicates.compile_predicate(source)
    try:
        return bool(compiled[source].evaluate(pre, post, args, result))
    except predicates.PredicateTypeError:
        return None


def _snapshot(env: Any) -> dict[str, Any]:
    state = {"agent_db": env.tools.db.model_dump(mode="json")}
    if env.user_tools is not None and getattr(env.user_tools, "db", None) is not None:
        state["user_db"] = env.user_tools.db.model_dump(mode="json")
    return state


def _jsonable(value: Any) -> Any:
    from pydantic_core import to_jsonable_python

    try:
        return to_jsonable_python(value)
    except Exception:  # noqa: BLE001 - a result tau2 cannot turn into JSON is still shown
        return repr(value)


# --- paths ------------------------------------------------------------------------------------------


def run_paths(domain: str, rows: list[dict[str, Any]], predicate_module: str = "") -> list[dict[str, Any]]:
    """Run each row's path through the benchmark and grade it with its own evaluator.

    A row: `{"task": id, "calls": [call, ...]}`; a call: `{"function", "args", "requestor"}`, optionally
    `"alternatives": [args, ...]` (the first that succeeds is kept; a failed attempt leaves no trace in
    the trajectory), `"args_from": {"arg": [k, "key"]}` (the value of `key` in call k's result) and
    `"watch": {"clause", "kind", "predicate"}` (scored on that call). The answer per row: `reward`
    (None when not graded, with `why`), `breakdown`, `errors` (calls that failed) and `watched`
    (per watched call: `status`, `holds`, `state_changed`).

    For the grader audit a row may also say `"final": "empty"` (the agent's last message says nothing,
    instead of the task's `communicate_info`), `"trace": true` (the answer gains `changed`, per call,
    and the state's `start_digest` and `digest`; `"trace": "final"`, the end state's `digest` only) and
    `"without_llm": true` (a task whose basis has
    NL_ASSERTION is graded on its other bases, and the answer's `unjudged` says so). A row that says
    `"verdict_only": true` needs only its reward, and its digest and errors when it passes: a run that
    certainly fails the DB check is answered with reward 0 and `"preflight": "db"` (`_db_check_fails`)."""
    from tau2.data_model.message import AssistantMessage, ToolCall, UserMessage
    from tau2.data_model.simulation import SimulationRun, TerminationReason
    from tau2.data_model.tasks import RewardType
    from tau2.evaluator.evaluator import EvaluationType, evaluate_simulation
    from tau2.utils.utils import get_now

    predicates = _predicates(predicate_module) if predicate_module else None
    known = _tasks(domain)
    _memoise_pure_costs()
    constructor = _tau2().get_env_constructor(domain)
    out = []
    fast: list[int] = []  # the rows answered by `_db_check_fails`
    for row in rows:
        started = time.perf_counter()
        task = known.get(str(row["task"]))
        if task is None:
            out.append(
                {"task": row["task"], "reward": None, "why": "no such task", "errors": [], "watched": []}
            )
            continue
        if _db_check_fails(domain, task, row, constructor):
            fast.append(len(out))
            out.append({"task": row["task"], "reward": 0.0, "breakdown": {"DB": 0.0}, "errors": [],
                        "watched": [], "results": None, "preflight": "db",
                        "elapsed_s": round(time.perf_counter() - started, 4)})
            continue
        env = constructor()
        state = task.initial_state
        history = list(state.message_history) if state is not None and state.message_history else []
        env.set_state(initialization_data=state.initialization_data if state is not None else None,
                      initialization_actions=state.initialization_actions if state is not None else None,
                      message_history=history)
        messages = list(history)
        errors: list[str] = []
        watched: list[dict[str, Any]] = []
        results: list[Any] = []
        trace = row.get("trace")  # True or "calls": each call's change; "final": the end state's digest
        changed: list[bool] = []
        start = before = _digest(env) if trace and trace != "final" else ""
        for i, call in enumerate(row["calls"]):
            args = dict(call.get("args") or {})
            for name, (k, key) in (call.get("args_from") or {}).items():
                source = results[k] if k < len(results) else None
                args[name] = source.get(key) if isinstance(source, dict) else None
            requestor = call.get("requestor") or "assistant"
            watch = call.get("watch")
            pre = _snapshot(env) if watch and predicates is not None else None
            attempts = [args] + [dict(a) for a in call.get("alternatives") or []]
            for n, attempt in enumerate(attempts):
                tc = ToolCall(
                    id=f"toollint_{i}_{n}", name=call["function"], arguments=attempt, requestor=requestor
                )
                reply = env.get_response(tc)
                if reply.error and n + 1 < len(attempts):
                    continue  # an alternative that fails changes nothing: try the next
                msg_type = UserMessage if requestor == "user" else AssistantMessage
                messages += [msg_type(role=requestor if requestor == "user" else "assistant", content=None,
                                      tool_calls=[tc]), reply]
                args = attempt
                break
            value = _content(reply.content)
            results.append(value)
            if trace and trace != "final":
                after = _digest(env)
                changed.append(after != before)
                before = after
            if reply.error:
                errors.append(f"{i}: {call['function']}: {str(reply.content)[:200]}")
            if watch and predicates is not None:
                post = _snapshot(env)
                holds = _holds(
                    predicates, watch["predicate"], pre, post, args, value if not reply.error else None
                )
                watched.append({"index": i, "clause": watch.get("clause"), "kind": watch.get("kind"),
                                "status": "error" if reply.error else "ok", "holds": holds,
                                "state_changed": pre != post})
        criteria = task.evaluation_criteria
        basis = set(criteria.reward_basis) if criteria is not None else set()
        info = (criteria.communicate_info or []) if criteria is not None else []
        if row.get("final") != "empty":
            messages.append(AssistantMessage(role="assistant",
                                             content="Done. " + " ".join(str(x) for x in info)))
        answer: dict[str, Any] = {
            "task": row["task"],
            "errors": errors,
            "watched": watched,
            "results": [_jsonable(r) for r in results] if row.get("want_results") or trace is True else None,
        }
        if trace == "final":
            answer.update(digest=_digest(env))
        elif trace:
            answer.update(changed=changed, start_digest=start, digest=before)
        kept = [b for b in criteria.reward_basis if b != RewardType.NL_ASSERTION] if criteria else []
        if RewardType.NL_ASSERTION in basis and row.get("without_llm") and criteria is not None and kept:
            task = task.model_copy(update={"evaluation_criteria": criteria.model_copy(
                update={"reward_basis": kept})})
            basis = set(kept)
            answer["unjudged"] = [RewardType.NL_ASSERTION.value]
        if RewardType.NL_ASSERTION in basis:
            answer.update(reward=None, why="reward_basis has NL_ASSERTION (an LLM judge)")
        else:
            now = get_now()
            sim = SimulationRun(
                id=str(uuid.uuid4()),
                task_id=task.id,
                start_time=now,
                end_time=now,
                duration=0.0,
                termination_reason=TerminationReason.AGENT_STOP,
                messages=messages,
            )
            reward = evaluate_simulation(sim, task, EvaluationType.ALL, solo_mode=False, domain=domain)
            answer.update(reward=reward.reward, breakdown={str(getattr(k, "value", k)): v for k, v in
                                                           (reward.reward_breakdown or {}).items()})
        answer["elapsed_s"] = round(time.perf_counter() - started, 4)
        out.append(answer)
    if fast and not _starts_intact():  # a change no table noted: grade those rows again, in full
        again = run_paths(domain, [{**rows[i], "verdict_only": False} for i in fast], predicate_module)
        for i, answer in zip(fast, again, strict=True):
            out[i] = answer
    return out


def _starts_intact() -> bool:
    """Whether every initial-state environment used since the last check is whole again; one that is
    not is dropped (the next run builds it afresh)."""
    starts = _STATE.setdefault("starts", {})
    intact = True
    for key, start in list(starts.items()):
        if start is not None and start.used:
            start.used = False
            if not start.verify():
                del starts[key]
                intact = False
    return intact


# --- speed: what the audit asks again and again ------------------------------------------------------
#
# The grader audit grades hundreds of runs per domain. tau2's evaluator builds four environments per
# run (each loading the domain's database from disk: 7 MB of JSON for airline, TOML for telecom), lists
# the tool types of both toolkits (a pydantic model per tool, from its docstring), replays the gold
# actions and hashes the whole database twice. None of it depends on the run but the replay of its calls.


def _memoise_pure_costs() -> None:
    """Two costs of tau2's evaluator that are the same on every call, memoised in this interpreter:
    `DB.load` of a file (its parsed content kept, validated afresh on each load, so every environment
    still gets its own database) and `get_tool_types` of a toolkit (a function of its class: the
    tools' `is_tool` markers)."""
    if _STATE.get("memoised"):
        return
    import pickle

    from tau2.environment import db as db_module
    from tau2.evaluator import evaluator as evaluator_module
    from tau2.utils import load_file

    loaded: dict[tuple[Any, str, int, int], tuple[Any, bool]] = {}

    def load(cls: Any, path: str) -> Any:
        stat = os.stat(path)
        key = (cls, os.path.abspath(path), stat.st_mtime_ns, stat.st_size)
        if key not in loaded:
            parsed = load_file(path)
            blob = pickle.dumps(parsed, protocol=pickle.HIGHEST_PROTOCOL)
            loaded[key] = (parsed, _shares_nothing(cls.model_validate(parsed), cls.model_validate(parsed)))
            if not loaded[key][1]:
                loaded[key] = (blob, False)
        parsed, direct = loaded[key]
        # Validation builds the database's containers and records afresh, so validating the one parsed
        # file again gives each environment its own (checked once: two validations share nothing
        # mutable); where a field keeps what it is given, a fresh copy of the parse is validated.
        return cls.model_validate(parsed if direct else pickle.loads(parsed))

    original_types = evaluator_module.get_tool_types
    types: dict[type, dict[str, Any]] = {}

    def tool_types(tools: Any) -> dict[str, Any]:
        if type(tools) not in types:
            types[type(tools)] = original_types(tools)
        return dict(types[type(tools)])  # the evaluator updates the agent's dict with the user's

    db_module.DB.load = classmethod(load)  # type: ignore[method-assign,assignment]
    evaluator_module.get_tool_types = tool_types
    _STATE["memoised"] = True


def _shares_nothing(a: Any, b: Any) -> bool:
    """Whether two objects share no mutable part (a dict, list, set or object with a `__dict__`; enum
    members are constants)."""
    import enum

    constant = (str, bytes, int, float, bool, type(None), enum.Enum, type)
    seen: set[int] = set()
    stack = [a]
    while stack:
        x = stack.pop()
        if isinstance(x, constant) or id(x) in seen:
            continue
        seen.add(id(x))
        stack.extend(x.values() if isinstance(x, dict) else x if isinstance(x, (list, tuple, set, frozenset))
                     else vars(x).values() if hasattr(x, "__dict__") else ())
    stack = [b]
    while stack:
        x = stack.pop()
        if isinstance(x, constant):
            continue
        if id(x) in seen:
            if isinstance(x, (dict, list, set)) or hasattr(x, "__dict__"):
                return False
            continue
        seen.add(id(x))
        stack.extend(x.values() if isinstance(x, dict) else x if isinstance(x, (list, tuple, set, frozenset))
                     else vars(x).values() if hasattr(x, "__dict__") else ())
    return True


def _db_check_fails(domain: str, task: Any, row: dict[str, Any], constructor: Any) -> bool:
    """Whether a run certainly fails its task's DB check, so its reward is 0 whatever else is graded
    (the evaluator multiplies the bases' rewards). Only for a row that asks for its verdict alone
    (`"verdict_only": true`, not traced, no watched or derived calls) of a task with DB in its reward
    basis. Its end state is the evaluator's own predicted environment (`set_state` replays the run's
    calls on the task's initial state, as `EnvironmentEvaluator.calculate_reward` does; not strict,
    since only the state is read), compared with the gold environment's (`Start.expected`, once per
    task) by the serialisation tau2 hashes (`Start.records`). A run whose state matches is graded in full."""
    from tau2.data_model.message import AssistantMessage, ToolCall, ToolMessage, UserMessage
    from tau2.data_model.tasks import RewardType

    criteria = task.evaluation_criteria
    if (not row.get("verdict_only") or row.get("trace") not in (None, False, "final") or criteria is None
            or (criteria.actions is None and criteria.env_assertions is None)
            or any(c.get("alternatives") or c.get("args_from") or c.get("watch") for c in row["calls"])):
        return False
    basis = set(criteria.reward_basis)
    if RewardType.NL_ASSERTION in basis:
        if not row.get("without_llm"):
            return False
        basis.discard(RewardType.NL_ASSERTION)
    if RewardType.DB not in basis:
        return False
    start = Start.of(domain, task, constructor)
    if start is None:
        return False
    messages: list[Any] = []
    for i, call in enumerate(row["calls"]):
        requestor = call.get("requestor") or "assistant"
        tc = ToolCall(id=f"toollint_{i}_0", name=call["function"], arguments=dict(call.get("args") or {}),
                      requestor=requestor)
        said = (UserMessage(role="user", content=None, tool_calls=[tc]) if requestor == "user"
                else AssistantMessage(role="assistant", content=None, tool_calls=[tc]))
        messages += [said, ToolMessage(id=tc.id, role="tool", content="", requestor=requestor)]
    try:
        start.env.set_state(initialization_data=None, initialization_actions=None, message_history=messages,
                            strict=False)
        return start.differs_from_gold_and_restore(task)
    except _Untracked:
        _STATE["starts"] = {}  # built afresh for the next run
        return False


class Tracked(dict):  # type: ignore[type-arg]
    """A database table (a dict field of the DB model: flights by number, users by id) that notes the
    keys whose records a tool could have reached: read, written, removed or iterated over. A record no
    tool reached is the object the table held at the start, unchanged. Serialisers read the dict itself
    (pydantic, json), not these methods, and note nothing."""

    touched: set[Any]
    everything: bool

    def note(self, key: Any) -> None:
        self.__dict__.setdefault("touched", set()).add(key)

    def reached(self) -> set[Any]:
        if self.__dict__.get("everything"):
            return set(dict.keys(self)) | self.__dict__.get("touched", set())
        return set(self.__dict__.get("touched", set()))

    def forget(self) -> None:
        self.__dict__["touched"], self.__dict__["everything"] = set(), False

    def __getitem__(self, key: Any) -> Any:
        self.note(key)
        return dict.__getitem__(self, key)

    def get(self, key: Any, default: Any = None) -> Any:
        self.note(key)
        return dict.get(self, key, default)

    def __setitem__(self, key: Any, value: Any) -> None:
        self.note(key)
        dict.__setitem__(self, key, value)

    def __delitem__(self, key: Any) -> None:
        self.note(key)
        dict.__delitem__(self, key)

    def pop(self, key: Any, *default: Any) -> Any:
        self.note(key)
        return dict.pop(self, key, *default)

    def setdefault(self, key: Any, default: Any = None) -> Any:
        self.note(key)
        return dict.setdefault(self, key, default)

    def _all(self) -> None:
        self.__dict__["everything"] = True

    def values(self) -> Any:
        self._all()
        return dict.values(self)

    def items(self) -> Any:
        self._all()
        return dict.items(self)

    def __iter__(self) -> Any:
        self._all()
        return dict.__iter__(self)

    def copy(self) -> dict[Any, Any]:
        self._all()
        return dict(dict.items(self))

    def update(self, *args: Any, **kwargs: Any) -> None:
        self._all()
        dict.update(self, *args, **kwargs)

    def popitem(self) -> Any:
        self._all()
        return dict.popitem(self)

    def clear(self) -> None:
        self._all()
        dict.clear(self)

    def __reduce__(self) -> Any:  # copied or pickled, it is a plain dict
        self._all()
        return (dict, (dict(dict.items(self)),))


class Start:
    """An environment kept at a task's initial state (the initial state tau2's evaluator builds: the
    domain's database, the task's initialization data and actions and message history), restored after
    each run instead of built again: a 7 MB database takes longer to build (and to hash) than a run takes.

    A state is read as tau2's DB hash reads it (`get_dict_hash(db.model_dump())`: JSON with sorted keys)
    one record at a time: the records of a table (`Tracked`) that a run reached are serialised, compared
    with the start's, and those that changed are put back. Two states hash alike exactly when their
    changed records do. Kept only where that is exact: each record serialises as the whole database's
    dump writes it, that dump reproduces `get_db_hash`, and the environment's `sync_tools` does nothing
    (so a run replayed after the initial state equals the evaluator's single replay). `verify` compares
    the whole state with the start's at the end of each batch: a change no table noted is caught there."""

    def __init__(self, env: Any, dbs: list[Any]) -> None:
        import pickle
        import typing

        from pydantic import TypeAdapter

        self.env = env
        self.dbs = dbs
        self.base = [self.records(db) for db in dbs]
        self.tables: dict[tuple[int, str], tuple[Tracked, Any]] = {}
        self.pickled: dict[tuple[int, str], Any] = {}
        for n, db in enumerate(dbs):
            for name, value in db.model_dump().items():
                annotation = type(db).model_fields[name].annotation
                if isinstance(value, dict) and typing.get_origin(annotation) is dict:
                    table = getattr(db, name)
                    adapter = TypeAdapter(typing.get_args(annotation)[1])
                    self.tables[(n, name)] = (Tracked(table), adapter)
                    db.__dict__[name] = self.tables[(n, name)][0]
                    self.pickled[(n, name)] = {str(k): (k, pickle.dumps(v)) for k, v in value.items()}
                else:
                    self.pickled[(n, name)] = pickle.dumps(value)
        self.gold: dict[str, dict[tuple[int, str, str], Any]] = {}
        self.used = False

    @staticmethod
    def of(domain: str, task: Any, constructor: Any) -> Start | None:
        import json

        from tau2.environment.environment import Environment

        state = task.initial_state
        key = (_STATE.get("src"), domain, json.dumps(state.model_dump(mode="json") if state else None,
                                                     sort_keys=True))
        starts = _STATE.setdefault("starts", {})
        if key not in starts:
            if len(starts) >= 4:  # a database each: keep a few initial states (most tasks share one)
                starts.pop(next(iter(starts)))
            env = constructor(solo_mode=False)
            env.set_state(initialization_data=state.initialization_data if state is not None else None,
                          initialization_actions=state.initialization_actions if state is not None else None,
                          message_history=(state.message_history or []) if state is not None else [])
            toolkits = [t for t in (env.tools, env.user_tools) if t is not None and t.db is not None]
            dbs = list({id(t.db): t.db for t in toolkits}.values())
            exact = type(env).sync_tools is Environment.sync_tools and all(
                Start._hash(t.db) == t.get_db_hash() for t in toolkits)
            start = Start(env, dbs) if exact else None
            if start is not None and not start._records_serialise_alike():
                start = None
            starts[key] = start
        start = starts[key]
        if start is not None:
            start.used = True
        return start  # type: ignore[no-any-return]

    @staticmethod
    def _hash(db: Any) -> str:
        import hashlib
        import json

        return hashlib.sha256(json.dumps(db.model_dump(), sort_keys=True, default=str).encode()).hexdigest()

    @staticmethod
    def _json(value: Any) -> str:
        import json

        return json.dumps(value, sort_keys=True, default=str)

    @staticmethod
    def records(db: Any) -> dict[str, Any]:
        """Each top-level field's serialisation as `get_dict_hash` writes it; a dict field's, per key."""
        out: dict[str, Any] = {}
        for name, value in db.model_dump().items():
            if isinstance(value, dict):
                out[name] = {str(k): Start._json(v) for k, v in value.items()}
            else:
                out[name] = Start._json(value)
        return out

    def _records_serialise_alike(self) -> bool:
        """Whether each record of a table, serialised alone, reads as in the whole database's dump."""
        return all(
            {str(k): self._json(adapter.dump_python(v)) for k, v in dict.items(table)} == self.base[n][name]
            for (n, name), (table, adapter) in self.tables.items())

    def changes(self) -> dict[tuple[int, str, str], Any]:
        """The records that differ from the start's (None: removed), by serialisation; then forgotten:
        each changed record (or non-table field) is put back as it was at the start."""
        import pickle

        from pydantic import TypeAdapter

        out: dict[tuple[int, str, str], Any] = {}
        for (n, name), (table, adapter) in self.tables.items():
            db = self.dbs[n]
            if db.__dict__.get(name) is not table:  # a tool replaced the whole table
                raise _Untracked(f"{type(db).__name__}.{name} was replaced")
            base, original = self.base[n][name], self.pickled[(n, name)]
            for key in table.reached():
                k = str(key)
                now = self._json(adapter.dump_python(dict.__getitem__(table, key))) if dict.__contains__(
                    table, key) else None
                if now == base.get(k):
                    continue
                out[(n, name, k)] = now
                if k in base:
                    raw, blob = original[k]
                    dict.__setitem__(table, raw, adapter.validate_python(pickle.loads(blob)))
                else:
                    dict.__delitem__(table, key)
            table.forget()
        for n, db in enumerate(self.dbs):
            for name, value in db.model_dump(include={f for (m, f) in self.pickled
                                                       if m == n and (m, f) not in self.tables}).items():
                now = self._json(value)
                if now != self.base[n][name]:
                    out[(n, name, "")] = now
                    annotation = type(db).model_fields[name].annotation
                    setattr(db, name, TypeAdapter(annotation).validate_python(
                        pickle.loads(self.pickled[(n, name)])))
        return out

    def expected(self, task: Any) -> dict[tuple[int, str, str], Any]:
        """The gold environment's changed records, built as `EnvironmentEvaluator.calculate_reward` builds
        it: the initial state, then each gold action through `make_tool_call` (a failing one skipped)."""
        if task.id not in self.gold:
            for action in task.evaluation_criteria.actions or []:
                try:
                    self.env.make_tool_call(tool_name=action.name, requestor=action.requestor,
                                            **action.arguments)
                except Exception:  # noqa: BLE001, S110 - the evaluator logs and skips a failing action
                    pass
            self.gold[task.id] = self.changes()
        return self.gold[task.id]

    def differs_from_gold_and_restore(self, task: Any) -> bool:
        now = self.changes()
        return now != self.expected(task)

    def verify(self) -> bool:
        """Whether the whole state is the start's again (every record serialised)."""
        return [self.records(db) for db in self.dbs] == self.base


class _Untracked(Exception):
    """A run changed the state where no table noted it: its verdict is left to the evaluator."""


def _content(text: Any) -> Any:
    import json

    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return text


def pristine(domain: str) -> dict[str, Any]:
    """The domain's freshly built state (for tests)."""
    return copy.deepcopy(_snapshot(_tau2().get_env_constructor(domain)()))
