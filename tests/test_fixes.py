"""Autofixes: safe TL104 rewrites, the unsafe TL102 uncomment, --fix/--diff, formatting preserved."""

from __future__ import annotations

import ast
import json
import shutil
from pathlib import Path

import pytest
from toollint.rules.tl102_commented_guard import guard_evidence

from toollint.cli import main
from toollint.engine import lint_source
from toollint.fixes import FixError, apply_edits, decode, fix_source, parses, uncomment_guard
from toollint.model import Edit, Finding, Fix
from toollint.settings import Settings

FIXTURE = Path(__file__).parent / "fixtures" / "frontends" / "banking_tools.py"


def _findings(source: str, path: str = "tools.py") -> list[Finding]:
    return lint_source(source, path, Settings()).findings


def test_apply_edits_positions_are_code_points_and_end_exclusive() -> None:
    src = "a = 'é'; b = 1\r\nc = 2\r\n"
    out = apply_edits(src, [Edit("t.py", 1, 10, 1, 11, "bb"), Edit("t.py", 2, 5, 2, 6, "3")])
    assert out == "a = 'é'; bb = 1\r\nc = 3\r\n"
    multi = apply_edits("x = (1,\n     2)\n", [Edit("t.py", 1, 5, 2, 8, "3")])
    assert multi == "x = 3\n"


def test_safe_fixes_rewrite_truth_tests_and_nothing_else() -> None:
    source = FIXTURE.read_text(encoding="utf-8")
    outcome = fix_source("tools.py", source, _findings(source), unsafe=False)
    assert sorted(f.code for f in outcome.applied) == ["TL104", "TL104"]
    assert outcome.unsafe_skipped == 1  # the TL102 guard
    expected = source.replace("    if amount:\n", "    if amount is not None:\n").replace(
        "    if not recurring:\n", "    if recurring is None:\n"
    )
    assert outcome.fixed == expected  # comments, blank lines and the commented guard untouched
    assert parses(outcome.fixed)


def test_unsafe_fix_uncomments_the_guard_at_its_indentation() -> None:
    source = FIXTURE.read_text(encoding="utf-8")
    outcome = fix_source("tools.py", source, _findings(source), unsafe=True)
    assert sorted(f.code for f in outcome.applied) == ["TL102", "TL104", "TL104"]
    assert (
        '    t = account["scheduled"][id]\n'
        "    if amount is not None and amount < 0:\n"
        '        raise ValueError("amount must be positive")\n'
        "    if amount is not None:\n"
    ) in outcome.fixed
    # Linting the fixed file: the fixed findings are gone, the others are still there.
    assert sorted(f.code for f in _findings(outcome.fixed)) == ["TL101", "TL103", "TL105"]


def test_uncomment_refuses_ranges_that_are_not_comments_or_do_not_parse() -> None:
    src = "def f(x):\n    y = 1\n    return y\n"
    assert uncomment_guard(Finding("TL102", "m", "t.py", 2, 5, 2, 10), src) is None
    bad = "def f(x):\n    # if x:\n    return 1\n"  # an `if` with no body once uncommented
    assert uncomment_guard(Finding("TL102", "m", "t.py", 2, 5, 2, 12), bad) is None
    good = "def f(x):\n    #if x < 0:\n    #    raise ValueError\n    return 1\n"
    evidence = guard_evidence(ast.parse("if x < 0:\n    raise ValueError").body[0])
    fix = uncomment_guard(Finding("TL102", "m", "t.py", 2, 5, 3, 25, evidence=evidence), good)
    assert fix is not None and not fix.safe and fix.description == "Uncomment the guard `if x < 0:`"
    assert (
        apply_edits(good, fix.edits) == "def f(x):\n    if x < 0:\n        raise ValueError\n    return 1\n"
    )


def test_overlapping_and_breaking_fixes_are_not_applied() -> None:
    src = "x = 1\ny = 2\n"
    first = Finding("TL104", "a", "t.py", 1, fix=Fix("a", (Edit("t.py", 1, 5, 1, 6, "10"),)))
    overlapping = Finding("TL104", "b", "t.py", 1, fix=Fix("b", (Edit("t.py", 1, 5, 1, 6, "20"),)))
    breaking = Finding("TL104", "c", "t.py", 2, fix=Fix("c", (Edit("t.py", 2, 5, 2, 6, "(("),)))
    outcome = fix_source("t.py", src, [first, overlapping, breaking], unsafe=False)
    assert outcome.fixed == "x = 10\ny = 2\n"
    assert outcome.applied == [first]


