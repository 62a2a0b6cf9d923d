"""The whole archive at a glance: every paper's tables and figures with their status, and its claims per status.

Each paper owns its coverage (its :class:`sentemb.paper.Paper` class's ``coverage_items``, checked against the
paper's ``reported/index.csv``) and writes its claims to ``results/<paper>/<profile>/claims.csv``; this module only
gathers
them, for the overview notebook, the HTML site's index and the top-level README's table. A status is free text that
starts with one of :data:`STATUS_CLASSES` ("reproduced (extended rows)", "partly (extended rows)", ...).
"""

from __future__ import annotations

import pandas as pd

from sentemb import settings
from sentemb.report.claims import COLUMNS as CLAIM_COLUMNS
from sentemb.report.claims import SIZE_STATUSES
from sentemb.report.claims import STATUSES as CLAIM_STATUSES

STATUS_CLASSES = ("reproduced", "partly", "not run", "not applicable", "not identifiable")


def status_class(status: str) -> str:
    for name in STATUS_CLASSES:
        if status.startswith(name):
            return name
    raise ValueError(f"coverage status {status!r} starts with none of {STATUS_CLASSES}")


def titles() -> dict[str, str]:
    """Name -> title of every paper with reported numbers, in the registry's order."""
    from sentemb.paper import reproduced_papers

    return {name: paper.title for name, paper in reproduced_papers().items()}


def coverage(paper: str) -> pd.DataFrame:
    """The paper's coverage table (item, caption, status, where / why) with a ``class`` column."""
    from sentemb.paper import get_paper

    table = get_paper(paper).coverage()
    return table.assign(paper=paper, **{"class": table["status"].map(status_class)})


def coverage_counts() -> pd.DataFrame:
    """One row per paper: how many of its tables and figures are in each status class."""
    rows = []
    for paper, title in titles().items():
        counts = coverage(paper)["class"].value_counts()
        rows.append(
            {"paper": title, **{name: int(counts.get(name, 0)) for name in STATUS_CLASSES}, "items": int(counts.sum())}
        )
    return pd.DataFrame(rows)


def claims(profile: str) -> pd.DataFrame:
    """Every paper's claims (``results/<paper>/<profile>/claims.csv``), stacked; a paper without the file has none."""
    frames = []
    for paper in titles():
        path = settings.results_root() / paper / profile / "claims.csv"
        if path.is_file():
            frames.append(pd.read_csv(path, dtype=str, keep_default_na=False))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=CLAIM_COLUMNS)


def claim_counts(profile: str) -> pd.DataFrame:
    """One row per paper: its claims per direction status (holds / fails / inconclusive / same runs / not run) and
    per size status (``size holds`` ... ``size no size``: is the effect as large as the paper's)."""
    table = claims(profile)
    rows = []
    for paper, title in titles().items():
        mine = table[table["paper"] == paper]
        statuses = mine["status"].value_counts()
        sizes = mine["size_status"].value_counts() if "size_status" in mine else pd.Series(dtype=int)
        unknown = (set(statuses.index) - set(CLAIM_STATUSES)) | (set(sizes.index) - set(SIZE_STATUSES))
        if unknown:
            raise ValueError(f"{paper}'s claims.csv has statuses {sorted(unknown)} outside {SIZE_STATUSES}")
        rows.append(
            {
                "paper": title,
                **{s: int(statuses.get(s, 0)) for s in CLAIM_STATUSES},
                **{f"size {s}": int(sizes.get(s, 0)) for s in SIZE_STATUSES},
                "claims": int(statuses.sum()),
            }
        )
    return pd.DataFrame(rows)
