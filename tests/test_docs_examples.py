"""Every fenced block in README.md and docs/*.md is run by a test, so no documented example can rot.

Two kinds of check:

- **Worked examples** run end to end. A section between `<!-- example: NAME -->` and
  `<!-- end example -->` is replayed in a scratch directory: a block whose first line is a comment
  naming a file (`# mybench/telecom.py`) is written there verbatim, a `diff` block is applied to the
  files, `cp -r tests/fixtures/X DEST && cd DEST` copies a fixture of this repository in, and each
  `$ command` of a `console` block is run and its output compared with the lines shown (stdout and
  stderr may interleave in the transcript; each keeps its order; `...` in a shown line stands for
  any text, as in doctest's ELLIPSIS).
- **Every other block** is checked by its language: TOML through toollint's own settings loader
  (an unknown key fails), YAML contracts through the contract schema, CI and pre-commit YAML for the
  commands and hook ids they name, JSON and INI parsed, Python parsed. `toollint` command lines in
  shell and console blocks are parsed by tests/test_docs.py; here every other shell line must be one
  of the set-up steps a reader can run (venv, pip install of this package or the pinned benchmark).
"""

from __future__ import annotations

import ast
import configparser
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_docs import DOCS, shell_lines
from toollint.contracts.loader import contract_schema, schema_errors

import toollint
from toollint.config import ConfigError, settings_from_table

if sys.version_info >= (3, 11):
    import tomllib
else:  # the project supports 3.10, where tomli is its dependency
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
# `$TL` in a tau2 example: the installed `toollint` package, whose profiles hold the bundled contracts
TOOLLINT_PACKAGE = Path(toollint.__file__).resolve().parent
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
FENCE = re.compile(r"^(\s*)```([\w-]*)\s*$")
EXAMPLE_START = re.compile(r"<!--\s*example:\s*([\w-]+)(?:\s+needs:\s*([\w-]+))?\s*-->")
EXAMPLE_END = re.compile(r"<!--\s*end example\s*-->")
FILE_COMMENT = re.compile(r"^#\s*([\w./-]+\.(?:py|toml|ya?ml|json|cfg|ini))\b")
DISTRIBUTION = "toollint-bench"  # reserved on the package index, not yet published: no doc installs it
# What the docs may install: this checkout, or the wheel `pip wheel --no-deps -w dist .` builds from it.
WHEEL = re.compile(r"^(?:ci|dist)/toollint_bench-(?P<version>[\w.]+)-py3-none-any\.whl$")


@dataclass
class Block:
    doc: Path
    line: int  # of the opening fence
    lang: str
    text: str
    example: str | None

    @property
    def where(self) -> str:
        return f"{self.doc.relative_to(ROOT)}:{self.line}"


def blocks(doc: Path) -> Iterator[Block]:
    example: str | None = None
    lines = doc.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        if (start := EXAMPLE_START.search(lines[i])) is not None:
            example = start.group(1)
        elif EXAMPLE_END.search(lines[i]):
            example = None
        elif (fence := FENCE.match(lines[i])) is not None:
            indent, lang = fence.groups()
            body: list[str] = []
            i += 1
            while i < len(lines) and not FENCE.match(lines[i]):
                body.append(lines[i].removeprefix(indent))
                i += 1
            yield Block(doc, i - len(body), lang, "\n".join(body) + "\n", example)
        i += 1


ALL = [b for doc in DOCS for b in blocks(doc)]
# `<!-- example: NAME needs: agentdojo -->`: the example runs against the real benchmark, with `$PY` its
# interpreter and `$AD` its installed package (the transcript shows `$AD` where the run prints the path);
# `needs: tau2`: `$TAU2` the pinned checkout, `$PY` the venv of its dependencies, `$TL` toollint's package.
# `needs: taubench`: `$TAUBENCH` the original tau-bench's pinned checkout (shared/corpus/tau-bench).
NEEDS = {m[1]: m[2] for doc in DOCS for m in EXAMPLE_START.finditer(doc.read_text(encoding="utf-8")) if m[2]}
FRAGMENTS = [b for b in ALL if b.example is None and b.lang]
EXAMPLES: dict[str, list[Block]] = {}
for _b in ALL:
    if _b.example is not None:
        EXAMPLES.setdefault(_b.example, []).append(_b)


