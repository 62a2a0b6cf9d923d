"""The subcommands of ``python -m sentemb`` (:mod:`sentemb.cli` dispatches to them), one module per group."""
