#!/usr/bin/env bash
# Builds frun's release artifacts into dist/ (or --out DIR), reproducibly:
#   frun-<version>-x86_64-linux-musl          static binary, dependency list embedded (cargo auditable)
#   frun-<version>.cdx.json                   CycloneDX SBOM (JSON)
#   frun-<version>.spdx.json                  SPDX 2.3 SBOM (JSON)
#   frun-<version>-image.{cdx,spdx}.json      SBOMs of the plain image (the binary and BusyBox)
#   frun-<version>-bash-glibc<floor>.so       bash loadable builtin per glibc floor (2.17, 2.28, host)
#   frun.bash                                 the builtins in one self-verifying file to `source`
#   frun-<version>-cp39-abi3-manylinux…whl    the Python module (import frun), CPython >= 3.9
#   frun-python-<version>.{cdx,spdx}.json     SBOMs of the Python module
#   frun-plugin-host                          dynamically linked frun (glibc >= 2.28) the static one
#                                             runs -C plugins through, found beside it
#   frun-<version>-plugin-host.{cdx,spdx}.json  SBOMs of frun-plugin-host (its crates, its SHA-256)
#   frun_plugin.h                             the C plugin interface (struct frun_ctx)
#   SHA256SUMS                                over all of the above
# Tools are installed at pinned versions into a cache (FRUN_TOOLS_DIR) on first use.
# See packaging/README.md for every setting and how to verify a build.
set -euo pipefail
shopt -s inherit_errexit

usage() {
  cat <<'EOF'
usage: packaging/build.sh [--out DIR] [--only-blobs | --only-static | --only-tools]

  --out DIR     where the artifacts go (default: <repo>/dist); earlier artifacts there are replaced
  --only-blobs  only the bash builtins and frun.bash (for the Nix package frun-bash); uses the
                cargo-zigbuild and zig on PATH when there are any instead of installing them
  --only-static the static binary alone (the container image's build stage): the same bytes as
                in a full build, without the tools the other artifacts need
  --only-tools  only install the pinned tools and rustup targets a full build uses, then stop
                (packaging/check.sh, before it starts its two builds at once)
Environment:
  SOURCE_DATE_EPOCH   timestamp used everywhere (default: time of the last commit, else 1700000000)
  FRUN_GIT_COMMIT     commit embedded in the binary (default: git short hash, else "unknown")
  FRUN_TOOLS_DIR      cache of the build tools (default: ${XDG_CACHE_HOME:-~/.cache}/frun-packaging)
  FRUN_BUILD_DIR      cargo target dir for this build (default: <repo>/target/package)
EOF
}

die() { printf 'build.sh: error: %s\n' "$*" >&2; exit 1; }
step() { printf '==> %s\n' "$*" >&2; }

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
out=$repo/dist
only_blobs=no
only_static=no
only_tools=no
while (($#)); do
  case $1 in
    --out) (($# >= 2)) || die "--out needs a directory"; out=$2; shift 2 ;;
    --only-blobs) only_blobs=yes; shift ;;
    --only-static) only_static=yes; shift ;;
    --only-tools) only_tools=yes; shift ;;
    --out=*) out=${1#--out=}; shift ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; die "unknown argument: $1" ;;
  esac
done
mkdir -p "$out"
out=$(cd "$out" && pwd -P)
case $out/ in
  "$repo/src/"* | "$repo/tests/"* | "$repo/" ) die "refusing to use $out as the output directory" ;;
esac

started=$SECONDS
musl=x86_64-unknown-linux-musl
export LC_ALL=C TZ=UTC

# --- pinned tools -----------------------------------------------------------------------------
# shellcheck source=packaging/tools-dir.sh
source "$repo/packaging/tools-dir.sh"
export PATH="$tools/cargo/bin:$PATH"

