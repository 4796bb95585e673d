#!/usr/bin/env bash
# Proves that packaging/build.sh is reproducible and that its artifacts are what they claim:
# copies the source tree twice (paths of different lengths and names), builds each copy alone, then
# checks that both dist/ trees are byte-identical, the checksums, the static binary, its embedded
# dependency list, the SBOMs (the binary's, the plugin host's, the plain image's and the Python
# module's) against their schemas, the glibc floor of each bash builtin blob, and that the Python
# wheel installs offline and runs. Prints one PASS/FAIL line per check; exits 1 if any check failed.
#
# usage: packaging/check.sh [--keep] [--out DIR]
#   --keep     leaves the two copies and their dist/ in place
#   --out DIR  copies the checked artifacts there when every check passed (image-test.sh --dist)
set -euo pipefail
shopt -s inherit_errexit

die() { printf 'check.sh: error: %s\n' "$*" >&2; exit 1; }
step() { printf '==> %s\n' "$*" >&2; }

keep=no
copy_to=
while (($#)); do
  case $1 in
    --keep) keep=yes; shift ;;
    --out) (($# >= 2)) || die "--out needs a directory"; copy_to=$2; shift 2 ;;
    -h | --help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) die "unknown argument: $1" ;;
  esac
done

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
started=$SECONDS
musl=x86_64-unknown-linux-musl
export LC_ALL=C TZ=UTC

# shellcheck source=packaging/tools-dir.sh
source "$repo/packaging/tools-dir.sh"
export FRUN_TOOLS_DIR=$tools
export PATH="$tools/cargo/bin:$PATH"

for cmd in cargo python3 sha256sum objdump file ldd; do
  command -v "$cmd" >/dev/null || die "$cmd is needed (objdump: binutils, file: file)"
done

# --- one commit and one timestamp for both builds -----------------------------------------------
# shellcheck source=packaging/source-id.sh
source "$repo/packaging/source-id.sh"

# --- two copies of the source -------------------------------------------------------------------
work=$(mktemp -d "${TMPDIR:-/tmp}/frun-check.XXXXXX")
cleanup() {
  if [[ $keep == yes ]]; then
    printf 'kept: %s\n' "$work" >&2
  else
    rm -rf "$work"
  fi
}
trap cleanup EXIT

# Snapshot once, then copy the snapshot twice, so that edits made to the tree while this runs
# cannot make the two copies differ. The copies differ in path length and in their directory's
# name (Cargo writes the latter into package ids).
snap=$work/snapshot
mkdir -p "$snap"
step "copying the source tree"
if [[ $in_git == yes ]]; then
  # Tracked files plus untracked, not-ignored ones: the tree as it would be committed.
  git -C "$repo" ls-files -z --cached --others --exclude-standard |
    while IFS= read -r -d '' f; do [[ -e $repo/$f || -L $repo/$f ]] && printf '%s\0' "$f"; done |
    (cd "$repo" && xargs -0 -r cp -a --parents -t "$snap")
else
  tar -C "$repo" --exclude=./target --exclude=./dist -cf - . | tar -C "$snap" -xf -
fi
copy_a=$work/a/frun
copy_b=$work/build-tree-with-a-much-longer-path/second-copy/frun-source
mkdir -p "$(dirname "$copy_a")" "$(dirname "$copy_b")"
cp -a "$snap" "$copy_a"
cp -a "$snap" "$copy_b"
rm -rf "$snap"

# The second build runs in an environment of its own, as on another machine: another HOME,
# CARGO_HOME, tool cache (FRUN_TOOLS_DIR: the pinned tools' binaries copied there, the Python
# tools and the static libhwloc made anew) and TMPDIR, besides another checkout path. Only the
# Rust toolchain (RUSTUP_HOME) is shared: a release names the rustc it was built with.
# The registry's downloaded crates are copied, to save the network, not its unpacked sources.
env_b=$work/elsewhere
cargo_home=${CARGO_HOME:-$HOME/.cargo}
mkdir -p "$env_b/home" "$env_b/cargo-home/registry" "$env_b/tools/cargo" "$env_b/tmp"
for part in index cache; do
  [[ -d $cargo_home/registry/$part ]] && cp -a "$cargo_home/registry/$part" "$env_b/cargo-home/registry/"
done
build_b_env=(
  HOME="$env_b/home" CARGO_HOME="$env_b/cargo-home" RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}"
  FRUN_TOOLS_DIR="$env_b/tools" TMPDIR="$env_b/tmp" XDG_CACHE_HOME="$env_b/home/.cache"
  # pip's downloads are shared (like the registry's crates): the Python tools are still
  # installed anew into the second tool cache.
  PIP_CACHE_DIR="${PIP_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/pip}"
  PATH="$env_b/tools/cargo/bin:$(dirname "$(command -v cargo)"):$PATH"
)

