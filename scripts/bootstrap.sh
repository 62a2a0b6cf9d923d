#!/usr/bin/env bash
# Creates (or refreshes) the project's virtual environment in .venv and prints its python.
# Re-installs only when pyproject.toml changed since the last install. Used by run_all.sh,
# run_tests.sh and .ci/run; safe to run by hand.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${SENTEMB_VENV:-$root/.venv}"
stamp="$venv/.sentemb-installed"
want="$(sha256sum "$root/pyproject.toml" | cut -d' ' -f1)"
if [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  echo "$venv/bin/python"; exit 0
fi
{
  echo "[bootstrap] setting up $venv (first run or pyproject.toml changed)"
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --upgrade pip
  # The CPU build of torch 2.13.0 is installed first so that pip does not pull the CUDA wheels
  # for the open range in pyproject.toml (on a GPU machine, install your CUDA build first).
  "$venv/bin/python" -c "import torch" 2>/dev/null || "$venv/bin/python" -m pip install --quiet "torch==2.13.0"
  "$venv/bin/python" -m pip install --quiet -e "$root[dev]"
  "$venv/bin/python" -m ipykernel install --sys-prefix --name python3 >/dev/null
  echo "$want" > "$stamp"
} >&2
echo "$venv/bin/python"
