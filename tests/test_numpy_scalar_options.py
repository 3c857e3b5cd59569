"""Options given as numpy scalars (an ``np.str_`` taken from an array, an ``np.float32`` from a computation): kept as
plain Python values, and quoted as plain values in messages (numpy 2 prints ``np.str_('random')`` and
``np.float32(1.0)`` where numpy 1 printed ``'random'`` and ``1.0``)."""
from __future__ import annotations

import re

import numpy as np
import pytest

from effstats import ResponseMatrix
from effstats.workflow import estimate, select


def _reference() -> ResponseMatrix:
    rng = np.random.default_rng(0)
    values = (rng.random((6, 40)) < np.linspace(0.3, 0.8, 6)[:, None]).astype(float)
    return ResponseMatrix(values, model_ids=[f"m{i}" for i in range(6)], item_ids=[f"t/{j}" for j in range(40)])


def test_select_keeps_a_numpy_method_name_as_a_str():
    sel = select(_reference(), 10, method=np.str_("random"), seed=np.int64(0))
    assert type(sel.method) is str and type(sel.seed) is int
    assert repr(sel) == "Selection(10 of 40 items, method='random', 1 task(s), seed=0)"


def test_estimate_keeps_numpy_weights_as_a_str_and_quotes_bad_ones_plainly():
    ref = _reference()
    sel = select(ref, 10, method="random", seed=0)
    new = ResponseMatrix(np.ones((1, 10)), model_ids=["new"], item_ids=list(np.array(sel.items, dtype=str)))
    est = estimate(sel, new, weights=np.str_("tasks"))
    assert type(est.weights) is str and est.weights == "tasks"
    with pytest.raises(ValueError, match=re.escape("got {'t': 1.0, 'u': 3}")) as err:
        estimate(sel, new, weights={"t": np.float32(1.0), "u": np.int64(3)})
    assert "np." not in str(err.value)
    with pytest.raises(ValueError, match=re.escape("method: expected one of")) as err:
        select(ref, 10, method=np.str_("randm"))
    assert str(err.value).endswith("got 'randm'")
