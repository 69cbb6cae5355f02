"""No silent UNCHECKED on tau2 (issue 23, item 3), by the README's command with no configuration file:
`toollint check --confirm --python P <snapshot>/src/tau2/domains`, with `--confidence low` (README:
it adds the findings whose premise rests on a type alone, such as TL103 on suspend_line's `reason`).

- TL103 on `suspend_line`'s `reason`: the bundled contract has no clause for the argument, so the
  derived oracle made from the finding runs in the same pipeline; its verdict is the derived tier's
  (`verdict_oracle: derived`), counted on the derived line, never with the bundled contract's rows.
- TL105 on `cancel_reservation`'s `payment_methods`: the bundled airline contract leaves the field
  out on purpose (`left_out`), citing the policy's deferred refund (policy.md:152); the finding ends
  LEFT_OUT with that reason, not a derived VIOLATES.

The fast sample selects those two rules (one tau2 host per domain and oracle set); the whole run
(slow) also checks that every finding ends confirmed, refuted, or not tested with its reason. Both
skip where the snapshot or Python 3.12 is absent.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

POLICY_QUOTE = "The refund will go to original payment methods within 5 to 7 business days."
VERDICTS = ("VIOLATES", "FLAKY", "CONFORMS", "UNTESTABLE", "LEFT_OUT", "UNCHECKED")


def toollint(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "toollint", *args], capture_output=True, text=True,
                          timeout=1500, check=False, cwd=cwd)


def findings_of(proc: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    assert proc.returncode == 1, proc.stderr
    return json.loads(proc.stdout)  # type: ignore[no-any-return]


def the(findings: list[dict[str, Any]], code: str, subject: str) -> dict[str, Any]:
    """The properties of the one `code` finding about `subject` (its parameter or field)."""
    found = [f["properties"] for f in findings if f["code"] == code
             and subject in (f["properties"].get("param"), f["properties"].get("field"))]
    assert len(found) == 1, [f["message"] for f in findings if f["code"] == code]
    return found[0]


def assert_reason_is_derived(props: dict[str, Any]) -> None:
    assert props["verdict_oracle"] == "derived" and props["verdict_scope"] == "derived", props
    assert props["verdict"] == "VIOLATES", props  # `reason` is only logged: two calls leave one state
    assert props["clauses"] == ["arg.reason"]
    assert props["derived_because"] == "no clause of suspend_line.yaml tests reason"
    assert "verdict_detail" not in props  # the contract's UNCHECKED is no longer the verdict
    witness = json.loads(Path(props["witness"]).read_text())
    assert witness["clause"]["id"] == "arg.reason" and witness["clause"]["provenance"]["tier"] == "derived"


def assert_payment_methods_left_out(props: dict[str, Any]) -> None:
    assert (props["verdict"], props["verdict_reason"], props["clauses"]) == ("LEFT_OUT", "left_out", [])
    assert props["verdict_detail"].startswith(
        "not tested: the bundled contract cancel_reservation.yaml leaves agent_db.users[*].payment_methods "
        "out on purpose: the refund to the original payment method is deferred (5 to 7 business days)")
    assert props["left_out"]["surface"] == {
        "tier": "agent-visible", "kind": "template", "file": "../../data/tau2/domains/airline/policy.md",
        "line": 152, "quote": POLICY_QUOTE}
    assert "witness" not in props


def test_the_policy_the_contract_cites_says_the_refund_is_deferred(tau2_checkout: Path) -> None:
    policy = (tau2_checkout / "data" / "tau2" / "domains" / "airline" / "policy.md").read_text().splitlines()
    assert POLICY_QUOTE in policy[152 - 1]


@pytest.fixture(scope="module")
def selected(tau2_python: Path, tau2_checkout: Path,
             tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    cwd = tmp_path_factory.mktemp("tau2-selected")  # no pyproject.toml: nothing configured
    return findings_of(toollint(
        ["check", "--confirm", "--python", str(tau2_python), "--confidence", "low", "--select", "TL103,TL105",
         "--output-format", "json", str(tau2_checkout / "src" / "tau2" / "domains")], cwd))


def test_a_finding_the_bundled_contract_has_no_clause_for_ends_with_a_derived_verdict(
        selected: list[dict[str, Any]]) -> None:
    assert_reason_is_derived(the(selected, "TL103", "reason"))
    # The TL202 it confirms is the derived oracle's, counted apart from the bundled contract's rows.
    confirmed = [f["properties"] for f in selected if f["code"] == "TL202"]
    assert [(p["clause"], p["oracle"], p["tier"]) for p in confirmed] == [
        ("arg.reason", "derived", "derived")]


def test_a_field_the_bundled_contract_leaves_out_on_purpose_says_why(selected: list[dict[str, Any]]) -> None:
    assert_payment_methods_left_out(the(selected, "TL105", "db.users[*].payment_methods"))
    seats = the(selected, "TL105", "db.flights[*].dates[*].available_seats[*]")
    assert (seats["verdict"], seats["verdict_oracle"]) == ("VIOLATES", "authored")
    assert not any(f["properties"].get("clause", "").endswith("payment_methods") for f in selected)


@pytest.fixture(scope="module")
def whole(tau2_python: Path, tau2_checkout: Path,
          tmp_path_factory: pytest.TempPathFactory) -> subprocess.CompletedProcess[str]:
    cwd = tmp_path_factory.mktemp("tau2-whole")
    return toollint(["check", "--confirm", "--python", str(tau2_python), "--confidence", "low",
                     str(tau2_checkout / "src" / "tau2" / "domains")], cwd)


@pytest.mark.slow
def test_every_finding_ends_confirmed_refuted_or_not_tested_with_its_reason(
        whole: subprocess.CompletedProcess[str]) -> None:
    assert whole.returncode == 1, whole.stderr
    static = [line for line in whole.stdout.splitlines() if re.search(r": TL1\d\d \[", line)]
    # seven: TL102 refuel_data, two TL105 on cancel_reservation, three TL101 refusable writes, TL103 reason
    assert len(static) >= 7, whole.stdout
    ends = [re.search(r" \[(derived )?([A-Z_]+)(: (.+))?\]$", line) for line in static]
    assert all(ends), [line for line, end in zip(static, ends) if not end]
    for line, end in zip(static, ends):
        assert end is not None and end.group(2) in VERDICTS, line
        if end.group(2) in ("UNTESTABLE", "LEFT_OUT", "UNCHECKED"):
            assert end.group(4), f"not tested without a reason: {line}"
    reason = next(line for line in static if "`reason` of state-writing tool `suspend_line`" in line)
    assert " [derived VIOLATES: " in reason
    payment = next(line for line in static if "`db.users[*].payment_methods`" in line)
    assert payment.endswith(f'(../../data/tau2/domains/airline/policy.md:152: "{POLICY_QUOTE}")]')
    assert " [LEFT_OUT: not tested: the bundled contract cancel_reservation.yaml leaves " in payment
    # The bundled contracts' rows and the derived oracles' are counted on lines of their own.
    summary = [line for line in whole.stderr.splitlines() if line.startswith("confirm")]
    assert any(re.match(r"confirm: \d+ tool\(s\): ", line) for line in summary), summary
    assert any(re.match(r"confirm: derived oracles: \d+ tool\(s\): ", line) for line in summary), summary
