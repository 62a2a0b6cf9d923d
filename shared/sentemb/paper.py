"""A paper of the archive: its metadata and fixed hooks over one base that does the plumbing once.

A paper is a short declarative subclass (``papers/<name>/paper.py``), listed once in ``papers/__init__.py``:

    class SimCSE(Paper):
        name = "simcse"
        title = "SimCSE (Gao et al., 2021)"
        ...
        def grid(self, profile, extended=False): ...
        def tables(self, build): ...
        def claim_cells(self, build): ...
        def summary(self, build): ...

A paper is built in one call, :meth:`Paper.build` (what a notebook's set-up cell, the command line and the tests
call): collect the records, compute the derived records, the tables (with the claims and the profile's tuning tables,
written as CSVs), then the figures. Each stage is a hook that receives the one :class:`Build` of the call, holding
what the stages before it produced, so that no hook computes another's output again: ``figures`` reads
``build.tables``, and every output folder is ``build.results_dir`` / ``build.figures_dir``, handed in.

Hooks (abstract; a subclass that misses one cannot be instantiated): :meth:`grid`, :meth:`tables`,
:meth:`claim_cells`, :meth:`summary`. Optional hooks with defaults: :meth:`derived` (no derived analyses),
:meth:`figures` (none), :meth:`not_run` (the rows without records), :meth:`paper_grid` (the runs in the paper's own
terms, which other papers build on through the registry; papers never import each other). The base implements
coverage, collecting the records, claims, writing the CSV tables, the wide reader's view and provenance (the READMEs'
Markdown, reported | reproduced | Δ, is :mod:`sentemb.report.markdown`'s).

The core finds the papers through the ``sentemb.papers`` entry point (:func:`registry`), never by importing ``papers``.
"""

from __future__ import annotations

import dataclasses
import functools
from abc import ABC, abstractmethod
from importlib.metadata import entry_points
from pathlib import Path
from typing import ClassVar

import pandas as pd

from sentemb import settings
from sentemb.errors import ConfigError
from sentemb.profiles import Profile, get_profile
from sentemb.spec import RunSpec

Records = dict[str, list[dict]]


@dataclasses.dataclass
class Build:
    """One paper built on one profile: the call's settings and what each stage produced so far.

    :meth:`Paper.build` fills it stage by stage (``records``, ``derived``, ``tables``, ``figures``) and hands it to
    every hook; a hook reads the stages before its own and never recomputes them. ``results_dir`` and ``figures_dir``
    are where the paper's CSV tables and figures for this profile go (``results/<paper>/<profile>/``,
    ``figures/<paper>/<profile>/``): a paper writes there and looks up no folder of its own.
    """

    paper: str
    profile: Profile
    run_missing: bool = True
    extended: bool = False
    progress: bool = False
    records: Records = dataclasses.field(default_factory=dict)
    derived: dict = dataclasses.field(default_factory=dict)
    tables: dict[str, pd.DataFrame] = dataclasses.field(default_factory=dict)
    figures: list[Path] = dataclasses.field(default_factory=list)

    def __post_init__(self):
        self.profile = get_profile(self.profile)

    @property
    def results_dir(self) -> Path:
        return settings.paper_output_dirs(self.paper, self.profile.name)[0]

    @property
    def figures_dir(self) -> Path:
        return settings.paper_output_dirs(self.paper, self.profile.name)[1]

    def cells(self, *stems: str) -> pd.DataFrame:
        """The rows of the tables ``stems`` that exist and have rows, as one frame of cells (what a paper's
        ``claim_cells`` hands the claims, :mod:`sentemb.report.cell`); no rows, under the cells' keys, when none has."""
        from sentemb.report.cell import CELL_KEYS

        frames = [self.tables[stem] for stem in stems if stem in self.tables and not self.tables[stem].empty]
        return (
            pd.concat(frames, ignore_index=True)
            if frames
            else pd.DataFrame(columns=[*CELL_KEYS, "reproduced", "values"])
        )

    def pngs(self, *stems: str) -> list[Path]:
        """The PNG files among ``figures`` (those named ``stems`` when given), in the order they were drawn."""
        return [path for path in self.figures if path.suffix == ".png" and (not stems or path.stem in stems)]

    def shown_results_dir(self) -> Path:
        """``results_dir`` as a notebook prints it: relative to the repository when inside it (no machine's layout)."""
        folder = self.results_dir
        return folder.relative_to(settings.REPO_ROOT) if folder.is_relative_to(settings.REPO_ROOT) else folder


