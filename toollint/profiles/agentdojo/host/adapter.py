"""Host-side adapter for AgentDojo (verified on agentdojo 0.1.35). Stdlib + agentdojo only.

Loaded by toollint's host (`dynamic/host/host.py`) by path, inside AgentDojo's own venv. Options:
``suite`` (banking, travel, workspace, slack), ``version`` (default v1.2.2, the AgentDojo CLI
default).

- build: ``suite.load_and_inject_default_environment({})`` (default injections), optionally a
  user task's ``init_environment``; a pristine copy is kept and deep-copied to reset, the same move
  AgentDojo itself makes before running an agent.
- snapshot: pydantic ``model_dump(mode="json")``.
- call: ``FunctionsRuntime(suite.tools).run_function`` returns ``(result, error)``, validates and
  coerces the arguments; we report the coerced ones as ``effective_args``.
- frame: each tool's ``Depends("...")`` parameters name the environment fields it may touch.

The module-level helpers at the end (`ground_truth`, `grade`, `registered_tools`,
`state_schemas`) are what toollint's gateway evaluates here for the validation harness and the
contract validator (`eval` with this file as the module); they return plain JSON.
"""

from __future__ import annotations

import inspect
import sys
from typing import Any

DEFAULT_VERSION = "v1.2.2"
RESULT_CHARS = 20_000  # of each call's result a traced grading returns


LAZY_PACKAGES = ("agentdojo.agent_pipeline", "agentdojo.agent_pipeline.llms")


def _skip_pipeline_init() -> bool:
    """Register `agentdojo.agent_pipeline` without running its `__init__`.

    That `__init__` imports every LLM SDK (5 of the 6 s of `import agentdojo.task_suite`); the
    task suite needs only three small modules from the package, which still load from the real
    files. Undone (returns False) if the layout is not what we expect.
    """
    import importlib.util
    import os
    import types

    spec = importlib.util.find_spec("agentdojo")
    if spec is None or spec.origin is None:
        return False
    root = os.path.dirname(spec.origin)
    for name in LAZY_PACKAGES:
        path = os.path.join(root, *name.split(".")[1:])
        if not os.path.isfile(os.path.join(path, "__init__.py")):
            return False
    for name in LAZY_PACKAGES:
        module = types.ModuleType(name)
        module.__path__ = [os.path.join(root, *name.split(".")[1:])]
        module.__package__ = name
        sys.modules[name] = module
    return True


def import_task_suite(lazy: bool = True) -> bool:
    """Import `agentdojo.task_suite`, skipping the LLM SDKs when the layout allows (returns whether
    it did); falls back to the ordinary, slow import."""
    lazy = lazy and _skip_pipeline_init()
    try:
        import agentdojo.task_suite
    except ImportError:
        if not lazy:
            raise
        for name in list(sys.modules):
            if name.startswith("agentdojo"):
                del sys.modules[name]
        import agentdojo.task_suite  # noqa: F401
        lazy = False
    return lazy


