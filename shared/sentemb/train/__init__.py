"""One training loop (``loop``) and the per-objective batch losses (``objective_steps``)."""
