#!/usr/bin/env python3
"""Pairs every release file in DIST with the SBOMs that describe it, and checks them.

usage: sbom-map.py DIST

Every file SHA256SUMS lists, except the SBOMs themselves and the C header, must be described by
exactly one CycloneDX and one SPDX document of DIST that name it (by file name) with the SHA-256
it has. Prints the pairs as a JSON list of {"subject": FILE, "sbom": CYCLONEDX} (the release
workflow attests each file with its SBOM from this list); exits 1 naming every file without a
right pair.
"""
import hashlib
import json
import os
import sys

NOT_DESCRIBED = ("frun_plugin.h",)


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def subjects(doc, kind):
    """(name, sha256) of the release file a document describes."""
    if kind == "cdx":
        parts = doc.get("metadata", {}).get("component", {}).get("components", [])
        return {(c["name"], h["content"]) for c in parts
                if c.get("bom-ref", "").startswith("file:") for h in c.get("hashes", [])
                if h.get("alg") == "SHA-256"}
    described = {r["relatedSpdxElement"] for r in doc.get("relationships", [])
                 if r["spdxElementId"] == "SPDXRef-DOCUMENT" and r["relationshipType"] == "DESCRIBES"}
    return {(p["name"], c["checksumValue"]) for p in doc.get("packages", [])
            if p["SPDXID"] in described and p["SPDXID"].startswith("SPDXRef-Release-")
            for c in p.get("checksums", []) if c["algorithm"] == "SHA256"}


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__.strip().splitlines()[2])
    dist = argv[1]
    with open(os.path.join(dist, "SHA256SUMS"), encoding="utf-8") as f:
        listed = [line.split(None, 1)[1].strip().lstrip("*") for line in f if line.strip()]
    sboms = {"cdx": [n for n in listed if n.endswith(".cdx.json")],
             "spdx": [n for n in listed if n.endswith(".spdx.json")]}
    described = {"cdx": {}, "spdx": {}}
    for kind, names in sboms.items():
        for name in names:
            with open(os.path.join(dist, name), encoding="utf-8") as f:
                for subject in subjects(json.load(f), kind):
                    described[kind].setdefault(subject, []).append(name)
    problems, pairs = [], []
    for name in listed:
        if name.endswith(".json") or name in NOT_DESCRIBED:
            continue
        key = (name, sha256(os.path.join(dist, name)))
        found = {kind: described[kind].get(key, []) for kind in ("cdx", "spdx")}
        for kind, docs in found.items():
            if len(docs) != 1:
                problems.append(f"{name}: {len(docs)} {kind} SBOMs name it with its SHA-256 {docs}")
        if len(found["cdx"]) == 1:
            pairs.append({"subject": name, "sbom": found["cdx"][0]})
    if problems:
        print("sbom-map.py: " + "\n  ".join(problems), file=sys.stderr)
        return 1
    print(json.dumps(pairs))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
