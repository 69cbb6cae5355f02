"""`.gitignore` files are respected when walking directories (toollint.gitignore), as git reads them."""

from __future__ import annotations

from pathlib import Path

import pytest

from toollint.cli import main
from toollint.files import collect_files
from toollint.gitignore import GitIgnore, parse_line
from toollint.settings import Settings


def matches(pattern: str, path: str, is_dir: bool = False) -> bool:
    compiled = parse_line(pattern)
    assert compiled is not None
    return bool(compiled.regex.match(path)) and (is_dir or not compiled.directory_only)


@pytest.mark.parametrize(
    ("pattern", "path", "is_dir", "expected"),
    [
        ("*.log", "a.log", False, True),
        ("*.log", "deep/er/a.log", False, True),  # no slash: any depth
        ("/build", "build", True, True),
        ("/build", "src/build", True, False),  # a leading slash anchors
        ("doc/*.py", "doc/x.py", False, True),
        ("doc/*.py", "doc/sub/x.py", False, False),  # * never crosses a slash
        ("doc/*.py", "a/doc/x.py", False, False),  # a middle slash anchors too
        ("**/gen", "a/b/gen", True, True),
        ("**/gen", "gen", True, True),
        ("out/**", "out/a/b.py", False, True),
        ("a/**/b.py", "a/b.py", False, True),
        ("a/**/b.py", "a/x/y/b.py", False, True),
        ("data/", "data", True, True),
        ("data/", "data", False, False),  # a trailing slash: directories only
        ("f?o.py", "foo.py", False, True),
        ("f[a-c]o.py", "fbo.py", False, True),
        ("f[!a-c]o.py", "fbo.py", False, False),
        ("\\#x.py", "#x.py", False, True),
        ("trailing.py   ", "trailing.py", False, True),
    ],
)
def test_patterns(pattern: str, path: str, is_dir: bool, expected: bool) -> None:
    assert matches(pattern, path, is_dir) is expected


def test_comments_blanks_and_negation() -> None:
    assert parse_line("# a comment") is None and parse_line("   ") is None and parse_line("") is None
    negated = parse_line("!keep.py")
    assert negated is not None and negated.negated


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    for name in ("a.py", "gen/b.py", "pkg/c.py", "pkg/skip_me.py", "pkg/keep_me.py", "pkg/sub/d.py",
                 "data/e.py", "data/important.py", "other/f.py"):
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x = 1\n")
    (tmp_path / ".gitignore").write_text("gen/\n/data/\n*_me.py\n!keep_me.py\n!data/important.py\n")
    (tmp_path / "pkg" / ".gitignore").write_text("sub/\n!skip_me.py\n")  # deeper wins over shallower
    (tmp_path / ".git" / "info").mkdir()
    (tmp_path / ".git" / "info" / "exclude").write_text("other/\n")
    return tmp_path


def walked(root: Path, **settings: object) -> list[str]:
    found = collect_files([root], Settings(project_root=root, **settings))  # type: ignore[arg-type]
    return sorted(p.relative_to(root).as_posix() for p in found.files)


def test_the_walk_skips_what_git_ignores(repo: Path) -> None:
    # data/important.py stays ignored: git never re-includes a file inside an ignored directory.
    assert walked(repo) == ["a.py", "pkg/c.py", "pkg/keep_me.py", "pkg/skip_me.py"]


def test_respect_gitignore_false_walks_everything(repo: Path) -> None:
    assert len(walked(repo, respect_gitignore=False)) == 9


def test_outside_a_repository_the_targets_gitignore_files_count(tmp_path: Path) -> None:
    (tmp_path / "proj" / "gen").mkdir(parents=True)
    (tmp_path / "proj" / "gen" / "x.py").write_text("x = 1\n")
    (tmp_path / "proj" / "y.py").write_text("y = 1\n")
    (tmp_path / "proj" / ".gitignore").write_text("gen/\n")
    (tmp_path / ".gitignore").write_text("*.py\n")  # above the target, outside any repository: not read
    assert walked(tmp_path / "proj") == ["y.py"]


