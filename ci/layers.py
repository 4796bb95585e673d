#!/usr/bin/env python3
"""Prints the module import graphs of the workspace's crates and checks the layering rule of
docs/design.md.

The engine (engine/src) is layered: a module may import its own layer's modules (without
circles) and lower layers', never a higher one. The front ends (src) are one crate above it:
the entry points (the binary, the bash builtin) dispatch to the personalities (native,
parallel, xargs), and each personality imports the engine and the shared front-end
modules, never another personality. The Python module (python/src) is checked for circles.

Every `crate::a::b` path in a file (in `use` items, braces expanded, and in code) is an import
of the top-level module `a`; `super::` paths are resolved against the file's own module. The
graph printed is between top-level modules (a folder and its files are one module); inside
each folder the graph between its files is checked too.

Fails (exit 1) when:
  - there is a circle between top-level modules, or between the files of one folder;
  - a module imports one of a higher layer (the LAYERS tables below), e.g. a stage importing
    `run`, or a personality importing another;
  - the engine's manifest depends on the front ends' crate;
  - a source folder holds more than MAX_ENTRIES entries (files and folders; its mod.rs, lib.rs
    or main.rs aside);
  - a function is longer than MAX_FN_LINES;
  - an engine file holds more sites of printing, exit or set_var, or of personality names,
    than its allowance (TALKS_LEFT, PERSONALITY_LEFT: ratchets);
  - the workspace's crates hold more `unsafe` sites than UNSAFE_LEFT (a ratchet).
"""

import re
import sys
from pathlib import Path

# Highest layer first. A module may import its own layer's modules (without circles) and those
# of lower layers, never a higher one; in a layer marked "apart" no module imports another.
ENGINE_LAYERS = [
    ("the library's root", {"<root>"}, False),
    ("plan", {"plan"}, False),
    ("run", {"run"}, False),
    ("stages", {"input", "dispatch", "exec", "output", "journal"}, False),
    ("system", {"sys"}, False),
]
FRONT_LAYERS = [
    ("entry points", {"<main>", "<root>", "bash"}, False),
    ("personalities", {"native", "parallel", "xargs"}, True),
    ("shared", {"invocation", "units"}, False),
]

MAX_ENTRIES = 8
MAX_FN_LINES = 120


def block_end(code: str, i: int) -> int:
    """Where the block whose `{` ends just before `i` closes (one past its `}`)."""
    depth = 1
    while depth and i < len(code):
        depth += {"{": 1, "}": -1}.get(code[i], 0)
        i += 1
    return i


def long_functions(text: str) -> list[tuple[int, str, int]]:
    """(line, name, length) of each function over MAX_FN_LINES lines."""
    code = strip_comments(text)
    out = []
    for m in re.finditer(r"\bfn\s+(\w+)[^;{]*\{", code):
        i = block_end(code, m.end())
        first = code.count("\n", 0, m.start()) + 1
        last = code.count("\n", 0, i) + 1
        if last - first + 1 > MAX_FN_LINES:
            out.append((first, m.group(1), last - first + 1))
    return out


def module_of(path: Path, src: Path) -> list[str]:
    """The module path of a source file: src/a/b.rs -> [a, b]; src/a/mod.rs -> [a]."""
    rel = path.relative_to(src).with_suffix("")
    parts = list(rel.parts)
    if parts == ["lib"]:
        return []
    if parts == ["main"]:
        return ["<main>"]
    if parts[-1] == "mod":
        parts.pop()
    return parts


def strip_comments(text: str) -> str:
    """Comments and the contents of string literals (which may hold `crate::` or braces) are
    blanked; line breaks stay, so line numbers do not move."""

    def blank(m: re.Match) -> str:
        return "\n" * m.group(0).count("\n")

    def empty_string(m: re.Match) -> str:
        return '""' + blank(m)

    # One left-to-right pass, so a `//` inside a string is not a comment, a quote inside a
    # string is not a character literal, and a '"' is not a string.
    def token(m: re.Match) -> str:
        t = m.group(0)
        if t.startswith("/*"):
            return blank(m)
        if t.startswith("//"):
            return ""
        if t.startswith("'"):
            return "' '"
        return empty_string(m)

    pattern = (
        r"/\*.*?\*/|//[^\n]*|\br(#*)\".*?\"\1|\"(?:\\[\s\S]|[^\"\\])*\""
        r"|'(?:\\.|[^'\\\n])'"
    )
    return re.sub(pattern, token, text, flags=re.S)


