"""The browsable report (sentemb.site): built from the committed notebooks, every page opens in a real headless
Chromium without a console error or a failed request, and every figure renders.

Chromium comes from the system's packages (Debian: ``apt-get install chromium``); .ci/run installs it when missing
and sets SENTEMB_REQUIRE_BROWSER=1, so in CI a missing browser fails the test instead of skipping it."""

import os
import re
import shutil
from pathlib import Path

import pytest

from sentemb import archive_coverage, settings
from sentemb.site import build_site

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _chromium() -> str:
    path = os.environ.get("SENTEMB_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        message = "no Chromium on PATH (Debian: apt-get install chromium; or set SENTEMB_CHROMIUM)"
        if os.environ.get("SENTEMB_REQUIRE_BROWSER"):
            pytest.fail(message)
        pytest.skip(message)
    return path


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SENTEMB_SITE", str(out))
        patch.setenv("SENTEMB_NOTEBOOKS", str(settings.REPO_ROOT / "notebooks"))  # read: the committed copies
        patch.setenv("SENTEMB_RESULTS", str(settings.REPO_ROOT / "results"))
        index = build_site("small")
    return index


def test_the_index_links_every_paper_and_lists_every_item(site):
    text = site.read_text()
    for paper in archive_coverage.titles():
        assert f'href="{paper}.html"' in text and (site.parent / f"{paper}.html").is_file()
        for item in archive_coverage.coverage(paper)["item"]:
            assert f"<td>{item}</td>" in text
    assert not re.search(r'(src|href)="https?://', text)


def test_every_page_loads_without_console_errors_and_every_figure_renders(site):
    from playwright.sync_api import sync_playwright

    pages = sorted(site.parent.glob("*.html"))
    assert len(pages) >= 1 + len(archive_coverage.titles())
    problems = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=_chromium(), args=CHROMIUM_ARGS)
        try:
            for path in pages:
                page = browser.new_page()
                page.on("console", lambda m, p=path: m.type == "error" and problems.append(f"{p.name}: {m.text}"))
                page.on("pageerror", lambda e, p=path: problems.append(f"{p.name}: {e}"))
                page.on("requestfailed", lambda r, p=path: problems.append(f"{p.name}: failed request {r.url[:80]}"))
                page.goto(Path(path).as_uri(), wait_until="load")
                images = page.evaluate("Array.from(document.images).map(i => [i.complete, i.naturalWidth])")
                broken = [i for i, (complete, width) in enumerate(images) if not complete or width == 0]
                if broken:
                    problems.append(f"{path.name}: images {broken} of {len(images)} did not render")
                if path.name != "index.html" and not images:
                    problems.append(f"{path.name}: no figure at all")
                page.close()
        finally:
            browser.close()
    assert not problems, "\n".join(problems)


def test_a_broken_image_is_caught(tmp_path):
    """The check above can fail: a page with an undecodable figure and a console error is reported."""
    from playwright.sync_api import sync_playwright

    page_file = tmp_path / "bad.html"
    page_file.write_text(
        '<html><body><img src="data:image/png;base64,AAAA"><script>console.error("x")</script></body></html>'
    )
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=_chromium(), args=CHROMIUM_ARGS)
        page = browser.new_page()
        errors = []
        page.on("console", lambda m: m.type == "error" and errors.append(m.text))
        page.goto(page_file.as_uri(), wait_until="load")
        images = page.evaluate("Array.from(document.images).map(i => [i.complete, i.naturalWidth])")
        browser.close()
    assert errors == ["x"] and images[0][1] == 0
