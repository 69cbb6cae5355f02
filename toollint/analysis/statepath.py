"""State paths, parsed once: the analysis writes a path into a tool's state as text
(`db.flights[*].dates`: names, and `[*]` for an element of a collection or a value under a computed
key); `StatePath.parse` is the one reader of that text, for the derived oracles, `--confirm`'s clause
matching and the tracer alike.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

ELEMENT = "[*]"  # an element of a collection, or a value under a computed key (`acc[key]`)
_SEGMENT = re.compile(r"\[\*\]|[^.\[\]]+")


@dataclass(frozen=True)
class StatePath:
    """`db.lines[*].status` as segments: `("db", "lines", "[*]", "status")`."""

    segments: tuple[str, ...]

    @classmethod
    def parse(cls, text: str) -> StatePath:
        return cls(tuple(_SEGMENT.findall(text)))

    def __str__(self) -> str:
        return ".".join(self.segments).replace("." + ELEMENT, ELEMENT)

    @property
    def root(self) -> str | None:
        return self.segments[0] if self.segments else None

    @property
    def leaf(self) -> str | None:
        """The last segment (`[*]` when the path ends in an element)."""
        return self.segments[-1] if self.segments else None

    @property
    def field(self) -> str:
        """The last named segment: `accounts[*].amount` -> `amount`, `accounts[*]` -> `accounts`."""
        return next((s for s in reversed(self.segments) if s != ELEMENT), "")

    @property
    def below_root(self) -> StatePath:
        """The path without its first segment (`db.lines[*]` in the code is `lines[*]` in a snapshot of
        `db`)."""
        return StatePath(self.segments[1:])

    def without_trailing_elements(self) -> StatePath:
        """`a.b[*][*]` -> `a.b`: the whole mapping a computed key selects from."""
        segs = self.segments
        while segs and segs[-1] == ELEMENT:
            segs = segs[:-1]
        return StatePath(segs)

    def starts_with(self, prefix: StatePath) -> bool:
        """`prefix` is a non-empty prefix of this path, segment by segment; `[*]` matches any one segment."""
        short = prefix.segments
        return bool(short) and len(self.segments) >= len(short) and all(
            a == b or ELEMENT in (a, b) for a, b in zip(self.segments, short))
