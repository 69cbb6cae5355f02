"""What discovery made of a run: `--show-tools`, and the counts the run summary prints.

`write_tools` lists every tool found (file, line, name, whether it writes and why, how it was
recognised), then every function that looks like a tool but was not taken, with why; a run that
found no tool at all says so and how to point toollint at them (`tool-decorators`, `tools`,
`tool-classes`, `state-roots`). `tool_counts` is the "N files, T tools (W writers)" part of the
summary line.
"""

from __future__ import annotations

from typing import TextIO

from toollint.engine import RunResult

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
    if not rows:
        stream.write(f"toollint: {NO_TOOLS_HINT}\n")
    stream.write(f"{tool_counts(result)}\n")
