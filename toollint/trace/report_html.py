"""A self-contained HTML report of a score-at-risk ledger: no network, no script or style from outside.

One section per tool and field at risk: the clauses that put that field at risk are listed together
when they expose the same tasks (an `eff.amount_set` and an `arg.amount` violation of one tool are
one section, not two). Sections are ordered by exposure, most exposed first, and an overview table
names them all. Each section has the per-basis counts, a picture (inline SVG, Sankey-like) of tool ->
field -> grader read site -> basis with edge widths by exposed-task count, where the graders read the
field (one line per read site, with its task count), and the exposed tasks as a table of four columns
(task, basis, grader, read site) that fits the screen, folded when long. Each defect is said in one
plain sentence built from its witness and the surface its clause cites (`toollint.trace.plain`), with
its confidence, the call, and the `toollint replay` command that re-runs it; the raw witness probe is
folded beneath. A legend says what each basis means; the static findings `--confirm` did not confirm
are listed with their verdict and its reason. Column headers break only between words.
Task tables sort by any column (a few lines of inline script); by basis means by exposure, strongest
first (`exact_field`, `whole_state_hash`, `collection_only`, `unresolved`), and `#sort=basis`,
`#sort=task` or `#sort=task-desc` in the URL opens every table sorted. The full ten-column ledger is
the CSV/JSON beside the report.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field as dc_field
from html import escape
from pathlib import Path
from typing import Any

from toollint import registry
from toollint.evidence import Confidence
from toollint.model import Finding
from toollint.trace.ledger import Defect, Ledger, LedgerRow
from toollint.trace.plain import WitnessFacts, read_witness_facts, sentence, witness_facts
from toollint.trace.readsites import BASES, CONFIDENCE

# How a grader's read exposes the field, per basis: only exact_field reads the field itself.
_HOW = {
    "exact_field": "reads",
    "collection_only": "reads only the collection holding",
    "whole_state_hash": "compares the whole state, which holds",
    "unresolved": "makes a read toollint cannot resolve, counted as exposing",
}

# The legend: what a grader does with the field, per basis, for a reader who never read the method.
BASIS_MEANING: dict[str, str] = {
    "exact_field": "A grader reads the very field the defect leaves wrong: the task's verdict follows it.",
    "whole_state_hash": "A grader compares the whole state (a hash or an equality of the database), which "
                        "holds the field: any wrong value changes the verdict.",
    "collection_only": "A grader reads only the collection holding the field (its size, membership or a "
                       "search in it), not the field itself.",
    "unresolved": "A grader makes a read toollint cannot follow (a call into other code, a name computed "
                  "at run time); counted as exposing, so it may overstate.",
}
DECIDED = ("VIOLATES", "FLAKY", "CONFORMS")  # any other verdict leaves a finding untested
MAX_SITE_NODES = 12
MAX_WITNESS_CHARS = 4000
OPEN_TASK_ROWS = 25  # a task table longer than this is folded
TASK_COLUMNS = ("task", "basis", "grader", "read site")
BASIS_COLOURS: dict[str, str] = {
    "exact_field": "#c0392b",
    "whole_state_hash": "#8e44ad",
    "collection_only": "#d68910",
    "unresolved": "#7f8c8d",
}

_STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:24px auto;padding:0 16px;max-width:1240px;color:#222}
h1{font-size:20px}h2{font-size:17px;margin:28px 0 6px}h3{font-size:15px;margin:14px 0 4px}
section{border-top:1px solid #ddd;padding-top:4px}
table{border-collapse:collapse;margin:6px 0;width:100%;table-layout:fixed}
td,th{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top;overflow-wrap:break-word}
th{background:#f2f2f2;overflow-wrap:normal;word-break:normal;hyphens:manual}
table.sortable th{cursor:pointer;user-select:none}
th.sorted-asc::after{content:" \\25B2"}th.sorted-desc::after{content:" \\25BC"}
table.overview th{font-size:13px}table.overview td,table.overview code{overflow-wrap:normal}
table.counts{width:auto}table.counts td{font-variant-numeric:tabular-nums;text-align:right}
code{background:#f6f6f6;padding:0 3px;overflow-wrap:anywhere}
.basis{display:inline-block;padding:0 6px;border-radius:3px;color:#fff;font-size:12px;white-space:nowrap}
.muted{color:#666}summary{cursor:pointer;color:#1f5f99}
pre{background:#f6f6f6;padding:6px;overflow:auto;max-height:320px}
svg.flow{width:100%;height:auto;max-width:1010px}svg text{font:12px system-ui,sans-serif}
.defect{border-left:4px solid #c0392b;padding:2px 10px;margin:10px 0;background:#fdf6f5}
.defect p{margin:4px 0}p.sentence{font-size:15px}
code.replay{background:#1f2933;color:#f5f7fa;padding:2px 6px}
table.legend{width:auto}table.legend td:first-child{white-space:nowrap}
"""

