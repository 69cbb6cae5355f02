"""Issue 22: tools, writers and graders found with no configuration, from what the agent is shown and
what runs its calls. Each shape is a pair: the shape found, and its nearest look-alike not found. The
last tests run the CLI on the shared corpus (skipped with a reason where it is absent)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path
from textwrap import dedent

import pytest

from toollint.analysis import analyze_module
from toollint.analysis.graders import discover_graders
from toollint.analysis.paths import writer_reason
from toollint.engine import lint_paths
from toollint.settings import Settings

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"


def tools(source: str, path: str = "") -> dict[str, bool]:
    """qualname -> writes, for every tool of a module."""
    text = dedent(source)
    analysis = analyze_module(ast.parse(text), Settings(), path=path, source=text)
    return {t.qualname: writer_reason(t, analysis.summaries[t.qualname])[0] for t in analysis.tools}


# -- a low-level server's handler ---------------------------------------------------------------------

HANDLER = """
from mcp.server.lowlevel import Server
NOTES = {}
async def call_tool(ctx, params):
    if params.name == "add":
        NOTES[params.arguments["k"]] = params.arguments["v"]
        return "added"
    if params.name == "get":
        return NOTES.get(params.arguments["k"])
server = Server("x", on_call_tool=call_tool)
"""


def test_a_handler_passed_as_on_call_tool_is_one_tool_per_name_branch() -> None:
    assert tools(HANDLER) == {"call_tool[add]": True, "call_tool[get]": False}


def test_the_same_function_not_passed_to_a_server_is_no_tool() -> None:
    assert tools(HANDLER.replace('server = Server("x", on_call_tool=call_tool)', "")) == {}


def test_a_single_tool_handler_that_never_compares_the_name_is_the_tool() -> None:
    single = """
    async def call_tool(ctx, params):
        assert params.name == "lookup"
        return ctx.lifespan_context.db[params.arguments["key"]]
    server = Server("x", on_call_tool=call_tool)
    """
    assert tools(single) == {"call_tool[lookup]": False}
    decorated = """
    server = Server("x")
    @server.call_tool()
    async def call_tool(name, arguments):
        return fetch(arguments["url"])
    """
    assert list(tools(decorated)) == ["call_tool"]


def test_a_write_through_the_lifespan_context_is_a_write_and_the_session_is_not_state() -> None:
    source = """
    async def call_tool(ctx, params):
        board = ctx.lifespan_context
        if params.name == "add_note":
            board.notes[params.arguments["id"]] = params.arguments["text"]
            await ctx.session.send_resource_list_changed()
            return "added"
        if params.name == "ping":
            await ctx.session.send_log_message("ping")
            return "pong"
    server = Server("x", on_call_tool=call_tool)
    """
    assert tools(source) == {"call_tool[add_note]": True, "call_tool[ping]": False}


# -- classes that describe themselves to the agent -----------------------------------------------------

DESCRIBED = """
class MathAPI:
    def __init__(self):
        self._api_description = "Arithmetic for the agent."
        self.history = []
    def add(self, a: int, b: int) -> dict:
        self.history.append(a + b)
        return {"result": a + b}
    def last(self) -> dict:
        return {"result": self.history[-1]}
    def _helper(self):
        return 1
