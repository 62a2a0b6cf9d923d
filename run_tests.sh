#!/usr/bin/env bash
# Runs the test suite (the same command CI runs). Creates .venv on first use.
#   SENTEMB_DATA=../shared/datasets ./run_tests.sh        all tests, mirror-backed ones included
#   ./run_tests.sh -k objectives                          extra arguments go to pytest
# Without SENTEMB_DATA the mirror-backed tests are skipped, each with its reason.
set -euo pipefail
cd "$(dirname "$0")"
py="$(scripts/bootstrap.sh)"
exec "$py" -m pytest "$@"
