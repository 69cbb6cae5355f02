"""AgentDojo travel's eight restaurant readers against their contracts (`agentdojo/readers/`), on the real
benchmark (agentdojo 0.1.35, hosted in its own venv).

Two runs: the dynamic checker's own (`run_confirm`), whose probe plan for the seven tools taking
`restaurant_names: list[str]` calls them with one restaurant, two, the other one and none (the names
harvested from `restaurants.restaurant_list[*].name`); and hand-made calls through the checker's own
host and scorer, which reach the corners the plan does not. Together they find two disagreements with
the docstrings: The second run finds two disagreements with the docstrings:

- `get_dietary_restrictions_for_all_restaurants` matches names as substrings of
  `", ".join(restaurant_names)`, so asking for "Le Baratin Express" answers for "Le Baratin", a
  restaurant that was not asked for (its seven siblings test list membership);
- `get_cuisine_type_for_restaurants` says the cuisine "could be: Italian, Chinese, Indian, Japanese";
  the data holds French, Israeli, British and Asian Fusion restaurants (and user tasks ask for French
  and Israeli cuisine).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from toollint.contracts.loader import load_contracts
from toollint.contracts.model import Contract
from toollint.dynamic.checker import Scorer, run_probe
from toollint.dynamic.confirm import ConfirmRun, run_confirm, worker_spec
from toollint.dynamic.probes import Probe
from toollint.dynamic.protocol import Worker

from toollint.profiles.agentdojo import CONTRACTS as AGENTDOJO_CONTRACTS
from toollint.settings import Settings

READERS = AGENTDOJO_CONTRACTS / "readers"
BY_NAMES = ("check_restaurant_opening_hours", "get_contact_information_for_restaurants",
            "get_cuisine_type_for_restaurants", "get_dietary_restrictions_for_all_restaurants",
            "get_price_for_restaurants", "get_rating_reviews_for_restaurants", "get_restaurants_address")
TOOLS = (*BY_NAMES, "get_all_restaurants_in_city")
# The effect clause that states the whole reply of each by-name reader, and the record field it reports.
REPLY_CLAUSE = {
    "check_restaurant_opening_hours": ("eff.hours_of_given", "operating_hours"),
    "get_contact_information_for_restaurants": ("eff.contacts_of_given", "contact_information"),
    "get_cuisine_type_for_restaurants": ("eff.cuisines_of_given", "cuisine_type"),
    "get_dietary_restrictions_for_all_restaurants": ("eff.restrictions_of_given", "dietary_restrictions"),
    "get_price_for_restaurants": ("eff.prices_of_given", "price_per_person"),
    "get_restaurants_address": ("eff.addresses_of_given", "address"),
}


@pytest.fixture(scope="module")
def contracts() -> dict[str, Contract]:
    loaded, errors = load_contracts([READERS / f"{tool}.yaml" for tool in TOOLS])
    assert errors == []
    return {c.tool_name: c for c in loaded}


@pytest.fixture(scope="module")
def run(contracts: dict[str, Contract], agentdojo_python: Path,
        tmp_path_factory: pytest.TempPathFactory) -> ConfirmRun:
    return run_confirm(list(contracts.values()), Settings(), python=str(agentdojo_python),
                       witness_dir=tmp_path_factory.mktemp("witnesses"))


def test_every_contract_has_a_frame_clause_no_arg_clause_and_an_empty_write_set(
        contracts: dict[str, Contract]) -> None:
    assert sorted(contracts) == sorted(TOOLS)
    for tool, c in contracts.items():
        kinds = [cl.kind for cl in c.clauses]
        assert "frame" in kinds and "arg" not in kinds, tool
        assert any(cl.id == "frame.nothing_changed" for cl in c.clauses), tool
        assert c.adapter["frame"] == [] and c.adapter["suites"] == ["travel"], tool
        assert c.success is not None and not c.success.biconditional, tool


def test_exact_verdict_table_of_the_checkers_own_probes(run: ConfirmRun) -> None:
    table = {r.tool: (r.verdict, {row.clause_id: row.code for row in r.violations}) for r in run.reports}
    assert table == {**{tool: ("CONFORMS", {}) for tool in TOOLS},
                     # French and Israeli restaurants, where the docstring lists four other cuisines.
                     "get_cuisine_type_for_restaurants": ("VIOLATES", {"eff.cuisine_documented": "TL203"})}
    untestable = [
        (r.tool, row.clause_id) for r in run.reports for row in r.clause_rows if row.verdict == "UNTESTABLE"
    ]
    assert untestable == []
    # What those verdicts rest on: real restaurant names, one and two at a time, and the empty list;
    # every city the data has, and the empty one.
    calls = {r.tool: [p.probe.args for p in r.runs] for r in run.reports}
    names = {r["name"] for r in run.reports[0].runs[0].pre["restaurants"]["restaurant_list"]}
    for tool in BY_NAMES:
        asked = [c["restaurant_names"] for c in calls[tool]]
        assert [] in asked and any(len(a) == 2 for a in asked) and set().union(*map(set, asked)) <= names
    assert {c["city"] for c in calls["get_all_restaurants_in_city"]} >= {"Paris", "London", ""}


# --- calls that name restaurants ---------------------------------------------------------------------


class Host:
    """A warm travel host: calls a reader and scores its contract with the checker's own scorer."""

    def __init__(self, worker: Worker, contracts: dict[str, Contract]) -> None:
        self.worker = worker
        self.contracts = contracts
        self.tools = {t["name"]: t for t in worker.hello["tools"]}
        pristine = worker.request("pristine")
        self.state, self.hash = pristine["state"], pristine["state_hash"]
        self.restaurants: list[dict[str, Any]] = self.state["restaurants"]["restaurant_list"]

    def call(self, tool: str, args: dict[str, Any]) -> Any:
        run = run_probe(
            self.worker, Probe("happy", args, tool=tool), self.state, self.hash, {}, want_view=False
        )
        assert run.status == "ok", run.result
        return run

    def verdicts(self, tool: str, calls: list[dict[str, Any]]) -> dict[str, str]:
        rows = Scorer(self.contracts[tool], self.tools[tool]).score([self.call(tool, a) for a in calls])
        return {
            row.clause_id: row.verdict + (f" {row.code}" if row.code else "")
            for row in rows
            if not row.implicit
        }


