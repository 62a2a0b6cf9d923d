"""The archive's overview: every paper's coverage and claims, and the methods compared under one protocol."""