_SCRIPT = """
function sortTable(table, col, asc) {
  table.querySelectorAll('th').forEach(function(h){h.classList.remove('sorted-asc','sorted-desc');});
  table.tHead.rows[0].cells[col].classList.add(asc ? 'sorted-asc' : 'sorted-desc');
  var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
  rows.sort(function(a, b){
    var x = a.cells[col].getAttribute('data-sort') || a.cells[col].textContent;
    var y = b.cells[col].getAttribute('data-sort') || b.cells[col].textContent;
    var c = x.localeCompare(y, undefined, {numeric: true});
    return asc ? c : -c;
  });
  rows.forEach(function(r){body.appendChild(r);});
}
document.querySelectorAll('table.sortable').forEach(function(table){
  Array.prototype.forEach.call(table.tHead.rows[0].cells, function(th, col){
    th.addEventListener('click', function(){ sortTable(table, col, !th.classList.contains('sorted-asc')); });
  });
});
// A link can open every task table sorted: report.html#sort=basis, #sort=task-desc.
(function(){
  var m = /^#sort=([a-z_ ]+?)(-desc)?$/.exec(decodeURIComponent(location.hash));
  if (!m) return;
  document.querySelectorAll('table.sortable').forEach(function(table){
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function(th, col){
      if (th.textContent.replace('_', ' ') === m[1].replace('_', ' ')) sortTable(table, col, !m[2]);
    });
  });
})();
"""


@dataclass
class Section:
    """One tool and one field at risk, with every defect (clause) that exposes it to the same tasks."""

    tool: str
    field: str
    defects: list[Defect] = dc_field(default_factory=list)
    rows: list[LedgerRow] = dc_field(default_factory=list)  # the first defect's rows on this field

    @property
    def key(self) -> str:
        return f"{self.tool} {self.field}"

    def counts(self) -> dict[str, int]:
        found = Counter(r.basis for r in self.rows)
        return {b: found.get(b, 0) for b in BASES}

    def exposure(self) -> tuple[int, ...]:
        """Sort key, most exposed first: tasks exposed, then by the strongest basis."""
        counts = self.counts()
        return (-len(self.rows), *(-counts[b] for b in BASES))


def sections(ledger: Ledger) -> list[Section]:
    """The ledger's rows grouped by (tool, field); defects whose rows on a field are the same tasks
    with the same bases share one section. Most exposed first."""
    out: dict[tuple[str, str, tuple[tuple[str, str], ...]], Section] = {}
    for defect in ledger.defects:
        by_field: dict[str, list[LedgerRow]] = {}
        for row in ledger.rows_of(defect.id):
            by_field.setdefault(row.field, []).append(row)
        for field_path, rows in by_field.items():
            signature = tuple(sorted((r.task, r.basis) for r in rows))
            section = out.setdefault(
                (defect.tool, field_path, signature), Section(defect.tool, field_path, rows=rows)
            )
            section.defects.append(defect)
    return sorted(out.values(), key=lambda s: (s.exposure(), s.key))


