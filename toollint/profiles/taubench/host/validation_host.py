"""Host-side helpers of the tau-bench validation driver: run inside tau-bench's interpreter through the
host gateway (`toollint.dynamic.protocol.evaluate_in`), stdlib + tau-bench only.

Everything goes through tau-bench's own code, as its runner does (`tau_bench/run.py`):

- an environment is `tau_bench.envs.get_env(domain, ..., task_split=split)`, built with the `human`
  user strategy, which constructs no model client; its user is then replaced by `_SilentUser`, a
  stand-in that answers every message with an empty string (no network, no stdin). Nothing the reward
  reads comes from the user: `Env.calculate_reward` reads the database, the task's gold actions and
  outputs, and the agent's `respond` actions;
- a path starts from `Env.reset(task_index)` (the task's fresh database), each call is
  `Env.step(Action(name, kwargs))`; a call of a terminate tool (`transfer_to_human_agents`) ends the
  episode there with the reward `step` computed, as the runner would; otherwise the episode ends as when
  the user stops, with `Env.calculate_reward()`;
- a do-nothing agent is the empty path: `calculate_reward()` on the untouched database.

`setup(src)` must come first: it puts the tau-bench checkout first on `sys.path`. tau-bench's modules
are imported by name (`_tau_bench`) once it is there: nothing of it is installed where toollint is
type-checked.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import importlib
import inspect
import json
import os
import sys
import time
from typing import Any

_STATE: dict[str, Any] = {}


def setup(src: str) -> dict[str, Any]:
    """Import tau-bench from the checkout at `src`; the interpreter serves that tree from then on."""
    if "src" in _STATE:
        if _STATE["src"] != src:
            raise ValueError(f"this interpreter already runs tau-bench from {_STATE['src']}, not {src}")
        return {"tau_bench": _STATE["tau_bench"]}
    sys.dont_write_bytecode = True  # never write into the audited tree
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # litellm, imported by the user module
    sys.path.insert(0, src)
    tau_bench = _tau_bench("")
    if not os.path.abspath(tau_bench.__file__).startswith(os.path.abspath(src)):
        raise ValueError(f"tau_bench was imported from {tau_bench.__file__}, not from {src}")
    _STATE.update(src=src, tau_bench=tau_bench.__file__)
    return {"tau_bench": tau_bench.__file__}


def _tau_bench(module: str) -> Any:
    """`tau_bench.<module>` (the package itself for "")."""
    return importlib.import_module("tau_bench" + (f".{module}" if module else ""))


class _SilentUser:
    """The user simulator's interface (`BaseUserSimulationEnv`) with no model behind it."""

    def reset(self, instruction: str | None = None) -> str:
        return ""

    def step(self, content: str) -> str:
        return ""

    def get_total_cost(self) -> float:
        return 0.0


def _split(variant: str) -> tuple[str, str]:
    domain, _, split = variant.partition("/")
    return domain, split or "test"


def _env(variant: str) -> Any:
    cache = _STATE.setdefault("envs", {})
    if variant not in cache:
        domain, split = _split(variant)
        env = _tau_bench("envs").get_env(domain, user_strategy="human", user_model="none",
                                         task_split=split, task_index=0)
        env.user = _SilentUser()
        env.data_load_func = _memoised(env.data_load_func)
        env.get_data_hash = _hash_memo(env)
        cache[variant] = env
    return cache[variant]


def _memoised(load: Any) -> Any:
    """`data_load_func` read from its files once: each call still returns a database of its own (the
    first load, unpickled afresh), in a little over half the time of parsing the JSON files again.
    `reset` and `calculate_reward` load it three times per graded run."""
    import pickle

    blob: list[bytes] = []

    def data_load_func() -> Any:
        if not blob:
            blob.append(pickle.dumps(load(), protocol=pickle.HIGHEST_PROTOCOL))
        return pickle.loads(blob[0])

    return data_load_func


