"""`bench/speed.py`'s parse floor: a bare interpreter parsing the files toollint checks, shared over the
CPUs, is what its "parse/ruff" column times: every file is parsed, by one process or another."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))

import speed


def test_the_parse_floor_reads_every_file_and_survives_a_bad_one(tmp_path: Path) -> None:
    names = []
    for i in range(9):
        names.append(tmp_path / f"m{i}.py")
        names[-1].write_text("def f(:\n" if i == 4 else f"X = {i}\n")
    listing = tmp_path / "files.txt"
    listing.write_text("".join(f"{n}\n" for n in names))
    parse = 'ast.parse(open(name, "rb").read())'
    traced = speed.PARSE_FLOOR.replace(parse, parse + '; os.write(1, (name + "\\n").encode())')
    assert traced != speed.PARSE_FLOOR
    out = subprocess.run([sys.executable, "-c", traced, str(listing)], capture_output=True, text=True,
                         timeout=60, check=True)
    assert sorted(out.stdout.split()) == sorted(str(n) for i, n in enumerate(names) if i != 4)