def render_report(ledger: Ledger, findings: Sequence[Finding] = (), audit: GraderAudit | None = None) -> str:
    """The report. `findings`: the run's findings (`check --confirm`), for each defect's confidence
    and the static findings left unconfirmed; none from `toollint trace`. `audit`: the same run's grader
    audit (`check --audit-graders`), its section after the score at risk."""
    found = sections(ledger)
    at_risk = ledger.tasks_at_risk()
    parts = [
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>toollint score-at-risk report</title>",
        f"<style>{_STYLE}</style></head><body>",
        "<h1>Score at risk</h1>",
        (
            f"<p><b>{at_risk['exposed']} of {ledger.tasks_traced} graded task(s) at risk</b> "
            f"({', '.join(f'{at_risk[b]} {_words(b)}' for b in BASES)}), from {len(ledger.defects)} "
            f"confirmed defect(s) in {len(found)} field(s). "
            "Exposure is not reach: a listed task's verdict is derived from the state the defect "
            "leaves wrong, "
            "whether or not an agent's trajectory ever triggers the defect.</p>"
        ),
        _defects(ledger, found, findings),
        _overview(found),
        _legend(),
        _quiet_defects(ledger, found),
    ]
    parts += [_section(ledger, s, i) for i, s in enumerate(found)]
    parts.append(_unconfirmed(findings))
    if ledger.untraced:
        parts.append("<h2>Not traced</h2><ul>")
        parts += [f"<li><code>{escape(d)}</code>: {escape(why)}</li>" for d, why in ledger.untraced.items()]
        parts.append("</ul>")
    if ledger.ungrounded:
        parts.append(
            f"<h2>TL401 ungrounded oracle</h2><details><summary>{len(ledger.ungrounded)} task(s) graded "
            "from the agent's calls only</summary><ul>"
        )
        parts += [
            f"<li><code>{escape(f.path)}:{f.line}</code> {escape(f.message)}</li>" for f in ledger.ungrounded
        ]
        parts.append("</ul></details>")
    if ledger.problems:
        parts.append(f"<h2>Problems</h2><details><summary>{len(ledger.problems)} problem(s) met while "
                     "tracing</summary><ul>")
        parts += [f"<li>{escape(str(p))}</li>" for p in ledger.problems]
        parts.append("</ul></details>")
    if audit is not None:
        parts.append(grader_audit_section(audit))
    parts.append(f"<script>{_SCRIPT}</script></body></html>\n")
    return "".join(parts)


def _badge(basis: str, text: str | None = None) -> str:
    return f"<span class=\"basis\" style=\"background:{BASIS_COLOURS[basis]}\">{escape(text or basis)}</span>"


def _anchor(index: int) -> str:
    return f"field-{index}"


def _breakable(name: str) -> str:
    """`name` escaped, breakable only after a `.`, `_` or `[` (a narrow column never splits a word)."""
    return re.sub(r"([._\[])", r"\1<wbr>", escape(name))


def _clauses(section: Section, ledger: Ledger | None = None, breakable: bool = False) -> str:
    """The section's clauses; with the ledger, each a link to its defect's sentence."""
    def one(d: Defect) -> str:
        name = d.clause or d.id
        code = f"<code>{_breakable(name) if breakable else escape(name)}</code>"
        if ledger is not None:
            code = f"<a href=\"#{_defect_anchor(ledger, d)}\">{code}</a>"
        return code + (f" ({escape(d.code)})" if d.code else "")

    return ", ".join(one(d) for d in section.defects)


def _overview(found: Sequence[Section]) -> str:
    if not found:
        return "<p>No task is exposed.</p>"
    bases = [
        f'<span style="border-bottom:3px solid {BASIS_COLOURS[b]}">{escape(b).replace("_", "_<wbr>")}</span>'
        for b in BASES
    ]
    head = "".join(f"<th>{h}</th>" for h in ("tool", "field", "clauses", *bases, "exposed"))
    # The count columns are as wide as their longest header word ("collection_", "unresolved") at 13 px,
    # whatever the screen; tool, field and clauses share the rest.
    widths = "<colgroup><col style=\"width:16%\"><col style=\"width:24%\"><col>" + \
             "<col style=\"width:7em\">" * 5 + "</colgroup>"
    body = []
    for i, s in enumerate(found):
        counts = s.counts()
        cells = [
            f'<a href="#{_anchor(i)}">{_breakable(_short_tool(s.tool))}</a>',
            f"<code>{_breakable(s.field)}</code>",
            _clauses(s, breakable=True),
            *(str(counts[b]) for b in BASES),
            str(len(s.rows)),
        ]
        body.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return (f"<table class=\"overview\" id=\"overview\">{widths}<thead><tr>{head}</tr></thead>"
            f"<tbody>{''.join(body)}</tbody></table>")