class Paper(ABC):
    """One paper: metadata, coverage and the hooks its notebook, the command line and the overview call."""

    name: ClassVar[str]  # folder under papers/, results/ and figures/
    title: ClassVar[str]  # "SimCSE (Gao et al., 2021)"
    citation: ClassVar[str]  # authors, title, venue, year
    official_code: ClassVar[str]  # the official repository (or "none")
    coverage_items: ClassVar[dict[str, tuple[str, str]]] = {}  # item -> (status, where / why)
    not_run_reason: ClassVar[str] = "not run"  # why a grid row without records has none
    not_testable: ClassVar[dict[str, str]] = {}  # claim -> why the offline data cannot test it (verdict: not run)
    reproduces: ClassVar[bool] = True  # a publication with reported numbers and claims.yaml (False: the overview)
    full_profile_unrehearsed: ClassVar[tuple[str, ...]] = ()  # what only a real full run checks, beyond every paper's

    # -- hooks ---------------------------------------------------------------------------------------------------

    @abstractmethod
    def grid(self, profile: str | Profile, extended: bool = False) -> dict:
        """Run name -> specs (one per seed) on ``profile``; without ``extended`` only the rows inside its budget."""

    def paper_grid(self) -> dict[str, RunSpec]:
        """Run name -> the run in the paper's own terms (one spec, before a profile scales it and gives it seeds).
        Another paper builds on these rows through the registry (``get_paper("simcse").paper_grid()["unsup"]``),
        never by importing this paper's modules, so that a run both need is one spec and one run id."""
        raise NotImplementedError(f"{self.name} has no grid in its paper's terms")

    @abstractmethod
    def tables(self, build: Build) -> dict[str, pd.DataFrame]:
        """The paper's tables from ``build.records`` and ``build.derived`` (the claims are added by
        :meth:`write_tables`)."""

    @abstractmethod
    def claim_cells(self, build: Build) -> pd.DataFrame:
        """The reproduced cells ``claims.yaml`` refers to: rows of ``build.tables`` as they are
        (``sentemb.report.cell``; a reference's row is looked up in ``reported_row``)."""

    @abstractmethod
    def summary(self, build: Build) -> str:
        """The README's generated block from ``build.tables``: reported | reproduced mean ± std (n) | Δ, and the
        claims."""

    def derived(self, build: Build) -> dict:
        """The derived records the tables read (computed when missing and ``build.run_missing``); none by default."""
        return {}

    def figures(self, build: Build) -> list[Path]:
        """The paper's figures from ``build.tables`` (and the records where a figure draws what no table holds),
        saved under ``build.figures_dir``; none by default."""
        return []

    def not_run(self, build: Build) -> pd.DataFrame:
        """The grid's rows without records, each with :attr:`not_run_reason`."""
        from sentemb.report.views import not_run_rows

        return not_run_rows(build.records, self.not_run_reason)

    # -- implemented once ------------------------------------------------------------------------------------------

    def coverage(self, build: Build | None = None) -> pd.DataFrame:
        """Every table and figure of the paper with what the archive does with it and why (a paper may say, given a
        ``build``, which of its items have no records yet)."""
        from sentemb.report.reported import coverage_table

        return coverage_table(self.name, self.coverage_items)

    def build(
        self, profile: str | Profile, run_missing: bool = True, extended: bool = False, progress: bool = False
    ) -> Build:
        """The paper on ``profile`` in one call: its records (the missing ones run when ``run_missing``, inside the
        budget unless ``extended``), derived records, tables (written as CSVs, with the claims and the tuning tables)
        and figures, each stage a hook reading the ones before it."""
        build = Build(self.name, profile, run_missing=run_missing, extended=extended, progress=progress)
        build.records = self.collect(build)
        build.derived = self.derived(build)
        build.tables = self.write_tables(build)
        build.figures = self.figures(build)
        return build

    def collect(self, build: Build) -> Records:
        """Records of every run of the grid, one per seed: the missing ones run when ``build.run_missing`` and inside
        the budget (``build.extended`` lifts it); rows outside it are loaded when they exist, else empty."""
        from sentemb.report.grid_records import collect_records

        return collect_records(self.grid, build.profile.name, build.run_missing, build.extended, build.progress)

    def untestable(self) -> dict[str, str]:
        """Claim -> why it cannot be tested offline (:attr:`not_testable`; a paper may work it out from the data)."""
        return self.not_testable

    def claims(self, build: Build) -> pd.DataFrame:
        """``claims.yaml`` evaluated on :meth:`claim_cells` (both verdicts, ``sentemb.report.claims``, corrected for the
        paper's other claims); an untestable claim is *not run*, with the reason in its detail, and outside the
        correction."""
        from sentemb.report.claims import evaluate_all

        return evaluate_all(self.name, self.claim_cells(build), untestable=self.untestable())

    def write_tables(self, build: Build) -> dict[str, pd.DataFrame]:
        """:meth:`tables`, the claims and the profile's tuning tables (``sentemb.report.tuning``, where it tunes), each
        written to ``build.results_dir/<table>.csv``."""
        from sentemb.report.tuning import tuning_tables
        from sentemb.report.views import write_csv_tables

        build.tables = self.tables(build)
        build.tables["claims"] = self.claims(build)
        build.tables.update(tuning_tables(self.name, build.records))
        write_csv_tables(build.results_dir, build.tables)
        return build.tables

    @staticmethod
    def wide(
        table: pd.DataFrame, aggregation: tuple[str, ...] = ("all", ""), index=("row",), column: str = "column"
    ) -> pd.DataFrame:
        """Reader's view: one row per ``index``, 'mean ± std (n) [reported]' per ``column``."""
        from sentemb.report.views import wide_cells

        return wide_cells(table, aggregation, index, column)

    def provenance(self, build: Build) -> pd.DataFrame:
        """One row per run record and derived record behind the tables."""
        from sentemb.report.provenance_table import provenance_table

        return provenance_table(build.records, self.derived_items(build.derived))

    def readme_blocks(self, summary: str) -> dict[Path, str]:
        """README path -> the text of its generated block: the whole summary goes to the paper's own README."""
        return {settings.REPO_ROOT / "papers" / self.name / "README.md": summary}

    @staticmethod
    def derived_items(derived_records: dict):
        """(name, record or list of records) pairs of ``derived_records`` for :meth:`provenance`."""
        for name, found in derived_records.items():
            if isinstance(found, dict) and "derived_id" not in found:  # run id -> record
                yield from ((f"{name} {run_id}", d) for run_id, d in found.items())
            else:
                yield name, found