# cargo_tool CRATE VERSION: `cargo install --locked` into the tool cache unless already there.
# The tools only read metadata for a fraction of a second, so they are compiled without
# optimisation or LTO: that takes well under half the time of their own release profiles.
cargo_tool() {
  local crate=$1 version=$2
  if [[ -f $tools/cargo/.crates2.json ]] && grep -q "\"$crate $version " "$tools/cargo/.crates2.json"; then
    return
  fi
  step "installing $crate $version into the tool cache"
  (
    cd "$tools"
    export CARGO_PROFILE_RELEASE_OPT_LEVEL=0 CARGO_PROFILE_RELEASE_LTO=false \
      CARGO_PROFILE_RELEASE_CODEGEN_UNITS=256 CARGO_PROFILE_RELEASE_DEBUG=0
    cargo install --quiet --locked --root "$tools/cargo" "$crate@$version"
  )
}

command -v cargo >/dev/null || die "cargo is not on PATH (install Rust with rustup)"
command -v python3 >/dev/null || die "python3 is needed (SBOM normalisation)"
cd "$repo"
ensure_target() {
  # Without rustup (a Nix toolchain) the targets are whatever the toolchain was built with.
  command -v rustup >/dev/null || return 0
  if ! rustup target list --installed | grep -qx "$1"; then
    step "adding rustup target $1"
    rustup target add "$1"
  fi
}
if [[ $only_blobs == no ]]; then
  ensure_target "$musl"
  cargo_tool cargo-auditable 0.7.7
  if [[ $only_static == no ]]; then
    cargo_tool cargo-cyclonedx 0.5.9
    cargo_tool cargo-sbom 0.10.0
  fi
fi
if [[ $only_tools == yes ]]; then
  # What the bash builtins and the wheel use too, so that a full build installs nothing more.
  ensure_target x86_64-unknown-linux-gnu
  python_tool 'maturin==1.16.0' 'ziglang==0.15.2' 'cargo-zigbuild==0.24.1'
  step "the pinned tools are in $tools"
  exit 0
fi

