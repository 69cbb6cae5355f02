"""Predicate bounds (issue 17, item 3): the four bombs the issue found are refused when the contract
loads and stopped within 5 s and 256 MiB when evaluated; and the sandbox's hard limits hold on
their own, for work the cost model does not count."""

from __future__ import annotations

import resource
import time
from pathlib import Path

import pytest
from toollint.contracts import sandbox
from toollint.contracts.host.predicate import PredicateBudgetError, PredicateTypeError, compile_predicate
from toollint.contracts.loader import parse_contract
from toollint.contracts.sandbox import Sandbox, constant_parts, cost_problem

from toollint.cli import main


def _squaring(levels: int, start: str = "2 ** 2000") -> str:
    inner = f"[{start}]"
    for i in range(levels):
        inner = f"[x{i} * x{i} for x{i} in {inner}]"
    return f"len({inner}) > 0"


BOMBS = {
    "round": "round(1, -3*10**7) == 0",  # 37 s in one call
    "squaring": _squaring(20),  # 12.8 s and 830 MB
    "repetition": "len([('a'*100000) for c in 'b'*20000]) > 0",  # 1.9 GB
    "str": "str(['a'*100000]*100000) == ''",  # until the OOM killer
}


def _rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def test_the_squaring_bomb_is_the_size_the_issue_measured() -> None:
    assert len(BOMBS["squaring"]) < 460 and BOMBS["squaring"].count(" for ") == 20


@pytest.mark.parametrize("name", sorted(BOMBS))
def test_each_bomb_is_stopped_within_5_s_and_256_mib(name: str) -> None:
    pred = compile_predicate(BOMBS[name])
    before = _rss_mib()
    began = time.monotonic()
    with pytest.raises(PredicateBudgetError):
        sandbox.evaluate(pred, {}, {}, {}, None)
    assert time.monotonic() - began < 5.0
    assert _rss_mib() - before < 64  # nothing was built in toollint's process (the sandbox caps its own)


@pytest.mark.parametrize("name", sorted(BOMBS))
def test_each_bomb_is_refused_when_its_contract_loads(tmp_path: Path, name: str) -> None:
    contract = tmp_path / f"{name}.yaml"
    contract.write_text(
        "tool: m:f\nbenchmark: b\nsource: {file: m.py}\nclauses:\n  - id: eff.bomb\n"
        f"    predicate: \"{BOMBS[name]}\"\n    provenance: {{tier: author-specified, inferred: true}}\n")
    _, errors = parse_contract(contract)
    assert [(e.code, e.line) for e in errors] == [("TL302", 6)]
    assert errors[0].message.startswith("eff.bomb: too costly to evaluate: `")


