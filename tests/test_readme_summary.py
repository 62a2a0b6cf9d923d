"""A paper README's generated results block is its executed notebook's summary, rewritten by the notebook step."""

import nbformat
import pytest

from sentemb import readme_summary, settings
from sentemb.errors import SentembError
from sentemb.paper import get_paper, registry
from sentemb.readme_summary import readme_is_in_sync, sync_readme

PAPERS = tuple(registry())


@pytest.mark.parametrize("paper", PAPERS)
def test_committed_readme_blocks_are_the_committed_notebooks_summaries(paper):
    assert readme_is_in_sync(paper, settings.REPO_ROOT / "notebooks" / f"{paper}.ipynb"), (
        f"papers/{paper}/README.md's generated block differs from notebooks/{paper}.ipynb's summary: re-execute the "
        f"notebook (./run_all.sh --paper {paper} --no-run), which rewrites the block"
    )


def _notebook(tmp_path, printed: str):
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("print(paper.summary(built))")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=printed)]
    nb.cells = [nbformat.v4.new_code_cell("x = 1"), cell]
    path = tmp_path / "p.ipynb"
    nbformat.write(nb, path)
    return path


def test_sync_replaces_only_the_block_and_is_idempotent(tmp_path, monkeypatch):
    readme = tmp_path / "README.md"
    readme.write_text(
        "# P\n\nintro\n\n<!-- generated: by the notebook -->\n\n| old |\n\n<!-- /generated -->\n\nafter\n"
    )
    monkeypatch.setattr(readme_summary, "readme_blocks", lambda paper, summary: {readme: summary})
    notebook = _notebook(tmp_path, "| a | b |\n|---|---|\n| 1 | 2 |\n")
    assert not readme_is_in_sync("p", notebook)
    assert sync_readme("p", notebook) is True
    assert readme.read_text() == (
        "# P\n\nintro\n\n<!-- generated: by the notebook -->\n\n| a | b |\n|---|---|\n"
        "| 1 | 2 |\n\n<!-- /generated -->\n\nafter\n"
    )
    assert readme_is_in_sync("p", notebook) and sync_readme("p", notebook) is False


def test_a_readme_without_markers_is_left_alone_and_broken_markers_are_an_error(tmp_path, monkeypatch):
    readme = tmp_path / "README.md"
    monkeypatch.setattr(readme_summary, "readme_blocks", lambda paper, summary: {readme: summary})
    notebook = _notebook(tmp_path, "| a |\n")
    readme.write_text("# P\n\nno block\n")
    assert sync_readme("p", notebook) is False and readme.read_text() == "# P\n\nno block\n"
    readme.write_text("# P\n<!-- generated: x -->\n| old |\n")
    with pytest.raises(SentembError, match="exactly one"):
        sync_readme("p", notebook)
    assert readme.read_text() == "# P\n<!-- generated: x -->\n| old |\n"  # nothing overwritten


def test_executed_notebooks_follow_sentemb_notebooks_and_only_the_repositorys_copy_rewrites_the_readme(monkeypatch):
    from sentemb.notebooks import is_committed_copy, output_path

    # conftest points SENTEMB_NOTEBOOKS at the test's tmp folder: a run there never replaces the committed notebook
    assert not is_committed_copy(output_path("tncse", "small"))
    assert output_path("tncse", "smoke").parts[-3:] == ("executed", "smoke", "tncse.ipynb")
    monkeypatch.delenv("SENTEMB_NOTEBOOKS")
    assert output_path("tncse", "small") == settings.REPO_ROOT / "notebooks" / "tncse.ipynb"
    assert is_committed_copy(output_path("tncse", "small"))


def test_the_overviews_first_table_goes_to_the_front_page_and_the_rest_to_its_own_readme():
    blocks = get_paper("overview").readme_blocks("| glance |\n|---|\n\n**The methods compared** ...\n\n| m |")
    assert blocks == {
        settings.REPO_ROOT / "README.md": "| glance |\n|---|",
        settings.REPO_ROOT / "papers" / "overview" / "README.md": "**The methods compared** ...\n\n| m |",
    }
