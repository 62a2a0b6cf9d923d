"""TNCSE (Zong et al., 2025): experiments, reported numbers, tables and figures."""

NAME = "tncse"  # the folder's name, and Paper.name: results/, figures/ and notebooks/ use it
