"""# unpaired-verb-field (TL105)

## What it does

Finds pairs of tools in one class or module whose names pair by verb (book/cancel,
reserve/release, add/remove, create/delete, open/close, suspend/resume, enable/disable,
block/unblock, lock/unlock, subscribe/unsubscribe, activate/deactivate, assign/unassign,
grant/revoke, follow/unfollow, check_in/check_out, ...) and act on the same noun (connectives like
`to`/`from` aside), where one writes a state field that the other never references. It reports on
the partner that omits the field, naming the field and the line where the other tool writes it.

A partner that replaces or deletes a whole record covers every field inside it; reads made only for
logging do not count as references.

## Why is this bad?

Inverse operations must undo each other. When `book_reservation` takes seats and
`cancel_reservation` never gives them back, every later task that books on that flight sees a world
with fewer seats than it should (a *partial effect*).

## Example

```python
class AirlineTools:
    @is_tool(ToolType.WRITE)
    def book_reservation(self, reservation_id: str, flight_id: str, seats: int) -> str:
        self.db.flights[flight_id].available_seats -= seats
        self.db.reservations[reservation_id] = {"flight_id": flight_id, "seats": seats}
        return "Booked."

    @is_tool(ToolType.WRITE)
    def cancel_reservation(self, reservation_id: str) -> str:
        self.db.reservations[reservation_id].status = "cancelled"
        return "Cancelled."
```

## Use instead

```python
class AirlineTools:
    @is_tool(ToolType.WRITE)
    def book_reservation(self, reservation_id: str, flight_id: str, seats: int) -> str:
        self.db.flights[flight_id].available_seats -= seats
        self.db.reservations[reservation_id] = {"flight_id": flight_id, "seats": seats}
        return "Booked."

    @is_tool(ToolType.WRITE)
    def cancel_reservation(self, reservation_id: str) -> str:
        reservation = self.db.reservations[reservation_id]
        reservation.status = "cancelled"
        self.db.flights[reservation.flight_id].available_seats += reservation.seats
        return "Cancelled."
```

## Precision

Medium. The pairing is by name, so a pair that is not meant to be inverse (`start_trial` /
`stop_server`) only pairs when the nouns agree too, or by record: `reserve_flight` creates the
`reservations[*]` record that `cancel_reservation` writes, so the two pair although their nouns
differ (such a pair rests on code; a pair by name alone, on names, a low-confidence premise). Writes
nobody expects undone are not obligations: a monotonic id counter (`self.next_id += 1`), an append
to a history or log, and, when the cancel closes the record rather than deleting it, the lists the
booking appended the record to. A field the partner leaves on purpose (a
cancelled reservation kept in the user's list) is reported and is arguable; the rule cannot read
intent.

## Options

None.

## References

- docs/method.md, Part 1 (unpaired verb field) and Part 3 (Partial Effect, TL203).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from toollint.analysis import FunctionSummary, StateAccess, ToolInfo
from toollint.analysis.vocabulary import PARTNERS, VERB_PAIRS, split_name
from toollint.context import ModuleContext
from toollint.evidence import Evidence, EvidenceKind, Premise
from toollint.model import Finding, RelatedLocation
from toollint.registry import rule

PAIR_ORDER = frozenset(VERB_PAIRS)  # (do, undo): which side of a pair a tool is


def covers(partner: FunctionSummary, path: str) -> bool:
    """The partner references `path`, something inside it, or replaces/deletes a record holding it."""
    if any(p == path or p.startswith((path + ".", path + "[")) for p in partner.referenced_paths()):
        return True
    return any(path.startswith((w.path + ".", w.path + "[")) for w in partner.writes)


def _groups(tools: list[ToolInfo]) -> dict[str | None, list[ToolInfo]]:
    groups: dict[str | None, list[ToolInfo]] = {}
    for t in tools:
        groups.setdefault(t.class_name, []).append(t)
    return groups


@rule(
    code="TL105",
    name="unpaired-verb-field",
    short="Of two verb-paired tools, one writes a state field the other never references",
    level="warning",
    precision="medium",
    tags=("correctness", "partial-effect"),
    hint="Partial Effect",
)
def check(ctx: ModuleContext) -> Iterator[Finding]:
    analysis = ctx.analysis
    for tools in _groups(analysis.tools).values():
        named = [(t, split_name(t.name)) for t in tools]
        for writer, wsplit in named:
            if wsplit is None:
                continue
            wsum = analysis.summary(writer)
            for partner, psplit in named:
                if psplit is None or partner is writer or psplit[0] not in PARTNERS[wsplit[0]]:
                    continue
                psum = analysis.summary(partner)
                do, undo = (wsum, psum) if (wsplit[0], psplit[0]) in PAIR_ORDER else (psum, wsum)
                shared = shared_record(do, undo)
                if wsplit[1] != psplit[1] and shared is None:
                    # the same noun phrase (add_user_to_channel does not pair with remove_user_from_slack),
                    # or the same record: reserve_flight creates the reservation cancel_reservation ends
                    continue
                reported: set[str] = set()
                # A cancel that closes the record (`reservation.status = "cancelled"`) keeps it: the
                # lists its doing partner appended it to are its history, not something to undo.
                closes = shared is not None and undo is psum and any(
                    w.path.startswith(shared + ".") for w in psum.writes)
                for access in _first_writes(wsum):
                    if access.path in reported or covers(psum, access.path):
                        continue
                    if closes and _appends(access) and not access.path.startswith(str(shared)):
                        continue
                    reported.add(access.path)
                    yield ctx.finding(
                        "TL105",
                        partner.node,
                        f"`{writer.name}` writes `{access.path}` (line {access.line}) but its partner "
                        f"`{partner.name}` never references it",
                        line=partner.node.lineno,
                        end_line=partner.node.lineno,
                        tool=partner.qualname,
                        related=[RelatedLocation(ctx.path, access.line, 1,
                                                 f"`{writer.name}` writes `{access.path}` here")],
                        evidence=Evidence(state_path=access.path, premises=(
                            Premise(f"`{writer.name}` and `{partner.name}` undo each other",
                                    EvidenceKind.CODE if shared else EvidenceKind.NAME,
                                    f"both act on the record `{shared}`" if shared
                                    else f"their names pair {wsplit[0]}/{psplit[0]} on the same noun"),
                            Premise(f"`{partner.name}` never references `{access.path}`", EvidenceKind.CODE,
                                    f"`{writer.name}` writes it at line {access.line}"))),
                        field=access.path,
                        partner=writer.qualname,
                        paired_by="name" if wsplit[1] == psplit[1] else f"record {shared}",
                        # Which side of the pair the flagged tool is: an undo (cancel) forgets what its
                        # do (book) wrote, or a do never sets what its undo resets (a round trip's order).
                        role="undo" if (wsplit[0], psplit[0]) in PAIR_ORDER else "do",
                    )


def shared_record(do: FunctionSummary, undo: FunctionSummary) -> str | None:
    """A record the doing side creates whole (`db.reservations[rid] = {...}`) and the undoing side
    writes inside or deletes: the two act on the same record whatever their names say."""
    created = sorted({w.path for w in do.writes if w.path.endswith("[*]") and w.kind == "write"})
    for record in created:
        if any(w.path == record or w.path.startswith((record + ".", record + "[")) for w in undo.writes):
            return record
    return None


def not_an_obligation(access: StateAccess) -> bool:
    """Writes a partner is not expected to undo: a monotonic id counter (`self.next_id += 1`), an
    append to a history or log (`self.history.append(...)`), a private lookup table the tool fills as
    a cache (`self._flight_cost_lookup[key] = ...`)."""
    field = access.field
    node = access.node
    if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add) and COUNTER_FIELD.search(field) \
            and isinstance(node.value, ast.Constant) and node.value.value == 1:
        return True
    if CACHE_FIELD.match(access.path):
        return True
    return access.kind == "mutate" and bool(HISTORY_FIELD.search(field))


def _appends(access: StateAccess) -> bool:
    """`user.reservations.append(rid)`: a mutation that only adds to a list or set."""
    node = access.node
    return access.kind == "mutate" and isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
        and node.func.attr in ("append", "add", "insert", "extend", "appendleft")


COUNTER_FIELD = re.compile(r"(?:^|_)(?:id|counter|seq|sequence)$|^_?next_?", re.IGNORECASE)
CACHE_FIELD = re.compile(r"_\w*(?:lookup|cache|cached|memo|index)\b")  # the tool object's own lookup table
HISTORY_FIELD = re.compile(r"(?:^|_)(?:history|log|logs|events|audit|journal|changelog)$", re.IGNORECASE)


def _first_writes(summary: FunctionSummary) -> list[StateAccess]:
    seen: dict[str, StateAccess] = {}
    for w in summary.writes:
        if not_an_obligation(w):
            continue
        seen.setdefault(w.path, w)
    # A field nested in a record the writer also writes whole is not a separate obligation.
    return [w for p, w in seen.items() if not any(p != q and p.startswith((q + ".", q + "[")) for q in seen)]
