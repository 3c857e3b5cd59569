"""select's budget search says once that reference cells are missing, about the whole reference data."""
import warnings

import numpy as np

from effstats import ResponseMatrix
from effstats.datasets import simulate_responses
from effstats.workflow import select


def test_target_error_search_warns_once_of_the_missing_cells():
    d = simulate_responses(30, 200, rng=0)
    missing = np.zeros(d.values.shape, bool)
    missing[[1, 5, 9, 17], [3, 40, 77, 150]] = True
    rm = ResponseMatrix(d.values, model_ids=d.model_ids, item_ids=d.item_ids, missing=missing)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        select(rm, target_error=50, budgets=[25, 50], method="random", seed=0)
    said = [str(w.message) for w in caught if "cells are missing" in str(w.message)]
    assert len(said) == 1 and said[0].startswith(f"reference: 4 of {rm.values.size} cells are missing"), said