def test_the_extractor_sees_the_docs() -> None:
    # If the extractor found nothing, every check below would pass vacuously.
    langs = {b.lang for b in ALL}
    assert {"sh", "console", "toml", "yaml", "python", "json"} <= langs
    assert len(ALL) > 60 and EXAMPLES


# -- worked examples -------------------------------------------------------------------------------------


@dataclass
class Scratch:
    root: Path
    last_exit: int | None = None
    transcript: list[str] = field(default_factory=list)
    variables: dict[str, str] = field(default_factory=dict)  # `$PY` -> its value, for a `needs:` example

    def expand(self, command: str) -> str:
        for name, value in self.variables.items():
            command = command.replace(f"${name}", value)
        return command

    def shown(self, printed: str) -> str:
        """What the run printed, with each variable's value written back as `$NAME`, longest first."""
        for name, value in sorted(self.variables.items(), key=lambda item: -len(item[1])):
            printed = printed.replace(value, f"${name}")
        return printed

    def write(self, block: Block) -> None:
        first = block.text.splitlines()[0]
        name = FILE_COMMENT.match(first)
        assert name, f"{block.where}: a {block.lang} block in an example must start with `# path/of/the/file`"
        path = self.root / name.group(1)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(block.text, encoding="utf-8")

    def apply(self, block: Block) -> None:
        """A unified diff, applied strictly: every context and removed line must be where it says."""
        target: Path | None = None
        hunk: list[str] = []
        for line in block.text.splitlines():
            if line.startswith("+++ "):
                target = self.root / re.sub(r"^b/", "", line[4:].strip())
            elif line.startswith(("--- ", "@@")):
                continue
            else:
                hunk.append(line)
        assert target is not None and target.is_file(), (
            f"{block.where}: the diff names no file of the example"
        )
        # `$PY` in a line of the diff stands for its value, as in a command (a witness records the path)
        old = self.expand("".join(ln[1:] + "\n" for ln in hunk if ln[:1] in (" ", "-")))
        new = self.expand("".join(ln[1:] + "\n" for ln in hunk if ln[:1] in (" ", "+")))
        text = target.read_text(encoding="utf-8")
        assert text.count(old) == 1, f"{block.where}: the diff's context does not match {target.name}"
        target.write_text(text.replace(old, new), encoding="utf-8")

    def run(self, block: Block) -> None:
        command: str | None = None
        shown: list[str] = []
        continued = False  # the command's last line ended with a backslash: this line continues it
        for line in [*block.text.splitlines(), "$ "]:
            if continued and command is not None:
                command = command[:-1] + " " + line.strip()
                continued = command.endswith("\\")
                continue
            if not line.startswith("$ "):
                shown.append(line)
                continue
            if command is not None:
                self.check(block, command, shown)
            command, shown = line[2:].strip(), []
            continued = command.endswith("\\")

    def check(self, block: Block, command: str, shown: list[str]) -> None:
        if command == "echo $?":
            assert shown == [str(self.last_exit)], (
                f"{block.where}: exit status {self.last_exit}, the doc says {shown}"
            )
            return
        command = self.expand(command.split(" #")[0].strip())  # a trailing comment speaks to the reader
        if (copy := COPY_FIXTURE.match(command)) is not None:
            source = ROOT / copy.group(1)
            assert source.is_dir() and source.is_relative_to(ROOT / "tests"), (
                f"{block.where}: no fixture {source}"
            )
            shutil.copytree(source, self.root, dirs_exist_ok=True)
            assert not shown, f"{block.where}: `{command}` prints nothing"
            return
        argv = shlex.split(command)
        if argv[:3] == ["python", "-m", "toollint.profiles"]:  # the profile listing (docs/confirm.md)
            argv = ["toollint.profiles", *argv[3:]]
        assert argv[0] in ("toollint", "toollint.profiles", "ls", "cat", "flake8"), \
            f"{block.where}: an example may only run toollint (or ls, cat, flake8), not `{command}`"
        env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200"}
        env.pop("FORCE_COLOR", None)
        # toollint and flake8 (whose TL plugin this package registers) from the interpreter under test
        run = [sys.executable, "-m", *argv] if argv[0].startswith("toollint") or argv[0] == "flake8" else argv
        proc = subprocess.run(
            run, cwd=self.root, env=env, capture_output=True, text=True, timeout=240, check=False
        )
        self.last_exit = proc.returncode
        out, err = self.shown(proc.stdout).splitlines(), self.shown(proc.stderr).splitlines()
        assert interleaves(shown, out, err), (
            f"{block.where}: `{command}` printed\n--- stdout\n{proc.stdout}--- stderr\n{proc.stderr}"
            f"--- the doc shows\n" + "\n".join(shown))


