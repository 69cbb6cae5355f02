"""Tables for a validation run: per defect class and per operator (mutation arm), negative controls,
survivors with their diagnosis. Text for people, JSON for CI and the HTML report."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from toollint.validate.harness import KILLED, NOT_RUN, MutantResult, ValidationRun
from toollint.validate.mutation import DEFECT_CLASSES, OPERATORS

STATIC_SHAPE = "static-shape"  # mutants shaped for a static rule that no probe can distinguish


@dataclass
class Row:
    label: str
    mutants: int = 0
    static: int = 0
    dynamic: int = 0
    dynamic_run: int = 0  # mutants the dynamic half actually probed
    either: int = 0
    covered_survivors: int = 0  # survivors a contract clause covered: checker gaps
    masked_survivors: int = 0  # survivors whose clause the original already violates
    uncovered_survivors: int = 0
    unreachable: int = 0  # mutants of code no registered tool runs: listed, not counted in the rates

    @property
    def survived(self) -> int:
        return self.mutants - self.either

    @property
    def kill_rate(self) -> float | None:
        return self.either / self.mutants if self.mutants else None

    def add(self, r: MutantResult) -> None:
        if r.unreachable:
            self.unreachable += 1
            return
        self.mutants += 1
        self.static += r.static.killed
        self.dynamic += r.dynamic.status == KILLED
        self.dynamic_run += r.dynamic.status != NOT_RUN
        self.either += r.killed
        if not r.killed:
            if r.dynamic.masked and not r.dynamic.indistinguishable:
                self.masked_survivors += 1
            elif r.dynamic.covering and r.dynamic.status != NOT_RUN:
                self.covered_survivors += 1
            else:
                self.uncovered_survivors += 1

    def to_json(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "mutants": self.mutants,
            "killed_by_static": self.static,
            "killed_by_dynamic": self.dynamic,
            "dynamic_run": self.dynamic_run,
            "killed_by_either": self.either,
            "survived": self.survived,
            "survivors_with_covering_clause": self.covered_survivors,
            "survivors_masked_by_original": self.masked_survivors,
            "survivors_without": self.uncovered_survivors,
            "unreachable_not_counted": self.unreachable,
            "kill_rate": self.kill_rate,
        }


def class_of(r: MutantResult) -> str:
    return STATIC_SHAPE if r.mutant.static_only else r.mutant.defect_class


def rows(results: Iterable[MutantResult], key: str = "class") -> tuple[list[Row], Row]:
    by: dict[str, Row] = {}
    total = Row("all")
    for r in results:
        label = class_of(r) if key == "class" else r.mutant.operator
        by.setdefault(label, Row(label)).add(r)
        total.add(r)
    order = [*DEFECT_CLASSES, STATIC_SHAPE] if key == "class" else [op.name for op in OPERATORS]
    return [by[k] for k in order if k in by], total


def floor_failures(run: ValidationRun, overall: float, per_class: float) -> list[str]:
    """Which kill-rate floors the run misses; static-shape mutants count in the overall rate only."""
    classes, total = rows(run.mutants)
    out = []
    if total.kill_rate is not None and total.kill_rate < overall:
        out.append(f"overall kill rate {total.kill_rate:.1%} is below the floor {overall:.0%}")
    for row in classes:
        if row.label != STATIC_SHAPE and row.kill_rate is not None and row.kill_rate < per_class:
            out.append(f"{row.label} kill rate {row.kill_rate:.1%} is below the floor {per_class:.0%}")
    return out


def false_positives(run: ValidationRun) -> list[dict[str, Any]]:
    return [{"control": c.to_json()["id"], **fp} for c in run.controls for fp in c.false_positives]


def to_json(run: ValidationRun) -> dict[str, Any]:
    classes, total = rows(run.mutants)
    operators, _ = rows(run.mutants, "operator")
    control_kinds: dict[str, dict[str, int]] = {}
    for c in run.controls:
        kind = c.control.operator if c.control else "unmutated"
        entry = control_kinds.setdefault(kind, {"controls": 0, "flagged": 0, "false_positives": 0})
        entry["controls"] += 1
        entry["flagged"] += bool(c.false_positives)
        entry["false_positives"] += len(c.false_positives)
    return {
        "seed": run.seed,
        "budget_per_subject": run.budget,
        "dynamic": run.dynamic,
        "elapsed_s": round(run.elapsed_s, 3),
        "host_starts": run.host_starts,
        "generated": run.generated,
        "mutation": {
            "by_class": [r.to_json() for r in classes],
            "by_operator": [r.to_json() for r in operators],
            "total": total.to_json(),
            "mutants": [r.to_json() for r in run.mutants],
        },
        "controls": {
            "by_kind": control_kinds,
            "false_positives": false_positives(run),
            "count": len(run.controls),
        },
        "baseline_findings": run.baseline,
    }


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.0%}"


def _table(title: str, body: list[Row], total: Row | None) -> list[str]:
    head = f"{'':24} {'mutants':>7} {'static':>6} {'dynamic':>11} {'either':>6} {'survived':>8} " \
           f"{'covered':>7} {'masked':>6} {'rate':>5} {'unreach.':>8}"
    lines = [title, head]
    for r in [*body, *([total] if total else [])]:
        dyn = f"{r.dynamic}/{r.dynamic_run}" if r.dynamic_run else "n/a"
        lines.append(
            f"{r.label:24} {r.mutants:7} {r.static:6} {dyn:>11} {r.either:6} {r.survived:8} "
            f"{r.covered_survivors:7} {r.masked_survivors:6} {_pct(r.kill_rate):>5} {r.unreachable:8}"
        )
    return lines


def to_text(run: ValidationRun, survivors: bool = True) -> str:
    classes, total = rows(run.mutants)
    operators, _ = rows(run.mutants, "operator")
    generated = sum(run.generated.values())
    rate = f", {len(run.mutants) / run.elapsed_s:.2f} mutants/s" if run.elapsed_s and run.mutants else ""
    out = [(f"validation run: {len(run.mutants)} mutants (of {generated} generated; seed {run.seed}, "
           f"budget {run.budget if run.budget is not None else 'all'} per subject), dynamic half "
           f"{'on' if run.dynamic else 'off'}, {run.elapsed_s:.1f} s{rate}")]
    if run.host_starts.get("forked") or run.host_starts.get("cold"):
        hs = run.host_starts
        out.append(f"hosts: {hs['forked']} forked from {hs['zygotes']} warm interpreter(s) (started in "
                   f"{hs['zygote_start_s']:.1f} s), {hs['cold']} started cold")
    out.append("")
    out += _table(
        (
            "Mutation arm, by defect class (dynamic = killed/probed; covered = survivors a clause covered; "
            "masked = survivors whose clause the original already violates; unreach. = mutants of code no "
            "registered tool runs, not counted)"
        ),
        classes,
        total,
    )
    out += [""] + _table("Mutation arm, by operator", operators, None)
    fps = false_positives(run)
    kinds = to_json(run)["controls"]["by_kind"]
    per_kind = ", ".join(f"{kind}: {entry['controls']}" for kind, entry in kinds.items())
    out += ["", f"Negative controls: {len(run.controls)} ({per_kind}), {len(fps)} false positive(s)"]
    for fp in fps:
        out.append(f"  FALSE POSITIVE {fp['control']}: {fp['code']} on {fp['tool']}: {fp['message'][:120]}")
    if survivors:
        alive = [r for r in run.mutants if not r.killed and not r.unreachable]
        dead = [r for r in run.mutants if r.unreachable]
        for title, group in ((f"Survivors ({len(alive)}):", alive),
                             (f"Unreachable, not counted ({len(dead)}):", dead)):
            if group:
                out += ["", title]
                for r in group:
                    status = " (killed)" if r.killed else ""
                    out.append(f"  {r.mutant.id} [{class_of(r)}]{status} {r.mutant.description[:90]}")
                    out.append(f"      -> {r.explanation()}")
    return "\n".join(out)


def to_html(data: dict[str, Any]) -> str:
    """The run's tables as one self-contained HTML `<section>` (no scripts, no external resources),
    for a report page to embed; everything from the JSON form, every text escaped."""
    from html import escape

    def table(title: str, body: list[dict[str, Any]], total: dict[str, Any] | None = None) -> str:
        head = ("<tr><th></th><th>mutants</th><th>static</th><th>dynamic</th><th>either</th><th>survived</th>"
                "<th>covered</th><th>masked</th><th>rate</th><th>unreachable</th></tr>")
        rows = []
        for r in [*body, *([total] if total else [])]:
            rate = "-" if r["kill_rate"] is None else f"{r['kill_rate']:.0%}"
            dyn = f"{r['killed_by_dynamic']}/{r['dynamic_run']}" if r["dynamic_run"] else "n/a"
            cells = [
                r["label"],
                r["mutants"],
                r["killed_by_static"],
                dyn,
                r["killed_by_either"],
                r["survived"],
                r["survivors_with_covering_clause"],
                r["survivors_masked_by_original"],
                rate,
                r.get("unreachable_not_counted", 0),
            ]
            rows.append("<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in cells) + "</tr>")
        return f"<h3>{escape(title)}</h3><table>{head}{''.join(rows)}</table>"

    m = data["mutation"]
    parts = [
        '<section class="toollint-validation">',
        "<h2>Validation: injected defects and negative controls</h2>",
        (
            f"<p>{len(m['mutants'])} mutants, seed {escape(str(data['seed']))}, dynamic half "
            f"{'on' if data['dynamic'] else 'off'}.</p>"
        ),
        table("By defect class", m["by_class"], m["total"]),
        table("By operator", m["by_operator"]),
    ]
    fps = data["controls"]["false_positives"]
    parts.append(
        f"<h3>Negative controls</h3><p>{data['controls']['count']} controls, {len(fps)} false positive(s)</p>"
    )
    if fps:
        parts.append(
            "<ul>"
            + "".join(
                f"<li>{escape(fp['control'])}: {escape(str(fp['code']))} on "
                f"{escape(str(fp['tool']))}: {escape(fp['message'])}</li>"
                for fp in fps
            )
            + "</ul>"
        )
    survivors = [x for x in m["mutants"] if not x["killed"] or x.get("unreachable")]
    if survivors:
        parts.append("<h3>Survivors</h3><table><tr><th>mutant</th><th>class</th><th>what</th><th>why</th></tr>"
                     + "".join(f"<tr><td>{escape(x['id'])}</td><td>{escape(x['class'])}</td>"
                               f"<td>{escape(x['description'])}</td><td>{escape(x['explanation'])}</td></tr>"
                               for x in survivors) + "</table>")
    parts.append("</section>")
    return "\n".join(parts)
