"""Numbers in READMEs come from the generator: outside the generated blocks (``<!-- generated ... -->`` to
``<!-- /generated -->``, rewritten from the run records) no README states a p-value, a claim's verdict, or a
``mean ± std (n)`` number. Hand-written prose explains designs and deviations; it was written before a correction once
and never regenerated (papers/simcse/README.md said "holds, p = 0.047" where its table said inconclusive)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
READMES = [ROOT / "README.md", *sorted((ROOT / "papers").glob("*/README.md"))]

P_VALUE = re.compile(r"\bp\s*(=|<|>|≤|≥|≈)\s*[0-9]*\.?[0-9]+(e-?\d+)?\b|\bp-values? of [0-9]*\.[0-9]")
SEEDS_NUMBER = re.compile(r"±\s*\d+(\.\d+)?\s*\(\d+\)")
ITALIC_VERDICT = re.compile(r"\*(holds?|fails?|inconclusive)\*")  # how the READMEs write a verdict
SIGNED_EFFECT = re.compile(r"(?<![\w.])[+−-]\d+\.\d")
VERDICT = re.compile(r"\b(holds?|fails?|inconclusive|hold|held)\b", re.IGNORECASE)


def claim_ids() -> set[str]:
    ids = set()
    for path in (ROOT / "papers").glob("*/claims.yaml"):
        ids |= {c["id"] for c in yaml.safe_load(path.read_text())["claims"]}
    return ids


def hand_written(text: str) -> list[tuple[int, str]]:
    """(line number, line) of every line outside the generated blocks."""
    lines, inside = [], False
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("<!-- generated"):
            inside = True
        elif line.startswith("<!-- /generated"):
            inside = False
        elif not inside:
            lines.append((number, line))
    return lines


def offences(text: str, ids: set[str]) -> list[str]:
    """What the hand-written lines of ``text`` state that only the generator may: p-values, ``± (n)`` numbers, and
    a claim's verdict (an italic verdict word, as the READMEs write one, or a verdict word on a line that names a claim
    id or gives a signed effect such as +0.29; a rule such as "a claim holds only when seeds can tell" is neither)."""
    found = []
    for number, line in hand_written(text):
        if P_VALUE.search(line):
            found.append(f"line {number}: a p-value: {line.strip()[:120]}")
        if SEEDS_NUMBER.search(line):
            found.append(f"line {number}: a '± (n)' number: {line.strip()[:120]}")
        named = any(re.search(rf"(?<![\w-]){re.escape(i)}(?![\w-])", line) for i in ids)
        if ITALIC_VERDICT.search(line) or (VERDICT.search(line) and (named or SIGNED_EFFECT.search(line))):
            found.append(f"line {number}: a verdict: {line.strip()[:120]}")
    return found


@pytest.mark.parametrize("readme", READMES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_readme_states_a_verdict_a_p_value_or_a_seeds_number_outside_its_generated_blocks(readme):
    found = offences(readme.read_text(encoding="utf-8"), claim_ids())
    assert not found, (
        f"{readme.relative_to(ROOT)} states outside its generated blocks what only the generator may (move it into "
        "the paper's summary, or say it without the number):\n  " + "\n  ".join(found)
    )


def test_the_check_fails_on_a_planted_verdict_and_p_value_and_passes_them_inside_a_block():
    ids = {"one-encoder-beats-two"}
    planted = "Table 2: one encoder beats two (*holds*, +0.29, paired p = 0.047).\n"
    assert len(offences(planted, ids)) == 2
    assert offences("`one-encoder-beats-two` fails here.\n", ids)
    assert offences("SimCSE averages 75.78 ± 0.20 (3).\n", ids)
    inside = f"<!-- generated: by the notebook -->\n{planted}75.78 ± 0.20 (3)\n<!-- /generated -->\n"
    assert offences(inside, ids) == []
    assert offences("A claim holds or fails only when seeds can tell at 0.05.\n", ids) == []  # a rule
    assert offences('"The optimal m is 0.9" is *inconclusive* here.\n', ids)  # a verdict on a quoted claim
    assert offences("The direction holds here (-1.20 points).\n", ids)  # a verdict with its effect
