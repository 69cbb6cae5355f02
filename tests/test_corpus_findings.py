"""The corpus runs (`../shared/corpus`, nine public code bases no rule was written on), linted as a new
user would with no configuration: every finding has a judgement in bench/recall_judgements.json and
none is judged false. A new finding on this code must be read and judged; a false one removed at its
cause (issue 21)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))

import recall  # after the path tweak: bench/ is not a package

from toollint.engine import lint_paths
from toollint.settings import Settings

BASES = {b.name.split()[0].removeprefix("corpus-"): b for b in recall.shared_corpus()[0]}


@pytest.mark.parametrize("folder", recall.CORPUS_FOLDERS)
def test_corpus_findings_are_judged_and_none_is_false(folder: str) -> None:
    base = BASES.get(folder)
    if base is None:
        pytest.skip(f"../shared/corpus/{folder} is absent (the corpus is test data beside the checkout)")
    judgements = json.loads(recall.JUDGEMENTS.read_text())
    result = lint_paths([str(t) for t in base.targets], Settings(select=["TL1", "TL4", "TL9"]), jobs=1)
    verdicts = {}
    for f in (f for r in result.files for f in r.reported if f.code in recall.STATIC_RULES):
        key = recall.finding_key(base, f.path, f.tool, f.code, recall.detail_of(f.properties))
        verdicts[key] = judgements.get(key, {}).get("verdict", "unjudged")
    assert not [k for k, v in verdicts.items() if v in ("unjudged", "false")], verdicts
    assert not [r.path for r in result.files for f in r.reported if f.code in ("TL901", "TL904")]


def test_the_toolsandbox_false_findings_stay_gone() -> None:
    """The seven corpus findings of before issue 21 were all false (TL104's exit direction, a value
    stored before its test, an empty text that means nothing): none comes back."""
    judgements = json.loads(recall.JUDGEMENTS.read_text())
    old = [k for k, j in judgements.items() if k.startswith("corpus-") and j["verdict"] == "false"]
    assert len(old) >= 7
    base = BASES.get("toolsandbox")
    if base is None:
        pytest.skip("../shared/corpus/toolsandbox is absent")
    result = lint_paths([str(t) for t in base.targets], Settings(), jobs=1)
    keys = {recall.finding_key(base, f.path, f.tool, f.code, recall.detail_of(f.properties))
            for r in result.files for f in r.reported}
    assert not keys & set(old)
