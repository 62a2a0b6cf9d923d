"""Exports of recorded runs' models to other libraries (sentence-transformers)."""
