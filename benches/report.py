#!/usr/bin/env python3
"""Turns the hyperfine JSON files of one benches/run.sh run into a Markdown report.

Standard library only (and reportlib.py beside it, shared with compare.py). run.sh hands over
four files:
  --manifest  TSV, one row per benchmarked command:
              id workload tool count unit kind runs ref limit command note json log
              kind: hf (hyperfine median), il (interleave.py's median, in hyperfine's
              JSON shape), self (median of the tool's own timing lines in `log`, as
              spawnloop prints them), fail, skip
  --checks    TSV: name status detail (the untimed correctness checks)
  --machine   TSV: key value (machine details, versions, settings)
  --notes     plain lines (tools skipped, runs that failed)
The report goes to --out; the tables are also printed on stdout.
"""

import json
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from reportlib import (  # noqa: E402  (the shared part, beside this file)
    MACHINE_FIELDS, fmt_range, fmt_secs, md_escape, md_row, parse_args, read_tsv, write_report,
)

MANIFEST_FIELDS = [
    "id", "workload", "tool", "count", "unit", "kind", "runs", "ref", "limit",
    "command", "note", "json", "log",
]


def times_of(row):
    """Wall seconds of each timed run of a row (empty when there are none)."""
    if row["kind"] in ("hf", "il"):
        with open(row["json"], encoding="utf-8") as f:
            data = json.load(f)
        return [float(t) for t in data["results"][0]["times"]]
    if row["kind"] == "self":
        secs = []
        with open(row["log"], encoding="utf-8") as f:
            for line in f:
                m = re.search(r"seconds=([0-9.]+)", line)
                if m:
                    secs.append(float(m.group(1)))
        runs = int(row["runs"] or 0)
        if runs > 0:
            secs = secs[-runs:]  # the earlier lines are hyperfine's warm-up runs
        return secs
    return []


def fmt_count(n, unit):
    if unit == "-":
        return "1 line"
    if n >= 1_000_000 and n % 1_000_000 == 0:
        text = f"{n // 1_000_000}M"
    elif n >= 1000 and n % 1000 == 0:
        text = f"{n // 1000}k"
    else:
        text = str(n)
    return f"{text} {unit}"


def fmt_rate(r, unit):
    if r is None or unit == "-":
        return "—"
    if r >= 1e6:
        return f"{r / 1e6:.2f}M {unit}/s"
    if r >= 1e3:
        return f"{r / 1e3:.1f}k {unit}/s"
    return f"{r:.0f} {unit}/s"


