"""Discrete text augmentations: SimCSE Table 1 and the non-contrastive paper's §3 / Table 1.

| augmentation        | paper, table                               | function                 | file             |
|---------------------|--------------------------------------------|--------------------------|------------------|
| crop k%             | SimCSE Table 1                             | ``crop``                 | crop.py          |
| word deletion k%    | SimCSE Table 1                             | ``delete_words``         | word_deletion.py |
| delete one word     | SimCSE Tables 1, 2                         | ``delete_one_word``      | delete_one_word.py |
| synonym replacement | SimCSE Table 1 (nlpaug, WordNet)           | ``synonym_replacement``  | synonym.py       |
| MLM k%              | SimCSE Table 1                             | ``mlm_replace``          | mlm.py           |
| shuffle p | Farina & Pappadopulo 2024 §3, Table 1 | ``shuffle_words`` / ``shuffle_tokens`` | shuffle.py |
| EDA alpha           | Farina & Pappadopulo 2024 §3, Table 1 (Wei & Zou 2019) | ``eda``      | eda.py           |
| anchor/positive spans | DeCLUTR §3.1.1 | ``sample_anchor_positive_spans`` | span_sampler.py |

Dropout, the third augmentation of the non-contrastive paper, is the encoder's own dropout (SimCSE
§3), not a text edit. Every function takes the sentence first and a ``random.Random`` second, so
a view is a deterministic function of the seed; none returns an empty string for a non-empty input.
Synonyms come from WordNet 3.0 (``THESAURUS``), read by wordnet.py.
"""

from sentemb.augment.crop import crop, crop_length
from sentemb.augment.delete_one_word import delete_one_word
from sentemb.augment.eda import (
    EDA_OPERATIONS,
    eda,
    eda_change_count,
    eda_random_deletion,
    eda_random_insertion,
    eda_random_swap,
    eda_synonym_replacement,
)
from sentemb.augment.mlm import mlm_mask_count, mlm_replace, mlm_replace_ids
from sentemb.augment.rounding import round_half_up
from sentemb.augment.shuffle import shuffle_count, shuffle_tokens, shuffle_words
from sentemb.augment.span_sampler import (
    DocumentTooShortError,
    SampledSpans,
    minimum_document_length,
    sample_anchor_positive_spans,
    scale_to_span_length,
)
from sentemb.augment.stop_words import STOP_WORDS
from sentemb.augment.synonym import replaceable_synonyms, split_punctuation, synonym_replacement
from sentemb.augment.word_deletion import delete_words, deletion_count
from sentemb.augment.wordnet import THESAURUS, WordNet, load_wordnet, wordnet_directory

__all__ = [
    "DocumentTooShortError",
    "EDA_OPERATIONS",
    "SampledSpans",
    "STOP_WORDS",
    "THESAURUS",
    "WordNet",
    "crop",
    "crop_length",
    "delete_one_word",
    "delete_words",
    "deletion_count",
    "eda",
    "eda_change_count",
    "eda_random_deletion",
    "eda_random_insertion",
    "eda_random_swap",
    "eda_synonym_replacement",
    "load_wordnet",
    "minimum_document_length",
    "mlm_mask_count",
    "mlm_replace",
    "mlm_replace_ids",
    "replaceable_synonyms",
    "round_half_up",
    "sample_anchor_positive_spans",
    "scale_to_span_length",
    "shuffle_count",
    "shuffle_tokens",
    "shuffle_words",
    "split_punctuation",
    "synonym_replacement",
    "wordnet_directory",
]
