"""The scale sweep of issue 17: every static rule over the whole standard library and two large
site-packages (the AgentDojo venv's and toollint's own), each in a fresh process.

    python bench/robustness.py [--jobs N] [--skip-agentdojo] [--skip-sweep] [--large-file MB] [PATH...]

Per corpus it prints the files linted, the wall time, the peak RSS (the driver process, and the
largest of its worker processes when `--jobs` > 1), the TL9xx engine diagnostics by code (TL901
syntax error, TL902 decode error, TL903 io error, TL904 internal error: a rule crashed) and the first
TL904 messages. The sweep is clean when TL904 is 0 and TL901/TL902 are exactly the files CPython
itself rejects (the count `ast.parse` rejects is printed beside them).

Before the sweep, two figures of the host protocol: reading one host reply of 1, 10 and 100 MB with
the protocol's reader next to the reader it replaced (a bytes `+=` and a full rescan per pipe read),
side by side on the same bytes, as seconds per MB; and what stopping a host costs (the /proc walk
that finds what the benchmark started), at this machine's process count. First of all, a witness's
bindings over 1,000 and 10,000 records (linear: 10x the records, at most 12x the time). No timed
assertion: figures.

After the sweep, one generated file of `--large-file` MB (default 50; 0 skips it) of tool-like
functions, linted by `toollint check` in a fresh process: its wall time and peak memory beside what
it cost before issue 28 (29 s and 5.7 GB, parsing alone, no ceiling), and what the run said about it.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import subprocess
import sys
import sysconfig
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _corpora import VenvError, ensure_agentdojo_venv, package_dir  # after the path tweak above

# Runs in a fresh interpreter, so each corpus's peak RSS is its own.
DRIVER = r"""
import ast, json, resource, sys, time, warnings
from collections import Counter
from pathlib import Path
from toollint.engine import lint_paths
from toollint.files import collect_files
from toollint.settings import Settings

def hwm_mib():
    # VmHWM is this process's own peak; ru_maxrss survives exec, so it would report the bench's parent.
    try:
        line = next(l for l in open("/proc/self/status") if l.startswith("VmHWM:"))
        return int(line.split()[1]) / 1024
    except (OSError, StopIteration):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

root, jobs = sys.argv[1], int(sys.argv[2])
settings = Settings(select=["TL"])
began = time.perf_counter()
result = lint_paths([root], settings, jobs=jobs)
wall = time.perf_counter() - began
findings = [f for r in result.files for f in r.findings]
engine = Counter(f.code for f in findings if f.code.startswith("TL9"))
rejected = 0  # what CPython itself refuses to parse (or decode), to compare with TL901/TL902
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    for path in collect_files([root], settings).files:
        try:
            ast.parse(Path(path).read_bytes())
        except (SyntaxError, ValueError, UnicodeDecodeError):
            rejected += 1
print(json.dumps({
    "files": len(result.files), "wall": wall, "findings": len(findings), "engine": dict(engine),
    "rejected_by_cpython": rejected,
    "rss_self_mib": hwm_mib(),
    "rss_workers_mib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
    "internal": [f"{f.path}:{f.line}: {f.message}" for f in findings if f.code == "TL904"][:5],
}))
"""


def sweep(label: str, root: Path, jobs: int) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", DRIVER, str(root), str(jobs)], capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        print(f"{label}: the sweep failed (exit {proc.returncode}): {proc.stderr.strip().splitlines()[-1:]}")
        return
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    engine = data["engine"]
    codes = ", ".join(
        f"{code} {engine.get(code, 0)}" for code in ("TL901", "TL902", "TL903", "TL904", "TL906")
    )
    workers = f", workers {data['rss_workers_mib']:.0f} MiB" if jobs > 1 else ""
    print(
        f"{label}: {data['files']} files in {data['wall']:.1f} s "
        f"({data['files'] / data['wall']:.0f} files/s), "
        f"peak RSS {data['rss_self_mib']:.0f} MiB{workers}; {codes} "
        f"(CPython's ast.parse rejects {data['rejected_by_cpython']}); "
        f"internal errors: {engine.get('TL904', 0)}; "
        f"{data['findings']} findings in all"
    )
    for line in data["internal"]:
        print(f"  TL904 {line}")


# Before the static run had a memory ceiling: the 29 s and 5.7 GB, and this very file (50 MB)
# on main at db3ebd4 with this driver, under a load of about 6 on 2 cores: 33.7 s and 5418 MiB.
LARGE_FILE_BEFORE = "33.7 s and 5418 MiB on main at db3ebd4; the issue's 29 s and 5.7 GB"
TOOL_BLOCK = (
    "def tool_{i}(db, amount=None):\n"
    '    """Set the balance of account {i}."""\n'
    "    if amount:\n"
    '        db["balance_{i}"] = amount\n'
    '    return "Success"\n'
    "\n\n"
)


def generate_large_file(path: Path, megabytes: int) -> int:
    """A Python file of about `megabytes` MB of small tool-like functions; its size in bytes."""
    target = megabytes * 1_000_000
    size = i = 0
    with open(path, "w", encoding="utf-8") as out:
        while size < target:
            chunk = "".join(TOOL_BLOCK.format(i=j) for j in range(i, i + 1000))
            out.write(chunk)
            size += len(chunk)
            i += 1000
    return size


# The CLI in a fresh interpreter: its wall time and peak resident memory (the largest process of the run).
LARGE_DRIVER = r"""
import json, resource, subprocess, sys, time
began = time.perf_counter()
proc = subprocess.run([sys.executable, "-m", "toollint", "check", "--isolated", sys.argv[1]],
                      capture_output=True, text=True)
