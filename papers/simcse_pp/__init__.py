"""SimCSE++ (Xu et al., 2023): experiments, reported numbers, tables and figures."""

NAME = (
    "simcse_pp"  # the folder's name: Paper.name, results/simcse_pp/, figures/simcse_pp/, reported/ and claims.yaml here
)
