#!/usr/bin/env python3
"""Turns the hyperfine JSON files of one benches/compare.sh run into a Markdown report.

Standard library only (and reportlib.py beside it, shared with report.py). compare.sh hands
over:
  --manifest  TSV, one row per workload:
              id workload rounds old_command new_command status jsons
              status: ok or fail; jsons: the rounds' hyperfine files, comma-separated, each
              holding one run of the command named "old" and one of "new"
  --checks    TSV: name status detail (the untimed correctness checks)
  --machine   TSV: key value (machine details, builds, settings)
  --notes     plain lines (failed rounds, warnings)
  --raw       prefix of the merged JSON files: PREFIX-ID.json, one per workload, in hyperfine's
              layout (results: old, then new), each run's order kept in "rounds"
The report goes to --out; the tables are also printed on stdout.
"""

import json
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reportlib import (  # noqa: E402  (the shared part, beside this file)
    fmt_range, fmt_secs, md_escape, md_row, parse_args, read_tsv, write_report,
)

MANIFEST_FIELDS = ["id", "workload", "rounds", "old", "new", "status", "jsons"]
BUILDS = ["old", "new"]


def merge(row, path):
    """Collects each build's runs over the rounds; writes them to `path` and returns them."""
    runs = {b: {"times": [], "user": [], "system": [], "exit_codes": []} for b in BUILDS}
    rounds = []
    for name in row["jsons"].split(","):
        with open(name, encoding="utf-8") as f:
            data = json.load(f)
        order = []
        for res in data["results"]:
            b = res["command"]
            order.append(b)
            # --runs 1: one time per file, and user/system are that run's own.
            runs[b]["times"] += res["times"]
            runs[b]["user"].append(res["user"])
            runs[b]["system"].append(res["system"])
            runs[b]["exit_codes"] += res.get("exit_codes", [])
        rounds.append(order)
    results = []
    for b in BUILDS:
        t = runs[b]["times"]
        results.append({
            "command": row[b],
            "name": b,
            "mean": statistics.mean(t),
            "stddev": statistics.stdev(t) if len(t) > 1 else None,
            "median": statistics.median(t),
            "min": min(t),
            "max": max(t),
            **runs[b],
        })
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"results": results, "rounds": rounds}, f, indent=2)
        f.write("\n")
    return runs


def sign_test(k, n):
    """Two-sided sign test: the chance of a split at least as uneven as k of n by luck alone."""
    tail = sum(math.comb(n, i) for i in range(min(k, n - k) + 1)) / 2 ** n
    return min(1.0, 2 * tail)


def verdict(ratios):
    """How many rounds the new build lost, and whether that split could be luck (sign test)."""
    n = len(ratios)
    slower = sum(1 for x in ratios if x > 1.0)
    split = f"new slower in {slower} of {n} rounds"
    if n < 6:  # even 6 of 6 is p = 0.03; below that no split is unlikely enough
        return f"{split}: too few rounds to tell"
    p = sign_test(slower, n)
    if p >= 0.05:
        return f"{split}: within noise (sign test p = {p:.2f})"
    word = "slower" if slower > n - slower else "faster"
    return f"{split}: new {word} (sign test p = {p:.3f})"


def build(args):
    rows = read_tsv(args.manifest, MANIFEST_FIELDS)
    table = [
        "| workload | old median | new median | new / old "
        "| per round: new / old, median (min – max) | CPU new / old "
        "| old min – max | new min – max | verdict |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        if r["status"] != "ok":
            dashes = " | ".join(["—"] * 7)
            table.append(f"| {md_escape(r['workload'])} | {dashes} | failed (see notes) |")
            continue
        runs = merge(r, f"{args.raw}-{r['id']}.json")
        med = {b: statistics.median(runs[b]["times"]) for b in BUILDS}
        cpu = {
            b: statistics.median([u + s for u, s in zip(runs[b]["user"], runs[b]["system"])])
            for b in BUILDS
        }
        # Round i holds one run of each build, taken back to back.
        paired = [n / o for o, n in zip(runs["old"]["times"], runs["new"]["times"]) if o > 0]
        spread = {b: fmt_range(runs[b]["times"]) for b in BUILDS}
        ratio = f"{med['new'] / med['old']:.3f}×" if med["old"] > 0 else "—"
        per_round = (
            f"{statistics.median(paired):.3f}× ({min(paired):.3f} – {max(paired):.3f})"
            if paired else "—"
        )
        cpu_ratio = f"{cpu['new'] / cpu['old']:.3f}×" if cpu["old"] > 0 else "—"
        table.append(md_row([
            r["workload"], fmt_secs(med["old"]), fmt_secs(med["new"]), ratio, per_round,
            cpu_ratio, spread["old"], spread["new"], verdict(paired),
        ]))

    legend = (
        "old is the base build, new the changed one (see Machine). Each round is one hyperfine "
        "call that runs both builds once, back to back, the order swapped every round. "
        "median: hyperfine's wall time, median over the rounds. new / old: the ratio of the "
        "two medians (below 1 means the new build is faster). per round: new / old of the two "
        "runs of each round, whose spread shows the run-to-run noise of this machine. CPU: "
        "the medians of user + system time. verdict: in how many rounds the new build was "
        "the slower one, and a two-sided sign test of that split: within noise when a split "
        "at least that uneven comes by luck in 5% of runs or more (with 10 rounds: 2 to 8 "
        "of 10); otherwise one build won too many rounds, and new / old says by how much."
    )
    commands = [
        "The commands of benches/run.sh's true-frun, pipe-frun and bash-frun rows, run from a "
        "scratch directory holding lines.txt, with each build's frun and frun.bash in ./old "
        "and ./new, through hyperfine's default shell. Raw JSON (both builds' runs merged "
        "over the rounds, with each round's order) is in raw/, named after this file plus "
        "the id.",
        "",
        "| id | rounds | old | new |",
        "|---|---:|---|---|",
    ]
    for r in rows:
        commands.append(
            f"| {r['id']} | {r['rounds']} | `{md_escape(r['old'])}` | `{md_escape(r['new'])}` |"
        )

    write_report(
        args, "# frun: two builds compared",
        "A correctness check failed: the numbers in this run are not valid.",
        table, legend, commands,
    )


def main():
    build(parse_args(__doc__, "--raw"))


if __name__ == "__main__":
    main()
