#!/usr/bin/env bash
# C plugins (-C SO:FN) against commands: a no-op plugin and an echo plugin over PLUGIN_LINES
# lines, against /bin/true and echo as commands over CMD_LINES lines (process starts make those
# ~20x slower, so they get a smaller input), each the median of RUNS hyperfine runs, as lines/s.
# Each plugin's output is checked before it is timed (echo -k equals the input).
# Writes benches/results/DATE-plugins.md (OUT overrides) with the machine's details.
#   PLUGIN_LINES (100000000)  CMD_LINES (10000000)  RUNS (5)  OUT (results file)
#   FORKRUN_SRC (unset)  a forkrun checkout: adds rows for forkrun's own -C running the same
#     plugins on the same input. Its ring loadable is built from DIR/forkrun_ring.c against the
#     bash loadable headers (Debian: bash-builtins) and embedded into a copy of DIR/frun.bash by
#     DIR/ring_loadables/update_frun_base64.bash, as forkrun's release build does. forkrun is a
#     bash function: each row is timed inside one bash that sourced frun.bash once (its load,
#     ~0.5 s, is not in the row), as the median of RUNS runs after one warm-up. Without
#     FORKRUN_SRC, or when any step fails, one line says why its rows are skipped.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
repo=$(dirname "$here")
PLUGIN_LINES=${PLUGIN_LINES:-100000000}
CMD_LINES=${CMD_LINES:-10000000}
RUNS=${RUNS:-5}
OUT=${OUT:-$here/results/$(date -u +%Y-%m-%d)-plugins.md}
command -v hyperfine >/dev/null || { echo "plugins.sh: hyperfine is needed" >&2; exit 1; }

cargo build --quiet --release --features hwloc --manifest-path "$repo/Cargo.toml"
frun=$repo/target/release/frun
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# (Not p.c: forkrun's -C recompiles a plugin whose .c beside it is newer than the .so.)
cat >"$work/plugins.c" <<'EOF'
#include <stdio.h>
int noop(int argc, char **argv) { (void)argc; (void)argv; return 0; }
int echo(int argc, char **argv) {
    for (int i = 0; i < argc; i++) { fputs(argv[i], stdout); putchar('\n'); }
    return 0;
}
EOF
cc -O2 -shared -fPIC -o "$work/p.so" "$work/plugins.c"
seq "$PLUGIN_LINES" >"$work/big"
seq "$CMD_LINES" >"$work/small"

# The echo plugin's ordered output is the input, byte for byte.
# shellcheck disable=SC2094 # both only read the file
"$frun" -k -C "$work/p.so:echo" <"$work/big" | cmp -s - "$work/big" ||
  { echo "plugins.sh: the echo plugin's -k output differs from its input" >&2; exit 1; }

# median_s CMD: the median wall time of CMD (seconds), from hyperfine's JSON.
median_s() {
  hyperfine --style none --runs "$RUNS" --warmup 1 --export-json "$work/h.json" "$1" >/dev/null
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["results"][0]["median"])' "$work/h.json"
}
rows=()
# add_row NAME LINES SECONDS
add_row() {
  rows+=("$(printf '| %s | %s | %.3f | %s |' "$1" "$2" "$3" \
    "$(python3 -c "print(f'{$2 / $3 / 1e6:.1f}M')")")")
  printf '%s\n' "${rows[-1]}" >&2
}
# row NAME LINES CMD
row() {
  add_row "$1" "$2" "$(median_s "$3")"
}

# forkrun's -C, when FORKRUN_SRC names a checkout it can be built from: forkrun_bash is then the
# frun.bash to source, else forkrun_note says why not.
forkrun_bash='' forkrun_note=''
build_forkrun() {
  local src=${FORKRUN_SRC%/} dir=$work/forkrun arch name
  if [[ -z $src ]]; then
    forkrun_note="FORKRUN_SRC is not set (a forkrun checkout)"
    return
  fi
  for name in frun.bash forkrun_ring.c ring_loadables/update_frun_base64.bash; do
    [[ -f $src/$name ]] || { forkrun_note="$src has no $name"; return; }
  done
  [[ -f /usr/include/bash/builtins.h ]] ||
    { forkrun_note="no bash loadable headers in /usr/include/bash (Debian: bash-builtins)"; return; }
  mkdir -p "$dir/libs"
  # The loadable under the names forkrun's loader picks from for this machine.
  arch=$(uname -m)
  local names=("forkrun_ring.$arch.so")
  [[ $arch != x86_64 ]] || names=(forkrun_ring.x86-64-v2.so forkrun_ring.x86-64-v3.so forkrun_ring.x86-64-v4.so)
  if ! cc -O3 -march=native -fPIC -shared -DNDEBUG -DSHELL -DHAVE_CONFIG_H \
    -I/usr/include/bash -I/usr/include/bash/include -I/usr/include/bash/builtins \
    -o "$dir/libs/${names[0]}" "$src/forkrun_ring.c" -ldl >"$dir/cc.log" 2>&1; then
    forkrun_note="forkrun_ring.c did not build: $(grep -m 1 'error' "$dir/cc.log" || tail -n 1 "$dir/cc.log")"
    return
  fi
  for name in "${names[@]:1}"; do cp "$dir/libs/${names[0]}" "$dir/libs/$name"; done
  cp "$src/frun.bash" "$dir/frun.bash"
  # Its scripts are written for bash's defaults, not for this script's -euo pipefail.
  # shellcheck disable=SC1091 # forkrun's own script, from the checkout
  if ! (set +euo pipefail && cd "$dir/libs" && source "$src/ring_loadables/update_frun_base64.bash" &&
    update_frun_base64 "$dir/frun.bash") >"$dir/embed.log" 2>&1; then
    forkrun_note="forkrun's update_frun_base64 failed: $(tail -n 1 "$dir/embed.log")"
    return
  fi
  # Its echo plugin's ordered output is the input too.
  # shellcheck disable=SC2016 # expanded by the bash that sourced frun.bash
  if ! bash --norc --noprofile -c '. "$1" >/dev/null 2>&1 && frun -k -C "$2:echo" <"$3" 2>/dev/null' \
    bash "$dir/frun.bash" "$work/p.so" "$work/big" | cmp -s - "$work/big"; then
    forkrun_note="forkrun's frun -k -C p.so:echo (built from $src) did not give its input back"
    return
  fi
  forkrun_bash=$dir/frun.bash
}

