# Sourced by the packaging scripts: sets $tools, the cache of pinned build tools (FRUN_TOOLS_DIR,
# default ${XDG_CACHE_HOME:-~/.cache}/frun-packaging), creating it and making the path absolute,
# and defines python_tool (the scripts define `step`, which it calls).
# shellcheck shell=bash
tools=${FRUN_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/frun-packaging}
mkdir -p "$tools"
tools=$(cd "$tools" && pwd -P)

# python_tool REQUIREMENT...: pip install into the tool cache's virtualenv, unless that exact
# requirement was installed there before (recorded in the venv's .installed).
python_tool() {
  local venv=$tools/venv req missing=()
  [[ -x $venv/bin/python ]] || python3 -m venv "$venv"
  for req in "$@"; do
    grep -qxF -- "$req" "$venv/.installed" 2>/dev/null || missing+=("$req")
  done
  ((${#missing[@]})) || return 0
  step "installing ${missing[*]} into the tool cache"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${missing[@]}"
  printf '%s\n' "${missing[@]}" >>"$venv/.installed"
}
