"""Reader contracts for AgentDojo travel's hotel, car-rental, flight and user-information tools
(`toollint/profiles/agentdojo/contracts/readers/`), checked on the real benchmark in agentdojo 0.1.35's venv.

These tools only read, so every clause but the frame is about the reply: each `eff.*` clause computes
the exact reply from the pre-state and the arguments. The checker's generated plan for a reader with
only required arguments and no `arg.*` clause is one happy call, with one value per argument. For the
seven tools whose argument is a `list[str]` of names (`hotel_names`, `company_name`) the probe
generator at commit 647e44d harvested no list value and called them with `[]`, on which every reply
is `{}`; so this file also calls those seven with harvested non-empty name lists through the same
host and scorer, and shows each effect clause fails on replies a broken tool would give.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from toollint.contracts.loader import load_contracts
from toollint.contracts.model import Contract
from toollint.dynamic.checker import CONFORMS, ProbeRun, Scorer, run_probe, tool_tags
from toollint.dynamic.confirm import ConfirmRun, run_confirm, worker_spec
from toollint.dynamic.probes import Probe
from toollint.dynamic.protocol import Worker

from toollint.profiles.agentdojo import CONTRACTS as AGENTDOJO_CONTRACTS
from toollint.settings import Settings

TOOLS = (
    "get_all_hotels_in_city", "get_hotels_address", "get_hotels_prices", "get_rating_reviews_for_hotels",
    "get_flight_information", "get_user_information", "get_all_car_rental_companies_in_city",
    "get_car_fuel_options", "get_car_price_per_day", "get_car_rental_address", "get_car_types_available",
    "get_rating_reviews_for_car_rental",
)
EFFECT = {
    "get_all_hotels_in_city": "eff.names_the_city_hotels",
    "get_hotels_address": "eff.address_of_named_hotel",
    "get_hotels_prices": "eff.price_range_of_named_hotels",
    "get_rating_reviews_for_hotels": "eff.rating_reviews_of_named_hotels",
    "get_flight_information": "eff.flights_from_departure_to_arrival",
    "get_user_information": "eff.returns_user_information",
    "get_all_car_rental_companies_in_city": "eff.names_the_city_companies",
    "get_car_fuel_options": "eff.fuel_options_of_named_companies",
    "get_car_price_per_day": "eff.price_per_day_of_named_companies",
    "get_car_rental_address": "eff.address_of_named_companies",
    "get_car_types_available": "eff.car_types_of_named_companies",
    "get_rating_reviews_for_car_rental": "eff.rating_reviews_of_named_companies",
}
# The seven tools that take a list of names: (argument, collection in the travel environment).
LIST_TOOLS = {
    "get_hotels_prices": ("hotel_names", "hotels", "hotel_list"),
    "get_rating_reviews_for_hotels": ("hotel_names", "hotels", "hotel_list"),
    "get_car_fuel_options": ("company_name", "car_rental", "company_list"),
    "get_car_price_per_day": ("company_name", "car_rental", "company_list"),
    "get_car_rental_address": ("company_name", "car_rental", "company_list"),
    "get_car_types_available": ("company_name", "car_rental", "company_list"),
    "get_rating_reviews_for_car_rental": ("company_name", "car_rental", "company_list"),
}


@pytest.fixture(scope="module")
def contracts() -> dict[str, Contract]:
    loaded, _errors = load_contracts([AGENTDOJO_CONTRACTS / "readers"])
    # Other engineers' reader files share the directory; only ours are judged here, and they must load.
    ours = {c.tool_name: c for c in loaded if c.tool_name in TOOLS}
    assert sorted(ours) == sorted(TOOLS)
    assert not [e for e in _errors if Path(e.path).stem in TOOLS]
    return ours


@pytest.fixture(scope="module")
def run(contracts: dict[str, Contract], agentdojo_python: Path,
        tmp_path_factory: pytest.TempPathFactory) -> ConfirmRun:
    return run_confirm(list(contracts.values()), Settings(), python=str(agentdojo_python),
                       witness_dir=tmp_path_factory.mktemp("witnesses"))


def test_shape(contracts: dict[str, Contract]) -> None:
    for name, c in contracts.items():
        assert c.adapter["suite"] == "travel" and c.adapter["suites"] == ["travel"], name
        assert c.adapter["frame"] == [], name  # a reader may write nothing: the implicit write-set is empty
        kinds = [cl.kind for cl in c.counted_clauses]
        assert "frame" in kinds and "arg" not in kinds and "success" in kinds, name
        assert [cl.id for cl in c.clauses_of("eff")] == [EFFECT[name]], name
        assert not c.clauses_of("pre"), name  # none of these tools raises or documents a refusal
        for cl in c.clauses_of("eff"):
            assert cl.provenance.tier == "agent-visible" and cl.provenance.kind == "docstring", (name, cl.id)


def test_exact_verdict_table(run: ConfirmRun) -> None:
    table = {r.tool: (r.verdict, {row.clause_id: row.code for row in r.violations}) for r in run.reports}
    assert table == {tool: ("CONFORMS", {}) for tool in TOOLS}
    untestable = [
        (r.tool, row.clause_id) for r in run.reports for row in r.clause_rows if row.verdict == "UNTESTABLE"
    ]
    assert untestable == []
    for r in run.reports:
        assert r.error is None, r.tool
        # The implicit empty write-set and the reset check were scored too.
        implicit = {row.clause_id: row.verdict for row in r.rows if row.implicit}
        assert implicit == {"frame.write_set": CONFORMS, "reset": CONFORMS}, r.tool


def test_generated_probes_select_something_where_they_can(run: ConfirmRun) -> None:
    """The scalar-argument readers were called with harvested values that select records, so their
    exact-reply clauses were scored on a non-trivial reply."""
    happy = {r.tool: next(p for p in r.runs if p.probe.kind == "happy") for r in run.reports}
    hotels = happy["get_all_hotels_in_city"]
    city = hotels.args["city"]
    assert city in {h["city"] for h in hotels.pre["hotels"]["hotel_list"]}
    assert (
        hotels.result["value"].count("\n")
        == sum(h["city"] == city for h in hotels.pre["hotels"]["hotel_list"])
        > 0
    )
    flights = happy["get_flight_information"]
    assert flights.result["value"] != ""
    assert happy["get_hotels_address"].result["value"] != {}


# --- the list-argument tools, with non-empty name lists ----------------------------------------------


@pytest.fixture(scope="module")
def list_runs(contracts: dict[str, Contract], agentdojo_python: Path) -> Iterator[dict[str, ProbeRun]]:
    """Each list tool called with [first name, third name, a name no record has], harvested from the
    pristine snapshot, through the same agentdojo host the checker uses."""
    first = contracts["get_hotels_prices"]
    worker = Worker(worker_spec(first, {}, str(agentdojo_python)))
    try:
        hello = worker.start()
        pristine = worker.request("pristine")
        tags = {
            "volatile": list(hello.get("volatile_paths") or []),
            "derived": list(hello.get("derived_paths") or []),
        }
        out = {}
        for tool, (arg, part, coll) in LIST_TOOLS.items():
            records = pristine["state"][part][coll]
            names = [records[0]["name"], records[2]["name"], "toollint-absent"]
            probe = Probe("happy", {arg: names}, tool=tool)
            out[tool] = run_probe(worker, probe, pristine["state"], pristine["state_hash"],
                                  tool_tags(contracts[tool], tags))
        yield out
    finally:
        worker.close()


def _meta(run: ConfirmRun, tool: str) -> dict[str, Any]:
    return next(r.meta for r in run.reports if r.tool == tool)


def test_list_tools_conform_on_named_records(contracts: dict[str, Contract], run: ConfirmRun,
                                             list_runs: dict[str, ProbeRun]) -> None:
    for tool, probe_run in list_runs.items():
        assert probe_run.status == "ok", tool
        assert len(probe_run.result["value"]) == 2, tool  # the two named records, not the absent one
        rows = Scorer(contracts[tool], _meta(run, tool)).score([probe_run])
        verdicts = {row.clause_id: row.verdict for row in rows}
        assert set(verdicts.values()) == {CONFORMS}, (tool, verdicts)
        assert EFFECT[tool] in verdicts


def _broken_replies(
    tool: str, reply: Any, args: dict[str, Any], pre: dict[str, Any]
) -> list[tuple[str, Any]]:
    """Replies a tool would give with an argument ignored, a filter dropped or a field mixed up."""
    out: list[tuple[str, Any]] = []
    if isinstance(reply, dict) and reply:
        key = next(iter(reply))
        out.append(("an entry dropped", {k: v for k, v in reply.items() if k != key}))
        out.append(("the argument ignored", {}))
        other = copy.deepcopy(reply)
        other[key] = next(v for k, v in reply.items() if k != key) if len(reply) > 1 else "x"
        out.append(("another record's value", other))
        extra = copy.deepcopy(reply)
        extra["toollint-absent"] = reply[key]
        out.append(("an unnamed record included", extra))
    if isinstance(reply, str):
        # Everything up to the newline before the last line: the last record left out.
        out.append(("the last line dropped", reply[: reply.rfind("\n", 0, len(reply) - 1) + 1]))
        out.append(("empty", ""))
    if tool == "get_hotels_prices":  # min and max swapped
        h = next(h for h in pre["hotels"]["hotel_list"] if h["name"] in args["hotel_names"])
        swapped = dict(reply)
        swapped[h["name"]] = f"Price range: {h['price_max']} - {h['price_min']}"
        out.append(("min and max swapped", swapped))
    return out


def test_effect_clauses_fail_on_broken_replies(contracts: dict[str, Contract], run: ConfirmRun,
                                               list_runs: dict[str, ProbeRun]) -> None:
    runs = {r.tool: next(p for p in r.runs if p.probe.kind == "happy") for r in run.reports} | list_runs
    for tool, good in runs.items():
        clause = contracts[tool].clause(EFFECT[tool])
        assert clause is not None and clause.predicate is not None
        pred = clause.predicate
        reply = good.result["value"]
        assert pred.evaluate(good.pre, good.post, good.args, reply) is True, tool
        broken = _broken_replies(tool, reply, good.args, good.pre)
        assert broken, tool
        for what, bad in broken:
            assert pred.evaluate(good.pre, good.post, good.args, bad) is False, (tool, what)
