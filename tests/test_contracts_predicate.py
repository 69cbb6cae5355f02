"""The safe predicate grammar: what compiles, what is refused (with position), what is bounded."""

from __future__ import annotations

import time
from typing import Any

import pytest
from toollint.contracts.host.predicate import (
    MAX_SECONDS,
    ForbiddenPredicate,
    PredicateBudgetError,
    PredicateTypeError,
    compile_predicate,
)

STATE: dict[str, Any] = {
    "bank_account": {
        "balance": 100.0,
        "scheduled_transactions": [
            {"id": 6, "amount": 50.0, "recurring": True, "subject": "Gym"},
            {"id": 7, "amount": 1100.0, "recurring": False, "subject": "Rent"},
        ],
    },
    "inbox": {"emails": {"0": {"id_": "0", "read": False}, "1": {"id_": "1", "read": True}}},
}


def holds(source: str, pre: Any = STATE, post: Any = STATE, args: Any = None, result: Any = None) -> bool:
    return compile_predicate(source).evaluate(pre, post, args or {}, result)


# --- evaluation ---------------------------------------------------------------------------------------


def test_attribute_access_reads_json_keys_and_by_finds_the_keyed_element() -> None:
    assert holds("post.bank_account.scheduled_transactions.by(id=args.id).amount == 1100.0", args={"id": 7})
    assert not holds("post.bank_account.scheduled_transactions.by(id=args.id).amount == 0", args={"id": 7})
    assert holds("post.bank_account.scheduled_transactions.by(id=99) is None")


def test_roots_are_visible_inside_generator_expressions() -> None:
    # Generator expressions are nested scopes; roots must be globals for this to work.
    assert holds("all(t.amount > 0 for t in post.bank_account.scheduled_transactions if t.id != args.id)",
                 args={"id": 6})


def test_helpers_rows_keys_get_one_iso_timestamp() -> None:
    assert holds("sorted(keys(post.inbox.emails)) == ['0', '1']")
    assert holds("len([m for m in rows(post.inbox.emails) if not m.read]) == 1")
    assert holds("get(post.inbox.emails, '9', 'none') == 'none'")
    assert holds("one([m for m in rows(post.inbox.emails) if m.read]).id_ == '1'")
    assert holds("iso(args.t) == iso('2024-05-01T10:00:00')", args={"t": "2024-05-01 10:00"})
    assert holds(
        "timestamp(args.b) - timestamp(args.a) == 7200",
        args={"a": "2024-05-01 10:00", "b": "2024-05-01 12:00"},
    )


def test_args_not_passed_read_as_none() -> None:
    assert holds("args.amount is None and args['recurring'] is None", args={"id": 7})


def test_dict_data_keys_win_over_method_names() -> None:
    assert holds("post.order.items == [1, 2]", post={"order": {"items": [1, 2]}})


def test_snapshot_equality_compares_data() -> None:
    assert holds("post.bank_account == pre.bank_account")
    changed = {**STATE, "bank_account": {**STATE["bank_account"], "balance": 1.0}}
    assert not holds("post.bank_account == pre.bank_account", post=changed)


@pytest.mark.parametrize(
    "source, message",
    [
        ("post.bank_account.balance < 'x'", "not supported"),
        ("post.bank_account.missing == 1", "no field 'missing'"),
        ("post.bank_account.scheduled_transactions[5].id == 1", "out of range"),
        ("post.bank_account.balance", "not true/false"),
        ("post.bank_account.balance.real == 100", "cannot read field 'real' of float"),
        ("one(post.bank_account.scheduled_transactions).id == 6", "exactly one"),
        ("1 / 0 == 1", "ZeroDivisionError"),
    ],
)
def test_type_errors_during_evaluation_raise_predicate_type_error(source: str, message: str) -> None:
    with pytest.raises(PredicateTypeError, match=message):
        holds(source)


def test_snapshots_are_read_only() -> None:
    pred = compile_predicate("post.bank_account.balance == 100.0")
    data = {"bank_account": {"balance": 100.0}}
    assert pred.evaluate(data, data, {}, None)
    assert data == {"bank_account": {"balance": 100.0}}


# --- paths ----------------------------------------------------------------------------------------------


def test_paths_are_canonical_and_roots_stripped() -> None:
    pred = compile_predicate(
        "post.bank_account.scheduled_transactions.by(id=args.id).amount == args.amount "
        "and all(m.read for m in rows(post.inbox.emails)) and len(pre.bank_account.transactions) > 0"
    )
    assert pred.paths == frozenset({
        "bank_account.scheduled_transactions[*].amount",
        "bank_account.scheduled_transactions[*].id",
        "inbox.emails",
        "inbox.emails[*].read",
        "bank_account.transactions",
    })
    assert pred.args_read == frozenset({"id", "amount"})
    assert not pred.reads_result


def test_keys_iteration_does_not_invent_element_paths() -> None:
    pred = compile_predicate(
        "all(post.slack.user_inbox[u] == pre.slack.user_inbox[u] for u in keys(pre.slack.user_inbox))"
    )
    assert pred.paths == frozenset({"slack.user_inbox", "slack.user_inbox[*]"})


