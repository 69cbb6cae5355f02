"""AgentDojo (agentdojo==0.1.35 from PyPI) with the bundled library switched off: the derived oracles
confirm every violation the library confirms on a tool the five rules flag, and refute none of
them. The comparison is bench/derived.py's, both columns made in one run. Every suite is the slow
part (about 20 s); banking's tool module alone is the fast sample of the default run."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench" / "derived.py"


def _bench() -> Any:
    spec = importlib.util.spec_from_file_location("bench_derived", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def banking(agentdojo_python: Path, agentdojo_src: Path, tmp_path_factory: pytest.TempPathFactory) -> Any:
    module = agentdojo_src / "default_suites" / "v1" / "tools" / "banking_client.py"
    return _bench().compare([module], agentdojo_python, tmp_path_factory.mktemp("derived-banking"))


@pytest.fixture(scope="module")
def comparison(agentdojo_python: Path, tmp_path_factory: pytest.TempPathFactory) -> Any:
    return _bench().agentdojo_comparison(agentdojo_python, tmp_path_factory.mktemp("derived-agentdojo"))


def test_banking_every_library_violation_is_confirmed_and_none_refuted(banking: Any) -> None:
    confirmed = sorted(r.key for r in banking.library_confirmed)
    assert confirmed == [
        "TL101 update_scheduled_transaction reply",
        "TL104 update_scheduled_transaction amount",
        "TL104 update_scheduled_transaction recurring",
        "TL104 update_scheduled_transaction subject",
    ]
    # amount=0.0 and subject="" are legal by the library's authors (falsy_legal: true) but, to the
    # derived oracles, by their annotations alone: not sent as legal input, they stay untested, saying so.
    assert sorted(r.key for r in banking.derived_also) == [
        "TL101 update_scheduled_transaction reply",
        "TL104 update_scheduled_transaction recurring",  # False: environment.yaml holds recurring: false
    ]
    untested = {r.key: r for r in banking.library_confirmed if r.derived != "VIOLATES"}
    assert sorted(untested) == ["TL104 update_scheduled_transaction amount",
                                "TL104 update_scheduled_transaction subject"]
    assert all(r.derived == "UNTESTABLE" and r.detail.startswith("legality_unknown")
               for r in untested.values())
    assert banking.refuted == []
    # date and recipient too ("" is no legal date or IBAN; the library says falsy_legal: false)
    assert banking.derived_rows["UNTESTABLE"] == 4
    assert "update_scheduled_transaction eff.recurring_written TL202" in banking.confirmed["derived"]
    assert "update_scheduled_transaction eff.amount_written TL202" not in banking.confirmed["derived"]


@pytest.mark.slow
def test_every_library_confirmed_violation_is_confirmed_by_the_derived_oracles(comparison: Any) -> None:
    confirmed = sorted(r.key for r in comparison.library_confirmed)
    assert confirmed == [
        "TL101 update_scheduled_transaction reply",
        "TL103 invite_user_to_slack user_email",
        "TL103 reserve_car_rental end_time",
        "TL104 update_scheduled_transaction amount",
        "TL104 update_scheduled_transaction recurring",
        "TL104 update_scheduled_transaction subject",
        "TL104 update_user_info city",
        "TL104 update_user_info first_name",
        "TL104 update_user_info last_name",
        "TL104 update_user_info street",
    ]
    # the TL104s whose "" or 0.0 is legal by its annotation alone are left untested (legality_unknown)
    assert sorted(r.key for r in comparison.derived_also) == [
        "TL101 update_scheduled_transaction reply",
        "TL103 invite_user_to_slack user_email",
        "TL103 reserve_car_rental end_time",
        "TL104 update_scheduled_transaction recurring",
    ]
    assert all(r.derived == "UNTESTABLE" and r.detail.startswith("legality_unknown")
               for r in comparison.library_confirmed if r.derived != "VIOLATES")


@pytest.mark.slow
def test_no_finding_is_refuted_and_what_the_derived_oracles_add_is_listed(comparison: Any) -> None:
    assert comparison.refuted == []
    # "" for a date or an IBAN, which the library declares no legal value (falsy_legal: false), is legal to
    # the rule by its annotation alone: the derived oracles no longer send it, and confirm nothing the
    # library does not
    assert comparison.derived_only == []
    # download_file is a tool by its signature, but no suite registers it: no host can run it.
    download = next(r for r in comparison.rows if r.tool == "download_file")
    assert (download.library, download.derived) == ("no contract", "UNCHECKED")
    # It is said so, not that one suite (the host's) lacks it (once: "not among the tools ... for
    # v1.2.2/banking").
    assert (
        "registered by no suite of agentdojo" in download.detail and "v1.2.2/banking" not in download.detail
    )


@pytest.mark.slow
def test_both_columns_count_their_own_rows(comparison: Any) -> None:
    assert comparison.library_rows["VIOLATES"] == 17
    assert comparison.derived_rows["VIOLATES"] >= 4 and comparison.derived_rows["UNTESTABLE"] == 8
    derived = comparison.confirmed["derived"]
    assert all(code.endswith(("TL202", "TL203", "TL201", "TL204", "TL205")) for code in derived)
    assert "update_scheduled_transaction eff.recurring_written TL202" in derived


def test_the_tracer_takes_derived_violations_like_authored_ones(banking: Any, agentdojo_src: Path) -> None:
    """The same defect, `recurring=False` dropped by update_scheduled_transaction, traced from the library's
    clause and from the derived one: the same graded tasks are exposed, counted apart by oracle."""
    from toollint.profiles.agentdojo.tasks import agentdojo_tasks
    from toollint.trace.ledger import trace_findings

    tasks = agentdojo_tasks(agentdojo_src, suites=("banking",))
    library = next(f for f in banking.findings["library"] if f.properties["clause"] == "eff.recurring_set")
    derived = next(f for f in banking.findings["derived"]
                   if f.properties["clause"] == "eff.recurring_written")
    ledger = trace_findings([library, derived], tasks)
    assert ledger.problems == []
    by_oracle = ledger.totals_by_oracle()
    assert by_oracle["derived"]["defects"] == by_oracle["authored"]["defects"] == 1
    assert by_oracle["derived"]["exposed"] == by_oracle["authored"]["exposed"] > 0
    assert derived.properties["trace"]["fields"] == ["bank_account.scheduled_transactions[*].recurring"]
    assert {d.oracle for d in ledger.defects} == {"derived", "authored"}
