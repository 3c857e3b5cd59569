"""IRT2PL / TinyBenchmarks: estimator contract, convergence reporting, alignment by item id, bad input, intervals."""
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from effstats import ResponseMatrix, random_split
from effstats.datasets.simulate import simulate_responses
from effstats.exceptions import ConvergenceWarning, NotFittedError
from effstats.irt import IRT2PL, TinyBenchmarks


@pytest.fixture(scope="module")
def data():
    return simulate_responses(40, 300, rng=0)


def test_estimator_contract(data):
    irt = IRT2PL(n_dims="two", method="nope", max_iter=-1)  # __init__ only stores
    assert irt.get_params()["n_dims"] == "two"
    with pytest.raises(ValueError, match="n_dims"):
        irt.fit(data)
    for est in (IRT2PL(), IRT2PL(2)):
        with pytest.raises(NotFittedError):
            est.abilities(np.ones((1, 300), bool))
        with pytest.raises(NotFittedError):
            est.score(data)
    fitted = IRT2PL().fit(data)
    assert fitted.method == "auto" and fitted.method_ == "mml" and IRT2PL(2).fit(data).method_ == "jml"
    assert clone(fitted).get_params() == fitted.get_params() and not hasattr(clone(fitted), "a_")
    s = fitted.score(data)
    assert isinstance(s, float) and -0.7 < s < 0  # mean Bernoulli log-likelihood per response
    with pytest.raises(NotFittedError):
        TinyBenchmarks(10).predict(np.ones((2, 10), bool))


def test_convergence_is_reported():
    rm = simulate_responses(40, 300, n_dims=3, rng=1)
    with pytest.warns(ConvergenceWarning, match=r"max_iter=2 .*converged_, n_iter_ and loss_curve_"):
        irt = IRT2PL(3, max_iter=2).fit(rm)
    assert not irt.converged_ and irt.n_iter_ == 2 and irt.loss_curve_.shape == (2,)
    assert irt.loss_curve_[1] <= irt.loss_curve_[0]  # the alternating Newton sweeps decrease the objective
    with pytest.warns(ConvergenceWarning, match="mml"):
        mml = IRT2PL(max_iter=3, tol=1e-15).fit(rm)
    assert not mml.converged_ and mml.n_iter_ == 3  # EM iterations, never more than max_iter
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)  # the defaults converge
        full = IRT2PL(3).fit(rm)
    assert full.converged_ and np.all(np.diff(full.loss_curve_) <= 1e-12)
    # TinyBenchmarks never uses an unconverged fit silently (the validation fits for λ and the final one).
    with pytest.warns(ConvergenceWarning, match="TinyBenchmarks: the 2-dimensional IRT fit used for validation"):
        TinyBenchmarks(20, "random", n_dims=2, irt_params={"max_iter": 2}, random_state=0).fit(rm)


def test_abilities_align_by_item_id(data):
    Y = data.values
    ids = [f"q{j}" for j in range(300)]
    irt = IRT2PL().fit(pd.DataFrame(Y, columns=ids))
    assert list(irt.item_ids_) == ids
    sel = [5, 17, 42, 99, 250]
    by_pos = IRT2PL().fit(Y).abilities(Y[:4, sel], sel)
    shuffled = pd.DataFrame(Y[:4, sel[::-1]], columns=[ids[j] for j in sel[::-1]])
    np.testing.assert_allclose(irt.abilities(shuffled), by_pos)  # DataFrame columns are item ids
    np.testing.assert_allclose(irt.abilities(Y[:4, sel], [ids[j] for j in sel]), by_pos)
    np.testing.assert_allclose(irt.abilities(shuffled, items=[ids[j] for j in sel]), by_pos)
    with pytest.raises(ValueError, match=r"items: 1 item id\(s\) not among the 300 fitted items, e.g. \['nope'\]"):
        irt.abilities(Y[:4, :2], ["q0", "nope"])
    with pytest.raises(ValueError, match="items: item positions must lie in \\[0, 300\\), got \\[999\\]"):
        IRT2PL().fit(Y).abilities(Y[:4, :5], items=[0, 1, 2, 3, 999])
    with pytest.raises(ValueError, match="responses: no column for 1 of the requested items"):
        irt.abilities(shuffled, items=["q5", "q6"])
    p = irt.predict_proba(items=["q3", "q1"])
    np.testing.assert_allclose(p, irt.predict_proba()[:, [3, 1]])


