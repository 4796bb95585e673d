# Sourced by the packaging scripts: sets $tools, the cache of pinned build tools (FRUN_TOOLS_DIR,
# default ${XDG_CACHE_HOME:-~/.cache}/frun-packaging), creating it and making the path absolute.
# shellcheck shell=bash
tools=${FRUN_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/frun-packaging}
mkdir -p "$tools"
tools=$(cd "$tools" && pwd -P)
