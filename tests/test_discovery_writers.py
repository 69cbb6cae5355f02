"""Issue 22, item 2: writers found by discovery's writer analysis, each shape beside its nearest
look-alike that writes nothing (the pair a reader of the code would tell apart). The hand lists these
shapes came from are in bench/discovery_counts.json; `python bench/discovery.py` compares them."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path
from textwrap import dedent

import pytest

from toollint.analysis import analyze_module
from toollint.analysis.paths import writer_reason
from toollint.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus"


def tools(source: str) -> dict[str, bool]:
    """qualname -> writes, for every tool of a module."""
    text = dedent(source)
    analysis = analyze_module(ast.parse(text), Settings(), source=text)
    return {t.qualname: writer_reason(t, analysis.summaries[t.qualname])[0] for t in analysis.tools}


def test_a_filtered_copy_grown_is_no_write_and_an_element_of_it_changed_is() -> None:
    source = """
    class Bank:
        def __init__(self):
            self._api_description = "A bank."
            self.history = []
        def recent(self, since: str) -> dict:
            hits = [t for t in self.history if t["date"] >= since]
            hits.extend(EXTRA)
            hits[0] = {"date": since}
            return {"history": hits}
        def tail(self, n: int) -> dict:
            rest = self.history[-n:]
            rest.append({"date": "now"})
            del rest[0]
            return {"history": rest}
        def flag(self, since: str) -> dict:
            hits = [t for t in self.history if t["date"] >= since]
            for t in hits:
                t["flagged"] = True
            return {"flagged": len(hits)}
        def clear_old(self, since: str) -> dict:
            self.history.extend([t for t in self.history if t["date"] >= since])
            return {"ok": True}
    """
    assert tools(source) == {"Bank.recent": False, "Bank.tail": False, "Bank.flag": True,
                             "Bank.clear_old": True}


def test_a_private_memo_refilled_is_no_write_and_a_private_record_is() -> None:
    source = """
    class Travel:
        def __init__(self):
            self._api_description = "Book flights."
            self._cost_lookup = {}
            self._bookings = {}
        def get_cost(self, route: str) -> dict:
            self._cost_lookup = {route: 100}
            return {"cost": 100}
        def book(self, route: str) -> dict:
            self._bookings[route] = self._cost_lookup.get(route)
            return {"booked": True}
    """
    assert tools(source) == {"Travel.get_cost": False, "Travel.book": True}


def test_nonlocal_rebinding_in_a_tool_and_in_a_handlers_branch_writes() -> None:
    source = """
    def build_server():
        mcp = MCPServer("x")
        enabled = False
        @mcp.tool()
        async def enable_search() -> str:
            nonlocal enabled
            if not enabled:
                enabled = True
            return "search is live"
        @mcp.tool()
        async def status() -> str:
            nonlocal enabled
            flag = enabled
            return str(flag)
        return mcp

    def build_lowlevel():
        search_enabled = False
        async def call_tool(ctx, params):
            nonlocal search_enabled
            if params.name == "enable_search":
                search_enabled = True
                return "on"
            if params.name == "status":
                on = search_enabled
                return str(on)
            raise NotImplementedError
        return Server("x", on_call_tool=call_tool)
    """
    assert tools(source) == {
        "build_server.enable_search": True,
        "build_server.status": False,
        "build_lowlevel.call_tool[enable_search]": True,
        "build_lowlevel.call_tool[status]": False,
    }


@pytest.mark.skipif(not (CORPUS / "bfcl").is_dir(), reason="../shared/corpus is absent")
def test_bench_discovery_prints_the_writers_beside_the_hand_list() -> None:
    """The documented command (`python bench/discovery.py`) on BFCL: every hand-listed writer found,
    no reader counted as one, and the exit status says so."""
    proc = subprocess.run([sys.executable, "bench/discovery.py", "--only", "bfcl"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, check=False)
    row = next(line for line in proc.stdout.splitlines() if line.startswith("bfcl "))
    assert "69 / 69" in row and "162 / 162" in row
    assert "readers counted as writers: 0" in proc.stdout and proc.returncode == 0


def test_bench_discovery_compares_names_not_counts() -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from discovery import FoundTool, compare_writers, load_counts
    finally:
        sys.path.pop(0)
    found = [FoundTool("a/server.py", "build.add", True), FoundTool("b/server.py", "build.add", False),
             FoundTool("a/server.py", "build.get", True), FoundTool("c.py", "cd", True)]
    cmp = compare_writers(found, ("b/server.py::build.add", "cd", "gone"))
    assert cmp.missed == ("b/server.py::build.add", "gone") and cmp.not_tools == ("gone",)
    # a qualname that repeats across files is reported with its file
    assert cmp.readers_as_writers == ("a/server.py::build.add", "build.get") and cmp.matched == 1
    # the hand lists kept in the repository name each writer once
    for count in load_counts():
        if count.writer_names is not None:
            assert len(set(count.writer_names)) == len(count.writer_names), count.name


def test_a_tool_declared_a_reader_that_logs_its_call_to_the_database_is_a_writer() -> None:
    source = """
    class UserTools(ToolKitBase):
        def _log_call(self, name: str) -> None:
            self.db.calls[name] = {"status": "CALLED"}
        @is_tool(ToolType.READ)
        def get_card_digits(self, card_id: str) -> str:
            self._log_call("get_card_digits")
            return self.db.cards[card_id].last4
        @is_tool(ToolType.READ)
        def get_card_status(self, card_id: str) -> str:
            return self.db.cards[card_id].status
        @is_tool(ToolType.WRITE)
        def example_tool(self) -> str:
            return "Example tool executed successfully."
    """
    assert tools(source) == {"UserTools.get_card_digits": True, "UserTools.get_card_status": False,
                             "UserTools.example_tool": True}


def test_a_services_client_set_up_or_asked_is_no_write_and_a_record_it_creates_is() -> None:
    source = """
    class Search(BaseTool):
        def _run(self, q: str) -> str:
            self.client: Client
            self.speech_config.language = "en"
            self.query_payload["q"] = q
            self.session_cache[q] = "x"
            self.driver.add_cookie({"a": 1})
            self.driver.close()
            return self.contextual_client.agents.query.create(messages=[q])
    class Schedule(BaseTool):
        def _run(self, q: str) -> str:
            schedule = self.account.schedule()
            return str(schedule.get_events(q))
    class CreateAgent(BaseTool):
        def _run(self, name: str) -> str:
            return self.contextual_client.datastores.create(name=name)
    class Book(BaseTool):
        def _run(self, meeting: str) -> str:
            return self.account.schedule(meeting)
    class Issue(BaseTool):
        def _run(self, title: str) -> str:
            return self.client.create_issue(title)
    class Remember(BaseTool):
        def _run(self, q: str) -> str:
            self.answers[q] = "x"
            self.client = make_client()
            return "ok"
    """
    assert tools(source) == {"Search._run": False, "Schedule._run": False, "CreateAgent._run": True,
                             "Book._run": True, "Issue._run": True, "Remember._run": True}


def test_a_file_written_moved_or_deleted_is_a_write_and_a_file_read_or_a_temp_file_is_not() -> None:
    source = """
    import os, shutil, tempfile
    class WriteFile(BaseTool):
        def _run(self, path: str, text: str, append: bool = False) -> str:
            mode = "a" if append else "w"
            with open(path, mode) as f:
                f.write(text)
            return "written"
    class MoveFile(BaseTool):
        def _run(self, src: str, dst: str) -> str:
            shutil.move(src, dst)
            return "moved"
    class DeleteFile(BaseTool):
        def _run(self, path: str) -> str:
            os.remove(path)
            return "deleted"
    class SaveNote(BaseTool):
        def _run(self, path: str, text: str) -> str:
            self.root.joinpath(path).write_text(text)
            return "saved"
    class ReadFile(BaseTool):
        def _run(self, path: str) -> str:
            with open(path) as f:
                return f.read()
    class ReadMode(BaseTool):
        def _run(self, path: str, binary: bool) -> str:
            mode = "rb" if binary else "r"
            with open(path, mode) as f:
                return str(f.read())
    class Speak(BaseTool):
        def _run(self, text: str) -> str:
            with tempfile.NamedTemporaryFile(mode="bx", suffix=".mp3", delete=False) as f:
                f.write(synthesize(text))
            return f.name
    class Rename(BaseTool):
        def _run(self, table: str) -> str:
            return str(load(table).rename(columns={"a": "b"}))
    """
    assert tools(source) == {"WriteFile._run": True, "MoveFile._run": True, "DeleteFile._run": True,
                             "SaveNote._run": True, "ReadFile._run": False, "ReadMode._run": False,
                             "Speak._run": False, "Rename._run": False}


PDF_TOOL = '''
class PDFTextWritingTool(BaseTool):
    def run(self, pdf_path: str, text: str, font_name: str = "F1", font_file: str = "") -> str:
        """Write text into a PDF."""
        if font_file:
            font_name = embed_font(font_file)
        operation = f"BT /{font_name} Tf ({text}) Tj ET"
        with open(pdf_path, "wb") as out:
            out.write(render(operation))
        return "Text added."

class Stamp(BaseTool):
    def run(self, pdf_path: str, label: str = "F1") -> str:
        """Stamp a PDF."""
        label = "DRAFT"
        with open(pdf_path, "wb") as out:
            out.write(render(label))
        return "Stamped."
'''


def test_tl103_sees_a_parameter_rebound_under_a_condition_as_read_on_the_other_paths(tmp_path: Path) -> None:
    """The documented command on a file tool: `font_name` reaches the file unless a font file replaces
    it, so it is read; `label` is replaced on every path before any read, so it never is."""
    (tmp_path / "pdf_tools.py").write_text(PDF_TOOL)
    proc = subprocess.run([sys.executable, "-m", "toollint", "check", "--isolated", "--select", "TL103",
                           str(tmp_path)], capture_output=True, text=True, timeout=120, check=False)
    flagged = [line for line in proc.stdout.splitlines() if "TL103" in line]
    assert len(flagged) == 1 and "`label`" in flagged[0], proc.stdout


def test_the_agents_sql_run_on_a_database_wrapper_and_a_clients_resource_first_send_are_writes() -> None:
    source = """
    class QuerySQL(BaseTool):
        def _run(self, query: str) -> str:
            return self.db.run_no_throw(query)
    class CountRows(BaseTool):
        def _run(self, table: str) -> str:
            return self.db.run(f"SELECT count(*) FROM {table}")
    class SlackSend(BaseTool):
        def _run(self, channel: str, message: str) -> str:
            return str(self.client.chat_postMessage(channel=channel, text=message))
    class SlackChannels(BaseTool):
        def _run(self) -> str:
            return str(self.client.conversations_list())
    """
    assert tools(source) == {"QuerySQL._run": True, "CountRows._run": False, "SlackSend._run": True,
                             "SlackChannels._run": False}


# -- item 1(a): a schema built from the docstrings of a list of functions -------------------------------

DOCSTRING_SCHEMA = '''
WEATHER = {"Paris": "sunny"}
BOOKINGS = []

def get_weather(city: str) -> str:
    """Get the weather of a city.

    Args:
        city: the city
    """
    return WEATHER[city]

def book_table(restaurant: str, seats: int) -> str:
    """Book a table."""
    BOOKINGS.append((restaurant, seats))
    return "booked"

def helper(city: str) -> str:
    """Normalise a city name."""
    return city.title()

FUNCTIONS = [get_weather, book_table]
TOOLS = [function_to_json(f) for f in FUNCTIONS]
ALSO_RUN = [warm_up(f) for f in [helper]]
'''


def test_functions_a_schema_is_built_from_are_tools_and_their_neighbours_are_not(tmp_path: Path) -> None:
    """The documented command: `toollint check --show-tools` with no configuration."""
    (tmp_path / "agent_tools.py").write_text(DOCSTRING_SCHEMA)
    proc = subprocess.run([sys.executable, "-m", "toollint", "check", "--isolated", "--show-tools",
                           str(tmp_path)], capture_output=True, text=True, timeout=120, check=False)
    listed = {line.split(": ")[1].split(" [")[0]: line for line in proc.stderr.splitlines() if "] " in line
              and "agent_tools.py" in line}
    assert set(listed) == {"get_weather", "book_table"}, proc.stderr
    assert "[writes]" in listed["book_table"] and "function_to_json" in listed["get_weather"]
    assert "2 tools (1 writer)" in proc.stderr


def test_a_loop_over_a_tuple_of_state_and_a_setter_taken_from_a_dispatch_table_write() -> None:
    source = """
    class Phone:
        def __init__(self):
            self._api_description = "A phone."
            self.inbox = []
            self.sent = []
            self.settings = {}
        def clear_all(self) -> str:
            for box in (self.inbox, self.sent):
                box.clear()
            return "cleared"
        def count_all(self) -> int:
            n = 0
            for box in (self.inbox, self.sent):
                n += len(box)
            return n
        def device_settings(self, setting: str, action: str, on: bool) -> str:
            table = {"wifi": (self._get_wifi, self._set_wifi)}
            if action == "set":
                _, setter = table[setting]
                return setter(on)
            getter, _ = table[setting]
            return getter()
        def show_setting(self, setting: str) -> str:
            table = {"wifi": (self._get_wifi, self._set_wifi)}
            getter, _ = table[setting]
            return getter()
        def _set_wifi(self, on: bool) -> str:
            self.settings["wifi"] = on
            return "ok"
        def _get_wifi(self) -> bool:
            return self.settings.get("wifi")
    """
    assert tools(source) == {"Phone.clear_all": True, "Phone.count_all": False, "Phone.device_settings": True,
                             "Phone.show_setting": False}


def test_an_object_a_held_service_hands_out_writes_when_it_sends_and_not_when_filled_or_read() -> None:
    source = """
    class SendMessage(BaseTool):
        def _run(self, body: str, to: str) -> str:
            mailbox = self.account.mailbox()
            message = mailbox.new_message()
            message.body = body
            message.to.add(to)
            message.send()
            return "sent"
    class SendEvent(BaseTool):
        def _run(self, subject: str) -> str:
            calendar = self.account.schedule().get_default_calendar()
            event = calendar.new_event()
            event.subject = subject
            event.save()
            return "saved"
    class SearchEmails(BaseTool):
        def _run(self, query: str) -> str:
            mailbox = self.account.mailbox()
            found = mailbox.get_messages(query=mailbox.q().search(query))
            out = []
            for message in found:
                out.append(message.subject)
            return str(out)
    class GetThread(BaseTool):
        def _run(self, thread_id: str) -> str:
            thread = self.api_resource.threads().get(id=thread_id).execute()
            thread["messages"].append({"trimmed": True})
            return str(thread)
    class ReadFile(BaseTool):
        def _run(self, name: str) -> str:
            path = self.get_relative_path(name)
            with path.open("r") as f:
                return f.read()
    """
    assert tools(source) == {"SendMessage._run": True, "SendEvent._run": True, "SearchEmails._run": False,
                             "GetThread._run": False, "ReadFile._run": False}
