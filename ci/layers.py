#!/usr/bin/env python3
"""Prints the module import graph of src/ and checks the layering rule of docs/design.md; also
that the workspace's other crate (python/src) has no import circle.

Every `crate::a::b` path in a file (in `use` items, braces expanded, and in code) is an import
of the top-level module `a`; `super::` paths are resolved against the file's own module. The
graph printed is between top-level modules (a folder and its files are one module); inside
each folder the graph between its files is checked too.

Also lists every function longer than MAX_FN_LINES lines (from its `fn` line to its closing
brace, comments included).

Fails (exit 1) when:
  - there is a circle between top-level modules, or between the files of one folder;
  - a module imports one of a higher layer (LAYERS below), e.g. a stage importing `cli`;
  - a function is longer than MAX_FN_LINES;
  - a file below the front ends holds more sites of printing, exit or set_var, or of
    personality names, than its allowance (TALKS_LEFT, PERSONALITY_LEFT: ratchets);
  - src/ and python/src/ hold more `unsafe` sites than UNSAFE_LEFT (a ratchet).
"""

import re
import sys
from pathlib import Path

# Highest layer first. A module may import its own layer's modules (without circles) and those
# of lower layers, never a higher one. The front ends are the crate root and main.rs too.
LAYERS = [
    ("front ends", {"<root>", "<main>", "cli", "bash", "python"}),
    ("plan", {"plan"}),
    ("engine", {"engine"}),
    (
        "stages",
        {"spool", "scan", "batch", "ring", "rings", "output", "ledger", "journal", "results",
         "shard", "numa", "exec", "stats", "stop", "joblog", "pace", "progress",
         "xargs_input", "bounds", "linebuf", "slots"},
    ),
    ("base", {"sys", "exit", "errors"}),
]


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


# Below the front ends nothing should print, end the process or set environment variables, and
# nothing should name a personality (xargs, GNU Parallel, forkrun): the front ends turn the
# engine's reports into words and statuses (issue 34). Until that work is done these are
# ratchets: each file may hold at most the sites it held when they were introduced, and a file
# not listed none. Lower a number when a site goes; never raise one.
FRONT_END_FILES = {"main.rs", "lib.rs"}
FRONT_END_FOLDERS = {"cli", "bash"}
TALKS = re.compile(
    r"\b(e?println!|e?print!)\s*\(|\bprocess::exit\s*\(|\bset_var\s*\(|\bremove_var\s*\("
)
TALKS_LEFT = {
    "engine/ending.rs": 21, "engine/mod.rs": 7, "ledger.rs": 6, "exec/plugin_host.rs": 5,
    "journal/resume.rs": 5, "results.rs": 2, "journal/prepare.rs": 2, "xargs_input.rs": 1,
    "joblog.rs": 1, "plan/sweep.rs": 1, "plan/mod.rs": 1,
}
PERSONALITY = re.compile(r"(?i)\b\w*(xargs|parallel|forkrun|gnu)\w*\b")
PERSONALITY_LEFT = {
    "plan/mod.rs": 29, "engine/runner/spawn.rs": 11, "journal/writer.rs": 10,
    "engine/ending.rs": 9, "engine/settings.rs": 9, "plan/config.rs": 9,
    "exec/plugin_host.rs": 8, "plan/jobs_resume.rs": 8, "engine/worker.rs": 5,
    "results/gnu.rs": 4, "xargs_input.rs": 2, "journal/prepare.rs": 2, "journal/mod.rs": 2,
    "results.rs": 1, "sys.rs": 1, "engine/mod.rs": 1, "plan/plugin.rs": 1,
}


def below_front_ends(src: Path) -> list[str]:
    """The ratchets above: files whose sites outnumber their allowance."""
    talks, names = {}, {}
    for f in sorted(src.rglob("*.rs")):
        rel = f.relative_to(src)
        if rel.as_posix() in FRONT_END_FILES or rel.parts[0] in FRONT_END_FOLDERS:
            continue
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
                    f"src/{name}: {n} sites of {what} below the front ends, at most "
                    f"{left.get(name, 0)} (ci/layers.py): report to the front end instead"
                )
        print(f"below the front ends: {sum(counts.values())} sites of {what} left")
    return errors


# `unsafe` sites of both crates (src/ and python/src/): blocks, unsafe functions and unsafe
# impls, outside comments and string literals (issue 34: at most 75). The raw system calls live
# in src/sys.rs behind safe wrappers; the rest is mostly bash's and Python's C APIs (see
# docs/design.md, "unsafe"). A ratchet: lower it when a site goes; never raise it. `unsafe
# extern` blocks (declarations of foreign functions and statics) are counted apart, not limited.
UNSAFE_LEFT = 73
UNSAFE_DIRS = [Path("src"), Path("python/src")]
UNSAFE_SITE = re.compile(r"\bunsafe\s*(\{|fn\b|impl\b)")
UNSAFE_EXTERN = re.compile(r"\bunsafe\s+extern\s+\"[^\"]*\"\s*\{")


def unsafe_sites() -> list[str]:
    """The ratchet above: the number of `unsafe` sites, per file and in all."""
    per_file: dict[str, int] = {}
    externs = 0
    for d in UNSAFE_DIRS:
        for f in sorted(d.rglob("*.rs")):
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
            f"{total} unsafe sites in src/ and python/src/, at most {UNSAFE_LEFT} "
            "(ci/layers.py): use nix's safe calls or one safe wrapper in src/sys.rs"
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


def main() -> int:
    src = Path(sys.argv[1] if len(sys.argv) > 1 else "src")
    files = sorted(src.rglob("*.rs"))
    modules = {tuple(module_of(f, src)): f for f in files}
    layer_of = {name: i for i, (_, names) in enumerate(LAYERS) for name in names}

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

    print("module import graph of src/ (top-level modules; A -> B: A imports B)")
    for i, (layer, names) in enumerate(LAYERS):
        present = sorted(n for n in names if n in top_graph)
        print(f"  [{layer}]")
        for n in present:
            deps = sorted(top_graph[n])
            print(f"    {n} -> {', '.join(deps) if deps else '(nothing)'}")
            for d in deps:
                if d not in layer_of:
                    errors.append(f"{n} imports {d}, which has no layer in ci/layers.py")
                elif layer_of[d] < i:
                    errors.append(
                        f"{n} ({layer}) imports {d} ({LAYERS[layer_of[d]][0]}): a higher layer"
                    )
    for n in sorted(top_graph):
        if n not in layer_of:
            errors.append(f"module {n} has no layer in ci/layers.py")

    cycle = find_cycle(top_graph)
    if cycle:
        errors.append("import circle: " + " -> ".join(cycle))
    for folder, g in sorted(folder_graphs.items()):
        cycle = find_cycle(g)
        if cycle:
            errors.append(f"import circle inside {folder}/: " + " -> ".join(cycle))

    for f in files:
        for line, name, n in long_functions(f.read_text()):
            errors.append(f"{f}:{line}: fn {name} is {n} lines (at most {MAX_FN_LINES})")

    errors.extend(below_front_ends(src))
    if src == Path("src"):
        errors.extend(unsafe_sites())

    # The other crates of the workspace (the Python module): no circles between their modules
    # either, and the same limit on a function's length. They have no layers of their own.
    for other in OTHER_CRATES:
        if other.is_dir():
            errors.extend(other_crate(other))

    for e in errors:
        print(f"layers: {e}", file=sys.stderr)
    if not errors:
        print("layers: no circles; no module imports a higher layer")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
