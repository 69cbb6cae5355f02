"""How long writing SARIF takes for GitHub's display cap of 5,000 results.

Prints the median of several runs for: building the sarif-om log (positions, UTF-16 columns, line
hashes, fingerprints), walking it to JSON data, and `json.dumps`; and, as the floor on this machine,
the same 5,000 results written as hand-made dicts with `json.dumps`. The results point into 50 copies
of a real tool file (tests/fixtures/frontends/banking_tools.py), 100 results per file.

    python bench/sarif_speed.py [--results 5000] [--runs 7]
"""

from __future__ import annotations

import argparse
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
from toollint.reporters.sarif import SarifOptions, build_sarif, render_sarif, to_json_obj

FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "frontends" / "banking_tools.py"
CODES = ["TL101", "TL102", "TL103", "TL104", "TL105"]


def make_findings(root: Path, count: int) -> list[Finding]:
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
            properties={"param": f"param_{n % 13}"},
        )
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


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--results", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        findings = make_findings(root, args.results)
        options = SarifOptions(root=root)
        os.chdir(root)
        render_sarif(findings, options)  # warm-up: imports, generated serialisers
        log = build_sarif(findings, options)
        data = to_json_obj(log)
        rows = [
            ("build log (sarif-om objects)", lambda: build_sarif(findings, options)),
            ("walk to JSON data", lambda: to_json_obj(log)),
            ("json.dumps", lambda: json.dumps(data, ensure_ascii=False, separators=(",", ":"))),
            ("total: render_sarif", lambda: render_sarif(findings, options)),
            ("floor: hand-made dicts + json.dumps", lambda: plain_dicts(findings)),
        ]
        print(
            f"SARIF writing, {args.results} results in {max(1, args.results // 100)} files, median of "
            f"{args.runs} runs [min-max], Python {sys.version.split()[0]}, load {os.getloadavg()[0]:.1f}"
        )
        totals = {}
        for name, fn in rows:
            med, lo, hi, cpu = median_time(fn, args.runs)
            totals[name] = med
            print(
                f"  {name:<38} {med * 1000:8.1f} ms  [{lo * 1000:.1f}-{hi * 1000:.1f}]  cpu {cpu * 1000:.1f} ms"
            )
        size = len(render_sarif(findings, options).encode("utf-8"))
        ratio = totals["total: render_sarif"] / totals["floor: hand-made dicts + json.dumps"]
        print(f"  output size {size / 1e6:.2f} MB; total / floor = {ratio:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