def _quiet_defects(ledger: Ledger, found: Sequence[Section]) -> str:
    """Defects (and fields) no task is exposed to: said once, not given an empty section each."""
    shown = {d.id for s in found for d in s.defects}
    quiet = [d for d in ledger.defects if d.id not in shown and d.id not in ledger.untraced]
    if not quiet:
        return ""
    items = "".join(
        f"<li><code>{escape(d.id)}</code>: {ledger.totals(d.id)['traced']} task(s) in scope, none "
        "reads its fields</li>"
        for d in quiet
    )
    return f"<p>No task exposed:</p><ul>{items}</ul>"


def _short_tool(tool: str) -> str:
    """`pkg.module:Class.method` -> `Class.method`: the overview column stays narrow."""
    return tool.rpartition(":")[2] or tool


def _section(ledger: Ledger, s: Section, index: int) -> str:
    counts = s.counts()
    first = s.defects[0]
    out = [f"<section class=\"field\" id=\"{_anchor(index)}\">",
           f"<h2>{escape(_short_tool(s.tool))} &rarr; <code>{escape(s.field)}</code></h2>",
           f"<p>Clauses: {_clauses(s, ledger)}. Tool <code>{escape(s.tool)}</code>"]
    if first.tool_file:
        out.append(f" at <code>{escape(first.tool_file)}:{first.tool_line}</code>")
    out.append(f". {ledger.totals(first.id)['traced']} task(s) in scope.</p>")
    if s.field in first.collections:
        out.append(
            '<p class="muted">The tool adds elements to this collection or removes them: what it leaves '
            "wrong is which elements there are, not a field of one.</p>"
        )
    out.append("<table class=\"counts\"><tr>" + "".join(f"<th>{_badge(b)}</th>" for b in BASES)
               + "<th>exposed</th></tr><tr>" + "".join(f"<td>{counts[b]}</td>" for b in BASES)
               + f"<td>{len(s.rows)}</td></tr></table>")
    out.append(_graph(s))
    out.append(_read_sites(s))
    out.append(_task_table(s))
    out.append("</section>")
    return "".join(out)


def _words(basis: str) -> str:
    return basis  # the ledger's own name, so the report, the CSV and the terminal agree


def _legend() -> str:
    rows = "".join(
        f"<tr><td>{_badge(b)}</td><td>{escape(BASIS_MEANING[b])}</td><td>{CONFIDENCE[b]}</td></tr>"
        for b in BASES
    )
    return ("<h2 id=\"bases\">What the bases mean <span class=\"muted\" style=\"font-weight:normal;"
            "font-size:14px\">(a task exposed by several reads counts once, under the strongest)</span></h2>"
            "<table class=\"legend\"><thead><tr><th>basis</th><th>what the task's grader does</th>"
            f"<th>confidence</th></tr></thead><tbody>{rows}</tbody></table>")


def _matching(defect: Defect, findings: Sequence[Finding]) -> list[Finding]:
    """The defect's own TL2xx finding(s), and the static findings whose verdict is its witness."""
    witness = str(defect.witness) if defect.witness not in (None, "") else None
    out = []
    for f in findings:
        props = f.properties
        if f.code.startswith("TL2"):
            if f.code == defect.code and props.get("clause") == defect.clause and \
                    (witness is None or str(props.get("witness")) == witness):
                out.append(f)
        elif witness is not None and str(props.get("witness")) == witness:
            out.append(f)
    return out


def confidence(defect: Defect, findings: Sequence[Finding]) -> tuple[Confidence, str]:
    """How far a confirmed defect can be trusted (`Finding.confidence`), and why. A clause of an
    authored contract states its own premise, so its reproduced violation is the TL2xx finding's
    confidence; a derived oracle's premise is the static finding's it was derived from, so the weakest
    of those it confirmed bounds it."""
    own = [f for f in _matching(defect, findings) if f.code.startswith("TL2")]
    static = [f for f in _matching(defect, findings) if not f.code.startswith("TL2")]
    level = min([f.confidence for f in own] or [Confidence.HIGH])
    reruns = [f.properties["confirmed"] for f in own if isinstance(f.properties.get("confirmed"), dict)]
    runs = reruns[0].get("runs") if reruns else None
    again = f", reproduced in {runs} fresh runs" if runs else ""
    if defect.oracle != "derived":
        return level, f"a clause of an authored contract{again}"
    if static:
        weakest = min(static, key=lambda f: f.confidence)
        level = min(level, weakest.confidence)
        deciding = weakest.evidence.deciding if weakest.evidence is not None else None
        premise = deciding.describe() if deciding is not None else ""
        return level, (f"a check toollint derived from {weakest.code}{again}"
                       + (f"; its premise: {premise}" if premise else ""))
    return level, f"a check toollint derived from a static finding{again}"


