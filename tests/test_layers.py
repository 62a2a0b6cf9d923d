"""The core's import graph runs one way: a module imports only from its own layer or the layers below it, lazy
imports inside functions included. The papers (``papers/``) sit above the core, which reaches them only through the
registry's entry point (``sentemb.paper.registry``)."""

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
    {"profiles", "train"},
    {"runs"},
    {"report", "plots", "export", "launch", "pretrain"},
    {"paper"},
    {"archive_coverage", "readme_summary", "notebooks", "grid_run", "site", "pretrain_check"},
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
            names = [f"sentemb.{a.name}" for a in node.names] if node.module == "sentemb" else [node.module]
            found += [(name, node.lineno) for name in names]
        elif isinstance(node, ast.Import):
            found += [(a.name, node.lineno) for a in node.names if a.name.split(".")[0] in ("sentemb", "papers")]
    return found


MODULES = sorted(CORE.rglob("*.py"))


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
