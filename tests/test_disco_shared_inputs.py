"""What DISCO's fits share instead of copying: the disagreement of some source models on some items scored from the
source cube itself (against the scores of that part copied out first), and a ResponseMatrix's correctness as floats
made once per read-only values array (against ``values.astype(float)``)."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from effstats import ResponseMatrix
from effstats._outputs import _as_outputs, _float_values
from effstats.disco import DISCO
from effstats.disco._selection import _disagreement


@settings(max_examples=40, deadline=None)
@given(m=st.integers(2, 60), n=st.integers(2, 1500), c=st.integers(2, 12), single=st.booleans(),
       measure=st.sampled_from(["pds", "jsd"]), seed=st.integers(0, 2**32 - 1))
def test_disagreement_of_a_part_is_that_of_its_copy(m, n, c, single, measure, seed):
    # blocks of items from 2 up to all of them (2**21 values a block): numpy's sums over the models depend on the
    # block's memory layout, so a block gathered in another layout than the copy's would differ in the last bit
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.full(c, 0.3), size=(m, n)).astype(np.float32 if single else np.float64)
    models = np.sort(rng.choice(m, size=int(rng.integers(2, m + 1)), replace=False))
    items = np.sort(rng.choice(n, size=int(rng.integers(2, n + 1)), replace=False))
    for mo, it in ((models, None), (None, items), (models, items)):
        part = p if mo is None else p[mo]
        part = part if it is None else part[:, it]
        assert np.array_equal(_disagreement(p, measure, models=mo, items=it), _disagreement(part, measure))


def test_disagreement_of_a_part_of_class_ids_is_that_of_its_copy():
    rng = np.random.default_rng(3)
    pred = rng.integers(0, 7, size=(9, 40))
    models, items = np.array([0, 2, 3, 7]), np.arange(3, 40, 2)
    for measure in ("pds", "jsd"):
        assert np.array_equal(_disagreement(pred, measure, n_classes=7, models=models, items=items),
                              _disagreement(pred[models][:, items], measure, n_classes=7))


def test_float_values_made_once_per_read_only_array():
    rm = ResponseMatrix(np.random.default_rng(0).random((6, 30)) < 0.5).subset(models=range(6))  # read-only
    a = _float_values(rm.values)
    assert np.array_equal(a, rm.values.astype(float)) and a.dtype == np.float64
    assert _float_values(rm.values) is a and not a.flags.writeable
    assert _as_outputs(rm, "x").correct is a
    sub = rm.subset(models=[0, 1, 2])  # another read-only array: its own floats
    assert _float_values(sub.values) is not a and np.array_equal(_float_values(sub.values), a[:3])
    # an array that can change: converted afresh every time (an edit shows), and the copy is the caller's
    w = rm.values.copy()
    first = _float_values(w)
    w[0, 0] = not w[0, 0]
    second = _float_values(w)
    assert first is not second and second[0, 0] != first[0, 0] and second.flags.writeable


@pytest.mark.parametrize("selection", ["pds", "jsd"])
def test_disco_on_correctness_uses_shared_floats_and_memo_alike(selection):
    # two fits on one ResponseMatrix (the second finds its scores in the disagreement memo, keyed on the shared
    # read-only floats) and a fit on a writeable float copy (scored afresh) select and predict alike
    rng = np.random.default_rng(1)
    rm = ResponseMatrix(rng.random((30, 200)) < rng.random(200))
    src, tgt = rm.subset(models=range(24)), rm.subset(models=range(24, 30))
    fits = [DISCO(20, selection=selection, random_state=0).fit(x) for x in (src, src, src.values.astype(float))]
    for est in fits[1:]:
        assert np.array_equal(est.selected_, fits[0].selected_)
        assert np.array_equal(est.scores_, fits[0].scores_)
        assert np.array_equal(est.predict(tgt.values[:, est.selected_]), fits[0].predict(tgt))


def test_float_values_from_threads_are_one_array_per_values_array():
    # estimators fitted on threads ask for the floats of one read-only array at once: one float copy, which they all
    # get (numpy converts a large array without the interpreter lock, so unguarded threads would each make one)
    import threading

    rng = np.random.default_rng(0)
    for _ in range(8):
        rm = ResponseMatrix(rng.random((100, 5000)) < 0.5).subset(models=range(100))
        start, got = threading.Barrier(4), [None] * 4

        def ask(k):
            start.wait()
            got[k] = _float_values(rm.values)
        threads = [threading.Thread(target=ask, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert all(a is got[0] for a in got) and np.array_equal(got[0], rm.values.astype(float))
