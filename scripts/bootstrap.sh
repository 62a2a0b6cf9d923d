#!/usr/bin/env bash
# Creates (or refreshes) the project's virtual environment in .venv and prints its python.
# Installs the exact versions in requirements.lock (torch 2.13.0 first, then the lock and the project itself);
# re-installs only when pyproject.toml or requirements.lock changed since the last install. Used by run_all.sh,
# run_tests.sh and .ci/run; safe to run by hand.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${SENTEMB_VENV:-$root/.venv}"
stamp="$venv/.sentemb-installed"
want="$(cat "$root/pyproject.toml" "$root/requirements.lock" | sha256sum | cut -d' ' -f1)"
if [ -x "$venv/bin/python" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  echo "$venv/bin/python"; exit 0
fi
{
  echo "[bootstrap] setting up $venv (first run, or pyproject.toml or requirements.lock changed)"
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv"
  py="$venv/bin/python"
  "$py" -m pip install --quiet --upgrade pip
  # The CPU build of torch 2.13.0 is installed first so that neither installer pulls the CUDA wheels
  # (on a GPU machine, install your CUDA build of 2.13.0 first). requirements.lock pins everything else.
  "$py" -c "import torch" 2>/dev/null || "$py" -m pip install --quiet "torch==2.13.0"
  # The rest through uv when it can be installed: it downloads in parallel (about 10 s here against pip's 45 s on a
  # cold cache); both install the lock's versions. uv does not read pip's configuration, so pip's configured
  # constraint file (if any) is passed on. pip does it when uv is unavailable or fails.
  constraint="$("$py" -m pip config get global.constraint 2>/dev/null || true)"
  uv_args=(--python "$py" --quiet --compile-bytecode)  # as pip does: the first imports of a fresh clone compile nothing
  [ -n "$constraint" ] && [ -f "$constraint" ] && uv_args+=(--constraint "$constraint")
  if ! { "$py" -m pip install --quiet "uv==0.13.9" && "$py" -m uv pip install "${uv_args[@]}" -r "$root/requirements.lock" -e "$root[dev]"; }; then
    echo "[bootstrap] uv unavailable or failed; installing with pip"
    "$py" -m pip install --quiet -r "$root/requirements.lock" -e "$root[dev]"
  fi
  "$py" -m ipykernel install --sys-prefix --name python3 >/dev/null
  echo "$want" > "$stamp"
} >&2
echo "$venv/bin/python"
