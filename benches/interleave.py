#!/usr/bin/env python3
"""Times a few short commands in rotation: one run of each per round, the order rotated every
round, so a machine that slows down or speeds up (other guests, frequency, the page cache)
weighs on every command alike. hyperfine runs all of one command's runs before the next
command's, and for start-up (a few milliseconds each, differences of a few percent) that drift
is bigger than what is measured.

Usage: interleave.py --runs N [--warmup W] [--shell] --json-prefix PREFIX ID=COMMAND ...

Each COMMAND runs with stdin and stdout on /dev/null: with --shell as `sh -c COMMAND` (a
pipeline then makes its own stdin), without it split like a shell word list and started
directly. A command that exits non-zero stops the measurement (exit status 1). For each ID,
PREFIX + ID + ".json" gets hyperfine's shape ({"results": [{"command", "times", ...}]}), so the
report reads it like a hyperfine row; one summary line per command goes to stderr.
"""

import argparse
import json
import os
import shlex
import statistics
import sys
import time


def spawn_and_wait(argv, devnull):
    """Wall seconds of one run of argv; raises when it fails."""
    actions = [
        (os.POSIX_SPAWN_DUP2, devnull, 0),
        (os.POSIX_SPAWN_DUP2, devnull, 1),
    ]
    start = time.perf_counter()
    pid = os.posix_spawnp(argv[0], argv, os.environ, file_actions=actions)
    _, status = os.waitpid(pid, 0)
    took = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise RuntimeError(f"{shlex.join(argv)} exited with {code}")
    return took


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, required=True)
    p.add_argument("--warmup", type=int, default=0)
    p.add_argument("--shell", action="store_true", help="run each command with sh -c")
    p.add_argument("--json-prefix", required=True)
    p.add_argument("commands", nargs="+", metavar="ID=COMMAND")
    args = p.parse_args()
    if args.runs < 1:
        p.error("--runs must be at least 1")
    named = []
    for item in args.commands:
        ident, sep, cmd = item.partition("=")
        if not sep or not ident or not cmd:
            p.error(f"not ID=COMMAND: {item!r}")
        argv = ["sh", "-c", cmd] if args.shell else shlex.split(cmd)
        named.append((ident, cmd, argv))
    times = {ident: [] for ident, _, _ in named}
    devnull = os.open(os.devnull, os.O_RDWR)
    try:
        for round_ in range(args.warmup + args.runs):
            shift = round_ % len(named)
            for ident, _, argv in named[shift:] + named[:shift]:
                took = spawn_and_wait(argv, devnull)
                if round_ >= args.warmup:
                    times[ident].append(took)
    except (OSError, RuntimeError) as e:
        print(f"interleave.py: {e}", file=sys.stderr)
        return 1
    for ident, cmd, _ in named:
        t = times[ident]
        with open(f"{args.json_prefix}{ident}.json", "w", encoding="utf-8") as f:
            json.dump({"results": [{
                "command": cmd,
                "mean": statistics.fmean(t),
                "median": statistics.median(t),
                "min": min(t),
                "max": max(t),
                "times": t,
                "interleaved_with": [i for i, _, _ in named if i != ident],
            }]}, f, indent=1)
        print(f"{statistics.median(t) * 1e3:8.3f} ms median of {len(t)}  {cmd}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
