"""A self-contained HTML report of a score-at-risk ledger: no network, no script or style from outside.

For each defect: its witness, the fields, and a picture (inline SVG, Sankey-like) of tool -> field ->
grader read site -> basis, edge widths by exposed-task count; then the exposed tasks grouped by basis,
the whole ledger as a table sortable by any column (a few lines of inline script; `#sort=basis` or
`#sort=task-desc` in the URL opens it sorted), TL401 graders and the problems met while tracing.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from html import escape
from pathlib import Path
from typing import Any

from toollint.model import Finding
from toollint.trace.ledger import LEDGER_COLUMNS, Defect, Ledger
from toollint.trace.readsites import BASES

# How a grader's read exposes the field, per basis: only exact_field reads the field itself.
_HOW = {
    "exact_field": "reads",
    "collection_only": "reads only the collection holding",
    "whole_state_hash": "compares the whole state, which holds",
    "unresolved": "makes a read toollint cannot resolve, counted as exposing",
}

MAX_SITE_NODES = 12
MAX_WITNESS_CHARS = 4000
BASIS_COLOURS: dict[str, str] = {"exact_field": "#c0392b", "whole_state_hash": "#8e44ad", "collection_only": "#d68910",
                 "unresolved": "#7f8c8d"}

_STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222}
h1{font-size:20px}h2{font-size:17px;margin-top:32px}h3{font-size:15px}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}
th{background:#f2f2f2;cursor:pointer;user-select:none}th.sorted-asc::after{content:" \\25B2"}
th.sorted-desc::after{content:" \\25BC"}code{background:#f6f6f6;padding:0 3px}
.basis{display:inline-block;padding:0 6px;border-radius:3px;color:#fff;font-size:12px}
.totals td{font-variant-numeric:tabular-nums}pre{background:#f6f6f6;padding:6px;overflow:auto;max-height:320px}svg text{font:12px system-ui,sans-serif}
"""

_SCRIPT = """
document.querySelectorAll('table.sortable').forEach(function(table){
  table.querySelectorAll('th').forEach(function(th, col){
    th.addEventListener('click', function(){
      var asc = !th.classList.contains('sorted-asc');
      table.querySelectorAll('th').forEach(function(h){h.classList.remove('sorted-asc','sorted-desc');});
      th.classList.add(asc ? 'sorted-asc' : 'sorted-desc');
      var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
      rows.sort(function(a, b){
        var x = a.cells[col].textContent, y = b.cells[col].textContent;
        var n = parseFloat(x) - parseFloat(y);
        var c = isNaN(n) ? x.localeCompare(y, undefined, {numeric: true}) : n;
        return asc ? c : -c;
      });
      rows.forEach(function(r){body.appendChild(r);});
    });
  });
});
// A link can open the ledger sorted: report.html#sort=basis or #sort=task-desc.
(function(){
  var m = /^#sort=([a-z_]+?)(-desc)?$/.exec(location.hash);
  if (!m) return;
  document.querySelectorAll('#ledger th').forEach(function(th){
    if (th.textContent === m[1]) { th.click(); if (m[2]) th.click(); }
  });
})();
"""


def render_report(ledger: Ledger, findings: Sequence[Finding] = ()) -> str:
    parts = [
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">",
        "<title>toollint score-at-risk report</title>",
        f"<style>{_STYLE}</style></head><body>",
        "<h1>Score at risk</h1>",
        (f"<p>{ledger.tasks_traced} task(s) traced, {len(ledger.defects)} defect(s). Exposure is not reach: a "
        "listed task's verdict is derived from the state the defect leaves wrong.</p>"),
    ]
    for defect in ledger.defects:
        parts.append(_defect_section(ledger, defect))
    parts.append("<h2>Ledger</h2>")
    parts.append(_ledger_table(ledger))
    if ledger.ungrounded:
        parts.append("<h2>TL401 ungrounded oracle</h2><ul>")
        parts += [f"<li><code>{escape(f.path)}:{f.line}</code> {escape(f.message)}</li>" for f in ledger.ungrounded]
        parts.append("</ul>")
    if ledger.problems:
        parts.append("<h2>Problems</h2><ul>")
        parts += [f"<li>{escape(str(p))}</li>" for p in ledger.problems]
        parts.append("</ul>")
    parts.append(f"<script>{_SCRIPT}</script></body></html>\n")
    return "".join(parts)


def _badge(basis: str) -> str:
    return f"<span class=\"basis\" style=\"background:{BASIS_COLOURS[basis]}\">{escape(basis)}</span>"


