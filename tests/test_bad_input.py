"""Bad input: each case gives a clear one-line diagnostic, the run goes on, the exit code says what
happened, and no traceback reaches the user."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from toollint.cli import main
from toollint.engine import lint_source
from toollint.settings import Settings


@pytest.fixture
def cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ok.py").write_text("def fine():\n    pass\n")
    return tmp_path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str], str]:
    code = main(["check", "--select", "TL9", *argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out.splitlines(), err


def test_syntax_error_has_its_location_and_other_files_are_linted(
    cwd: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (cwd / "broken.py").write_text("x = 1\ndef f(:\n    pass\n")
    (cwd / "flagged.py").write_text("x = 1  # noqa: TL999\n")  # TL900 shows flagged.py was linted too
    code, out, _ = run(capsys, ".")
    assert code == 1
    assert out[0] == "broken.py:2:7: TL901 [syntax-error] SyntaxError: invalid syntax"
    assert out[1].startswith("flagged.py:1:8: TL900")


def test_indentation_error(cwd: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (cwd / "indent.py").write_text("def f():\nreturn 1\n")
    assert run(capsys, "indent.py")[1] == [
        (
            "indent.py:2:1: TL901 [syntax-error] SyntaxError: "
            "expected an indented block after function definition on line 1"
        )
    ]


def test_non_utf8_file_names_the_byte_and_location(cwd: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (cwd / "latin.py").write_bytes(b"x = 1\ny = 'caf\xe9'\n")
    code, out, _ = run(capsys, ".")
    assert code == 1
    assert out == [
        "latin.py:2:9: TL902 [decode-error] cannot decode file: not valid utf-8: byte 0xe9 cannot be decoded"
    ]


def test_coding_cookie_is_honoured(cwd: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (cwd / "latin.py").write_bytes(b"# -*- coding: latin-1 -*-\ny = 'caf\xe9'\n")
    assert run(capsys, "latin.py")[:2] == (0, [])
    result = lint_source(b"# coding: latin-1\ndef bad():  # caf\xe9\n    pass\n", "m.py", Settings())
    assert result.findings == []


def test_unknown_coding_cookie(cwd: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (cwd / "odd.py").write_bytes(b"# coding: klingon\nx = 1\n")
    code, out, _ = run(capsys, "odd.py")
    assert (
        code == 1
        and len(out) == 1
        and out[0].startswith("odd.py:1:1: TL902 [decode-error] cannot decode file:")
    )
    assert "klingon" in out[0]


def test_utf8_bom_is_fine(cwd: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (cwd / "bom.py").write_bytes(b"\xef\xbb\xbfx = 1\n")
    assert run(capsys, "bom.py")[:2] == (0, [])


def test_null_byte(cwd: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (cwd / "nul.py").write_bytes(b"x = 1\ny = 2\x00\n")
    assert run(capsys, ".")[:2] == (
        1,
        ["nul.py:2:6: TL901 [syntax-error] SyntaxError: source contains a null byte"],
    )


@pytest.mark.parametrize("content", [b"", b"\n\n", b"   \n# only a comment\n"])
def test_empty_file(cwd: Path, capsys: pytest.CaptureFixture[str], content: bytes) -> None:
    (cwd / "empty.py").write_bytes(content)
    assert run(capsys, "empty.py")[:2] == (0, [])


def test_deeply_nested_expression(cwd: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (cwd / "deep.py").write_text("x = " + "-" * 200_000 + "1\n")
    code, out, _ = run(capsys, "deep.py")
    assert code == 1 and len(out) == 1 and out[0].startswith("deep.py:1:") and "TL901" in out[0]


def test_fifty_thousand_line_file(cwd: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = ["from typing import Annotated", "class Env:", "    items: list[int] = []"]
    for i in range(10_000):  # one tool in a hundred functions, so the rules really run on some
        head = f"def tool_{i}(env: Annotated[Env, Depends('env')], amount: int = 0) -> str:"
        body += [head if i % 100 == 0 else f"def helper_{i}(amount):"]
        body += ["    if amount:", "        env.items.append(amount)", f"    return 'updated {i}'", ""]
    (cwd / "big.py").write_text("\n".join(body) + "\n")
    assert len((cwd / "big.py").read_text().splitlines()) >= 50_000
    code = main(["check", "--select", "TL", "--ignore", "TL900", "--output-format", "json", "big.py"])
    out, err = capsys.readouterr()
    assert code == 1 and "TL904" not in out and "Traceback" not in err
    assert '"TL104"' in out  # the rules did run over it


def test_symlink_loops_end_the_walk(cwd: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (cwd / "sub").mkdir()
    (cwd / "sub" / "m.py").write_text("x = 1  # noqa: TL999\n")
    os.symlink("..", cwd / "sub" / "up")  # a directory loop
    os.symlink("self.py", cwd / "self.py")  # a file that points at itself
    code, out, _ = run(capsys, ".")
    assert code == 1
    assert [line.split(": ")[0:2] for line in out] == [
        ["self.py:1:1", "TL903 [io-error] cannot read"],
        ["sub/m.py:1:8", "TL900 [unused-noqa] unused noqa"],
    ]


def test_dangling_symlink_is_an_io_error(cwd: Path, capsys: pytest.CaptureFixture[str]) -> None:
    os.symlink("nowhere.py", cwd / "dangling.py")
    assert run(capsys, ".")[:2] == (
        1,
        ["dangling.py:1:1: TL903 [io-error] cannot read: No such file or directory"],
    )


def test_unreadable_file_is_an_io_error(
    cwd: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (cwd / "secret.py").write_text("x = 1\n")
    from toollint import engine, sources

    real_read = engine.read_regular

    def deny(path: str | Path, max_bytes: int | None = None) -> bytes:
        if Path(path).name == "secret.py":
            raise PermissionError(13, "Permission denied")
        return real_read(path, max_bytes)

    # the suite may run as root, where chmod does not deny; both readers of a module are denied (the engine's,
    # and discovery's package questions, which hand their bytes to the engine)
    monkeypatch.setattr(engine, "read_regular", deny)
    monkeypatch.setattr(sources, "read_regular", deny)
    assert run(capsys, ".")[:2] == (1, ["secret.py:1:1: TL903 [io-error] cannot read: Permission denied"])


def test_directory_without_python(cwd: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (cwd / "docs").mkdir()
    (cwd / "docs" / "index.md").write_text("# hi\n")
    warning = "toollint: warning: no Python files found under docs\n"
    assert run(capsys, "docs") == (0, [], warning + "No Python files checked.\n")
    assert run(capsys, "-q", "docs") == (0, [], "")


def test_nonexistent_path_is_exit_2_and_the_rest_is_linted(
    cwd: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (cwd / "flagged.py").write_text("x = 1  # noqa: TL999\n")
    code, out, err = run(capsys, "missing.py", "flagged.py")
    assert code == 2
    assert len(out) == 1 and out[0].startswith("flagged.py:1:8: TL900")
    assert err.splitlines()[0] == "toollint: error: missing.py: no such file or directory"


def test_non_python_file_named_explicitly_is_skipped_with_a_warning(
    cwd: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (cwd / "README.md").write_text("# Title\n")  # parses as Python: it used to pass in silence
    code, out, err = run(capsys, "README.md")
    assert (code, out) == (0, [])
    assert err.splitlines()[0] == ("toollint: warning: README.md: not a Python file (no .py/.pyi suffix or "
                                   "Python #! line); skipped")
    (cwd / "script").write_text("#!/usr/bin/env python3\ndef f(:\n")  # a Python script without a suffix
    code, out, _ = run(capsys, "script")
    assert code == 1 and "TL901" in out[0]


def test_surrogates_in_text_input() -> None:
    result = lint_source("x = '\ud800'\n", "m.py", Settings())
    assert [f.code for f in result.findings] == ["TL901"]


def test_path_with_a_null_character(cwd: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "a\0b.py")
    assert (code, out) == (2, [])
    assert err.splitlines()[0] == "toollint: error: 'a\\x00b.py': no such file or directory"


def test_contracts_draft_of_a_tool_in_a_top_level_module(cwd: Path) -> None:
    """`toollint contracts draft mod:func --src DIR` where DIR/mod.py is a module with no package: the
    draft cites the file by its own name (it crashed with a pathlib ValueError), and it checks."""
    import subprocess
    import sys

    (cwd / "tools.py").write_text(
        'DB = {"notes": {}}\n\n\ndef save_note(note_id: str, text: str) -> str:\n'
        '    """Save a note."""\n    DB["notes"][note_id] = text\n    return "Note saved."\n'
    )
    draft = subprocess.run([sys.executable, "-m", "toollint", "contracts", "draft", "tools:save_note",
                            "--src", ".", "-o", "save_note.yaml"],
                           cwd=cwd, capture_output=True, text=True, check=False)
    assert draft.returncode == 0 and "Traceback" not in draft.stderr, draft.stderr
    text = (cwd / "save_note.yaml").read_text()
    assert '  file: "tools.py"\n' in text and "package:" not in text and "quote: \"Save a note.\"" in text
    check = subprocess.run([sys.executable, "-m", "toollint", "contracts", "check", "save_note.yaml"],
                           cwd=cwd, capture_output=True, text=True, check=False)
    assert check.returncode == 0 and "Traceback" not in check.stderr, check.stdout + check.stderr
