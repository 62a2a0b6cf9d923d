"""Discrete text augmentations (SimCSE Table 1). More arrive with the augmentation issue."""

from sentemb.augment.delete_one_word import delete_one_word

__all__ = ["delete_one_word"]