def build(args):
    rows = read_tsv(args.manifest, MANIFEST_FIELDS)
    by_id = {}
    for r in rows:
        r["count"] = int(r["count"] or 0)
        times = times_of(r)
        r["median"] = statistics.median(times) if times else None
        r["spread"] = (
            fmt_range(times) if len(times) > 1 else "—"
        )
        r["rate"] = (
            r["count"] / r["median"]
            if r["median"] and r["unit"] != "-"
            else None
        )
        # time per record; for the 1-line start-up rows simply the wall time
        r["per"] = r["median"] / max(r["count"], 1) if r["median"] else None
        by_id[r["id"]] = r

    def vs_frun(r):
        ref = by_id.get(r["ref"])
        if not ref or not r["per"] or not ref["per"]:
            return "—"
        return f"{r['per'] / ref['per']:.2f}×"

    def vs_limit(r):
        lim = by_id.get(r["limit"])
        if not lim or not r["rate"] or not lim["rate"]:
            return "—"
        return f"{100 * r['rate'] / lim['rate']:.0f}%"

    table = [
        "| workload | tool | input | median wall | min – max | rate | time/record vs frun "
        "| of spawn limit | note |",
        "|---|---|---|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        if r["kind"] == "skip":
            wall = spread = rate = ratio = limit = "—"
            note = "skipped: " + r["note"]
        elif r["kind"] == "fail":
            wall = spread = rate = ratio = limit = "—"
            note = r["note"]
        else:
            wall = fmt_secs(r["median"])
            spread = r["spread"]
            rate = fmt_rate(r["rate"], r["unit"])
            ratio = vs_frun(r)
            limit = vs_limit(r)
            note = r["note"]
        table.append(md_row([
            r["workload"], r["tool"], fmt_count(r["count"], r["unit"]),
            wall, spread, rate, ratio, limit, note,
        ]))

    # targets
    def get(i, key):
        r = by_id.get(i)
        return r[key] if r and r.get(key) else None

    def target(name, value, goal, ok_if, fmt):
        if value is None:
            return f"| {md_escape(name)} | n/a | {goal} | n/a |"
        return f"| {md_escape(name)} | {fmt(value)} | {goal} | {'PASS' if ok_if(value) else 'FAIL'} |"

    def div(a, b):
        return a / b if a is not None and b else None

    times = "{:.2f}×".format
    pct = lambda v: f"{100 * v:.0f}%"  # noqa: E731
    machine = read_tsv(args.machine, MACHINE_FIELDS)
    nproc = next((int(m["value"]) for m in machine if m["key"] == "nproc"), 1)
    targets = [
        "| target | measured | goal | result |",
        "|---|---:|---:|---|",
        target("start-up: frun echo / xargs echo (wall)",
               div(get("startup-frun", "median"), get("startup-xargs", "median")),
               "≤ 1.00×", lambda v: v <= 1.0, times),
        target("start-up: static frun (dist/) echo / xargs echo (wall)",
               div(get("startup-frun-static", "median"), get("startup-xargs", "median")),
               "≤ 1.00×", lambda v: v <= 1.0, times),
        target("start-up from a pipe: printf | frun echo / printf | xargs echo (wall)",
               div(get("startup-pipe-frun", "median"), get("startup-pipe-xargs", "median")),
               "≤ 1.00×", lambda v: v <= 1.0, times),
        target("start-up from a pipe: static frun (dist/) / xargs (wall)",
               div(get("startup-pipe-frun-static", "median"), get("startup-pipe-xargs", "median")),
               "≤ 1.00×", lambda v: v <= 1.0, times),
        target("/bin/true default: frun rate / spawn-loop limit (batch max)",
               div(get("true-frun", "rate"), get("true-spawnloop-max", "rate")),
               "≥ 95%", lambda v: v >= 0.95, pct),
        target("stdin from a pipe: cat | frun -s wc -l / cat | wc -l (wall)",
               div(get("pipe-frun-pipe", "median"), get("pipe-cat-wc", "median")),
               "≤ 1.30×", lambda v: v <= 1.3, times),
        target("stdin from a file: frun -s wc -l / wc -l on one core (wall)",
               div(get("pipe-frun", "median"), get("pipe-wc", "median")),
               "≤ 1.00×", lambda v: v <= 1.0, times),
        target("gzip: frun -k -b 1Mi gzip -1 / pigz -1 (wall)",
               div(get("gzip-frun", "median"), get("gzip-pigz", "median")),
               "≤ 1.10×", lambda v: v <= 1.1, times),
        target(f"gzip: frun -k -b 1Mi gzip -1 / (gzip -1 on one core ÷ {nproc}) (wall)",
               div(get("gzip-frun", "median"), div(get("gzip-serial", "median"), nproc)),
               "≤ 1.10×", lambda v: v <= 1.1, times),
        target("gzip, one compressor: frun -k -b 1Mi pigz -1 -p 1 / pigz -1 (wall)",
               div(get("gzip-frun-pigz", "median"), get("gzip-pigz", "median")),
               "≤ 1.10×", lambda v: v <= 1.1, times),
        target("xz: frun -k -b 32Mi xz -T1 / xz -T2 (wall)",
               div(get("xz-frun", "median"), get("xz-xz", "median")),
               "≤ 1.10×", lambda v: v <= 1.1, times),
        target("/bin/true default: frun rate / xargs -P$(nproc) -n1000 rate",
               div(get("true-frun", "rate"), get("true-xargs-n1000", "rate")),
               "≥ 4.00×", lambda v: v >= 4, times),
        target("echo: frun echo rate / frun true rate",
               div(get("echo-frun", "rate"), get("true-frun", "rate")),
               "≥ 75%", lambda v: v >= 0.75, pct),
        target("-k cost: frun -k echo / frun echo (wall)",
               div(get("echo-frun-k", "median"), get("echo-frun", "median")),
               "≤ 1.10×", lambda v: v <= 1.10, times),
        target("-k cost: frun -k printf / frun printf (wall)",
               div(get("printf-frun-k", "median"), get("printf-frun", "median")),
               "≤ 1.10×", lambda v: v <= 1.10, times),
        target("bash function: frun f rate / (one bash's rate over batches of 4096 × cores)",
               div(get("bash-frun", "rate"),
                   (get("bash-bound", "rate") or 0) * nproc or None),
               "≥ 100%", lambda v: v >= 1.0, pct),
        target("bash function: frun f rate / xargs -P$(nproc) -n1000 bash -c rate",
               div(get("bash-frun", "rate"), get("bash-xargs", "rate")),
               "≥ 2.00×", lambda v: v >= 2, times),
        target("bash function: frun f rate / GNU Parallel (exported function) rate",
               div(get("bash-frun", "rate"), get("bash-parallel", "rate")),
               "≥ 15.00×", lambda v: v >= 15, times),
        target("--bar cost: frun --bar=always true / frun true (wall)",
               div(get("true-frun-bar", "median"), get("true-frun", "median")),
               "≤ 1.01×", lambda v: v <= 1.01, times),
        target("NUMA cost: frun --nodes @4 / one node, same -j, /bin/true (wall)",
               div(get("true-frun-nodes4", "median"), get("true-frun-j2p", "median")),
               "≤ 1.05×", lambda v: v <= 1.05, times),
        target("NUMA cost: frun -s --nodes @4 / one node, same -j, wc -l (wall)",
               div(get("pipe-frun-nodes4", "median"), get("pipe-frun-j2p", "median")),
               "≤ 1.05×", lambda v: v <= 1.05, times),
        target("sha256sum: frun / serial xargs (wall)",
               div(get("sha-frun", "median"), get("sha-xargs-serial", "median")),
               "≤ 0.55×", lambda v: v <= 0.55, times),
    ]

    legend = (
        "median wall: hyperfine's median (interleave.py's for rows noted interleaved); for "
        "the spawn loop the median of its own loop timing (building the argv arrays is not "
        "counted). rate: input records per second of wall time. time/record vs frun: this "
        "row's wall time per record divided by that of the workload's frun row (1.00×); "
        "above 1 means slower than frun. of spawn limit: rate as a share of the C spawn loop "
        "with the largest batch that fits ARG_MAX."
    )
    commands = [
        "Run from a scratch directory holding the inputs listed under Machine, with frun and "
        "spawnloop on PATH; frun's, xargs' and the static binary's start-up rows ran in "
        "rotation, one run of each per round (interleave.py; the 1-line-input ones without a "
        "shell, the pipe ones under sh), GNU Parallel's and rust-parallel's start-up under "
        "hyperfine -N, the rest through hyperfine's default shell. Raw hyperfine JSON (and "
        "the spawn loop's own timings) are in raw/, named after this file plus the id.",
        "",
        "| id | runs | command |",
        "|---|---:|---|",
    ]
    for r in rows:
        if r["kind"] == "skip":
            continue
        commands.append(f"| {r['id']} | {r['runs']} | `{md_escape(r['command'])}` |")

    write_report(
        args, "# frun benchmarks",
        "A correctness check failed: frun's numbers in this run are not valid.",
        table, legend, commands, more=["## Targets", ""] + targets + [""],
    )


def main():
    build(parse_args(__doc__))


if __name__ == "__main__":
    main()