def _hash_memo(env: Any) -> Any:
    """`Env.get_data_hash` of this environment, memoised by the database's pickle (equal pickles: equal
    data, types and all, so an equal hash): `calculate_reward` hashes the run's database and the gold
    run's, and a task's gold database, the fresh one and a gold run's end state recur across its runs.
    The pickle takes a twentieth of the time of `to_hashable` over the same data."""
    import pickle

    original = type(env).get_data_hash
    known: dict[str, str] = {}

    def get_data_hash() -> str:
        key = hashlib.sha256(pickle.dumps(env.data, protocol=pickle.HIGHEST_PROTOCOL)).hexdigest()
        if key not in known:
            known[key] = original(env)
        return known[key]

    return get_data_hash


def tasks(variant: str) -> list[dict[str, Any]]:
    """Every task of the variant (`airline`, `retail`, `retail/train`, ...) in file order (the task id is
    the index): its gold actions, the outputs its reward looks for in the agent's answers, the user's
    instruction, where the task is written (`source`) and the function that grades it (`grader`)."""
    env = _env(variant)
    file, lines = _task_lines(env)
    grader = type(env).calculate_reward
    where = {"file": inspect.getsourcefile(grader), "line": inspect.getsourcelines(grader)[1],
             "name": "Env.calculate_reward"}
    out = []
    for i, task in enumerate(env.tasks):
        row: dict[str, Any] = {
            "task": str(i),
            "calls": [{"function": a.name, "args": dict(a.kwargs)} for a in task.actions],
            "outputs": list(task.outputs),
            "instruction": task.instruction,
            "grader": where,
        }
        if file and i < len(lines):
            row["source"] = {"file": file, "line": lines[i]}
        out.append(row)
    return out


def _task_lines(env: Any) -> tuple[str | None, list[int]]:
    """The module holding the environment's task list, and the line of each of its entries."""
    for name, module in list(sys.modules.items()):
        if not name.startswith("tau_bench.envs.") or not any(v is env.tasks for v in vars(module).values()):
            continue
        file = inspect.getsourcefile(module)
        if file is None:
            break
        with open(file, encoding="utf-8") as fh:
            tree = ast.parse(fh.read())
        for node in tree.body:
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.List) and any(
                isinstance(t, ast.Name) and vars(module).get(t.id) is env.tasks for t in node.targets
            ):
                return file, [e.lineno for e in node.value.elts]
        return file, []
    return None, []


def state_sample(variant: str) -> Any:
    """The database as every task of the variant starts (`data_load_func()`)."""
    return _env(variant).data_load_func()


def _digest(data: Any) -> str:
    text = json.dumps(data, sort_keys=True, default=str)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def registered_tools(variants: list[str]) -> dict[str, list[str]]:
    """variant -> the tool names its environment offers an agent (`Env.tools_map`)."""
    return {v: sorted(_env(v).tools_map) for v in variants}


