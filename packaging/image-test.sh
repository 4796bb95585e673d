#!/usr/bin/env bash
# Builds the container images from dist/ with buildah and tests them with podman, without a
# registry, a daemon or systemd: vfs storage under a temporary directory (or FRUN_IMAGE_STORE),
# chroot isolation, runc with cgroupfs (packaging/containers.conf).
#   Containerfile       FROM scratch + the static binary: built twice (the image id must not
#                       change), then `-k echo` over 1000 lines and `--bogus` (exit 2) are run;
#                       the image has no echo, so a static busybox is mounted as /bin/echo.
#   Containerfile.bash  Debian minbase + frun.bash: the same tests through bash, and a bash
#                       function run by the builtin in `bash -c`.
# Installs buildah, podman and runc (and debootstrap for the bash image) with apt when missing.
# Builds dist/ with packaging/build.sh first if the binary is not there.
#
# usage: packaging/image-test.sh [--dist DIR]
set -euo pipefail
shopt -s inherit_errexit

die() { printf 'image-test.sh: error: %s\n' "$*" >&2; exit 1; }
step() { printf '==> %s\n' "$*" >&2; }

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
dist=$repo/dist
while (($#)); do
  case $1 in
    --dist) (($# >= 2)) || die "--dist needs a directory"; dist=$2; shift 2 ;;
    -h | --help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) die "unknown argument: $1" ;;
  esac
done
started=$SECONDS
export LC_ALL=C TZ=UTC
# shellcheck source=packaging/tools-dir.sh
source "$repo/packaging/tools-dir.sh"

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
with_bash=no
if [[ -f $dist/frun.bash ]]; then
  with_bash=yes
  command -v debootstrap >/dev/null || need_pkgs+=(debootstrap)
fi
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
pass() { printf 'PASS  %s\n' "$*"; }
fail() { printf 'FAIL  %s\n' "$*"; failed=$((failed + 1)); }

# build FILE TAG: build one image with buildah from the repository root; prints the image id.
build() {
  local file=$1 tag=$2
  buildah build --quiet --isolation chroot --timestamp 0 --pull=never --no-cache \
    --build-arg "VERSION=$version" --build-arg "REVISION=$revision" \
    --iidfile "$store/iid" -f "$repo/$file" -t "$tag" "$context" >/dev/null
  cat "$store/iid"
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

# The build context holds only what the Containerfiles copy (dist/...), whatever else the
# repository holds and wherever --dist points.
context=$store/context
mkdir -p "$context/dist"
cp "$dist/$bin_name" "$context/dist/"
[[ $with_bash == no ]] || cp "$dist/frun.bash" "$context/dist/"

# --- the FROM scratch image -----------------------------------------------------------------------
tag=localhost/frun:$version
step "building $tag (twice)"
id1=$(build Containerfile "$tag")
buildah rmi --force "$tag" >/dev/null
id2=$(build Containerfile "$tag")
if [[ $id1 == "$id2" ]]; then
  pass "Containerfile: two builds give the same image id ${id1:0:19}"
else
  fail "Containerfile: two builds gave different image ids ($id1, $id2)"
fi
labels=$(podman image inspect --format \
  '{{index .Labels "org.opencontainers.image.version"}} {{index .Labels "org.opencontainers.image.revision"}}' "$tag")
if [[ $labels == "$version $revision" ]]; then
  pass "Containerfile: OCI labels version=$version revision=$revision"
else
  fail "Containerfile: OCI labels are '$labels', expected '$version $revision'"
fi
# The image holds nothing but frun, so there is no echo to run in it: the test lends it a static
# one (busybox from Debian's busybox-static, unpacked, not installed), mounted read-only.
busybox=$tools/busybox-static/bin/busybox
if [[ ! -x $busybox ]]; then
  step "fetching busybox-static (a static echo for the test)"
  rm -rf "$store/deb" && mkdir -p "$store/deb"
  (cd "$store/deb" && apt-get download busybox-static >/dev/null 2>&1) || {
    apt-get update -qq && (cd "$store/deb" && apt-get download busybox-static >/dev/null)
  }
  dpkg-deb -x "$store"/deb/busybox-static_*.deb "$tools/busybox-static"
fi
exercise Containerfile "$tag" -v "$busybox:/bin/echo:ro" --

# --- the bash image -------------------------------------------------------------------------------
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

if [[ $with_bash == yes ]]; then
  base_tar=$tools/debian-minbase-bookworm.tar
  if [[ ! -s $base_tar ]]; then
    mirror=$(debian_mirror) || true
    [[ -n $mirror ]] || die "no Debian mirror found in apt's sources; set FRUN_DEBIAN_MIRROR"
    step "debootstrap --variant=minbase bookworm (cached in $base_tar)"
    rootfs=$store/rootfs
    if ! debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >"$store/log" 2>&1; then
      tail -n 5 "$store/log" >&2
      die "debootstrap failed"
    fi
    rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
    tar -C "$rootfs" --sort=name --numeric-owner -cf "$base_tar.tmp" .
    mv "$base_tar.tmp" "$base_tar"
    rm -rf "$rootfs"
  fi
  base=localhost/debian-minbase:bookworm
  podman import --quiet "$base_tar" "$base" >/dev/null
  btag=localhost/frun-bash:$version
  step "building $btag (twice)"
  bid1=$(build Containerfile.bash "$btag")
  buildah rmi --force "$btag" >/dev/null
  bid2=$(build Containerfile.bash "$btag")
  if [[ $bid1 == "$bid2" ]]; then
    pass "Containerfile.bash: two builds give the same image id ${bid1:0:19}"
  else
    fail "Containerfile.bash: two builds gave different image ids ($bid1, $bid2)"
  fi
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
else
  fail "Containerfile.bash: dist/frun.bash was not built"
fi

printf '\nimage test took %ss\n' "$((SECONDS - started))"
if ((failed)); then
  printf 'image-test.sh: %d check(s) FAILED\n' "$failed"
  exit 1
fi
printf 'image-test.sh: all checks passed\n'
