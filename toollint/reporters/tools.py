"""What discovery made of a run: `--show-tools`, `--show-graders`, and the counts the run summary prints.

`write_tools` lists every tool found (file, line, name, whether it writes and why, how it was
recognised), then every function that looks like a tool but was not taken, with why; a run that
found no tool at all says so and how to point toollint at them (`tool-decorators`, `tools`,
`tool-classes`, `state-roots`). `tool_counts` is the "N files, T tools (W writers)" part of the
summary line.
"""

from __future__ import annotations

from collections import Counter
from typing import TextIO

from toollint.engine import FileResult, RunResult

NO_TOOLS_HINT = ("no tools found: name them with `tool-decorators`, `tools`, `tool-classes` or `state-roots` "
                 "in [tool.toollint] (see README, Configuration)")


def tool_counts(result: RunResult) -> str:
    """`12 files, 34 tools (9 writers)`."""
    files, tools, writers = result.file_count, result.tool_count, result.writer_count
    return (f"{files} file{'s' if files != 1 else ''}, {tools} tool{'s' if tools != 1 else ''} "
            f"({writers} writer{'s' if writers != 1 else ''})")


def write_tools(result: RunResult, stream: TextIO) -> None:
    """`--show-tools`: each tool with whether it writes and why; each near-miss with why not."""
    rows = [(r.path, t) for r in sorted(result.files, key=lambda r: r.path) for t in r.tools or []]
    for path, tool in rows:
        mark = "writes" if tool.writes else "reads "
        stream.write(f"{path}:{tool.line}: {tool.qualname} [{mark}] {tool.why}; found as {tool.found_by}\n")
    near = [(r.path, x) for r in sorted(result.files, key=lambda r: r.path) for x in r.rejected]
    for path, rejection in near:
        stream.write(f"{path}:{rejection.line}: {rejection.qualname} [not a tool] {rejection.reason}\n")
    for path, line, name in declared_without_tool(result):
        stream.write(f"{path}:{line}: {name} [declared] shown to the model in a function-calling schema, "
                     "but no tool of that name was found\n")
    if not rows:
        stream.write(f"toollint: {NO_TOOLS_HINT}\n")
        write_candidates(result, stream)
    stream.write(f"{tool_counts(result)}\n")


MAX_DECLARATION_BYTES = 2_000_000  # a JSON/YAML file larger than this is data, not a tool list


def declared_without_tool(result: RunResult) -> list[tuple[str, int, str]]:
    """The cross-check of `--show-tools`: (file, line, name) of each function a schema of the linted tree
    (a dict literal in a module, or a JSON/YAML file beside one) declares to the model that no tool
    found implements, by name (a method, a function, or a dispatcher's branch)."""
    import json
    from pathlib import Path

    import yaml

    from toollint.analysis.dispatch import data_declarations, schema_declarations

    def norm(name: str) -> str:  # `book_reservation` is implemented by `BookReservation.invoke` too
        return name.lower().replace("_", "")

    names: set[str] = set()
    for t in (t for r in result.files for t in r.tools or []):
        head, _, branch = t.qualname.partition("[")
        parts = head.split(".")
        names.update(norm(p) for p in parts[-2:])
        if branch:
            names.add(norm(branch.rstrip("]")))
    out: list[tuple[str, int, str]] = []
    directories: set[Path] = set()
    for r in sorted(result.files, key=lambda r: r.path):
        try:
            text = Path(r.path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        directories.add(Path(r.path).parent)
        out += [(r.path, line, name) for name, line in schema_declarations(text) if norm(name) not in names]
    for directory in sorted(directories):
        for data_file in sorted(
            [*directory.glob("*.json"), *directory.glob("*.yaml"), *directory.glob("*.yml")]
        ):
            try:
                if data_file.stat().st_size > MAX_DECLARATION_BYTES:
                    continue
                text = data_file.read_text(encoding="utf-8", errors="replace")
                data = json.loads(text) if data_file.suffix == ".json" else yaml.safe_load(text)
            except (OSError, ValueError, yaml.YAMLError):
                continue
            out += [(str(data_file), 1, name) for name in dict.fromkeys(data_declarations(data))
                    if norm(name) not in names]
    return out


MAX_CANDIDATES = 5
MAX_CANDIDATE_FILES = 2000  # a run that found nothing in more files than this is not read again


MAX_CANDIDATE_BYTES = 4 * 1024 * 1024  # the candidates' second read: a file larger is left out


def _candidate_files(result: RunResult) -> list[FileResult]:
    linted = [r for r in result.files
              if r.tools is not None and not any(f.code.startswith("TL9") for f in r.findings)]
    return sorted(linted, key=lambda r: r.path)[:MAX_CANDIDATE_FILES]


def find_candidates(result: RunResult) -> None:
    """Each file's `candidates` that the results cache did not hold: the file read again and parsed (the
    rare path: a run that found no tool)."""
    missing = [r for r in _candidate_files(result) if r.candidates is None]
    if not missing:
        return
    import ast
    from pathlib import Path

    from toollint.analysis.discovery import tool_candidates
    from toollint.regular import read_regular

    for r in missing:
        try:  # a file the engine could not parse (too deep, too large) is not read again
            tree = ast.parse(read_regular(Path(r.path), MAX_CANDIDATE_BYTES))
        except OSError:
            continue  # looked for again next time
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            r.candidates = []
            continue
        r.candidates = tool_candidates(tree, r.module_name)


def write_candidates(result: RunResult, stream: TextIO) -> None:
    """When a run found no tool: the classes and functions that look most like tools, with why, and the
    configuration line that would take each."""
    find_candidates(result)
    found = [(r.path, c) for r in _candidate_files(result) for c in r.candidates or []]
    if not found:
        return
    found.sort(key=lambda pc: -pc[1].score)
    stream.write("toollint: the classes and functions that look most like tools:\n")
    stream.writelines(
        f"  {path}:{c.line}: {c.qualname}: {c.why}; to take it, in [tool.toollint]: {c.config}\n"
        for path, c in found[:MAX_CANDIDATES]
    )


def write_graders(result: RunResult, stream: TextIO) -> None:
    """`--show-graders`: each grader with what its verdict rests on (its basis) and why."""
    rows = [(r.path, g) for r in sorted(result.files, key=lambda r: r.path) for g in r.graders or []]
    for path, grader in rows:
        mark = " TL401" if grader.ungrounded else ""
        stream.write(f"{path}:{grader.line}: {grader.qualname} [{grader.basis}]{mark} {grader.why}; "
                     f"found as {grader.found_by}\n")
    if not rows:
        stream.write("toollint: no graders found: name them with `graders` in [tool.toollint] "
                     "(\"pkg.module:function\")\n")
    ungrounded = sum(g.ungrounded for _, g in rows)
    by_basis = Counter(g.basis for _, g in rows)
    split = ", ".join(f"{n} {basis}" for basis, n in sorted(by_basis.items()))
    stream.write(f"{len(rows)} grader{'s' if len(rows) != 1 else ''} ({ungrounded} ungrounded)"
                 f"{': ' + split if split else ''}\n")
