# Sourced by build.sh and check.sh (which define $repo): whether $repo is a git checkout of its
# own (in_git), and the commit and timestamp every build of it embeds — FRUN_GIT_COMMIT and
# SOURCE_DATE_EPOCH, from git, or fixed values outside git, unless already set. Exports both.
# shellcheck shell=bash
: "${repo:?source-id.sh needs \$repo}"
in_git=no
if command -v git >/dev/null && git -C "$repo" rev-parse --is-inside-work-tree >/dev/null 2>&1 \
  && [[ $(git -C "$repo" rev-parse --show-toplevel) -ef $repo ]]; then
  in_git=yes
fi
if [[ -z ${FRUN_GIT_COMMIT:-} ]]; then
  FRUN_GIT_COMMIT=unknown
  [[ $in_git == yes ]] && FRUN_GIT_COMMIT=$(git -C "$repo" rev-parse --short=12 HEAD)
fi
if [[ -z ${SOURCE_DATE_EPOCH:-} ]]; then
  SOURCE_DATE_EPOCH=1700000000
  [[ $in_git == yes ]] && SOURCE_DATE_EPOCH=$(git -C "$repo" log -1 --format=%ct)
fi
export FRUN_GIT_COMMIT SOURCE_DATE_EPOCH
