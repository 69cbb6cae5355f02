"""BFCL multi-turn (the Berkeley Function Calling Leaderboard's `eval_checker`). Static only: its
tools are found by discovery (`_api_description` classes); `patterns.py` says which checkers read the
live API instances rather than the agent's record."""

from __future__ import annotations

from toollint.profiles.api import Profile

PROFILE = Profile(
    name="bfcl",
    description="BFCL multi-turn API classes and checkers (`_api_description`)",
)
