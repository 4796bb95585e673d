#!/usr/bin/env bash
# The Python module's tests: builds the extension into a fresh virtual environment (maturin,
# pytest and hypothesis come from PyPI) and runs the pytest suite (python/tests/).
# FRUN_PY_VENV=DIR reuses (or makes) the environment in DIR instead of a temporary one.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${FRUN_PY_VENV:-}
if [[ -z "$venv" ]]; then
  venv=$(mktemp -d)
  trap 'rm -rf "$venv"' EXIT
fi
[[ -x "$venv/bin/python" ]] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check 'maturin>=1.5,<2' pytest hypothesis
# maturin builds the crate in python/ into the workspace's target/, beside the frun library the
# other builds use (CARGO_TARGET_DIR, when set, is honoured).
VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" maturin develop --release --quiet
cd tests
"$venv/bin/python" -m pytest -q -c ../pytest.ini --rootdir .. "$@"
