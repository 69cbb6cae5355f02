"""What the one gateway to the benchmark's interpreter costs, side by side with the ad-hoc `python -c`
scripts it replaced, in one run.

    python bench/gateway.py [--repeat N] [--python PATH]

Prints, for each question, the median seconds of the old way (a `python -c` subprocess) and of the
gateway (a plain host worker: `locate_package`, `evaluate`), and their ratio:

- locate a package (`importlib.util.find_spec`, nothing imported): one fresh process each way, and N
  questions to one warm worker against N subprocesses;
- AgentDojo's registered tools (the validation harness's question): the old script imported
  `agentdojo.task_suite` whole; the profile's host-side helper skips the LLM SDKs the way its adapter
  does.

Without --python it uses (and on first use creates) the cached agentdojo 0.1.35 venv the tests use.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from _corpora import ensure_agentdojo_venv
from toollint.dynamic.protocol import evaluate, locate_in, locate_package, plain_worker

from toollint.profiles import get_profile

OLD_LOCATE = ("import importlib.util, os, sys; s = importlib.util.find_spec(sys.argv[1]); "
              "print(os.path.dirname(s.origin) if s and s.origin else '')")
OLD_REGISTERED = """
import json
from agentdojo.task_suite import get_suites
print(json.dumps(sorted({t.name for s in get_suites("v1").values() for t in s.tools})))
"""


def median_seconds(fn: Callable[[], object], repeat: int) -> tuple[float, object]:
    times, value = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), value


def row(label: str, old: float, new: float) -> None:
    print(f"{label:48s} python -c {old:7.3f} s   gateway {new:7.3f} s   gateway/old {new / old:5.2f}x")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs per measurement (the median is printed)")
    parser.add_argument("--python", help="interpreter of a venv with agentdojo 0.1.35")
    parser.add_argument("--questions", type=int, default=20, help="questions for the warm-worker row")
    args = parser.parse_args()
    python = args.python or str(ensure_agentdojo_venv())
    package = str(get_profile("agentdojo").package)

    def old_locate() -> str:
        return subprocess.run([python, "-c", OLD_LOCATE, package], capture_output=True, text=True,
                              check=True).stdout.strip()

    old, found_old = median_seconds(old_locate, args.repeat)
    new, found_new = median_seconds(lambda: str(locate_package(python, package)), args.repeat)
    assert found_old == found_new, (found_old, found_new)
    row("locate a package, fresh process", old, new)

    def old_many() -> None:
        for _ in range(args.questions):
            old_locate()

    def new_many() -> None:
        with plain_worker(python) as worker:
            for _ in range(args.questions):
                locate_in(worker, package)

    old, _ = median_seconds(old_many, max(1, args.repeat // 2))
    new, _ = median_seconds(new_many, max(1, args.repeat // 2))
    row(f"locate a package {args.questions} times, one warm worker", old, new)

    def old_registered() -> list[str]:
        out = subprocess.run([python, "-c", OLD_REGISTERED], capture_output=True, text=True, check=True)
        return list(__import__("json").loads(out.stdout.strip().splitlines()[-1]))

    adapter = get_profile("agentdojo").adapter
    old, names_old = median_seconds(old_registered, args.repeat)
    new, names_new = median_seconds(
        lambda: evaluate(python, "registered_tools('v1')", module=adapter), args.repeat
    )
    assert names_old == names_new, "the two ways disagree on the registered tools"
    row(f"AgentDojo's registered tools ({len(names_new)})", old, new)  # type: ignore[arg-type]
    return 0


if __name__ == "__main__":
    sys.exit(main())