@pytest.fixture(scope="module")
def host(contracts: dict[str, Contract], agentdojo_python: Path) -> Iterator[Host]:
    spec = worker_spec(contracts["get_restaurants_address"], {}, python=str(agentdojo_python))
    with Worker(spec) as worker:
        yield Host(worker, contracts)


def _named_calls(host: Host) -> list[dict[str, Any]]:
    rl = host.restaurants
    paris = [r["name"] for r in rl if r["city"] == "Paris"]
    others = [r["name"] for r in rl if r["city"] != "Paris"]
    assert paris and others
    return [
        {"restaurant_names": [r["name"] for r in rl]},  # every restaurant
        {"restaurant_names": [paris[1], others[-1], "No Such Restaurant"]},  # two cities and a missing name
        {"restaurant_names": [paris[0] + " Express"]},  # no such restaurant; its name contains paris[0]'s
    ]


def test_named_calls_conform_except_the_two_docstring_disagreements(host: Host) -> None:
    calls = _named_calls(host)
    table = {tool: host.verdicts(tool, calls) for tool in BY_NAMES}
    ok = "CONFORMS"
    assert table == {
        "check_restaurant_opening_hours": {
            "eff.hours_of_given": ok,
            "frame.nothing_changed": ok,
            "success": ok,
        },
        "get_contact_information_for_restaurants": {
            "eff.contacts_of_given": ok,
            "frame.nothing_changed": ok,
            "success": ok,
        },
        # The data has French, Israeli, British and Asian Fusion cuisines; the docstring lists four others.
        "get_cuisine_type_for_restaurants": {
            "eff.cuisines_of_given": ok,
            "eff.cuisine_documented": "VIOLATES TL203",
            "frame.nothing_changed": ok,
            "success": ok,
        },
        # `restaurant.name in ", ".join(restaurant_names)`: "X Express" answers for X, which was not
        # asked for.
        "get_dietary_restrictions_for_all_restaurants": {
            "eff.restrictions_of_given": "VIOLATES TL203",
            "frame.nothing_changed": ok,
            "success": ok,
        },
        "get_price_for_restaurants": {"eff.prices_of_given": ok, "frame.nothing_changed": ok, "success": ok},
        "get_rating_reviews_for_restaurants": {
            "eff.given_restaurants": ok,
            "eff.rating_and_reviews": ok,
            "frame.nothing_changed": ok,
            "success": ok,
        },
        "get_restaurants_address": {"eff.addresses_of_given": ok, "frame.nothing_changed": ok, "success": ok},
    }


def test_dietary_restrictions_answer_for_a_restaurant_not_asked_for(host: Host) -> None:
    name = next(r["name"] for r in host.restaurants if r["city"] == "Paris")
    run = host.call("get_dietary_restrictions_for_all_restaurants", {"restaurant_names": [name + " Express"]})
    assert list(run.result["value"]) == [name]
    # The siblings answer the same question with nothing.
    assert (
        host.call("get_cuisine_type_for_restaurants", {"restaurant_names": [name + " Express"]}).result[
            "value"
        ]
        == {}
    )


