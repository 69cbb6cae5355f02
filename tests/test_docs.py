"""Every `toollint ...` command shown in README.md and docs/*.md parses with toollint's own parsers, so a
documented flag cannot silently rot. Commands are parsed, never run: `argparse.ArgumentParser.parse_args`
is wrapped to stop right after parsing, for `check` and for the delegated subcommands alike."""

from __future__ import annotations

import argparse
import re
import shlex
from collections.abc import Iterable, Iterator
from pathlib import Path

import pytest

from toollint import cli

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^\s*```(\w*)")
INLINE = re.compile(r"`(toollint [^`]+)`")
# `python -m toollint.validate ...` is `toollint validate ...`; `python -m toollint ...` is `toollint ...`.
MODULE_FORMS = (("python -m toollint.validate ", "toollint validate "), ("python -m toollint ", "toollint "))


class Parsed(BaseException):  # not an Exception: no command's `except Exception` may swallow it
    def __init__(self, parser: argparse.ArgumentParser, error: str | None) -> None:
        super().__init__(error)
        self.parser, self.error = parser, error


def shell_lines(body: Iterable[tuple[int, str]], lang: str) -> Iterator[tuple[int, str]]:
    """(line number, command) for each command of a fenced block: in a `console` block only the
    `$ ` prompts (the rest is output), a `\\` continuation joined to the line it continues."""
    pending: tuple[int, str] | None = None
    for lineno, raw in body:
        line = raw.strip()
        if pending is not None:
            pending = (pending[0], pending[1] + " " + line.rstrip("\\"))
            if not line.endswith("\\"):
                yield pending
                pending = None
            continue
        if lang == "console":
            if not line.startswith("$ "):
                continue
            line = line[2:]
        if line.endswith("\\"):
            pending = (lineno, line.rstrip("\\"))
        else:
            yield lineno, line


def commands(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, command) for each toollint command line in a Markdown file."""
    lang: str | None = None
    body: list[tuple[int, str]] = []
    for lineno, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        fence = FENCE.match(raw)
        if fence:
            if lang is not None:
                yield from _toollint_commands(shell_lines(body, lang))
            lang, body = (None if lang is not None else fence.group(1)), []
            continue
        if lang is None:
            for m in INLINE.finditer(raw):
                if len(m.group(1).split()) > 2 or m.group(1).split()[1] not in cli.DELEGATED:
                    yield lineno, m.group(1)  # not prose naming a command ("`toollint replay` re-runs")
            continue
        body.append((lineno, raw))


def _toollint_commands(lines: Iterable[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    for lineno, line in lines:
        for module_form, short in MODULE_FORMS:
            if line.startswith(module_form):
                line = short + line[len(module_form):]
        if line.startswith("toollint "):
            yield lineno, line


def documented() -> list[tuple[str, str]]:
    found = [(f"{p.relative_to(ROOT)}:{n}", cmd) for p in DOCS for n, cmd in commands(p)]
    return [(where, cmd) for where, cmd in found if not _is_output(cmd)]


def _is_output(command: str) -> bool:
    """`toollint trace: warning: ...`, `toollint: error: ...`: a message toollint prints, not a command."""
    return command.split(maxsplit=2)[1].endswith(":") if " " in command else False


def parse(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> Parsed:
    original = argparse.ArgumentParser.parse_args

    def stop_after_parsing(self: argparse.ArgumentParser, args=None, namespace=None):  # type: ignore[no-untyped-def]
        try:
            original(self, args, namespace)
        except (SystemExit, Exception) as exc:  # noqa: BLE001 - argparse exits; some parsers raise in error()
            raise Parsed(self, f"{type(exc).__name__}: {exc}") from None
        raise Parsed(self, None)

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", stop_after_parsing)
    try:
        cli.main(argv)
    except Parsed as parsed:
        return parsed
    finally:
        monkeypatch.undo()
    raise AssertionError(f"toollint {' '.join(argv)} returned without parsing its arguments")


def option_strings(parser: argparse.ArgumentParser, words: list[str]) -> set[str]:
    """The options of the (sub)command the leading words name: `check`, `contracts check`, `trace`."""
    for word in words:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction) and word in a.choices]
        if not subs:
            break
        parser = subs[0].choices[word]
    return {s for action in parser._actions for s in action.option_strings}


def is_synopsis(argv: list[str]) -> bool:
    """`[--repeat N]`, `(A | B)`, `[DIR...]`: a usage synopsis, checked option by option."""
    return any(t[:1] in ("[", "(") or t == "|" for t in argv)


COMMANDS = documented()


def test_the_docs_show_commands_for_every_subcommand() -> None:
    # Guards the extractor itself: if it found nothing, every other test here would pass vacuously.
    shown = {shlex.split(cmd, comments=True)[1] for _, cmd in COMMANDS}
    assert {"check", "replay", "trace", "contracts", "validate", "rule"} <= shown
    assert len(COMMANDS) > 30


@pytest.mark.parametrize(("where", "command"), COMMANDS, ids=[w for w, _ in COMMANDS])
def test_documented_command_parses(where: str, command: str, monkeypatch: pytest.MonkeyPatch) -> None:
    argv = [t for t in shlex.split(command, comments=True)[1:] if t != "..."]
    if is_synopsis(argv):
        # A synopsis: every option it names must exist for that subcommand.
        sub = argv[0] if argv and not argv[0].startswith("-") else "check"
        top = parse([sub] if sub in cli.DELEGATED else [sub, "x"], monkeypatch).parser
        words = [t for t in argv if t.isidentifier()]  # `contracts check`: descend into subparsers
        known = option_strings(top, words[1:] if sub in cli.DELEGATED else ["check", *words])
        flags = {re.sub(r"[\[\]()|,].*$", "", t.split("=", 1)[0]) for t in re.split(r"[\s\[\]()|]+", command)
                 if t.startswith("-")}
        assert flags - {"-", "--"} <= known, (
            f"{where}: unknown option(s) {sorted(flags - known)} in: {command}"
        )
        return
    parsed = parse(argv, monkeypatch)
    assert parsed.error is None, f"{where}: `{command}` does not parse ({parsed.error})"


def test_a_rotten_flag_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    assert parse(["check", "--confirm", "--no-such-flag", "x"], monkeypatch).error is not None
    assert parse(["trace", "--no-such-flag"], monkeypatch).error is not None
    assert parse(["replay"], monkeypatch).error is not None  # WITNESS is required
    assert parse(["check", "--confirm", "--witness-dir", "w", "x"], monkeypatch).error is None


@pytest.mark.parametrize(
    "synopsis",
    [
        "toollint replay WITNESS [--bogus N]",
        "toollint contracts check [--nope] [DIR...]",
        "toollint trace --tool X (--agentdojo DIR | --taskz F)",
    ],
)
def test_a_rotten_flag_in_a_synopsis_is_caught(synopsis: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(AssertionError, match="unknown option"):
        test_documented_command_parses("doc.md:1", synopsis, monkeypatch)
