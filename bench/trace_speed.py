"""How long score-at-risk tracing takes: one defect across a generated tau2-style benchmark of 2,000+
tasks (the target is under 5 s), and, when given, across a real AgentDojo package.

    python bench/trace_speed.py [--tasks 2400] [--assertions 60] [--agentdojo path/to/agentdojo]
                                [--tau2 CHECKOUT]

Prints the task count, the seconds for enumerating and for tracing, and the ledger's totals per basis.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

from toollint.profiles.agentdojo.tasks import agentdojo_tasks
from toollint.trace.ledger import Defect, trace
from toollint.trace.readsites import ModuleCache
from toollint.trace.tasks import json_tasks, toolkit_methods

FIELD = "db.lines[*].data_balance"
# Assertion bodies of each shape the tracer distinguishes; {i} makes each method distinct.
SHAPES = [
    "return self.db.lines[line_id].data_balance == {i}",  # exact_field
    "return len(self.db.lines) == {i}",  # collection_only
    "return self.db.lines[line_id].status == 'S{i}'",  # another field: not exposed
    "return self._line(line_id).data_balance > {i}",  # exact_field through two helpers
    "return audit(self.db.lines, {i})",  # external call: unresolved
    "return self.db.users[line_id].plan == 'P{i}'",  # another collection: not exposed
]


def write_benchmark(root: Path, n_tasks: int, n_assertions: int, seed: int = 7) -> tuple[Path, Path]:
    rng = random.Random(seed)
    lines = ["from checks import audit", "", "", "class Toolkit:",
             "    def _line(self, line_id):", "        return self._lookup(line_id)", "",
             "    def _lookup(self, line_id):", "        return self.db.lines[line_id]", ""]
    for i in range(n_assertions):
        lines += [f"    def assert_{i}(self, line_id):", "        " + SHAPES[i % len(SHAPES)].format(i=i), ""]
    toolkit = root / "toolkit.py"
    toolkit.write_text("\n".join(lines))
    tasks = []
    for t in range(n_tasks):
        basis = rng.choice([["ENV_ASSERTION"], ["DB"], ["ACTION"], ["ENV_ASSERTION", "COMMUNICATE"]])
        tasks.append({
            "id": f"task_{t}",
            "evaluation_criteria": {
                "env_assertions": [{"func_name": f"assert_{rng.randrange(n_assertions)}", "arguments": {}}
                                   for _ in range(rng.randint(1, 3))],
                "actions": [{"name": "refuel_data", "arguments": {"line_id": "L1", "gb": t}}],
                "reward_basis": basis,
                "communicate_info": ["ok"],
            },
        })
    task_file = root / "tasks.json"
    task_file.write_text(json.dumps(tasks, indent=1))
    return toolkit, task_file


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=2400)
    parser.add_argument("--assertions", type=int, default=60)
    parser.add_argument("--agentdojo", type=Path, help="an agentdojo package directory to trace as well")
    parser.add_argument("--tau2", type=Path, help="a tau2-bench checkout to trace as well (every domain)")
    args = parser.parse_args(argv)
    defect = Defect("refuel_data:pre.line_active", "toolkit:Toolkit.refuel_data", "pre.line_active", (FIELD,))
    with tempfile.TemporaryDirectory() as tmp:
        toolkit, task_file = write_benchmark(Path(tmp), args.tasks, args.assertions)
        start = time.perf_counter()
        cache = ModuleCache()
        problems: list = []
        tasks = json_tasks([task_file], toolkit_methods([toolkit], cache, problems))
        enumerated = time.perf_counter()
        ledger = trace([defect], tasks, cache)
        done = time.perf_counter()
    generated_seconds = done - start
    totals = ledger.totals(defect.id)
    print(f"generated benchmark: {len(tasks.tasks)} tasks, {args.assertions} assertion methods")
    print(f"  enumerate {enumerated - start:.3f} s, trace {done - enumerated:.3f} s, "
          f"total {done - start:.3f} s (target < 5 s)")
    print("  exposed: " + ", ".join(f"{k} {v}" for k, v in totals.items()))
    print(f"  TL401 ungrounded oracles: {len(ledger.ungrounded)}; problems: {len(ledger.problems)}")
    if args.agentdojo is not None:
        defect = Defect("amount", "banking_client:update_scheduled_transaction", "eff.amount_set",
                        ("bank_account.scheduled_transactions[*].amount",))
        start = time.perf_counter()
        found = agentdojo_tasks(args.agentdojo)
        ledger = trace([defect], found)
        elapsed = time.perf_counter() - start
        totals = ledger.totals(defect.id)
        print(f"agentdojo {args.agentdojo}: {len(found.tasks)} tasks in {elapsed:.3f} s")
        print("  exposed: " + ", ".join(f"{k} {v}" for k, v in totals.items()))
    if args.tau2 is not None:
        from toollint.profiles.tau2.tasks import tasks as tau2_tasks

        defect = Defect("refuel_data:pre.line_active", "tau2.domains.telecom.tools:TelecomTools.refuel_data",
                        "pre.line_active", ("agent_db.bills", "agent_db.customers[*].bill_ids",
                                            "agent_db.lines[*].data_refueling_gb"),
                        collections=("agent_db.bills", "agent_db.customers[*].bill_ids"))
        start = time.perf_counter()
        found = tau2_tasks(args.tau2)
        enumerated = time.perf_counter()
        ledger = trace([defect], found)
        done = time.perf_counter()
        totals = ledger.totals(defect.id)
        print(f"tau2 {args.tau2}: {len(found.tasks)} tasks, enumerate {enumerated - start:.3f} s, "
              f"trace {done - enumerated:.3f} s")
        print("  exposed: " + ", ".join(f"{k} {v}" for k, v in totals.items()))
    return 0 if generated_seconds < 5 else 1


if __name__ == "__main__":
    sys.exit(main())
