"""What discovery finds with no configuration, per code base, beside a count made by hand.

    python bench/discovery.py [--only NAME] [--list]
    python bench/discovery.py --share PATH [--runs 5]

Each code base of `shared/corpus` and each snapshot of `shared/benchmarks` is linted as a new user
would (`toollint check --isolated`: no configuration at all), and for each the script prints the
tools, writers and graders found beside the hand count kept in `bench/discovery_counts.json` (each
count there says how it was made: by reading which files, or by which shape counted). Writers are
counted by name: `writer_names` lists every tool read by hand and found to change the benchmark's or
the world's state (files, databases, in-memory state a grader or a later call sees, external
services), each as `qualname` or, where a qualname repeats across files, `path/in/target.py::qualname`;
`judgements` gives the reason where the call was not plain (for writers and for readers alike). The
script compares the name sets: a hand writer discovery does not class as a writer is printed as
missed, and a tool discovery classes as a writer that is not on the hand list is printed as a reader
counted as a writer. The targets (issue 22): tools at the hand count, writers found at least 95% of
the hand list, and no reader counted as a writer. `--list` prints each tool found.

`--share PATH` prints discovery's share of a static run on PATH (issue 22: at most 10% on tau2's
`src/`): alternately, the static run as its user starts it (`toollint check --isolated --no-cache
--jobs 1 PATH`, a fresh process: a run in this process would reuse the trees and memos of the last)
and discovery alone in this process (tools and graders of every module, from the parsed trees, its
package memos cleared, the modules' bytes handed over as the engine hands over what it read: the
reads of the linted modules are the engine's, whoever makes them first), each `--runs` times; the
median of each and their ratio.

The shared folders are found as `bench/recall.py` finds them (the nearest `shared/` above the
project, or TOOLLINT_CORPUS / TOOLLINT_BENCHMARKS); a code base that is absent is named and skipped.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from toollint.engine import RunResult, lint_paths
from toollint.settings import Settings

COUNTS = Path(__file__).with_name("discovery_counts.json")


@dataclass(frozen=True)
class HandCount:
    name: str
    target: str  # relative to the shared folder
    tools: int | None
    writer_names: tuple[str, ...] | None  # None: writers not counted by hand
    graders: int | None
    how: str
    judgements: tuple[tuple[str, str], ...] = ()  # (tool, why it is or is not a writer)

    @property
    def writers(self) -> int | None:
        return None if self.writer_names is None else len(self.writer_names)


@dataclass(frozen=True)
class FoundTool:
    path: str  # relative to the code base's folder
    qualname: str
    writes: bool
    declared_only: bool = False  # a writer by its declaration alone: the analysis sees no write


@dataclass(frozen=True)
class WriterComparison:
    """The writers discovery found beside the hand list, name by name."""

    found: int  # tools discovery classes as writers
    matched: int  # hand writers discovery classes as writers
    missed: tuple[str, ...]  # hand writers discovery does not class as writers
    not_tools: tuple[str, ...]  # hand writers discovery does not find as tools at all
    readers_as_writers: tuple[str, ...]  # found writers the hand list does not hold, by their code
    declared_readers: tuple[str, ...]  # found writers the hand list does not hold, by declaration alone


def _matches(entry: str, tool: FoundTool) -> bool:
    """`qualname` matches a tool of that qualname anywhere; `path::qualname` the one in that file."""
    path, sep, qualname = entry.rpartition("::")
    if not sep:
        return tool.qualname == entry
    return tool.qualname == qualname and (tool.path == path or tool.path.endswith("/" + path))


def _key(tool: FoundTool, tools: list[FoundTool]) -> str:
    """How a found tool is named in the report: its qualname, with its file when the qualname repeats."""
    repeated = sum(t.qualname == tool.qualname for t in tools) > 1
    return f"{tool.path}::{tool.qualname}" if repeated else tool.qualname


def compare_writers(tools: list[FoundTool], hand: tuple[str, ...]) -> WriterComparison:
    writers = [t for t in tools if t.writes]
    missed = tuple(e for e in hand if not any(_matches(e, t) for t in writers))
    not_tools = tuple(e for e in missed if not any(_matches(e, t) for t in tools))
    extra = [t for t in writers if not any(_matches(e, t) for e in hand)]
    # A tool declared a writer whose code writes nothing is TL101's phantom, not the analysis seeing a
    # write that is not there: reported apart.
    return WriterComparison(len(writers), len(hand) - len(missed), missed, not_tools,
                            tuple(_key(t, tools) for t in extra if not t.declared_only),
                            tuple(_key(t, tools) for t in extra if t.declared_only))


def shared_dir() -> Path:
    if os.environ.get("TOOLLINT_CORPUS"):
        return Path(os.environ["TOOLLINT_CORPUS"]).parent
    project = Path(__file__).resolve().parents[1]
    for above in project.parents:
        if (above / "shared" / "corpus").is_dir():
            return above / "shared"
    return project.parent / "shared"


def load_counts() -> list[HandCount]:
    raw = json.loads(COUNTS.read_text())
    out = []
    for name, c in raw.items():
        names = c.get("writer_names")
        out.append(HandCount(name, c["target"], c.get("tools"), None if names is None else tuple(names),
                             c.get("graders"), c["how"], tuple(c.get("judgements", {}).items())))
    return out


def _relative(path: str, target: Path) -> str:
    p = Path(path)
    return p.relative_to(target).as_posix() if p.is_relative_to(target) else p.as_posix()


def _ratio(found: int, hand: int | None) -> str:
    if hand is None:
        return f"{found:>5} /   -  "
    pct = f"{100 * found / hand:.0f}%" if hand else "-"
    return f"{found:>5} / {hand:<4} {pct:>5}"


def share(target: Path, runs: int) -> int:
    """Discovery's share of a static run on `target`, both timed in this process, alternately."""
    import ast
    import statistics
    import subprocess
    import time

    from toollint.analysis.discovery import discover
    from toollint.analysis.dispatch import package_declarations, package_dispatches, package_texts
    from toollint.analysis.graders import discover_graders
    from toollint.analysis.resolver import ModuleSource
    from toollint.files import guess_module_name
    from toollint.sources import keep_module

    files = sorted(target.rglob("*.py")) if target.is_dir() else [target]
    data = {str(f): f.read_bytes() for f in files}
    sources = [(str(f), f.read_text(encoding="utf-8", errors="replace")) for f in files]
    # the module names are worked out by the engine for every file whatever it finds: not discovery's cost
    trees = [(path, text, ast.parse(text), guess_module_name(path)) for path, text in sources]
    settings = Settings()

    def discovery() -> None:
        package_dispatches.cache_clear()
        package_declarations.cache_clear()
        package_texts.cache_clear()
        for path, text, tree, name in trees:
            discover(tree, settings, name, ModuleSource(path, name, tree), text)
            discover_graders(tree, settings, name, text)

    static_run = [sys.executable, "-m", "toollint", "check", "--isolated", "--no-cache", "--jobs", "1",
                  "--quiet", str(target)]
    whole: list[float] = []
    alone: list[float] = []
    for _ in range(runs + 1):  # the first of each is a warm-up
        start = time.perf_counter()
        subprocess.run(static_run, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        whole.append(time.perf_counter() - start)
        for path, content in data.items():
            keep_module(path, content)
        start = time.perf_counter()
        discovery()
        alone.append(time.perf_counter() - start)
    w, a = statistics.median(whole[1:]), statistics.median(alone[1:])
    print(f"{target}: {len(files)} files; static run {w:.3f} s, discovery {a:.3f} s (median of {runs}); "
          f"discovery / static run = {a / w:.1%}")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", help="only the code base whose name contains this")
    ap.add_argument("--list", action="store_true", help="print each tool found")
    ap.add_argument("--share", type=Path, metavar="PATH", help="discovery's share of a static run on PATH")
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    if args.share is not None:
        return share(args.share, args.runs)
    shared = shared_dir()
    settings = Settings()
    print(f"{'code base':<22} {'files':>5}  {'tools found/hand':>18}  {'writers found/hand':>18}  "
          f"{'graders found/hand':>18}")
    problems = 0
    for count in load_counts():
        if args.only and args.only not in count.name:
            continue
        target = shared / count.target
        if not target.exists():
            print(f"{count.name:<22} skipped: no {target}")
            continue
        result: RunResult = lint_paths([target], settings)
        tools = [(r.path, t) for r in result.files for t in r.tools or []]
        graders = [g for r in result.files for g in r.graders or []]
        # (`why` is the only mark a tool fact carries of a writer by declaration alone)
        found = [FoundTool(_relative(path, target), t.qualname, t.writes,
                           "writes nothing the analysis" in t.why) for path, t in tools]
        hand = count.writer_names
        cmp = compare_writers(found, hand or ())
        writers = _ratio(cmp.matched, count.writers) if hand is not None else _ratio(cmp.found, None)
        print(f"{count.name:<22} {result.file_count:>5}  {_ratio(len(tools), count.tools):>18}  "
              f"{writers:>18}  {_ratio(len(graders), count.graders):>18}")
        if hand is not None:
            print(f"    {'':<18} readers counted as writers: {len(cmp.readers_as_writers)} "
                  f"(found {cmp.found} writers)")
            for q in cmp.missed:
                print(f"    writer missed: {q}{' (not found as a tool)' if q in cmp.not_tools else ''}")
            for q in cmp.readers_as_writers:
                print(f"    reader counted as a writer: {q}")
            for q in cmp.declared_readers:
                print(f"    declared a writer, writes nothing (TL101's phantom, not counted): {q}")
            problems += len(cmp.readers_as_writers)
            if len(hand) and cmp.matched < 0.95 * len(hand):
                problems += 1
        if args.list:
            for path, t in tools:
                print(f"    {_relative(path, target)}:{t.line}: {t.qualname} "
                      f"[{'writes' if t.writes else 'reads'}] {t.found_by}")
    print("\nhow each hand count was made: bench/discovery_counts.json (`how`)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
