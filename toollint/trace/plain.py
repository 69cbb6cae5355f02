"""A confirmed defect in one plain sentence, for a reader who never read the paper: what the call did,
what made it wrong, and what the tool's own surface promised.

    refuel_data added 2.0 to line L1003's data_refueling_gb (and 2 more changes), although line
    L1003's status is 'Suspended'; its docstring says "Line status must be Active".

Built from the witness file `check --confirm` wrote (`dynamic/witness.py`): the call and its reply,
the keyed state diff (`/agent_db/lines/{line_id=L1003}/data_refueling_gb`), the pre-state values the
clause read (its bindings) and the clause's provenance (the quoted surface). The witness is data from
disk, so it is read into `WitnessFacts` once, field by field, and nothing else here reads the JSON.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MAX_VALUE_CHARS = 40
MAX_QUOTE_CHARS = 160

# How a surface is named in the sentence, by provenance kind (`contracts.model.SOURCE_KINDS`).
SURFACE_WORDS: dict[str, str] = {
    "docstring": "its docstring says",
    "signature": "its signature says",
    "schema": "its schema says",
    "return": "its reply says",
    "template": "its message template says",
    "readme": "the README says",
    "standard": "the standard it follows says",
    "comment": "a comment in its code says",
    "log": "its log message says",
}
# A docstring section label before the quoted promise ("Checks: Line status must be Active").
_LABEL = re.compile(r"^[A-Z][A-Za-z ]{0,20}:\s+(?=\S)")
_KEYED = re.compile(r"^(?P<coll>[^{]*)\{(?P<key>[^=}]+)=(?P<value>[^}]*)\}$")


@dataclass(frozen=True)
class Change:
    """One entry of the witness's keyed diff: `op` add / remove / replace at a keyed path."""

    op: str
    path: str
    before: Any = None
    after: Any = None


@dataclass(frozen=True)
class Binding:
    """A state value the clause read on the violating run: `pre.agent_db.lines{line_id=L1003}.status`."""

    expr: str
    value: Any


@dataclass(frozen=True)
class Surface:
    """Where the violated clause comes from: a quoted surface of the tool, or toollint's derivation."""

    tier: str
    kind: str | None = None
    quote: str | None = None
    note: str | None = None
    file: str | None = None
    line: int | None = None
    finding: str | None = None  # derived: the static finding's code
    about: str | None = None


@dataclass(frozen=True)
class WitnessFacts:
    """What a witness file records about one violation, typed."""

    code: str
    tool: str
    clause: str
    kind: str  # the probe's kind: pre_violating, happy, arg, round_trip, ...
    args: tuple[tuple[str, Any], ...]
    status: str  # "ok" or the error status of the call
    reply: str | None  # the reply's message, when it has one
    error: str | None  # the exception type, when the call raised
    changes: tuple[Change, ...]
    bindings: tuple[Binding, ...]
    surface: Surface | None
    replay: str  # the command `check --confirm` printed beside the violation
    varied: str | None = None  # TL202: the argument the partner call changed
    partner: bool = False  # TL202: a second call, differing only in `varied`, was compared
    partner_value: Any = None
    sequence: tuple[str, ...] = ()  # a round trip: the calls made, in order
    history: int = 0  # a reset leak seen after this many earlier calls

    def call(self, limit: int = 100) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self.args if v is not None)
        if len(inner) > limit:
            inner = inner[: limit - 3] + "..."
        return f"{self.tool}({inner})"


