"""Evaluators.

``sts``                  SentEval's STS protocol as SimCSE runs it (and DeCLUTR's original-SentEval variant)
``relatedness``          the original SentEval's trained regressor for STS-B and SICK-R
``senteval_classifier``  SentEval's logistic regression on frozen embeddings
``transfer``             SentEval's transfer and probing tasks (cross-validation, k-fold, train/dev/test)
``mteb_adapter``         MTEB through the mteb package, offline through the mirror
``suite``                every group in one call, each unique sentence encoded once
``embedding_cache``      step-0 embeddings shared across a grid; a run's evaluation embeddings kept for reuse
``whitening``            whitening post-processing of embeddings (Su et al., 2021; SimCSE Table C.1, SimCSE++ Table 4)
``subsets``              seeded samples of the STS and transfer tasks (a spec's ``eval_pairs``, ``transfer_examples``)
"""

GROUPS = ("sts", "transfer", "declutr", "probing", "mteb")
