"""bench/recall.py's judgements are data: every one is a verdict the script counts, with a note, keyed
the way the script keys a finding (code base:file:tool:rule:detail, no line numbers)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))

import recall  # after the path tweak: bench/ is not a package

KEY = re.compile(r"^[\w.-]+:[^:]+\.py:[^:]+:TL(?:10[1-5]|40[1-9]|41[01]):.*$")


def test_every_judgement_is_a_counted_verdict_with_a_note() -> None:
    judgements = json.loads(recall.JUDGEMENTS.read_text())
    assert judgements
    for key, judgement in judgements.items():
        assert KEY.match(key), key
        assert judgement["verdict"] in recall.VERDICTS and judgement["note"].strip(), key


def test_a_finding_key_survives_a_line_move(tmp_path: Path) -> None:
    base = recall.CodeBase("demo 1.0", tmp_path, (tmp_path,))
    key = recall.finding_key(base, str(tmp_path / "pkg" / "tools.py"), "Tools.update", "TL104",
                             recall.detail_of({"param": "amount"}))
    assert key == "demo:pkg/tools.py:Tools.update:TL104:amount"