def expand_use(tree: str) -> list[str]:
    """Expands a use tree `a::{b, c::{d}}` into paths a::b, a::c::d."""
    tree = re.sub(r"\s+", "", tree)
    out: list[str] = []

    def walk(prefix: str, s: str) -> None:
        depth, start, items = 0, 0, []
        for i, ch in enumerate(s):
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            elif ch == "," and depth == 0:
                items.append(s[start:i])
                start = i + 1
        items.append(s[start:])
        for item in filter(None, items):
            brace = item.find("{")
            if brace >= 0 and item.endswith("}"):
                walk(prefix + item[:brace], item[brace + 1 : -1])
            else:
                out.append(prefix + item.split("as")[0] if "::" not in item else prefix + item)

    walk("", tree)
    return out


def inline_modules(text: str) -> list[tuple[int, int, str]]:
    """The extents (start, end, name) of the inline `mod name { ... }` blocks of a file."""
    out = []
    for m in re.finditer(r"\bmod\s+(\w+)\s*\{", text):
        out.append((m.start(), block_end(text, m.end()), m.group(1)))
    return out


def imports_of(text: str, me: list[str]) -> set[tuple[str, ...]]:
    """Module paths this file refers to, absolute (as lists of segments)."""
    text = strip_comments(text)
    inline = inline_modules(text)
    paths: list[tuple[int, str]] = []
    for m in re.finditer(r"\buse\s+([^;]+);", text):
        paths.extend((m.start(), p) for p in expand_use(m.group(1)))
    paths.extend((m.start(), m.group(0)) for m in re.finditer(r"\b(?:crate|super)(?:::\w+)+", text))
    found: set[tuple[str, ...]] = set()
    for at, p in paths:
        segs = [s for s in p.split("::") if s]
        if not segs:
            continue
        here = list(me) + [name for (a, b, name) in inline if a <= at < b]
        if segs[0] == "crate":
            found.add(tuple(segs[1:]))
        elif segs[0] == "super":
            base = here
            while segs and segs[0] == "super":
                segs.pop(0)
                base = base[:-1]
            found.add(tuple(base + segs))
        elif segs[0] == "self":
            found.add(tuple(here + segs[1:]))
    return found


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    color: dict[str, int] = {}
    stack: list[str] = []

    def dfs(n: str) -> list[str] | None:
        color[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if color.get(m) == 1:
                return stack[stack.index(m) :] + [m]
            if color.get(m) is None:
                found = dfs(m)
                if found:
                    return found
        stack.pop()
        color[n] = 2
        return None

    for n in sorted(graph):
        if color.get(n) is None:
            found = dfs(n)
            if found:
                return found
    return None


# Below the front ends nothing prints, ends the process or sets environment variables (the
# engine hands its messages to the front end's sink, sys/notice.rs, and returns reports and
# typed errors): TALKS_LEFT is empty and stays so. Nothing should name a personality (xargs,
# GNU Parallel, forkrun) either; until that work is done PERSONALITY_LEFT is a ratchet: each
# file may hold at most the sites it holds, and a file not listed none. Lower a number when a
# site goes; never raise one.
TALKS = re.compile(
    r"\b(e?println!|e?print!)\s*\(|\bprocess::exit\s*\(|\bset_var\s*\(|\bremove_var\s*\("
)
TALKS_LEFT: dict[str, int] = {}
PERSONALITY = re.compile(r"(?i)\b\w*(xargs|parallel|forkrun|gnu)\w*\b")
PERSONALITY_LEFT = {
    "exec/plugin/host.rs": 8, "input/arguments.rs": 2, "plan/mod.rs": 2, "journal/mod.rs": 1,
    "run/ending.rs": 1, "sys/mod.rs": 1,
}


def below_front_ends(src: Path) -> list[str]:
    """The ratchets above: files whose sites outnumber their allowance."""
    talks, names = {}, {}
    for f in sorted(src.rglob("*.rs")):
        rel = f.relative_to(src)
        code = re.sub(r"//[^\n]*", "", f.read_text())
        code = code.split("#[cfg(test)]")[0]  # a file's tests come last
        talks[rel.as_posix()] = len(TALKS.findall(code))
        names[rel.as_posix()] = len(PERSONALITY.findall(code))
    errors = []
    for what, counts, left in (
        ("printing, exit or set_var", talks, TALKS_LEFT),
        ("personality names", names, PERSONALITY_LEFT),
    ):
        for name, n in sorted(counts.items()):
            if n > left.get(name, 0):
                errors.append(
                    f"{src}/{name}: {n} sites of {what} below the front ends, at most "
                    f"{left.get(name, 0)} (ci/layers.py): report to the front end instead"
                )
        print(f"below the front ends: {sum(counts.values())} sites of {what} left")
    return errors


# `unsafe` sites of the workspace's crates (engine/src/, src/ and python/src/): blocks, unsafe functions and unsafe
# impls, outside comments and string literals (issue 34: at most 75). The raw system calls live
# in engine/src/sys/ behind safe wrappers; the rest is mostly bash's and Python's C APIs (see
# docs/design.md, "unsafe"). A ratchet: lower it when a site goes; never raise it. `unsafe
# extern` blocks (declarations of foreign functions and statics) are counted apart, not limited.
UNSAFE_LEFT = 72
UNSAFE_DIRS = [Path("engine/src"), Path("src"), Path("python/src")]
UNSAFE_SITE = re.compile(r"\bunsafe\s*(\{|fn\b|impl\b)")
UNSAFE_EXTERN = re.compile(r"\bunsafe\s+extern\s+\"[^\"]*\"\s*\{")


def unsafe_sites(root: Path) -> list[str]:
    """The ratchet above: the number of `unsafe` sites, per file and in all."""
    per_file: dict[str, int] = {}
    externs = 0
    for d in UNSAFE_DIRS:
        for f in sorted((root / d).rglob("*.rs")):
            code = strip_comments(f.read_text())
            per_file[f.as_posix()] = len(UNSAFE_SITE.findall(code))
            externs += len(UNSAFE_EXTERN.findall(code))
    total = sum(per_file.values())
    top = sorted(((n, name) for name, n in per_file.items() if n), reverse=True)
    print(
        f"unsafe: {total} sites (at most {UNSAFE_LEFT}), and {externs} `unsafe extern` blocks; "
        + ", ".join(f"{name} {n}" for n, name in top)
    )
    if total > UNSAFE_LEFT:
        return [
            f"{total} unsafe sites in the workspace's crates, at most {UNSAFE_LEFT} "
            "(ci/layers.py): use nix's safe calls or one safe wrapper in engine/src/sys/"
        ]
    return []


# Source folders of the workspace's other crates, checked for circles only.
OTHER_CRATES = [Path("python/src")]


def other_crate(src: Path) -> list[str]:
    """Prints the import graph of another crate's modules; its circles and long functions."""
    files = sorted(src.rglob("*.rs"))
    modules = {tuple(module_of(f, src)): f for f in files}
    graph: dict[str, set[str]] = {}
    for mod, f in modules.items():
        me = mod[0] if mod else "<root>"
        graph.setdefault(me, set())
        for target in imports_of(f.read_text(), list(mod)):
            target = tuple(s for s in target if s != "*")
            other = target[0] if target and (target[:1] in modules) else None
            if other and other != me:
                graph[me].add(other)
    print(f"module import graph of {src}/ (A -> B: A imports B)")
    for n in sorted(graph):
        print(f"    {n} -> {', '.join(sorted(graph[n])) or '(nothing)'}")
    errors = []
    cycle = find_cycle(graph)
    if cycle:
        errors.append(f"import circle in {src}/: " + " -> ".join(cycle))
    for f in files:
        for line, name, n in long_functions(f.read_text()):
            errors.append(f"{f}:{line}: fn {name} is {n} lines (at most {MAX_FN_LINES})")
    return errors


def crowded_folders(src: Path) -> list[str]:
    """Folders with more than MAX_ENTRIES entries (files and folders; mod.rs, lib.rs and main.rs,
    the folder or crate itself, aside)."""
    errors = []
    for d in [src, *sorted(p for p in src.rglob("*") if p.is_dir())]:
        entries = [
            e for e in d.iterdir()
            if e.name not in ("mod.rs", "lib.rs", "main.rs") and (e.is_dir() or e.suffix == ".rs")
        ]
        if len(entries) > MAX_ENTRIES:
            errors.append(f"{d}/ holds {len(entries)} entries (at most {MAX_ENTRIES}): group them")
    return errors


def layered_crate(src: Path, layers: list) -> list[str]:
    """Prints one crate's graph between top-level modules; its layering errors and circles."""
    files = sorted(src.rglob("*.rs"))
    modules = {tuple(module_of(f, src)): f for f in files}
    layer_of = {name: i for i, (_, names, _) in enumerate(layers) for name in names}

    def top(mod: tuple[str, ...]) -> str:
        return mod[0] if mod else "<root>"

    def resolve(path: tuple[str, ...]) -> tuple[str, ...]:
        """The longest prefix of path that is a source file's module."""
        for n in range(len(path), 0, -1):
            if path[:n] in modules:
                return path[:n]
        return ()  # an item of the crate root

    top_graph: dict[str, set[str]] = {}
    folder_graphs: dict[str, dict[str, set[str]]] = {}
    errors: list[str] = []
    for mod, f in modules.items():
        me = top(mod)
        top_graph.setdefault(me, set())
        for target in imports_of(f.read_text(), list(mod)):
            target = resolve(tuple(s for s in target if s != "*"))
            other = top(target)
            if other != me:
                top_graph[me].add(other)
            elif len(target) >= 2 and target != mod and target[: len(mod)] != mod:
                # Inside one folder: file-level edges (a folder's mod.rs is its own node).
                g = folder_graphs.setdefault(me, {})
                g.setdefault("::".join(mod), set()).add("::".join(target))

    print(f"module import graph of {src}/ (top-level modules; A -> B: A imports B)")
    for i, (layer, names, apart) in enumerate(layers):
        present = sorted(n for n in names if n in top_graph)
        print(f"  [{layer}]")
        for n in present:
            deps = sorted(top_graph[n])
            print(f"    {n} -> {', '.join(deps) if deps else '(nothing)'}")
            for d in deps:
                if d not in layer_of:
                    errors.append(f"{src}: {n} imports {d}, which has no layer in ci/layers.py")
                elif layer_of[d] < i:
                    errors.append(
                        f"{src}: {n} ({layer}) imports {d} ({layers[layer_of[d]][0]}): a higher layer"
                    )
                elif layer_of[d] == i and apart:
                    errors.append(f"{src}: {n} imports {d}: the {layer} stand apart")
    for n in sorted(top_graph):
        if n not in layer_of:
            errors.append(f"{src}: module {n} has no layer in ci/layers.py")

    cycle = find_cycle(top_graph)
    if cycle:
        errors.append(f"import circle in {src}/: " + " -> ".join(cycle))
    for folder, g in sorted(folder_graphs.items()):
        cycle = find_cycle(g)
        if cycle:
            errors.append(f"import circle inside {src}/{folder}/: " + " -> ".join(cycle))
    for f in files:
        for line, name, n in long_functions(f.read_text()):
            errors.append(f"{f}:{line}: fn {name} is {n} lines (at most {MAX_FN_LINES})")
    return errors


def main() -> int:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    engine, front = root / "engine/src", root / "src"
    errors = layered_crate(engine, ENGINE_LAYERS)
    errors.extend(layered_crate(front, FRONT_LAYERS))
    manifest = (root / "engine/Cargo.toml").read_text()
    if re.search(r"(?m)^frun\s*=", manifest):
        errors.append("engine/Cargo.toml depends on the front ends' crate (frun)")
    # Below the front ends: everything in the engine's crate.
    errors.extend(below_front_ends(engine))
    errors.extend(unsafe_sites(root))
    for src in (engine, front, *(root / o for o in OTHER_CRATES)):
        errors.extend(crowded_folders(src))
    # The other crates of the workspace (the Python module): no circles between their modules
    # either, and the same limit on a function's length. They have no layers of their own.
    for other in OTHER_CRATES:
        if (root / other).is_dir():
            errors.extend(other_crate(root / other))
    for e in errors:
        print(f"layers: {e}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
