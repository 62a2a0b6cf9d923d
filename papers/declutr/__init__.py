"""DeCLUTR (Giorgi et al., 2021): experiments, reported numbers, tables and figures."""

NAME = "declutr"  # the folder's name, and Paper.name: results/, figures/ and notebooks/ use it
