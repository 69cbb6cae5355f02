"""Costs with a ceiling (issue 28, item 5): a default memory cap on benchmark hosts, a per-run
predicate budget beside the per-clause bound, and witness bindings linear in the number of records.
(The bindings' timings are figures in bench/robustness.py; here the work is counted, not timed.)"""

from __future__ import annotations

import gc
import time
from pathlib import Path
from typing import Any

import pytest
from toollint.contracts import bindings as bindings_module
from toollint.contracts.host.predicate import PredicateBudgetError, compile_predicate
from toollint.contracts.sandbox import SLOW_SECONDS, WALL_SECONDS, Sandbox
from toollint.dynamic.confirm import confirm_limits, default_max_memory
from toollint.dynamic.protocol import Worker, WorkerSpec

from toollint.config import ConfigError
from toollint.settings import ConfirmSettings, Settings

HOSTILE = Path(__file__).parent / "fixtures" / "hostile_host" / "adapter_hostile.py"


# --- a default memory cap ----------------------------------------------------------------------------


def test_hosts_get_a_memory_cap_by_default_and_unlimited_lifts_it() -> None:
    assert confirm_limits(Settings())[2] == default_max_memory()
    assert 4 << 30 <= default_max_memory() <= 8 << 30
    assert confirm_limits(Settings(confirm=ConfirmSettings(max_memory="unlimited")))[2] is None
    assert confirm_limits(Settings(confirm=ConfirmSettings(max_memory="2 GiB")))[2] == 2 << 30


def test_a_bad_max_memory_is_still_a_configuration_error(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.toollint.confirm]\nmax_memory = \"lots\"\n")
    from toollint.config import resolve_settings

    with pytest.raises(ConfigError, match="max_memory"):
        resolve_settings([tmp_path])


@pytest.mark.skipif(not Path("/proc/self/limits").exists(), reason="needs /proc")
def test_a_host_started_with_the_default_cap_runs_under_it() -> None:
    """Read from the kernel, not by allocating: a regression must not take the machine's memory. (Past
    the cap, the allocation is one clean `memory_limit` line: test_reliability_host.py, at 512 MiB.)"""
    spec = WorkerSpec(str(HOSTILE), {})
    spec.max_memory = confirm_limits(Settings())[2]
    with Worker(spec, deadline=30) as w:
        assert w._proc is not None
        limits = Path(f"/proc/{w._proc.pid}/limits").read_text()
    soft = next(line for line in limits.splitlines() if line.startswith("Max address space")).split()[3]
    assert int(soft) == default_max_memory()


def test_confirm_starts_its_hosts_with_the_default_cap(tmp_path: Path) -> None:
    from toollint.contracts.loader import load_contracts
    from toollint.dynamic.confirm import run_confirm

    bench = Path(__file__).parent / "fixtures" / "dynamic_bench"
    found, _ = load_contracts([bench / "contracts" / "set_balance_truthy.yaml"])
    settings = Settings(
        confirm=ConfirmSettings(adapter="toolkit", factory="bank:make_bank", sys_path=[str(bench)])
    )
    run = run_confirm(found, settings, witness_dir=tmp_path)
    assert {r.spec.max_memory for r in run.reports if r.spec is not None} == {default_max_memory()}


# --- the per-run predicate budget ------------------------------------------------------------------------

SLOW = ("all(x in post.xs for x in post.xs)",  # ~3.2 s each: the cost model's own clock stops it at 3 s
        "all(x in post.xs for x in post.xs) or True",
        "all(x in post.xs for x in post.xs) and True")


def _probes(pool: Sandbox, sources: tuple[str, ...], probes: int = 5) -> tuple[float, list[list[Any]]]:
    """Evaluate the slow clauses and a quick one on `probes` runs, as the checker would; (seconds,
    outcomes)."""
    xs = {"xs": list(range(40000))}
    predicates = [compile_predicate(s) for s in sources] + [compile_predicate("len(post.xs) == 40000")]
    began = time.monotonic()
    outcomes = [pool.evaluate_many(predicates, xs, {"xs": list(xs["xs"])}, {}, None) for _ in range(probes)]
    return time.monotonic() - began, outcomes


def test_three_slow_clauses_run_within_twice_the_per_clause_bound() -> None:
    """Three clauses at ~3.2 s each on five probes took 48 s; now the run's budget stops them."""
    pool = Sandbox(workers=1)
    try:
        took, outcomes = _probes(pool, SLOW)
    finally:
        pool.close()
    assert took <= 2 * WALL_SECONDS, f"{took:.1f} s"
    assert all(o[-1] is True for o in outcomes)  # the quick clause is evaluated on every probe
    last = outcomes[-1][:3]  # UNTESTABLE for the rest of the run, saying why
    assert all(
        isinstance(o, PredicateBudgetError) and "the run's predicate budget" in str(o) for o in last
    ), last


