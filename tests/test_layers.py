"""The core's import graph runs one way: a module imports only from its own layer or the layers below it, lazy
imports inside functions included. The papers (``papers/``) sit above the core, which reaches them only through the
registry's entry point (``sentemb.paper.registry``); a paper never imports another paper's modules (it asks the
registry for the other's rows, and shared analyses live in the core), so each paper's folder stands on its own."""

from __future__ import annotations

import ast

import pytest

from sentemb import settings

CORE = settings.REPO_ROOT / "shared" / "sentemb"
LAYERS = (  # low to high; a module's layer is that of its top-level name under sentemb
    {"__init__", "errors", "settings", "atomic", "progress", "precision", "selection"},
    {"data", "models", "augment", "distributed"},
    {"objectives", "evaluate"},
    {"analysis", "spec"},
    {"profiles", "grid_reach", "train"},
    {"runs"},
    {"report", "plots", "export", "launch", "pretrain"},
    {"paper"},
    {"archive_coverage", "readme_summary", "notebooks", "grid_run", "site", "pretrain_check", "rehearsal"},
    {"commands"},
    {"cli", "__main__"},
)


def layer_of(module: str) -> int:
    name = module.split(".")[1] if "." in module else "__init__"
    return next(i for i, names in enumerate(LAYERS) if name in names)


def imports(path) -> list[tuple[str, int]]:
    """(imported sentemb module, line) for every import in ``path``, top-level or inside a function."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in ("sentemb", "papers"):
            package = node.module in ("sentemb", "papers")  # `from papers import simcse` imports papers.simcse
            names = [f"{node.module}.{a.name}" for a in node.names] if package else [node.module]
            found += [(name, node.lineno) for name in names]
        elif isinstance(node, ast.Import):
            found += [(a.name, node.lineno) for a in node.names if a.name.split(".")[0] in ("sentemb", "papers")]
    return found


MODULES = sorted(CORE.rglob("*.py"))
PAPERS_ROOT = settings.REPO_ROOT / "papers"
PAPER_MODULES = sorted(p for p in PAPERS_ROOT.rglob("*.py") if p.parent != PAPERS_ROOT)  # the registry lists them all


def other_papers_imported(path, root=PAPERS_ROOT) -> list[str]:
    """The imports of ``path`` (a module of ``<root>/<paper>/``) that reach into another paper's folder."""
    mine = path.relative_to(root).parts[0]
    return [
        f"{name} (line {line})"
        for name, line in imports(path)
        if name.startswith("papers.") and name.split(".")[1] != mine
    ]


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(CORE)))
def test_no_import_runs_back_up(path):
    me = "sentemb." + ".".join(path.relative_to(CORE).with_suffix("").parts)
    upward = [
        f"{name} (line {line})"
        for name, line in imports(path)
        if name.startswith("papers") or layer_of(name) > layer_of(me)
    ]
    assert not upward, f"{me} (layer {layer_of(me)}) imports from above: {upward}"


def test_the_check_sees_lazy_imports_and_would_refuse_the_runs_asking_the_registry(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from sentemb.paper import get_paper\n    import papers.simcse.paper\n")
    assert imports(module) == [("sentemb.paper", 2), ("papers.simcse.paper", 3)]
    assert layer_of("sentemb.paper") > layer_of("sentemb.runs.store") > layer_of("sentemb.train.loop")


@pytest.mark.parametrize("path", PAPER_MODULES, ids=lambda p: str(p.relative_to(PAPERS_ROOT)))
def test_no_paper_imports_another_paper(path):
    assert not other_papers_imported(path), (
        f"{path.relative_to(settings.REPO_ROOT)} imports another paper's modules: {other_papers_imported(path)}; "
        "ask the registry (sentemb.paper.get_paper(name).paper_grid() or .grid(profile)) for its rows, or move a "
        "shared analysis into the core (sentemb.runs.*_records)"
    )


def test_the_paper_check_refuses_every_form_of_an_arrow_between_papers(tmp_path):
    folder = tmp_path / "papers"
    (folder / "tncse").mkdir(parents=True)
    module = folder / "tncse" / "m.py"
    module.write_text(
        "from papers.tncse import tables\n"
        "from papers.simcse.experiments import grid\n"
        "def f():\n    from papers import noncontrastive\n    import papers.overview.paper\n"
    )
    assert other_papers_imported(module, root=folder) == [
        "papers.simcse.experiments (line 2)",
        "papers.noncontrastive (line 4)",
        "papers.overview.paper (line 5)",
    ]


PAPER_FOLDERS = sorted(p for p in PAPERS_ROOT.iterdir() if (p / "paper.py").is_file())
DRAWING = ("matplotlib", "seaborn", "sentemb.plots")


def _modules_imported(path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found |= {node.module, *(f"{node.module}.{a.name}" for a in node.names)}
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
    return found


@pytest.mark.parametrize("folder", PAPER_FOLDERS, ids=lambda p: p.name)
def test_a_papers_tables_figures_and_summary_are_three_modules_and_tables_draw_nothing(folder):
    """Each paper: ``tables.py`` (pure functions of records; it draws nothing and imports neither of the other two),
    ``figures.py`` (tables in, paths out) and ``summary.py`` (the README's block); no ``report.py`` doing all three."""
    assert {"tables.py", "figures.py", "summary.py"} <= {p.name for p in folder.glob("*.py")}
    assert not (folder / "report.py").exists()
    imported = _modules_imported(folder / "tables.py")
    mine = f"papers.{folder.name}"
    assert not [m for m in imported if m.startswith(DRAWING)], imported
    assert not imported & {f"{mine}.figures", f"{mine}.summary"}, imported