def _defect_anchor(ledger: Ledger, defect: Defect) -> str:
    return f"defect-{ledger.defects.index(defect)}"


def _defects(ledger: Ledger, found: Sequence[Section], findings: Sequence[Finding]) -> str:
    """Each confirmed defect once, in words, with links to the fields it puts at risk."""
    if not ledger.defects:
        return ""
    out = [f"<h2>Confirmed defect{'s' if len(ledger.defects) != 1 else ''}</h2>"]
    for defect in ledger.defects:
        fields = [(i, s) for i, s in enumerate(found) if defect in s.defects]
        links = ", ".join(
            f"<a href=\"#{_anchor(i)}\"><code>{escape(s.field)}</code></a> ({len(s.rows)} task(s))"
            for i, s in fields)
        at_risk = f" Puts at risk: {links}." if links else ""
        out.append(_defect(defect, findings, _defect_anchor(ledger, defect), at_risk))
    return "".join(out)


def _defect(defect: Defect, findings: Sequence[Finding], anchor: str, at_risk: str) -> str:
    """The defect in words: its sentence; clause, confidence and the fields it puts at risk; the replay
    command; the call, reply and state diff folded beneath."""
    facts: WitnessFacts | None = None
    if isinstance(defect.witness, dict):
        facts = witness_facts(defect.witness)
    elif defect.witness not in (None, ""):
        facts = read_witness_facts(str(defect.witness))
    level, why = confidence(defect, findings)
    rule = registry.get(defect.code) if defect.code else None
    clause = f"<code>{escape(defect.clause or defect.id)}</code>" + (
        f" ({escape(defect.code)}{' ' + escape(rule.hint) if rule is not None and rule.hint else ''})"
        if defect.code else "")
    oracle = ", a derived oracle" if defect.oracle == "derived" else ""
    out = [f"<div class=\"defect\" id=\"{anchor}\">"]
    if facts is not None:
        out.append(f"<p class=\"sentence\"><b>{escape(sentence(facts))}</b></p>")
    out.append(f"<p>Clause {clause}{oracle}. Confidence: <b>{level.name.lower()}</b> "
               f"<span class=\"muted\">({escape(why)})</span>.{at_risk}</p>")
    if facts is not None:
        out.append(f"<p>Re-run it{_replay_dir(facts.replay, defect.witness)}: "
                   f"<code class=\"replay\">{escape(facts.replay)}</code></p>")
    if defect.witness not in (None, ""):
        call = f"Call: <code>{escape(facts.call(300))}</code>. " if facts is not None else ""
        out.append(f"<div class=\"muted\">{call}Witness: {_witness(defect.witness)}</div>")
    out.append("</div>")
    return "".join(out)


def _replay_dir(command: str, witness: Any) -> str:
    """` (in DIR, where the check ran)` when the printed command names the witness relative to the
    directory the check ran in; that directory is the witness file's path less the relative one."""
    shown = command.removeprefix("toollint replay ").strip()
    if not shown or Path(shown).is_absolute():
        return ""
    full = str(witness) if isinstance(witness, (str, Path)) else ""
    base = full[: -len(shown)].rstrip("/\\") if full.endswith(shown) and full != shown else str(Path.cwd())
    return f" <span class=\"muted\">(in {escape(base)}, where the check ran)</span>"