class AgentDojoAdapter:
    json_snapshots = True  # model_dump(mode="json") is plain JSON already; the host skips its own pass

    def __init__(self, options: dict[str, Any], shims: Any) -> None:
        self.lazy_pipeline = import_task_suite(bool(options.get("lazy_pipeline", True)))
        from agentdojo.functions_runtime import FunctionsRuntime
        from agentdojo.task_suite import get_suite

        self.version = str(options.get("version") or DEFAULT_VERSION)
        self.suite_name = str(options.get("suite") or "banking")
        self.suite = get_suite(self.version, self.suite_name)
        self.runtime = FunctionsRuntime(self.suite.tools)
        self.shims = shims
        shims.freeze_clock(["agentdojo"])
        self.pristine: Any = None
        self.env: Any = None
        self.task_id: str | None = None
        try:
            from agentdojo.agent_pipeline.tool_execution import tool_result_to_str

            self.render = tool_result_to_str
        except Exception:  # noqa: BLE001 - older layouts: str() is what a custom pipeline would show
            self.render = str

    def hello(self) -> dict[str, Any]:
        import agentdojo

        tools: list[dict[str, Any]] = []
        for f in self.suite.tools:
            run = f.run
            try:
                file = inspect.getsourcefile(run)
                line = inspect.getsourcelines(run)[1]
            except (OSError, TypeError):
                file, line = None, None
            frame = None
            if f.dependencies and all(isinstance(d.env_dependency, str) for d in f.dependencies.values()):
                frame = sorted("/" + d.env_dependency for d in f.dependencies.values())
            elif not f.dependencies:
                frame = []
            tools.append({
                "name": f.name,
                "description": f.description,
                "doc": f.full_docstring,
                "parameters": f.parameters.model_json_schema(),
                "file": file,
                "line": line,
                "frame": frame,
            })
        try:
            schema = self.suite.environment_type.model_json_schema()
        except Exception:  # noqa: BLE001 - a schema is optional metadata
            schema = None
        return {
            "adapter": "agentdojo",
            "variant": f"{self.version}/{self.suite_name}",
            "benchmark_version": getattr(agentdojo, "__version__", None) or _dist_version("agentdojo"),
            "tools": tools,
            "state_schema": schema,
            "volatile_paths": [],
            "derived_paths": [],
            "capabilities": {"task_build": True, "user_tools": False, "reset": "deepcopy",
                             "lazy_pipeline": self.lazy_pipeline},
            "tasks": sorted(self.suite.user_tasks),
            # every tool some suite registers: a tool missing here is one no agent can call
            "registered_anywhere": registered_tools(self.version),
        }

    def build(self, task_id: str | None) -> None:
        env = self.suite.load_and_inject_default_environment({})
        if task_id:
            task = self.suite.get_user_task_by_id(task_id)
            env = task.init_environment(env)
        self.task_id = task_id
        self.pristine = env
        self.env = env.model_copy(deep=True)

    def reset(self) -> None:
        self.env = self.pristine.model_copy(deep=True)

    def snapshot(self) -> Any:
        return self.env.model_dump(mode="json")

    def call(self, tool: str, args: dict[str, Any], want_view: bool = True) -> dict[str, Any]:
        functions = self.runtime.functions
        effective: Any = args
        if tool in functions:
            try:
                effective = functions[tool].parameters.model_validate(args).model_dump(mode="json")
            except Exception:  # noqa: BLE001 - invalid args: the call reports it
                effective = args
        value, error = self.runtime.run_function(self.env, tool, args)
        if error is None:
            out = {"status": "ok", "value": _jsonable(value), "effective_args": effective}
            if want_view:  # the YAML rendering can cost more than the call itself
                try:
                    out["agent_view"] = self.render(value)
                except Exception:  # noqa: BLE001 - rendering is cosmetic
                    out["agent_view"] = str(value)
            return out
        etype, _, message = error.partition(": ")
        status = "validation_error" if etype in ("ValidationError", "ToolNotFoundError") else "tool_error"
        return {"status": status, "value": None, "agent_view": error, "error_type": etype,
                "error_message": message, "effective_args": effective}


def _jsonable(value: Any) -> Any:
    try:
        from pydantic_core import to_jsonable_python

        return to_jsonable_python(value)
    except Exception:  # noqa: BLE001 - best effort
        return value


def _dist_version(name: str) -> str | None:
    try:
        from importlib.metadata import version

        return version(name)
    except Exception:  # noqa: BLE001 - best effort
        return None


def make_adapter(options: dict[str, Any], shims: Any) -> AgentDojoAdapter:
    return AgentDojoAdapter(options, shims)


# ---------------------------------------------------------------------------------------------
# Helpers the gateway evaluates in AgentDojo's venv (plain JSON in, plain JSON out)


def _plain(value: Any) -> Any:
    """JSON-safe, as `json.dumps(default=str)` makes it (a date becomes its str())."""
    import json

    return json.loads(json.dumps(value, default=str))


def registered_tools(version: str = "v1") -> list[str]:
    """What an agent can call: the names of every tool some suite of `version` registers."""
    import_task_suite()
    from agentdojo.task_suite import get_suites

    return sorted({t.name for s in get_suites(version).values() for t in s.tools})


def state_schemas(version: str = "v1") -> dict[str, Any]:
    """Each suite's environment JSON Schema (serialization mode)."""
    import_task_suite()
    from agentdojo.task_suite import get_suites

    return {name: s.environment_type.model_json_schema(mode="serialization")
            for name, s in get_suites(version).items()}


