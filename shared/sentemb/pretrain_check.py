"""The early test that a pretraining checkpoint can learn sentence embeddings (docs/raw-backbone.md, "Making it").

    python -m sentemb.pretrain_check RUN_DIR [--out DIR] [--multiples 1,3,10] [--sts7] [--record FILE]

Takes the weights of a pretraining run as they are now (``RUN_DIR/state.pt`` of an unfinished run, else its kept
``model/``), writes them as a backbone directory, and runs on it what the raw profile would: unsupervised SimCSE's
300-step STS-B dev curves at the paper's learning rate and 3 and 10 times it (SimCSE's raw grid rows
``unsup_curve_lr_x1/_x3/_x10``, the backbone replaced by that directory), beside the untrained checkpoint's STS-B dev
Spearman with mean pooling and with [CLS]. The runs go to a scratch store (``--out``, never the repository's
``results/``). Prints one line per curve and writes ``<out>/milestone_<step>.json``: the checkpoint's step and held-out
loss, the untrained scores and each curve (step -> STS-B dev Spearman x 100). The backbone is ready when some learning
rate lifts STS-B dev clearly above the untrained mean pooling.

A milestone of a long run (``docs/raw-backbone.md``) also takes ``--sts7``: the untrained checkpoint on the 7 STS test
tasks (SimCSE's raw grid rows ``backbone_avg`` and ``backbone_cls``, SimCSE's protocol "all"), and ``--record FILE``:
the milestone's record (the pretraining run's id, tokens and held-out curve, these scores and curves, each scratch run's
id and data sha256, the code and the device), one file per checkpoint under ``results/pretraining/``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
from pathlib import Path

import torch

from sentemb.errors import SentembError
from sentemb.selection import worst_if_nan

CURVE_ROWS = "unsup_curve_lr_x{m:g}"


def checkpoint_dir(run_dir: Path, out: Path) -> tuple[Path, int, float]:
    """The run's current weights as a backbone directory under ``out``; (directory, step, held-out loss there)."""
    from sentemb.pretrain import vocabulary
    from sentemb.pretrain.configs import PretrainConfig
    from sentemb.pretrain.model import build_model
    from sentemb.pretrain.run import save_checkpoint

    state_file, record_file = run_dir / "state.pt", run_dir / "record.json"
    if state_file.is_file():
        state = torch.load(state_file, map_location="cpu", weights_only=False)
        config = PretrainConfig(**state["config"])
        weights, step = state["model"], state["step"]
        loss = dict((s, v) for s, v in state["curves"]["heldout"])[step]
    elif record_file.is_file():
        record = json.loads(record_file.read_text())
        return run_dir / "model", record["kept"]["step"], record["kept"]["heldout_loss"]
    else:
        raise SentembError(f"{run_dir} holds no pretraining run (no state.pt, no record.json)")
    directory = out / f"checkpoint-{step}"
    if not (directory / "model.safetensors").is_file():
        tokenizer = vocabulary.load(config.vocab)
        model = build_model(config.size, len(tokenizer), config.seed)
        save_checkpoint(model, weights, config.seed, directory)
        tokenizer.save_pretrained(directory)
    return directory, step, loss


def untrained_scores(backbone: Path) -> dict[str, float]:
    """STS-B dev Spearman x 100 of the checkpoint as it is, mean pooling and [CLS] (eval mode)."""
    from sentemb.models.encoder import SentenceEncoder
    from sentemb.runs.execute import _stsb_dev

    out = {}
    for pooler, name in (("avg", "mean pooling"), ("cls_before_pooler", "[CLS]")):
        encoder = SentenceEncoder.from_name(str(backbone), pooler).eval()
        out[name] = 100 * _stsb_dev(encoder, synthetic=False)
    return out


STS7 = ("STS12", "STS13", "STS14", "STS15", "STS16", "STSBenchmark", "SICKRelatedness")


def sts7_average(record: dict) -> float:
    """The 7 STS test tasks' average, Spearman x 100, SimCSE's protocol ("all" for STS12-16), from a run record."""
    tasks = record["metrics"]["tasks"]
    values = [
        tasks[t]["aggregate"]["spearman"]["all"] if "aggregate" in tasks[t] else tasks[t]["splits"]["test"]["spearman"]
        for t in STS7
    ]
    return 100 * sum(values) / len(values)