def test_crlf_and_encoding_survive(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    text = "# -*- coding: latin-1 -*-\n" + FIXTURE.read_text(encoding="utf-8").replace("🏦", "£")
    Path("tools.py").write_bytes(text.replace("\n", "\r\n").encode("latin-1"))
    assert main(["check", "--fix", "-q", "tools.py"]) == 1
    data = Path("tools.py").read_bytes()
    assert b"\r\n    if amount is not None:\r\n" in data and b"\n" not in data.replace(b"\r\n", b"")
    assert "£".encode("latin-1") in data


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copy(FIXTURE, tmp_path / "tools.py")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_cli_fix_writes_and_reports_what_remains(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--fix", "--output-format", "json", "tools.py"]) == 1
    out = capsys.readouterr()
    assert sorted(f["code"] for f in json.loads(out.out)) == ["TL101", "TL102", "TL103", "TL105"]
    assert "fixed 2 finding(s) in 1 file(s); 1 more with --unsafe-fixes" in out.err
    assert "if amount is not None:" in Path("tools.py").read_text(encoding="utf-8")
    # Idempotent: a second run has nothing safe left to fix.
    before = Path("tools.py").read_bytes()
    main(["check", "--fix", "-q", "tools.py"])
    assert Path("tools.py").read_bytes() == before


def test_cli_diff_prints_and_writes_nothing(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = Path("tools.py").read_bytes()
    assert main(["check", "--diff", "--unsafe-fixes", "tools.py"]) == 1
    out = capsys.readouterr()
    assert Path("tools.py").read_bytes() == before
    assert out.out.startswith("--- a/tools.py\n+++ b/tools.py\n")
    assert "-    # if amount is not None and amount < 0:\n" in out.out
    assert "+    if amount is not None and amount < 0:\n" in out.out
    assert "-    if amount:\n" in out.out and "+    if amount is not None:\n" in out.out
    assert "3 fix(es) would be applied in 1 file(s)" in out.err


def test_cli_diff_with_nothing_to_fix_exits_0(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    Path("clean.py").write_text("def f(x):\n    return x\n", encoding="utf-8")
    assert main(["check", "--diff", "clean.py"]) == 0
    assert capsys.readouterr().out == ""


def test_sarif_shows_the_unsafe_fix_only_when_asked(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from test_sarif import assert_valid_sarif

    main(["check", "--output-format", "sarif", "tools.py"])
    results = json.loads(capsys.readouterr().out)["runs"][0]["results"]
    assert {r["ruleId"] for r in results if "fixes" in r} == {"TL104"}
    main(["check", "--output-format", "sarif", "--unsafe-fixes", "tools.py"])
    log = json.loads(capsys.readouterr().out)
    assert_valid_sarif(log)
    fixed = {r["ruleId"]: r["fixes"][0] for r in log["runs"][0]["results"] if "fixes" in r}
    assert set(fixed) == {"TL102", "TL104"}
    assert fixed["TL102"]["description"]["text"].startswith("Uncomment the guard `if amount is not None")
    assert Path("tools.py").read_bytes() == FIXTURE.read_bytes()  # showing fixes changes nothing


def test_undecodable_file_is_a_one_line_error() -> None:
    with pytest.raises(FixError) as info:
        decode(b"# -*- coding: latin-9000 -*-\nx = 1\n", "odd.py")
    assert str(info.value) == "cannot decode odd.py; not fixing it"


def test_demo_refuses_to_fix_the_bundled_examples(capsys: pytest.CaptureFixture[str]) -> None:
    from toollint.cli import EXAMPLES_DIR

    before = {p: p.read_bytes() for p in EXAMPLES_DIR.glob("**/*.py")}
    assert main(["demo", "--fix"]) == 2
    assert "use --diff with demo" in capsys.readouterr().err
    assert {p: p.read_bytes() for p in EXAMPLES_DIR.glob("**/*.py")} == before
    assert main(["demo", "--diff"]) == 1  # the bundled examples have safe fixes to show
    assert "+++ b/" in capsys.readouterr().out


# --- issue 17: fixes apply only to their own text, batched, one failure at a time ----------------


def test_a_file_changed_after_linting_is_linted_again_before_fixing(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The edits are computed from the text they are applied to: a file edited between the lint and
    the fix (two lines added above the finding) is linted again, not patched at stale positions
    (which once turned `if amount:` into `if amount is not Nonerozen(account_id):`)."""
    from toollint import cli, fixes

    def edit_the_file(ctx, result):  # type: ignore[no-untyped-def]
        text = Path("tools.py").read_text(encoding="utf-8")
        Path("tools.py").write_text(
            text.replace(
                '    t = account["scheduled"][id]\n',
                '    t = account["scheduled"][id]\n    frozen = 1\n    x = 2\n',
            ),
            encoding="utf-8",
        )
        return result

    monkeypatch.setattr(cli, "CHECK_STEPS", (edit_the_file, fixes.check_step))
    assert main(["check", "--fix", "tools.py"]) == 1
    err = capsys.readouterr().err
    assert "toollint: warning: tools.py changed since it was linted; linted again before fixing" in err
    text = Path("tools.py").read_text(encoding="utf-8")
    assert "    x = 2\n    # if amount is not None and amount < 0:\n" in text
    assert "    if amount is not None:\n        t[\"amount\"] = amount\n" in text
    assert "    if recurring is None:\n" in text
    assert parses(text)


def test_a_file_changed_while_being_fixed_is_not_written(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from toollint import fixes

    real = fixes.fix_source

    def meanwhile(*args, **kwargs):  # type: ignore[no-untyped-def]
        outcome = real(*args, **kwargs)
        Path("tools.py").write_text("# someone else's edit\n", encoding="utf-8")
        return outcome

    monkeypatch.setattr(fixes, "fix_source", meanwhile)
    assert main(["check", "--fix", "tools.py"]) == 2
    err = capsys.readouterr().err
    assert "toollint: error: tools.py changed while it was being fixed; not written (run --fix again)" in err
    assert Path("tools.py").read_text(encoding="utf-8") == "# someone else's edit\n"


def test_all_fixes_of_a_file_cost_one_parse_of_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """400 commented-out guards: each guard is checked on its own (a few lines), the fixed file is
    parsed once (it used to be re-parsed with libcst per guard: 259 s). bench/fix_speed.py times it."""
    from fix_speed import many_guards

    from toollint import fixes

    source = many_guards(400)
    sizes: list[int] = []
    real = fixes.syntax_error_line
    monkeypatch.setattr(fixes, "syntax_error_line", lambda text: sizes.append(len(text)) or real(text))
    findings = [f for f in _findings(source) if f.code == "TL102"]
    assert len(findings) == 400
    outcome = fix_source("tools.py", source, findings, unsafe=True)
    assert (
        len(outcome.applied) == 400
        and outcome.fixed.count("\n    if amount is not None and amount < 0:\n") == 400
    )
    whole_file_parses = [n for n in sizes if n > len(source) // 2]
    assert len(whole_file_parses) == 1
    assert len(sizes) == 401


def test_a_fix_that_breaks_the_file_is_dropped_and_the_others_kept() -> None:
    # Both guards parse on their own; the second, uncommented at a wrong indentation, breaks the file.
    src = ("def f(x):\n    # if x < 0:\n    #     raise ValueError\n    return x\n\n\n"
           "def g(y):\n    y = 1\n        # if y < 0:\n        #     raise ValueError\n    return y\n")
    first = Finding("TL102", "m", "t.py", 2, 5, 3, 27)
    second = Finding("TL102", "m", "t.py", 9, 9, 10, 31)
    outcome = fix_source("t.py", src, [first, second], unsafe=True)
    assert outcome.applied == [first]
    assert outcome.fixed.startswith("def f(x):\n    if x < 0:\n        raise ValueError\n")
    assert "        # if y < 0:\n" in outcome.fixed


def test_a_file_that_cannot_be_written_leaves_the_others_fixed(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from toollint import atomic

    shutil.copy(FIXTURE, project / "locked.py")
    real = atomic.write_bytes

    def refuse_one(path, data):  # type: ignore[no-untyped-def]
        if Path(path).name == "locked.py":
            raise PermissionError(13, "Permission denied", str(path))
        real(path, data)

    monkeypatch.setattr(atomic, "write_bytes", refuse_one)
    assert main(["check", "--fix", "locked.py", "tools.py"]) == 2
    out, err = capsys.readouterr()
    assert "if amount is not None:" in Path("tools.py").read_text(encoding="utf-8")
    assert Path("locked.py").read_bytes() == FIXTURE.read_bytes()
    assert "toollint: error: cannot write locked.py: Permission denied" in err
    assert "1 file(s) not fixed: locked.py" in err
    # The findings are printed: the unfixed file keeps its TL104s, the fixed one lost them.
    lines = out.splitlines()
    assert sum("locked.py" in x and "TL104" in x for x in lines) == 2
    assert not any("tools.py" in x and "TL104" in x for x in lines)
    assert any("tools.py" in x and "TL101" in x for x in lines)
