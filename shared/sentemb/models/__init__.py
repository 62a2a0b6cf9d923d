"""Backbones, SimCSE's poolers, and the SentenceEncoder used by every trainer and evaluator."""

from sentemb.models.backbone import load_backbone, resolve_backbone
from sentemb.models.encoder import SentenceEncoder
from sentemb.models.poolers import POOLERS

__all__ = ["POOLERS", "SentenceEncoder", "load_backbone", "resolve_backbone"]