def test_bad_input(data):
    Y = data.values
    with pytest.raises(ValueError, match="responses"):
        IRT2PL().fit([[1, 0, 1], [1, 0]])  # ragged
    with pytest.raises(ValueError, match="responses: expected binary"):
        IRT2PL().fit(np.full((5, 5), 0.5))
    for kw, name in ((dict(prior_sd_a=np.inf), "prior_sd_a"), (dict(prior_sd_b=True), "prior_sd_b"),
                     (dict(random_state="seed"), "random_state"), (dict(tol=0), "tol"), (dict(method="em"), "method")):
        with pytest.raises(ValueError, match=name):
            IRT2PL(**kw).fit(Y)
    irt = IRT2PL().fit(Y)
    for items in ([0.5, 1.0], [[0, 1]], [1, 1], [-1], np.ones(300, bool), [0.0, np.nan]):
        with pytest.raises(ValueError, match="items"):
            irt.predict_proba(items=items)
    with pytest.raises(ValueError, match="max_iter"):
        irt.abilities(Y[:2], max_iter=0)
    with pytest.raises(ValueError, match="method"):
        irt.abilities(Y[:2], method="eap")
    with pytest.raises(ValueError, match="responses: expected shape"):
        irt.abilities(Y[:2, :5], items=np.arange(4))
    with pytest.raises(ValueError, match="theta"):
        irt.predict_proba(np.zeros((2, 3)))
    for kw, name in ((dict(gp_lambda=1.5), "gp_lambda"), (dict(gp_lambda="0.05"), "gp_lambda"),
                     (dict(gp_lambda=np.nan), "gp_lambda"), (dict(n_dims="auto"), "n_dims"),
                     (dict(dims_grid=()), "dims_grid"), (dict(ability="eap"), "ability"), (dict(n_init=0), "n_init"),
                     (dict(random_state=-1), "random_state")):
        with pytest.raises(ValueError, match=name):
            TinyBenchmarks(10, "random", **kw).fit(data)
    est = TinyBenchmarks(10, "random", n_dims=1, random_state=0).fit(data)
    with pytest.raises(ValueError, match="target_outputs: IRT needs binary correctness"):
        est.predict(np.full((3, 10), 0.5))
    with pytest.raises(ValueError, match="source_outputs: the IRT validation needs at least 3 source models"):
        TinyBenchmarks(10, "random", n_dims=1).fit(data.subset(models=[0, 1]))
    # a fixed dimension and a fixed λ need no validation fits (and work with two source models)
    fixed = TinyBenchmarks(10, "random", n_dims=1, gp_lambda=0.5, random_state=0).fit(data.subset(models=[0, 1]))
    assert fixed.validation_errors_ == {} and fixed.n_dims_ == 1 and fixed.lambda_ == 0.5


def test_tinybenchmarks_predict_aligns_by_item_id(data):
    ids = [f"q{j}" for j in range(300)]
    rm = ResponseMatrix(data.values, item_ids=ids)
    src, tgt = rm.subset(models=np.arange(30)), rm.subset(models=np.arange(30, 40))
    est = TinyBenchmarks(25, "anchor-corr", "gp-irt", n_dims=1, random_state=0).fit(src)
    ref = est.predict(tgt)
    perm = np.random.default_rng(0).permutation(300)
    np.testing.assert_allclose(est.predict(tgt.subset(items=perm)), ref)  # shuffled columns, same ids
    df = pd.DataFrame(tgt.values[:, est.selected_][:, ::-1], columns=list(est.selected_ids_[::-1]))
    np.testing.assert_allclose(est.predict(df), ref)
    np.testing.assert_allclose(est.predict_all(df)["p-irt"], est.predict_all(tgt)["p-irt"])
    with pytest.raises(ValueError, match="target_outputs: outputs on 1 of the"):
        est.predict(df.iloc[:, 1:])


