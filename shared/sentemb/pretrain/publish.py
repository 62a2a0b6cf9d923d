"""A finished pretraining run as one of the archive's own backbones: ``shared/models/<name>/``.

The folder holds the run's ``model/`` files (bf16 safetensors, config, tokenizer), its ``record.json``, a
``MANIFEST.json`` (every file's sha256, the pretraining run id) and a ``README.md`` model card generated from the
record (text and sha256s, tokens seen, steps, hardware, wall time, the held-out MLM loss curve, the command that
re-creates it). A name is never reused for other weights: publishing different weights under an existing name is
refused, so a run id that names this backbone always names the same weights.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from sentemb import settings
from sentemb.atomic import atomic_write_text
from sentemb.data.files import sha256_of
from sentemb.errors import ConfigError, SentembError
from sentemb.models.backbone import WEIGHTS, read_manifest

NAME = re.compile(r"sentemb-[a-z0-9][a-z0-9.-]*")


def publish(run_dir: str | Path, name: str, models_root: Path | None = None) -> Path:
    """Copy the finished run in ``run_dir`` to ``<models_root>/<name>`` (default ``shared/models``); the folder.
    Publishing the same weights again changes nothing."""
    if not NAME.fullmatch(name):
        raise ConfigError(f"backbone name {name!r}: use 'sentemb-' and lower-case letters, digits, '.' or '-'")
    run_dir = Path(run_dir)
    record_file = run_dir / "record.json"
    if not record_file.is_file():
        raise SentembError(f"{run_dir} holds no finished pretraining run (no record.json); finish it first")
    record = json.loads(record_file.read_text())
    if sha256_of(run_dir / "model" / WEIGHTS) != record["weights_sha256"]:
        raise SentembError(f"{run_dir / 'model' / WEIGHTS} is not the weights its record.json names (sha256 differs)")
    target = (models_root or settings.models_root()) / name
    if target.exists():
        manifest = read_manifest(target)
        if manifest.get("weights_sha256") == record["weights_sha256"]:
            return target
        raise SentembError(
            f"{target} already holds other weights; a backbone's name is never reused.\n"
            "  Fix: publish under a new name (and point the profile at it)."
        )
    staging = target.with_name(f".{name}.partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    for path in sorted((run_dir / "model").iterdir()):
        shutil.copy2(path, staging / path.name)
    shutil.copy2(record_file, staging / "record.json")
    (staging / "README.md").write_text(model_card(name, record))
    files = {p.name: sha256_of(p) for p in sorted(staging.iterdir())}
    manifest = {
        "name": name,
        "weights_sha256": record["weights_sha256"],
        "pretraining_run_id": record["run_id"],
        "files": files,
    }
    atomic_write_text(staging / "MANIFEST.json", json.dumps(manifest, indent=1) + "\n")
    staging.rename(target)
    return target


def _curve_rows(record: dict) -> list[str]:
    train = dict((step, loss) for step, loss in record["train_loss"])
    rows = []
    for step, loss in record["heldout_loss"]:
        mark = " (kept)" if step == record["kept"]["step"] else ""
        trained = f"{train[step]:.3f}" if step in train else ""
        rows.append(f"| {step}{mark} | {trained} | {loss:.3f} |")
    return rows


def _vocabulary_line(config: dict, tokenizer: dict) -> str:
    vocab = config.get("vocab", "bert-uncased")
    if vocab == "bert-uncased":
        return (
            "- Vocabulary: all-MiniLM-L6-v2's uncased BERT WordPiece (sha256 of the vocabulary "
            f"`{tokenizer['vocabulary_sha256']}`)."
        )
    return (
        f"- Vocabulary: `{vocab}`, {tokenizer['size']:,} WordPiece tokens trained by the `tokenizers` library on the "
        "pretraining text below alone (BERT's uncased normaliser and pre-tokeniser; "
        "`python -m sentemb pretrain-vocab`, the file committed as `shared/sentemb/pretrain/vocabularies/"
        f"{vocab}.json`, sha256 `{tokenizer['file_sha256']}`); `tokenizer.json` here is that vocabulary."
    )


def _schedule_words(config: dict, record: dict) -> str:
    if config.get("schedule", "linear") == "linear":
        return f"{config['warmup']} warm-up steps then linear decay to 0"
    schedule = record["schedule"]
    return (
        f"{config['warmup']} warm-up steps, constant to step {schedule['decay_start']:,}, then linear decay to 0 at "
        f"step {schedule['total']:,}"
    )


def _branch_line(record: dict) -> list[str]:
    branched = record.get("branched_from")
    if not branched:
        return []
    return [
        f"- A milestone: steps 1 to {branched['step']:,} are those of the long run `{branched['run_id']}` (the same "
        "settings, a longer budget); this run decayed a copy of its state from there."
    ]


def _hardware_line(record: dict) -> str:
    """The device, the wall time over every process (with the torch threads, CPU-hours on a CPU), the versions and
    the commit of each process that ran a part of the steps."""
    prov, minutes = record["provenance"], record["wall_seconds"] / 60
    threads = prov.get("torch_threads")
    cost = f"; {threads} torch threads, {minutes * threads / 60:.2f} CPU-hours" if threads else ""
    processes = prov.get("processes") or []
    if len(processes) > 1:
        commits = ", ".join(f"`{p['commit'][:7]}` from step {p['from_step']:,}" for p in processes)
    else:
        commits = f"`{prov.get('commit')}`"
    return (
        f"- Hardware: {prov['device']}; wall time {minutes:.1f} min over every process{cost}; torch "
        f"{prov['packages'].get('torch')}, transformers {prov['packages'].get('transformers')}; commit {commits}."
    )


def model_card(name: str, record: dict) -> str:
    """The model card: every number from the pretraining record."""
    config, model, prov = record["config"], record["model"], record["provenance"]
    counts, text = record["counts"], record["text"]
    text_rows = []
    for path, sha in text["training"].items():
        kept, dropped = counts["files"][path]["units"], counts["files"][path]["dropped_overlapping_heldout"]
        text_rows.append(f"| `{path}` | training | {kept:,} | {dropped} | `{sha}` |")
    text_rows += [f"| `{p}` | held-out loss, decontamination | | | `{s}` |" for p, s in text["heldout"].items()]
    others = {p: s for p, s in text["decontaminated_against"].items() if p not in text["heldout"]}
    text_rows += [f"| `{p}` | decontamination only | | | `{s}` |" for p, s in others.items()]
    bert = model["bert"]
    return "\n".join(
        [
            f"# {name}",
            "",
            "A BERT-style encoder pretrained by this archive with masked language modelling only, on the data "
            "mirror's training text (no evaluation text). It has never seen a sentence-embedding objective: it "
            "plays the part of the papers' raw BERT, at a far smaller scale (weak as a language model).",
            "Generated from `record.json` by `python -m sentemb pretrain --publish`; do not edit.",
            "",
            "## Model",
            f"- {bert['num_hidden_layers']} layers x {bert['hidden_size']} hidden, {bert['num_attention_heads']} "
            f"heads, {bert['intermediate_size']} intermediate, {bert['max_position_embeddings']} positions; "
            f"{model['parameters']:,} parameters, weights in bf16 ({model['bf16_mb']} MB), `model.safetensors` "
            f"sha256 `{record['weights_sha256']}`.",
            _vocabulary_line(config, record["tokenizer"]),
            "- Heads: the MLM head (`cls.predictions`, decoder tied to the word embeddings) is the trained one. The "
            "pooler (`bert.pooler`) is not trained (no next-sentence prediction): it is BERT's initialisation drawn "
            f"from seed {config['seed']}.",
            "",
            "## Pretraining",
            f"- {record['steps']:,} steps of {config['batch_size']} sequences of {config['max_len']} tokens: "
            f"{record['tokens_seen']:,} tokens, {record['epochs']:.1f} passes over {counts['train_tokens']:,} "
            "training tokens.",
            f"- AdamW (beta2 {config.get('adam_beta2', 0.999):g}), peak learning rate {config['lr']:g}, "
            f"{_schedule_words(config, record)}, weight decay {config['weight_decay']:g}, gradient clipping at 1, "
            f"seed {config['seed']}; {config.get('mask_rate', 0.15) * 100:g} % masking (80/10/10), loss on the "
            f"masked positions only; dropout {config['dropout']:g} while pretraining.",
            *_branch_line(record),
            f"- Kept weights: step {record['kept']['step']:,}, {record['kept']['rule']} "
            f"({record['kept']['heldout_loss']:.3f} nats a masked token).",
            _hardware_line(record),
            "",
            "## Text",
            "| file | use | units kept | units dropped (13-word overlap with WikiText-2 valid/test) | sha256 |",
            "|---|---|---|---|---|",
            *text_rows,
            "",
            "## MLM loss (nats a masked token)",
            f"Held out: the first {config['heldout_sequences']} sequences of WikiText-2 raw valid, masked once.",
            "",
            "| step | train (mean since last) | held out |",
            "|---|---|---|",
            *_curve_rows(record),
            "",
            "## Re-create",
            "```",
            f"{record['command']} --publish {name}",
            "```",
            f"Made on {prov['device']} with `--precision {config.get('precision', 'bf16')}`. The training text "
            "ships with the archive under `data/` (CC BY-SA; `data/ATTRIBUTION.md`), so the command needs no data "
            "mirror; on a GPU or on CPUs with native bf16 (AMX, avx512_bf16) the same command runs under bf16 "
            f"autocast, elsewhere use `--precision fp32`. The run id `{record['run_id']}` is the settings' hash; "
            "`benchmarks/gpu_pretrain.py` runs such a command on a GPU machine (choosing the learning rate among a "
            "few by this loss).",
            "",
        ]
    )
