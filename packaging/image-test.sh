#!/usr/bin/env bash
# Builds the container images from a clean copy of the checkout (the Containerfiles compile frun
# themselves) with buildah and tests them with podman, against dist/, without a
# registry, a daemon or systemd: vfs storage under a temporary directory (or FRUN_IMAGE_STORE),
# chroot isolation, runc with cgroupfs (packaging/containers.conf).
#   Containerfile       FROM scratch + the static binary + the pinned static BusyBox
#                       (packaging/userland.sh): built twice (the image id must not change); its
#                       size; `seq 3 | ... echo`, `-k echo` over 1000 lines, a `sh -c` line, frun
#                       in a shell in the image, `--bogus` (exit 2); the files match the image
#                       SBOMs' hashes; xargs and parallel are frun's personalities.
#   Containerfile.bash  Debian minbase + frun.bash: the same frun checks through bash, a bash
#                       function run by the builtin in `bash -c`; `parallel` and `xargs` on PATH
#                       are frun, and scripts written for GNU Parallel and for xargs give the
#                       output and exit status that the real tools (/usr/bin) give on this machine.
# Every check prints one PASS or FAIL line naming it (with what differed); exits 1 if any failed.
# Installs buildah, podman and runc (and debootstrap for the bash image) with apt when missing.
# Builds dist/ with packaging/build.sh first if the binary is not there.
#
# usage: packaging/image-test.sh [--dist DIR] [--base-only]
#   --base-only  only make the Debian base (debootstrap, cached in the tool cache), then stop:
#                tests/run.sh starts it beside the builds that the image test waits for
set -euo pipefail
shopt -s inherit_errexit

die() { printf 'image-test.sh: error: %s\n' "$*" >&2; exit 1; }
step() { printf '==> %s\n' "$*" >&2; }

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
dist=$repo/dist
base_only=no
while (($#)); do
  case $1 in
    --dist) (($# >= 2)) || die "--dist needs a directory"; dist=$2; shift 2 ;;
    --base-only) base_only=yes; shift ;;
    -h | --help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) die "unknown argument: $1" ;;
  esac
done
started=$SECONDS
export LC_ALL=C TZ=UTC
# shellcheck source=packaging/tools-dir.sh
source "$repo/packaging/tools-dir.sh"

# debian_mirror: the Debian archive this machine's apt already uses (or FRUN_DEBIAN_MIRROR).
debian_mirror() {
  if [[ -n ${FRUN_DEBIAN_MIRROR:-} ]]; then
    printf '%s\n' "$FRUN_DEBIAN_MIRROR"
    return
  fi
  {
    cat /etc/apt/sources.list.d/*.sources 2>/dev/null | sed -n 's/^URIs:[[:space:]]*//p' | tr ' ' '\n'
    cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
      awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; break } }'
  } | sed 's,/*$,,' | grep -E '^[a-z]+://[^[:space:]]+/debian$' | head -n 1
}

# --- the base: Debian bookworm minbase, made without a registry -----------------------------------
# make_base: the base's tar in the tool cache, made once (under a lock: a --base-only run may be
# making it while the test starts).
base_tar=$tools/debian-minbase-bookworm.tar
make_base() {
  local lock mirror rootfs
  exec {lock}>"$base_tar.lock"
  flock "$lock"
  if [[ ! -s $base_tar ]]; then
    command -v debootstrap >/dev/null || die "debootstrap is needed for the bash image's base"
    mirror=$(debian_mirror) || true
    [[ -n $mirror ]] || die "no Debian mirror found in apt's sources; set FRUN_DEBIAN_MIRROR"
    step "debootstrap --variant=minbase bookworm (cached in $base_tar)"
    rootfs=$(mktemp -d "${TMPDIR:-/tmp}/frun-base.XXXXXX")
    if ! debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >"$rootfs.log" 2>&1; then
      tail -n 5 "$rootfs.log" >&2
      rm -rf "$rootfs" "$rootfs.log"
      die "debootstrap failed"
    fi
    rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
    tar -C "$rootfs" --sort=name --numeric-owner -cf "$base_tar.tmp" .
    mv "$base_tar.tmp" "$base_tar"
    rm -rf "$rootfs" "$rootfs.log"
  fi
  exec {lock}>&-
}
if [[ $base_only == yes ]]; then
  ((EUID == 0)) || die "debootstrap needs root"
  make_base
  exit 0
fi

