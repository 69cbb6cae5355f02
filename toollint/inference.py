"""What an annotation name stands for, when the syntax alone does not say.

`amount: Amount` means nothing to a rule until `Amount = Optional[float]` is found, in this module or
in the one it was imported from. Module-local aliases are read from the tree we already have; names
imported from elsewhere are followed with astroid, which finds the defining module on disk the way
the interpreter would (relative imports included) without importing or running it. astroid is only
consulted for such names, so files with plain annotations never pay for it.
"""

from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path

MAX_DEPTH = 3


def _alias_value(tree: ast.Module, name: str) -> ast.expr | None:
    """The expression a module-level name is bound to: `Amount = Optional[float]`, `type Amount = ...`."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return node.value
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == name:
            return node.value
        if type(node).__name__ == "TypeAlias" and getattr(getattr(node, "name", None), "id", None) == name:
            return node.value  # type: ignore[attr-defined,no-any-return]
    return None


def _unwrap_newtype(value: ast.expr) -> ast.expr:
    """`NewType("UserId", str)` stands for `str`."""
    if isinstance(value, ast.Call) and value.args and len(value.args) == 2:
        func = value.func
        if (isinstance(func, ast.Name) and func.id == "NewType") or (
            isinstance(func, ast.Attribute) and func.attr == "NewType"
        ):
            return value.args[1]
    return value


def _imported_from(tree: ast.Module, name: str) -> bool:
    return any(
        isinstance(node, ast.ImportFrom) and any((a.asname or a.name) == name for a in node.names)
        for node in tree.body
    )


def _module_file(importer: Path, module_name: str, level: int, modname: str) -> Path | None:
    """The file a `from <modname> import ...` in `importer` refers to, found on disk without
    importing: relative imports from the importer's directory, absolute ones from its package root."""
    if level:
        base = importer.parent
        for _ in range(level - 1):
            base = base.parent
    else:
        depth = max(module_name.count("."), 0)  # pkg.sub.mod sits `depth` directories below the root
        base = importer.parent
        for _ in range(depth):
            base = base.parent
    target = base.joinpath(*modname.split(".")) if modname else base
    for candidate in (target.with_suffix(".py"), target / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


@lru_cache(maxsize=256)
def _astroid_alias(tree_dump: str, module_name: str, path: str, name: str) -> str | None:
    """Source text of what an imported name is bound to in its defining module, via astroid."""
    import astroid
    from astroid import nodes

    tree = ast.parse(tree_dump)
    for node in tree.body:
        if not isinstance(node, ast.ImportFrom):
            continue
        for alias in node.names:
            if (alias.asname or alias.name) != name:
                continue
            target = _module_file(Path(path), module_name, node.level, node.module or "")
            if target is None:
                return None
            try:
                module = astroid.MANAGER.ast_from_file(str(target), source=True)
                for defined in module.getattr(alias.name):
                    parent = defined.parent
                    if isinstance(parent, (nodes.Assign, nodes.AnnAssign)) and parent.value is not None:
                        return str(parent.value.as_string())
                    if isinstance(defined, nodes.ClassDef):
                        return str(defined.name)
            except Exception:  # noqa: BLE001 -- a module astroid cannot read leaves the name unknown
                return None
    return None


def resolve_alias(tree: ast.Module, module_name: str, path: str, name: str) -> ast.expr | None:
    """The annotation expression `name` stands for, or None when it is not an alias we can see."""
    value = _alias_value(tree, name)
    if value is None and _imported_from(tree, name):
        imports = "\n".join(ast.unparse(n) for n in tree.body if isinstance(n, ast.ImportFrom))
        text = _astroid_alias(imports, module_name, path, name)
        if text is not None:
            try:
                value = ast.parse(text, mode="eval").body
            except SyntaxError:
                return None
    return _unwrap_newtype(value) if value is not None else None