def grade(variant: str, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each item's path (`{"task", "calls"}`) run through `Env.step` and graded by `Env.calculate_reward`:
    `{"task", "reward", "verdict", "errors", "ended_by", "elapsed_s"}` (`reward` None for an unknown task).
    A call of `respond` (`{"content": ...}`) is the agent's message to the user. The grader audit's keys:
    `"final": "gold"` ends the run with a `respond` holding the task's outputs (default: no final answer);
    `"trace": true` adds `"changed"` (per call: whether it changed the database), `"start_digest"` and
    `"digest"` (the database as the task starts and as the run ends), `"trace": "final"` the digest alone;
    `"without_llm"` changes nothing (the reward has no LLM part). `"verdict_only": true` (the caller
    reads only the verdict, and the digest and errors of a run that passes): a run whose database
    certainly differs from the gold run's is answered with reward 0 and `"preflight": "data"` without
    `calculate_reward` (`_kept_differs`)."""
    action = _tau_bench("types").Action
    env = _env(variant)
    out: list[dict[str, Any]] = []
    fast: list[int] = []  # the items answered by `_kept_differs`
    for item in items:
        started = time.perf_counter()
        index = _index(item.get("task"), len(env.tasks))
        if index is None:
            out.append({"task": item.get("task"), "reward": None, "verdict": None,
                        "errors": [f"no task {item.get('task')!r} in {variant}"], "ended_by": None})
            continue
        trace = item.get("trace")
        calls = list(item.get("calls") or [])
        if item.get("final") == "gold" and env.tasks[index].outputs:
            calls.append({"function": "respond", "args": {"content": " ".join(env.tasks[index].outputs)}})
        if (item.get("verdict_only") and trace in (None, False, "final")
                and not any(c["function"] in env.terminate_tools for c in calls)
                and _kept_differs(variant, env, index, calls, action)):
            fast.append(len(out))
            out.append({"task": str(index), "errors": [], "ended_by": "user stop", "reward": 0.0,
                        "verdict": False, "preflight": "data",
                        "elapsed_s": round(time.perf_counter() - started, 4)})
            continue
        env.reset(task_index=index)
        errors: list[str] = []
        changed: list[bool] = []
        before = _digest(env.data) if trace is True else None
        start = before
        result = None
        ended_by = "user stop"
        for i, call in enumerate(calls):
            if trace == "final" and call["function"] in env.terminate_tools:
                before = _digest(env.data)  # the reward the call triggers replaces the database
            response = env.step(action(name=str(call["function"]), kwargs=dict(call.get("args") or {})))
            if isinstance(response.observation, str) and response.observation.startswith(
                ("Error:", "Unknown action")
            ):
                errors.append(f"{i}: {call['function']}: {response.observation[:200]}")
            if response.done:  # the reward replaced the database with the gold run's: it is not digested
                result = response.info.reward_info
                ended_by = str(call["function"])
                changed.append(False)
                break
            if trace is True:
                after = _digest(env.data)
                changed.append(after != before)
                before = after
        answer: dict[str, Any] = {"task": str(index), "errors": errors, "ended_by": ended_by}
        if trace is True:
            answer.update(changed=changed[: len(item.get("calls") or [])], start_digest=start, digest=before)
        elif trace == "final":
            answer["digest"] = _digest(env.data) if result is None else before
        if result is None:
            result = env.calculate_reward()
        answer.update(reward=result.reward, verdict=result.reward >= 1.0,
                      elapsed_s=round(time.perf_counter() - started, 4))
        out.append(answer)
    kept = _STATE.get("kept", {}).get(variant)
    if fast and (kept is None or not kept.verify()):  # a change no table noted: grade those again, in full
        _STATE["kept"].pop(variant, None)
        again = grade(variant, [{**items[i], "verdict_only": False} for i in fast])
        for i, answer in zip(fast, again, strict=True):
            out[i] = answer
    return out


# --- speed: the reward's hash, only where it can change the verdict -----------------------------------
#
# `calculate_reward` hashes the whole database twice (`to_hashable`, pure Python over 5 MB: seconds),
# reloading it and replaying the gold actions in between. A grader audit grades hundreds of wrong runs
# per domain, nearly all of whose databases differ from the gold run's: that they differ is known from
# the few records either run changed, read as the hash reads them.

_MISSING = object()


class Tracked(dict):  # type: ignore[type-arg]
    """A table of the database (users by id, orders by id) that notes the keys whose records a tool
    could have reached: read, written, removed or iterated over. A record no tool reached is the object
    the table held at the start, unchanged. (tau2's host has its own: each host is one stdlib-only file,
    loaded by path into a benchmark's interpreter.)"""

    def note(self, key: Any) -> None:
        self.__dict__.setdefault("touched", set()).add(key)

    def reached(self) -> set[Any]:
        every = set(dict.keys(self)) if self.__dict__.get("everything") else set()
        return every | self.__dict__.get("touched", set())

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


class _Untracked(Exception):
    """A run changed the database where no table noted it: its verdict is left to `calculate_reward`."""


class Kept:
    """A database kept fresh across runs: each run's reached records that changed are put back, not the
    whole 5 MB loaded again. A run's changes are its records that `get_data_hash` would read otherwise
    (`repr(to_hashable(record))`): the database hashes as the gold run's exactly when the two runs'
    changes are equal (an unreached record is the fresh one in both)."""

    def __init__(self, env: Any) -> None:
        self.fresh = env.data_load_func()
        self.live = env.data_load_func()
        self.tables = {name: Tracked(table) for name, table in self.live.items()}
        self.live.update(self.tables)
        self.shown: dict[tuple[str, Any], str] = {}
        self.gold: dict[int, dict[tuple[str, Any], str | None]] = {}

    @staticmethod
    def usable(data: Any) -> bool:
        return isinstance(data, dict) and all(isinstance(t, dict) for t in data.values())

    def _show(self, record: Any) -> str:
        return repr(_tau_bench("envs.base").to_hashable(record))

    def changes(self) -> dict[tuple[str, Any], str | None]:
        """The reached records that hash unlike the fresh ones (None: removed); each reached record that
        differs in any way is put back."""
        import pickle

        if set(self.live) != set(self.fresh) or any(self.live[n] is not t for n, t in self.tables.items()):
            raise _Untracked("a table was replaced, added or removed")
        out: dict[tuple[str, Any], str | None] = {}
        for name, table in self.tables.items():
            fresh = self.fresh[name]
            named = table.__dict__.get("touched", set())
            for key in table.reached():
                now = dict.get(table, key, _MISSING)
                then = fresh.get(key, _MISSING)
                # An equal record is compared as the hash reads it too (1 and 1.0 are equal, and hash
                # apart) where a tool reached it by key; one only walked over (a search) is not.
                if now is then or (now is not _MISSING and then is not _MISSING and now == then and (
                        key not in named or self._show(now) == self._fresh_shown(name, key, then))):
                    continue
                shown = None if now is _MISSING else self._show(now)
                if shown != (None if then is _MISSING else self._fresh_shown(name, key, then)):
                    out[(name, key)] = shown
                if then is _MISSING:
                    dict.pop(table, key, None)
                else:
                    dict.__setitem__(table, key, pickle.loads(pickle.dumps(then)))
            table.forget()
        return out

    def _fresh_shown(self, name: str, key: Any, record: Any) -> str:
        if (name, key) not in self.shown:
            self.shown[(name, key)] = self._show(record)
        return self.shown[(name, key)]

    def expected(self, env: Any, index: int) -> dict[tuple[str, Any], str | None]:
        """The gold replay's changes, as `calculate_reward` replays it: each gold action but the terminate
        tools through `Env.step`, on a fresh database."""
        if index not in self.gold:
            env.data, env.actions = self.live, []
            for action in env.tasks[index].actions:
                if action.name not in env.terminate_tools:
                    env.step(action)
            self.gold[index] = self.changes()
        return self.gold[index]

    def verify(self) -> bool:
        """Whether every table is the fresh one again (a change through a record no table noted)."""
        return all(dict(dict.items(self.tables[name])) == table for name, table in self.fresh.items())


def _kept_differs(variant: str, env: Any, index: int, calls: list[dict[str, Any]], action: Any) -> bool:
    """Whether a run, replayed on the kept database (`Kept`), certainly ends in a database that hashes
    unlike the gold run's, so that `calculate_reward` would give 0 (its `r_actions` check). The
    environment is set as `Env.reset` sets it, but for the database, which is the kept one."""
    kept_all = _STATE.setdefault("kept", {})
    if variant not in kept_all:
        kept_all[variant] = Kept(env) if Kept.usable(env.data_load_func()) else None
    kept = kept_all[variant]
    if kept is None:
        return False
    try:
        gold = kept.expected(env, index)
        env.task_index, env.task, env.actions, env.data = index, env.tasks[index], [], kept.live
        env.user.reset(instruction=env.task.instruction)
        for call in calls:
            env.step(action(name=str(call["function"]), kwargs=dict(call.get("args") or {})))
        return kept.changes() != gold
    except _Untracked:
        kept_all.pop(variant, None)  # built afresh for the next run
        return False


def gold_effects(variant: str, indices: list[int]) -> list[dict[str, Any]]:
    """For tests: whether each task's gold actions change the database, found by calling the tools'
    own `invoke` on a fresh database and comparing its JSON before and after (not by the reward code)."""
    env = _env(variant)
    out = []
    for index in indices:
        task = env.tasks[index]
        data = env.data_load_func()
        before = json.dumps(data, sort_keys=True)
        for action in task.actions:
            tool = env.tools_map.get(action.name)
            if tool is not None:
                with contextlib.suppress(Exception):  # a failing gold call is replayed as step would
                    tool.invoke(data=data, **action.kwargs)
        out.append({"task": str(index), "writes": json.dumps(data, sort_keys=True) != before,
                    "outputs": list(task.outputs)})
    return out


def _index(task: Any, count: int) -> int | None:
    try:
        index = int(str(task))
    except ValueError:
        return None
    return index if 0 <= index < count else None
