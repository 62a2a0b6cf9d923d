#!/usr/bin/env bash
# Runs the test suite (the same command CI runs). Creates .venv on first use.
#   ./run_tests.sh                                        all tests (mirror-backed ones skip, each with its reason)
#   SENTEMB_DATA=../shared/datasets ./run_tests.sh        with the offline mirror: the mirror-backed ones too (CI)
#   ./run_tests.sh -k objectives                          extra arguments go to pytest
# Two pytest-xdist workers (one torch thread each, tests/conftest.py) share the tests: on 2 cores the suite takes
# ~3.6 min instead of ~6.5 min in one process. SENTEMB_TEST_WORKERS=0 runs them in this process (pdb, -x, -s).
set -euo pipefail
cd "$(dirname "$0")"
py="$(scripts/bootstrap.sh)"
workers="${SENTEMB_TEST_WORKERS:-2}"
if [ "$workers" = "0" ]; then
  exec "$py" -m pytest "$@"
fi
exec "$py" -m pytest -n "$workers" --dist worksteal "$@"
