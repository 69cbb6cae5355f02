"""Everything toollint writes to a terminal besides the report: errors, warnings, the summary and
the one progress line; whether to colour; and text made safe to print.

File names that are not valid UTF-8 reach toollint as surrogate-escaped text (what `os.scandir`
returns). `printable` turns them into text every output can hold: the undecodable bytes as `\\xff`
escapes, the rest unchanged.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Mapping
from typing import TextIO

ColorChoice = str  # "auto", "always" or "never"


def printable(text: str) -> str:
    """`text` with surrogate escapes (undecodable file-name bytes) shown as `\\xNN`; unchanged when it
    is valid Unicode already (the common case costs one encode)."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    out = []
    for ch in text:
        if "\udc80" <= ch <= "\udcff":  # a byte the file-system decoder could not decode
            out.append(f"\\x{ord(ch) - 0xDC00:02x}")
        elif "\ud800" <= ch <= "\udfff":  # any other lone surrogate
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return "".join(out)


def use_color(stream: TextIO, choice: ColorChoice = "auto", environ: Mapping[str, str] | None = None) -> bool:
    """Colour when asked (`always`), never when refused (`never`), else as the environment says:
    `NO_COLOR` (any non-empty value) turns it off, `FORCE_COLOR` on, otherwise a terminal that is
    not `TERM=dumb` gets colour (https://no-color.org, https://force-color.org)."""
    if choice in ("always", "never"):
        return choice == "always"
    env = os.environ if environ is None else environ
    if env.get("NO_COLOR"):
        return False
    if env.get("FORCE_COLOR"):
        return True
    try:
        is_tty = stream.isatty()
    except (AttributeError, ValueError):  # a closed or replaced stream
        return False
    return is_tty and env.get("TERM") != "dumb"


class Style:
    """ANSI styles, or nothing when colour is off."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def _wrap(self, code: str, text: str) -> str:
        return f"\033[{code}m{text}\033[0m" if self.enabled and text else text

    def bold(self, text: str) -> str:
        return self._wrap("1", text)

    def red(self, text: str) -> str:
        return self._wrap("1;31", text)

    def yellow(self, text: str) -> str:
        return self._wrap("1;33", text)

    def green(self, text: str) -> str:
        return self._wrap("1;32", text)

    def cyan(self, text: str) -> str:
        return self._wrap("36", text)

    def dim(self, text: str) -> str:
        return self._wrap("2", text)


class Progress:
    """One line redrawn in place on a terminal (`\\r` and erase-line); nothing anywhere else:
    `confirm [3/12] 41 s refuel_data`. Calling it counts an item; `status` says what is starting
    (a host, a task enumeration) without counting; `expect` adds to the total. The time is since the
    run started (`started`, a `time.monotonic()` value)."""

    def __init__(self, stream: TextIO, label: str, enabled: bool, started: float | None = None) -> None:
        self.stream = stream
        self.label = label
        self.enabled = enabled
        self.count = 0
        self.total = 0
        self.shown = False  # something is on the line, for `done` to erase
        self.width = 100
        self.started = time.monotonic() if started is None else started

    def __call__(self, item: str) -> None:
        self.count += 1
        self._show(item)

    def expect(self, items: int) -> None:
        self.total += items

    def status(self, text: str) -> None:
        self._show(text)

    def line(self, text: str) -> str:
        counted = f"[{self.count}/{self.total}] " if self.total else f"[{self.count}] " if self.count else ""
        elapsed = time.monotonic() - self.started
        return printable(f"{self.label} {counted}{elapsed:.0f} s {text}")[: self.width]

    def _show(self, text: str) -> None:
        if self.enabled:
            self.shown = True
            self.stream.write(f"\r\033[K{self.line(text)}")
            self.stream.flush()

    def done(self) -> None:
        if self.enabled and self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self.shown = False


class Console:
    """stderr for one run: `toollint: error: ...` lines always, warnings and notes unless quiet."""

    def __init__(
        self, stream: TextIO | None = None, *, quiet: bool = False, color: ColorChoice = "auto"
    ) -> None:
        self._stream = stream
        self.quiet = quiet
        self.color_choice = color
        self.started = time.monotonic()  # the run's start: progress lines show the time since

    @property
    def stream(self) -> TextIO:
        # Looked up late: tests (and pytest's capture) replace sys.stderr after the console is made.
        return self._stream if self._stream is not None else sys.stderr

    @property
    def style(self) -> Style:
        return Style(use_color(self.stream, self.color_choice))

    def write_line(self, text: str) -> None:
        self.stream.write(printable(text) + "\n")

    def error(self, message: str) -> None:
        """Shown even with --quiet: the run failed."""
        self.write_line(f"{self.style.red('toollint: error:')} {message}")

    def warn(self, message: str) -> None:
        if not self.quiet:
            self.write_line(f"{self.style.yellow('toollint: warning:')} {message}")

    def note(self, message: str) -> None:
        """A plain line (summaries, what a step did), unless quiet."""
        if not self.quiet:
            self.write_line(message)

    def progress(self, label: str) -> Progress:
        try:
            tty = self.stream.isatty()
        except (AttributeError, ValueError):
            tty = False
        return Progress(self.stream, label, enabled=tty and not self.quiet, started=self.started)


def announce(progress: Callable[[str], None] | None, text: str, expect: int = 0) -> None:
    """Say on a progress line what is starting, and how many items are to come (a plain callback, as
    library callers pass, is not told)."""
    if isinstance(progress, Progress):
        progress.expect(expect)
        progress.status(text)
