"""What the validation harness asks of a benchmark: a profile's `validation` part.

The harness (`harness.py`), gold replay (`replay.py`) and constructed paths (`constructed.py`) are
generic; everything they need to know about one benchmark family comes from a `BenchmarkDriver`:
which files are its tool modules and how a mutant of one is hosted, which tools it registers, its
tasks' ground-truth calls, and how its own graders score a sequence of calls. Drivers reach the
benchmark's interpreter only through the host gateway (`toollint.dynamic.protocol`).
"""

from __future__ import annotations

from toollint.dynamic.protocol import SERVICES
from toollint.profiles import Profile, ProfileError, all_profiles, get_profile
from toollint.profiles.api import BenchmarkDriver, PathDriver

__all__ = ["BenchmarkDriver", "PathDriver", "driver_for", "validating_profiles"]


def validating_profiles() -> list[Profile]:
    """The profiles that can be validated (they have a `validation` part)."""
    return [p for p in all_profiles() if p.has_part("validation")]


def driver_for(name: str) -> BenchmarkDriver:
    """The driver of the profile called `name`; ValueError (one line) when there is none."""
    try:
        profile = get_profile(name)
    except ProfileError as exc:
        raise ValueError(str(exc)) from None
    if not profile.has_part("validation"):
        names = ", ".join(p.name for p in validating_profiles()) or "none"
        raise ValueError(f"benchmark {name!r} has no validation driver (profiles with one: {names})")
    return profile.driver(SERVICES)
