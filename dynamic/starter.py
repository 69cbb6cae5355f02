"""`toollint confirm init PATH`: a starter `[tool.toollint.confirm]` for a benchmark no profile hosts.

`--confirm` needs to build the benchmark's environment, list its tools and snapshot its state. For a
benchmark without a profile that used to be a hand-written factory, `tools` and `state`. Static
discovery already knows most of it; this writes it down:

- **toolkit classes** (tools are methods): the classes, built with no arguments (`classes`), each
  given its scenario by the loader the code has (`load = "_load_scenario"`); a class whose
  constructor needs arguments gets the module-level function that builds one (`factory`), if any;
- **tool classes** (`Tool.invoke(data, ...)`): the classes (`tool-classes`) and, as the
  state they are given, the data loader nearest to them (`factory = "pkg.data:load_data"`);
- where the benchmark is imported from (`sys-path`), `benchmark = "none"` (no profile's help), and,
  as comments, the state the writers write.

It prints the configuration (a dry run) unless told where to write it: `--write` adds it to the
project's `pyproject.toml` (never replacing a `[tool.toollint.confirm]` there), `-o FILE` writes a
file of its own for `--config FILE` (never over an existing one). Stdlib and toollint's analysis only;
nothing of the benchmark is imported.
"""

from __future__ import annotations

import ast
import os
import re
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from toollint.analysis.discovery import SCENARIO_LOADERS
from toollint.analysis.module import analyze_module
from toollint.files import guess_module_name

SKIP_DIRS = frozenset({".git", ".venv", "venv", "node_modules", "__pycache__", ".tox", "site-packages",
                       "tests", "test"})
# A zero-argument function whose name says it loads the data or scenario a tool class is given.
LOADER_NAME = re.compile(r"^(?:load|get|make|build|create)_?(?:data|db|database|scenario|state|env\w*)$")
MAX_FILES = 2000


@dataclass
class Toolkit:
    """One hostable group of tools, as discovery found it."""

    form: str  # "classes" (methods of toolkit classes) or "tool-classes" (Tool.invoke(data, ...))
    classes: list[str] = field(default_factory=list)  # "module:Class"
    tools: list[str] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)  # the state paths the writers write
    factory: str | None = None
    load: str | None = None
    roots: set[Path] = field(default_factory=set)  # directories the modules are imported from
    problems: list[str] = field(default_factory=list)


@dataclass
class _Module:
    path: Path
    name: str
    tree: ast.Module


def python_files(path: Path) -> Iterator[Path]:
    if path.is_file():
        yield path
        return
    count = 0
    for directory, dirs, files in os.walk(path):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
        for name in sorted(files):
            if name.endswith(".py"):
                count += 1
                if count > MAX_FILES:
                    return
                yield Path(directory) / name


def _parse(path: Path) -> _Module | None:
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
        return None
    return _Module(path, guess_module_name(path), tree)


def _import_root(module: _Module) -> Path:
    """The directory `module` is imported from: above its top-level package."""
    return Path(os.path.abspath(module.path)).parents[module.name.count(".")]


def _classes(tree: ast.Module) -> dict[str, ast.ClassDef]:
    return {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}


