"""The errors every part of toollint raises for the user, and the exit codes they map to.

Every error here carries a message fit for one line of output (`toollint: error: MESSAGE`) and
means exit code 2. The modules that raise them (config, engine, baseline, fixes, the check steps)
import them from here, never from the CLI, so no module needs the CLI and the CLI needs no module
to import it back.
"""

from __future__ import annotations

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
# `--confirm` probed tools and could test none of them (every one UNTESTABLE), and nothing else was
# found: not a pass. 5, as pytest's "no tests ran"; `--exit-zero` does not hide it (it is not a finding).
EXIT_NOTHING_TESTED = 5


class ToollintError(Exception):
    """A problem the user must fix (bad arguments, configuration, input files); exit code 2."""


class UsageError(ToollintError):
    """Bad arguments found after parsing."""


class ConfigError(ToollintError):
    """A configuration file or table is wrong: its message names the file and the key."""


class SelectionError(ToollintError, ValueError):
    """A select/ignore entry names no code, prefix or rule name."""


class BaselineError(ToollintError):
    """A baseline or `--diff-base` problem."""


class FixError(ToollintError):
    """A file could not be fixed (unreadable, undecodable, unwritable)."""


class StopCheck(Exception):
    """Raised by a check step that has produced the run's whole output (--write-baseline, --diff).

    Not an error: the step has already written what the run shows, and `exit_code` is the run's."""

    def __init__(self, exit_code: int) -> None:
        super().__init__(exit_code)
        self.exit_code = exit_code