COPY_FIXTURE = re.compile(r"^cp -r (tests/fixtures/[\w/-]+) \S+ && cd \S+$")


def _shown_matches(shown: str, printed: str) -> bool:
    if "..." not in shown:
        return shown == printed
    return re.fullmatch(".*".join(re.escape(part) for part in shown.split("...")), printed) is not None


def interleaves(shown: list[str], out: list[str], err: list[str]) -> bool:
    """Whether the transcript is stdout and stderr interleaved, each in its own order (a terminal
    shows them so); a shown line may match a line of either stream, first come first served."""
    i = j = 0
    for line in shown:
        if i < len(out) and _shown_matches(line, out[i]):
            i += 1
        elif j < len(err) and _shown_matches(line, err[j]):
            j += 1
        else:
            return False
    return i == len(out) and j == len(err)


# The examples that confirm against a real benchmark host (10 s to a minute): in `pytest -m slow` (.ci/run);
# the other AgentDojo transcripts keep a fast sample of the same path in the default run.
SLOW_EXAMPLES = {"agentdojo-confirm", "agentdojo-trace-check", "tau2-derived-confirm",  # the last ~1 min
                 "agentdojo-audit-check"}  # the grader audit's null runs over every suite: ~30 s


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW_EXAMPLES else n
                                  for n in sorted(EXAMPLES)])
