"""GitHub's primaryLocationLineHash, bit for bit, and toollint's move-stable `toollint/v1` key."""

from __future__ import annotations

from pathlib import Path

import pytest

from toollint.fingerprint import (
    line_hashes,
    normalise_message,
    relative_path,
    toollint_fingerprints,
)
from toollint.model import Finding

# The test vectors of ../shared/notes/sarif-github.md, computed with the upload action's algorithm.
VECTORS = [
    ("x = 1\n", {1: "8e00d41f0ebba6bf:1", 2: "c129715d7a2bc9a3:1"}),
    (
        "def f(amount):\n    if amount:\n        return 1\n    return 0\n",
        {1: "53c916fd50a0a585:1", 2: "51f197a85aab700f:1", 3: "a526cb5ce3502e9c:1", 4: "5e03fabe9ca8a985:1"},
    ),
    (
        "a\r\nb\r\n\r\nb\n",
        {1: "66dccf0a21aa6ee0:1", 2: "b36855975b9e241:1", 3: "bf4c4d48992e2ca5:1", 4: "ade70578248be16f:1"},
    ),
    ("same\nsame\nsame\n", {1: "55dfc028cbd34ba7:1", 2: "54dd522503d971eb:1", 3: "930af01a65e2307f:1"}),
]


@pytest.mark.parametrize(("text", "expected"), VECTORS)
def test_line_hash_matches_github_vectors(text: str, expected: dict[int, str]) -> None:
    got = line_hashes(text)
    reference = _action_reference(text)  # the literal port below must agree with GitHub too
    for line, value in expected.items():
        assert got[line] == value
        assert reference[line] == value


def test_trailing_newline_hashes_one_line_past_the_end() -> None:
    # Every file ending in "\n" ends with the same final window (EOF then zeros).
    assert line_hashes("x = 1\n")[2] == line_hashes("def f(amount):\n    return 0\n")[3]
    assert 2 not in line_hashes("x = 1")


def test_blanks_are_ignored_and_line_endings_are_equivalent() -> None:
    assert line_hashes("a = 1\nb=2\n") == line_hashes("a=1\r\n\tb = 2\r\n")
    # A lone CR is a line break too.
    assert line_hashes("a\rb\r") == line_hashes("a\nb\n")


def test_repeated_values_are_counted() -> None:
    # 150 blank lines: far from the end, every window holds only LFs, so the values repeat.
    hashes = line_hashes("\n" * 150)
    assert hashes[1].endswith(":1")
    assert hashes[2].split(":")[0] == hashes[1].split(":")[0]
    assert hashes[2].endswith(":2")
    assert hashes[50].endswith(":50")


def test_no_zero_padding_in_hex() -> None:
    value = line_hashes("a\r\nb\r\n\r\nb\n")[2]
    assert value == "b36855975b9e241:1"  # 15 hex digits: no leading zero added


def test_upto_line_gives_the_same_prefix() -> None:
    text = "".join(f"v{i} = {i}\n" for i in range(300))
    full = line_hashes(text)
    part = line_hashes(text, upto_line=120)
    assert set(part) == set(range(1, 121))
    assert all(full[k] == v for k, v in part.items())


def test_astral_characters_count_as_two_code_units() -> None:
    # U+1F600 is two UTF-16 code units; a BMP character is one, so the windows differ.
    assert line_hashes("s = '\U0001f600'\n")[1] != line_hashes("s = '\u00e9'\n")[1]