def test_a_clause_stopped_twice_is_not_evaluated_again() -> None:
    pool = Sandbox(seconds=1.0, workers=1, run_seconds=1000.0)  # a budget that never runs out
    try:
        took, outcomes = _probes(pool, SLOW[:1], probes=4)
    finally:
        pool.close()
    stops = [str(o[0]) for o in outcomes]
    assert [("stopped after" in s) for s in stops[:2]] == [True, True], stops
    assert all("was stopped by a time bound 2 times in this run" in s for s in stops[2:]), stops
    assert took < 2 * 1.0 + 4 * 1.0  # two stops, then nothing (worker restarts aside)


def test_fast_clauses_are_never_charged() -> None:
    pool = Sandbox(workers=1, run_seconds=0.0)  # no budget at all for slow clauses
    try:
        _took, outcomes = _probes(pool, ("len(post.xs) > 0",), probes=3)
    finally:
        pool.close()
    assert all(o == [True, True] for o in outcomes)
    assert SLOW_SECONDS <= 1.0


# --- bindings linear in the number of records -------------------------------------------------------------


@pytest.mark.parametrize("source", [
    "all(a.balance >= 0 for a in post.accounts)",
    "[a.balance for a in post.accounts] == [a.balance for a in pre.accounts]",
])
def test_bindings_over_10000_records_look_for_the_identity_field_once_per_list(
        source: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each element's path needs its list's identity field; found once per list, not per element
    (which scanned the whole list each time: 172 s at 10,000 records)."""
    calls: list[int] = []
    original_identity = bindings_module.identity_field

    def counting_identity(before: Any, after: Any, name: str | None = None) -> str | None:
        calls.append(len(before))
        return original_identity(before, after, name)

    monkeypatch.setattr(bindings_module, "identity_field", counting_identity)
    n = 10_000
    state = {"accounts": [{"id": f"A{i}", "owner_id": i, "balance": float(i)} for i in range(n)]}
    post = {"accounts": [dict(a) for a in state["accounts"]]}
    found = bindings_module.bindings(compile_predicate(source), state, post, {"id": "A5"})
    assert found[0] == {"expr": "pre.accounts{id=A5}.balance", "value": 5.0}, found  # the record args name
    assert len(calls) <= 2, f"{len(calls)} identity scans of {n} records"


@pytest.mark.parametrize("collector_on", [True, False])
def test_bindings_keep_the_cycle_collector_off_their_paths_and_restore_it(collector_on: bool) -> None:
    """The trace keeps tens of thousands of paths alive; a collection walks them again each time
    (10x the records cost 13.6x the time). None runs during bindings, and the collector is left as
    it was found, also when the predicate stops on a type error."""
    n = 10_000
    pre = {"accounts": [{"id": f"A{i}", "owner_id": i, "balance": float(i)} for i in range(n)]}
    post = {"accounts": [dict(a) for a in pre["accounts"]]}
    collections: list[int] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collections.append(info["generation"])

    predicates = [compile_predicate(source) for source in (
        "[a.balance for a in post.accounts] == [a.balance for a in pre.accounts]",
        "all(a.balance >= 0 for a in post.accounts) and post.accounts[0].nope == 1")]
    was_on = gc.isenabled()
    (gc.enable if collector_on else gc.disable)()
    try:
        for predicate in predicates:
            gc.callbacks.append(count)  # only while bindings run
            try:
                found = bindings_module.bindings(predicate, pre, post, {"id": "A5"})
            finally:
                gc.callbacks.remove(count)
            assert found[0]["expr"] == "pre.accounts{id=A5}.balance", found
            assert gc.isenabled() is collector_on
    finally:
        (gc.enable if was_on else gc.disable)()
    assert collections == []


def test_resolving_every_record_of_a_long_list_builds_one_map() -> None:
    """The pre-state value of each post read: one map per list, not a scan per read."""
    n = 10_000
    pre = {"accounts": [{"id": f"A{i}", "balance": float(i)} for i in range(n)]}
    memo: dict[tuple[int, str], dict[Any, Any]] = {}
    for i in reversed(range(n)):
        steps = (("attr", "accounts"), ("elem", "id", f"A{i}", n - 1 - i), ("attr", "balance"))
        assert bindings_module.resolve(pre, steps, memo) == (True, float(i))
    assert len(memo) == 1 and len(next(iter(memo.values()))) == n
    assert bindings_module.resolve(pre, (("attr", "accounts"), ("elem", "id", "nope", 0)), memo) == (
        False,
        None,
    )
