#!/usr/bin/env bash
# The full profile rehearsed on this machine against a stand-in Hugging Face hub on 127.0.0.1 (issue 67): tiny
# models under the papers' pinned ids and commits, SimCSE's files, senteval.tar (from the offline mirror) and
# OpenWebText's Parquet conversion, served by sentemb.rehearsal.hub; then ./run_all.sh --profile rehearsal with no
# mirror, so that every download, pin and loader of the full profile runs as on a researcher's machine.
#   scripts/rehearse.sh                      every paper, through notebooks and site
#   scripts/rehearse.sh --paper simcse       run_all.sh's options pass through
#   scripts/rehearse.sh --torchrun ...       then one run again as torchrun --nproc-per-node 2 (gloo ranks): SimCSE's
#                                            supervised row into a results folder of its own, so that it trains
# Needs SENTEMB_DATA to build the stand-in's senteval.tar. Everything it writes (hub, caches, records, tables,
# notebooks) goes to $SENTEMB_REHEARSAL_DIR (default: a new temporary folder), never into the repository.
set -euo pipefail
cd "$(dirname "$0")/.."
torchrun=0
if [ "${1:-}" = "--torchrun" ]; then torchrun=1; shift; fi
py="$(scripts/bootstrap.sh)"
work="${SENTEMB_REHEARSAL_DIR:-$(mktemp -d -t sentemb-rehearsal.XXXXXX)}"
mkdir -p "$work"
if [ ! -f "$work/hub/stand_in.json" ]; then
  "$py" -m sentemb.rehearsal.stand_in "$work/hub"
fi
"$py" -m sentemb.rehearsal.hub --root "$work/hub" --port 0 > "$work/hub.url" 2> "$work/hub.log" &
hub=$!
trap 'kill "$hub" 2>/dev/null || true' EXIT
for _ in $(seq 100); do [ -s "$work/hub.url" ] && break; sleep 0.1; done
[ -s "$work/hub.url" ] || { echo "error: the stand-in hub did not start (see $work/hub.log)" >&2; exit 1; }
HF_ENDPOINT="$(head -n 1 "$work/hub.url")"
export HF_ENDPOINT HF_HOME="$work/hf" SENTEMB_CACHE="$work/cache" SENTEMB_RESULTS="$work/results"
export SENTEMB_FIGURES="$work/figures" SENTEMB_NOTEBOOKS="$work/notebooks" SENTEMB_SITE="$work/site"
export SENTEMB_REHEARSAL_HASHES="$work/hub/expected_sha256.json"  # the stand-in's generated training files
unset HF_HUB_OFFLINE TRANSFORMERS_OFFLINE HF_DATASETS_OFFLINE SENTEMB_DATA SENTEMB_NO_DOWNLOAD
echo "[rehearse] stand-in hub $HF_ENDPOINT; outputs in $work"
./run_all.sh --profile rehearsal "$@"
if [ "$torchrun" = 1 ]; then
  echo "[rehearse] torchrun --nproc-per-node 2: simcse sup (gloo), records in $work/ddp-results"
  SENTEMB_RESULTS="$work/ddp-results" OMP_NUM_THREADS=1 "$(dirname "$py")/torchrun" --nproc-per-node 2 \
    -m sentemb run --paper simcse --profile rehearsal --only sup
  "$py" - "$work/ddp-results/runs/rehearsal" <<'PY'  # the ranks wrote one record, which says it ran on 2 processes
import json, pathlib, sys
records = [json.loads(p.read_text()) for p in pathlib.Path(sys.argv[1]).glob("*.json")]
assert len(records) == 1 and records[0]["provenance"]["processes"] == 2, "torchrun's record is missing or not 2 ranks"
print(f"[rehearse] torchrun: record {records[0]['run_id']} on 2 processes")
PY
fi
