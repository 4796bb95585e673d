"""Writes the SBOMs of the plain container image (Containerfile): what the image holds besides
its empty base, namely the frun binary (by its SHA-256; its Rust crates are in the binary's own
SBOMs) and the pinned BusyBox userland (packaging/busybox.pin: version, licence, hashes).

usage: image-sbom.py PIN BINARY CDX_OUT SPDX_OUT NAME VERSION COMMIT  (SOURCE_DATE_EPOCH set)

It only reads the pin file and the binary, so two builds of one commit write the same bytes; it
never downloads anything (userland.sh checks the real .deb against the same pin).
"""

import datetime
import hashlib
import json
import os
import sys
import urllib.parse
import uuid


def read_pin(path):
    pin = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                key, _, value = line.partition("=")
                pin[key] = value
    return pin


def main():
    pin_path, binary, cdx_out, spdx_out, name, version, commit = sys.argv[1:8]
    pin = read_pin(pin_path)
    epoch = int(os.environ["SOURCE_DATE_EPOCH"])
    stamp = datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%SZ")
    ident = uuid.uuid5(uuid.NAMESPACE_URL, f"https://github.com/frun/{name}-image@{version}+{commit}")
    with open(binary, "rb") as f:
        binary_sha256 = hashlib.sha256(f.read()).hexdigest()

    bb = pin["package"]
    bb_version = pin["version"]
    purl = (f"pkg:deb/debian/{bb}@{urllib.parse.quote(bb_version, safe='')}"
            f"?arch={pin['architecture']}&distro={pin['distro']}")
    deb_url = f"http://deb.debian.org/debian/{pin['pool_path']}"
    bb_description = f"BusyBox {pin['upstream_version']}, static build; /{pin['binary_path']} and its applet links"
    sbom_ref = f"{name}-{version}"

    cdx = {
        "bomFormat": "CycloneDX",
        "specVersion": "1.5",
        "serialNumber": f"urn:uuid:{ident}",
        "version": 1,
        "metadata": {
            "timestamp": stamp,
            "component": {
                "type": "container",
                "bom-ref": f"{name}-image",
                "name": f"{name}-image",
                "version": version,
                "description": "the plain frun image (Containerfile): FROM scratch",
            },
        },
        "components": [
            {
                "type": "application",
                "bom-ref": name,
                "name": name,
                "version": version,
                "description": f"/{name} in the image; its crates: {sbom_ref}.cdx.json",
                "hashes": [{"alg": "SHA-256", "content": binary_sha256}],
                "externalReferences": [{"type": "bom", "url": f"{sbom_ref}.cdx.json"}],
            },
            {
                "type": "application",
                "bom-ref": bb,
                "supplier": {"name": "Debian"},
                "name": bb,
                "version": bb_version,
                "description": bb_description,
                "licenses": [{"license": {"id": pin["license"]}}],
                "hashes": [{"alg": "SHA-256", "content": pin["binary_sha256"]}],
                "purl": purl,
                "externalReferences": [
                    {"type": "distribution", "url": deb_url,
                     "hashes": [{"alg": "SHA-256", "content": pin["deb_sha256"]}]},
                    {"type": "website", "url": pin["homepage"]},
                ],
            },
        ],
        "dependencies": [
            {"ref": f"{name}-image", "dependsOn": [bb, name]},
            {"ref": name, "dependsOn": []},
            {"ref": bb, "dependsOn": []},
        ],
    }

    spdx = {
        "spdxVersion": "SPDX-2.3",
        "dataLicense": "CC0-1.0",
        "SPDXID": "SPDXRef-DOCUMENT",
        "name": f"{name}-image",
        "documentNamespace": f"https://spdx.org/spdxdocs/{name}-image-{version}-{ident}",
        "creationInfo": {"created": stamp, "creators": ["Tool: frun-packaging-image-sbom"]},
        "packages": [
            {
                "SPDXID": "SPDXRef-Package-image",
                "name": f"{name}-image",
                "versionInfo": version,
                "downloadLocation": "NOASSERTION",
                "filesAnalyzed": False,
                "licenseConcluded": "NOASSERTION",
                "licenseDeclared": "NOASSERTION",
                "copyrightText": "NOASSERTION",
                "primaryPackagePurpose": "CONTAINER",
                "comment": "the plain frun image (Containerfile): FROM scratch",
            },
            {
                "SPDXID": "SPDXRef-Package-frun",
                "name": name,
                "versionInfo": version,
                "downloadLocation": "NOASSERTION",
                "filesAnalyzed": False,
                "checksums": [{"algorithm": "SHA256", "checksumValue": binary_sha256}],
                "licenseConcluded": "NOASSERTION",
                "licenseDeclared": "NOASSERTION",
                "copyrightText": "NOASSERTION",
                "primaryPackagePurpose": "APPLICATION",
                "comment": f"/{name} in the image; its crates: {sbom_ref}.spdx.json",
            },
            {
                "SPDXID": "SPDXRef-Package-busybox-static",
                "name": bb,
                "versionInfo": bb_version,
                "supplier": "Organization: Debian",
                "downloadLocation": deb_url,
                "homepage": pin["homepage"],
                "filesAnalyzed": False,
                "checksums": [{"algorithm": "SHA256", "checksumValue": pin["deb_sha256"]}],
                "licenseConcluded": pin["license"],
                "licenseDeclared": pin["license"],
                "copyrightText": "NOASSERTION",
                "externalRefs": [{"referenceCategory": "PACKAGE-MANAGER",
                                  "referenceType": "purl", "referenceLocator": purl}],
                "primaryPackagePurpose": "APPLICATION",
                "comment": (f"{bb_description}; checksum of the .deb; "
                            f"/{pin['binary_path']} has SHA-256 {pin['binary_sha256']}"),
            },
        ],
        "relationships": [
            {"spdxElementId": "SPDXRef-DOCUMENT", "relationshipType": "DESCRIBES",
             "relatedSpdxElement": "SPDXRef-Package-image"},
            {"spdxElementId": "SPDXRef-Package-image", "relationshipType": "CONTAINS",
             "relatedSpdxElement": "SPDXRef-Package-frun"},
            {"spdxElementId": "SPDXRef-Package-image", "relationshipType": "CONTAINS",
             "relatedSpdxElement": "SPDXRef-Package-busybox-static"},
        ],
    }

    for doc, path in ((cdx, cdx_out), (spdx, spdx_out)):
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=2, ensure_ascii=False)
            f.write("\n")


if __name__ == "__main__":
    main()