# The pinned tools are installed once, into the first build's tool cache; the pinned cargo
# tools' binaries are then copied into the second's, not built a second time (the Python tools
# are installed anew there). Then both copies build at the same time, each into a log printed
# when it is done: a build leaves a core idle for long stretches (configure scripts, the
# single-threaded fat-LTO link, pip, the SBOM tools), which the other fills.
step "installing the pinned tools"
env -u CARGO_TARGET_DIR -u FRUN_BUILD_DIR bash "$copy_a/packaging/build.sh" --only-tools --out "$work/tools-only"
for part in bin .crates2.json .crates.toml; do
  if [[ -e $tools/cargo/$part ]]; then cp -a "$tools/cargo/$part" "$env_b/tools/cargo/"; fi
done
build_copy() {
  local copy=$1 t0=$SECONDS
  if [[ $copy == "$copy_a" ]]; then
    env -u CARGO_TARGET_DIR -u FRUN_BUILD_DIR bash "$copy/packaging/build.sh" --out "$copy/dist"
  else
    env -u CARGO_TARGET_DIR -u FRUN_BUILD_DIR "${build_b_env[@]}" \
      bash "$copy/packaging/build.sh" --out "$copy/dist"
  fi
  echo "$((SECONDS - t0))s" >"$copy.time"
}
# The SBOM validators, pinned, into the first tool cache's virtualenv (python_tool, as build.sh
# installs its Python tools), while the builds run: nothing else installs there meanwhile (the
# tools above are in; the second build has a tool cache of its own).
venv=$tools/venv
python_tool 'cyclonedx-python-lib[json-validation]==11.12.0' 'spdx-tools==0.8.5' >"$work/validators.log" 2>&1 &
validators=$!
pids=()
for copy in "$copy_a" "$copy_b"; do
  step "building in $copy (beside the other build; its log follows when it is done)"
  build_copy "$copy" >"$copy.log" 2>&1 &
  pids+=("$!")
done
timings=()
build_failed=0
for i in 0 1; do
  copy=$([[ $i == 0 ]] && echo "$copy_a" || echo "$copy_b")
  if wait "${pids[$i]}"; then
    timings+=("$(cat "$copy.time")")
  else
    build_failed=1
    timings+=(failed)
  fi
  step "the build in $copy:"
  cat "$copy.log" >&2
done
((build_failed == 0)) || die "a build failed (its log is above)"
wait "$validators" || { cat "$work/validators.log" >&2; die "installing the SBOM validators failed"; }
cat "$work/validators.log" >&2
dist_a=$copy_a/dist
dist_b=$copy_b/dist

# --- checks -------------------------------------------------------------------------------------
failed=0
pass() { printf 'PASS  %s\n' "$*"; }
fail() { printf 'FAIL  %s\n' "$*"; failed=$((failed + 1)); }

if diff -r "$dist_a" "$dist_b" >"$work/diff.txt" 2>&1; then
  pass "the two builds are byte-identical ($(find "$dist_a" -type f | wc -l) files)"
else
  fail "the two builds differ:"
  sed 's/^/      /' "$work/diff.txt" | head -20
fi

if (cd "$dist_a" && sha256sum --check --quiet --strict SHA256SUMS); then
  listed=$(wc -l <"$dist_a/SHA256SUMS")
  present=$(find "$dist_a" -maxdepth 1 -type f ! -name SHA256SUMS | wc -l)
  if ((listed == present)); then
    pass "sha256sum -c SHA256SUMS ($listed artifacts)"
  else
    fail "SHA256SUMS lists $listed files but dist/ has $present artifacts"
  fi
else
  fail "sha256sum -c SHA256SUMS"
fi