def test_city_listing_conforms_for_every_city_and_an_unknown_one(host: Host) -> None:
    cities = sorted({r["city"] for r in host.restaurants})
    assert len(cities) >= 2
    verdicts = host.verdicts("get_all_restaurants_in_city", [{"city": c} for c in [*cities, "Atlantis"]])
    assert verdicts == {"eff.restaurants_of_city": "CONFORMS", "frame.nothing_changed": "CONFORMS",
                        "success": "CONFORMS"}


# --- the clauses tell a wrong reply from the right one ------------------------------------------------


def _holds(contract: Contract, clause_id: str, pre: Any, args: dict[str, Any], result: Any) -> bool:
    clause = next(c for c in contract.clauses if c.id == clause_id)
    assert clause.predicate is not None
    return bool(clause.predicate.evaluate(pre, pre, args, result))


@pytest.mark.parametrize("tool", sorted(REPLY_CLAUSE))
def test_reply_clause_rejects_a_dropped_argument_and_wrong_records(host: Host, tool: str) -> None:
    contract, (clause, fld) = host.contracts[tool], REPLY_CLAUSE[tool]
    a, b, c = host.restaurants[0], host.restaurants[1], host.restaurants[-1]
    args = {"restaurant_names": [a["name"], c["name"]]}
    real = host.call(tool, args).result["value"]
    assert real == {a["name"]: a[fld], c["name"]: c[fld]}
    assert _holds(contract, clause, host.state, args, real)
    wrong = [
        {},  # `restaurant_names` replaced by [] (the arg-constant mutant)
        {a["name"]: a[fld]},  # one asked-for restaurant dropped
        {**real, b["name"]: b[fld]},  # one not asked for added
        {a["name"]: b[fld], c["name"]: c[fld]},  # another restaurant's value
    ]
    assert a[fld] != b[fld]
    assert [_holds(contract, clause, host.state, args, w) for w in wrong] == [False] * len(wrong)


def test_rating_reviews_clauses_reject_wrong_replies(host: Host) -> None:
    tool = "get_rating_reviews_for_restaurants"
    contract = host.contracts[tool]
    a, c = host.restaurants[0], host.restaurants[-1]
    args = {"restaurant_names": [a["name"], c["name"]]}
    real = host.call(tool, args).result["value"]
    assert sorted(real) == sorted([a["name"], c["name"]]) and len(a["reviews"]) >= 2
    both = ("eff.given_restaurants", "eff.rating_and_reviews")
    assert all(_holds(contract, cl, host.state, args, real) for cl in both)
    assert not _holds(contract, "eff.given_restaurants", host.state, args, {})
    assert not _holds(contract, "eff.given_restaurants", host.state, args, {a["name"]: real[a["name"]]})
    text = real[a["name"]]
    tampered = [
        text[: text.rindex("\n")],  # last review dropped
        text.replace(f"Rating: {a['rating']}", "Rating: 0.0"),  # wrong rating
        text + "\nA review nobody wrote",  # a review added
        real[c["name"]],  # another restaurant's rating and reviews
    ]
    assert [
        _holds(contract, "eff.rating_and_reviews", host.state, args, {**real, a["name"]: t}) for t in tampered
    ] == [False] * len(tampered)


def test_city_clause_rejects_an_ignored_city_and_a_wrong_list(host: Host) -> None:
    tool = "get_all_restaurants_in_city"
    contract = host.contracts[tool]
    paris, london = {"city": "Paris"}, {"city": "London"}
    real = host.call(tool, paris).result["value"]
    head = "Restaurant in Paris: "
    names = [r["name"] for r in host.restaurants if r["city"] == "Paris"]
    elsewhere = next(r["name"] for r in host.restaurants if r["city"] != "Paris")
    assert real == head + "\n".join(names) + "\n" and len(names) >= 2
    assert _holds(contract, "eff.restaurants_of_city", host.state, paris, real)
    wrong = [
        head + "\n",  # `city` replaced by a constant in the filter (the arg-constant mutant)
        head + "\n".join(names[1:]) + "\n",  # one restaurant left out
        real + elsewhere + "\n",  # a restaurant of another city added
        head + "\n".join([*names[:-1], names[-1] + "!"]) + "\n",  # a name misspelt
        "Restaurants in Paris: " + "\n".join(names) + "\n",  # another header
    ]
    assert [_holds(contract, "eff.restaurants_of_city", host.state, paris, w) for w in wrong] == [
        False
    ] * len(wrong)
    # Order is not promised: the same names reversed are as good.
    assert _holds(
        contract, "eff.restaurants_of_city", host.state, paris, head + "\n".join(reversed(names)) + "\n"
    )
    assert not _holds(contract, "eff.restaurants_of_city", host.state, london, real)
