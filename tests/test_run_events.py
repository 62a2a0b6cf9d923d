"""run_all.sh's closing table: the run events (sentemb.runs.events), the fixed-point grid loop, `sentemb summary`."""

from types import SimpleNamespace

from sentemb import cli
from sentemb.runs import events
from sentemb.runs.fixed_point import run_to_fixed_point


def test_a_grid_that_grows_from_its_records_is_run_to_its_fixed_point():
    done = []

    def ask():  # like the SMAC scan: each finished trial proposes the next, up to three
        trials = {f"trial{i}": [SimpleNamespace(run_id=f"t{i}", seed=i)] for i in range(min(len(done) + 1, 3))}
        return {"backbone": [SimpleNamespace(run_id="b", seed=0)], **trials}

    seen = run_to_fixed_point(ask, lambda name, spec: done.append(name))
    assert sorted(done) == ["backbone", "trial0", "trial1", "trial2"] and len(seen) == 4


def test_only_the_named_rows_are_run():
    done = []
    grid = {"a": [SimpleNamespace(run_id="a", seed=0)], "b": [SimpleNamespace(run_id=f"b{s}", seed=s) for s in (1, 2)]}
    run_to_fixed_point(lambda: grid, lambda name, spec: done.append((name, spec.seed)), names=["b"])
    assert done == [("b", 1), ("b", 2)]


def test_events_are_written_only_when_asked_and_counted_once_per_run(tmp_path, monkeypatch, capsys):
    events.note("trained", "r0")  # SENTEMB_RUN_EVENTS unset: nothing, nowhere
    monkeypatch.setenv(events.ENV, str(tmp_path / "simcse.jsonl"))
    for state, run_id in [
        ("trained", "r1"),
        ("loaded", "r1"),
        ("loaded", "r2"),
        ("retrained", "r2"),
        ("loaded", "r3"),
        ("not_run", "r4"),
        ("loaded", "r3"),
    ]:
        events.note(state, run_id, reason="behind --extended" if state == "not_run" else "")
    events.note("trained", "d1", kind="derived")
    (tmp_path / "walls.tsv").write_text("simcse\t61\n")
    table = events.summary(tmp_path, {"simcse": 61.0}).iloc[0]
    assert (table["trained"], table["retrained (lost checkpoint)"], table["loaded"], table["not run"]) == (1, 1, 1, 1)
    assert table["derived computed"] == 1 and table["wall (s)"] == 61 and table["why not run"] == "behind --extended"
    assert cli.main(["summary", str(tmp_path)]) == 0
    assert "behind --extended" in capsys.readouterr().out


def test_summary_names_a_folder_that_is_not_run_alls(tmp_path, capsys):
    assert cli.main(["summary", str(tmp_path)]) == 2
    assert "walls.tsv is missing" in capsys.readouterr().err