# No artifact holds a path of either build: a HOME, a checkout, a tool cache, a TMPDIR.
# (A wheel is a zip: its members are searched, not its compressed bytes.)
contents() {
  if [[ $1 == *.whl ]]; then
    python3 -c 'import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
for n in z.namelist(): sys.stdout.buffer.write(z.read(n))' "$1"
  else
    cat -- "$1"
  fi
}
leaks=()
for artifact in "$dist_a"/*; do
  for path in "$HOME/" "$env_b" "$copy_a" "$copy_b" "$tools" "$work"; do
    if contents "$artifact" | grep -qaF -- "$path"; then leaks+=("${artifact##*/} holds $path"); fi
  done
done
if ((${#leaks[@]} == 0)); then
  pass "no artifact holds a path of either build environment (HOME, checkout, tools, TMPDIR)"
else
  fail "build paths in artifacts: ${leaks[*]}"
fi

version=$(awk -F'"' '/^version *=/ {print $2; exit}' "$copy_a/Cargo.toml")
bin=$dist_a/frun-$version-x86_64-linux-musl
if [[ -x $bin ]]; then
  ldd_out=$(ldd "$bin" 2>&1 || true)
  file_out=$(file -b "$bin")
  if [[ $ldd_out == *"not a dynamic executable"* || $ldd_out == *"statically linked"* ]] &&
    [[ $file_out == *"static"* ]]; then
    ldd_out=$(printf '%s' "$ldd_out" | tr -s '\t\n' '  ')
    pass "static binary (ldd:$ldd_out; file: $(grep -o 'static[-a-z]* linked' <<<"$file_out"))"
  else
    fail "binary is not static: ldd says '${ldd_out//$'\n'/ }', file says '$file_out'"
  fi

  want="frun $version (commit $FRUN_GIT_COMMIT, target $musl)"
  got=$("$bin" --version 2>&1 || true)
  if [[ $got == "$want" ]]; then
    pass "--version: $got"
  else
    fail "--version printed '$got', expected '$want'"
  fi

  # The static binary does real work with its own allocator (dlmalloc, not musl's): records as
  # arguments in order, and stdin batches, each against seq.
  want=$(seq 300000 | cksum)
  got=$(seq 300000 | "$bin" -k -j 4 echo | tr ' ' '\n' | cksum)
  got_s=$(seq 300000 | "$bin" -k -s -j 4 -b 64k cat | cksum)
  if [[ $got == "$want" && $got_s == "$want" ]]; then
    pass "static binary: -k echo and -k -s cat over seq 300000 give seq 300000 ($want)"
  else
    fail "static binary over seq 300000: -k echo gave '$got', -k -s cat '$got_s', seq '$want'"
  fi

  # hwloc is linked in (the static musl libhwloc from hwloc-static.sh) and works: a simulated
  # two-node machine is read through it. Without the simulation, this machine's own topology.
  synthetic='pack:2 numa:1 core:1 pu:1'
  got=$(env -u HWLOC_XMLFILE HWLOC_SYNTHETIC="$synthetic" "$bin" --stats -j 2 true </dev/null 2>&1 >/dev/null || true)
  if grep -q 'nodes=2 source=hwloc (simulated)' <<<"$got"; then
    pass "hwloc linked: HWLOC_SYNTHETIC='$synthetic' gives $(grep -o 'nodes=2 source=hwloc (simulated)' <<<"$got")"
  else
    fail "hwloc: HWLOC_SYNTHETIC='$synthetic' --stats printed no 'nodes=2 source=hwloc (simulated)': $(tail -n 4 <<<"$got")"
  fi
  online=$(cat /sys/devices/system/node/online 2>/dev/null || echo 0)
  got=$(seq 10 | env -u HWLOC_XMLFILE -u HWLOC_SYNTHETIC "$bin" --stats -j 2 true 2>&1 >/dev/null || true)
  if [[ $online =~ ^[0-9]+$ ]]; then
    # One node: frun does not load a topology and prints no node lines.
    if ! grep -q 'nodes=' <<<"$got" && grep -q 'records=10' <<<"$got"; then
      pass "one NUMA node here (online: $online): --stats prints no nodes= line"
    else
      fail "one NUMA node here (online: $online), yet --stats printed: $(tail -n 4 <<<"$got")"
    fi
  elif grep -q 'nodes=[0-9]* source=hwloc ' <<<"$got"; then
    pass "NUMA nodes $online here: --stats shows $(grep -o 'nodes=[0-9]* source=hwloc' <<<"$got")"
  else
    fail "NUMA nodes $online here, but --stats printed no 'source=hwloc' line: $(tail -n 4 <<<"$got")"
  fi

  # No build path (the tool cache with the hwloc prefix, the source copies, the home directory)
  # is written into the binary.
  leaked=()
  for path in "$tools" "$work" "$HOME"; do
    [[ $path == / ]] || ! grep -qaF -- "$path" "$bin" || leaked+=("$path")
  done
  if ((${#leaked[@]} == 0)); then
    pass "no build path in the binary (tool cache, source copies, \$HOME)"
  else
    fail "the binary contains build paths: ${leaked[*]}"
  fi

  if ! grep -q '"rust-audit-info 0.5.4 ' "$tools/cargo/.crates2.json" 2>/dev/null; then
    step "installing rust-audit-info 0.5.4 into the tool cache"
    (
      cd "$tools"
      export CARGO_PROFILE_RELEASE_OPT_LEVEL=0 CARGO_PROFILE_RELEASE_LTO=false \
        CARGO_PROFILE_RELEASE_CODEGEN_UNITS=256 CARGO_PROFILE_RELEASE_DEBUG=0
      cargo install --quiet --locked --root "$tools/cargo" rust-audit-info@0.5.4
    )
  fi
  if rust-audit-info "$bin" >"$work/audit.json" 2>"$work/audit.err" &&
    deps=$(python3 -c '
import json, sys
names = {p["name"] for p in json.load(open(sys.argv[1]))["packages"]}
missing = {"frun", "clap"} - names
print(len(names)) if not missing else sys.exit("missing: " + ", ".join(sorted(missing)))
' "$work/audit.json"); then
    pass "rust-audit-info: embedded dependency list has frun and clap ($deps packages)"
  else
    fail "rust-audit-info found no usable dependency list: $(cat "$work/audit.err")"
  fi
else
  fail "no binary $bin"
fi

# SBOM schema validation, with pinned validators in the tool cache's virtualenv (installed
# while the builds ran, above).

# valid_sbom FILE: FILE (*.cdx.json or *.spdx.json) against its schema; prints what is wrong.
valid_sbom() {
  if [[ $1 == *.cdx.json ]]; then
    "$venv/bin/python" - "$1" <<'PY' 2>&1
import json, sys
from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator
text = open(sys.argv[1], encoding="utf-8").read()
errors = JsonStrictValidator(SchemaVersion.from_version(json.loads(text)["specVersion"])).validate_str(text)
sys.exit(f"schema error: {errors}" if errors is not None else 0)
PY
  else
    "$venv/bin/pyspdxtools" -i "$1" 2>&1
  fi
}

cdx=$dist_a/frun-$version.cdx.json
if [[ -f $cdx ]] && msg=$("$venv/bin/python" - "$cdx" <<'PY' 2>&1
import json, sys
from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator

text = open(sys.argv[1], encoding="utf-8").read()
doc = json.loads(text)
version = SchemaVersion.from_version(doc["specVersion"])
errors = JsonStrictValidator(version).validate_str(text)
if errors is not None:
    sys.exit(f"schema error: {errors}")
names = {c.get("name") for c in doc.get("components", [])}
names.add(doc.get("metadata", {}).get("component", {}).get("name"))
if not {"frun", "clap"} <= names:
    sys.exit("frun or clap missing from the components")
print(f"CycloneDX {doc['specVersion']}, {len(doc.get('components', []))} components")
PY
); then
  pass "CycloneDX SBOM is valid: $msg"
else
  fail "CycloneDX SBOM $cdx: ${msg:-missing}"
fi

spdx=$dist_a/frun-$version.spdx.json
if [[ -f $spdx ]] && msg=$("$venv/bin/pyspdxtools" -i "$spdx" 2>&1); then
  pass "SPDX SBOM is valid (pyspdxtools)"
else
  fail "SPDX SBOM $spdx: ${msg:-missing}"
fi

# The plain image's SBOMs: valid, and naming the binary by its hash and the pinned BusyBox with
# the version, licence and hashes of packaging/busybox.pin.
for kind in cdx spdx; do
  sbom=$dist_a/frun-$version-image.$kind.json
  what=$([[ $kind == cdx ]] && echo CycloneDX || echo SPDX)
  valid=$(valid_sbom "$sbom") || { fail "image $what SBOM $sbom: ${valid:-missing}"; continue; }
  if msg=$(python3 - "$kind" "$sbom" "$repo/packaging/busybox.pin" "$(sha256sum <"$bin" | cut -d' ' -f1)" <<'PY' 2>&1
import json, sys
kind, path, pin_path, frun_sha = sys.argv[1:5]
pin = dict(l.strip().split("=", 1) for l in open(pin_path) if "=" in l and not l.startswith("#"))
doc = json.load(open(path, encoding="utf-8"))
if kind == "cdx":
    comps = {c["name"]: c for c in doc["components"]}
    sha = lambda c: {h["content"] for h in c.get("hashes", [])}
    bb, fr = comps.get(pin["package"]), comps.get("frun")
    if not bb or not fr:
        sys.exit("frun or busybox missing")
    lic = {l["license"]["id"] for l in bb.get("licenses", [])}
    dist = {h["content"] for r in bb.get("externalReferences", []) for h in r.get("hashes", [])}
    got = (bb["version"], lic, sha(bb) | dist, sha(fr))
else:
    pkgs = {p["name"]: p for p in doc["packages"]}
    sha = lambda p: {c["checksumValue"] for c in p.get("checksums", [])}
    bb, fr = pkgs.get(pin["package"]), pkgs.get("frun")
    if not bb or not fr:
        sys.exit("frun or busybox missing")
    binary = {pin["binary_sha256"]} if pin["binary_sha256"] in bb.get("comment", "") else set()
    got = (bb["versionInfo"], {bb["licenseDeclared"]}, sha(bb) | binary, sha(fr))
want = (pin["version"], {pin["license"]}, {pin["deb_sha256"], pin["binary_sha256"]}, {frun_sha})
if got != want:
    sys.exit(f"got {got}, want {want}")
print(f"{pin['package']} {pin['version']} {pin['license']}")
PY
  ); then
    pass "image $what SBOM is valid and lists frun (its SHA-256) and $msg (both hashes as pinned)"
  else
    fail "image $what SBOM $sbom: $msg"
  fi
done

# The plugin host's SBOMs: valid, naming frun-plugin-host by its SHA-256, and listing the crates
# of a build without hwloc: the static binary's CycloneDX SBOM has hwlocality, the host's must not,
# and its SPDX document keeps only crates its CycloneDX one lists.
host=$dist_a/frun-plugin-host
for kind in cdx spdx; do
  sbom=$dist_a/frun-$version-plugin-host.$kind.json
  if [[ ! -f $sbom || ! -f $host ]]; then
    fail "plugin host SBOM $sbom (or the host) is missing"
    continue
  fi
  what=$([[ $kind == cdx ]] && echo CycloneDX || echo SPDX)
  valid=$(valid_sbom "$sbom") || { fail "plugin host $what SBOM $sbom: ${valid:-invalid}"; continue; }
  if msg=$(python3 - "$kind" "$sbom" "$cdx" "$dist_a/frun-$version-plugin-host.cdx.json" \
    "$(sha256sum <"$host" | cut -d' ' -f1)" <<'PY' 2>&1
import json, sys
kind, path, static_cdx, host_cdx, want_sha = sys.argv[1:6]
doc = json.load(open(path, encoding="utf-8"))
static = {c["name"] for c in json.load(open(static_cdx, encoding="utf-8"))["components"]}
if "hwlocality" not in static:
    sys.exit("the static binary's CycloneDX SBOM has no hwlocality to compare with")
if kind == "cdx":
    crate = doc["metadata"]["component"]
    shas = {h["content"] for c in [crate] + crate.get("components", []) for h in c.get("hashes", [])}
    crates = {(c["name"], c["version"]) for c in doc["components"]}
else:
    described = {r["relatedSpdxElement"] for r in doc["relationships"]
                 if r["spdxElementId"] == "SPDXRef-DOCUMENT" and r["relationshipType"] == "DESCRIBES"}
    shas = {c["checksumValue"] for p in doc["packages"] if p["SPDXID"] in described
            for c in p.get("checksums", []) if c["algorithm"] == "SHA256"}
    crates = {(p["name"], p["versionInfo"]) for p in doc["packages"] if p["SPDXID"] not in described}
    listed = {(c["name"], c["version"]) for c in json.load(open(host_cdx, encoding="utf-8"))["components"]}
    extra = {c for c in crates if c not in listed and c[0] != "frun"}
    if extra:
        sys.exit(f"crates its CycloneDX SBOM does not list: {sorted(extra)}")
if shas != {want_sha}:
    sys.exit(f"SHA-256 {sorted(shas)}, but frun-plugin-host has {want_sha}")
names = {n for n, _ in crates}
if "clap" not in names or "hwlocality" in names:
    sys.exit(f"clap missing or hwlocality present among {len(names)} crates")
print(f"{len(crates)} crates, no hwlocality")
PY
  ); then
    pass "plugin host $what SBOM is valid, names frun-plugin-host by its SHA-256, $msg"
  else
    fail "plugin host $what SBOM $sbom: $msg"
  fi
done

# -C in the static binary: it runs plugins through the frun-plugin-host beside it, and says so
# in one line (126) when that is missing.
if [[ -x $host ]] && command -v cc >/dev/null; then
  pdir=$(mktemp -d)
  printf '%s\n' '#include <stdio.h>' \
    'int echo(int c, char **v) { for (int i = 0; i < c; i++) printf("%s\n", v[i]); return 0; }' \
    >"$pdir/p.c"
  cc -O2 -shared -fPIC -o "$pdir/p.so" "$pdir/p.c"
  cp "$bin" "$pdir/frun"
  st=0
  "$pdir/frun" -C "$pdir/p.so:echo" </dev/null 2>"$pdir/err" || st=$?
  if [[ $st == 126 ]] && grep -q 'frun-plugin-host' "$pdir/err"; then
    pass "static binary without its plugin host: one line, status 126"
  else
    fail "static binary without its plugin host: status $st, $(cat "$pdir/err")"
  fi
  cp "$host" "$pdir/frun-plugin-host"
  if [[ $(seq 100000 | "$pdir/frun" -k -C "$pdir/p.so:echo" | cksum) == "$(seq 100000 | cksum)" ]]; then
    pass "static binary runs a plugin through frun-plugin-host"
  else
    fail "static binary runs a plugin through frun-plugin-host"
  fi
  rm -rf "$pdir"
else
  fail "dist/ has no frun-plugin-host (or no cc to build a test plugin)"
fi

# The bash builtin blobs: the newest glibc symbol each one needs must not be newer than the floor
# in its name; frun.bash verifies, and works on an older system.
shopt -s nullglob
blobs=("$dist_a"/frun-"$version"-bash-glibc*.so)
if ((${#blobs[@]})); then
  for blob in "${blobs[@]}"; do
    floor=${blob##*-bash-glibc}
    floor=${floor%.so}
    need=$(objdump -T "$blob" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -V | tail -n 1)
    if [[ -n $need && $(printf '%s\n%s\n' "$need" "$floor" | sort -V | tail -n 1) == "$floor" ]]; then
      pass "$(basename "$blob"): needs GLIBC_$need <= $floor"
    else
      fail "$(basename "$blob"): needs GLIBC_${need:-?}, newer than its floor $floor"
    fi
    needed=$(objdump -p "$blob" | awk '$1 == "NEEDED" { print $2 }' | tr '\n' ' ')
    if [[ $needed != *hwloc* ]]; then
      pass "$(basename "$blob"): no libhwloc (NEEDED: ${needed% })"
    else
      fail "$(basename "$blob"): links libhwloc (NEEDED: ${needed% })"
    fi
  done
  if [[ -s $dist_a/frun.bash ]]; then
    pass "frun.bash assembled"
  else
    fail "blobs built but no frun.bash"
  fi
  if out=$(bash "$dist_a/frun.bash" --diagnose 2>&1); then
    pass "frun.bash --diagnose: every embedded checksum matches"
  else
    fail "frun.bash --diagnose: $out"
  fi
  # Older systems: the 2.17 blob (forced) and the one frun.bash picks itself, in a Debian 11
  # root (bash 5.1, glibc 2.31).
  for pick in 2.17 ""; do
    what="its own pick"
    [[ -z $pick ]] || what="FRUN_BLOB=$pick"
    if out=$(FRUN_BLOB=$pick bash "$repo/tests/bash/old-glibc-root.sh" "" "$dist_a/frun.bash" \
      "$repo/tests/bash/smoke.sh" 2>&1); then
      pass "frun.bash in bash 5.1 / glibc 2.31 ($what): smoke test"
    else
      fail "frun.bash in bash 5.1 / glibc 2.31 ($what): $(tail -n 8 <<<"$out")"
    fi
  done
else
  fail "no bash builtin blobs were built"
fi

# The Python wheel: the same bytes from both copies; pip installs it offline (--no-index, the
# wheel file alone, as README.md says) into a fresh virtual environment, where frun.map runs a
# function over records; its SBOMs are valid and list pyo3.
wheels=("$dist_a"/frun-"$version"-cp39-abi3-*.whl)
if ((${#wheels[@]} == 1)); then
  wheel=${wheels[0]}
  if cmp -s -- "$wheel" "$dist_b/${wheel##*/}"; then
    pass "${wheel##*/}: byte-identical from both copies ($(sha256sum <"$wheel" | cut -c1-16)…)"
  else
    fail "${wheel##*/}: the two copies built different wheels"
  fi
  pyenv_dir=$work/wheel-venv
  got=
  if python3 -m venv "$pyenv_dir" &&
    "$pyenv_dir/bin/pip" install --quiet --disable-pip-version-check --no-index "$wheel" &&
    got=$(cd "$work" && "$pyenv_dir/bin/python" -c \
      'import frun; print(sum(frun.map(int, [str(i) for i in range(10000)])))') &&
    [[ $got == "$(seq 0 9999 | awk '{s += $1} END {print s}')" ]]; then
    pass "${wheel##*/}: pip installs it offline; frun.map sums 0..9999 right"
  else
    fail "${wheel##*/}: offline install or smoke run (got ${got:-nothing})"
  fi
else
  fail "no single Python wheel was built (${#wheels[@]})"
fi
for sbom in "$dist_a/frun-python-$version.cdx.json" "$dist_a/frun-python-$version.spdx.json"; do
  st=0
  valid=$(valid_sbom "$sbom") || st=$?
  if ((st == 0)) && [[ -s $sbom ]] && grep -q '"pyo3' "$sbom"; then
    pass "$(basename "$sbom") is valid and lists pyo3"
  else
    fail "$(basename "$sbom"): ${valid:-missing or without pyo3}"
  fi
done

# Every release file has its own SBOMs (CycloneDX and SPDX), each naming it by name and SHA-256
# (packaging/sbom-map.py, whose list the release workflow attests each file with), and every
# SBOM in SHA256SUMS is valid against its schema.
if pairs=$(python3 "$repo/packaging/sbom-map.py" "$dist_a" 2>&1); then
  pass "an SBOM per release file, naming it by SHA-256: $(python3 -c 'import json, sys
print(", ".join(p["subject"] for p in json.loads(sys.argv[1])))' "$pairs")"
else
  fail "SBOM per release file: $pairs"
fi
bad_sboms=()
while read -r _ sbom; do
  [[ $sbom == *.json ]] || continue
  valid_sbom "$dist_a/$sbom" >/dev/null || bad_sboms+=("$sbom")
done <"$dist_a/SHA256SUMS"
if ((${#bad_sboms[@]} == 0)); then
  pass "every SBOM in SHA256SUMS is valid against its schema ($(grep -c '\.json$' "$dist_a/SHA256SUMS"))"
else
  fail "invalid SBOMs: ${bad_sboms[*]}"
fi

printf '\nbuild times: first %s, second %s; whole check %ss\n' "${timings[0]}" "${timings[1]}" \
  "$((SECONDS - started))"
if ((failed)); then
  printf 'check.sh: %d check(s) FAILED\n' "$failed"
  exit 1
fi
if [[ -n $copy_to ]]; then
  mkdir -p "$copy_to"
  cp -p -- "$dist_a"/* "$copy_to/"
  printf 'artifacts copied to %s\n' "$copy_to"
fi
printf 'check.sh: all checks passed\n'