# --- metadata -----------------------------------------------------------------------------------
metadata=$(cargo metadata --no-deps --locked --format-version 1)
read -r name version has_bash < <(python3 -c '
import json, sys
meta = json.load(sys.stdin)
pkg = next(p for p in meta["packages"] if p["name"] == "frun")
print(pkg["name"], pkg["version"], "yes" if "bash" in pkg["features"] else "no")
' <<<"$metadata")

# shellcheck source=packaging/source-id.sh
source "$repo/packaging/source-id.sh"
[[ $SOURCE_DATE_EPOCH =~ ^[0-9]+$ ]] || die "SOURCE_DATE_EPOCH must be a number of seconds"

# --- reproducible build environment -------------------------------------------------------------
target_dir=${FRUN_BUILD_DIR:-$repo/target/package}
mkdir -p "$target_dir"
target_dir=$(cd "$target_dir" && pwd -P)
cargo_home=${CARGO_HOME:-$HOME/.cargo}
rustup_home=${RUSTUP_HOME:-$HOME/.rustup}
# Later --remap-path-prefix flags win over earlier ones, so the most specific paths go last.
# They reach every rustc (build scripts and proc macros too) through packaging/rustc-remap.sh,
# never through RUSTFLAGS, which cargo hashes and does not pass to host crates (see there).
remaps=(
  "--remap-path-prefix=$cargo_home=/cargo"
  "--remap-path-prefix=$rustup_home=/rustup"
  "--remap-path-prefix=${TMPDIR:-/tmp}=/tmp"
  "--remap-path-prefix=$repo=/build/frun"
  "--remap-path-prefix=$target_dir=/build/target"
)
FRUN_REMAP_FLAGS=$(IFS=$'\x1f'; printf '%s' "${remaps[*]}")
CARGO_ENCODED_RUSTFLAGS=$(IFS=$'\x1f'; printf '%s' "-C${IFS}strip=symbols")
RUSTC_WRAPPER=$repo/packaging/rustc-remap.sh
export FRUN_REMAP_FLAGS CARGO_ENCODED_RUSTFLAGS RUSTC_WRAPPER CARGO_TARGET_DIR=$target_dir CARGO_INCREMENTAL=0
unset RUSTFLAGS CARGO_BUILD_RUSTC_WRAPPER

# Remove only what an earlier build put there; anything else in the directory is left alone
# and is not listed in SHA256SUMS.
rm -f -- "$out/SHA256SUMS" "$out/frun.bash" "$out/frun_plugin.h" "$out/$name-"*
artifacts=()
work=$(mktemp -d)
trap 'rm -rf "$work" "$repo/frun-sbom-tmp.json" "$repo/python/frun-sbom-tmp.json" "$repo/engine/frun-sbom-tmp.json"' EXIT

# --- static binary ------------------------------------------------------------------------------
if [[ $only_blobs == no ]]; then
  # The feature hwloc links libhwloc: a static musl one, built once into the tool cache
  # by hwloc-static.sh and found by hwlocality-sys through pkg-config. The variables name the musl
  # target, so they do not reach pkg-config for the host. PKG_CONFIG_LIBDIR (and an empty
  # PKG_CONFIG_PATH) hide the host's .pc files; with a sysroot set, pkg-config would prefix it
  # to the prefix's paths. The prefix's path does not get into the binary (a static-pie has no
  # RUNPATH; hwloc-static.sh compiles with -ffile-prefix-map).
  hwloc_prefix=$tools/hwloc-musl
  step "static musl libhwloc in $hwloc_prefix"
  bash "$repo/packaging/hwloc-static.sh" "$hwloc_prefix" >/dev/null
  unset PKG_CONFIG_SYSROOT_DIR "PKG_CONFIG_SYSROOT_DIR_${musl//-/_}" TARGET_PKG_CONFIG_SYSROOT_DIR
  step "building $name $version ($FRUN_GIT_COMMIT) for $musl"
  env "PKG_CONFIG_LIBDIR_${musl//-/_}=$hwloc_prefix/lib/pkgconfig" \
    "PKG_CONFIG_PATH_${musl//-/_}=" \
    "PKG_CONFIG_ALLOW_CROSS_${musl//-/_}=1" \
    CARGO="$repo/packaging/cargo-for-auditable.sh" FRUN_CARGO="$(command -v cargo)" \
    cargo-auditable auditable build --quiet --profile dist --locked --target "$musl" --bin frun --features hwloc
  bin=$name-$version-x86_64-linux-musl
  install -m 0755 "$target_dir/$musl/dist/frun" "$out/$bin"
  artifacts+=("$bin")
fi

# --- bash loadable builtin (one .so per glibc floor) and frun.bash --------------------------------
if [[ $only_static == yes ]]; then
  : # the static binary alone
elif [[ $has_bash == yes ]]; then
  if [[ $only_blobs == no ]] || ! command -v cargo-zigbuild >/dev/null || ! command -v zig >/dev/null; then
    # cargo-zigbuild from PyPI (its author's build of that release): compiling it would cost
    # a minute of CPU on every fresh machine and in every image build.
    python_tool 'ziglang==0.15.2' 'cargo-zigbuild==0.24.1'
    export PATH="$tools/venv/bin:$PATH"   # cargo-zigbuild finds zig as `python3 -m ziglang`
  fi
  ensure_target x86_64-unknown-linux-gnu
  # Fixed floors, whatever glibc the build host has (a floor taken from the host made
  # frun.bash depend on the machine that built it): 2.17 (RHEL/CentOS 7 and every newer
  # system), 2.28 (RHEL 8, Debian 10) and 2.36 (Debian 12 and newer).
  floors=(2.17 2.28 2.36)
  # One target dir for all floors, so the dependencies are compiled once, not once per floor.
  # They are pure Rust (`cargo tree -e normal,build --no-default-features --features bash`: the
  # only C is frun's own src/bash/shim.c), and as rlibs nothing links them before the cdylib:
  # the same bytes for every floor. What the floor changes is frun's own part: its build script
  # compiles the shim with the floor's `zig cc`, and the cdylib is linked against the floor's
  # glibc. So frun alone is cleaned before each floor (its build script, crate and cdylib made
  # anew), and its old cdylib removed, so that a blob is never one linked for another floor.
  # The linker is named as zig-linker.sh, one path for all floors (cargo fingerprints every
  # crate with the linker's path, and cargo-zigbuild's own has the floor in its name: every
  # dependency would be compiled again at each floor); it runs the floor's zig cc wrapper.
  blob_dir=$target_dir/glibc
  blob_env=(CARGO_TARGET_DIR="$blob_dir"
    CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER="$repo/packaging/zig-linker.sh")
  for floor in "${floors[@]}"; do
    step "building the bash builtin for glibc >= $floor"
    env "${blob_env[@]}" cargo clean --quiet --release --locked -p "$name" \
      --target x86_64-unknown-linux-gnu
    rm -f -- "$blob_dir/x86_64-unknown-linux-gnu/release/lib$name.so"
    # The library is an rlib; the builtin is the same library as a cdylib with the bash feature.
    # Without the hwloc feature: the builtin is loaded into any bash, where libhwloc may be
    # missing, so it reads /sys instead of linking hwloc.
    # (cc-rs probes zig with the floor-suffixed triple and prints a harmless warning about it.)
    env "${blob_env[@]}" FRUN_GLIBC_FLOOR="$floor" \
      cargo-zigbuild rustc --quiet --release --locked --lib --no-default-features --features bash \
      --target "x86_64-unknown-linux-gnu.$floor" --crate-type cdylib
    blob=$name-$version-bash-glibc$floor.so
    install -m 0644 "$blob_dir/x86_64-unknown-linux-gnu/release/lib$name.so" "$out/$blob"
    # zigbuild can quietly link against the host's glibc instead: refuse such a blob.
    need=$(objdump -T "$out/$blob" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -V | tail -n 1)
    [[ $(printf '%s\n%s\n' "${need:-0}" "$floor" | sort -V | tail -n 1) == "$floor" ]] ||
      die "$blob needs GLIBC_$need, newer than its floor $floor"
    # Nor may it need a libhwloc on the system it is loaded on.
    needed=$(objdump -p "$out/$blob" | awk '$1 == "NEEDED" { print $2 }')
    [[ $needed != *hwloc* ]] || die "$blob needs libhwloc: $(tr '\n' ' ' <<<"$needed")"
    artifacts+=("$blob")
  done
  # The static binary cannot load libraries: it runs -C plugins through this dynamically
  # linked frun (the same crate, without hwloc, which it does not need), found beside it.
  # Built in the builtins' target dir with their release profile, so their dependencies are
  # reused: only frun's own crate is compiled and linked (the dist profile's whole-program
  # optimisation, done for one plugin host, cost a full build with one codegen unit per crate
  # and a fat-LTO link, minutes of CPU on every machine; it runs plugins, where its 3% of
  # start-up is not what counts). Its floor is always 2.28, so no stale link of another floor
  # can be taken for it.
  if [[ $only_blobs == no ]]; then
    step "building the plugin host for glibc >= 2.28"
    env "${blob_env[@]}" FRUN_GLIBC_FLOOR=2.28 \
      cargo-zigbuild build --quiet --release --locked --bin frun \
      --target x86_64-unknown-linux-gnu.2.28
    install -m 0755 "$blob_dir/x86_64-unknown-linux-gnu/release/frun" \
      "$out/$name-plugin-host"
    need=$(objdump -T "$out/$name-plugin-host" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' |
      sort -V | tail -n 1)
    [[ $(printf '%s\n%s\n' "${need:-0}" 2.28 | sort -V | tail -n 1) == 2.28 ]] ||
      die "$name-plugin-host needs GLIBC_$need, newer than its floor 2.28"
    artifacts+=("$name-plugin-host")
    # The plugin interface's header, for writing plugins against frun's own context.
    install -m 0644 "$repo/include/frun_plugin.h" "$out/frun_plugin.h"
    artifacts+=(frun_plugin.h)
  fi
  template=$repo/packaging/frun.bash.in
  pairs=()
  for floor in "${floors[@]}"; do pairs+=("$floor=$out/$name-$version-bash-glibc$floor.so"); done
  bash "$repo/packaging/assemble-bash.sh" "$template" "$version" "$FRUN_GIT_COMMIT" "$out/frun.bash" "${pairs[@]}"
  artifacts+=(frun.bash)
else
  die "the crate has no bash feature: the builtin cannot be built"
fi

# --- SBOMs --------------------------------------------------------------------------------------
# Both tools stamp the time of the run and a random id; normalise_sbom replaces them with values
# derived from SOURCE_DATE_EPOCH, the version and the commit, and the repository's path with
# /build/frun, so two builds of one commit give byte-identical SBOMs.
#   normalise_sbom KIND SRC DST REPO NAME VERSION COMMIT [ARTIFACT BINARY [CRATES]]
# ARTIFACT names a second artifact of the same crate (plugin-host): its documents get their own
# id and name, and BINARY's SHA-256. CRATES (a normalised CycloneDX SBOM) keeps only the crates
# that one lists, for an SPDX document of a build with fewer dependencies.
normalise_sbom() {
  python3 - "$@" <<'PY'
import datetime, hashlib, json, os, sys, uuid

kind, src, dst, repo, name, version, commit = sys.argv[1:8]
artifact, binary, crates = (sys.argv[8:] + ["", "", ""])[:3]
epoch = int(os.environ["SOURCE_DATE_EPOCH"])
stamp = datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
ident = uuid.uuid5(uuid.NAMESPACE_URL, f"https://github.com/frun/{name}@{version}+{commit}"
                   + (f"#{artifact}" if artifact else ""))
doc_name = f"{name}-{artifact}" if artifact else name
sha256 = ""
if binary:
    with open(binary, "rb") as f:
        sha256 = hashlib.sha256(f.read()).hexdigest()

with open(src, encoding="utf-8") as f:
    text = f.read()
# Local paths (file:// URLs, the manifest path) would differ between two checkouts. Cargo also
# spells a path package's id "path+file:///dir#1.0" when the directory is named like the package
# and "path+file:///dir#name@1.0" otherwise. frun is the package at the checkout's root (in its
# own SBOMs and in the Python module's alike), and in /build/frun the first form is its id.
text = text.replace(repo + "#frun@", "/build/frun#").replace(repo, "/build/frun")
doc = json.loads(text)

if kind == "cdx":
    doc["serialNumber"] = f"urn:uuid:{ident}"
    doc.setdefault("metadata", {})["timestamp"] = stamp
    if sha256:
        # The crate's binary target is the artifact: it carries the artifact's name and hash.
        crate = doc["metadata"]["component"]
        bins = [c for c in crate.get("components", []) if c.get("type") == "application"]
        if len(bins) != 1:
            sys.exit(f"normalise_sbom: {len(bins)} binary targets in {src}, expected 1")
        bins[0]["description"] = f"{name}-{artifact}: {name}'s binary target built for this target"
        bins[0]["hashes"] = [{"alg": "SHA-256", "content": sha256}]
else:
    doc["creationInfo"]["created"] = stamp
    doc["name"] = doc_name  # cargo-sbom names the document after the checkout's directory
    doc["documentNamespace"] = f"https://spdx.org/spdxdocs/{doc_name}-{version}-{ident}"
    # cargo-sbom writes Cargo's source id ("registry+https://...crates.io-index") as the
    # download location, which is not an SPDX download location; for crates.io packages the
    # real one is the registry's download URL. It also lists Cargo.lock twice under one SPDXID.
    for pkg in doc.get("packages", []):
        loc = pkg.get("downloadLocation", "")
        if loc == "registry+https://github.com/rust-lang/crates.io-index":
            pkg["downloadLocation"] = (
                f"https://crates.io/api/v1/crates/{pkg['name']}/{pkg['versionInfo']}/download")
        elif loc.startswith(("registry+", "sparse+")):
            pkg["downloadLocation"] = "NOASSERTION"
    for key in ("files", "relationships"):
        if key in doc:
            unique = {json.dumps(item, sort_keys=True): item for item in doc[key]}
            doc[key] = list(unique.values())
    if crates:
        # cargo-sbom lists the crates of every target and feature; keep those the build links.
        with open(crates, encoding="utf-8") as f:
            linked = {(c["name"], c["version"]) for c in json.load(f)["components"]}
        linked.add((name, version))
        gone = {p["SPDXID"] for p in doc["packages"] if (p["name"], p["versionInfo"]) not in linked}
        doc["packages"] = [p for p in doc["packages"] if p["SPDXID"] not in gone]
        doc["relationships"] = [r for r in doc["relationships"]
                                if r["spdxElementId"] not in gone
                                and r["relatedSpdxElement"] not in gone]
    if sha256:
        # The document describes the binary (by its hash), which is built from the crate.
        crate = next(p["SPDXID"] for p in doc["packages"]
                     if (p["name"], p["versionInfo"]) == (name, version))
        ref = f"SPDXRef-Package-{doc_name}"
        doc["packages"].append({
            "SPDXID": ref,
            "name": doc_name,
            "versionInfo": version,
            "downloadLocation": "NOASSERTION",
            "filesAnalyzed": False,
            "checksums": [{"algorithm": "SHA256", "checksumValue": sha256}],
            "licenseConcluded": "NOASSERTION",
            "licenseDeclared": "NOASSERTION",
            "copyrightText": "NOASSERTION",
            "primaryPackagePurpose": "APPLICATION",
            "comment": f"the binary {doc_name}, built from the crate {name} {version}",
        })
        doc["relationships"].append(
            {"spdxElementId": "SPDXRef-DOCUMENT", "relationshipType": "DESCRIBES",
             "relatedSpdxElement": ref})
        doc["relationships"].append(
            {"spdxElementId": ref, "relationshipType": "GENERATED_FROM",
             "relatedSpdxElement": crate})
    # For a crate that is only a cdylib (the Python module) cargo-sbom writes no DESCRIBES
    # relationship: the document describes the package it is named after.
    rels = doc.setdefault("relationships", [])
    if not any(r["spdxElementId"] == "SPDXRef-DOCUMENT" and r["relationshipType"] == "DESCRIBES"
               for r in rels):
        pkg = next(p["SPDXID"] for p in doc["packages"] if p["name"] == name)
        rels.append({"spdxElementId": "SPDXRef-DOCUMENT", "relationshipType": "DESCRIBES",
                     "relatedSpdxElement": pkg})

def canon(value):
    """Sort lists of objects by their JSON text so that tool-side hash-map order cannot leak in."""
    if isinstance(value, dict):
        return {k: canon(v) for k, v in value.items()}
    if isinstance(value, list):
        items = [canon(v) for v in value]
        if all(isinstance(v, (dict, str)) for v in items):
            items.sort(key=lambda v: json.dumps(v, sort_keys=True))
        return items
    return value

with open(dst, "w", encoding="utf-8") as f:
    json.dump(canon(doc), f, indent=2, ensure_ascii=False)
    f.write("\n")
PY
}

if [[ $only_blobs == no && $only_static == no ]]; then
  step "writing SBOMs"
  cargo cyclonedx --quiet --format json --spec-version 1.5 --target "$musl" --features hwloc \
    --override-filename frun-sbom-tmp
  mv "$repo/frun-sbom-tmp.json" "$work/cdx.json"
  normalise_sbom cdx "$work/cdx.json" "$out/$name-$version.cdx.json" \
    "$repo" "$name" "$version" "$FRUN_GIT_COMMIT"
  # cargo-sbom describes every member of the workspace unless given one.
  cargo sbom --cargo-package "$name" --output-format spdx_json_2_3 >"$work/spdx.json"
  normalise_sbom spdx "$work/spdx.json" "$out/$name-$version.spdx.json" \
    "$repo" "$name" "$version" "$FRUN_GIT_COMMIT"
  artifacts+=("$name-$version.cdx.json" "$name-$version.spdx.json")
  # The plugin host's own SBOMs: the same crate for the glibc target without hwloc, so fewer
  # crates (CycloneDX filters by target and features; cargo-sbom cannot, so its document keeps
  # the crates the CycloneDX one lists), and the binary's SHA-256.
  host=$name-plugin-host
  cargo cyclonedx --quiet --format json --spec-version 1.5 --target x86_64-unknown-linux-gnu \
    --override-filename frun-sbom-tmp
  mv "$repo/frun-sbom-tmp.json" "$work/host.cdx.json"
  normalise_sbom cdx "$work/host.cdx.json" "$out/$name-$version-plugin-host.cdx.json" \
    "$repo" "$name" "$version" "$FRUN_GIT_COMMIT" plugin-host "$out/$host"
  normalise_sbom spdx "$work/spdx.json" "$out/$name-$version-plugin-host.spdx.json" \
    "$repo" "$name" "$version" "$FRUN_GIT_COMMIT" plugin-host "$out/$host" \
    "$out/$name-$version-plugin-host.cdx.json"
  artifacts+=("$name-$version-plugin-host.cdx.json" "$name-$version-plugin-host.spdx.json")
  # Each SBOM names the file it describes by name and SHA-256 (packaging/artifact-sbom.py).
  describe() { python3 "$repo/packaging/artifact-sbom.py" "$@"; }
  for kind in cdx spdx; do
    describe "$kind" "$out/$name-$version.$kind.json" "$out/$name-$version.$kind.json" \
      "$out/$bin" "frun, the static musl binary"
    describe "$kind" "$out/$name-$version-plugin-host.$kind.json" \
      "$out/$name-$version-plugin-host.$kind.json" "$out/$host" \
      "frun-plugin-host, the glibc build of frun that runs -C plugins"
  done
  # The bash builtins' own SBOMs: the crate without default features, with bash, for the gnu
  # target (what each blob links), one document per blob; frun.bash's names the blobs it embeds.
  cargo cyclonedx --quiet --format json --spec-version 1.5 --target x86_64-unknown-linux-gnu \
    --no-default-features --features bash --override-filename frun-sbom-tmp
  mv "$repo/frun-sbom-tmp.json" "$work/bash.cdx.json"
  normalise_sbom cdx "$work/bash.cdx.json" "$work/bash-crates.cdx.json" \
    "$repo" "$name" "$version" "$FRUN_GIT_COMMIT" bash "" ""
  normalise_sbom spdx "$work/spdx.json" "$work/bash-crates.spdx.json" \
    "$repo" "$name" "$version" "$FRUN_GIT_COMMIT" bash "" "$work/bash-crates.cdx.json"
  blobs=()
  for floor in "${floors[@]}"; do
    blob=$name-$version-bash-glibc$floor
    blobs+=("$out/$blob.so")
    for kind in cdx spdx; do
      describe "$kind" "$work/bash-crates.$kind.json" "$out/$blob.$kind.json" "$out/$blob.so" \
        "frun as a bash loadable builtin, for glibc >= $floor"
      artifacts+=("$blob.$kind.json")
    done
  done
  for kind in cdx spdx; do
    describe "$kind" "$work/bash-crates.$kind.json" "$out/$name-$version-bash.$kind.json" \
      "$out/frun.bash" "frun.bash: the bash front end, embedding one builtin per glibc floor" \
      "${blobs[@]}"
    artifacts+=("$name-$version-bash.$kind.json")
  done
  # The plain image's own SBOMs: the binary (by hash) and the pinned BusyBox userland.
  python3 "$repo/packaging/image-sbom.py" "$repo/packaging/busybox.pin" "$out/$bin" \
    "$out/$name-$version-image.cdx.json" "$out/$name-$version-image.spdx.json" \
    "$name" "$version" "$FRUN_GIT_COMMIT"
  artifacts+=("$name-$version-image.cdx.json" "$name-$version-image.spdx.json")
fi

# --- Python module (a wheel for every CPython >= 3.9, glibc >= 2.17) and its SBOMs ---------------
if [[ $only_blobs == no && $only_static == no ]]; then
  step "writing the Python module's SBOMs"
  # What the wheel's extension links (frun without hwloc, and pyo3).
  # cargo-cyclonedx writes one SBOM beside each member's Cargo.toml; this run's for python/ is
  # the one for the gnu target and default features. cargo-sbom reads the lock file beside the
  # manifest it is pointed at, the root's.
  (cd "$repo/python" && cargo cyclonedx --quiet --format json --spec-version 1.5 \
    --target x86_64-unknown-linux-gnu --override-filename frun-sbom-tmp)
  mv "$repo/python/frun-sbom-tmp.json" "$work/py-cdx.json"
  # The wheel carries this document (it cannot name the wheel's own hash); the release's
  # frun-python-<version>.{cdx,spdx}.json, written after the wheel, name the wheel too.
  mkdir -p "$work/embedded"
  normalise_sbom cdx "$work/py-cdx.json" "$work/embedded/$name-python-$version.cdx.json" \
    "$repo" "$name-python" "$version" "$FRUN_GIT_COMMIT"
  cargo sbom --cargo-package "$name-python" --output-format spdx_json_2_3 >"$work/py-spdx.json"
  normalise_sbom spdx "$work/py-spdx.json" "$work/embedded/$name-python-$version.spdx.json" \
    "$repo" "$name-python" "$version" "$FRUN_GIT_COMMIT"
  python_tool 'maturin==1.16.0' 'ziglang==0.15.2'
  step "building the Python wheel"
  # python/ is a member of the root workspace, so Cargo hashes the frun library's path relative
  # to the workspace into its symbol names, not the checkout's absolute path. A target dir of
  # its own: the extension links with zig against glibc 2.17. maturin stamps SOURCE_DATE_EPOCH
  # into the wheel's zip entries. The SBOM maturin would write into the wheel names the
  # checkout's absolute path (pyproject.toml turns it off); the wheel carries the normalised one
  # above instead, in .dist-info/sboms/.
  (cd "$repo/python" && CARGO_TARGET_DIR=$target_dir/python PATH="$tools/venv/bin:$PATH" \
    maturin build --quiet --release --locked --zig --compatibility manylinux2014 \
    --target x86_64-unknown-linux-gnu --sbom-include "$work/embedded/$name-python-$version.cdx.json" \
    --out "$work/wheel" >&2)
  wheel=$(cd "$work/wheel" && ls -- "$name-$version-"*.whl)
  install -m 0644 "$work/wheel/$wheel" "$out/$wheel"
  artifacts+=("$wheel")
  for kind in cdx spdx; do
    python3 "$repo/packaging/artifact-sbom.py" "$kind" "$work/embedded/$name-python-$version.$kind.json" \
      "$out/$name-python-$version.$kind.json" "$out/$wheel" \
      "the Python module frun (import frun), a wheel for CPython >= 3.9 on glibc >= 2.17"
    artifacts+=("$name-python-$version.$kind.json")
  done
fi

# --- checksums ----------------------------------------------------------------------------------
(
  cd "$out"
  printf '%s\n' "${artifacts[@]}" | sort | xargs -d '\n' sha256sum >"$work/sums"
  mv "$work/sums" SHA256SUMS
  touch -d "@$SOURCE_DATE_EPOCH" -- SHA256SUMS "${artifacts[@]}"
)

printf '\n%s %s (commit %s, SOURCE_DATE_EPOCH %s, %s) built in %ss into %s:\n' \
  "$name" "$version" "$FRUN_GIT_COMMIT" "$SOURCE_DATE_EPOCH" "$(rustc --version)" \
  "$((SECONDS - started))" "$out"
(cd "$out" && stat -c '%s %n' -- SHA256SUMS "${artifacts[@]}" | sort -k2 | awk '{printf "  %10s  %s\n", $1, $2}')
