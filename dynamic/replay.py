"""`toollint replay WITNESS`: re-run a recorded violation in fresh workers and say whether it still holds.

Exit codes: 1 the violation reproduced, 0 the clause now conforms (fixed), 2 the replay could not be
faithful (unreadable witness, missing contract or tool, different benchmark version or pristine
state), 3 the fresh runs disagree (flaky), with the paths that differed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toollint.contracts.loader import ContractError, load_contract
from toollint.dynamic.checker import ClauseResult, ProbeRun, Scorer, run_probe, tool_tags
from toollint.dynamic.probes import Probe
from toollint.dynamic.protocol import DEFAULT_DEADLINE, Worker, WorkerError, WorkerSpec
from toollint.dynamic.witness import call_text

STILL_VIOLATES, FIXED, NOT_FAITHFUL, FLAKY_EXIT = 1, 0, 2, 3


@dataclass
class ReplayOutcome:
    code: int
    sentence: str
    details: list[str] = field(default_factory=list)


def _probe_of(data: dict[str, Any]) -> Probe:
    return Probe(str(data.get("kind") or "happy"), dict(data.get("args") or {}), tool=str(data.get("tool") or ""),
                 clause=data.get("target_clause"), varied=data.get("varied"),
                 harvested_from=dict(data.get("harvested_from") or {}))


def _summary(status: Any, diff: list[dict[str, Any]]) -> str:
    paths = ", ".join(op["path"] for op in diff[:3]) + (", ..." if len(diff) > 3 else "")
    return f"status {status}, {len(diff)} change(s)" + (f" [{paths}]" if paths else "")


def replay(path: Path | str, *, repeat: int = 2, python: str | None = None,
           deadline: float = DEFAULT_DEADLINE) -> ReplayOutcome:
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        clause_data, worker_data, probe_data = data["clause"], data["worker"], data["probe"]
        code, clause_id = data["code"], clause_data["id"]
    except FileNotFoundError:
        return ReplayOutcome(NOT_FAITHFUL, f"NOT REPLAYED: no witness file {path}")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return ReplayOutcome(NOT_FAITHFUL, f"NOT REPLAYED: {path} is not a toollint witness ({type(exc).__name__}: {exc})")
    try:
        contract = load_contract(clause_data.get("contract") or "")
    except (ContractError, OSError) as exc:
        return ReplayOutcome(NOT_FAITHFUL, f"NOT REPLAYED: the witness's contract cannot be loaded: {exc}")
    spec = WorkerSpec.from_json(worker_data)
    if python:
        spec.python = python
    originals = [_probe_of(probe_data)] + ([_probe_of(data["partner"])] if data.get("partner") else [])
    # An order-dependent witness is its whole call sequence; the witnesses sit at `history_positions`.
    sequence = [_probe_of(h) for h in data.get("history") or []] or originals
    positions = list(data.get("history_positions") or []) if data.get("history") else list(range(len(originals)))
    if any(not isinstance(i, int) or not 0 <= i < len(sequence) for i in positions) or not positions:
        return ReplayOutcome(NOT_FAITHFUL, f"NOT REPLAYED: {path} has history positions outside its history")
    tool = str(data.get("tool") or originals[0].tool)
    call = call_text(tool, originals[0].args) + (f" after {len(sequence) - 1} earlier call(s)"
                                                  if data.get("history") else "")
    recorded = _summary(probe_data.get("result", {}).get("status"), probe_data.get("diff") or [])
    outcomes: list[bool] = []
    diffs: list[list[dict[str, Any]]] = []
    details = [f"recorded: {recorded}"]
    for attempt in range(max(1, repeat)):
        worker = Worker(spec, deadline=deadline)
        try:
            hello = worker.start()
            mismatch = _mismatch(data.get("benchmark") or {}, hello)
            if mismatch:
                return ReplayOutcome(NOT_FAITHFUL, f"NOT REPLAYED {clause_id}: {mismatch}", details)
            pristine = worker.request("pristine")
            if data.get("pristine_state_hash") and pristine["state_hash"] != data["pristine_state_hash"]:
                return ReplayOutcome(NOT_FAITHFUL, f"NOT REPLAYED {clause_id}: the pristine state differs from the "
                                     "recorded one (the benchmark's data changed)", details)
            meta = next((t for t in hello.get("tools", []) if t["name"] == tool), None)
            if meta is None:
                return ReplayOutcome(NOT_FAITHFUL, f"NOT REPLAYED {clause_id}: tool {tool!r} is gone", details)
            tags = tool_tags(contract, {"volatile": list(hello.get("volatile_paths") or []),
                                        "derived": list(hello.get("derived_paths") or [])})
            ran: list[ProbeRun] = [run_probe(worker, p, pristine["state"], pristine["state_hash"], tags, deadline)
                                   for p in sequence]
            runs = [ran[i] for i in positions]
        except WorkerError as exc:
            return ReplayOutcome(NOT_FAITHFUL, f"NOT REPLAYED {clause_id}: {exc}", details)
        finally:
            worker.close()
        failed = next((r for r in ran if r.error is not None), None)
        if failed is not None:
            return ReplayOutcome(NOT_FAITHFUL, f"NOT REPLAYED {clause_id}: {failed.error}", details)
        row = ClauseResult(clause_id, str(clause_data.get("id", "")).split(".", 1)[0], "VIOLATES", code=code,
                           history=ran if data.get("history") else [])
        outcomes.append(Scorer(contract, meta).reproduces(row, runs))
        diffs.append(runs[0].changes)
        details.append(f"run {attempt + 1}: {_summary(runs[0].status, runs[0].changes)} -> "
                       f"{'violates' if outcomes[-1] else 'conforms'}")
    if all(outcomes):
        return ReplayOutcome(STILL_VIOLATES, f"STILL VIOLATES {clause_id} ({code}): {call} reproduced in "
                             f"{len(outcomes)} of {len(outcomes)} fresh runs", details)
    if not any(outcomes):
        return ReplayOutcome(FIXED, f"FIXED {clause_id} ({code}): {call} now conforms in {len(outcomes)} fresh runs",
                             details)
    keyed = [{json.dumps(op, sort_keys=True, default=str) for op in d} for d in diffs]
    differing = sorted({json.loads(x)["path"] for s in keyed for x in s if not all(x in t for t in keyed)})
    return ReplayOutcome(FLAKY_EXIT, f"FLAKY {clause_id} ({code}): {call} reproduced in {sum(outcomes)} of "
                         f"{len(outcomes)} fresh runs" + (f"; differing paths: {', '.join(differing[:5])}"
                                                          if differing else ""), details)


def _mismatch(recorded: dict[str, Any], hello: dict[str, Any]) -> str | None:
    for key, now_key, what in (("adapter", "adapter", "adapter"), ("variant", "variant", "benchmark variant"),
                               ("version", "benchmark_version", "benchmark version")):
        if recorded.get(key) and hello.get(now_key) != recorded.get(key):
            return f"{what} is {hello.get(now_key)!r}, the witness was recorded on {recorded.get(key)!r}"
    return None
