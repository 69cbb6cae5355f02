"""Helpers imported from other modules of the tree are followed: by name, and through `import *`
(the resolver reads each module's import table and star imports once)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from toollint.analysis import analyze_module

TOOLS = '''\
{imports}
db = {{"items": []}}


@tool
def add_item(x: str) -> str:
    save(db, x)
    return "added"
'''


@pytest.mark.parametrize("imports", ["from .helpers import *", "from .helpers import save",
                                     "from .other import *\nfrom .helpers import *"])
def test_a_helper_imported_from_a_sibling_is_followed(tmp_path: Path, imports: str) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "other.py").write_text("def unrelated():\n    return 1\n")
    (pkg / "helpers.py").write_text("def save(db, x):\n    db['items'].append(x)\n")
    source = TOOLS.format(imports=imports)
    path = pkg / "tools.py"
    path.write_text(source)
    analysis = analyze_module(ast.parse(source), None, "pkg.tools", str(path), source)
    (tool,) = analysis.tools
    assert [w.path for w in analysis.summary(tool).writes] == ["db.items"]
    assert analysis.facts()[0].writes


def test_a_name_no_import_brings_is_not_followed(tmp_path: Path) -> None:
    (tmp_path / "helpers.py").write_text("def keep(db, x):\n    db['items'].append(x)\n")
    source = TOOLS.format(imports="from helpers import *")
    path = tmp_path / "tools.py"
    path.write_text(source)
    analysis = analyze_module(ast.parse(source), None, "tools", str(path), source)
    (tool,) = analysis.tools
    assert analysis.summary(tool).writes == []