def test_the_cli_respects_gitignore_unless_told_not_to(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo)
    (repo / "gen" / "b.py").write_text("def f(:\n")  # a syntax error, in an ignored folder
    assert main(["check", "."]) == 0
    assert "in 4 files" in capsys.readouterr().err  # a.py, pkg/c.py, pkg/keep_me.py, pkg/skip_me.py
    assert main(["check", "--no-respect-gitignore", "."]) == 1
    assert "gen/b.py:1:7: TL901" in capsys.readouterr().out
    (repo / "pyproject.toml").write_text("[tool.toollint]\nrespect-gitignore = false\n")
    assert main(["check", "."]) == 1
    capsys.readouterr()


def test_named_files_are_linted_unless_force_exclude(repo: Path, capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(repo)
    (repo / "gen" / "b.py").write_text("def f(:\n")
    assert main(["check", "gen/b.py"]) == 1  # named explicitly: linted, as ruff does
    assert main(["check", "--force-exclude", "gen/b.py"]) == 0  # pre-commit passes ignored files by name
    capsys.readouterr()


def test_ignored_directories_are_never_entered(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    listed: list[str] = []
    real = os.scandir

    def spy(path):  # type: ignore[no-untyped-def]
        listed.append(Path(path).relative_to(repo).as_posix())
        return real(path)

    monkeypatch.setattr(os, "scandir", spy)
    walked(repo)
    assert "gen" not in listed and "data" not in listed and "pkg/sub" not in listed


def test_each_gitignore_is_read_once(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import toollint.gitignore as module

    reads: list[Path] = []
    real = module._read

    def counting(file: Path, base: Path):  # type: ignore[no-untyped-def]
        reads.append(file)
        return real(file, base)

    monkeypatch.setattr(module, "_read", counting)
    ignore = GitIgnore()
    for name in ("pkg/c.py", "pkg/keep_me.py", "pkg/skip_me.py", "a.py"):
        ignore.ignored(repo / name, False)
    assert len(reads) == len(set(reads))


# Bracket expressions as git's wildmatch reads them: POSIX classes, negation, a leading `]`, escapes,
# an unknown class and an unclosed bracket (both match nothing in git).
BRACKETS = ["[[:digit:]]*.py", "[[:alpha:]][[:digit:]].py", "[[:upper:]]*.py", "[[:punct:]]x.py",
            "[[:alnum:][:punct:]]z.py", "f[!0-9].py", "f[^a-z].py", "[a-c].py", "x[]].py", "[!]]x.py",
            "[[:bogus:]].py", "a[b.py", "\\[a].py", "[a\\-z].py", "[[:xdigit:]][[:lower:]].py"]
NAMES = [
    "1a.py",
    "a1.py",
    "A1.py",
    "Ab.py",
    "f1.py",
    "fa.py",
    "fA.py",
    "b.py",
    "d.py",
    "x].py",
    "a[b.py",
    "ab.py",
    "[a].py",
    "a.py",
    "-.py",
    "z.py",
    "m.py",
    "]x.py",
    "bx.py",
    "!x.py",
    "_x.py",
    "9z.py",
    ".z.py",
    "ez.py",
    "Fa.py",
    "[x.py",
]


@pytest.mark.parametrize("pattern", BRACKETS)
def test_bracket_expressions_match_as_git_check_ignore_says(tmp_path: Path, pattern: str) -> None:
    import subprocess
    import warnings

    if subprocess.run(["git", "--version"], capture_output=True, check=False).returncode != 0:
        pytest.skip("git is not installed")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text(pattern + "\n")
    proc = subprocess.run(
        ["git", "check-ignore", "--no-index", "--stdin"],
        cwd=tmp_path,
        input="\n".join(NAMES),
        capture_output=True,
        text=True,
        check=False,
    )
    git_says = set(proc.stdout.splitlines())
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a `[[` once leaked Python's "Possible nested set" FutureWarning
        ours = {name for name in NAMES if GitIgnore().ignored(tmp_path / name, False)}
    assert ours == git_says


def test_a_posix_class_in_a_gitignore_prints_no_python_warning(tmp_path: Path) -> None:
    import subprocess
    import sys

    (tmp_path / ".gitignore").write_text("gen[[:digit:]].py\n")
    (tmp_path / "gen1.py").write_text("x = 1\n")
    (tmp_path / "keep.py").write_text("x = 1\n")
    proc = subprocess.run([sys.executable, "-m", "toollint", "check", "--show-files", "."], cwd=tmp_path,
                          capture_output=True, text=True, check=False)
    assert (proc.stdout, proc.stderr) == ("keep.py\n", "")
