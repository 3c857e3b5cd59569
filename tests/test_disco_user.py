"""Findings of a user-level review of the subset estimators (DISCO, baselines, tinyBenchmarks, the chooser)."""
import numpy as np
import pytest

from effstats.disco import AnchorCorr, DISCO, RandomDirect
from effstats.irt import TinyBenchmarks


def _data(seed=0, m=20, n=300):
    rng = np.random.default_rng(seed)
    return (rng.random((m, n)) < rng.uniform(0.3, 0.9, (m, 1))).astype(float)


@pytest.mark.parametrize("est", [DISCO(20, predictor="knn", pca=8, random_state=0), RandomDirect(20, random_state=0),
                                 AnchorCorr(20, random_state=0), TinyBenchmarks(20, estimator="weighted", random_state=0)])
def test_items_with_ragged_or_nan_outputs_name_the_argument(est):
    est.fit(_data())
    k = len(est.selected_)
    with pytest.raises(ValueError, match="^target_outputs: expected a rectangular"):
        est.predict([[1.0] * k, [0.0] * (k - 1)], items=est.selected_)
    bad = np.ones((2, k))
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="^target_outputs: .*NaN"):
        est.predict(bad, items=est.selected_)
    # and the aligned path still aligns: reversed columns with their ids give the same estimate
    y = _data(1)[:3, est.selected_]
    np.testing.assert_allclose(est.predict(y[:, ::-1], items=est.selected_[::-1]), est.predict(y))