def _required_init_args(cls: ast.ClassDef) -> list[str]:
    init = next((n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
    if init is None:
        # a dataclass's fields without defaults are its constructor's arguments
        if any(isinstance(d, (ast.Name, ast.Call, ast.Attribute)) and "dataclass" in ast.unparse(d)
               for d in cls.decorator_list):
            return [ast.unparse(s.target) for s in cls.body
                    if isinstance(s, ast.AnnAssign) and s.value is None]
        return []
    args = init.args
    positional = [*args.posonlyargs, *args.args][1:]
    required = positional[:len(positional) - len(args.defaults)]
    kw = [a for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is None]
    return [a.arg for a in [*required, *kw]]


def _required(fn: ast.FunctionDef) -> list[ast.arg]:
    """The parameters a call must pass."""
    return fn.args.args[:len(fn.args.args) - len(fn.args.defaults)]


def _builders(modules: Sequence[_Module], cls: str) -> list[str]:
    """Module-level functions with no required argument that return a `cls(...)`."""
    out = []
    for m in modules:
        for fn in m.tree.body:
            if not isinstance(fn, ast.FunctionDef) or _required(fn):
                continue
            returns = [r.value for r in ast.walk(fn) if isinstance(r, ast.Return) and r.value is not None]
            annotated = fn.returns is not None and ast.unparse(fn.returns).strip("'\"") == cls
            if annotated or any(isinstance(v, ast.Call) and ast.unparse(v.func).rsplit(".", 1)[-1] == cls
                                for v in returns):
                out.append(f"{m.name}:{fn.name}")
    return out


def _loaders(modules: Sequence[_Module], near: str) -> list[str]:
    """Zero-argument data loaders (`load_data`), nearest to the package `near` first."""
    found = []
    for m in modules:
        for fn in m.tree.body:
            if isinstance(fn, ast.FunctionDef) and LOADER_NAME.match(fn.name) and not _required(fn):
                shared = len(os.path.commonprefix([m.name.split("."), near.split(".")]))
                found.append((-shared, m.name.count("."), f"{m.name}:{fn.name}"))
    return [ref for *_rest, ref in sorted(found)]


def _named_as_imported(modules: list[_Module]) -> None:
    """Module names as the code imports itself: `from suite.apis.clock import ...`
    in a tree with no `__init__.py` says the tree is imported from above `suite`."""
    files = {Path(os.path.abspath(m.path)): m for m in modules}
    for m in modules:
        for node in ast.walk(m.tree):
            if not isinstance(node, ast.ImportFrom) or node.level or "." not in (node.module or ""):
                continue
            assert node.module is not None
            parts = node.module.split(".")
            for target in files:
                tail = [*target.parent.parts[-(len(parts) - 1):], target.stem] if len(parts) > 1 else []
                if tail == parts and len(target.parts) > len(parts):
                    root = target.parents[len(parts) - 1]
                    for path, other in files.items():
                        if root in path.parents:
                            rel = path.relative_to(root).with_suffix("")
                            other.name = ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)
                    return


def discover(path: Path, extra: Sequence[Path] = ()) -> list[Toolkit]:
    """The hostable groups of tools under `path`; `extra`: more folders to look for loaders in."""
    modules = [m for m in (_parse(p) for p in python_files(path)) if m is not None]
    _named_as_imported(modules)
    seen = {m.path for m in modules}
    context = [m for d in extra for p in python_files(d) if p not in seen and (m := _parse(p)) is not None]
    methods = Toolkit("classes")
    tool_classes = Toolkit("tool-classes")
    builders: dict[str, list[str]] = {}
    class_writes: dict[str, list[str]] = {}
    for m in modules:
        analysis = analyze_module(m.tree, module_name=m.name, path=str(m.path))
        classes = _classes(m.tree)
        for tool in analysis.tools:
            cls = classes.get(tool.class_name or "")
            if cls is None:
                continue  # a module-level function: no class to build
            static = any(ast.unparse(d) == "staticmethod" for d in tool.node.decorator_list)
            group = tool_classes if static else methods
            ref = f"{m.name}:{cls.name}"
            summary = analysis.summaries.get(tool.qualname)
            written = [w.path for w in (summary.writes if summary else [])]
            group.writes = list(dict.fromkeys([*group.writes, *written]))
            class_writes.setdefault(ref, []).extend(written)
            group.roots.add(_import_root(m))
            if static:
                if ref not in group.classes:
                    group.classes.append(ref)
                continue
            group.tools.append(tool.name)
            if ref in group.classes:
                continue
            group.classes.append(ref)
            if _required_init_args(cls):
                builders[ref] = _builders([*modules, *context], cls.name)
            loader = next((f.name for f in cls.body
                           if isinstance(f, ast.FunctionDef) and f.name in SCENARIO_LOADERS), None)
            if loader:
                methods.load = loader
    if builders:  # a constructor with arguments: the code's own builder, one class per host
        ref, found = next(iter(builders.items()))
        if found:
            methods.factory = found[0]
            methods.classes = [ref]
        else:
            methods.problems.append(f"{ref} needs constructor arguments and no function of the code "
                                    f"builds one: write one and name it as `factory`")
    by_loader: dict[str | None, Toolkit] = {}
    for ref in tool_classes.classes:  # each tool class with the data loader nearest to it (a domain's)
        loaders = _loaders([*modules, *context], ref.partition(":")[0])
        group = by_loader.setdefault(loaders[0] if loaders else None, Toolkit(
            "tool-classes", factory=loaders[0] if loaders else None, roots=tool_classes.roots))
        group.classes.append(ref)
        group.writes = list(dict.fromkeys([*group.writes, *class_writes.get(ref, [])]))
    for loader, group in by_loader.items():
        if loader is None:
            group.problems.append("no zero-argument data loader (load_data, get_db, ...) was found for the "
                                  "state the tool classes are given: name one as `factory`")
    return [g for g in (methods, *by_loader.values()) if g.classes]


def _toml_list(values: Sequence[str]) -> str:
    """A TOML array, one element a line when it would not fit on one."""
    one = "[" + ", ".join(_toml_str(v) for v in values) + "]"
    if len(one) <= 80:
        return one
    return "[\n" + "".join(f"    {_toml_str(v)},\n" for v in values) + "]"


def _toml_str(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def render(group: Toolkit, *, base: Path, python: str | None, others: Sequence[Toolkit] = (),
           header: bool = True) -> str:
    """The TOML text: `[tool.toollint]` (with `header`) and `[tool.toollint.confirm]`; paths relative
    to `base` (the configuration file's folder) when under it."""
    def where(p: Path) -> str:
        rel = os.path.relpath(p, base)
        return rel if not rel.startswith("..") else str(p)

    lines = ["# Written by `toollint confirm init` from what static discovery found; review it, then run",
             "# `toollint check --confirm`."]
    if header:
        lines += ["[tool.toollint]",
                  'benchmark = "none"  # hosted as configured below, with no benchmark profile\'s help', ""]
    lines += ["[tool.toollint.confirm]", 'adapter = "toolkit"']
    if python:
        lines.append(f"python = {_toml_str(python)}")
    lines.append(f"sys-path = {_toml_list(sorted(where(r) for r in group.roots))}")
    if group.form == "tool-classes":
        lines.append(f"tool-classes = {_toml_list(group.classes)}  # each tool's invoke(state, ...)")
        if group.factory:
            lines.append(f"factory = {_toml_str(group.factory)}  # the state the tool classes are given")
    elif group.factory:
        lines.append(f"factory = {_toml_str(group.factory)}  # builds {group.classes[0]}")
        lines.append(f"tools = {_toml_list(sorted(set(group.tools)))}")
    else:
        lines.append(f"classes = {_toml_list(group.classes)}  # built with no arguments, one instance each")
        if group.load:
            lines.append(f"load = {_toml_str(group.load)}  # each is given its scenario (scenario = {{}})")
        lines.append(f"tools = {_toml_list(sorted(set(group.tools)))}")
    if group.writes:
        more = f" (+{len(group.writes) - 8} more)" if len(group.writes) > 8 else ""
        shown = ", ".join(group.writes[:8]) + more
        lines.append(f"# the writers write: {shown}")
    lines += [f"# to do: {p}" for p in group.problems]
    for other in others:
        more = f" (+{len(other.classes) - 3} more)" if len(other.classes) > 3 else ""
        lines.append(f"# also found, for a configuration of its own (`confirm init` on their folder): "
                     f"{other.form} {', '.join(other.classes[:3])}{more}"
                     + (f", state from {other.factory}" if other.factory else ""))
    return "\n".join(lines) + "\n"


def has_confirm_table(path: Path) -> tuple[bool, bool]:
    """Whether a TOML file has `[tool.toollint]` and `[tool.toollint.confirm]`."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False, False
    table = data.get("tool", {}).get("toollint")
    return isinstance(table, dict), isinstance(table, dict) and isinstance(table.get("confirm"), dict)


def _target_pyproject(path: Path) -> Path:
    """The project's pyproject.toml: the nearest at or above PATH, else a new one in PATH's folder."""
    start = path if path.is_dir() else path.parent
    for directory in (start, *start.parents):
        if (directory / "pyproject.toml").is_file():
            return directory / "pyproject.toml"
    return start / "pyproject.toml"


def main(argv: Sequence[str] | None = None) -> int:
    """`toollint confirm init PATH [--write | -o FILE] [--python P]`: 0 written or printed, 1 nothing
    to host was found, 2 a usage error (a missing PATH, a file it will not overwrite)."""
    import argparse

    from toollint.profiles import detect_profile

    parser = argparse.ArgumentParser(prog="toollint confirm", description="set up `check --confirm` for a "
                                     "benchmark no profile hosts")
    sub = parser.add_subparsers(dest="command", required=True)
    init = sub.add_parser("init", help="write a starter [tool.toollint.confirm] from what discovery finds")
    init.add_argument("path", metavar="PATH", help="the benchmark's tools (a folder or a file)")
    where = init.add_mutually_exclusive_group()
    where.add_argument("--write", action="store_true", help="add it to the project's pyproject.toml "
                       "(never replacing a [tool.toollint.confirm] there)")
    where.add_argument("-o", "--output", metavar="FILE", help="write it to FILE, for `check --config FILE` "
                       "(never over an existing file)")
    init.add_argument("--python", metavar="PATH", help="the benchmark's interpreter, written as `python`")
    try:
        args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    except SystemExit as exc:
        return 0 if exc.code in (0, None) else 2
    err, prog = sys.stderr, "toollint confirm init"
    path = Path(args.path)
    if not path.exists():
        err.write(f"{prog}: {path}: no such file or directory\n")
        return 2
    target = Path(args.output) if args.output else _target_pyproject(path.resolve()) if args.write else None
    if args.output and target is not None and target.exists():
        err.write(f"{prog}: {target} exists; not overwritten (name a new file, or merge by hand)\n")
        return 2
    folder = path.resolve() if path.is_dir() else path.resolve().parent
    extra = [folder.parent] if (folder.parent / "__init__.py").is_file() else []
    groups = sorted(discover(path, extra), key=lambda g: -len(g.tools or g.classes))
    if not groups:
        err.write(f"{prog}: no tool under {path} is a method of a class or a tool class, which is what the "
                  f"toolkit host builds (module-level tool functions need a factory: docs/confirm.md)\n")
        return 1
    group, others = groups[0], groups[1:]
    base = (target if target is not None else _target_pyproject(path.resolve())).resolve().parent
    header = True
    if args.write and target is not None and target.exists():
        has_table, has_confirm = has_confirm_table(target)
        if has_confirm:
            err.write(f"{prog}: {target} already has [tool.toollint.confirm]; not changed (run without "
                      f"--write to print the starter, and merge by hand)\n")
            return 2
        header = not has_table
    text = render(group, base=base, python=args.python, others=others, header=header)
    profile = detect_profile([str(path)])
    if profile is not None:
        err.write(f"{prog}: {path} looks like {profile.name}, which toollint has a profile for; this "
                  f"configuration hosts it without (benchmark = \"none\")\n")
    count = f"{len(group.tools) or len(group.classes)} tool(s) of {len(group.classes)} class(es)"
    if target is None:
        sys.stdout.write(text)
        err.write(f"{prog}: {count}; nothing written: --write adds it to "
                  f"{_target_pyproject(path.resolve())}, -o FILE writes a file for `check --config FILE`\n")
        return 0
    if args.write and target.exists():
        old = target.read_text(encoding="utf-8")
        text = old + ("" if old.endswith("\n") else "\n") + "\n" + text
        if not header:
            err.write(f"{prog}: {target} has a [tool.toollint] table: add benchmark = \"none\" to it to keep "
                      f"every profile out\n")
    from toollint.atomic import write_text

    write_text(target, text)
    config = f" --config {target}" if args.output else ""
    err.write(f"{prog}: {count}; wrote {target}: run `toollint check --confirm{config} {path}`\n")
    return 0
