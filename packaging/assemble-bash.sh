#!/usr/bin/env bash
# Assembles frun.bash: the template with @VERSION@ and @COMMIT@ filled in, then one payload
# section per builtin blob: "#@blob FLOOR SHA256 SIZE", its base64 lines, "#@end".
# Usage: assemble-bash.sh TEMPLATE VERSION COMMIT OUT FLOOR=BLOB...
set -euo pipefail
(($# >= 5)) || { echo "usage: $0 TEMPLATE VERSION COMMIT OUT FLOOR=BLOB..." >&2; exit 2; }
template=$1 version=$2 commit=$3 out=$4
shift 4
{
  sed -e "s/@VERSION@/$version/g" -e "s/@COMMIT@/$commit/g" "$template"
  for pair in "$@"; do
    floor=${pair%%=*} blob=${pair#*=}
    printf '#@blob %s %s %s\n' "$floor" "$(sha256sum <"$blob" | cut -d' ' -f1)" "$(stat -c %s "$blob")"
    base64 -w 76 "$blob"
    printf '#@end\n'
  done
} >"$out.tmp"
mv -f -- "$out.tmp" "$out"
