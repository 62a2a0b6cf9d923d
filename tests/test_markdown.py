"""The READMEs' Markdown is written one way (``sentemb.report.markdown``): a table's lines and the reported |
reproduced | Δ cells."""

import math

from sentemb.report.markdown import compared, markdown_table


def test_a_table_is_its_header_a_rule_and_one_line_a_row():
    assert markdown_table(["a", "b"], [[1, "x"], ("2.50", None)]) == [
        "| a | b |",
        "|---|---|",
        "| 1 | x |",
        "| 2.50 | None |",
    ]
    assert markdown_table(["only"], []) == ["| only |", "|---|"]


def test_a_compared_cell_is_the_papers_number_the_seeds_and_the_difference():
    cell = {"reported": 76.25, "reproduced": 75.0, "std": 0.5, "n": 3, "delta": -1.25}
    assert compared(cell) == ("76.25", "75.00 ± 0.50 (3)", "-1.25")
    assert compared(cell, 1) == ("76.2", "75.00 ± 0.50 (3)", "-1.25")
    alone = {"reported": math.nan, "reproduced": 70.0, "std": math.nan, "n": 1, "delta": math.nan}
    assert compared(alone) == ("–", "70.00 (1)", "–")