def test_a_filtered_element_keeps_its_field_path() -> None:
    pred = compile_predicate(
        "one([e for e in rows(post.calendar.events) if e.id_ not in keys(pre.calendar.events)])"
        ".title == args.title"
    )
    assert {"calendar.events[*].title", "calendar.events[*].id_"} <= pred.paths
    assert pred.args_read == frozenset({"title"})


def test_result_reads_are_recorded() -> None:
    assert compile_predicate("result.message == 'ok'").reads_result


# --- refused at load time ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "source, construct",
    [
        ("pre.__class__", "underscore attribute"),
        ("().__class__.__bases__[0].__subclasses__()", "underscore attribute"),
        ("post.bank_account._data", "underscore attribute"),
        ('"{0.__class__}".format(pre)', "method call .format()"),
        ('"{0.__class__}".format_map(pre)', "method call .format_map()"),
        ("f'{pre}' == ''", "f-string"),
        ("(lambda: 1)() == 1", "lambda"),
        ("sorted(post.x, key=lambda t: t) == []", "lambda"),
        ("__import__('os').system('true') == 0", "underscore name"),
        ("(x := 1) == 1", "walrus (:=)"),
        ("open('/etc/passwd') == 1", "call open()"),
        ("getattr(pre, 'x') == 1", "call getattr()"),
        ("eval('1') == 1", "call eval()"),
        ("type(pre) == 1", "call type()"),
        ("pre.x.upper() == 'A'", "method call .upper()"),
        ("undefined_name == 1", "free name"),
        ("[y for y in pre.a if z]", "free name"),
        ("[*pre.a] == []", "starred expression"),
        ("1 << 100000 > 0", "shift operator"),
        ("b'x' == 1", "constant"),
        ("len(pre.a, key=1) == 1", "keyword argument"),
        ("pre.a.by(1) == 1", "by() arguments"),
        ("[pre for pre in post.a] == []", "shadowing"),
    ],
)
def test_forbidden_constructs_are_refused_and_named(source: str, construct: str) -> None:
    with pytest.raises(ForbiddenPredicate) as info:
        compile_predicate(source, filename="c.yaml", line=12, col=16)
    assert info.value.construct == construct
    assert info.value.filename == "c.yaml"
    assert info.value.line == 12
    assert info.value.col >= 16


def test_error_position_is_relative_to_the_contract_file() -> None:
    with pytest.raises(ForbiddenPredicate) as info:
        compile_predicate("post.a == 1 and\n  pre.__dict__ == 2", filename="c.yaml", line=20, col=7)
    assert (info.value.line, info.value.col) == (21, 3)
    assert str(info.value).startswith("c.yaml:21:3:")


def test_size_limits() -> None:
    with pytest.raises(ForbiddenPredicate, match="characters long"):
        compile_predicate("1 == 1 and " * 300 + "True")
    with pytest.raises(ForbiddenPredicate, match="syntax nodes"):
        compile_predicate(" + ".join(["1"] * 300) + " > 0")


# --- bounded at run time ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "source",
    [
        "10 ** 10 ** 10 > 0",
        "2 ** 100000 > 0",
        "2.0 ** 100000.0 > 0",
        "len('a' * 10 ** 9) > 0",
        "len([0] * 10 ** 8) > 0",
        "len(10 ** 8 * 'ab') > 0",
        "sum(1 for a in 'x' * 1000 for b in 'y' * 1000 for c in 'z' * 1000) > 0",
        "len([[a, b] for a in 'x' * 100000 for b in 'y' * 100000]) > 0",
    ],
)
def test_work_bombs_are_bounded(source: str) -> None:
    pred = compile_predicate(source)
    start = time.perf_counter()
    with pytest.raises(PredicateBudgetError):
        pred.evaluate({}, {}, {}, None)
    # Bounded by the evaluator's own caps, not by how busy the machine is: the wall-clock cap is the
    # outer bound even when the step budget is slow to exhaust on a loaded machine.
    assert time.perf_counter() - start < 2 * MAX_SECONDS


def test_percent_formatting_is_refused_at_run_time() -> None:
    # "%999999999d" % 1 would allocate a gigabyte.
    with pytest.raises(PredicateTypeError, match="formatting"):
        holds("'%999999999d' % 1 == ''")


def test_small_arithmetic_is_unaffected_by_the_bounds() -> None:
    assert holds("2 ** 10 == 1024 and 'ab' * 2 == 'abab' and [0] * 3 == [0, 0, 0] and 7 % 3 == 1")


def test_slow_evaluations_stop_at_the_wall_clock_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    from toollint.contracts.host import predicate

    monkeypatch.setattr(predicate, "MAX_SECONDS", 0.05)
    big = {"xs": list(range(5000))}
    pred = compile_predicate("all(x in post.xs for x in post.xs)")
    start = time.perf_counter()
    with pytest.raises(PredicateBudgetError, match="longer than 0.05 s"):
        pred.evaluate(big, big, {}, None)
    assert time.perf_counter() - start < 1.0


def test_a_slice_of_a_field_reads_that_field_not_its_elements() -> None:
    pred = compile_predicate("[e.id_ for e in rows(pre.calendar.events) if e.start_time[:10] == args.day]")
    assert "calendar.events[*].start_time" in pred.paths
    assert not any(p.endswith("start_time[*]") for p in pred.paths)
