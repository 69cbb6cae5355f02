"""The static main path on real benchmark code: agentdojo==0.1.35's v1 tools (installed from PyPI
into a venv of its own by the `agentdojo_src` fixture; never committed here)."""

from __future__ import annotations

from pathlib import Path

from toollint.engine import lint_paths
from toollint.settings import Settings

# (file, tool, code, parameter) of every finding toollint must report, and nothing else. The count
# is asserted too, so any change in precision shows up here.
EXPECTED = {
    ("banking_client.py", "update_scheduled_transaction", "TL101", None),
    ("banking_client.py", "update_scheduled_transaction", "TL104", "recipient"),
    ("banking_client.py", "update_scheduled_transaction", "TL104", "amount"),
    ("banking_client.py", "update_scheduled_transaction", "TL104", "subject"),
    ("banking_client.py", "update_scheduled_transaction", "TL104", "date"),
    ("banking_client.py", "update_scheduled_transaction", "TL104", "recurring"),
    ("user_account.py", "update_user_info", "TL104", "first_name"),
    ("user_account.py", "update_user_info", "TL104", "last_name"),
    ("user_account.py", "update_user_info", "TL104", "street"),
    ("user_account.py", "update_user_info", "TL104", "city"),
    ("travel_booking_client.py", "reserve_car_rental", "TL103", "end_time"),
    ("slack.py", "invite_user_to_slack", "TL103", "user_email"),
    # Not in METHOD.md's table, but real: download_file never uses its `file_name` argument.
    ("web.py", "download_file", "TL103", "file_name"),
}


# The premise of each TL104 site, from the evidence AgentDojo itself gives: only `recurring` has it
# (`recurring: false` in banking's environment.yaml), as the paper says ("only recurring admits a
# legal falsy value"); the others rest on their `str`/`float` type alone, so they are low confidence:
# reported at `--confidence low`, left out by default, never given a safe fix.
HIGH = {"recurring"}


def test_agentdojo_v1_tools_findings(agentdojo_src: Path) -> None:
    tools_dir = agentdojo_src / "default_suites" / "v1" / "tools"
    result = lint_paths([str(tools_dir)], Settings(confidence="low"))
    findings = [f for r in result.files for f in r.reported]
    got = {(Path(f.path).name, f.tool, f.code, f.properties.get("param")) for f in findings}
    assert got == EXPECTED
    assert len(findings) == len(EXPECTED) == 13
    low = {f.properties["param"] for f in findings if f.confidence.name == "LOW"}
    assert low == {p for _, _, code, p in EXPECTED if code == "TL104"} - HIGH
    recurring = next(f for f in findings if f.properties.get("param") == "recurring")
    assert recurring.evidence is not None
    assert "environment.yaml has recurring=False" in recurring.evidence.premises[-1].describe()
    assert all(f.fix is None or not f.fix.safe for f in findings if f.confidence.name == "LOW")


def test_agentdojo_v1_tools_default_confidence_reports_what_the_evidence_holds(agentdojo_src: Path) -> None:
    tools_dir = agentdojo_src / "default_suites" / "v1" / "tools"
    findings = [f for r in lint_paths([str(tools_dir)], Settings()).files for f in r.reported]
    got = {(Path(f.path).name, f.tool, f.code, f.properties.get("param")) for f in findings}
    assert got == {e for e in EXPECTED if e[2] != "TL104" or e[3] in HIGH}


def test_agentdojo_whole_package_has_no_internal_errors(agentdojo_src: Path) -> None:
    result = lint_paths([str(agentdojo_src)], Settings(select=["TL"]))
    codes = [f.code for r in result.files for f in r.findings]
    assert "TL904" not in codes and "TL901" not in codes
