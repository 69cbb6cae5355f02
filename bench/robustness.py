"""The scale sweep of issue 17: every static rule over the whole standard library and two large
site-packages (the AgentDojo venv's and toollint's own), each in a fresh process.

    python bench/robustness.py [--jobs N] [--skip-agentdojo] [PATH...]

Per corpus it prints the files linted, the wall time, the peak RSS (the driver process, and the
largest of its worker processes when `--jobs` > 1), the TL9xx engine diagnostics by code (TL901
syntax error, TL902 decode error, TL903 io error, TL904 internal error: a rule crashed) and the first
TL904 messages. The sweep is clean when TL904 is 0 and TL901/TL902 are exactly the files CPython
itself rejects (the count `ast.parse` rejects is printed beside them). No timed assertion: figures.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import sysconfig
from pathlib import Path

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
    "rss_self_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "rss_workers_mib": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
    "internal": [f"{f.path}:{f.line}: {f.message}" for f in findings if f.code == "TL904"][:5],
}))
"""


def sweep(label: str, root: Path, jobs: int) -> None:
    proc = subprocess.run([sys.executable, "-c", DRIVER, str(root), str(jobs)], capture_output=True, text=True,
                          check=False)
    if proc.returncode != 0:
        print(f"{label}: the sweep failed (exit {proc.returncode}): {proc.stderr.strip().splitlines()[-1:]}")
        return
    data = json.loads(proc.stdout.strip().splitlines()[-1])
    engine = data["engine"]
    codes = ", ".join(f"{code} {engine.get(code, 0)}" for code in ("TL901", "TL902", "TL903", "TL904"))
    workers = f", workers {data['rss_workers_mib']:.0f} MiB" if jobs > 1 else ""
    print(f"{label}: {data['files']} files in {data['wall']:.1f} s ({data['files'] / data['wall']:.0f} files/s), "
          f"peak RSS {data['rss_self_mib']:.0f} MiB{workers}; {codes} "
          f"(CPython's ast.parse rejects {data['rejected_by_cpython']}); {data['findings']} findings in all")
    for line in data["internal"]:
        print(f"  TL904 {line}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", help="more corpora to sweep")
    parser.add_argument("--jobs", type=int, default=2, help="lint processes per corpus (default 2)")
    parser.add_argument("--skip-agentdojo", action="store_true", help="do not create or use the AgentDojo venv")
    args = parser.parse_args()
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