def _scratch_run(row: str, backbone: Path) -> dict:
    """SimCSE's raw grid row ``row``, its backbone replaced by ``backbone``, run (or loaded) in the scratch store."""
    from sentemb.paper import get_paper
    from sentemb.runs.execute import ensure

    rows = get_paper("simcse").grid("raw")  # through the registry: the core imports no paper
    if row not in rows:
        raise SentembError(f"SimCSE's raw grid has no row {row}")
    return ensure(dataclasses.replace(rows[row][0], backbone=str(backbone)), run_missing=True, progress=True)


def _traced(record: dict) -> dict:
    prov = record["provenance"]
    return {"run_id": record["run_id"], "data_sha256": prov["data_sha256"], "commit": prov["commit"]}


def untrained_sts7(backbone: Path) -> dict:
    """The untrained checkpoint's 7-STS test average with mean pooling and with [CLS], and the runs behind them."""
    out = {}
    for row, name in (("backbone_avg", "mean pooling"), ("backbone_cls", "[CLS]")):
        record = _scratch_run(row, backbone)
        out[name] = {"sts7": sts7_average(record), **_traced(record)}
    return out


def curves(backbone: Path, multiples: list[float], runs: dict | None = None) -> dict[str, list[tuple[int, float]]]:
    """SimCSE's raw-profile steps curves on ``backbone``: row -> [(step, STS-B dev x 100)]; ``runs`` receives each
    row's run id, data sha256 and commit."""
    out = {}
    for m in multiples:
        name = CURVE_ROWS.format(m=m)
        record = _scratch_run(name, backbone)
        out[name] = [(p["step"], 100 * p["stsb_dev_spearman"]) for p in record["training"]["dev_curve"]]
        if runs is not None:
            runs[name] = _traced(record)
    return out


def milestone_record(run_dir: Path, summary: dict) -> dict:
    """The milestone's record: the pretraining run's record (finished: a decayed copy) in brief, and ``summary``."""
    from sentemb.runs import provenance

    record_file = run_dir / "record.json"
    pretraining = json.loads(record_file.read_text()) if record_file.is_file() else {}
    keep = ("run_id", "config", "steps", "tokens_seen", "epochs", "heldout_loss", "heldout_unigram_loss", "schedule")
    return {
        "pretraining": {k: pretraining.get(k) for k in keep}
        | {
            "branched_from": pretraining.get("branched_from"),
            "wall_seconds": pretraining.get("wall_seconds"),
            "torch_threads": pretraining.get("provenance", {}).get("torch_threads"),
        },
        **summary,
        "provenance": {**provenance.code_version(), "device": provenance.device_description(torch.device("cpu"))},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run_dir", type=Path, help="a pretraining run's directory (its --out)")
    parser.add_argument("--out", type=Path, default=None, help="scratch folder (default: <run_dir>/milestones)")
    parser.add_argument("--multiples", default="1,3,10", help="learning-rate multiples (default 1,3,10)")
    parser.add_argument("--sts7", action="store_true", help="also the untrained 7-STS test average, mean and [CLS]")
    parser.add_argument("--record", type=Path, help="write the milestone's record here (results/pretraining/...)")
    args = parser.parse_args(argv)
    out = (args.out or args.run_dir / "milestones").resolve()
    out.mkdir(parents=True, exist_ok=True)
    os.environ["SENTEMB_RESULTS"] = str(out / "results")  # the runs stay out of the repository
    backbone, step, loss = checkpoint_dir(args.run_dir, out)
    summary = {"step": step, "heldout_loss": loss, "checkpoint": str(backbone), "untrained": untrained_scores(backbone)}
    print(f"[milestone] step {step}, held-out {loss:.3f}; untrained STS-B dev: {summary['untrained']}")
    if args.sts7:
        summary["untrained_sts7"] = untrained_sts7(backbone)
        print(
            f"[milestone] untrained 7 STS: { ({k: round(v['sts7'], 2) for k, v in summary['untrained_sts7'].items()}) }"
        )
    summary["curve_runs"] = {}
    summary["curves"] = curves(backbone, [float(m) for m in args.multiples.split(",")], summary["curve_runs"])
    for name, curve in summary["curves"].items():
        best = max(curve[1:], key=lambda p: worst_if_nan(p[1]))  # NaN is the worst score
        start, last = curve[0][1], curve[-1][1]
        print(f"[milestone] {name}: step 0 {start:.2f}, best {best[1]:.2f} at step {best[0]}, last {last:.2f}")
    (out / f"milestone_{step}.json").write_text(json.dumps(summary, indent=1) + "\n")
    if args.record:
        args.record.parent.mkdir(parents=True, exist_ok=True)
        args.record.write_text(json.dumps(milestone_record(args.run_dir, summary), indent=1) + "\n")
        print(f"[milestone] wrote {args.record}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