"""


def test_a_class_with_an_api_description_has_its_public_methods_as_tools() -> None:
    assert tools(DESCRIBED) == {"MathAPI.add": True, "MathAPI.last": False}


def test_the_same_class_without_a_description_is_no_toolkit() -> None:
    assert tools(DESCRIBED.replace('self._api_description = "Arithmetic for the agent."', "pass")) == {}


def test_a_class_declaring_one_call_has_its_call_method_as_the_tool() -> None:
    source = """
    class AddAlarm(API):
        description = "Add an alarm."
        input_parameters = {"time": {"type": "str"}}
        def call(self, time):
            return {"ok": True}
        def check_api_call_correctness(self, response, groundtruth):
            return response == groundtruth
    """
    assert tools(source) == {"AddAlarm.call": False}
    # a framework's own wrapper declares the fields without values: not a tool
    wrapper = """
    class Function(BaseModel):
        description: str
        parameters: type
        def __call__(self, **kwargs):
            return self.run(**kwargs)
    """
    assert tools(wrapper) == {}


# -- dispatch by name ----------------------------------------------------------------------------------


def test_branches_on_the_called_function_name_are_tools() -> None:
    source = """
    def step(tool_call, env):
        func_name = tool_call["function"]["name"]
        if func_name == "search_action":
            return env.search(tool_call["arguments"])
        if func_name == "click_action":
            return env.click(tool_call["arguments"])
    """
    assert set(tools(source)) == {"step[search_action]", "step[click_action]"}
    # a branch on some other name (a method of a factory, the one name of a guard) is no dispatch
    other = source.replace("func_name", "method_name")
    assert tools(other) == {}
    one = """
    def step(func_name, env):
        if func_name == "search_action":
            return env.search()
    """
    assert tools(one) == {}


def test_getattr_dispatch_onto_a_sibling_modules_class(tmp_path: Path) -> None:
    (tmp_path / "api.py").write_text(dedent("""
        relation_cache = {}
        class API:
            def get_relations(self, variable):
                relation_cache[variable] = 1
                return relation_cache[variable]
            def final_execute(self, variable):
                return variable
        """))
    (tmp_path / "const.py").write_text('TOOLS = [{"name": "get_relations", "parameters": {}}]\n')
    (tmp_path / "task.py").write_text(dedent("""
        from .api import API
        def run(call):
            api = API()
            function = getattr(api, call["name"])
            fn = getattr(api, function_name)
            return fn()
        """))
    result = lint_paths([tmp_path], Settings())
    found = {t.qualname: t.writes for r in result.files for t in r.tools or []}
    rejected = {x.qualname for r in result.files for x in r.rejected}
    # declared and dispatched: a tool (a memo cache is not state); dispatched, not declared: listed
    assert found == {"API.get_relations": False}
    assert "API.final_execute" in rejected


def test_getattr_with_a_literal_name_dispatches_nothing(tmp_path: Path) -> None:
    (tmp_path / "api.py").write_text("class API:\n    def get(self):\n        return 1\n")
    (tmp_path / "task.py").write_text("from .api import API\ndef run():\n    api = API()\n"
                                      "    return getattr(api, 'get')()\n")
    result = lint_paths([tmp_path], Settings())
    assert [t for r in result.files for t in r.tools or []] == []


# -- registrations and base classes --------------------------------------------------------------------


def test_structured_tool_with_func_keyword_and_a_run_override() -> None:
    source = """
    class Kit:
        def make(self):
            def func(**kwargs):
                return "x"
            return StructuredTool(name="n", description="d", func=func)
    class Writer(BaseTool):
        def run(self, text):
            return text
    class Helper:
        def run(self, text):
            return text
    """
    assert set(tools(source)) == {"Kit.make.func", "Writer.run"}


# -- writers ---------------------------------------------------------------------------------------------


def test_global_rebinding_and_a_call_through_tool_func_are_writes() -> None:
    source = """
    CURRENT = None
    OUTBOX = []
    @tool
    def set_current(x: str) -> str:
        global CURRENT
        CURRENT = x
        return "ok"
    @tool
    def get_current() -> str:
        global CURRENT
        return CURRENT
    @tool
    def send_email(to: str) -> str:
        OUTBOX.append(to)
        return "sent"
    @tool
    def send_twice(to: str) -> str:
        send_email.func(to)
        return "sent"
    @tool
    def describe(to: str) -> str:
        return send_email.description
    """
    assert tools(source) == {
        "set_current": True,
        "get_current": False,
        "send_email": True,
        "send_twice": True,
        "describe": False,
    }


# -- graders by data flow ------------------------------------------------------------------------------


def test_a_function_comparing_a_gold_value_and_returning_a_verdict_is_a_grader() -> None:
    source = dedent("""
    class Env:
        def calculate_reward(self):
            data_hash = self.get_data_hash()
            gt_data_hash = self.replay_gold()
            return 1.0 if data_hash == gt_data_hash else 0.0
    def compare_results(answer, ground_truth):
        return sorted(answer) == sorted(ground_truth)
    def state_checker(model_instances, ground_truth_instances):
        return _compare(model_instances, ground_truth_instances)
    """)
    found = {g.qualname for g in discover_graders(ast.parse(source))}
    assert found == {"Env.calculate_reward", "compare_results", "state_checker"}


def test_look_alikes_of_graders_are_not_graders() -> None:
    source = dedent("""
    def check_format(text, pattern):          # a hint, but nothing gold
        return text == pattern
    def convert(value, expected_type):        # a gold word, no record and no hint
        return expected_type(value) == value
    def test_compare(answer, ground_truth):   # a test
        assert answer == ground_truth
    def log_score(answer, ground_truth):      # compares, returns nothing
        print(answer == ground_truth)
    """)
    assert discover_graders(ast.parse(source)) == []


# -- the CLI on the corpus -----------------------------------------------------------------------------


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "toollint", "check", "--isolated", "--exit-zero", *args],
                          capture_output=True, text=True, timeout=600, check=False)


@pytest.mark.skipif(not (CORPUS / "bfcl").is_dir(), reason="../shared/corpus/bfcl is absent")
def test_cli_finds_bfcls_162_tools_and_its_checkers() -> None:
    proc = _cli("--show-tools", "--show-graders", str(CORPUS / "bfcl"))
    assert "162 tools" in proc.stderr
    assert "multi_turn_checker [" in proc.stderr and "ast_checker [" in proc.stderr


@pytest.mark.skipif(
    not (CORPUS / "mcp-python-sdk").is_dir(), reason="../shared/corpus/mcp-python-sdk is absent"
)
def test_every_on_call_tool_file_of_the_corpus_has_a_tool() -> None:
    files = sorted(p for base in ("mcp-python-sdk", "mcp-servers") for p in (CORPUS / base).rglob("*.py")
                   if "on_call_tool=" in p.read_text(encoding="utf-8", errors="replace"))
    assert len(files) == 34
    result = lint_paths(files, Settings())
    without = [r.path for r in result.files if not r.tools]
    assert without == []


def test_a_copy_changed_and_a_clients_configuration_are_not_state_writes() -> None:
    source = """
    import copy
    DB = {"users": {"a": {"balance": 1}}, "stocks": {}}
    @tool
    def pop_copy(key: str) -> str:
        data = DB["users"].copy()
        data.pop(key)
        return str(data)
    @tool
    def deep(key: str) -> str:
        data = copy.deepcopy(DB["stocks"])
        data[key] = 1
        return str(data)
    @tool
    def pop_real(key: str) -> str:
        DB["users"].pop(key)
        return "removed"
    @tool
    def zero_all() -> str:
        for name, user in list(DB["users"].items()):
            user["balance"] = 0
        return "done"
    @tool
    def zero_each() -> str:
        for i, user in enumerate(sorted(DB["users"].values())):
            user["balance"] = i
        return "done"
    class Search:
        def __init__(self):
            self._api_description = "Search the web."
            self.client = make_client()
        def set_timeout(self, seconds: int) -> dict:
            self.client.timeout = seconds
            return {"ok": True}
    """
    assert tools(source) == {"pop_copy": False, "deep": False, "pop_real": True, "zero_all": True,
                             "zero_each": True, "Search.set_timeout": False}


# -- when nothing is found -------------------------------------------------------------------------------

CALENDAR = '''class Calendar:
    """A calendar the agent edits."""
    def add_event(self, title: str) -> str:
        """Add an event."""
        self.events.append(title)
        return "added"
    def list_events(self) -> list:
        """List the events."""
        return self.events
def helper(x):
    return x
'''


def test_no_tools_found_names_the_best_candidate_and_the_line_that_takes_it(tmp_path: Path) -> None:
    (tmp_path / "cal.py").write_text(CALENDAR)
    proc = subprocess.run([sys.executable, "-m", "toollint", "check", "--isolated", str(tmp_path)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert "No tools found" in proc.stderr
    line = next(x for x in proc.stderr.splitlines() if "Calendar:" in x)
    assert "2 documented public methods" in line and "helper" not in proc.stderr
    config = line.split("in [tool.toollint]: ", 1)[1]
    assert config == 'tool-classes = ["cal:Calendar"]'
    # the line printed is the line that works
    (tmp_path / "pyproject.toml").write_text(f"[tool.toollint]\n{config}\n")
    proc = subprocess.run([sys.executable, "-m", "toollint", "check", "--show-tools", "."], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, check=False)
    assert "Calendar.add_event [writes]" in proc.stderr and "2 tools (1 writer)" in proc.stderr


def test_a_run_with_tools_lists_no_candidates(tmp_path: Path) -> None:
    (tmp_path / "cal.py").write_text(CALENDAR.replace("class Calendar:", "class CalendarTools:"))
    proc = subprocess.run([sys.executable, "-m", "toollint", "check", "--isolated", str(tmp_path)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert "look most like tools" not in proc.stderr and "2 tools" in proc.stderr


# -- the cross-check of --show-tools ----------------------------------------------------------------------


def test_show_tools_lists_a_declared_function_no_tool_implements(tmp_path: Path) -> None:
    (tmp_path / "tools.py").write_text(dedent('''
        TOOLS = [{"name": "add_event", "parameters": {}}, {"name": "refund_order", "parameters": {}}]
        class CalendarTools:
            def add_event(self, title: str) -> str:
                """Add an event."""
                return "added"
        '''))
    (tmp_path / "more.json").write_text('[{"type": "function", "function": {"name": "cancel_event", '
                                        '"parameters": {}}}, {"name": "AddEvent", "parameters": {}}]')
    proc = _cli("--show-tools", str(tmp_path))
    declared = sorted(
        line.split(": ")[1].split(" [")[0] for line in proc.stderr.splitlines() if "[declared]" in line
    )
    # `AddEvent` and `add_event` are the tool found; the other two have no implementation
    assert declared == ["cancel_event", "refund_order"]


@pytest.mark.skipif(not (CORPUS / "agentbench").is_dir(), reason="../shared/corpus is absent")
def test_the_corpus_shapes_issue_22_names_are_found() -> None:
    def found(*parts: str) -> set[str]:
        result = lint_paths([CORPUS.joinpath(*parts)], Settings())
        return {t.qualname for r in result.files for t in r.tools or []}

    tasks = ("agentbench", "src", "server", "tasks")
    assert {"API.get_relations", "API.argmax"} <= found(*tasks, "knowledgegraph")
    assert "API.final_execute" not in found(*tasks, "knowledgegraph")  # dispatched, declared by no schema
    assert {"WebShop.sync_start_sample[search_action]", "WebShop.sync_start_sample[click_action]"} <= \
        found(*tasks, "webshop")
    assert "OSInteraction._extract_function[bash_action]" in found(*tasks, "os_interaction")
    assert "PDFTextWritingTool.run" in found("crewai-tools", "crewai_tools", "tools", "pdf_text_writing_tool")
    databricks = ("langchain-community", "libs", "community", "langchain_community", "tools", "databricks")
    assert "UCFunctionToolkit._make_tool.func" in found(*databricks)
    graders = lint_paths([CORPUS / "tau-bench" / "tau_bench" / "envs" / "base.py"], Settings())
    assert [g.qualname for r in graders.files for g in r.graders or []] == ["Env.calculate_reward"]


def test_functions_of_a_registry_looked_up_by_a_name_are_tools() -> None:
    source = """
    ORDERS = {}
    def add_order(order_id: str) -> str:
        ORDERS[order_id] = {}
        return "added"
    def get_order(order_id: str) -> dict:
        return ORDERS[order_id]
    REGISTRY = {"add_order": add_order, "get_order": get_order}
    def execute(call):
        return REGISTRY[call["name"]](**call["arguments"])
    """
    assert tools(source) == {"add_order": True, "get_order": False}
    # a registry only ever read with a literal key dispatches nothing the model names
    literal = source.replace('REGISTRY[call["name"]]', 'REGISTRY["add_order"]')
    assert tools(literal) == {}


def test_a_store_a_tool_opens_is_state_and_closing_or_looking_up_is_no_write() -> None:
    source = """
    import git
    import sqlite3
    server = Server("git")
    def git_commit(repo, message):
        return repo.index.commit(message).hexsha
    def git_show(repo, revision):
        return str(repo.commit(revision))
    @server.call_tool()
    async def call_tool(name, arguments):
        repo = git.Repo(arguments["repo_path"])
        if name == "commit":
            return git_commit(repo, arguments["message"])
        if name == "show":
            return git_show(repo, arguments["revision"])
        if name == "count":
            conn = sqlite3.connect(arguments["path"])
            n = conn.execute("select count(*) from t").fetchone()
            conn.close()
            return str(n)
    """
    assert tools(source) == {"call_tool[commit]": True, "call_tool[show]": False, "call_tool[count]": False}


SQL_DISPATCHER = """
import sqlite3
class DBTask:
    def start_sample(self, entry, session):
        database = SQLiteDatabase(entry["path"])
        for tool_call in session.action():
            function_name = tool_call["function"]["name"]
            arguments = tool_call["function"]["arguments"]
            if function_name == "execute_sql":
                session.inject(database.execute(arguments["sql"]))
            elif function_name == "count_rows":
                session.inject(database.execute("SELECT count(*) FROM " + arguments["table"]))
            elif function_name == "list_tables":
                session.inject(database.execute(f"SELECT name FROM sqlite_master WHERE type = {arguments}"))
            elif function_name == "check_answer":
                scratch_db = SQLiteDatabase(":memory:")
                scratch_db.execute(entry["gold_sql"])
                session.inject(scratch_db.execute("SELECT 1") == arguments["answer"])
