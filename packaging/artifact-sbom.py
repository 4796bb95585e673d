#!/usr/bin/env python3
"""Turns a crate's normalised SBOM into the SBOM of one release file.

usage: artifact-sbom.py cdx|spdx SRC DST FILE DESCRIPTION [CONTAINED...]

SRC is a CycloneDX 1.5 or SPDX 2.3 JSON document of the crates a build links (build.sh's
normalise_sbom output); DST gets the same document, naming FILE by its name and SHA-256 as the
thing it describes, with DESCRIPTION. CONTAINED files (frun.bash's embedded builtins) are named
by name and SHA-256 as parts of FILE. The document's id is derived from the source document's
and FILE's name, so two builds of one commit write the same bytes. SRC and DST may be the same.
"""
import hashlib
import json
import os
import sys
import uuid


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def file_component(path, description):
    name = os.path.basename(path)
    return {
        "type": "file",
        "bom-ref": f"file:{name}",
        "name": name,
        "description": description,
        "hashes": [{"alg": "SHA-256", "content": sha256(path)}],
    }


def cdx(doc, path, description, contained):
    subject = file_component(path, description)
    if contained:
        subject["components"] = [
            file_component(part, "embedded in " + os.path.basename(path)) for part in contained
        ]
    crate = doc["metadata"]["component"]
    crate["components"] = [
        c for c in crate.get("components", []) if c.get("bom-ref") != subject["bom-ref"]
    ] + [subject]
    doc["serialNumber"] = "urn:uuid:" + str(
        uuid.uuid5(uuid.NAMESPACE_URL, doc.get("serialNumber", "") + "#" + subject["name"])
    )


def spdx_package(spdx_id, path, comment):
    return {
        "SPDXID": spdx_id,
        "name": os.path.basename(path),
        "downloadLocation": "NOASSERTION",
        "filesAnalyzed": False,
        "checksums": [{"algorithm": "SHA256", "checksumValue": sha256(path)}],
        "licenseConcluded": "NOASSERTION",
        "licenseDeclared": "NOASSERTION",
        "copyrightText": "NOASSERTION",
        "comment": comment,
    }


def spdx(doc, path, description, contained):
    name = os.path.basename(path)
    ref = "SPDXRef-Release-file"
    rels = doc.setdefault("relationships", [])
    # The document now describes the file; the crate it was built from stays, as its source.
    crates = [r["relatedSpdxElement"] for r in rels
              if r["spdxElementId"] == "SPDXRef-DOCUMENT" and r["relationshipType"] == "DESCRIBES"]
    packages = [p for p in doc["packages"] if not p["SPDXID"].startswith("SPDXRef-Release-")]
    rels = [r for r in rels if not r["spdxElementId"].startswith("SPDXRef-Release-")
            and not r["relatedSpdxElement"].startswith("SPDXRef-Release-")]
    packages.append(spdx_package(ref, path, description))
    rels.append({"spdxElementId": "SPDXRef-DOCUMENT", "relationshipType": "DESCRIBES",
                 "relatedSpdxElement": ref})
    for crate in crates:
        if not crate.startswith("SPDXRef-Release-"):
            rels.append({"spdxElementId": ref, "relationshipType": "GENERATED_FROM",
                         "relatedSpdxElement": crate})
    for i, part in enumerate(contained, 1):
        part_ref = f"SPDXRef-Release-part-{i}"
        packages.append(spdx_package(part_ref, part, "embedded in " + name))
        rels.append({"spdxElementId": ref, "relationshipType": "CONTAINS",
                     "relatedSpdxElement": part_ref})
    doc["packages"] = packages
    doc["relationships"] = rels
    old = doc.get("documentNamespace", "")
    doc["name"] = name
    doc["documentNamespace"] = (
        "https://spdx.org/spdxdocs/" + name + "-" + str(uuid.uuid5(uuid.NAMESPACE_URL, old + "#" + name))
    )


def main(argv):
    if len(argv) < 6 or argv[1] not in ("cdx", "spdx"):
        sys.exit(__doc__.strip().splitlines()[2])
    kind, src, dst, path, description = argv[1:6]
    contained = argv[6:]
    with open(src, encoding="utf-8") as f:
        doc = json.load(f)
    (cdx if kind == "cdx" else spdx)(doc, path, description, contained)
    with open(dst + ".tmp", "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=2, ensure_ascii=False)
        f.write("\n")
    os.replace(dst + ".tmp", dst)


if __name__ == "__main__":
    main(sys.argv)