def _unconfirmed(findings: Sequence[Finding]) -> str:
    """The static findings `--confirm` left unconfirmed: untested ones with the reason, refuted ones."""
    rows = []
    for f in findings:
        verdict = f.properties.get("verdict")
        if not f.code.startswith("TL1") or not verdict or verdict in ("VIOLATES", "FLAKY"):
            continue
        if verdict == "CONFORMS":
            clauses = ", ".join(str(c) for c in f.properties.get("clauses") or [])
            why = "refuted: " + (f"the clauses testing it conform ({clauses})" if clauses else "it conforms")
        else:
            why = str(f.properties.get("verdict_detail") or "no reason recorded")
        rows.append((verdict == "CONFORMS", f, verdict, why))
    if not rows:
        return ""
    rows.sort(key=lambda r: (r[0], r[1].path, r[1].line))
    body = "".join(
        f"<tr><td><code>{escape(f.path)}:{f.line}</code> {escape(f.code)} {escape(f.message)}</td>"
        f"<td>{escape(verdict)}</td><td>{escape(why)}</td></tr>"
        for _, f, verdict, why in rows
    )
    untested = sum(1 for refuted, *_ in rows if not refuted)
    table = ("<table class=\"unconfirmed\"><colgroup><col style=\"width:50%\"><col style=\"width:9em\"><col>"
             "</colgroup><thead><tr><th>static finding</th><th>verdict</th><th>why</th></tr></thead>"
             f"<tbody>{body}</tbody></table>")
    summary = f"{untested} not tested, {len(rows) - untested} refuted"
    if len(rows) > OPEN_TASK_ROWS:
        table = f"<details><summary>{summary}</summary>{table}</details>"
    return (f"<h2 id=\"unconfirmed\">Findings --confirm did not confirm</h2><p>{summary}: a finding not "
            f"tested is neither a pass nor a failure; each says why.</p>{table}")


def _read_sites(s: Section) -> str:
    """Where the graders read the field: one line per read site and basis, with its task count."""
    groups: dict[tuple[str, str, str], list[str]] = {}
    for r in s.rows:
        groups.setdefault((r.read_site, r.grader, r.basis), []).append(r.task)
    lines = []
    for (site, grader, basis), tasks in sorted(
        groups.items(), key=lambda kv: (-len(kv[1]), BASES.index(kv[0][2]))
    ):
        sample = ", ".join(f"<code>{escape(t)}</code>" for t in tasks[:3]) + (
            ", ..." if len(tasks) > 3 else ""
        )
        lines.append(f"<li>{_badge(basis)} {len(tasks)} task(s): <code>{escape(grader)}</code> at "
                     f"<code>{escape(site)}</code> {_HOW[basis]} <code>{escape(s.field)}</code> "
                     f"<span class=\"muted\">({sample})</span></li>")
    return f"<h3>Where graders read it</h3><ul>{''.join(lines)}</ul>"


def _task_table(s: Section) -> str:
    head = "".join(f"<th>{c}</th>" for c in TASK_COLUMNS)
    widths = ("<colgroup><col style=\"width:40%\"><col style=\"width:14%\"><col style=\"width:22%\">"
              "<col style=\"width:24%\"></colgroup>")
    body = []
    for r in sorted(s.rows, key=lambda r: (BASES.index(r.basis), r.task)):
        rank = BASES.index(r.basis)
        body.append(f"<tr><td>{escape(r.task)}</td><td data-sort=\"{rank}\">{_badge(r.basis)}</td>"
                    f"<td>{escape(r.grader)}</td><td>{escape(r.read_site)}</td></tr>")
    table = (f"<table class=\"tasks sortable\">{widths}<thead><tr>{head}</tr></thead>"
             f"<tbody>{''.join(body)}</tbody></table>")
    summary = f"{len(s.rows)} exposed task(s), by basis"
    if len(s.rows) > OPEN_TASK_ROWS:
        return f"<details class=\"tasks\"><summary>{summary}</summary>{table}</details>"
    return f"<h3>{summary}</h3>{table}"


def _witness(witness: Any) -> str:
    """The witness: inline JSON, or a witness file (`toollint.dynamic` writes one per violation) shown
    with the probe it records (the call, its result and the state diff), folded."""
    if isinstance(witness, (dict, list)):
        return _pre(witness)
    text = f"<code>{escape(str(witness))}</code>"
    path = Path(str(witness))
    try:
        data = (
            json.loads(path.read_text(encoding="utf-8"))
            if path.suffix == ".json" and path.is_file()
            else None
        )
    except (OSError, UnicodeDecodeError, ValueError):
        data = None
    if isinstance(data, dict):
        text += _pre(data.get("probe", data))
    return text


