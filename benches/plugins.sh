#!/usr/bin/env bash
# C plugins (-C SO:FN) against commands: a no-op plugin and an echo plugin over PLUGIN_LINES
# lines, against /bin/true and echo as commands over CMD_LINES lines (process starts make those
# ~20x slower, so they get a smaller input), each the median of RUNS hyperfine runs, as lines/s.
# Each plugin's output is checked before it is timed (echo -k equals the input).
# Writes benches/results/DATE-plugins.md (OUT overrides) with the machine's details.
#   PLUGIN_LINES (100000000)  CMD_LINES (10000000)  RUNS (5)  OUT (results file)
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
cat >"$work/p.c" <<'EOF'
#include <stdio.h>
int noop(int argc, char **argv) { (void)argc; (void)argv; return 0; }
int echo(int argc, char **argv) {
    for (int i = 0; i < argc; i++) { fputs(argv[i], stdout); putchar('\n'); }
    return 0;
}
EOF
cc -O2 -shared -fPIC -o "$work/p.so" "$work/p.c"
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
# row NAME LINES CMD
row() {
  local s
  s=$(median_s "$3")
  rows+=("$(printf '| %s | %s | %.3f | %s |' "$1" "$2" "$s" \
    "$(python3 -c "print(f'{$2 / $s / 1e6:.1f}M')")")")
  printf '%s\n' "${rows[-1]}" >&2
}
row "frun -C noop" "$PLUGIN_LINES" "$frun -C $work/p.so:noop -a $work/big"
row "frun -C echo >/dev/null" "$PLUGIN_LINES" "$frun -C $work/p.so:echo -a $work/big >/dev/null"
row "frun -k -C echo >/dev/null" "$PLUGIN_LINES" "$frun -k -C $work/p.so:echo -a $work/big >/dev/null"
row "frun /bin/true" "$CMD_LINES" "$frun -a $work/small /bin/true"
row "frun echo >/dev/null" "$CMD_LINES" "$frun -a $work/small echo >/dev/null"
row "cat (writing the echo output alone)" "$PLUGIN_LINES" "cat $work/big >/dev/null"

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
  printf '\nforkrun'"'"'s own -C is not in the table: it needs its bash loadables built from its\n'
  printf 'C source and its frun.bash, which this script does not build.\n'
} >"$OUT"
echo "wrote $OUT" >&2