# forkrun_s CMD: the median wall time (seconds) of CMD, run RUNS times after one warm-up in one
# bash that sourced forkrun's frun.bash.
forkrun_s() {
  # shellcheck disable=SC2016 # expanded by that bash
  LC_ALL=C bash --norc --noprofile -c '
    . "$1" >/dev/null 2>&1 || exit 1
    for ((i = 0; i <= $3; i++)); do
      t0=$EPOCHREALTIME
      eval "$2" || exit 1
      t1=$EPOCHREALTIME
      ((i == 0)) || echo "$t0 $t1"
    done' bash "$forkrun_bash" "$1" "$RUNS" |
    python3 -c 'import statistics, sys
print(statistics.median(float(b) - float(a) for a, b in (l.split() for l in sys.stdin)))'
}
row "frun -C noop" "$PLUGIN_LINES" "$frun -C $work/p.so:noop -a $work/big"
row "frun -C echo >/dev/null" "$PLUGIN_LINES" "$frun -C $work/p.so:echo -a $work/big >/dev/null"
row "frun -k -C echo >/dev/null" "$PLUGIN_LINES" "$frun -k -C $work/p.so:echo -a $work/big >/dev/null"
row "frun /bin/true" "$CMD_LINES" "$frun -a $work/small /bin/true"
row "frun echo >/dev/null" "$CMD_LINES" "$frun -a $work/small echo >/dev/null"
row "cat (writing the echo output alone)" "$PLUGIN_LINES" "cat $work/big >/dev/null"
build_forkrun
if [[ -n $forkrun_bash ]]; then
  add_row "forkrun -C noop" "$PLUGIN_LINES" "$(forkrun_s "frun -C $work/p.so:noop <$work/big 2>/dev/null")"
  add_row "forkrun -C echo >/dev/null" "$PLUGIN_LINES" \
    "$(forkrun_s "frun -C $work/p.so:echo <$work/big >/dev/null 2>/dev/null")"
  add_row "forkrun -k -C echo >/dev/null" "$PLUGIN_LINES" \
    "$(forkrun_s "frun -k -C $work/p.so:echo <$work/big >/dev/null 2>/dev/null")"
else
  echo "plugins.sh: forkrun's -C rows skipped: $forkrun_note" >&2
fi

{
  printf '# C plugins against commands (%s)\n\n' "$(date -u +%Y-%m-%dT%H:%MZ)"
  printf 'Machine: %s, %s CPUs, kernel %s; load average at the end: %s.\n' \
    "$(lscpu | sed -n 's/^Model name: *//p' | head -n 1)" "$(nproc)" "$(uname -r)" \
    "$(cut -d' ' -f1-3 /proc/loadavg)"
  printf 'The machine is shared with other builds and noisy: compare rows of one run only.\n'
  # shellcheck disable=SC2016 # backquotes are Markdown here
  printf 'Median of %s runs (hyperfine, 1 warm-up); input `seq N` in a file (`-a`).\n\n' "$RUNS"
  printf '| workload | lines | median (s) | lines/s |\n|---|---:|---:|---:|\n'
  printf '%s\n' "${rows[@]}"
  # shellcheck disable=SC2016 # backquotes are Markdown here
  if [[ -n $forkrun_bash ]]; then
    printf '\nforkrun rows: its -C (forkrun %s, commit %s), ring loadable built here from its source;\n' \
      "$(sed -n 's/^VERSION: *//p' "$FORKRUN_SRC/META" 2>/dev/null)" \
      "$(git -C "$FORKRUN_SRC" rev-parse --short HEAD 2>/dev/null || echo unknown)"
    printf 'input on stdin; timed in one bash that sourced its frun.bash once (median of %s\n' "$RUNS"
    printf 'runs after 1 warm-up, `$EPOCHREALTIME`), so its ~0.5 s load is not in them.\n'
  else
    printf '\nforkrun'"'"'s own -C is not in the table: %s.\n' "$forkrun_note"
  fi
} >"$OUT"
echo "wrote $OUT" >&2
