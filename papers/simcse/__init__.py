"""SimCSE (Gao, Yao & Chen, EMNLP 2021): experiments, reported numbers, tables and figures."""

NAME = "simcse"  # the folder's name, and Paper.name: results/, figures/ and notebooks/ use it
