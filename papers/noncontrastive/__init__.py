"""Farina & Pappadopulo (2024), non-contrastive sentence embeddings: experiments, reported numbers, tables, figures."""

NAME = "noncontrastive"  # the folder's name, and Paper.name: results/, figures/ and notebooks/ use it