def test_tinybenchmarks_intervals_cover_on_exchangeable_models():
    # Cross-validated (conformal) intervals of the gp-IRT prediction, targets drawn like the sources:
    # 8 random splits x 10 targets; 90 % intervals must cover at least 0.9 - 3 MC s.e.
    rm = simulate_responses(50, 600, rng=7)
    hits, widths, binom = [], [], []
    for s in range(8):
        src, tgt = random_split(rm, 0.2, rng=s).apply(rm)
        est = TinyBenchmarks(40, "random", "gp-irt", n_dims=1, random_state=s).fit(src)
        pred = est.predict_interval(tgt)
        np.testing.assert_allclose(pred.statistic, est.predict(tgt))
        lo, hi = pred.confidence_interval(0.9)
        truth = tgt.accuracy().to_numpy()
        hits.append((lo <= truth) & (truth <= hi))
        widths.append(np.mean(hi - lo))
        # the design-based 90 % interval of the plain mean of 40 random items (finite-population corrected)
        binom.append(np.mean(2 * 1.645 * np.sqrt(truth * (1 - truth) / 40 * (1 - 40 / 600))))
        assert list(pred.to_frame(0.9).columns) == ["estimate", "standard_error", "low", "high", "out_of_range"]
        assert pred.to_frame(0.9).shape == (10, 5)
    cov = np.mean(np.concatenate(hits))
    se = np.sqrt(0.9 * 0.1 / 80)
    assert cov >= 0.9 - 3 * se
    # informative: narrower than the binomial interval of the 40 items' mean (measured 0.222 vs 0.234; conformal with 40
    # sources is conservative)
    assert np.mean(widths) < np.mean(binom)


def test_an_int_01_matrix_is_correctness():
    # pandas.read_csv returns int64 for a file of 0/1 results: the same estimates as bool; other integers need labels=
    Y = simulate_responses(30, 300, rng=3).values
    fits = [TinyBenchmarks(20, n_dims=1, random_state=0).fit(Y[:24].astype(t)) for t in (bool, int)]
    np.testing.assert_array_equal(fits[0].selected_, fits[1].selected_)
    np.testing.assert_array_equal(fits[0].predict(Y[24:, fits[0].selected_].astype(bool)),
                                  fits[1].predict(Y[24:, fits[1].selected_].astype(int)))
    with pytest.raises(ValueError,
                       match=r"^source_outputs: an integer array is 0/1 correctness .* "
                             r"got values \[2\] and no labels$"):
        TinyBenchmarks(20, n_dims=1).fit(np.where(Y[:24], 2, 0))


@pytest.mark.parametrize("fill, word", [(1.0, "correct"), (0.0, "wrong")])
def test_responses_without_a_right_or_a_wrong_answer_are_refused(fill, word):
    """Nothing places models or items on a scale: refused, as LogisticRegression refuses a target of one class."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # refused before numpy divides by zero
        with pytest.raises(ValueError, match=rf"^responses: every observed response is {int(fill)} \(all {word}\)"):
            IRT2PL().fit(np.full((15, 40), fill))
    some = (np.random.default_rng(0).random((15, 40)) < 0.6).astype(float)
    with pytest.raises(ValueError, match=rf"^responses: every observed response is {int(fill)}"):
        IRT2PL().fit(np.where(some == 1 - fill, np.nan, fill))  # the observed cells alike, the others missing


def test_irt_predict_proba_given_answers_says_it_takes_abilities():
    Y = (np.random.default_rng(0).random((30, 40)) < np.linspace(0.2, 0.9, 40)).astype(float)
    m = IRT2PL(random_state=0).fit(Y[:25])
    with pytest.raises(ValueError, match=r"^theta: expected abilities of shape \(n_models, 1\), got \(5, 40\), one "
                                         r"column per item: pass abilities, IRT2PL\.predict_proba\(IRT2PL\.abilities"):
        m.predict_proba(Y[25:])
    np.testing.assert_allclose(m.predict_proba(m.abilities(Y[25:])).shape, (5, 40))