def _pre(data: Any) -> str:
    body = json.dumps(data, indent=2, ensure_ascii=False, default=str)
    if len(body) > MAX_WITNESS_CHARS:
        body = body[:MAX_WITNESS_CHARS] + "\n..."
    return (f"<details><summary>probe</summary><pre>{escape(body)}</pre></details>")


def _graph(s: Section) -> str:
    """tool -> field -> read sites -> bases, edge width by number of exposed tasks."""
    rows = s.rows
    site_count = Counter(r.read_site for r in rows)
    top_sites = [site for site, _ in site_count.most_common(MAX_SITE_NODES)]
    other = sum(c for site, c in site_count.items() if site not in top_sites)
    site_names = top_sites + ([f"{other} more task(s)"] if other else [])
    basis_count: Counter[str] = Counter(r.basis for r in rows)
    bases = [b for b in BASES if basis_count.get(b)]
    height = 40 + 34 * max(len(site_names), len(bases), 1)
    cols = (10, 230, 500, 800)
    width = 1010

    def ys(n: int) -> list[int]:
        step = (height - 40) / max(n, 1)
        return [int(30 + step * i + step / 2) for i in range(n)]

    mid_y = height // 2
    site_y = dict(zip(site_names, ys(len(site_names))))
    basis_y: dict[str, int] = dict(zip(bases, ys(len(bases))))
    peak = max([1, len(rows)])

    def edge(x1: int, y1: int, x2: int, y2: int, count: int, colour: str = "#95a5a6") -> str:
        w = 1 + 12 * count / peak
        mid = (x1 + x2) / 2
        return (f"<path d=\"M{x1},{y1} C{mid},{y1} {mid},{y2} {x2},{y2}\" fill=\"none\" stroke=\"{colour}\" "
                f"stroke-opacity=\"0.55\" stroke-width=\"{w:.1f}\"><title>{count} task(s)</title></path>")

    def node(x: int, y: int, label: str, colour: str = "#2c3e50") -> str:
        short = label if len(label) <= 30 else "\u2026" + label[-29:]
        return (f"<rect x=\"{x}\" y=\"{y - 11}\" width=\"200\" height=\"22\" rx=\"4\" fill=\"#fff\" "
                f"stroke=\"{colour}\"/><text x=\"{x + 6}\" y=\"{y + 4}\"><title>{escape(label)}</title>"
                f"{escape(short)}</text>")

    svg = [
        (
            f'<svg class="flow" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" role="img" aria-label="tool to field to grader to basis">'
        )
    ]
    for x, title in zip(cols, ("tool", "field", "grader read site", "basis")):
        svg.append(f"<text x=\"{x}\" y=\"14\" font-weight=\"bold\">{title}</text>")
    svg.append(edge(cols[0] + 200, mid_y, cols[1], mid_y, len(rows)))
    to_basis: Counter[tuple[str, str]] = Counter()
    for r in rows:
        to_basis[(r.read_site if r.read_site in site_y else site_names[-1], r.basis)] += 1
    for site_name, y in site_y.items():
        svg.append(
            edge(cols[1] + 200, mid_y, cols[2], y, sum(c for (n, _), c in to_basis.items() if n == site_name))
        )
    for (site_name, basis), count in to_basis.items():
        svg.append(
            edge(cols[2] + 200, site_y[site_name], cols[3], basis_y[basis], count, BASIS_COLOURS[basis])
        )
    svg.append(node(cols[0], mid_y, _short_tool(s.tool).rsplit(".", 1)[-1]))
    svg.append(node(cols[1], mid_y, s.field))
    svg += [node(cols[2], y, name) for name, y in site_y.items()]
    svg += [node(cols[3], y, f"{b}: {basis_count.get(b, 0)}", BASIS_COLOURS[b]) for b, y in basis_y.items()]
    svg.append("</svg>")
    return "".join(svg)


# --- the grader audit (`toollint audit-graders --report`, `toollint check --audit-graders --report`) ----


