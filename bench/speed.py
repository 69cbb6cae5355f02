"""Speed and memory of `toollint check` (the static half), side by side with other tools.

Default (issue 26): paired against `ruff check --select ALL --no-cache` on tau2-bench's `src/`, each
code base of `../shared/corpus/` and the standard library of the interpreter running this script,
toollint cold (an empty results cache) and warm (its cache from the cold run, nothing changed):

    python bench/speed.py [--runs 5] [--trees tau2,corpus,stdlib] [--jobs 0] [--before-python PY]

Each round runs toollint cold, ruff, toollint warm, in turn, so a change in the machine's load falls
on all three alike; a ratio is taken within each round and the median over the rounds is quoted,
for wall time and for CPU time (user + system of the process and its workers: steadier on a shared
machine). Targets: cold / ruff at most 1.0 on tau2 src, 1.5 on each corpus code base, 0.5 on the
standard library; warm / cold at most 0.2 on tau2 src. Peak RSS is the largest single process.
"python/ruff wall" is the bare interpreter's start (`python -c pass`, site included) over ruff's whole
run, measured in the same rounds: the floor under any toollint run's ratio on that tree. "parse/ruff
wall" is a bare interpreter that only reads and `ast.parse`s the files toollint checks, shared out over
the CPUs by forked copies as toollint does (`PARSE_FLOOR`): the floor under any linter that builds
CPython's syntax trees, before it imports or analyses anything.
With `--before-python PY` each round also runs that interpreter's (older) toollint cold, and the
table adds its ratio to ruff and the cold/before ratio.

`--flake8` runs the older comparison instead (issue 2): flake8, flake8 + flake8-bugbear, bandit and a
bare `ast.parse` of every file, over the installed agentdojo package and the standard library's
email + json + http packages, plus one ~800-line tool file (the pre-commit case):

    python bench/speed.py --flake8 [--agentdojo PATH] [--runs 5] [--skip-venvs] [--before-python PY]

Every figure is the wall time of a fresh process (interpreter start included), after one warm-up;
peak RSS is the child's `ru_maxrss`. flake8 and flake8 + bugbear run from cached venvs of their own
(toollint's environment would load toollint's own flake8 plugin too); bandit runs from this
environment. Targets (issue 2): toollint / flake8+bugbear <= 1.0 (aim 0.5), toollint / ast.parse
<= 6, the 800-line file < 0.15 s, peak RSS < 100 MiB.

`--before-python PY` adds the same toollint rows run by another interpreter (a venv with an older
toollint installed, e.g. from a `git worktree` of main's merge-base), so a change's cost is quoted
as two ratios to the same anchors measured in one run (issue 13: within 10%).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _corpora import (  # after the path tweak above
    VenvError,
    ensure_agentdojo_venv,
    ensure_venv,
    package_dir,
    stdlib_corpus,
)

PY = sys.executable
# Runs one command and reports its peak RSS: RUSAGE_CHILDREN of a fresh wrapper holds only that child.
MEASURE = (
    "import resource, subprocess, sys, time; t = time.perf_counter(); "
    "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL); "
    "r = resource.getrusage(resource.RUSAGE_CHILDREN); "
    "print(time.perf_counter() - t, r.ru_maxrss, r.ru_utime + r.ru_stime)"
)
PARSE_ALL = (
    "import ast, sys\n"
    "for p in open(sys.argv[1]).read().splitlines():\n"
    "    try: ast.parse(open(p, 'rb').read(), p)\n"
    "    except (SyntaxError, ValueError): pass\n"
)


@dataclass
class Timing:
    label: str
    median: float
    low: float
    high: float
    rss_mib: float
    cpu: float = 0.0  # least user + system CPU time of the runs (steadier than wall time on a busy machine)


def bench_env(pycache: Path) -> dict[str, str]:
    """Bytecode cached as on a user's machine (this sandbox sets PYTHONDONTWRITEBYTECODE, which would
    make every run recompile toollint's editable sources but not the venvs' installed ones); the
    cache goes to a temporary prefix, not into the source tree."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(pycache)
    return env


ENV: dict[str, str] = dict(os.environ)


