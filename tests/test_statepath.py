"""`StatePath`: the one parser of a state path's text, which the derived oracles, `--confirm`'s clause
matching and the tracer share."""

from __future__ import annotations

import pytest

from toollint.analysis import ELEMENT, StatePath


@pytest.mark.parametrize(
    "text, segments",
    [
        ("db.lines[*].status", ("db", "lines", ELEMENT, "status")),
        (
            "flights[*].dates[*].available_seats[*]",
            ("flights", ELEMENT, "dates", ELEMENT, "available_seats", ELEMENT),
        ),
        ("_CACHE", ("_CACHE",)),
        ("lines.{}.data_balance", ("lines", "{}", "data_balance")),  # a dotted constant's placeholder
        ("", ()),
    ],
)
def test_parse_and_text_round_trip(text: str, segments: tuple[str, ...]) -> None:
    path = StatePath.parse(text)
    assert path.segments == segments
    assert str(path) == text


def test_parts_of_a_path() -> None:
    path = StatePath.parse("bank.accounts[*].amount")
    assert (path.root, path.leaf, path.field) == ("bank", "amount", "amount")
    assert str(path.below_root) == "accounts[*].amount"
    assert StatePath.parse("accounts[*]").field == "accounts"
    assert str(StatePath.parse("a.b[*][*]").without_trailing_elements()) == "a.b"
    assert StatePath.parse("").root is None and StatePath.parse("").field == ""


def test_starts_with_matches_an_element_against_any_segment() -> None:
    path = StatePath.parse("db.lines[*].status")
    assert path.starts_with(StatePath.parse("db.lines"))
    assert path.starts_with(StatePath.parse("db.lines.L1"))  # a key where the path has an element
    assert not path.starts_with(StatePath.parse("db.users"))
    assert not path.starts_with(StatePath.parse(""))  # the empty path is no prefix
    assert not StatePath.parse("db").starts_with(path)
