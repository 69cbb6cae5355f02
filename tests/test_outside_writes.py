"""Issue 22: writes outside the state the analysis sees (a database, a shell, a remote service), each
shape beside its nearest look-alike that only reads (`toollint.analysis.effects`). The hand lists
these came from are in bench/discovery_counts.json; `python bench/discovery.py` compares them."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path
from textwrap import dedent

from toollint.analysis import analyze_module
from toollint.settings import Settings

ROOT = Path(__file__).resolve().parents[1]


def writers(source: str) -> dict[str, bool]:
    """qualname -> writes, as the tool facts (`--show-tools`) say."""
    text = dedent(source)
    return {f.qualname: f.writes for f in analyze_module(ast.parse(text), Settings(), source=text).facts()}


def test_the_agents_command_or_code_run_is_a_write_and_a_query_to_a_search_wrapper_is_not() -> None:
    source = """
    import subprocess
    from langchain_core.tools import BaseTool

    class Terminal(BaseTool):
        name: str = "terminal"
        description: str = "Run shell commands on this machine."
        def _run(self, commands: str) -> str:
            return self.process.run(commands)

    class Interpreter(BaseTool):
        name: str = "code"
        description: str = "Interprets Python code."
        def _run(self, code: str) -> str:
            cmd = ["python3", "-c", code]
            return subprocess.run(cmd, capture_output=True).stdout

    class Search(BaseTool):
        name: str = "search"
        description: str = "Search the web. Input should be a search query."
        def _run(self, query: str) -> str:
            return self.api_wrapper.run(query)

    class Version(BaseTool):
        name: str = "version"
        description: str = "Tell the installed version."
        def _run(self, package: str) -> str:
            return subprocess.run(["pip", "show", "pip"], capture_output=True).stdout
    """
    assert writers(source) == {"Terminal._run": True, "Interpreter._run": True, "Search._run": False,
                               "Version._run": False}


def test_the_agents_sql_writes_unless_read_only_by_guard_validator_or_spelling() -> None:
    source = """
    from langchain_core.tools import BaseTool

    class Query(BaseTool):
        name: str = "sql"
        description: str = "Converts natural language to SQL queries and executes them."
        def _run(self, sql_query: str) -> str:
            return self.session.execute(text(sql_query))

    class Guarded(BaseTool):
        name: str = "read_query"
        description: str = "Execute a SELECT query."
        def _run(self, query: str) -> str:
            if not query.strip().upper().startswith("SELECT"):
                raise ValueError("only SELECT")
            return self._execute(query)
        def _execute(self, q: str) -> str:
            return self.cursor.execute(q)

    class Validated(BaseTool):
        name: str = "search_db"
        description: str = "Search a database's tables."
        def _run(self, search_query: str) -> str:
            valid, message = self._validate_query(search_query)
            if not valid:
                return message
            return self.cursor.execute(search_query)

    class Describe(BaseTool):
        name: str = "describe_table"
        description: str = "Describe a table."
        def _run(self, table: str) -> str:
            return self._execute(f"PRAGMA table_info({table})")
        def _execute(self, q: str) -> str:
            return self.cursor.execute(q)
    """
    assert writers(source) == {"Query._run": True, "Guarded._run": False, "Validated._run": False,
                               "Describe._run": False}


def test_sql_spelled_as_a_write_on_a_connection_is_one_and_a_spelled_read_is_not() -> None:
    source = """
    from mcp.server.fastmcp import FastMCP
    mcp = FastMCP("memory")

    async def save(pool, content: str) -> None:
        async with pool.acquire() as conn:
            await conn.execute("INSERT INTO memories (content) VALUES ($1)", content)

    async def load(pool, content: str) -> list:
        async with pool.acquire() as conn:
            return await conn.fetch("SELECT content FROM memories WHERE content = $1", content)

    @mcp.tool()
    async def remember(content: str) -> str:
        await save(POOL, content)
        return "remembered"

    @mcp.tool()
    async def recall(content: str) -> list:
        return await load(POOL, content)
    """
    assert writers(source) == {"remember": True, "recall": False}


def test_a_declared_action_reaching_an_effect_is_a_write_and_a_declared_read_is_not() -> None:
    source = """
    import requests
    from PIL import Image as PILImage
    from langchain_core.tools import BaseTool
    from mcp.server.fastmcp import FastMCP
    mcp = FastMCP("demo")

    class Click(BaseTool):
        name: str = "click_element"
        description: str = "Click on an element with the given CSS selector"
        def _run(self, selector: str) -> str:
            page = get_current_page(self.sync_browser)
            page.click(selector)
            return "clicked"

    class Navigate(BaseTool):
        name: str = "navigate_browser"
        description: str = "Navigate a browser to the specified URL"
        def _run(self, url: str) -> str:
            page = get_current_page(self.sync_browser)
            page.goto(url)
            return "navigated"

    class WebSearch(BaseTool):
        name: str = "web_search"
        description: str = "Search the web and return the results."
        def _run(self, query: str) -> str:
            return requests.post(URL, json={"q": query}).text

    class Invoke(BaseTool):
        name: str = "invoke_automation"
        description: str = "Invokes an automation using the API"
        def _run(self, prompt: str) -> str:
            return requests.post(URL, json={"prompt": prompt}).text

    @mcp.tool()
    def create_thumbnail(image_path: str) -> bytes:
        \"\"\"Create a thumbnail from an image\"\"\"
        img = PILImage.open(image_path)
        return img.tobytes()

    @mcp.tool()
    def close_session(session_id: str) -> str:
        \"\"\"Close the browser session.\"\"\"
        client.close_session(session_id)
        return "closed"
    """
    assert writers(source) == {"Click._run": True, "Navigate._run": False, "WebSearch._run": False,
                               "Invoke._run": True, "create_thumbnail": False, "close_session": True}


def test_a_configured_action_run_or_a_webhook_posted_is_a_write_and_listing_actions_is_not() -> None:
    source = """
    import requests
    from langchain_core.tools import BaseTool

    class RunAction(BaseTool):
        def _run(self, **kwargs) -> str:
            return self.service.run_action(self.action.id, kwargs)

    class PlatformAction(BaseTool):
        def _run(self, **kwargs) -> str:
            url = f"{BASE}/actions/{self.action_name}/execute"
            return requests.post(url=url, json=kwargs).text

    class ListActions(BaseTool):
        name: str = "list_actions"
        description: str = "This tool returns a list of the user's exposed actions."
        def _run(self, _: str = "") -> str:
            return self.api_wrapper.list_as_str()

    class Webhook(BaseTool):
        \"\"\"IFTTT Webhook: the url to hit with the json event.\"\"\"
        def _run(self, tool_input: str) -> str:
            return requests.post(self.url, data={"this": tool_input}).text

    class Rerank(BaseTool):
        \"\"\"Rerank documents with the reranking service.\"\"\"
        def _run(self, query: str) -> str:
            return requests.post(self.url, json={"q": query}).text

    class Store(BaseTool):
        name: str = "knowledge_source_url"
        description: str = "This calls the services to analyze & store data from a url."
        def _run(self, url: str) -> str:
            return requests.post(API, data={"url": url}).text

    class SpeechToText(BaseTool):
        name: str = "speech_to_text"
        description: str = "Useful for when you have to convert audio to text."
        def _run(self, url: str) -> str:
            return requests.post(API, data={"url": url}).text
    """
    assert writers(source) == {"RunAction._run": True, "PlatformAction._run": True, "ListActions._run": False,
                               "Webhook._run": True, "Rerank._run": False, "Store._run": True,
                               "SpeechToText._run": False}


def test_a_tool_built_per_mode_writes_when_the_prompts_beside_it_declare_a_write(tmp_path: Path) -> None:
    tool = dedent("""
        from langchain_core.tools import BaseTool

        class ServiceAction(BaseTool):
            api_wrapper: ServiceAPIWrapper
            mode: str
            name: str = ""
            description: str = ""
            def _run(self, instructions: str) -> str:
                return self.api_wrapper.run(self.mode, instructions)
    """)
    for name, prompts in (("tasks", "GET_TASK_PROMPT = '...'\nCREATE_TASK_PROMPT = '...'\n"),
                          ("media", "SEARCH_MEDIA_PROMPT = '...'\nGET_CAPTIONS_PROMPT = '...'\n")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "tool.py").write_text(tool)
        (tmp_path / name / "prompt.py").write_text(prompts)
    found = {}
    for name in ("tasks", "media"):
        path = tmp_path / name / "tool.py"
        analysis = analyze_module(ast.parse(tool), Settings(), f"{name}.tool", str(path), tool)
        found[name] = [(f.writes, f.why) for f in analysis.facts()]
    assert found["tasks"][0][0] and "CREATE_TASK_PROMPT" in found["tasks"][0][1]
    assert found["media"] == [
        (False, "may write outside the state it sees: `self.api_wrapper.run` (not followed)")]


def test_a_function_looked_up_by_a_writing_name_and_called_writes_and_a_reading_name_does_not() -> None:
    source = """
    import importlib
    from mcp.server.fastmcp import FastMCP
    mcp = FastMCP("apps")

    def _get_app_func(app: str, suffix: str):
        return getattr(importlib.import_module(f"apps.{app}"), f"{app}_{suffix}")

    @mcp.tool()
    def app_account(app: str, action: str) -> dict:
        if action == "delete":
            return _get_app_func(app, "delete_account")()
        return _get_app_func(app, "show_account")()

    @mcp.tool()
    def app_profile(app: str) -> dict:
        return _get_app_func(app, "show_profile")()
    """
    assert writers(source) == {"app_account": True, "app_profile": False}


def test_a_branch_building_an_action_the_environment_runs_writes_and_a_search_or_answer_does_not() -> None:
    source = """
    class Shop:
        def start(self, session):
            env = make_env()
            while True:
                tool_calls = session.action().tool_calls
                tool_call = tool_calls[0]
                func_name = tool_call["function"]["name"]
                arguments = list(json.loads(tool_call["function"]["arguments"]).values())
                if func_name == "search_action":
                    action = f"search[{arguments[0]}]"
                elif func_name == "click_action":
                    action = f"click[{arguments[0]}]"
                observation, reward, done, info = env.step(action)

    class Shell:
        @staticmethod
        def _extract_function(func_name, arguments):
            ret = {"action": None, "content": None}
            if func_name == "bash_action":
                ret["action"] = "bash"
                ret["content"] = arguments[0]
            if func_name == "answer_action":
                ret["action"] = "commit"
                ret["content"] = arguments[0]
            return ret

        async def _round(self, session, container, call):
            data = self._extract_function(call["name"], call["arguments"])
            if data["action"] == "commit":
                return data["content"]
            elif data["action"] == "bash":
                await self._run_bash(container, data["content"])

        async def _run_bash(self, container, command):
            return await container.execute(command)
    """
    found = writers(source)
    assert {k: v for k, v in found.items() if "[" in k} == {
        "Shop.start[search_action]": False, "Shop.start[click_action]": True,
        "Shell._extract_function[bash_action]": True, "Shell._extract_function[answer_action]": False}


def test_show_tools_says_why_a_tool_writes_outside(tmp_path: Path) -> None:
    """The documented command: `toollint check --show-tools` with no configuration."""
    (tmp_path / "tools.py").write_text(dedent("""
        from langchain_core.tools import BaseTool

        class Terminal(BaseTool):
            name: str = "terminal"
            description: str = "Run shell commands on this machine."
            def _run(self, commands: str) -> str:
                return self.process.run(commands)
    """))
    proc = subprocess.run([sys.executable, "-m", "toollint", "check", "--isolated", "--show-tools",
                           str(tmp_path)], cwd=ROOT, capture_output=True, text=True, check=False)
    assert "Terminal._run [writes] writes outside the state it sees: runs the agent's code (high): " \
           "`self.process.run` at line 8" in proc.stdout + proc.stderr, proc.stdout + proc.stderr