"""


def test_sql_run_on_the_database_a_dispatcher_holds_writes_unless_the_code_spells_a_read() -> None:
    found = tools(SQL_DISPATCHER)
    assert found == {
        "DBTask.start_sample[execute_sql]": True,  # the agent's SQL: INSERT, UPDATE or DELETE as it likes
        "DBTask.start_sample[count_rows]": False,  # a literal SELECT (the table name is only data)
        "DBTask.start_sample[list_tables]": False,
        "DBTask.start_sample[check_answer]": False,  # a scratch database the branch opens itself
    }
    # a literal that writes is a write; a handle not named like a store, or not opened, is not followed
    writing = SQL_DISPATCHER.replace('"SELECT count(*) FROM "', '"DELETE FROM "')
    assert tools(writing)["DBTask.start_sample[count_rows]"] is True
    unopened = SQL_DISPATCHER.replace("SQLiteDatabase(entry", "pick(entry")
    assert tools(unopened)["DBTask.start_sample[execute_sql]"] is False


def test_sql_run_on_a_connection_a_tool_class_holds_as_state() -> None:
    source = """
    import sqlite3
    from mcp.server.fastmcp import FastMCP
    mcp = FastMCP("db")
    class Store:
        def __init__(self, path):
            self.conn = sqlite3.connect(path)
    store = Store("app.db")
    @mcp.tool()
    def run_query(sql: str) -> str:
        return str(store.conn.execute(sql).fetchall())
    @mcp.tool()
    def count_users() -> str:
        return str(store.conn.execute("select count(*) from users").fetchone())
    """
    assert tools(source) == {"run_query": True, "count_users": False}


def test_a_function_a_json_or_yaml_schema_of_its_package_declares_is_a_tool(tmp_path: Path) -> None:
    (tmp_path / "functions.py").write_text(dedent('''
        LIGHTS = {}
        def set_light(room: str, on: bool) -> str:
            LIGHTS[room] = on
            return "done"
        def format_room(room: str) -> str:
            return room.title()
        '''))
    (tmp_path / "tools.yaml").write_text("- name: set_light\n  parameters: {type: object}\n")
    result = lint_paths([tmp_path], Settings())
    assert {t.qualname: t.writes for r in result.files for t in r.tools or []} == {"set_light": True}
    (tmp_path / "tools.yaml").unlink()
    (tmp_path / "tools.json").write_text('{"tools": [{"type": "function", "function": {"name": "other", '
                                         '"parameters": {}}}]}')
    from toollint.analysis.dispatch import package_declarations, package_texts

    package_texts.cache_clear()  # the package changed under the same directory name
    package_declarations.cache_clear()
    result = lint_paths([tmp_path], Settings())
    assert [t for r in result.files for t in r.tools or []] == []