def _action_reference(text: str) -> dict[int, str]:
    """A line-by-line port of the upload action's `hash()` (fingerprints.ts), kept slow and literal."""
    window, line_numbers = [0] * 100, [-1] * 100
    state = {"h": 0, "index": 0, "line": 0, "line_start": True, "prev_cr": False}
    counts: dict[str, int] = {}
    out: dict[int, str] = {}
    first_mod = pow(37, 100, 1 << 64)

    def output() -> None:
        value = format(state["h"], "x")
        counts[value] = counts.get(value, 0) + 1
        out[line_numbers[state["index"]]] = f"{value}:{counts[value]}"
        line_numbers[state["index"]] = -1

    def update(current: int) -> None:
        begin = window[state["index"]]
        window[state["index"]] = current
        state["h"] = (37 * state["h"] + current - first_mod * begin) % (1 << 64)
        state["index"] = (state["index"] + 1) % 100

    def process(current: int) -> None:
        if current in (32, 9) or (state["prev_cr"] and current == 10):
            state["prev_cr"] = False
            return
        if current == 13:
            current, state["prev_cr"] = 10, True
        else:
            state["prev_cr"] = False
        if line_numbers[state["index"]] != -1:
            output()
        if state["line_start"]:
            state["line_start"] = False
            state["line"] += 1
            line_numbers[state["index"]] = state["line"]
        if current == 10:
            state["line_start"] = True
        update(current)

    data = text.encode("utf-16-le", "surrogatepass")
    for i in range(0, len(data), 2):
        process(int.from_bytes(data[i : i + 2], "little"))
    process(65535)
    for _ in range(100):
        if line_numbers[state["index"]] != -1:
            output()
        update(0)
    return out


def test_line_hash_equals_a_literal_port_of_the_action_on_random_text() -> None:
    import random

    rng = random.Random(20261130)
    alphabet = ["a", "b", "x", "=", "1", " ", "  ", "\t", "\n", "\r", "\r\n", "\r \n", "é", "\U0001f600"]
    for _ in range(60):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 400)))
        assert line_hashes(text) == _action_reference(text), repr(text)


def _finding(line: int, message: str = "`amount` is tested for truthiness", tool: str = "update") -> Finding:
    return Finding("TL104", message, "pkg/tools.py", line, 8, tool=tool)


def test_v1_fingerprint_survives_line_moves() -> None:
    before = toollint_fingerprints([_finding(10, "`amount` tested at line 10; 0 is legal")], Path.cwd())
    after = toollint_fingerprints([_finding(42, "`amount` tested at line 42; 0 is legal")], Path.cwd())
    assert before == after


def test_v1_fingerprint_differs_by_rule_path_tool_and_message() -> None:
    base = _finding(10)
    variants = [
        Finding("TL103", base.message, base.path, 10, tool=base.tool),
        Finding("TL104", base.message, "pkg/other.py", 10, tool=base.tool),
        _finding(10, tool="cancel"),
        _finding(10, message="`recurring` is tested for truthiness"),
    ]
    key = toollint_fingerprints([base])[0]
    assert all(toollint_fingerprints([v])[0] != key for v in variants)


def test_v1_duplicates_numbered_in_source_order() -> None:
    late, early = _finding(30), _finding(12)
    fps = toollint_fingerprints([late, early])
    assert fps[1].endswith(":1") and fps[0].endswith(":2")
    assert fps[0].rsplit(":", 1)[0] == fps[1].rsplit(":", 1)[0]


def test_v1_fingerprint_uses_path_relative_to_root(tmp_path: Path) -> None:
    inside = Finding("TL104", "m", str(tmp_path / "a" / "t.py"), 1, tool="f")
    moved_root = Finding("TL104", "m", "a/t.py", 1, tool="f")
    assert relative_path(inside.path, tmp_path) == "a/t.py"
    # The same file named absolutely and relatively (from the root) has one fingerprint.
    import os

    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        assert toollint_fingerprints([inside], tmp_path) == toollint_fingerprints([moved_root], tmp_path)
    finally:
        os.chdir(cwd)


def test_normalise_message_strips_moving_parts() -> None:
    assert normalise_message("see line 12 and lines 3-5") == "see line N and line N"
    assert normalise_message("written at tools.py:120:4  (L120)") == "written at tools.py:N (LN)"
    assert normalise_message("amount 0 is legal") == "amount 0 is legal"
