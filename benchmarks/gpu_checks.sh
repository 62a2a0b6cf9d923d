#!/usr/bin/env bash
# The CUDA paths that CPUs (and CI) cannot test, for a GPU machine; no network and no data mirror needed (the smoke
# profile's tiny random BERT on generated rows, with all-MiniLM-L6-v2's tokenizer):
#   - every objective's loss and gradient under fp16 autocast against fp32 (tests/test_full_precision.py, cuda-fp16);
#   - fp16 training with the gradient scaler, recorded, close to fp32 (tests/test_runs.py);
#   - exact resume with the CUDA RNG state (tests/test_runs.py::test_resume_on_cuda);
#   - the speed of a SimCSE training step on the GPU, fp32 against fp16 autocast (tiny BERT: overheads, not FLOPs).
# Run from the repository root with a Python that has torch (CUDA) and transformers:  benchmarks/gpu_checks.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export HF_HUB_OFFLINE=1 PYTHONPATH="shared:.${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
nvidia-smi -L
python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__, torch.cuda.get_device_name())"
python3 -m pytest -q -p no:cacheprovider -rs tests/test_full_precision.py tests/test_runs.py -k cuda --durations=5
python3 - <<'PY'
import random, time
import torch
from sentemb.models.encoder import SentenceEncoder
from sentemb.objectives import registry
from sentemb import precision as amp

device = torch.device("cuda")
rows = [f"sentence number {i} about a topic of its own" for i in range(64)]
for name in ("fp32", "fp16"):
    encoder = SentenceEncoder.from_name("tiny-random-bert", "cls_before_pooler", seed=0).to(device)
    objective = registry.build_objective("simcse_unsup", {}, [encoder], max_len=32).to(device)
    optimizer = torch.optim.AdamW(objective.parameters(), lr=1e-4)
    scaler = amp.grad_scaler(name, device)
    times = []
    for step in range(30):
        torch.cuda.synchronize(); tick = time.perf_counter()
        with amp.autocast(name, device):
            loss = objective(rows, random.Random(step))
        (scaler.scale(loss) if scaler else loss).backward()
        (scaler.step(optimizer) if scaler else optimizer.step())
        if scaler: scaler.update()
        optimizer.zero_grad(set_to_none=True)
        torch.cuda.synchronize(); times.append(time.perf_counter() - tick)
    print(f"simcse_unsup step, batch 64, tiny BERT, {name}: median {1000 * sorted(times[5:])[12]:.1f} ms, loss {loss.item():.4f}")
PY
