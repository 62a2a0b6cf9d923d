"""Evaluators. ``sts``: SentEval's STS protocol as SimCSE runs it (more protocols come later)."""
