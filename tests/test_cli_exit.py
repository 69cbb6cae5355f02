"""How the `toollint` command ends (`toollint.cli.run`, the console script and `python -m toollint`):
out of the process without freeing its heap object by object, yet with every line of output written,
the exit code `main` gave, the exit handlers run, a thread still running waited for, and a profiler's data
written."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

FIXTURE = Path(__file__).parent / "fixtures" / "frontends" / "banking_tools.py"


def _python(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120,
                          check=False)


def test_the_command_writes_all_its_output_and_gives_mains_exit_code(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "toollint", "check", "--isolated", "--no-cache", "--output-format", "json",
         str(FIXTURE)], capture_output=True, text=True, timeout=120, check=False, cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    findings = json.loads(proc.stdout)  # the whole document reached the pipe before the process ended
    assert findings and all(f["filename"].endswith("banking_tools.py") for f in findings)
    clean = subprocess.run([sys.executable, "-m", "toollint", "--version"], capture_output=True, text=True,
                           timeout=120, check=False)
    assert (clean.returncode, clean.stdout.startswith("toollint ")) == (0, True)


def test_exit_handlers_still_run() -> None:
    proc = _python("import atexit; atexit.register(lambda: print('handler ran'));"
                   "from toollint.cli import run; run()", "--version")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == [proc.stdout.splitlines()[0], "handler ran"]
    assert proc.stdout.startswith("toollint ")


def test_a_thread_still_running_is_waited_for() -> None:
    proc = _python("import threading, time\n"
                   "def late():\n    time.sleep(0.3)\n    print('thread done', flush=True)\n"
                   "threading.Thread(target=late).start()\n"
                   "from toollint.cli import run\nrun()", "--version")
    assert proc.returncode == 0, proc.stderr
    assert "thread done" in proc.stdout


def test_a_profiler_writes_its_data(tmp_path: Path) -> None:
    out = tmp_path / "run.prof"
    proc = subprocess.run([sys.executable, "-m", "cProfile", "-o", str(out), "-m", "toollint", "--version"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert out.stat().st_size > 0  # cProfile writes after the program returns: the process did not end first


def test_a_command_started_without_its_output_stream_ends_cleanly() -> None:
    # `toollint --version >&-`: Python starts with no sys.stdout (None), and the exit path flushes none
    proc = subprocess.run(["sh", "-c", f'"{sys.executable}" -m toollint --version >&-'], capture_output=True,
                          text=True, timeout=120, check=False)
    assert (proc.returncode, proc.stderr) == (0, "")
