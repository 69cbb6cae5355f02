"""How long writing SARIF takes for 5,000 results (what GitHub displays) and 25,000 (its per-run limit).

Prints the median of several runs (wall time, and CPU time, which is steadier on a shared machine)
for: building the log as dicts (positions, UTF-16 columns, line hashes, fingerprints), `json.dumps`,
and the whole `render_sarif`; and, as the floor on this machine, the same results written as
hand-made minimal dicts with `json.dumps`. The results point into 50 copies of a
real tool file (tests/fixtures/frontends/banking_tools.py), 100 results per file; "minimal" results
carry a location only, "rich" ones also what the rules attach (properties, related locations, fixes).

    python bench/sarif_speed.py [--results 5000,25000] [--runs 7]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from toollint.model import Edit, Finding, Fix, RelatedLocation
from toollint.reporters.sarif import SarifOptions, build_sarif, render_sarif

FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "frontends" / "banking_tools.py"
CODES = ["TL101", "TL102", "TL103", "TL104", "TL105"]


def make_findings(root: Path, count: int, rich: bool = True) -> list[Finding]:
    """`count` findings over copies of a real tool file. Rich ones carry what toollint's rules attach
    (properties on all, a related location or a fix on one in five); minimal ones only a location."""
    lines = FIXTURE.read_text(encoding="utf-8").count("\n")
    files = max(1, count // 100)
    for i in range(files):
        shutil.copy(FIXTURE, root / f"tools_{i}.py")
    out = []
    for n in range(count):
        path = f"tools_{n % files}.py"
        line = 1 + (n * 7) % lines
        f = Finding(
            CODES[n % 5],
            f"`param_{n % 13}` in `tool_{n % 17}` is read only in a log call (line {line})",
            path,
            line,
            5,
            line,
            20,
            tool=f"tool_{n % 17}",
        )
        if rich:
            f.properties["param"] = f"param_{n % 13}"
            if n % 5 == 4:
                f.related.append(RelatedLocation(path, max(1, line - 3), 9, "the partner's write"))
            if n % 5 == 3:
                f.fix = Fix("Compare with None", (Edit(path, line, 8, line, 14, "amount is not None"),))
        out.append(f)
    return out


def median_time(fn: Callable[[], object], runs: int) -> tuple[float, float, float, float]:
    """Median, min and max wall time, and median CPU time (steadier on a busy machine)."""
    times, cpu = [], []
    for _ in range(runs):
        start, start_cpu = time.perf_counter(), time.process_time()
        fn()
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return statistics.median(times), min(times), max(times), statistics.median(cpu)


def plain_dicts(findings: list[Finding]) -> str:
    results = [
        {
            "ruleId": f.code,
            "level": "warning",
            "message": {"text": f.message},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": f.path, "uriBaseId": "%SRCROOT%"},
                        "region": {
                            "startLine": f.line,
                            "startColumn": f.col,
                            "endLine": f.end_line,
                            "endColumn": f.end_col,
                        },
                    }
                }
            ],
        }
        for f in findings
    ]
    return json.dumps({"version": "2.1.0", "runs": [{"results": results}]}, separators=(",", ":"))


def paused_gc(fn: Callable[[], object]) -> Callable[[], object]:
    """Run `fn` with the cyclic GC paused, as render_sarif builds and walks the log."""

    def run() -> object:
        gc.disable()
        try:
            return fn()
        finally:
            gc.enable()

    return run


def scenario(root: Path, count: int, runs: int, rich: bool) -> None:
    findings = make_findings(root, count, rich)
    options = SarifOptions(root=root, max_results=count)
    render_sarif(findings, options)  # warm-up: imports, the rule table
    data = build_sarif(findings, options)
    rows = [
        ("build log (dicts)", paused_gc(lambda: build_sarif(findings, options))),
        ("json.dumps", lambda: json.dumps(data, ensure_ascii=False, separators=(",", ":"))),
        ("total: render_sarif", lambda: render_sarif(findings, options)),
        ("floor: hand-made dicts + json.dumps", lambda: plain_dicts(findings)),
    ]
    kind = "rich" if rich else "minimal"
    print(f"{count} {kind} results in {max(1, count // 100)} files, median of {runs} runs [min-max]")
    totals = {}
    for name, fn in rows:
        med, lo, hi, cpu = median_time(fn, runs)
        totals[name] = cpu
        print(
            f"  {name:<38} {med * 1000:8.1f} ms  [{lo * 1000:.1f}-{hi * 1000:.1f}]  cpu {cpu * 1000:.1f} ms"
        )
    size = len(render_sarif(findings, options).encode("utf-8"))
    ratio = totals["total: render_sarif"] / totals["floor: hand-made dicts + json.dumps"]
    print(f"  output {size / 1e6:.2f} MB; render_sarif / floor (cpu) = {ratio:.1f}x")


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--results", default="5000,25000", help="comma-separated result counts")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    print(
        f"SARIF writing; Python {sys.version.split()[0]}, {os.cpu_count()} CPUs, "
        f"load {os.getloadavg()[0]:.1f}"
    )
    for count in (int(n) for n in args.results.split(",")):
        for rich in (False, True):
            with tempfile.TemporaryDirectory() as tmp:
                cwd = os.getcwd()
                os.chdir(tmp)
                try:
                    scenario(Path(tmp), count, args.runs, rich)
                finally:
                    os.chdir(cwd)
    return 0


if __name__ == "__main__":
    sys.exit(main())