@dataclass(frozen=True)
class GraderAuditRow:
    """One suite's or domain's grader-audit counts, as the section shows them."""

    variant: str
    tasks: int
    audited: int
    vacuous: int
    unchecked_effects: int
    unchecked_fields: int
    seconds: float


@dataclass(frozen=True)
class GraderAudit:
    """What the report's grader-audit section shows: the counts per suite or domain and the findings
    (TL408-TL410, each with its `witness` and, where joined, its `unnoticed` property)."""

    benchmark: str
    rows: tuple[GraderAuditRow, ...]
    findings: tuple[Finding, ...]
    # Each argument a TL103/TL202 says a tool drops that the audit saw dropped: where, and its sentence.
    seen_dropped: tuple[str, ...] = ()


def grader_audit_section(audit: GraderAudit) -> str:
    """The grader audit's section: the counts per suite or domain, then each finding (TL408-TL410)
    with its grader, its task and its witness, grouped by code; a TL410 on an argument the tool drops
    (TL103, TL202) says so."""
    head = "".join(f"<th>{h}</th>" for h in ("suite / domain", "tasks", "audited", "vacuous (TL408)",
                                             "unchecked effects (TL409)", "unchecked fields (TL410)", "time"))
    body = "".join(
        f"<tr><td>{escape(r.variant)}</td><td>{r.tasks}</td><td>{r.audited}</td><td>{r.vacuous}</td>"
        f"<td>{r.unchecked_effects}</td><td>{r.unchecked_fields}</td><td>{r.seconds:.1f} s</td></tr>"
        for r in audit.rows
    )
    intro = (f"<p>{escape(audit.benchmark)}: each task's own grader run on wrong runs built from its gold "
             "run: nothing done (TL408), one state-changing call dropped (TL409), one argument changed to "
             "another legal value (TL410). A listed task passes the wrong run.</p>")
    parts = ["<section class=\"grader-audit\" id=\"grader-audit\"><h2>Grader audit</h2>", intro,
             f"<table class=\"counts\"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"]
    joined = [f for f in audit.findings if _unnoticed(f)]
    if joined:
        parts.append(f"<p class=\"unnoticed\"><b>{len(joined)} unchecked field(s) on an argument the tool "
                     "drops</b> (TL103, TL202): defects no score would show.</p>")
    if audit.seen_dropped:
        parts.append(f"<p><b>{len(audit.seen_dropped)} argument(s) a tool drops (TL103, TL202), as the "
                     "audit saw</b>: no grader could check them.</p><ul>")
        parts += [f"<li>{escape(said)}</li>" for said in audit.seen_dropped]
        parts.append("</ul>")
    for code in sorted({f.code for f in audit.findings}):
        mine = [f for f in audit.findings if f.code == code]
        parts.append(f"<details open><summary>{code}: {len(mine)} finding(s)</summary><ul>")
        for f in mine:
            note = _unnoticed(f)
            task = "".join(f" <small>task at <code>{escape(r.path)}:{r.line}</code></small>"
                           for r in f.related if r.message != note)  # the join's is said below
            witness = f.properties.get("witness") or ""
            replay = (f" <small>replay: <code class=\"replay\">toollint replay {escape(witness)}</code>"
                      "</small>" if witness else "")
            said = f"<p class=\"sentence\">{escape(note)}</p>" if note else ""
            parts.append(f"<li><code>{escape(f.path)}:{f.line}</code> {escape(f.message)}{task}{replay}"
                         f"{said}</li>")
        parts.append("</ul></details>")
    parts.append("</section>")
    return "".join(parts)


def _unnoticed(f: Finding) -> str:
    """The sentence of a TL410 the grader audit joined with a TL103/TL202 on its argument, or ""."""
    joined = f.properties.get("unnoticed")
    return str(joined.get("sentence") or "") if isinstance(joined, dict) else ""


def grader_audit_page(audit: GraderAudit) -> str:
    """A self-contained page holding the grader audit's section (no score-at-risk trace in the run)."""
    return "".join([
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>toollint grader audit: {escape(audit.benchmark)}</title>",
        f"<style>{_STYLE}</style></head><body>",
        f"<h1>Grader audit: {escape(audit.benchmark)}</h1>",
        grader_audit_section(audit),
        "</body></html>\n",
    ])