def _defect_section(ledger: Ledger, defect: Defect) -> str:
    rows = ledger.rows_of(defect.id)
    totals = ledger.totals(defect.id)
    out = [f"<section class=\"defect\" id=\"{escape(defect.id, quote=True)}\">",
           f"<h2>{escape(defect.tool)} &mdash; {escape(defect.clause or 'defect')}</h2>"]
    if defect.tool_file:
        out.append(f"<p>Tool: <code>{escape(defect.tool_file)}:{defect.tool_line}</code></p>")
    out.append(f"<p>Witness: {_witness(defect.witness)}</p>")
    out.append("<p>Fields: " + ", ".join(f"<code>{escape(f)}</code>" for f in defect.fields) + "</p>")
    out.append("<table class=\"totals\"><tr>" + "".join(f"<th>{_badge(b)}</th>" for b in BASES)
               + "<th>exposed</th><th>traced</th></tr><tr>"
               + "".join(f"<td>{totals[b]}</td>" for b in BASES)
               + f"<td>{totals['exposed']}</td><td>{totals['traced']}</td></tr></table>")
    out.append(_graph(defect, rows))
    for basis in BASES:
        tasks = [r for r in rows if r.basis == basis]
        if tasks:
            out.append(f"<h3>{_badge(basis)} {len(tasks)} task(s)</h3><ul>")
            out += [f"<li><code>{escape(r.task)}</code> &larr; {escape(r.grader)} at "
                    f"<code>{escape(r.read_site)}</code> {_HOW[basis]} <code>{escape(r.field)}</code></li>"
                    for r in tasks]
            out.append("</ul>")
    out.append("</section>")
    return "".join(out)


def _witness(witness: Any) -> str:
    """The witness: inline JSON, or a witness file (`toollint.dynamic` writes one per violation) shown
    with the probe it records (the call, its result and the state diff)."""
    if witness is None or witness == "":
        return "<em>none attached</em>"
    if isinstance(witness, (dict, list)):
        return _pre(witness)
    text = f"<code>{escape(str(witness))}</code>"
    path = Path(str(witness))
    try:
        data = json.loads(path.read_text(encoding="utf-8")) if path.suffix == ".json" and path.is_file() else None
    except (OSError, UnicodeDecodeError, ValueError):
        data = None
    if isinstance(data, dict):
        text += _pre(data.get("probe", data))
    return text


def _pre(data: Any) -> str:
    body = json.dumps(data, indent=2, ensure_ascii=False, default=str)
    if len(body) > MAX_WITNESS_CHARS:
        body = body[:MAX_WITNESS_CHARS] + "\n..."
    return f"<details open><summary>probe</summary><pre>{escape(body)}</pre></details>"


def _graph(defect: Defect, rows: Sequence[Any]) -> str:
    """tool -> fields -> read sites -> bases, edge width by number of exposed tasks."""
    field_count = Counter(r.field for r in rows)
    site_count = Counter(r.read_site for r in rows)
    top_sites = [s for s, _ in site_count.most_common(MAX_SITE_NODES)]
    other = sum(c for s, c in site_count.items() if s not in top_sites)
    site_names = top_sites + ([f"{other} more task(s)"] if other else [])
    fields = list(defect.fields)
    basis_count = Counter(r.basis for r in rows)
    height = 40 + 34 * max(len(fields), len(site_names), len(BASES), 1)
    cols = (10, 230, 500, 800)
    width = 1010

    def ys(n: int) -> list[int]:
        step = (height - 40) / max(n, 1)
        return [int(30 + step * i + step / 2) for i in range(n)]

    tool_y = height // 2
    field_y = dict(zip(fields, ys(len(fields))))
    site_y = dict(zip(site_names, ys(len(site_names))))
    basis_y: dict[str, int] = dict(zip(BASES, ys(len(BASES))))
    peak = max([1, *field_count.values(), *site_count.values()])

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

    svg = [(f"<svg class=\"flow\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" "
           f"viewBox=\"0 0 {width} {height}\" role=\"img\" aria-label=\"tool to field to grader to basis\">")]
    for x, title in zip(cols, ("tool", "field", "grader read site", "basis")):
        svg.append(f"<text x=\"{x}\" y=\"14\" font-weight=\"bold\">{title}</text>")
    for f in fields:
        svg.append(edge(cols[0] + 200, tool_y, cols[1], field_y[f], field_count.get(f, 0)))
    links: Counter[tuple[str, str]] = Counter()
    to_basis: Counter[tuple[str, str]] = Counter()
    for r in rows:
        site = r.read_site if r.read_site in site_y else site_names[-1]
        links[(r.field, site)] += 1
        to_basis[(site, r.basis)] += 1
    for (f, site), count in links.items():
        if f in field_y:
            svg.append(edge(cols[1] + 200, field_y[f], cols[2], site_y[site], count))
    for (site, basis), count in to_basis.items():
        svg.append(edge(cols[2] + 200, site_y[site], cols[3], basis_y[basis], count, BASIS_COLOURS[basis]))
    svg.append(node(cols[0], tool_y, defect.tool_name or defect.tool))
    svg += [node(cols[1], y, f) for f, y in field_y.items()]
    svg += [node(cols[2], y, s) for s, y in site_y.items()]
    svg += [node(cols[3], y, f"{b}: {basis_count.get(b, 0)}", BASIS_COLOURS[b]) for b, y in basis_y.items()]
    svg.append("</svg>")
    return "".join(svg)


def _ledger_table(ledger: Ledger) -> str:
    head = "".join(f"<th>{escape(c)}</th>" for c in LEDGER_COLUMNS)
    body = []
    for r in ledger.rows:
        cells = [escape(str(getattr(r, c))) for c in LEDGER_COLUMNS]
        body.append("<tr>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    return (f"<table class=\"sortable\" id=\"ledger\"><thead><tr>{head}</tr></thead>"
            f"<tbody>{''.join(body)}</tbody></table>")
