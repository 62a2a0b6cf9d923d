"""The archive's overview: every paper's coverage and claims, and the methods compared under one protocol."""

NAME = "overview"  # the folder's name, and Paper.name: results/, figures/ and notebooks/ use it