def ground_truth(version: str, suite_name: str) -> list[dict[str, Any]]:
    """Each user task's ground-truth calls, in task order; a task whose ground truth cannot be built
    is reported with its error, not dropped."""
    import_task_suite()
    from agentdojo.task_suite import get_suite

    suite = get_suite(version, suite_name)
    base = suite.load_and_inject_default_environment({})  # loading is slow: once, then deep copies
    out: list[dict[str, Any]] = []
    for task_id, task in sorted(suite.user_tasks.items(), key=lambda kv: int(kv[0].rsplit("_", 1)[-1])):
        env = task.init_environment(base.model_copy(deep=True))
        where = _locations(task)
        try:
            calls = [{"function": c.function, "args": dict(c.args)} for c in task.ground_truth(env)]
            out.append({"task": task_id, "calls": calls, "instruction": str(task.PROMPT), **where})
        except Exception as exc:  # noqa: BLE001 - reported per task
            out.append({"task": task_id, "calls": [], "error": f"{type(exc).__name__}: {exc}", **where})
    return _plain(out)  # type: ignore[no-any-return]


def _locations(task: Any) -> dict[str, Any]:
    """Where the task's class and its grader (`utility`, or `utility_from_traces` where the class
    defines one) are, for reports: `{"source": {"file", "line"}, "grader": {"file", "line", "name"}}`."""
    out: dict[str, Any] = {}
    cls = type(task)
    try:
        out["source"] = {"file": inspect.getsourcefile(cls), "line": inspect.getsourcelines(cls)[1]}
        name = "utility_from_traces" if "utility_from_traces" in vars(cls) else "utility"
        fn = getattr(cls, name)
        out["grader"] = {"file": inspect.getsourcefile(fn), "line": inspect.getsourcelines(fn)[1],
                         "name": f"{cls.__name__}.{name}"}
    except (OSError, TypeError):  # a task built at run time has no source: reports fall back
        pass
    return out


def _digest(env: Any) -> str:
    import hashlib

    return hashlib.sha256(env.model_dump_json().encode()).hexdigest()[:16]


def state_sample(version: str, suite_name: str) -> Any:
    """The suite's environment as its tasks start (default injections), as JSON."""
    import_task_suite()
    from agentdojo.task_suite import get_suite

    env = get_suite(version, suite_name).load_and_inject_default_environment({})
    return _plain(env.model_dump(mode="json"))


def grade(version: str, suite_name: str, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Run each item's calls (`{"task", "calls"}`) in the task's environment and score it as AgentDojo
    does (`utility_from_traces`, else `utility`): `{"verdict": bool | None, "errors": [...]}` per item.

    The final answer is empty, or the task's `GROUND_TRUTH_OUTPUT` when the item says `"final": "gold"`
    (what AgentDojo's own ground-truth pipeline answers). With `"trace": true` the answer also says
    which calls changed the state (`changed`, per call) and digests of the state as the task starts
    (`start_digest`) and ends (`digest`), and what each call returned (`results`, as text); with
    `"trace": "final"`, the end's digest only."""
    import_task_suite()
    from agentdojo.functions_runtime import FunctionCall, FunctionsRuntime
    from agentdojo.task_suite import get_suite

    suite = get_suite(version, suite_name)
    runtime = FunctionsRuntime(suite.tools)
    base = suite.load_and_inject_default_environment({})  # loading is slow: once, then deep copies
    out: list[dict[str, Any]] = []
    for item in items:
        task = suite.get_user_task_by_id(item["task"])
        pre = task.init_environment(base.model_copy(deep=True))
        env = pre.model_copy(deep=True)
        trace = item.get("trace")  # True: each call's change; "final": the end state's digest only
        errors, changed, traces, results = [], [], [], []
        before = _digest(env) if trace else ""
        start = before
        for call in item["calls"]:
            traces.append(FunctionCall(function=call["function"], args=call["args"]))
            result, error = runtime.run_function(env, call["function"], call["args"])
            if error:
                errors.append("{}: {}".format(call["function"], str(error)[:200]))
            if trace and trace != "final":
                results.append(str(result)[:RESULT_CHARS])
                after = _digest(env)
                changed.append(after != before)
                before = after
        output = str(getattr(task, "GROUND_TRUTH_OUTPUT", "") or "") if item.get("final") == "gold" else ""
        verdict: bool | None
        try:
            from_traces = task.utility_from_traces(output, pre, env, traces)
            verdict = bool(task.utility(output, pre, env) if from_traces is None else from_traces)
        except Exception as exc:  # noqa: BLE001 - reported per item
            verdict = None
            errors.append(f"utility: {type(exc).__name__}: {exc}")
        answer: dict[str, Any] = {"verdict": verdict, "errors": errors}
        if trace == "final":
            answer.update(digest=_digest(env))
        elif trace:
            answer.update(changed=changed, start_digest=start, digest=before, results=results)
        out.append(answer)
    return out
