"""A browsable report: the executed notebooks as a static HTML site, its index the archive's coverage.

``site/<profile>/index.html`` lists every paper's tables and figures with their status (reproduced, partly, not run,
...; :mod:`sentemb.archive_coverage`) and its claims per status, and links one page per executed notebook
(``<paper>.html``, ``overview.html``), converted by nbconvert's JupyterLab exporter with the figures inline. The
pages fetch nothing from the network (:file:`site_template/archive.html.j2` drops the CDN scripts), so they open
from the disk offline. ``./run_all.sh`` builds it last; ``python -m sentemb site`` builds it alone. The folder is
not committed (it is rebuilt from the committed notebooks); ``SENTEMB_SITE`` moves it.
"""

from __future__ import annotations

import html
import os
from pathlib import Path

import pandas as pd

from sentemb import archive_coverage, settings
from sentemb.atomic import atomic_write_text
from sentemb.errors import SentembError
from sentemb.notebooks import output_path
from sentemb.paper import registry
from sentemb.profiles import get_profile

TEMPLATE_DIR = Path(__file__).parent / "site_template"
STYLE = """body { font-family: -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif; margin: 2em auto;
  max-width: 70em;
  padding: 0 1em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
td.reproduced { background: #e3f4e3; } td.partly { background: #fdf3d8; } td.not-run { background: #f8e0e0; }
"""


def site_root(profile: str) -> Path:
    value = os.environ.get("SENTEMB_SITE", "").strip()
    return (Path(value).expanduser() if value else settings.REPO_ROOT / "site") / profile


def notebook_page(notebook: Path, target: Path) -> Path:
    import nbformat
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(
        template_name="lab", template_file="archive.html.j2", extra_template_paths=[str(TEMPLATE_DIR)]
    )
    body, _ = exporter.from_notebook_node(nbformat.read(notebook, as_version=4))
    return atomic_write_text(target, body)


def _table(frame: pd.DataFrame, status_column: str | None = None, html_columns: tuple[str, ...] = ()) -> str:
    """An HTML table of ``frame``; cells are escaped except in ``html_columns`` (links the index made itself)."""
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
    rows = []
    for _, row in frame.iterrows():
        cells = []
        for column, value in row.items():
            css = ""
            if column == status_column:
                css = f' class="{archive_coverage.status_class(str(value)).replace(" ", "-")}"'
            text = str(value) if column in html_columns else html.escape(str(value))
            cells.append(f"<td{css}>{text}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def numbers_of(profile: str) -> str:
    """What the site's numbers are: the profile's description and its caveat (e.g. the smoke profile's samples)."""
    mine = get_profile(profile)
    caveat = f" {mine.caveat}" if mine.caveat else ""
    return f"The numbers are the {mine.name} profile's: {mine.description}.{caveat}"


def index_page(profile: str, pages: dict[str, str]) -> str:
    """The index: counts per paper (items per status, claims per status), then each paper's full coverage."""

    def link(paper: str, text: str) -> str:
        return f'<a href="{pages[paper]}">{html.escape(text)}</a>' if paper in pages else html.escape(text)

    counts = archive_coverage.coverage_counts()
    counts["paper"] = [link(p, t) for p, t in archive_coverage.titles().items()]
    claims = archive_coverage.claim_counts(profile)
    claims["paper"] = counts["paper"]
    parts = [
        f"<h1>Sentence-embedding reproductions: {html.escape(profile)} profile</h1>",
        "<p>Every table and figure of the five papers, with what the archive does with it. "
        f"{html.escape(numbers_of(profile))} Each page is an executed notebook.</p>",
    ]
    if "overview" in pages:
        parts.append(f'<p><a href="{pages["overview"]}">Overview: the methods compared under one protocol</a></p>')
    parts += [
        "<h2>Tables and figures per status</h2>",
        _table(counts, html_columns=("paper",)),
        "<h2>Claims per status (on reproduced numbers)</h2>",
        _table(claims, html_columns=("paper",)),
    ]
    for paper, title in archive_coverage.titles().items():
        table = archive_coverage.coverage(paper)[["item", "caption", "status", "where / why"]]
        parts += [f'<h2 id="{paper}">{link(paper, title)}</h2>', _table(table, status_column="status")]
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Sentence-embedding reproductions'
        f"</title><style>{STYLE}</style></head><body>{''.join(parts)}</body></html>\n"
    )


def build_site(profile: str = "small") -> Path:
    """Write the site for ``profile`` from the executed notebooks there are; return its index."""
    root = site_root(profile)
    root.mkdir(parents=True, exist_ok=True)
    pages = {}
    for name in registry():
        notebook = output_path(name, profile)
        if notebook.is_file():
            notebook_page(notebook, root / f"{name}.html")
            pages[name] = f"{name}.html"
    if not pages:
        raise SentembError(
            f"no executed notebook for profile {profile} under {settings.notebooks_root()}: "
            f"run ./run_all.sh --profile {profile} first"
        )
    return atomic_write_text(root / "index.html", index_page(profile, pages))
