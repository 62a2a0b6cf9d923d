"""One cell of a paper's table, under the names the result CSVs give it, from a run record to the README.

A paper's table function names each of its cells once, as a :class:`Cell`, and gives each seed's number with
:meth:`Cell.seed`. The rows keep these names all the way:

- :func:`sentemb.report.reproduced.aggregate_seeds` turns the seeds' rows into one row per cell: ``reproduced`` is the
  mean over the seeds, next to ``std``, ``n`` and every seed's ``values``, ``seeds`` and ``run_ids``;
- :func:`sentemb.report.reproduced.join` adds the paper's number of the same cell as ``reported``, and ``delta``;
- the result CSV is that frame as it is (``results/schema.yaml``);
- the claims (:mod:`sentemb.report.claim_cells`) read the same frame: a ``claims.yaml`` reference names the paper's
  cell, so its ``group`` and ``row`` are looked up in ``reported_group`` and ``reported_row``;
- the README's tables (:mod:`sentemb.report.markdown`) print ``row``, ``reproduced``, ``reported`` and ``delta``.

``row`` is always the archive's label of the row; ``reported_group`` and ``reported_row`` name the row of the paper's
table it stands next to (empty when the paper has none).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace


@dataclass(frozen=True)
class Cell:
    """Where a number sits: the paper, its table, our row (``row``, and the ``run`` it comes from), the paper's row
    it is compared with (``reported_group``, ``reported_row``), and the column, split, aggregation and metric."""

    paper: str
    table: str
    row: str
    run: str
    reported_group: str = ""
    reported_row: str = ""
    column: str = ""
    split: str = ""
    aggregation: str = ""
    metric: str = ""

    def at(self, **keys) -> Cell:
        """The same cell with some keys set (e.g. one STS task's column of a model's row)."""
        return replace(self, **keys)

    def seed(self, reproduced: float, trace: dict, **extra) -> dict:
        """One seed's row of this cell: its keys, the seed's number (``reproduced``), the run's ``trace``
        (:func:`sentemb.report.reproduced.trace`) and any ``extra`` columns (kept per seed by ``aggregate_seeds``)."""
        return {**asdict(self), "reproduced": reproduced, **extra, **trace}


CELL_KEYS = [field.name for field in fields(Cell)]