def test_worked_example_runs_as_shown(name: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    scratch = Scratch(tmp_path)
    if NEEDS.get(name) == "agentdojo":
        scratch.variables = {"PY": str(request.getfixturevalue("agentdojo_python")),
                             "AD": str(request.getfixturevalue("agentdojo_src"))}
    elif NEEDS.get(name) == "tau2":  # `$TAU2` the checkout; `$PY` a venv of its dependencies, if used
        scratch.variables = {"TAU2": str(request.getfixturevalue("tau2_checkout")),
                             "TL": str(TOOLLINT_PACKAGE)}
        if any("$PY" in block.text for block in EXAMPLES[name]):
            scratch.variables["PY"] = str(request.getfixturevalue("tau2_python"))
    elif NEEDS.get(name) == "taubench":  # `$TAUBENCH` the original tau-bench's pinned checkout
        scratch.variables = {"TAUBENCH": str(request.getfixturevalue("taubench_checkout"))}
    else:
        assert name not in NEEDS, f"example {name} needs {NEEDS[name]}, which no fixture provides"
    ran = 0
    for block in EXAMPLES[name]:
        if block.lang == "console":
            scratch.run(block)
            ran += 1
        elif block.lang == "diff":
            scratch.apply(block)
        elif block.lang:
            scratch.write(block)
    assert ran, f"example {name} has no console transcript to run"


def test_a_wrong_transcript_fails(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text("```console\n$ toollint rule TL999\nno such thing\n$ echo $?\n0\n```\n")
    (block,) = blocks(doc)
    with pytest.raises(AssertionError, match="printed"):
        Scratch(tmp_path).run(Block(ROOT / "README.md", 1, block.lang, block.text, None))


def test_a_diff_that_does_not_match_fails(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("x = 1\n")
    diff = "--- a/m.py\n+++ b/m.py\n@@ -1 +1 @@\n-x = 2\n+x = 3\n"
    with pytest.raises(AssertionError, match="context does not match"):
        Scratch(tmp_path).apply(Block(ROOT / "README.md", 1, "diff", diff, None))


@pytest.mark.parametrize(("shown", "ok"), [
    (["a", "E1", "b"], True),  # the two streams interleaved
    (["a", "b", "E1"], True),
    (["b", "a", "E1"], False),  # stdout out of order
    (["a...", "b", "E..."], True),  # an ellipsis stands for any text
    (["a", "b"], False),  # a line printed but not shown
    (["a", "b", "E1", "c"], False),  # a line shown but not printed
])
def test_a_transcript_must_show_both_streams_in_order(shown: list[str], ok: bool) -> None:
    assert interleaves(shown, ["a", "b"], ["E1"]) is ok


# -- fragments, by language ------------------------------------------------------------------------------


def _commands_in(value: Any) -> Iterator[str]:
    """The shell lines of a CI file: `run:` steps (GitHub) and `script:` lists (GitLab)."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key in ("run", "script", "before_script"):
                for line in item if isinstance(item, list) else str(item).splitlines():
                    yield str(line).strip()
            else:
                yield from _commands_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from _commands_in(item)


def _check_shell_line(where: str, line: str) -> None:
    """A non-toollint line a reader is asked to run: only set-up steps, and they must install us."""
    words = shlex.split(line, comments=True)
    if not words or words[0] == "toollint" or re.match(r"^[A-Z_][A-Z0-9_]*=", words[0]):
        return  # toollint commands: tests/test_docs.py; `PY=...` assignments
    if words[0] in ("cat", "echo", "ls", "python", "flake8", "cp", "cd", "mkdir"):
        return  # shell plumbing around the commands the other checks cover
    for step in " ".join(words).split("&&"):
        step_words = step.split()
        if not step_words:
            continue
        tool = Path(step_words[0]).name
        if tool in ("pip", "pip3") and step_words[1:2] == ["install"]:
            targets = [w for w in step_words[2:] if not w.startswith("-")]
            allowed = {".", "-e", ".[test]", "'.[test]'", "agentdojo==0.1.35"}
            wheels = [t for t in targets if (m := WHEEL.match(t)) and m["version"] == VERSION]
            assert set(targets) - set(wheels) <= allowed, \
                f"{where}: `{step.strip()}` installs {targets}, not this project as a clone or its wheel"
        elif tool in ("pip", "pip3") and step_words[1:] == ["wheel", "--no-deps", "-w", "dist", "."] \
                or tool == "toollint" or tool.startswith("python") and step_words[1] == "-m" and \
                step_words[2] in ("venv", "pytest", "toollint"):
            continue
        else:
            pytest.fail(f"{where}: the docs ask the reader to run `{step.strip()}`, which no test covers")


def check_toml(block: Block, tmp_path: Path) -> None:
    data = tomllib.loads(block.text)
    table = data.get("tool", {}).get("toollint")
    if table is None:
        assert data, f"{block.where}: an empty TOML block"
        return
    path = tmp_path / "pyproject.toml"
    try:
        settings = settings_from_table(table, path)
    except ConfigError as exc:
        pytest.fail(f"{block.where}: toollint rejects this configuration: {exc}")
    assert not settings.notes, f"{block.where}: the docs spell keys one way, kebab-case: {settings.notes}"


def check_yaml(block: Block, tmp_path: Path) -> None:
    data = yaml.safe_load(block.text)
    if isinstance(data, dict) and "tool" in data:  # a contract, whole or in part
        schema = contract_schema()
        unknown = set(data) - set(schema["properties"])
        assert not unknown, f"{block.where}: contract keys the schema does not know: {sorted(unknown)}"
        if "clauses" in data:
            errors = list(schema_errors(data, schema, path=block.where))
            assert not errors, f"{block.where}: {[e.message for e in errors]}"
        return
    if isinstance(data, dict) and "repos" in data:  # a .pre-commit-config.yaml
        hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
        ours = {h["id"] for h in hooks}
        for repo in data["repos"]:
            for hook in repo["hooks"]:
                assert hook["id"] in ours, (
                    f"{block.where}: hook {hook['id']} is not in .pre-commit-hooks.yaml"
                )
        return
    lines = list(_commands_in(data))
    assert lines or isinstance(data, dict), f"{block.where}: a YAML block toollint has no check for"
    for line in lines:
        _check_shell_line(block.where, line)


def check_python(block: Block, tmp_path: Path) -> None:
    try:
        ast.parse(block.text)
    except SyntaxError as exc:
        pytest.fail(f"{block.where}: does not parse: {exc}")


def check_json(block: Block, tmp_path: Path) -> None:
    text = block.text
    if re.search(r"^\s*\.\.\.\s*$|,\s*\.\.\.", text, re.MULTILINE):
        pytest.fail(f"{block.where}: an elided JSON example cannot be checked; show it whole")
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        # JSON Lines: a ledger shows one object per line.
        data = [json.loads(line) for line in text.splitlines() if line.strip()]
    assert data, f"{block.where}: empty JSON"


def check_ini(block: Block, tmp_path: Path) -> None:
    parser = configparser.ConfigParser()
    parser.read_string(block.text)
    if parser.has_section("flake8"):
        selected = parser["flake8"].get("extend-select", "") + parser["flake8"].get("select", "")
        assert "TL" in selected, f"{block.where}: the flake8 section does not select TL"


def check_shell(block: Block, tmp_path: Path) -> None:
    for _, line in shell_lines(enumerate(block.text.splitlines(), block.line + 1), block.lang):
        _check_shell_line(block.where, line)


CHECKS = {"toml": check_toml, "yaml": check_yaml, "python": check_python, "json": check_json,
          "ini": check_ini, "sh": check_shell, "console": check_shell}


def test_every_fenced_block_has_a_check() -> None:
    unchecked = [f"{b.where} [{b.lang}]" for b in FRAGMENTS if b.lang not in CHECKS]
    assert not unchecked, f"blocks of a language no test runs: {unchecked}"


@pytest.mark.parametrize("block", FRAGMENTS, ids=[f"{b.where}-{b.lang}" for b in FRAGMENTS])
def test_documented_block(block: Block, tmp_path: Path) -> None:
    CHECKS[block.lang](block, tmp_path)


def test_an_unknown_config_key_in_a_doc_fails(tmp_path: Path) -> None:
    bad = Block(ROOT / "README.md", 1, "toml", "[tool.toollint.confirm]\npyhton = 'x'\n", None)
    with pytest.raises(pytest.fail.Exception, match="rejects"):
        check_toml(bad, tmp_path)


@pytest.mark.parametrize("line", [
    "pip install toollint",  # another project
    f"pip install {DISTRIBUTION}",  # ours, but not published: it fails for every reader
    "pip install ci/toollint_bench-9.9.9-py3-none-any.whl",  # a wheel of a version pyproject does not build
])
def test_a_foreign_or_unpublished_install_in_a_doc_fails(line: str) -> None:
    with pytest.raises(AssertionError, match="not this project"):
        _check_shell_line("doc.md:1", line)


def test_readme_has_the_two_set_up_commands_and_ci_runs_the_second() -> None:
    first = next(b for b in ALL if b.doc.name == "README.md" and b.lang == "sh")
    commands = [ln for ln in first.text.splitlines() if ln.strip()]
    assert len(commands) == 2, commands
    install_and_run, install_and_test = commands
    assert "pip install ." in install_and_run and "toollint" in install_and_run.split("&&")[-1]
    assert "'.[test]'" in install_and_test and "pytest" in install_and_test
    assert install_and_test in (ROOT / ".ci" / "run").read_text()


# Output shown in the docs that no test produces, by file and first 80 characters, each with a comment
# saying why it cannot run here (strict: once one runs as a worked example, it must leave this set).
# Empty: every transcript in the docs is a worked example, the real benchmarks' ones included.
PENDING_TRANSCRIPTS: set[tuple[str, str]] = set()


def _shows_output(block: Block) -> bool:
    lines = [ln for ln in block.text.splitlines() if ln.strip()]
    return block.lang == "" or (
        block.lang == "console" and any(not ln.startswith(("$ ", "  ")) for ln in lines)
    )


def test_every_transcript_in_the_docs_is_produced_by_a_run() -> None:
    # A transcript (a console block with output, or a plain output block) outside a worked example is
    # text no test compares with a run: it drifts (docs/confirm.md's AgentDojo output ended early, and
    # docs/contracts.md's `All contracts passed.` had grown a warning). New ones must be examples.
    unrun = {(str(b.doc.relative_to(ROOT)), b.text.splitlines()[0][:80]) for b in ALL
             if b.example is None and _shows_output(b)}
    assert unrun - PENDING_TRANSCRIPTS == set(), "transcripts no test runs: make them worked examples"
    assert PENDING_TRANSCRIPTS - unrun == set(), (
        "these now run as examples: drop them from PENDING_TRANSCRIPTS"
    )
