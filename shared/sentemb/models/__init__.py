"""Backbones (``backbone``), SimCSE's poolers (``poolers``), and the SentenceEncoder (``encoder``) used by every
trainer and evaluator.

Import the submodule you need. The package itself imports nothing, so a command that only needs the pooler names
(the CLI's parser, ``site``, ``summary``) does not pay for importing transformers.
"""