def read_witness_facts(path: Path | str) -> WitnessFacts | None:
    """The facts of the witness file at `path`, or None when it cannot be read as one."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return witness_facts(data, str(path))


def witness_facts(data: Any, path: str = "") -> WitnessFacts | None:
    """`data` (a witness's JSON) as facts; None when it lacks the call it must record."""
    if not isinstance(data, dict) or not isinstance(data.get("probe"), dict):
        return None
    probe: dict[str, Any] = data["probe"]
    clause = _dict(data.get("clause"))
    result = _dict(probe.get("result"))
    evaluation = _dict(data.get("evaluation"))
    partner = data["partner"] if isinstance(data.get("partner"), dict) else None
    varied = probe.get("varied") or (partner.get("varied") if partner is not None else None)
    prov = clause["provenance"] if isinstance(clause.get("provenance"), dict) else None
    sequence = [*_list(probe.get("before")), {"tool": probe.get("tool"), "args": probe.get("args")},
                *_list(probe.get("after"))]
    return WitnessFacts(
        code=str(data.get("code") or ""),
        tool=str(probe.get("tool") or data.get("tool") or "the tool"),
        clause=str(clause.get("id") or ""),
        kind=str(probe.get("kind") or ""),
        args=tuple((str(k), v) for k, v in _dict(probe.get("args")).items()),
        status=str(result.get("status") or ""),
        reply=_reply(result.get("value")),
        error=str(result["error_type"]) if result.get("error_type") else None,
        changes=tuple(
            Change(str(c.get("op") or ""), str(c.get("path") or ""), c.get("before"), c.get("after"))
            for c in _list(probe.get("diff"))),
        bindings=tuple(Binding(str(b.get("expr") or ""), b.get("value"))
                       for b in _list(evaluation.get("bindings")) if b.get("expr")),
        surface=None if prov is None else Surface(
            str(prov.get("tier") or ""), _str(prov.get("kind")), _str(prov.get("quote")),
            _str(prov.get("note")),
            _str(prov.get("file")), prov.get("line") if isinstance(prov.get("line"), int) else None,
            _str(prov.get("finding")), _str(prov.get("about"))),
        replay=str(data.get("replay") or f"toollint replay {path}"),
        varied=_str(varied),
        partner=partner is not None,
        partner_value=_dict(partner.get("args")).get(str(varied)) if partner is not None and varied else None,
        sequence=tuple(f"{c.get('tool')}({', '.join(f'{k}={v!r}' for k, v in _dict(c.get('args')).items())})"
                       for c in sequence) if len(sequence) > 1 else (),
        history=len(_list(data.get("history"))),
    )


def _list(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _str(value: Any) -> str | None:
    return str(value) if value not in (None, "") else None


def _reply(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("message"), str):
        return str(value["message"])
    return None


# --- words for paths and values -------------------------------------------------------------------


_FIELD = re.compile(r"^[a-z_][a-z0-9_]*$")
# One step of a dotted path: a name, `{key=value}`, `['key']` or `[0]`.
_STEP = re.compile(
    r"(?P<name>[A-Za-z_]\w*)|\{[^=}]+=(?P<keyed>[^}]*)\}|\[(?P<sub>'[^']*'|\"[^\"]*\"|[^\]]*)\]")


def _segments(path: str) -> list[tuple[str, str | None]]:
    """(name, key) steps of a state path, in the diff's pointer form (`/agent_db/lines/{line_id=L1003}/x`,
    `/agent_db/reservations/XEHM4B/x`: a step that is no field name is the key of the one before) or
    the bindings' dotted form (`pre.agent_db.lines{line_id=L1003}.x`, `flights['HAT005'].x`). List
    indexes are left out: they say where an entry sits, not what it is."""
    out: list[tuple[str, str | None]] = []
    if path.startswith("/"):
        for part in path.strip("/").split("/"):
            keyed = part.startswith("{") and "=" in part
            key = part[1:-1].partition("=")[2] if keyed else part
            if out and out[-1][1] is None and (keyed or not _FIELD.match(part)) and not part.isdigit():
                out[-1] = (out[-1][0], key)
            elif part and not part.isdigit():
                out.append((part, None))
        return out
    for m in _STEP.finditer(path):
        if m.group("name"):
            out.append((m.group("name"), None))
            continue
        key = m.group("keyed") if m.group("keyed") is not None else m.group("sub").strip("'\"")
        if out and out[-1][1] is None and not key.isdigit():
            out[-1] = (out[-1][0], key)
    return out[1:] if out and out[0][0] in ("pre", "post") else out


def _singular(name: str) -> str:
    if name.endswith("ies") and len(name) > 4:
        return name[:-3] + "y"
    if name.endswith(("sses", "ches", "shes", "xes")):
        return name[:-2]
    if name.endswith("s") and not name.endswith("ss") and len(name) > 3:
        return name[:-1]
    return name


def thing(path: str) -> str:
    """A state path in words: `/agent_db/lines/{line_id=L1003}/data_refueling_gb` ->
    `line L1003's data_refueling_gb`; `/agent_db/bills/{bill_id=B1}/line_items/0` -> `bill B1's
    line_items`; `flights['F1'].dates['2024-05-20'].seats` -> `flight F1's dates['2024-05-20'].seats`.
    The first record named by its key is the owner; a path with none is shown dotted (`stats.calls`)."""
    segments = _segments(path)
    first = next((i for i, (_, key) in enumerate(segments) if key is not None), None)
    if first is None:
        return ".".join(name for name, _ in segments) or "the state"
    name, key = segments[first]
    rest = ".".join(n + (f"[{k!r}]" if k is not None else "") for n, k in segments[first + 1:])
    owner = f"{_singular(name)} {key}"
    return f"{owner}'s {rest}" if rest else owner


def _entity(path: str) -> tuple[str, str] | None:
    """The first record a path names by its key (`('lines', 'L1003')`), if any."""
    return next(((n, k) for n, k in _segments(path) if k is not None), None)


def value_text(value: Any) -> str:
    text = repr(value) if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= MAX_VALUE_CHARS else text[: MAX_VALUE_CHARS - 3] + "..."


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def change_text(change: Change) -> str:
    """What one diff entry did, as a verb phrase: `added 2.0 to line L1003's data_refueling_gb`."""
    where = thing(change.path)
    if change.op == "add":
        return f"added an entry to {where}" if change.path.rstrip("/").rsplit("/", 1)[-1].isdigit() \
            else f"set {where} to {value_text(change.after)}"
    if change.op == "remove":
        return f"removed {where} (it was {value_text(change.before)})"
    before, after = _number(change.before), _number(change.after)
    if before is not None and after is not None and after != before:
        delta = round(abs(after - before), 10)
        shown = int(delta) if delta.is_integer() and isinstance(change.after, int) else delta
        return (f"added {shown} to {where}" if after > before else f"took {shown} from {where}") + \
            f" ({value_text(change.before)} -> {value_text(change.after)})"
    return f"set {where} to {value_text(change.after)} (it was {value_text(change.before)})"


def bindings_text(bindings: tuple[Binding, ...]) -> str:
    """`line L1003's status is 'Suspended'`; a value read before and after: `... stayed 100.0` or
    `... went from 1 to 2`."""
    by_path: dict[str, dict[str, Any]] = {}
    for b in bindings:
        when, _, rest = b.expr.partition(".")
        if when not in ("pre", "post") or not rest:
            when, rest = "pre", b.expr
        by_path.setdefault(rest, {})[when] = b.value
    parts = []
    for rest, seen in list(by_path.items())[:3]:
        name = thing(rest)
        if "pre" in seen and "post" in seen:
            parts.append(f"{name} stayed {value_text(seen['pre'])}" if seen["pre"] == seen["post"]
                         else f"{name} went from {value_text(seen['pre'])} to {value_text(seen['post'])}")
        elif "post" in seen:
            parts.append(f"{name} is {value_text(seen['post'])} after the call")
        else:
            parts.append(f"{name} is {value_text(seen['pre'])}")
    return " and ".join(parts)


def surface_text(surface: Surface | None) -> str:
    """`its docstring says "Line status must be Active"`, or where a derived check comes from."""
    if surface is None:
        return ""
    if surface.tier == "derived":
        where = f" at line {surface.line}" if surface.line else ""
        about = f" about {surface.about}" if surface.about else ""
        return f"toollint derived this check from its {surface.finding or 'static'} finding{where}{about}"
    if surface.quote:
        quote = _LABEL.sub("", surface.quote.strip().lstrip("#").strip())
        if len(quote) > MAX_QUOTE_CHARS:
            quote = quote[: MAX_QUOTE_CHARS - 3] + "..."
        return f"{SURFACE_WORDS.get(surface.kind or '', 'its documentation says')} \u201c{quote}\u201d"
    if surface.note:
        note = surface.note.strip()
        return "the contract's author specified it: " + (note if len(note) <= MAX_QUOTE_CHARS
                                                        else note[: MAX_QUOTE_CHARS - 3] + "...")
    return ""


# --- the sentence ---------------------------------------------------------------------------------


def _lead_change(facts: WitnessFacts) -> tuple[Change | None, int]:
    """The change to name (one in the record the clause read, else the first), and how many others."""
    if not facts.changes:
        return None, 0
    read = {_entity(b.expr) for b in facts.bindings} - {None}
    lead = next((c for c in facts.changes if _entity(c.path) in read), facts.changes[0])
    return lead, len(facts.changes) - 1


def _changed(facts: WitnessFacts) -> str:
    lead, more = _lead_change(facts)
    if lead is None:
        return "changed nothing"
    return change_text(lead) + (f" and made {more} more change{'s' if more != 1 else ''}" if more else "")


def sentence(facts: WitnessFacts) -> str:
    """The defect in one sentence, ending with the surface it breaks."""
    state = bindings_text(facts.bindings)
    kind = facts.clause.split(".", 1)[0]
    if facts.kind == "round_trip" or facts.sequence and kind == "eff" and facts.code == "TL203":
        calls = " then ".join(facts.sequence) or facts.call()
        lead, more = _lead_change(facts)
        left = f"left {thing(lead.path)} changed" if lead is not None else f"left {facts.clause} false"
        what = f"{calls} {left}" + (f" (and {more} more)" if more else "") + ": the undo did not undo it"
    elif kind == "pre":
        if facts.status == "ok":
            what = f"{facts.tool} {_changed(facts)}"
        elif facts.changes:
            what = f"{facts.tool} failed but still {_changed(facts)}"
        else:
            what = f"{facts.tool} refused the call with {facts.error or 'an error'}, not the declared one"
        what += f", although {state}" if state else f", although {facts.clause} did not hold"
    elif facts.code == "TL202" and facts.partner and facts.varied:
        value = dict(facts.args).get(facts.varied)
        what = (f"{facts.tool} left the same state with {facts.varied}={value!r} as with "
                f"{facts.varied}={facts.partner_value!r}: it ignored {facts.varied}")
    elif facts.code == "TL205":
        what = (f"{facts.tool} left state behind that survives reset" if not facts.history else
                f"{facts.tool} behaved differently after {facts.history - 1} earlier call(s) in the same "
                "process: state kept outside the environment survives reset")
    elif facts.code == "TL206" or kind == "frame":
        what = f"{facts.tool} also {_changed(facts)}, which it should leave alone"
    elif facts.status != "ok":
        what = f"{facts.tool} raised {facts.error or 'an error'} on a legal call"
    else:
        replied = f" replied \u201c{facts.reply}\u201d" if facts.reply else " reported success"
        what = f"{facts.tool}{replied} but {_changed(facts)}"
        if state:
            what += f"{':' if not facts.changes else ', while'} {state}"
    promise = surface_text(facts.surface)
    return f"{what}; {promise}." if promise else f"{what}."
