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
`stop_server`) only pairs when the nouns agree too. A field the partner leaves on purpose (a
cancelled reservation kept in the user's list) is reported and is arguable; the rule cannot read
intent.

## Options

None.

## References

- docs/method.md, Part 1 (unpaired verb field) and Part 3 (Partial Effect, TL203).
"""

from __future__ import annotations

from collections.abc import Iterator

from toollint.analysis import FunctionSummary, StateAccess, ToolInfo
from toollint.analysis.vocabulary import CONNECTIVES, PARTNERS, VERB_PAIRS
from toollint.context import ModuleContext
from toollint.evidence import Evidence
from toollint.model import Finding, RelatedLocation
from toollint.registry import rule

PAIR_ORDER = frozenset(VERB_PAIRS)  # (do, undo): which side of a pair a tool is


def split_name(name: str) -> tuple[str, frozenset[str]] | None:
    """`check_in_passenger` -> ("check_in", {"passenger"}); nouns are singularised, connectives
    dropped, so `invite_user_to_slack` and `remove_user_from_slack` share {"user", "slack"}."""
    parts = name.lower().strip("_").split("_")
    for size in (2, 1):
        verb = "_".join(parts[:size])
        if verb in PARTNERS and len(parts) > size:
            nouns = {p[:-1] if p.endswith("s") and len(p) > 3 else p for p in parts[size:]} - CONNECTIVES
            return verb, frozenset(nouns)
    return None


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
                if wsplit[1] != psplit[1]:
                    continue  # the same noun phrase: add_user_to_channel does not pair with remove_user_from_slack
                psum = analysis.summary(partner)
                reported: set[str] = set()
                for access in _first_writes(wsum):
                    if access.path in reported or covers(psum, access.path):
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
                        evidence=Evidence(state_path=access.path),
                        field=access.path,
                        partner=writer.qualname,
                        # Which side of the pair the flagged tool is: an undo (cancel) forgets what its
                        # do (book) wrote, or a do never sets what its undo resets (a round trip's order).
                        role="undo" if (wsplit[0], psplit[0]) in PAIR_ORDER else "do",
                    )


def _first_writes(summary: FunctionSummary) -> list[StateAccess]:
    seen: dict[str, StateAccess] = {}
    for w in summary.writes:
        seen.setdefault(w.path, w)
    # A field nested in a record the writer also writes whole is not a separate obligation.
    return [w for p, w in seen.items() if not any(p != q and p.startswith((q + ".", q + "[")) for q in seen)]