def registry() -> dict[str, Paper]:
    """The archive's papers by name, in the order they are shown and run (``papers/__init__.py``'s ``PAPERS``)."""
    return dict(_registered())


@functools.cache
def _registered() -> dict[str, Paper]:
    """The papers the ``sentemb.papers`` entry point lists, found once a process: scanning the installed entry points
    costs ~5 ms, and papers ask the registry for each other's rows inside their grids (hundreds of times a grid)."""
    found = entry_points(group="sentemb.papers")
    if not found:
        raise ConfigError(
            "no papers are registered: install the archive (scripts/bootstrap.sh, or pip install -e .) "
            "so that its 'sentemb.papers' entry point is known"
        )
    papers: dict[str, Paper] = {}
    for entry in found:
        for paper in entry.load():
            papers[paper.name] = paper
    return papers


def reproduced_papers() -> dict[str, Paper]:
    """The papers with reported numbers (every registered one but the overview), in the registry's order."""
    return {name: paper for name, paper in registry().items() if paper.reproduces}


def get_paper(name: str) -> Paper:
    """The registered paper ``name`` (the overview included), or a clear error listing them."""
    papers = registry()
    if name not in papers:
        raise ConfigError(f"unknown paper {name!r}; choose from {', '.join(papers)}")
    return papers[name]