def test_contracts_check_reports_a_predicate_it_can_prove_too_costly(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "bomb.yaml").write_text(
        "tool: m:f\nbenchmark: b\nsource: {file: m.py}\nclauses:\n  - id: eff.bomb\n"
        "    predicate: args.x is None or round(1, -3*10**7) == 0\n"
        "    provenance: {tier: author-specified, inferred: true}\n")
    assert main(["contracts", "check", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "TL302" in out and "too costly to evaluate: `round(1, -3 * 10 ** 7) == 0`: round() to -30000000 " \
        "digits is too costly (cap 1000)" in out


def test_only_constant_parts_are_tried_at_load() -> None:
    assert constant_parts("post.x == 'a' and len([c for c in 'ab']) == 2 and [y for y in post.z] == []") == [
        "len([c for c in 'ab']) == 2"]
    assert (
        cost_problem("post.accounts.by(id=args.id).balance == pre.accounts.by(id=args.id).balance - 1")
        is None
    )
    assert constant_parts("post.x == -1") == []  # a negative literal computes nothing
    assert constant_parts("result == list('Hotel Names: ')") == []  # as small as its literal


def test_the_library_of_contracts_loads_without_starting_anything() -> None:
    from toollint.contracts.loader import bundled_library_dirs, load_contracts

    pool = sandbox.default_sandbox()
    started = pool.started
    contracts, errors = load_contracts(bundled_library_dirs())
    assert contracts and errors == []
    assert pool.started == started  # no bundled predicate has a constant part worth evaluating


# --- the hard limits, for work the cost model does not count ---------------------------------------------


def test_memory_the_cost_model_does_not_count_is_stopped_by_the_address_space_cap() -> None:
    # List displays inside a loop are not charged to the model's budget: 90k lists of 30 elements.
    pred = compile_predicate(f"len([[{', '.join(['0'] * 30)}] for c in 'x' * 90000]) > 0")
    tight = Sandbox(memory=16 << 20, workers=1)
    try:
        with pytest.raises(PredicateBudgetError, match="memory"):
            tight.evaluate(pred, {}, {}, {}, None)
        assert tight.evaluate(compile_predicate("1 + 1 == 2"), {}, {}, {}, None) is True  # a fresh worker
    finally:
        tight.close()
    roomy = Sandbox(workers=1)
    try:
        assert roomy.evaluate(pred, {}, {}, {}, None) is True  # within the default 256 MiB
    finally:
        roomy.close()


@pytest.mark.skipif(not Path("/proc/self/limits").exists(), reason="reads /proc")
def test_a_worker_runs_under_an_address_space_cap_256_mib_over_its_start_up_size() -> None:
    pool = Sandbox(workers=1)
    try:
        assert pool.evaluate(compile_predicate("1 + 1 == 2"), {}, {}, {}, None) is True
        (worker,) = pool._idle
        limits = Path(f"/proc/{worker.proc.pid}/limits").read_text()
        cap = int(
            next(line for line in limits.splitlines() if line.startswith("Max address space")).split()[3]
        )
        size = int(Path(f"/proc/{worker.proc.pid}/statm").read_text().split()[0]) * resource.getpagesize()
        assert sandbox.MEMORY_BUDGET == 256 << 20
        assert 0 < cap - size <= 256 << 20
    finally:
        pool.close()


def test_a_clause_slower_than_the_wall_clock_bound_is_killed_and_the_batch_goes_on() -> None:
    xs = {"xs": list(range(40000))}
    slow = compile_predicate("all(x in post.xs for x in post.xs)")  # ~seconds; the model's clock is 3 s
    quick = compile_predicate("len(post.xs) == 40000")
    short = Sandbox(seconds=1.0, workers=1)
    try:
        began = time.monotonic()
        outcomes = short.evaluate_many([quick, slow, quick], xs, xs, {}, None)
        assert time.monotonic() - began < 4.0
        assert outcomes[0] is True and outcomes[2] is True
        assert isinstance(outcomes[1], PredicateBudgetError) and "stopped after" in str(outcomes[1])
    finally:
        short.close()


def test_sandboxed_and_in_process_evaluation_agree() -> None:
    state = {"accounts": [{"id": i, "balance": float(i), "tags": ["a", "b"]} for i in range(10)]}
    sources = [
        "post.accounts.by(id=args.id).balance == args.b",
        "len(str(post.accounts)) > 100",
        "post.accounts[1:3] == pre.accounts[1:3]",
        "post.nope == 1",
        "sorted(keys(post)) == ['accounts']",
    ]
    preds = [compile_predicate(s) for s in sources]
    args = {"id": 3, "b": 3.0}
    sandboxed = sandbox.evaluate_many(preds, state, state, args, None)
    for pred, outcome in zip(preds, sandboxed):
        try:
            local: object = pred.evaluate(state, state, args, None)
        except PredicateTypeError as exc:
            local = exc
        assert type(outcome) is type(local) and str(outcome) == str(local)


def test_a_value_that_is_not_json_data_is_a_type_error() -> None:
    outcome = sandbox.evaluate_many(
        [compile_predicate("post.x == 1")], {}, {"x": object(), "a": 1, "b": 2, "c": 3}, {}, None
    )
    assert isinstance(outcome[0], PredicateTypeError) and "not JSON data" in str(outcome[0])


def test_a_sandbox_that_cannot_start_makes_every_clause_untestable_with_the_reason(tmp_path: Path) -> None:
    broken = Sandbox(python=str(tmp_path / "no-python"), workers=1)
    outcomes = broken.evaluate_many([compile_predicate("1 + 1 == 2")] * 2, {}, {}, {}, None)
    assert len(outcomes) == 2 and all(isinstance(o, PredicateTypeError) for o in outcomes)
    assert "the predicate sandbox could not start" in str(outcomes[0])
