"""The vote counts behind pds_from_predictions and jsd_from_predictions: the per-item sorted runs against
np.unique over all (item, class) keys, and the two scores against their one-hot / uniform-top-k definitions."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import entr

from effstats.disco import jsd_from_predictions, pds_from_predictions
from effstats.disco._selection import _class_mass


def _unique_counts(pred: np.ndarray, c: int) -> tuple[np.ndarray, np.ndarray]:
    """np.unique over the keys item·c + class of every vote: (item of each distinct pair, its count)."""
    if pred.ndim == 2:
        pred = pred[..., None]
    n = pred.shape[1]
    keys = (np.arange(n, dtype=np.int64)[None, :, None] * c + pred.astype(np.int64)).ravel()
    uniq, counts = np.unique(keys, return_counts=True)
    return uniq // c, counts


def _dense_shares(pred: np.ndarray, c: int) -> np.ndarray:
    """(n_items, c) mean over models of each model's distribution: one-hot, or uniform over its top-k list."""
    if pred.ndim == 2:
        pred = pred[..., None]
    m, n, k = pred.shape
    dist = np.zeros((m, n, c))
    for j in range(k):
        np.put_along_axis(dist, pred[..., j:j + 1], 1.0 / k, axis=2)
    return dist.mean(axis=0)


def _predictions(draw, max_models=6, max_items=8, max_classes=7):
    """Class ids (models, items) or ranked top-k lists (models, items, k) without repeats within a list."""
    m = draw(st.integers(2, max_models))
    n = draw(st.integers(1, max_items))
    c = draw(st.integers(1, max_classes))
    k = draw(st.integers(1, c))
    rows = [[draw(st.permutations(range(c)))[:k] for _ in range(n)] for _ in range(m)]
    pred = np.array(rows, dtype=draw(st.sampled_from([np.int8, np.int32, np.int64])))
    return pred[..., 0] if k == 1 and draw(st.booleans()) else pred


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_class_mass_matches_unique_and_definitions(data):
    pred = _predictions(data.draw)
    c = int(pred.max()) + 1
    item, counts, m, n, k, c_out = _class_mass(pred, None)
    ref_item, ref_counts = _unique_counts(pred, c)
    assert c_out == c and (m, n) == pred.shape[:2] and k == (1 if pred.ndim == 2 else pred.shape[2])
    np.testing.assert_array_equal(item, ref_item)
    np.testing.assert_array_equal(counts, ref_counts)
    assert item.dtype == ref_item.dtype and counts.dtype == ref_counts.dtype
    share = _dense_shares(pred, c)
    np.testing.assert_allclose(pds_from_predictions(pred), (share > 0).sum(axis=1) / k, rtol=0, atol=1e-12)
    jsd = np.maximum(entr(share).sum(axis=1) - np.log(k), 0.0) / np.log(2.0)
    np.testing.assert_allclose(jsd_from_predictions(pred), jsd, rtol=0, atol=1e-12)


def test_class_mass_large_top_k_matches_unique():
    """Many models agreeing on most items, top-5 lists: the case the ImageNet section scores."""
    rng = np.random.default_rng(0)
    base = rng.integers(0, 995, size=(30, 2000))
    pred = (base[..., None] + np.arange(5)).astype(np.int32)
    pred = np.where((rng.random(pred.shape[:2]) < 0.7)[..., None], pred[:1], pred)
    item, counts, *_ = _class_mass(pred, None)
    ref_item, ref_counts = _unique_counts(pred, int(pred.max()) + 1)
    np.testing.assert_array_equal(item, ref_item)
    np.testing.assert_array_equal(counts, ref_counts)


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_repeated_class_id_in_a_top_k_list_is_refused(data):
    pred = _predictions(data.draw, max_classes=6)
    if pred.ndim == 2 or pred.shape[2] < 2:
        pred = np.stack([pred.reshape(pred.shape[:2]), (pred.reshape(pred.shape[:2]) + 1) % 7], axis=2)
    model, item = data.draw(st.integers(0, pred.shape[0] - 1)), data.draw(st.integers(0, pred.shape[1] - 1))
    i, j = sorted(data.draw(st.lists(st.integers(0, pred.shape[2] - 1), min_size=2, max_size=2, unique=True)))
    bad = pred.copy()
    bad[model, item, j] = bad[model, item, i]
    for score in (pds_from_predictions, jsd_from_predictions):
        score(pred)  # no repeat: accepted
        with pytest.raises(ValueError, match="predictions: a model's top-k list repeats a class id"):
            score(bad)
