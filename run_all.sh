#!/usr/bin/env bash
# Regenerates every paper's tables and figures: trains/evaluates what has no run record yet, then
# executes each paper's notebook with papermill.
#
#   ./run_all.sh                      small profile (default), all papers
#   ./run_all.sh --profile smoke      tiny random BERT evaluated on samples, whole pipeline in ~7 minutes on 2 cores
#                                     from an empty store (benchmarks/bench_smoke_from_empty.py)
#   ./run_all.sh --profile raw        the small profile on the archive's own MLM-only BERT (shared/models/)
#   ./run_all.sh --profile raw-wp8k   the same on the archive's BERT that learnt context (164 M tokens; in progress)
#   ./run_all.sh --profile full       the papers' settings (GPU + network)
#   ./run_all.sh --profile rehearsal  the full profile capped to minutes on CPUs, against HF_ENDPOINT (scripts/rehearse.sh)
#   ./run_all.sh --paper simcse       one paper, or several comma-separated (python -m sentemb papers lists them, in
#                                     the order they run; the overview compares the papers' runs, so it comes last)
#   ./run_all.sh --paper simcse_pp --extended   also the rows kept outside the small profile's budget
#                                     (SimCSE's Table 3 and ablations; SimCSE++'s probes; the non-contrastive
#                                     paper's other Table 1 cells and MTEB; TNCSE's Tables 2, 4-6; DeCLUTR's
#                                     Figures 2, 3, S1; the overview's transfer and MTEB records)
#   ./run_all.sh --jobs 2             2 runs side by side, each with half the torch threads: on 2 cores
#                                     the runs train about a quarter sooner; with fewer threads their
#                                     numbers can differ from the committed records' (made one at a time,
#                                     2 threads) in float rounding; default: the profile's (smoke 2, else 1)
#   ./run_all.sh --profile full --launcher slurm [--partition P --gpus N --cpus N --mem-gb N --time MIN]
#                                     one Slurm job per run (submitit; requeued and resumed when preempted),
#                                     the notebooks once every record is there; --dry-run prints the jobs only
#
# Data: nothing, for the cached run over the committed records. A run that trains reads the training text shipped
# under data/ and downloads the evaluation sets it needs into $SENTEMB_CACHE/data (default ~/.cache/sentemb/data);
# SENTEMB_DATA=<dir> reads an offline copy with the downloads' layout first (CI: ../shared/datasets).
set -euo pipefail
cd "$(dirname "$0")"

usage() { sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; }
profile=small
paper=""  # default: every registered paper (python -m sentemb papers), in the registry's order
no_run=()
extended=()
launch=()
dry_run=0
jobs=""
while [ $# -gt 0 ]; do
  case "$1" in
    --profile) [ $# -ge 2 ] || { echo "error: --profile needs a value (python -m sentemb profiles lists them)" >&2; exit 2; }
               profile="$2"; shift 2 ;;
    --profile=*) profile="${1#*=}"; shift ;;
    --paper) [ $# -ge 2 ] || { echo "error: --paper needs a value (python -m sentemb papers lists them)" >&2; exit 2; }
             paper="$2"; shift 2 ;;
    --paper=*) paper="${1#*=}"; shift ;;
    --no-run) no_run=(--no-run); shift ;;
    --jobs) [ $# -ge 2 ] || { echo "error: --jobs needs a value (a number of runs side by side, e.g. 2)" >&2; exit 2; }
            jobs="$2"; shift 2 ;;
    --jobs=*) jobs="${1#*=}"; shift ;;
    --extended) extended=(--extended); shift ;;
    --launcher|--partition|--gpus|--cpus|--mem-gb|--time)
               [ $# -ge 2 ] || { echo "error: $1 needs a value" >&2; exit 2; }
               launch+=("$1" "$2"); shift 2 ;;
    --dry-run) dry_run=1; launch+=(--dry-run); shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "error: unknown option '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
case "$jobs" in
  "") ;;  # the profile's (sentemb run: smoke 2, else 1; with a launcher the scheduler runs the jobs)
  *[!0-9]*|0) echo "error: --jobs takes a number of runs side by side, 1 or more (got '$jobs')" >&2; exit 2 ;;
esac
run_jobs=()
[ -z "$jobs" ] || run_jobs=(--jobs "$jobs")
if [ -n "${SENTEMB_DATA:-}" ] && [ ! -d "$SENTEMB_DATA" ]; then
  echo "error: SENTEMB_DATA=$SENTEMB_DATA is not a directory (point it at the offline mirror, e.g. ../shared/datasets)" >&2
  exit 2
fi

py="$(scripts/bootstrap.sh)"
profiles="$("$py" -m sentemb profiles)"  # the package's list: no profile is named in this script
if ! grep -qxF -- "$profile" <<< "$profiles"; then
  echo "error: unknown profile '$profile' (choose from: $(paste -sd, - <<< "$profiles" | sed 's/,/, /g'))" >&2
  exit 2
fi
[ -n "$paper" ] || paper="$("$py" -m sentemb papers | paste -sd, -)"
if [ "$dry_run" = 1 ]; then  # the jobs each paper would submit; nothing runs, no notebook
  for one in ${paper//,/ }; do
    "$py" -m sentemb run --paper "$one" --profile "$profile" "${extended[@]}" "${launch[@]}"
  done
  exit 0
fi
start=$(date +%s)
if grep -qxF -- "$profile" <<< "$("$py" -m sentemb profiles --paper-data)" && [ -z "${SENTEMB_DATA:-}" ] \
    && [ ${#no_run[@]} -eq 0 ]; then
  # A profile on the papers' own data (full) reads the real sources; fetch skips what is in the cache and verified.
  "$py" -m sentemb data fetch sts12 sts13 sts14 sts15 sts16 stsb sickr wiki1m_for_simcse nli_for_simcse
fi
# Per paper: its runs first (progress bars in the terminal), then its notebook builds tables and figures from the
# records. Every run and derived analysis is logged (trained, loaded, retrained, not run) for the closing table.
events="$("$py" -c 'from sentemb import settings; print(settings.cache_root())')/run_all/$(date +%Y%m%d-%H%M%S)-$$"
mkdir -p "$events"
for one in ${paper//,/ }; do
  paper_start=$(date +%s)
  export SENTEMB_RUN_EVENTS="$events/$one.jsonl"
  : > "$SENTEMB_RUN_EVENTS"
  if [ ${#no_run[@]} -eq 0 ]; then  # one process: the runs, then the notebook
    "$py" -m sentemb run --paper "$one" --profile "$profile" "${extended[@]}" "${launch[@]}" "${run_jobs[@]}" --notebook
  else
    "$py" -m sentemb notebook --paper "$one" --profile "$profile" "${no_run[@]}" "${extended[@]}"
  fi
  printf '%s\t%s\n' "$one" "$(( $(date +%s) - paper_start ))" >> "$events/walls.tsv"
done
unset SENTEMB_RUN_EVENTS
"$py" -m sentemb site --profile "$profile"
echo
echo "run_all: profile $profile, papers $paper: $(( $(date +%s) - start )) s (run events: $events)"
"$py" -m sentemb summary "$events"
