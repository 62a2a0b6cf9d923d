"""SimCSE (Gao, Yao & Chen, EMNLP 2021): experiments, reported numbers, tables and figures."""
