"""Reading records imports no model code: a cached ``./run_all.sh`` starts one ``sentemb run`` process and one
notebook kernel per paper, and importing transformers (about 3.5 s of CPU) or the training and evaluation code
(about 1.5 s) in each of them was half of its wall time. Checked in fresh interpreters, where ``sys.modules`` says
what was imported."""

import json
import os
import subprocess
import sys

from sentemb import settings

PAPERS = ("simcse", "simcse_pp", "noncontrastive", "tncse", "declutr", "overview")


def _imported(code: str, tmp_path, modules: tuple[str, ...]) -> list[str]:
    """Which of ``modules`` a fresh interpreter has imported after running ``code`` (records under tmp_path)."""
    probe = code + f"\nimport sys, json\nprint(json.dumps([m for m in {list(modules)!r} if m in sys.modules]))\n"
    env = {**os.environ, "SENTEMB_RESULTS": str(tmp_path / "results"), "SENTEMB_CACHE": str(tmp_path / "cache")}
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=settings.REPO_ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_cli_the_grids_and_recorded_runs_import_neither_transformers_nor_the_training_code(tmp_path):
    code = f"""
import importlib
from sentemb.cli import build_parser
from sentemb.runs import store
from sentemb.runs.side_by_side import record_or_error
build_parser()
for paper in {PAPERS!r}:
    importlib.import_module(f"papers.{{paper}}.experiments")
grid = importlib.import_module("papers.simcse.experiments").grid("smoke")
spec, other = grid["backbone_avg"][0], grid["backbone_cls"][0]
store.save({{"profile": spec.profile, "run_id": spec.run_id, "spec": spec.as_dict(),
            "provenance": {{"backbone_revision": "random"}}}})
record, error = record_or_error(spec, run_missing=False)
assert error is None and record["run_id"] == spec.run_id, error
store.save({{"profile": other.profile, "run_id": other.run_id, "spec": {{**other.as_dict(), "seed": 7}}}})
record, error = record_or_error(other, run_missing=True)  # a stale record is refused, still without training code
assert record is None and "does not hold the spec" in error, error
"""
    assert _imported(code, tmp_path, ("transformers", "sentemb.runs.execute", "sentemb.train.loop")) == []


def test_the_papers_tables_figures_and_summaries_import_no_transformers(tmp_path):
    code = f"""
import importlib
for paper in {PAPERS!r}:
    for module in ("tables", "figures", "summary"):
        importlib.import_module(f"papers.{{paper}}.{{module}}")
"""
    assert _imported(code, tmp_path, ("transformers",)) == []


def test_the_spec_imports_no_torch_until_a_spec_is_validated(tmp_path):
    assert _imported("import sentemb.spec", tmp_path, ("torch", "sentemb.objectives.registry")) == []
    made = "from sentemb.spec import RunSpec\nRunSpec(profile='smoke', backbone='tiny-random-bert')"
    assert _imported(made, tmp_path, ("sentemb.objectives.registry",)) == ["sentemb.objectives.registry"]
