"""How `--fix --unsafe-fixes` scales with the number of fixes in one file (issue 17, item 8).

A file of N tools, each with a commented-out guard (TL102, whose fix uncomments it): the time to
compute and apply every fix, as toollint does it (one parse of the fixed file, each guard checked on
its own), and, side by side in the same run, as it used to (each guard's fix checked by re-parsing
the whole file with libcst, then the whole result parsed again for every fix dropped). Prints the
median of several runs per N and the ratio old/new.

    python bench/fix_speed.py [--sizes 50,100,200,400] [--runs 3] [--old-up-to 200]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

TOOL = '''

def update_{i}(account: Annotated[dict, Depends("bank_account")], amount: float | None = None) -> str:
    """Update record {i}. The amount must be positive."""
    # if amount is not None and amount < 0:
    #     raise ValueError("amount must be positive")
    account["records"][{i}] = amount
    return "updated"
'''


def many_guards(count: int) -> str:
    """A benchmark module of `count` AgentDojo-style tools, each with one commented-out guard."""
    head = "from typing import Annotated\n\nfrom agentdojo.functions_runtime import Depends\n"
    return head + "".join(TOOL.format(i=i) for i in range(count))


def new_way(source: str) -> str:
    from toollint.engine import lint_source
    from toollint.fixes import fix_source
    from toollint.settings import Settings

    findings = lint_source(source, "tools.py", Settings(select=["TL102"])).findings
    return fix_source("tools.py", source, findings, unsafe=True).fixed


def old_way(source: str) -> str:
    """The algorithm before batching: every guard's fix re-parses the whole file with libcst."""
    import libcst

    from toollint.engine import lint_source
    from toollint.fixes import apply_edits, uncomment_guard
    from toollint.settings import Settings

    def parses(text: str) -> bool:
        try:
            libcst.parse_module(text)
        except (libcst.ParserSyntaxError, SyntaxError, ValueError):
            return False
        return True

    findings = lint_source(source, "tools.py", Settings(select=["TL102"])).findings
    fixes = []
    for f in findings:
        fix = uncomment_guard(f, source)
        if fix is not None and parses(apply_edits(source, fix.edits)):  # the old per-guard check
            fixes.append(fix)
    fixed = apply_edits(source, [e for fix in fixes for e in fix.edits])
    while fixes and not parses(fixed):
        fixes.pop()
        fixed = apply_edits(source, [e for fix in fixes for e in fix.edits])
    return fixed


def median_seconds(work: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="50,100,200,400")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--old-up-to", type=int, default=200, help="largest N to time the old way on (it is quadratic)"
    )
    args = parser.parse_args()
    print(f"{'guards':>7} {'new s':>8} {'old s':>8} {'old/new':>8}")
    for n in (int(x) for x in args.sizes.split(",")):
        source = many_guards(n)
        new = median_seconds(lambda source=source: new_way(source), args.runs)
        if n <= args.old_up_to:
            assert old_way(source) == new_way(source), "both ways must give the same file"
            old = median_seconds(lambda source=source: old_way(source), max(1, args.runs // 3))
            print(f"{n:>7} {new:>8.3f} {old:>8.3f} {old / new:>8.1f}")
        else:
            print(f"{n:>7} {new:>8.3f} {'-':>8} {'-':>8}")


if __name__ == "__main__":
    main()
