"""Register extra benchmark profiles for one test, as a third-party entry point would, so tests of
"a profile without this part" do not depend on what the built-in profiles happen to lack."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from toollint import profiles
from toollint.profiles import Profile


class FakeEntryPoint:
    def __init__(self, name: str, value: Any) -> None:
        self.name, self.value, self._loaded = name, f"plugin:{name}", value

    def load(self) -> Any:
        if isinstance(self._loaded, Exception):
            raise self._loaded
        return self._loaded


@contextmanager
def registered(monkeypatch: pytest.MonkeyPatch, *extra: Profile | FakeEntryPoint) -> Iterator[None]:
    points = [e if isinstance(e, FakeEntryPoint) else FakeEntryPoint(e.name, e) for e in extra]
    original = profiles._entry_points
    monkeypatch.setattr(profiles, "_entry_points", lambda: points)
    profiles.reset_registry()
    try:
        yield
    finally:
        monkeypatch.setattr(profiles, "_entry_points", original)
        profiles.reset_registry()