wall = time.perf_counter() - began
said = proc.stdout.strip().splitlines()[:2] + proc.stderr.strip().splitlines()[-2:]
print(json.dumps({"wall": wall, "exit": proc.returncode, "said": said,
                  "peak_mib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}))
"""


def large_file_figures(megabytes: int) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "generated_tools.py"
        size = generate_large_file(path, megabytes)
        proc = subprocess.run([sys.executable, "-c", LARGE_DRIVER, str(path)], capture_output=True, text=True,
                              check=False)
    if proc.returncode != 0:
        print(f"generated {megabytes} MB file: the driver failed: {proc.stderr.strip().splitlines()[-1:]}")
        return
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    print(f"generated {size / 1e6:.0f} MB file: {data['wall']:.1f} s, peak RSS {data['peak_mib']:.0f} MiB, "
          f"exit {data['exit']} (before issue 28: {LARGE_FILE_BEFORE}); the run said:")
    for line in data["said"]:
        print(f"  {line[:200]}")


def _quadratic_read_line(fd: int) -> bytes:
    """The reader protocol.py had before issue 17: what a 100 MB reply cost 60 s with."""
    buf = b""
    while b"\n" not in buf:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            break
        buf += chunk
    return buf.partition(b"\n")[0]


def _timed_read(megabytes: int, linear: bool) -> float:
    """Seconds to read one `megabytes` MB line from a pipe a thread writes it into."""
    from toollint.dynamic.protocol import Worker, WorkerSpec

    payload = b"x" * (megabytes * 1_000_000) + b"\n"
    read_fd, write_fd = os.pipe()

    def feed() -> None:
        with os.fdopen(write_fd, "wb") as out:
            out.write(payload)

    writer = threading.Thread(target=feed)
    writer.start()
    began = time.perf_counter()
    if linear:
        with os.fdopen(read_fd, "rb", buffering=0) as stream:
            line = Worker(WorkerSpec("none"))._read_line(stream, 600, "bench")  # the reader itself
    else:
        line = _quadratic_read_line(read_fd)
        os.close(read_fd)
    elapsed = time.perf_counter() - began
    writer.join()
    assert len(line) == len(payload) - 1
    return elapsed


def protocol_figures() -> None:
    print("host reply read (seconds per MB; linear is flat):")
    for megabytes in (1, 10, 100):
        new = _timed_read(megabytes, linear=True)
        old = _timed_read(megabytes, linear=False)  # 100 MB takes about a minute this way
        print(
            f"  {megabytes:3d} MB: reader {new:6.2f} s ({new / megabytes * 1000:5.1f} ms/MB), the old reader "
            f"{old:6.2f} s ({old / megabytes * 1000:6.1f} ms/MB): {old / new:5.1f}x"
        )
    from toollint.dynamic.host import proctree

    processes = sum(1 for name in os.listdir("/proc") if name.isdigit()) if os.path.isdir("/proc") else 0
    began = time.perf_counter()
    for _ in range(20):
        proctree.kill_tree(2**22 + 1, "no-such-token", include_root=False)  # a pid that cannot exist
    print(f"stopping a host: the /proc walk for its descendants and token holders takes "
          f"{(time.perf_counter() - began) / 20 * 1000:.1f} ms at {processes} processes")


BINDING_PREDICATES = ("all(a.balance >= 0 for a in post.accounts)",
                      "[a.balance for a in post.accounts] == [a.balance for a in pre.accounts]",
                      "post.accounts.by(id=args.id).balance == args.balance")


def bindings_figures(pairs: int = 7) -> None:
    """A witness's bindings (`contracts.bindings`) over 1,000 and 10,000 records: linear means 10x the
    records in at most 12x the time (issue 28; 172 s before, then 13.6x).

    Measured in pairs, as paired timings are: ten runs over 1,000 records, then one over 10,000, so
    both halves of a pair last about as long and see the same machine; the ratio is taken pair by
    pair and its median printed with its range. Time is the process's CPU time (other processes on
    a shared machine do not inflate it); the wall-clock median is printed beside it."""
    import gc
    import statistics

    from toollint.contracts.bindings import bindings
    from toollint.contracts.host.predicate import compile_predicate

    def state(n: int) -> dict[str, object]:
        return {
            "accounts": [
                {"id": f"A{i}", "owner_id": i, "balance": float(i), "status": "open"} for i in range(n)
            ]
        }

    def timed(work: Callable[[], object], times: int) -> tuple[float, float]:
        began, began_cpu = time.perf_counter(), time.process_time()
        for _ in range(times):
            work()
        return (time.process_time() - began_cpu) / times, (time.perf_counter() - began) / times

    small, large = (state(1_000), state(1_000)), (state(10_000), state(10_000))
    gc.collect()
    args = {"id": "A5", "balance": 5.0}
    predicates = [compile_predicate(source) for source in BINDING_PREDICATES]

    def one(number: int, states: tuple[Any, Any]) -> object:
        return bindings(predicates[number], states[0], states[1], args)

    def all_three(states: tuple[Any, Any]) -> object:
        return [one(number, states) for number in range(len(predicates))]

    def states_alone(states: tuple[Any, Any]) -> object:
        return state(len(states[0]["accounts"])), state(len(states[1]["accounts"]))

    rows: list[tuple[str, Callable[[tuple[Any, Any]], object]]] = [
        (source, functools.partial(one, number)) for number, source in enumerate(BINDING_PREDICATES)]
    rows += [("all three", all_three), ("(building the two states alone)", states_alone)]
    print(f"witness bindings, 1,000 vs 10,000 records (linear: 10x the records in at most 12x the time; "
          f"CPU time, median of {pairs} pairs of 10 x 1,000 and 1 x 10,000):")
    for label, work in rows:
        cpu_ratios, wall_ratios, cpu_small, cpu_large = [], [], [], []
        for _ in range(pairs):
            cpu_s, wall_s = timed(functools.partial(work, small), 10)
            cpu_l, wall_l = timed(functools.partial(work, large), 1)
            cpu_ratios.append(cpu_l / max(cpu_s, 1e-9))
            wall_ratios.append(wall_l / max(wall_s, 1e-9))
            cpu_small.append(cpu_s)
            cpu_large.append(cpu_l)
        print(f"  {label[:44]:44s} {statistics.median(cpu_small) * 1000:6.1f} -> "
              f"{statistics.median(cpu_large) * 1000:7.1f} ms  {statistics.median(cpu_ratios):5.1f}x "
              f"({min(cpu_ratios):.1f}-{max(cpu_ratios):.1f})  wall {statistics.median(wall_ratios):5.1f}x")
    print("  (a by() is a fraction of a ms, and so are the states alone: their ratios are cache, not scans)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", help="more corpora to sweep")
    parser.add_argument("--jobs", type=int, default=2, help="lint processes per corpus (default 2)")
    parser.add_argument(
        "--skip-agentdojo", action="store_true", help="do not create or use the AgentDojo venv"
    )
    parser.add_argument("--skip-sweep", action="store_true", help="print the protocol figures only")
    parser.add_argument("--large-file", type=int, default=50, metavar="MB",
                        help="size of the generated file linted after the sweep (default 50; 0: none)")
    parser.add_argument("--large-file-only", action="store_true", help="only the generated file's figures")
    parser.add_argument("--skip-protocol", action="store_true", help="no host-protocol figures")
    args = parser.parse_args()
    if args.large_file_only:
        large_file_figures(args.large_file)
        return 0
    bindings_figures()
    if not args.skip_protocol:
        protocol_figures()
    if args.skip_sweep:
        return 0
    corpora: list[tuple[str, Path]] = [("stdlib", Path(sysconfig.get_paths()["stdlib"]))]
    if not args.skip_agentdojo:
        try:
            python = ensure_agentdojo_venv()
            corpora.append(("agentdojo venv site-packages", package_dir(python, "agentdojo").parent))
        except VenvError as exc:
            print(f"agentdojo venv site-packages: skipped ({exc})")
    corpora.append(("toollint .venv site-packages", Path(sysconfig.get_paths()["purelib"])))
    corpora.extend((p, Path(p)) for p in args.paths)
    print(f"python {sys.version.split()[0]}, --jobs {args.jobs}")
    for label, root in corpora:
        sweep(f"{label} ({root})", root, args.jobs)
    if args.large_file:
        large_file_figures(args.large_file)
    return 0


if __name__ == "__main__":
    sys.exit(main())
