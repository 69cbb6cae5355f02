"""The keyed diff, canonical hash and path globs shared by the host and the parent."""

from __future__ import annotations

from toollint.dynamic.host.jsondiff import diff, path_matches, state_hash


def test_records_are_keyed_by_id_and_diffs_read_like_grader_paths() -> None:
    before = {"lines": [{"line_id": "L1002", "gb": 0.0}, {"line_id": "L1009", "gb": 0.0}]}
    after = {"lines": [{"line_id": "L1002", "gb": 0.0}, {"line_id": "L1009", "gb": 2.0}]}
    assert diff(before, after) == [
        {
            "op": "replace",
            "path": "/lines/{line_id=L1009}/gb",
            "ptr": "/lines/1/gb",
            "before": 0.0,
            "after": 2.0,
        }
    ]


def test_insertions_do_not_shift_keyed_paths() -> None:
    before = {"t": [{"id": 1, "a": 1}, {"id": 2, "a": 2}]}
    after = {"t": [{"id": 0, "a": 0}, {"id": 1, "a": 1}, {"id": 2, "a": 3}]}
    ops = diff(before, after)
    assert [(o["op"], o["path"]) for o in ops] == [("add", "/t/{id=0}"), ("replace", "/t/{id=2}/a")]
    assert ops[1]["ptr"] == "/t/2/a"  # the RFC 6901 pointer into the new list


def test_id_must_be_unique_within_each_side_not_the_union() -> None:
    # `x_id` repeats on the left, so the key falls back to `id` (unique on each side) ...
    before = [{"id": 1, "x_id": 5}, {"id": 2, "x_id": 5}]
    after = [{"id": 1, "x_id": 5}, {"id": 2, "x_id": 6}]
    assert diff(before, after)[0]["path"] == "/{id=2}/x_id"
    # ... and with no unique identity field, positions are used.
    assert diff([{"v": 1}, {"v": 1}], [{"v": 1}, {"v": 2}])[0]["path"] == "/1/v"


def test_type_changes_and_removals_are_ops() -> None:
    assert diff({"a": 1}, {"a": 1.5})[0]["op"] == "replace"
    assert diff({"a": True}, {"a": 1}) != []  # True == 1 in Python, but not the same JSON value
    assert diff({"a": 1, "b": 2}, {"a": 1}) == [
        {"op": "remove", "path": "/b", "ptr": "/b", "before": 2, "after": None}
    ]
    assert diff({"s": "x"}, {"s": "x"}) == []


def test_tags_mark_volatile_paths() -> None:
    ops = diff({"f": {"t": 1, "n": 1}}, {"f": {"t": 2, "n": 2}}, {"volatile": ["/f/t"]})
    assert [(o["path"], o.get("tags")) for o in ops] == [("/f/n", None), ("/f/t", ["volatile"])]


def test_globs_cover_subtrees_and_segments() -> None:
    assert path_matches("/bank_account", "/bank_account/scheduled_transactions/{id=7}/amount")
    assert not path_matches("/bank_account", "/user_account/city")
    assert path_matches("/lines/*/status", "/lines/{line_id=L1}/status")
    assert path_matches("/**/status", "/a/b/c/status")
    assert not path_matches("/lines/*/status", "/lines/{line_id=L1}/plan")


def test_hash_is_canonical() -> None:
    assert state_hash({"a": 1, "b": [1, 2]}) == state_hash({"b": [1, 2], "a": 1})
    assert state_hash({"a": 1}) != state_hash({"a": 1.5})
    assert state_hash({}).startswith("sha256:")
