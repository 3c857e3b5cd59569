"""The random forest of ``make_predictor("rf")``: scikit-learn's, growing trees whose parameter names are read once
and whose parameters are checked once, by the forest.

A forest makes each of its trees from a template (``clone``, ``set_params`` and the trees' seeds through
``get_params``), and each of those calls reads the tree class's ``__init__`` signature with :mod:`inspect`:
about 0.3 ms a tree, 30 ms a 100-tree fit, a fifth of a forest's fit on a few tens of source models. The names
do not change while the process runs, so this tree class reads them once. Each tree's ``fit`` then checks its
parameters against their constraints, values the forest copied from its own parameters, which its ``fit`` has checked
against the same constraints (a forest's constraints include its trees'): these trees skip that second check, about
a third of a forest's fit on a few tens of source models. The trees, their seeds and the forest's predictions are
scikit-learn's.
"""
from __future__ import annotations

from typing import Any

from sklearn.ensemble import RandomForestRegressor
from sklearn.tree import DecisionTreeRegressor


class _Tree(DecisionTreeRegressor):
    """scikit-learn's regression tree, its parameter names read once and its parameters checked by its forest."""

    @classmethod
    def _get_param_names(cls) -> list[str]:
        return list(_TREE_PARAMS)

    def _validate_params(self) -> None:
        # grown by a forest of random_forest(): its parameters are the forest's, checked by the forest's fit
        pass


_TREE_PARAMS = tuple(DecisionTreeRegressor._get_param_names())


def random_forest(random_state: Any) -> RandomForestRegressor:
    """``RandomForestRegressor(random_state=random_state, n_jobs=-1)`` growing :class:`_Tree` trees (the same trees:
    the template is not among the forest's parameters, so a clone of the forest grows scikit-learn's own)."""
    rf = RandomForestRegressor(random_state=random_state, n_jobs=-1)
    rf.estimator = _Tree()
    return rf
