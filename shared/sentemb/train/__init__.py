"""The one training loop (``loop``): it trains any objective of ``sentemb.objectives.registry``."""
