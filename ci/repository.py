#!/usr/bin/env python3
"""One name for the repository everywhere, and no placeholder for it anywhere.

Cargo.toml's `repository` is the one place the name is written. flake.nix must read it from
there; the Containerfiles' SOURCE labels, SECURITY.md and README.md must use the same name in
every GitHub URL, `--repo`, `github:` flake reference and ghcr.io image they show; and no file git
tracks may still hold a placeholder (OWNER, <owner>, owner/frun). Also: every tracked file that
starts with `#!` is committed executable (the docs run them as ./packaging/build.sh and the
like). Exits 1 naming each offence.
"""
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PLACEHOLDER = re.compile(r"\bOWNER\b|<owner>|\bowner/frun\b|\bOWNER/")
# Forms a repository name takes in the docs: URL, gh --repo, flake ref, image.
FORMS = [
    re.compile(r"github\.com/([\w.-]+/[\w.-]+?)(?:\.git)?(?=[/#\s)\"'`]|$)"),
    re.compile(r"--repo\s+([\w.-]+/[\w.-]+)"),
    re.compile(r"github:([\w.-]+/[\w.-]+?)(?=[#/\s)\"'`]|$)"),
    re.compile(r"ghcr\.io/([\w.-]+)/frun"),
]
# Files that must name the repository (and only it) where they name frun's repository.
MUST_NAME = ["README.md", "SECURITY.md", "Containerfile", "Containerfile.bash"]


def tracked_text_files():
    out = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, check=True)
    for name in out.stdout.decode().split("\0"):
        path = ROOT / name
        if not name or not path.is_file() or path.is_symlink():
            continue
        try:
            yield name, path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue


def main():
    problems = []
    url = tomllib.loads((ROOT / "Cargo.toml").read_text())["package"].get("repository", "")
    m = re.fullmatch(r"https://github\.com/([\w.-]+)/([\w.-]+)", url)
    if not m:
        sys.exit(f"repository.py: Cargo.toml's repository is {url!r}, not https://github.com/OWNER/NAME")
    repo, owner = f"{m[1]}/{m[2]}", m[1]
    me = Path(__file__).resolve().relative_to(ROOT).as_posix()
    for name, text in tracked_text_files():
        if name == me:
            continue
        for n, line in enumerate(text.splitlines(), 1):
            if PLACEHOLDER.search(line):
                problems.append(f"{name}:{n}: placeholder: {line.strip()[:100]}")
    if ".package.repository" not in (ROOT / "flake.nix").read_text():
        problems.append("flake.nix: does not take sourceUrl from Cargo.toml's package.repository")
    for name in MUST_NAME:
        text = (ROOT / name).read_text()
        seen = 0
        for n, line in enumerate(text.splitlines(), 1):
            for form in FORMS:
                for found in form.findall(line):
                    found = found if "/" in found else f"{found}/frun"
                    if not found.endswith("/frun"):
                        continue  # another project's repository (GNU Parallel, forkrun, ...)
                    seen += 1
                    if found != repo:
                        problems.append(f"{name}:{n}: names {found}, not {repo}")
        if seen == 0:
            problems.append(f"{name}: never names the repository {repo}")
    readme = (ROOT / "README.md").read_text()
    for want in (f"nix run github:{repo}#frun", f"nix profile install github:{repo}#frun"):
        if want not in readme:
            problems.append(f"README.md: does not show `{want}`")
    staged = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-s", "-z"],
                            capture_output=True, check=True).stdout.decode()
    for entry in filter(None, staged.split("\0")):
        meta, name = entry.split("\t", 1)
        path = ROOT / name
        if meta.startswith("100644") and path.is_file() and path.read_bytes()[:2] == b"#!":
            problems.append(f"{name}: starts with #! but is committed without the executable bit")
    if problems:
        print("repository.py: " + "\n  ".join(problems), file=sys.stderr)
        return 1
    print(f"repository.py: every file names {repo} ({owner}'s), no placeholder left")
    return 0


if __name__ == "__main__":
    sys.exit(main())
