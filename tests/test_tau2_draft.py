"""The drafting aid reads tau2-style docstrings: every "Checks:" / "Requires" / "Raises ... if" item
becomes its own `pre.*` draft (issue 11, item 3), and the draft validates against the cited source."""

from __future__ import annotations

from pathlib import Path

import pytest
from toollint.contracts.draft import draft_contract, split_conditions
from toollint.contracts.loader import load_contract
from toollint.contracts.validator import ValidationOptions, validate

REFUEL = "tau2.domains.telecom.tools:TelecomTools.refuel_data"


def _pre(contract_text: str, tmp_path: Path) -> dict[str, tuple[str | None, str | None, int | None]]:
    path = tmp_path / "draft.yaml"
    path.write_text(contract_text)
    contract = load_contract(path)
    return {c.id: (c.provenance.quote, c.on_violation.raises if c.on_violation else None, c.provenance.line)
            for c in contract.clauses_of("pre", include_drafts=True)}


def test_refuel_data_checks_line_gives_two_preconditions(tau2_checkout: Path, tmp_path: Path) -> None:
    text = draft_contract(REFUEL, [tau2_checkout / "src"])
    pre = _pre(text, tmp_path)
    # "Checks: Line status must be Active, Customer owns the line." (tools.py:613) is two checks, each
    # declaring the docstring's one error type ("ValueError: If ... or if checks fail.").
    assert pre["pre.line_status_must_active_draft"] == ("Line status must be Active", "ValueError", 613)
    assert pre["pre.customer_owns_line_draft"] == ("Customer owns the line.", "ValueError", 613)
    # The Raises entry's two conditions are two drafts too.
    assert pre["pre.customer_line_or_plan_draft"] == ("customer, line, or plan not found", "ValueError", 625)
    assert pre["pre.checks_fail_draft"] == ("checks fail.", "ValueError", 625)
    # "Logic:" is an effect, not a check and not the checks line folded into one effect.
    contract = load_contract(tmp_path / "draft.yaml")
    effects = [c.provenance.quote for c in contract.clauses_of("eff", include_drafts=True)]
    assert "Adds data to the line and charges customer based on the plan's refueling rate." in effects
    assert not any("Checks" in (q or "") for q in effects)
    # Every quote is verbatim at its line in the pinned tree.
    assert validate([tmp_path / "draft.yaml"],
                    options=ValidationOptions(package_dirs={"tau2": tau2_checkout / "src" / "tau2"})) == []


def test_a_checks_section_ends_at_the_next_label(tau2_checkout: Path, tmp_path: Path) -> None:
    # send_payment_request: a bulleted "Checks:" section, then "Logic:" and a "Warning:" paragraph.
    text = draft_contract(
        "tau2.domains.telecom.tools:TelecomTools.send_payment_request", [tau2_checkout / "src"]
    )
    pre = _pre(text, tmp_path)
    quotes = [q for q, _, _ in pre.values()]
    assert quotes[:3] == ["Customer exists", "Bill exists and belongs to the customer",
                          "No other bills are already awaiting payment for this customer"]
    assert not any("Warning" in (q or "") or "Always check" in (q or "") or "Sets bill" in (q or "")
                   for q in quotes)


def test_requires_and_raises_if_sentences(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "tools.py").write_text(
        "class T:\n"
        "    def close(self, account_id: str) -> str:\n"
        '        """Close an account.\n'
        "        Requires the account to be open; the balance must be zero.\n"
        "        Raises KeyError if the account does not exist, or if it is frozen.\n"
        "        Note: closing twice is not checked.\n"
        '        """\n'
        '        return "Closed"\n')
    pre = _pre(draft_contract("pkg.tools:T.close", [tmp_path]), tmp_path)
    assert [(q, r) for q, r, _ in pre.values()] == [
        ("the account to be open", "KeyError"), ("the balance must be zero.", "KeyError"),
        ("the account does not exist", "KeyError"), ("it is frozen.", "KeyError")]
    assert validate([tmp_path / "draft.yaml"], options=ValidationOptions(package_dirs={"pkg": pkg})) == []


@pytest.mark.parametrize(
    "text, parts",
    [
        (
            "Line status must be Active, Customer owns the line.",
            ["Line status must be Active", "Customer owns the line."],
        ),
        (
            "If customer, line, or plan not found, or if checks fail.",
            ["customer, line, or plan not found", "checks fail."],
        ),
        (
            "Line status must be Suspended or Pending Activation.",
            ["Line status must be Suspended or Pending Activation."],
        ),
        ("a; b. C", ["a", "b", "C"]),
    ],
)
def test_split_conditions(text: str, parts: list[str]) -> None:
    assert split_conditions(text) == parts
    assert all(p in text for p in parts)  # verbatim, so each is a valid provenance quote


def test_drafts_name_the_tau2_adapter_and_its_domain_and_toolkit(tau2_checkout: Path, tmp_path: Path) -> None:
    from toollint.profiles import find_profile

    agent = tmp_path / "agent.yaml"
    agent.write_text(draft_contract(REFUEL, [tau2_checkout / "src"]))
    assert load_contract(agent).adapter == {"name": "tau2", "domain": "telecom", "toolkit": "agent"}
    user = tmp_path / "user.yaml"
    user.write_text(draft_contract("tau2.domains.telecom.user_tools:TelecomUserTools.toggle_airplane_mode",
                                   [tau2_checkout / "src"]))
    assert load_contract(user).adapter == {"name": "tau2", "domain": "telecom", "toolkit": "user"}
    # ... an adapter that exists: --confirm starts it (it once said "adapter tau2 failed to start").
    profile = find_profile("tau2")
    assert (
        profile is not None and profile.adapter_file is not None and profile.adapter_file.name == "adapter.py"
    )
