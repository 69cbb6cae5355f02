"""Calls that change files on disk: the world a tool writes when it holds no state of its own.

A file tool (`WriteFileTool`, `shutil.move`, a PDF saved under an output folder) changes what the
next call, the user or a grader reads from disk. The summary records such a call as a write of
`FILES` (a path no snapshot holds, so the oracles and the tracer never match it to state).

A temporary file (`tempfile.NamedTemporaryFile(...)`) is scratch, not a change: it is no call here.
`open(p)` writes only with a mode that writes (`"w"`, `"a"`, `"x"`, `"+"`), spelled as a constant or
as a local bound only to such constants (`mode = "a" if append else "w"`).
"""

from __future__ import annotations

import ast
import re

from toollint.analysis.walk import walk_nodes

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef

FILES = "<files>"

# module functions that create, change, move or delete files (as `module.function`)
FILE_FUNCTIONS = frozenset({
    "os.remove", "os.unlink", "os.rename", "os.renames", "os.replace", "os.makedirs", "os.mkdir",
    "os.rmdir", "os.removedirs", "os.truncate", "shutil.copy", "shutil.copy2", "shutil.copyfile",
    "shutil.copytree", "shutil.move", "shutil.rmtree", "urllib.request.urlretrieve",
})
# `pathlib.Path` methods that do (`rename`, `replace` are left out: `df.rename(...)` is no file)
FILE_METHODS = frozenset({"write_text", "write_bytes", "unlink", "mkdir", "rmdir", "touch", "symlink_to",
                          "hardlink_to"})
# openers taking the path first and the mode second (`open(p, "w")`, `zipfile.ZipFile(p, "w")`)
OPENERS = frozenset({"open", "io.open", "gzip.open", "bz2.open", "lzma.open", "codecs.open", "tarfile.open",
                     "zipfile.ZipFile"})
WRITE_MODE = re.compile(r"[wax+]")


def _dotted(expr: ast.expr) -> str:
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        base = _dotted(expr.value)
        return f"{base}.{expr.attr}" if base else ""
    return ""


def _mode_values(mode: ast.expr, fn: FunctionNode) -> list[str] | None:
    """The constant strings a mode can be, or None when one of them is not a constant."""
    if isinstance(mode, ast.Constant) and isinstance(mode.value, str):
        return [mode.value]
    if isinstance(mode, ast.IfExp):
        body, orelse = _mode_values(mode.body, fn), _mode_values(mode.orelse, fn)
        return None if body is None or orelse is None else body + orelse
    if isinstance(mode, ast.Name):
        bound = [n.value for n in walk_nodes(fn) if isinstance(n, ast.Assign)
                 and any(isinstance(t, ast.Name) and t.id == mode.id for t in n.targets)]
        values = [_mode_values(v, fn) for v in bound if not isinstance(v, ast.Name)]
        if not bound or len(values) != len(bound) or any(v is None for v in values):
            return None
        return [m for v in values if v is not None for m in v]
    return None


def writes_files(call: ast.Call, fn: FunctionNode) -> bool:
    """Whether `call` (in `fn`, whose locals may spell its mode) creates, changes or deletes a file."""
    name = _dotted(call.func)
    if name in FILE_FUNCTIONS:
        return True
    attr = call.func.attr if isinstance(call.func, ast.Attribute) else ""
    if attr in FILE_METHODS:
        return True
    if name in OPENERS:
        mode = call.args[1] if len(call.args) > 1 else None
    elif attr == "open" and not name.startswith(("os.", "webbrowser.")):
        mode = call.args[0] if call.args else None  # `path.open("w")`
    else:
        return False
    mode = next((kw.value for kw in call.keywords if kw.arg == "mode"), mode)
    if mode is None:
        return False  # read, the default
    values = _mode_values(mode, fn)
    return bool(values) and all(WRITE_MODE.search(v) for v in values or [])
