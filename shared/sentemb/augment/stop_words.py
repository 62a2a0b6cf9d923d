"""English function words that synonym-based augmentations never pick as the word to change.

EDA (Wei & Zou 2019, §2) replaces and inserts synonyms only of words "that are not stop words";
its code uses an NLTK-style English list. nlpaug's WordNet augmenter (SimCSE Table 1) filters by
part of speech instead, which also rules out determiners, pronouns, prepositions and the like.
Without a tagger we use this one list for both: pronouns, determiners, auxiliaries, prepositions,
conjunctions and a few adverbs, written for this archive (WordNet would otherwise turn "a" into
"angstrom" and "in" into "inch").
"""

from __future__ import annotations

STOP_WORDS = frozenset(
    """
i me my mine myself we us our ours ourselves you your yours yourself yourselves
he him his himself she her hers herself it its itself they them their theirs themselves
this that these those what which who whom whose
a an the some any no each every both either neither all few more most other such own same
am is are was were be been being have has had having do does did doing done
will would shall should can could may might must ought
and but or nor if because as until while than so then though although unless whether
of at by for with about against between into through during before after above below
to from up down in out on off over under again further once here there when where why how
not only very too just also now s t d ll m re ve don
""".split()
)
