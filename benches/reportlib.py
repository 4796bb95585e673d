"""What benches/report.py and benches/compare.py share: reading the TSV files their scripts
hand over, formatting times and Markdown rows, and laying out the report around each one's own
results table (warnings, correctness checks, notes, machine, commands).

Standard library only. Both writers take --manifest, --checks, --machine, --notes and --out
(see parse_args); the checks are TSV name status detail, the machine TSV key value, the notes
plain lines.
"""

import argparse
import os
import sys

CHECK_FIELDS = ["name", "status", "detail"]
MACHINE_FIELDS = ["key", "value"]


def read_tsv(path, fields):
    rows = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            parts = line.split("\t")
            parts += [""] * (len(fields) - len(parts))
            rows.append(dict(zip(fields, parts)))
    return rows


def fmt_secs(s):
    if s is None:
        return "—"
    if s < 1:
        return f"{s * 1000:.1f} ms"
    return f"{s:.2f} s"


def fmt_range(times):
    """The fastest and slowest of `times`, as "min – max"."""
    return f"{fmt_secs(min(times))} – {fmt_secs(max(times))}"


def md_escape(text):
    return text.replace("|", "\\|")


def md_row(cells):
    """One Markdown table row of `cells`, each escaped."""
    return "| " + " | ".join(md_escape(x) for x in cells) + " |"


def read_notes(path):
    if not path or not os.path.exists(path):
        return []
    with open(path, encoding="utf-8") as f:
        return [line.strip() for line in f if line.strip()]


def write_report(args, title, invalid, table, legend, commands, more=()):
    """Writes the report to args.out and prints its top part (all but Machine and Commands).

    title: the # heading; invalid: the bold line shown when a correctness check failed; table:
    the lines of the results table, legend: the paragraph under it, more: further lines (own
    sections) before the correctness checks; commands: the lines of the Commands section.
    """
    checks = read_tsv(args.checks, CHECK_FIELDS)
    check_lines = ["| check | result | detail |", "|---|---|---|"]
    for c in checks:
        check_lines.append(
            f"| {md_escape(c['name'])} | {c['status']} | {md_escape(c['detail'])} |"
        )
    bad = [c for c in checks if c["status"] != "ok"]
    notes = read_notes(args.notes)

    head = [f"**{n}**\n" for n in notes if n.startswith("WARNING")]
    if bad:
        head.append(f"**{invalid}**\n")
    head += ["## Results", ""] + list(table) + [""]
    head += [legend, ""] + list(more)
    head += ["## Correctness (untimed)", ""] + check_lines + [""]
    if notes:
        head += ["## Notes", ""] + [f"- {n}" for n in notes] + [""]
    printed = "\n".join(head)

    machine = read_tsv(args.machine, MACHINE_FIELDS)
    tail = ["## Machine", ""]
    tail += ["| | |", "|---|---|"]
    tail += [f"| {md_escape(m['key'])} | {md_escape(m['value'])} |" for m in machine]
    tail += ["", "## Commands", ""] + list(commands) + [""]

    doc = "\n".join([title, ""] + head + tail) + "\n"
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(doc)
    sys.stdout.write(printed + "\n")


def parse_args(doc, *required):
    """The options of a writer: those both take, plus its own `required` ones (before --out)."""
    p = argparse.ArgumentParser(description=doc.splitlines()[0])
    p.add_argument("--manifest", required=True)
    p.add_argument("--checks", required=True)
    p.add_argument("--machine", required=True)
    p.add_argument("--notes")
    for name in required:
        p.add_argument(name, required=True)
    p.add_argument("--out", required=True)
    return p.parse_args()
