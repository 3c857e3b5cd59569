"""predict_interval of the design-based subset estimators sets no attribute on the estimator while it runs (what
several parts of the interval read is handed down from it), and the targets' medians and minority counts in its
result are those of their sampled responses."""
import numpy as np
import pytest

from effstats.datasets import simulate_responses
from effstats.disco import AIPW, RandomDirect, StratifiedAIPW, StratifiedHT


@pytest.mark.parametrize("cls", [RandomDirect, AIPW, StratifiedAIPW, StratifiedHT], ids=lambda c: c.__name__)
def test_predict_interval_sets_no_attribute_while_it_runs(cls, monkeypatch):
    rm = simulate_responses(50, 300, rng=0)
    src, tgt = rm.subset(models=range(40)), rm.subset(models=range(40, 50))
    est = cls(30, random_state=0).fit(src)
    during = []
    real = cls._design_se
    monkeypatch.setattr(cls, "_design_se", lambda self, o: during.append(set(vars(self))) or real(self, o))
    p = est.predict_interval(tgt)
    assert during and all(names == set(vars(est)) for names in during)
    again = est.predict_interval(tgt)
    monkeypatch.undo()
    fresh = cls(30, random_state=0).fit(src).predict_interval(tgt)
    for q in (again, fresh):
        for level in (0.8, 0.95):
            np.testing.assert_array_equal(p.confidence_interval(level).low, q.confidence_interval(level).low)
            np.testing.assert_array_equal(p.confidence_interval(level).high, q.confidence_interval(level).high)
    y = np.asarray(tgt.values, float)[:, est.selected_]
    np.testing.assert_array_equal(p.alike_at, np.median(y, axis=1))
    if p.n_minority is not None:
        np.testing.assert_array_equal(p.n_minority, np.minimum(y.sum(axis=1), (1 - y).sum(axis=1)))
    np.testing.assert_array_equal(p.alike, np.clip(np.abs(y - np.median(y, axis=1)[:, None]).sum(axis=1), 0, 1))