def _once(cmd: list[str]) -> tuple[float, float, float]:
    # Not from the checkout: `python -m toollint` there imports the checkout's toollint, whichever
    # interpreter runs it (--before-python's too), and ruff would read the project's configuration.
    proc = subprocess.run([PY, "-c", MEASURE, *cmd], capture_output=True, text=True, check=True, env=ENV,
                          cwd=tempfile.gettempdir())
    out = proc.stdout.split()
    return float(out[0]), int(out[1]) / 1024, float(out[2])  # ru_maxrss is KiB on Linux


def _timing(label: str, samples: list[tuple[float, float, float]]) -> Timing:
    walls = [s[0] for s in samples]
    return Timing(label, statistics.median(walls), min(walls), max(walls), max(s[1] for s in samples),
                  min(s[2] for s in samples))


def measure(label: str, cmd: list[str], runs: int) -> Timing:
    _once(cmd)  # warm-up: file cache, .pyc files
    return _timing(label, [_once(cmd) for _ in range(runs)])


def measure_pair(first: tuple[str, list[str]], second: tuple[str, list[str]], runs: int) -> list[Timing]:
    """Two commands run alternately, so a change in the machine's load falls on both alike."""
    for _, cmd in (first, second):
        _once(cmd)
    samples: tuple[list[tuple[float, float, float]], list[tuple[float, float, float]]] = ([], [])
    for _ in range(runs):
        samples[0].append(_once(first[1]))
        samples[1].append(_once(second[1]))
    return [_timing(first[0], samples[0]), _timing(second[0], samples[1])]


def python_files(paths: list[Path]) -> list[Path]:
    return sorted(p for root in paths for p in (root.rglob("*.py") if root.is_dir() else [root]))


def linters(skip_venvs: bool) -> dict[str, list[str]]:
    """Command prefixes of the anchors; each is run as `prefix + paths`."""
    found: dict[str, list[str]] = {}
    if not skip_venvs:
        try:
            found["flake8"] = [
                str(ensure_venv("venv-bench-flake8", ["flake8"])),
                "-m",
                "flake8",
                "--isolated",
            ]
            bugbear = ensure_venv("venv-bench-flake8-bugbear", ["flake8", "flake8-bugbear"])
            found["flake8 + bugbear"] = [str(bugbear), "-m", "flake8", "--isolated"]
        except VenvError as exc:
            print(f"(flake8 venvs unavailable: {str(exc).splitlines()[0]})")
    if shutil.which("bandit") or _has_module("bandit"):
        found["bandit"] = [PY, "-m", "bandit", "-q", "-r"]
    return found


