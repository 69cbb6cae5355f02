"""The tau2 host adapter, spoken to through the host protocol in tau2's own interpreter: any domain's
environment built by the benchmark's own constructors, agent and user toolkits, both DBs in the
snapshot, calls through the live `get_response` path with the raw return kept, `sync_tools()` handled,
the clock, uuid and random frozen, and bad options or a missing dependency said in one line."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from toollint.dynamic.protocol import Worker, WorkerError, WorkerSpec

from toollint.profiles.tau2.locate import checkout_of, domains, host_options

ADAPTER = str(Path(__file__).resolve().parents[1] / "toollint" / "profiles" / "tau2" / "host" / "adapter.py")
TASK = "[mobile_data_issue]data_usage_exceeded[PERSONA:Easy]"  # sets a phone number and 15.1 GB used


def spec(python: Path, root: Path, **options: Any) -> WorkerSpec:
    return WorkerSpec(ADAPTER, {"root": str(root), **options}, python=str(python))


@pytest.fixture(scope="module")
def telecom(tau2_python: Path, tau2_checkout: Path) -> Iterator[Worker]:
    with Worker(spec(tau2_python, tau2_checkout, domain="telecom"), deadline=120) as worker:
        yield worker


def test_hello_describes_the_agent_toolkit(telecom: Worker) -> None:
    hello = telecom.hello
    tools = {t["name"]: t for t in hello["tools"]}
    assert hello["adapter"] == "tau2" and hello["variant"] == "telecom/agent"
    assert hello["benchmark_version"] == "1.0.1"
    assert {"refuel_data", "get_customer_by_id"} <= set(tools)
    assert (tools["refuel_data"]["type"], tools["refuel_data"]["mutates_state"]) == ("write", True)
    assert tools["get_customer_by_id"]["mutates_state"] is False
    # The schema the agent is given, from tau2's own Tool wrapper.
    assert tools["refuel_data"]["parameters"]["properties"]["gb_amount"]["type"] == "number"
    assert tools["refuel_data"]["file"].endswith("src/tau2/domains/telecom/tools.py")
    assert "/user_db/surroundings/mobile_data_usage_exceeded" in hello["derived_paths"]
    assert hello["shims"] == ["uuid4", "random", "clock"]
    assert hello["capabilities"]["reset"] in ("copy", "rebuild")
    schema = hello["state_schema"]
    assert set(schema["properties"]) == {"agent_db", "user_db"} and "Line" in schema["$defs"]
    # Gold actions of the domain's tasks are offered as known-legal calls.
    assert {"customer_id", "line_id", "gb_amount"} <= set(tools["refuel_data"]["examples"][0])


def test_snapshot_holds_both_databases(telecom: Worker) -> None:
    state = telecom.request("pristine")["state"]
    assert set(state) == {"agent_db", "user_db"}
    assert {l["line_id"] for l in state["agent_db"]["lines"]} >= {"L1003", "L1009"}
    assert state["user_db"]["device"]["airplane_mode"] is False


def test_a_call_keeps_the_raw_return_and_shows_what_the_agent_saw(telecom: Worker) -> None:
    out = telecom.request("probe", tool="refuel_data", args={"customer_id": "C1003", "line_id": "L1009",
                                                             "gb_amount": 2.0})
    result = out["result"]
    assert result["status"] == "ok"
    assert result["value"] == {"message": "Successfully added 2.0 GB of data for line L1009 for $4.00",
                               "new_data_refueling_gb": 2.0, "charge": 4.0}
    assert '"charge": "4.0"' in result["agent_view"]  # tau2's to_json_str renders numbers as strings
    assert out["reset_hash"] == out["pristine_hash"]
    # Frozen in the benchmark's own modules: the new bill's id (uuid4) is the same every run.
    again = telecom.request("probe", tool="refuel_data", args={"customer_id": "C1003", "line_id": "L1009",
                                                               "gb_amount": 2.0})
    assert [op["path"] for op in again["diff"]] == [op["path"] for op in out["diff"]]
    assert any(op["path"].startswith("/agent_db/bills/{bill_id=B") for op in out["diff"])


def test_a_refusal_is_the_error_the_agent_sees_with_its_type(telecom: Worker) -> None:
    result = telecom.request("call", tool="refuel_data",
                             args={"customer_id": "C1001", "line_id": "L1009", "gb_amount": 2.0})
    assert result["status"] == "tool_error" and result["error_type"] == "ValueError"
    assert result["agent_view"] == "Error: Line L1009 not found for customer C1001"
    bad = telecom.request("call", tool="refuel_data", args={"line": "L1"})
    assert bad["status"] == "validation_error" and bad["error_type"] == "TypeError"
    missing = telecom.request("call", tool="no_such_tool", args={})
    assert missing["status"] == "validation_error" and missing["error_type"] == "ToolNotFound"


def test_a_task_conditioned_build_is_synced_before_the_pre_snapshot(
    tau2_python: Path, tau2_checkout: Path
) -> None:
    with Worker(spec(tau2_python, tau2_checkout, domain="telecom", task=TASK), deadline=120) as worker:
        pre = worker.request("pristine")["state"]
        assert pre["user_db"]["surroundings"]["phone_number"] == "555-123-2002"
        assert pre["user_db"]["surroundings"]["mobile_data_usage_exceeded"] is True  # 15.1 GB of 15
        tags = {"derived": worker.hello["derived_paths"]}
        # A read changes nothing: the pre-state was already synced.
        read = worker.request("probe", tool="get_customer_by_id", args={"customer_id": "C1001"}, tags=tags)
        assert read["diff"] == []
        # Refuelling the exceeded line lifts the limit; sync_tools() records it in the user's phone, a
        # derived path, never counted as the tool's own effect.
        refuel = worker.request("probe", tool="refuel_data", tags=tags,
                                args={"customer_id": "C1001", "line_id": "L1002", "gb_amount": 2.0})
        derived = {op["path"]: op for op in refuel["diff"] if "derived" in op.get("tags", [])}
        assert derived["/user_db/surroundings/mobile_data_usage_exceeded"]["after"] is False


def test_the_user_toolkit_and_the_mock_domain(tau2_python: Path, tau2_checkout: Path) -> None:
    with Worker(spec(tau2_python, tau2_checkout, domain="mock", toolkit="user"), deadline=120) as worker:
        assert worker.hello["variant"] == "mock/user"
        assert {t["requestor"] for t in worker.hello["tools"]} == {"user"}
        out = worker.request("probe", tool="dismiss_notification", args={"notification_id": "notif_1"})
        assert out["result"]["status"] == "ok"
        assert [op["path"] for op in out["diff"]] == ["/user_db/notifications/notif_1/status"]


def test_a_domain_whose_dependency_is_missing_says_which(tau2_python: Path, tau2_checkout: Path) -> None:
    worker = Worker(spec(tau2_python, tau2_checkout, domain="banking_knowledge"), deadline=120)
    try:
        worker.start()
    except WorkerError as exc:
        message = str(exc)
    else:  # rank_bm25 installed in this venv: the domain builds
        assert worker.request("pristine")["state"]["agent_db"]
        worker.close()
        return
    finally:
        worker.close()
    assert "banking_knowledge needs the package 'rank_bm25' (tau2's optional 'knowledge' extra)" in message
    assert "\n" not in message and "Traceback" not in message


@pytest.mark.parametrize(
    "options, message",
    [
        # The domains are the checkout's own (src/tau2/domains/*/environment.py).
        ({}, "tau2 adapter needs domain = one of airline, banking_knowledge, mock, retail, telecom, got ''"),
        ({"domain": "bank"}, "got 'bank'"),
        ({"domain": "telecom", "toolkit": "admin"}, "toolkit must be agent or user, got 'admin'"),
        ({"domain": "telecom", "reset": "fast"}, "reset must be auto, rebuild or copy, got 'fast'"),
        (
            {"domain": "telecom", "root": "/nonexistent"},
            "/nonexistent is not a tau2-bench checkout (no src/tau2)",
        ),
    ],
)
def test_bad_options_are_one_line(
    tau2_python: Path, tau2_checkout: Path, options: dict[str, Any], message: str
) -> None:
    opts = {"root": str(tau2_checkout), **options}
    worker = Worker(WorkerSpec(ADAPTER, opts, python=str(tau2_python)), deadline=120)
    with pytest.raises(WorkerError) as info:
        worker.start()
    worker.close()
    assert message in str(info.value) and "\n" not in str(info.value)


def test_the_checkout_is_found_from_the_linted_files(tau2_checkout: Path, tmp_path: Path) -> None:
    tools = tau2_checkout / "src" / "tau2" / "domains" / "telecom" / "tools.py"
    assert checkout_of(tools) == tau2_checkout
    assert host_options([tmp_path, tools.parent]) == {"root": str(tau2_checkout)}
    assert host_options([tmp_path]) == {}
    assert set(domains(tau2_checkout)) >= {"airline", "retail", "telecom", "mock", "banking_knowledge"}
    # A folder named tau2 is not a checkout without tau2's pyproject.toml.
    (tmp_path / "src" / "tau2").mkdir(parents=True)
    (tmp_path / "src" / "tau2" / "__init__.py").write_text("")
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "other"\n')
    assert checkout_of(tmp_path / "src" / "tau2") is None
