"""A paper's README opens with where things are, deviations included, and every link in it stays in the repository.

The first table (the where-things-are table) has a row pointing at the one ``## Deviations`` section, which lists every
substitution and deviation once; a relative link names a file or folder of this repository (a researcher's clone
has no ``../shared``)."""

from __future__ import annotations

import re

import pytest

from sentemb import settings
from sentemb.paper import reproduced_papers

PAPERS = sorted(reproduced_papers())
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _readme(paper: str) -> tuple[str, list[str]]:
    path = settings.REPO_ROOT / "papers" / paper / "README.md"
    text = path.read_text(encoding="utf-8")
    return text, text.splitlines()


@pytest.mark.parametrize("paper", PAPERS)
def test_the_readme_opens_with_its_table_of_where_things_are_with_a_deviations_row(paper):
    _, lines = _readme(paper)
    first_table = []
    for line in lines:
        if line.startswith("|"):
            first_table.append(line)
        elif first_table:
            break
    assert first_table, f"papers/{paper}/README.md has no table"
    assert any("(#deviations)" in row for row in first_table), f"papers/{paper}/README.md: no Deviations row"
    assert lines.index(first_table[0]) < 30, "the where-things-are table is not near the top"
    assert sum(line.strip() == "## Deviations" for line in lines) == 1


@pytest.mark.parametrize("paper", [*PAPERS, "overview"])
def test_every_relative_link_of_the_readme_stays_in_the_repository(paper):
    text, _ = _readme(paper)
    folder = settings.REPO_ROOT / "papers" / paper
    root = settings.REPO_ROOT.resolve()
    bad = []
    for target in LINK.findall(text):
        if target.startswith(("http://", "https://", "mailto:", "#")):
            continue
        path = (folder / target.split("#")[0]).resolve()
        if not path.is_relative_to(root) or not path.exists():
            bad.append(target)
    assert bad == [], f"papers/{paper}/README.md links outside the repository or to nothing: {bad}"