# --- inputs -------------------------------------------------------------------------------------
version=$(awk -F'"' '/^version *=/ {print $2; exit}' "$repo/Cargo.toml")
bin_name=frun-$version-x86_64-linux-musl
if [[ ! -x $dist/$bin_name ]]; then
  step "no $bin_name in $dist: running packaging/build.sh"
  bash "$repo/packaging/build.sh" --out "$dist"
fi
dist=$(cd "$dist" && pwd -P)
revision=$("$dist/$bin_name" --version | sed -n 's/.*(commit \([^,]*\),.*/\1/p')
[[ -n $revision ]] || die "cannot read the commit from $bin_name --version"

need_pkgs=()
for cmd in buildah podman runc; do
  command -v "$cmd" >/dev/null || need_pkgs+=("$cmd")
done
# The expected output of the personality checks comes from the real tools (moreutils also has a
# `parallel`, which is not the one).
/usr/bin/parallel --version 2>/dev/null | grep -q '^GNU parallel' || need_pkgs+=(parallel)
command -v /usr/bin/xargs >/dev/null || need_pkgs+=(findutils)
with_bash=yes
command -v debootstrap >/dev/null || need_pkgs+=(debootstrap)
if ((${#need_pkgs[@]})); then
  step "installing ${need_pkgs[*]}"
  ((EUID == 0)) || die "${need_pkgs[*]} missing; run as root or install them first"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}" >/dev/null
fi

# --- private container storage and configuration --------------------------------------------------
if [[ -n ${FRUN_IMAGE_STORE:-} ]]; then
  store=$FRUN_IMAGE_STORE
  mkdir -p "$store"
  store=$(cd "$store" && pwd -P)
else
  store=$(mktemp -d "${TMPDIR:-/tmp}/frun-images.XXXXXX")
fi
cleanup() {
  [[ -n ${FRUN_IMAGE_STORE:-} ]] && return
  # vfs layers can hold read-only directories; make them removable first.
  chmod -R u+w "$store" 2>/dev/null || true
  rm -rf "$store"
}
trap cleanup EXIT

cat >"$store/storage.conf" <<EOF
[storage]
driver = "vfs"
graphroot = "$store/graph"
runroot = "$store/run"
EOF
export CONTAINERS_CONF=$repo/packaging/containers.conf
export CONTAINERS_STORAGE_CONF=$store/storage.conf
# A private tmp dir keeps podman's runtime state away from any other podman on the machine.
podman() { command podman --tmpdir "$store/libpod" "$@"; }
run_opts=(--rm --network none --ulimit nofile=20000:20000 --ulimit nproc=32768:32768)

failed=0
failed_names=()
pass() { printf 'PASS  %s\n' "$*"; }
# fail MESSAGE: one FAIL line; the message is listed again at the end (its first 150 characters).
fail() {
  local message="$*"
  printf 'FAIL  %s\n' "$message"
  failed=$((failed + 1))
  failed_names+=("${message:0:150}")
}
# show_diff WANT GOT: the first lines of a diff of the expected and the actual output, indented.
show_diff() { diff -u --label expected --label got "$1" "$2" | sed -n '3,16s/^/      /p' || true; }
# show_stderr FILE: its first lines, indented.
show_stderr() { [[ ! -s $1 ]] || sed -n '1,5s/^/      stderr: /p' "$1"; }

# build FILE TAG: build one image with buildah from the build context; prints the image id.
# The build stage's base is the Debian minbase below with this machine's Rust toolchain mounted
# where the official rust images keep theirs (no registry is reachable here); the stage
# installs the rest with apt, fetches crates, hwloc and BusyBox by checksum, and builds.
build() {
  local file=$1 tag=$2
  buildah build --quiet --isolation chroot --timestamp 0 --pull=never --no-cache \
    --build-arg "VERSION=$version" --build-arg "REVISION=$revision" \
    --build-arg "RUST_IMAGE=$rust_base" --build-arg "BASE=$base" \
    --volume "$rustup_home:/usr/local/rustup:ro" --volume "$rust_bin:/usr/local/cargo/bin:ro" \
    --iidfile "$store/iid" -f "$context/$file" -t "$tag" -t "${tag%:*}" "$context" >"$store/build.log" 2>&1 || {
    tail -n 30 "$store/build.log" >&2
    die "buildah build -f $file failed"
  }
  cat "$store/iid"
}

# build_twice FILE TAG: builds it, removes it, builds it again: the image id must not change.
# Sets image_size (bytes).
sizes=()
build_twice() {
  local file=$1 tag=$2 id1 id2
  step "building $tag (twice)"
  id1=$(build "$file" "$tag")
  buildah rmi --force "$tag" "${tag%:*}" >/dev/null
  id2=$(build "$file" "$tag")
  image_size=$(podman image inspect --format '{{.Size}}' "$tag")
  sizes+=("$file=$image_size")
  if [[ $id1 == "$id2" ]]; then
    pass "$file: two builds give the same image id ${id1:0:19} ($image_size bytes)"
  else
    fail "$file: two builds gave different image ids ($id1, $id2)"
  fi
}

# exercise NAME IMAGE [PODMAN-OPTION... --] PREFIX...: the behaviour checks, with PREFIX before
# frun's own arguments.
exercise() {
  local name=$1 image=$2
  shift 2
  local opts=()
  if [[ " $* " == *" -- "* ]]; then
    while [[ $1 != -- ]]; do opts+=("$1"); shift; done
    shift
  fi
  local rc=0
  seq 1000 | podman run -i "${run_opts[@]}" "${opts[@]}" "$image" "$@" -k echo >"$store/out" \
    2>"$store/err" || rc=$?
  # frun passes several records to one echo once input is plentiful ("3 4" on one line), so the
  # output is compared word by word, in order (-k).
  if ((rc == 0)) && seq 1000 | cmp -s - <(tr -s ' ' '\n' <"$store/out"); then
    pass "$name: seq 1000 | podman run -i ... -k echo gives 1..1000 in order ($(wc -l <"$store/out") lines)"
  else
    fail "$name: -k echo over seq 1000 (exit $rc): $(head -c 300 "$store/err")"
  fi
  rc=0
  podman run "${run_opts[@]}" "${opts[@]}" "$image" "$@" --bogus >/dev/null 2>"$store/err" || rc=$?
  if ((rc == 2)); then
    pass "$name: --bogus exits 2"
  else
    fail "$name: --bogus exited $rc, expected 2: $(head -c 300 "$store/err")"
  fi
}

# expect NAME WANT [STDIN-COMMAND... --] PODMAN-RUN-ARGUMENT...: podman run's stdout must be
# WANT and its exit status 0; STDIN-COMMAND, when given, is piped in (with -i).
expect() {
  local name=$1 want=$2 rc=0
  shift 2
  local feed=()
  if [[ " $* " == *" -- "* ]]; then
    while [[ $1 != -- ]]; do feed+=("$1"); shift; done
    shift
  fi
  if ((${#feed[@]})); then
    "${feed[@]}" | podman run -i "${run_opts[@]}" "$@" >"$store/got" 2>"$store/err" || rc=$?
  else
    podman run "${run_opts[@]}" "$@" </dev/null >"$store/got" 2>"$store/err" || rc=$?
  fi
  printf '%s\n' "$want" >"$store/want"
  if ((rc == 0)) && cmp -s "$store/want" "$store/got"; then
    pass "$name"
  else
    fail "$name: exit $rc, output differs"
    show_diff "$store/want" "$store/got"
    show_stderr "$store/err"
  fi
}

# links NAME IMAGE FRUN: frun, parallel, sem and xargs on the image's PATH (as `which` finds them:
# BusyBox's sh would name its own applets, bash frun.bash's builtin) lead to the binary FRUN,
# ahead of any system xargs.
links() {
  local name=$1 image=$2 frun=$3
  # shellcheck disable=SC2016 # expanded by the shell in the container
  expect "$name: frun, parallel, sem and xargs on PATH are $frun" \
    "$(printf "%s /usr/local/bin/%s $frun\n" frun frun parallel parallel sem sem xargs xargs)" \
    --entrypoint /bin/sh "$image" -c \
    'for n in frun parallel sem xargs; do p=$(which "$n") || p=none; echo "$n $p $(readlink -f "$p")"; done'
}

# like_the_real_tools NAME SHELL SCRIPT PODMAN-RUN-ARGUMENT...: runs SCRIPT with SHELL on this
# machine, where PATH is /usr/bin:/bin (GNU Parallel and GNU xargs), and in a container as
# `podman run ... ARGUMENTS... SCRIPT`; stdout and exit status must be the same.
like_the_real_tools() {
  local name=$1 shell=$2 script=$3 want_rc=0 got_rc=0
  shift 3
  mkdir -p "$store/home"
  env -i PATH=/usr/bin:/bin HOME="$store/home" LC_ALL=C "$shell" -c "$script" \
    </dev/null >"$store/want" 2>"$store/want.err" || want_rc=$?
  timeout -k 10 300 podman run "${run_opts[@]}" --env LC_ALL=C "$@" "$script" \
    </dev/null >"$store/got" 2>"$store/err" || got_rc=$?
  if ((want_rc == got_rc)) && cmp -s "$store/want" "$store/got"; then
    pass "$name: same output as the real tool ($(wc -l <"$store/want") lines, exit $want_rc)"
  else
    fail "$name: output or exit status differs from the real tool's (exit $got_rc, expected $want_rc)"
    show_diff "$store/want" "$store/got"
    show_stderr "$store/err"
  fi
}

# same_as_host NAME INPUT HOST-COMMAND PODMAN-RUN-ARGUMENT...: INPUT on the stdin of both
# HOST-COMMAND, run by sh on this machine with PATH=/usr/bin:/bin (the real tools), and of
# `podman run -i ... ARGUMENTS...`; stdout and exit status must be the same.
same_as_host() {
  local name=$1 input=$2 command=$3 want_rc=0 got_rc=0
  shift 3
  mkdir -p "$store/home"
  printf '%s' "$input" | env -i PATH=/usr/bin:/bin HOME="$store/home" LC_ALL=C sh -c "$command" \
    >"$store/want" 2>"$store/want.err" || want_rc=$?
  printf '%s' "$input" | timeout -k 10 300 podman run -i "${run_opts[@]}" --env LC_ALL=C "$@" \
    >"$store/got" 2>"$store/err" || got_rc=$?
  if ((want_rc == got_rc)) && cmp -s "$store/want" "$store/got"; then
    pass "$name: same output as the real tool ($(wc -l <"$store/want") lines, exit $want_rc)"
  else
    fail "$name: output or exit status differs from the real tool's (exit $got_rc, expected $want_rc)"
    show_diff "$store/want" "$store/got"
    show_stderr "$store/err"
  fi
}

# Scripts written for GNU Parallel and for xargs, run unchanged. They are POSIX sh, so they run
# in the plain image's BusyBox sh too; the exit statuses echoed are the tools' own.
# shellcheck disable=SC2016 # the scripts are expanded by the shell that runs them
parallel_script='parallel -k echo {} ::: a b c
seq 5 | parallel -k '\''echo {}; echo {#}'\''
parallel -k echo {1}-{2} ::: x y ::: 1 2
printf "%s\n" "two  spaces" "it'\''s" "\$HOME" | parallel -k echo "[{}]"
parallel -k echo {.} {/} {//} ::: dir/a.txt b.tar.gz
parallel "exit {}" ::: 0 1 2
echo "parallel exit status $?"'
# shellcheck disable=SC2016
xargs_script='printf "a b\nc\n" | xargs -n1 echo
seq 10 | xargs -P2 -n3 echo | sort
printf "%s\n" "\"a  b\" c" "'\''d e'\'' f\\ g" | xargs -n1 echo
printf "x\0y z\0" | xargs -0 -I{} echo "<{}>"
true | xargs -r echo never
seq 3 | xargs -n1 sh -c "exit \$0"
echo "xargs exit status $?"
echo a | xargs sh -c "exit 255"
echo "xargs exit status $?"'

# The build context is a clean checkout: the files git tracks (and untracked ones it does not
# ignore), nothing built. The Containerfiles need nothing else: `docker build -t frun .` as typed.
context=$store/context
mkdir -p "$context"
if git -C "$repo" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  git -C "$repo" ls-files -z --cached --others --exclude-standard |
    while IFS= read -r -d '' f; do [[ -e $repo/$f || -L $repo/$f ]] && printf '%s\0' "$f"; done |
    (cd "$repo" && xargs -0 -r cp -a --parents -t "$context")
else
  tar -C "$repo" --exclude=./target --exclude=./dist --exclude=./.git -cf - . | tar -C "$context" -xf -
fi
rustup_home=$(cd "${RUSTUP_HOME:-$HOME/.rustup}" && pwd -P)
rust_bin=$(dirname "$(command -v cargo)")
[[ -x $rust_bin/rustup ]] || die "cargo ($rust_bin) is not rustup's: the build stage mounts rustup's toolchain"
step "the pinned BusyBox userland (packaging/userland.sh)"
bash "$repo/packaging/userland.sh" "$store/userland"
# It refuses a busybox that is not the pinned one: a copy of packaging/ whose pin names another
# SHA-256 for bin/busybox, with the real .deb already in its tool cache (so nothing is fetched).
mkdir -p "$store/tampered/tools/debs"
cp -r "$repo/packaging" "$store/tampered/"
cp "$tools"/debs/*.deb "$store/tampered/tools/debs/"
sed -i "s/^binary_sha256=.*/binary_sha256=$(printf '0%.0s' {1..64})/" "$store/tampered/packaging/busybox.pin"
rc=0
FRUN_TOOLS_DIR=$store/tampered/tools bash "$store/tampered/packaging/userland.sh" \
  "$store/tampered/userland" 2>"$store/err" || rc=$?
if ((rc == 1)) && grep -q 'does not have the pinned SHA-256' "$store/err" &&
  [[ ! -e $store/tampered/userland/busybox ]]; then
  pass "userland.sh: refuses a busybox whose SHA-256 is not the pinned one"
else
  fail "userland.sh: with a wrong pinned SHA-256 it exited $rc: $(head -c 300 "$store/err")"
fi

make_base
base=localhost/debian-minbase:bookworm
podman import --quiet "$base_tar" "$base" >/dev/null
# The build stages fetch crates, PyPI packages and tarballs over HTTPS. Where this machine
# reaches them through a proxy with a certificate authority of its own (in
# /usr/local/share/ca-certificates, and pip told to use the system's bundle in /etc/pip.conf),
# the build stages' base trusts it too: the machine's network, not the Containerfiles'.
rust_base=$base
if compgen -G '/usr/local/share/ca-certificates/*.crt' >/dev/null; then
  trust=$store/trust
  mkdir -p "$trust/certs"
  cp /usr/local/share/ca-certificates/*.crt "$trust/certs/"
  if [[ -f /etc/pip.conf ]]; then cp /etc/pip.conf "$trust/pip.conf"; else : >"$trust/pip.conf"; fi
  printf 'FROM %s\nCOPY certs/ /usr/local/share/ca-certificates/\nCOPY pip.conf /etc/pip.conf\n' \
    "$base" >"$trust/Containerfile"
  buildah build --quiet --isolation chroot --pull=never -t localhost/frun-build-base "$trust" >/dev/null
  rust_base=localhost/frun-build-base
fi

# --- the plain image: FROM scratch, frun and BusyBox ----------------------------------------------
tag=localhost/frun:$version
build_twice Containerfile "$tag"
# A static userland, not a distribution: frun and one BusyBox binary.
if ((image_size < 10 * 1024 * 1024)); then
  pass "Containerfile: image size $image_size bytes, under 10 MiB"
else
  fail "Containerfile: image size $image_size bytes, not under 10 MiB"
fi
labels=$(podman image inspect --format \
  '{{index .Labels "org.opencontainers.image.version"}} {{index .Labels "org.opencontainers.image.revision"}}' "$tag")
if [[ $labels == "$version $revision" ]]; then
  pass "Containerfile: OCI labels version=$version revision=$revision"
else
  fail "Containerfile: OCI labels are '$labels', expected '$version $revision'"
fi
# A user's first try, as README.md types it (the image named just frun); records in any order.
rc=0
seq 3 | podman run -i --rm frun echo >"$store/out" 2>"$store/err" || rc=$?
if ((rc == 0)) && [[ $(tr -s ' ' '\n' <"$store/out" | sort -n) == "$(seq 3)" ]]; then
  pass "Containerfile: seq 3 | podman run -i --rm frun echo prints 1 2 3"
else
  fail "Containerfile: seq 3 | podman run -i --rm frun echo (exit $rc): $(head -c 200 "$store/out") $(head -c 300 "$store/err")"
fi
exercise Containerfile "$tag"
# shellcheck disable=SC2016 # expanded by the shell in the container
expect "Containerfile: frun runs a sh -c line per batch" "$(seq 3 | sed 's/^/line /')" \
  seq 3 -- "$tag" -k sh -c 'for x; do echo "line $x"; done' sh
expect "Containerfile: a shell in the image pipes into frun" "$(seq 5)" \
  --entrypoint /bin/sh "$tag" -c 'seq 5 | frun -k echo | tr " " "\n"'
# What the image SBOM says is in the image is what is in it.
image_cdx=$dist/frun-$version-image.cdx.json
if [[ -f $image_cdx ]]; then
  want=$(python3 - "$image_cdx" <<'PY'
import json, sys
comps = {c["name"]: c for c in json.load(open(sys.argv[1]))["components"]}
print(f"{comps['frun']['hashes'][0]['content']}  /frun")
print(f"{comps['busybox-static']['hashes'][0]['content']}  /bin/busybox")
PY
  )
  expect "Containerfile: /frun and /bin/busybox have the SHA-256s of the image SBOM" "$want" \
    --entrypoint sha256sum "$tag" /frun /bin/busybox
else
  fail "Containerfile: no image SBOM $image_cdx"
fi
links Containerfile "$tag" /frun
like_the_real_tools "Containerfile: a GNU Parallel script in sh" sh "$parallel_script" \
  --entrypoint /bin/sh "$tag" -c
# BusyBox's sh runs its own applets ahead of PATH, so in a `sh -c` line of this image `xargs` is
# BusyBox's; what execs `xargs` through PATH (here the container runtime) gets frun's.
# shellcheck disable=SC2016 # a literal $HOME is part of the input
xargs_input='"a  b" c
'\''d e'\'' f\ g $HOME
'
same_as_host "Containerfile: xargs as the entrypoint (through PATH) parses quotes as GNU xargs does" \
  "$xargs_input" 'xargs -n2 echo' --entrypoint xargs "$tag" -n2 echo
same_as_host "Containerfile: podman run IMAGE parallel ... takes GNU Parallel's command line" \
  "" 'parallel -k echo {} ::: a b c' "$tag" parallel -k echo {} ::: a b c

# The guide's recipe for one's own image: frun copied out of the image into another base.
printf 'FROM %s\nCOPY --from=%s /frun /usr/local/bin/frun\nRUN ln -s frun /usr/local/bin/parallel && ln -s frun /usr/local/bin/xargs\n' \
  "$base" "$tag" >"$store/Containerfile.recipe"
if buildah build --quiet --isolation chroot --pull=never -f "$store/Containerfile.recipe" \
  -t localhost/frun-recipe "$store" >"$store/build.log" 2>&1; then
  expect "COPY --from=frun:$version /frun (docs/guide.md's recipe): frun runs in another base" \
    "$(seq 5)" seq 5 -- localhost/frun-recipe sh -c 'frun -k echo | tr " " "\n"'
else
  fail "COPY --from=frun:$version /frun (docs/guide.md's recipe) did not build: $(tail -n 3 "$store/build.log")"
fi

# --- the bash image -------------------------------------------------------------------------------
if [[ $with_bash == yes ]]; then
  btag=localhost/frun-bash:$version
  build_twice Containerfile.bash "$btag"
  # `bash -c` reads BASH_ENV, so `frun` there is the builtin frun.bash loads.
  exercise Containerfile.bash "$btag" bash -c 'frun "$@"' bash
  # shellcheck disable=SC2016 # expanded by the bash in the container
  got=$(seq 1000 | podman run -i "${run_opts[@]}" "$btag" bash -c \
    'declare -A seen=([1]=one); f() { local x; for x; do printf "%s %s\n" "$x" "${seen[$x]:-}"; done; }
     echo "type=$(type -t frun)"; frun -k f' 2>"$store/err") || true
  want=$(printf 'type=builtin\n'; seq 1000 | sed 's/$/ /; 1s/ $/ one/')
  if [[ $got == "$want" ]]; then
    pass "Containerfile.bash: frun runs a bash function (with an unexported array) in bash -c"
  else
    fail "Containerfile.bash: frun f in bash -c: $(head -c 300 <<<"$got") $(head -c 300 "$store/err")"
  fi
  links Containerfile.bash "$btag" /usr/local/bin/frun
  # Its build stage built frun and frun.bash as build.sh did for dist/, on other paths, in
  # another HOME: the same bytes.
  expect "Containerfile.bash: frun and frun.bash are the bytes of dist/'s" \
    "$(cd "$dist" && sha256sum "$bin_name" frun.bash | awk '{print $1}')" \
    "$btag" bash -c 'sha256sum /usr/local/bin/frun /usr/local/share/frun/frun.bash | cut -d" " -f1'
  like_the_real_tools "Containerfile.bash: a GNU Parallel script in bash" bash "$parallel_script" \
    "$btag" bash -c
  like_the_real_tools "Containerfile.bash: an xargs script in bash" bash "$xargs_script" \
    "$btag" bash -c
else
  fail "Containerfile.bash: dist/frun.bash was not built"
fi

printf '\nimage sizes (bytes): %s\n' "${sizes[*]}"
printf 'image test took %ss\n' "$((SECONDS - started))"
if ((failed)); then
  printf 'image-test.sh: %d check(s) FAILED:\n' "$failed"
  printf '  %s\n' "${failed_names[@]}"
  exit 1
fi
printf 'image-test.sh: all checks passed\n'
