"""The CopyNearest&Expand baseline (Sect. 4.2 of Prabhu, Udandarao et al., 2024) and
:class:`effstats.sortsearch.HybridSearch`, which combines it with Sort & Search and picks the combination by
cross-validation on the source models.

The two live in ``_copy_nearest.py`` and ``_hybrid.py``; this module is their public path.
"""
from ._copy_nearest import CopyNearestExpand, ExpandResult
from ._hybrid import HybridResult, HybridSearch

__all__ = ["ExpandResult", "CopyNearestExpand", "HybridResult", "HybridSearch"]
