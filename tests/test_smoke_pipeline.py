"""The smoke profile end to end: grid -> runs -> papermill notebook -> CSV tables and figures."""

import os
import subprocess
import sys

import pandas as pd
import pytest

from sentemb import settings


@pytest.mark.slow
def test_smoke_profile_through_the_notebook(isolated_outputs):
    env = dict(os.environ)
    result = subprocess.run([sys.executable, "-m", "sentemb", "notebook", "--paper", "simcse", "--profile", "smoke"],
                            cwd=settings.REPO_ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    tables = isolated_outputs / "results" / "simcse" / "smoke"
    t5 = pd.read_csv(tables / "table5.csv")
    assert set(t5["row"]) == {"backbone, avg.", "backbone, [CLS]", "unsup. SimCSE", "sup. SimCSE"}
    assert set(t5["aggregation"].dropna()) >= {"all", "mean", "wmean"}
    headline = t5[t5["aggregation"].fillna("").isin(["all", ""])]
    simcse_rows = headline[headline["row"].isin(["unsup. SimCSE", "sup. SimCSE"])]
    assert len(simcse_rows) == 16 and simcse_rows["reported"].notna().all()  # every task has its paper number
    assert headline.loc[headline["row"].str.startswith("backbone"), "reported"].isna().all()
    assert t5["run_id"].str.len().eq(16).all() and (t5["profile"] == "smoke").all()
    t3 = pd.read_csv(tables / "table3.csv")
    assert len(t3) == 8 and t3["reported"].notna().all()
    assert (pd.read_csv(tables / "dev_curves.csv")["step"] == 0).any()
    figures = isolated_outputs / "figures" / "simcse" / "smoke"
    for stem in ("figure2_align_uniform_training", "figure3_align_uniform_models", "figureF1_singular_values",
                 "figureG1_cosine_by_rating"):
        assert (figures / f"{stem}.png").stat().st_size > 5000
        assert (figures / f"{stem}.pdf").is_file()
    runs = list((isolated_outputs / "results" / "runs" / "smoke").glob("*.json"))
    assert len(runs) == 12
