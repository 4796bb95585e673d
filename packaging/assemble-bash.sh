#!/usr/bin/env bash
# Assembles frun.bash: the template with @VERSION@, @COMMIT@ and @BLOBS@ (the list of builtins,
# FLOOR:SHA256:SIZE each) filled in, then one payload section per builtin blob: "#@blob FLOOR
# SHA256 SIZE", its base64 lines, "#@end"; last a line "#@eof". The list and the last line let
# `frun.bash --diagnose` tell a truncated file, also one cut between two sections.
# Usage: assemble-bash.sh TEMPLATE VERSION COMMIT OUT FLOOR=BLOB...
set -euo pipefail
(($# >= 5)) || { echo "usage: $0 TEMPLATE VERSION COMMIT OUT FLOOR=BLOB..." >&2; exit 2; }
template=$1 version=$2 commit=$3 out=$4
shift 4
headers=() manifest=()
for pair in "$@"; do
  floor=${pair%%=*} blob=${pair#*=}
  sum=$(sha256sum <"$blob" | cut -d' ' -f1) size=$(stat -c %s "$blob")
  headers+=("$floor $sum $size")
  manifest+=("$floor:$sum:$size")
done
{
  sed -e "s/@VERSION@/$version/g" -e "s/@COMMIT@/$commit/g" -e "s/@BLOBS@/${manifest[*]}/g" \
    "$template"
  i=0
  for pair in "$@"; do
    printf '#@blob %s\n' "${headers[i]}"
    base64 -w 76 "${pair#*=}"
    printf '#@end\n'
    i=$((i + 1))
  done
  printf '#@eof\n'
} >"$out.tmp"
mv -f -- "$out.tmp" "$out"