def _has_module(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None


BEFORE: list[str] = []  # another interpreter whose toollint is measured beside this one


def toollint(jobs: int, python: str = PY) -> list[str]:
    # `-P`: another interpreter's toollint, not this checkout's (`-m` would put the working directory first)
    isolated = ["-P"] if python != PY else []
    return [python, *isolated, "-m", "toollint", "check", "--isolated", "--exit-zero", "-q",
            "--jobs", str(jobs)]


def tool_file(agentdojo: Path, directory: Path, lines: int = 800) -> Path:
    """About `lines` lines of real tool code: agentdojo's tool modules, concatenated."""
    text: list[str] = []
    for module in sorted((agentdojo / "default_suites" / "v1" / "tools").glob("*.py")):
        text += module.read_text().splitlines()
        if len(text) >= lines:
            break
    path = directory / "tools_800.py"
    path.write_text("\n".join(text[:lines]) + "\n")
    return path


def _now_and_before(label: str, jobs: int, targets: list[str], runs: int) -> list[Timing]:
    """This toollint, and (with --before-python) the older one, measured alternately."""
    now = (label, [*toollint(jobs), *targets])
    if not BEFORE:
        return [measure(*now, runs)]
    return measure_pair(now, (f"before: {label}", [*toollint(jobs, BEFORE[0]), *targets]), runs)


def run_corpus(name: str, paths: list[Path], anchors: dict[str, list[str]], runs: int, tmp: Path) -> None:
    files = python_files(paths)
    listing = tmp / f"{name}.txt"
    listing.write_text("\n".join(map(str, files)))
    line_count = sum(len(p.read_bytes().splitlines()) for p in files)
    print(f"\n## {name}: {len(files)} files, {line_count:,} lines")
    targets = [str(p) for p in paths]
    rows = [
        measure("ast.parse of every file", [PY, "-c", PARSE_ALL, str(listing)], runs),
        *_now_and_before("toollint --jobs 1", 1, targets, runs),
        measure("toollint --jobs 2", [*toollint(2), *targets], runs),
        # where the time goes: the engine alone (read, decode, parse, noqa), and without TL102's tokenize
        measure("  engine only (--select TL9)", [*toollint(1), "--select", "TL9", *targets], runs),
        measure("  --ignore TL102", [*toollint(1), "--ignore", "TL102", *targets], runs),
        *(measure(label, [*prefix, *targets], runs) for label, prefix in anchors.items()),
    ]
    report(rows)


def report(rows: list[Timing]) -> None:
    by_label = {r.label: r for r in rows}
    print(f"{'command':<30} {'median s':>9} {'min-max s':>13} {'peak RSS MiB':>13} {'min CPU s':>10}")
    for r in rows:
        print(f"{r.label:<30} {r.median:9.3f} {r.low:6.3f}-{r.high:<6.3f} {r.rss_mib:13.1f} {r.cpu:10.3f}")
    best = min((by_label[k] for k in by_label if k.startswith("toollint")), key=lambda r: r.median)
    before = by_label.get("before: toollint --jobs 1") or by_label.get("before: toollint")
    if "  engine only (--select TL9)" in by_label and "ast.parse of every file" in by_label:
        engine = by_label["  engine only (--select TL9)"].median / by_label["ast.parse of every file"].median
        print(f"ratio engine only / ast.parse of every file: {engine:.2f}")
    for anchor in ("flake8 + bugbear", "flake8", "bandit", "ast.parse of every file"):
        if anchor in by_label:
            print(f"ratio {best.label} / {anchor}: {best.median / by_label[anchor].median:.2f}")
    now = by_label.get("toollint --jobs 1") or by_label.get("toollint")
    if before is not None and now is not None:
        for anchor in ("flake8 + bugbear",):
            if anchor in by_label:
                base = by_label[anchor].median
                print(f"ratio {now.label} / {anchor}: {now.median / base:.2f} now, "
                      f"{before.median / base:.2f} before ({now.median / before.median:.2f}x); "
                      f"CPU time {now.cpu / before.cpu:.2f}x before")


def flake8_main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--flake8", action="store_true")
    parser.add_argument("--agentdojo", type=Path, help="an installed agentdojo package directory")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--skip-venvs", action="store_true", help="no flake8 venvs (offline)")
    parser.add_argument(
        "--before-python", help="an interpreter with an older toollint, measured beside this one"
    )
    args = parser.parse_args(argv)
    agentdojo = args.agentdojo.resolve() if args.agentdojo is not None else None  # the runs start in /tmp
    if agentdojo is None:
        try:
            agentdojo = package_dir(ensure_agentdojo_venv(), "agentdojo")
        except (VenvError, subprocess.CalledProcessError) as exc:
            print(f"error: no agentdojo: {str(exc).splitlines()[0]}; pass --agentdojo PATH", file=sys.stderr)
            return 2
    anchors = linters(args.skip_venvs)
    BEFORE[:] = [args.before_python] if args.before_python else []
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
    print(f"median of {args.runs} after a warm-up; wall time of a fresh process")
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        ENV.clear()
        ENV.update(bench_env(tmp / "pycache"))
        run_corpus("agentdojo", [agentdojo], anchors, args.runs, tmp)
        run_corpus("stdlib email+json+http", stdlib_corpus(), anchors, args.runs, tmp)
        single = tool_file(agentdojo, tmp)
        n_lines = len(single.read_text().splitlines())
        print(f"\n## one tool file ({n_lines} lines of agentdojo tool code), interpreter start included")
        rows = [
            *_now_and_before("toollint", 1, [str(single)], args.runs),
            measure("  --ignore TL102", [*toollint(1), "--ignore", "TL102", str(single)], args.runs),
        ]
        rows += [measure(label, [*prefix, str(single)], args.runs) for label, prefix in anchors.items()]
        report(rows)
        start = time.perf_counter()
        out = subprocess.run(
            [*toollint(1), "--output-format", "json", str(single)],
            capture_output=True,
            text=True,
            check=False,
            env=ENV,
        )
        findings = json.loads(out.stdout or "[]")
        print(
            f"(toollint reports {len(findings)} findings on it; one run {time.perf_counter() - start:.3f} s)"
        )
    return 0


# --------------------------------------------------------------------------------------------------
# Issue 26: cold and warm against ruff


SHARED = Path(__file__).resolve().parents[2] / "shared"  # ../shared beside the checkout


def ruff_command() -> list[str] | None:
    found = Path(PY).with_name("ruff")
    ruff = str(found) if found.is_file() else shutil.which("ruff")
    return [ruff, "check", "--select", "ALL", "--no-cache", "--exit-zero", "-q"] if ruff else None


def trees(which: list[str]) -> list[tuple[str, Path]]:
    import sysconfig

    out: list[tuple[str, Path]] = []
    if "tau2" in which:
        out.append(("tau2-bench src/", SHARED / "benchmarks" / "tau2-bench" / "src"))
    if "corpus" in which:
        corpus = SHARED / "corpus"
        out += (
            [(f"corpus/{d.name}", d) for d in sorted(corpus.iterdir()) if d.is_dir()]
            if corpus.is_dir()
            else []
        )
    if "stdlib" in which:
        out.append((f"stdlib {sys.version.split()[0]}", Path(sysconfig.get_paths()["stdlib"])))
    return [(name, path) for name, path in out if path.is_dir()]


# Read and parse every file named in argv[1] (one per line), over os.cpu_count() processes: this one and
# forked copies, each taking every n-th file. Nothing else is imported.
PARSE_FLOOR = """
import ast, os, sys, warnings
warnings.simplefilter("ignore")
names = open(sys.argv[1], encoding="utf-8").read().splitlines()
n = os.cpu_count() or 1
share = 0
for share in range(n - 1, 0, -1) if sys.platform.startswith("linux") else ():
    if os.fork() == 0:
        break
else:
    share = 0
for name in names[share::n]:
    try:
        ast.parse(open(name, "rb").read())
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        pass
if share:
    os._exit(0)
while True:
    try:
        os.wait()
    except ChildProcessError:
        break
"""


@dataclass
class Round:
    cold: tuple[float, float, float]  # wall s, peak MiB, cpu s
    ruff: tuple[float, float, float]
    warm: tuple[float, float, float]
    before: tuple[float, float, float] = (1.0, 0.0, 1.0)  # the --before-python toollint, cold
    python: tuple[float, float, float] = (0.0, 0.0, 0.0)  # the bare interpreter: `python -c pass`
    parse: tuple[float, float, float] = (0.0, 0.0, 0.0)  # a bare interpreter parsing the files (PARSE_FLOOR)


def _median_ratio(rounds: list[Round], a: str, b: str, index: int) -> float:
    return statistics.median(getattr(r, a)[index] / getattr(r, b)[index] for r in rounds)


def compare_with_ruff(
    name: str, tree: Path, ruff: list[str], runs: int, jobs: int, cache_dir: Path
) -> list[str]:
    from toollint.files import collect_files
    from toollint.settings import Settings

    files = collect_files([tree], Settings()).files  # what toollint checks (the default excludes apply)
    toollint_cmd = [*toollint(jobs), str(tree)]
    ENV["TOOLLINT_CACHE_DIR"] = str(cache_dir)

    def cold(cmd: list[str] = toollint_cmd) -> tuple[float, float, float]:
        shutil.rmtree(cache_dir, ignore_errors=True)
        return _once(cmd)

    before_cmd = [*toollint(jobs, BEFORE[0]), str(tree)] if BEFORE else []

    def before() -> tuple[float, float, float]:
        return cold(before_cmd) if before_cmd else (1.0, 0.0, 1.0)

    bare = [PY, "-c", "pass"]  # the floor under any toollint run: the interpreter starting, site included
    listing = cache_dir.with_name("files.txt")
    listing.write_text("".join(f"{path}\n" for path in files), encoding="utf-8")
    parse = [PY, "-c", PARSE_FLOOR, str(listing)]
    cold(), _once([*ruff, str(tree)]), _once(toollint_cmd), before()  # warm-up: file cache, .pyc files
    rounds = [Round(cold(), _once([*ruff, str(tree)]), _once(toollint_cmd), before(), _once(bare),
                    _once(parse)) for _ in range(runs)]
    med = {k: statistics.median(getattr(r, k)[0] for r in rounds) for k in ("cold", "ruff", "warm")}
    peak = {k: max(getattr(r, k)[1] for r in rounds) for k in ("cold", "ruff", "warm")}
    pairs = (("before", "ruff", 0), ("before", "ruff", 2), ("cold", "before", 0), ("cold", "before", 2))
    then = [f"{_median_ratio(rounds, *pair):.2f}" for pair in pairs] if before_cmd else []
    return [
        name, str(len(files)), f"{med['cold']:.2f}", f"{med['warm']:.2f}", f"{med['ruff']:.2f}",
        f"{_median_ratio(rounds, 'cold', 'ruff', 0):.2f}", f"{_median_ratio(rounds, 'cold', 'ruff', 2):.2f}",
        f"{_median_ratio(rounds, 'warm', 'cold', 0):.2f}", f"{_median_ratio(rounds, 'warm', 'cold', 2):.2f}",
        f"{peak['cold']:.0f}", f"{peak['warm']:.0f}", f"{peak['ruff']:.0f}",
        f"{_median_ratio(rounds, 'python', 'ruff', 0):.2f}",
        f"{_median_ratio(rounds, 'parse', 'ruff', 0):.2f}", *then,
    ]


def ruff_main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="toollint cold and warm, paired against ruff --select ALL")
    parser.add_argument("--runs", type=int, default=5, help="rounds (cold, ruff, warm) after one warm-up")
    parser.add_argument("--trees", default="tau2,corpus,stdlib", help="any of tau2, corpus, stdlib")
    parser.add_argument("--jobs", type=int, default=0, help="toollint's --jobs (default 0: one per CPU)")
    parser.add_argument("--before-python", help="an interpreter with an older toollint (run cold each round)")
    args = parser.parse_args(argv)
    BEFORE[:] = [args.before_python] if args.before_python else []
    ruff = ruff_command()
    if ruff is None:
        print("error: no ruff (pip install ruff)", file=sys.stderr)
        return 2
    chosen = trees(args.trees.split(","))
    if not chosen:
        print(f"error: none of {args.trees} found under {SHARED}", file=sys.stderr)
        return 2
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} "
          f"at the start; median of {args.runs} rounds (toollint cold, ruff, toollint warm"
          f"{', the before toollint cold' if BEFORE else ''}) after a warm-up")
    header = ["tree", "files", "cold s", "warm s", "ruff s", "cold/ruff wall", "cold/ruff cpu",
              "warm/cold wall", "warm/cold cpu", "cold MiB", "warm MiB", "ruff MiB", "python/ruff wall",
              "parse/ruff wall"]
    if BEFORE:
        header += ["before/ruff wall", "before/ruff cpu", "cold/before wall", "cold/before cpu"]
    rows: list[list[str]] = []
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        ENV.clear()
        ENV.update(bench_env(tmp / "pycache"))
        for name, tree in chosen:
            rows.append(compare_with_ruff(name, tree, ruff, args.runs, args.jobs, tmp / "toollint_cache"))
            print(" | ".join(rows[-1]), flush=True)
    print()
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    print("| " + " | ".join(h.ljust(w) for h, w in zip(header, widths)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for row in rows:
        print("| " + " | ".join(c.ljust(w) for c, w in zip(row, widths)) + " |")
    print(f"load average {os.getloadavg()[0]:.2f} at the end")
    return 0


def main(argv: list[str] | None = None) -> int:
    arguments = sys.argv[1:] if argv is None else argv
    return flake8_main(arguments) if "--flake8" in arguments else ruff_main(arguments)


if __name__ == "__main__":
    sys.exit(main())
