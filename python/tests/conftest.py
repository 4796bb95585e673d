"""Shared helpers for the frun Python tests."""

import os
import subprocess
import sys
import textwrap

import pytest


@pytest.fixture
def run_script(tmp_path):
    """Runs a Python script in a fresh interpreter (its own process, so signals, crashes and
    memory measurements do not touch the test runner); returns the CompletedProcess."""

    def run(code, timeout=120, **kw):
        path = tmp_path / "script.py"
        path.write_text(textwrap.dedent(code))
        return subprocess.run(
            [sys.executable, str(path)],
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=tmp_path,
            **kw,
        )

    return run


def descendants(pid):
    """Pids of every live descendant of `pid`, nearest first."""
    children = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (FileNotFoundError, ProcessLookupError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(d))
    found, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(0), []):
            found.append(c)
            todo.append(c)
    return found


def where_they_wait(pids):
    """One line per process: its name, state and the kernel function it waits in (what a
    hang is stuck on), read from /proc."""
    lines = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
            with open(f"/proc/{pid}/wchan") as f:
                wchan = f.read().strip()
        except (FileNotFoundError, ProcessLookupError):
            continue
        name = stat[stat.index("(") + 1 : stat.rindex(")")]
        state, ppid = stat.rsplit(")", 1)[1].split()[:2]
        lines.append(f"{pid} ({name}) parent {ppid} state {state} waits in {wchan or '-'}")
    return "\n".join(lines)


def alive(pid):
    """Whether a process with this pid still exists (a zombie counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.fixture(autouse=True)
def _no_children_left():
    """Every test leaves no child process of the test runner behind."""
    yield
    me = os.getpid()
    left = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except (FileNotFoundError, ProcessLookupError):
                continue
            if int(fields[1]) == me and fields[0] != "Z":
                left.append(int(d))
    assert not left, f"processes left behind: {left}"
