"""Precision(correction="logistic"): the prediction-powered correction of the stratified sequential estimate."""
import json
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st
from scipy import special

from effstats import ResponseMatrix
from effstats.sequential import Efficacy, Precision, SequentialEvaluator

N, N_STRATA = 2000, 4


def _benchmark(seed=0):
    """A finite benchmark whose items' two features (noisy difficulty and discrimination, as the reference models
    give them) predict a model's 0/1 responses; strata of equal size along the first feature alone, so the
    correction has the second to gain from."""
    g = np.random.default_rng(seed)
    b, a = g.normal(size=(2, N))
    y = (g.random(N) < special.expit(0.5 + 2.5 * b + 2.5 * a)).astype(float)
    feats = np.column_stack([b + 0.2 * g.normal(size=N), a + 0.2 * g.normal(size=N)])
    strata = np.empty(N, int)
    strata[np.argsort(feats[:, 0])] = np.arange(N) * N_STRATA // N
    return y, feats, strata


def _worst_case(n, h):
    n0 = (special.ndtri(0.975) / h) ** 2 / 4
    return n0 / (1 + n0 / n)


def test_estimate_at_a_fixed_look_is_unbiased():
    # at a fixed look (max_n, before any stop) the cross-fitted difference estimator is design-unbiased; 2,000 random
    # orders give its mean to within 4 Monte-Carlo standard errors
    y, feats, strata = _benchmark()
    ev = SequentialEvaluator([Precision(1e-4, correction="logistic")], fpc=True, initial=25, batch=25, max_n=300)
    sim = ev.simulate(y, groups=strata, features=feats, n_runs=2000, rng=1)
    assert set(sim.reason) == {"max_n"} and set(sim.n) == {300}
    mc_se = sim.estimate.std() / np.sqrt(sim.estimate.size)
    assert abs(sim.estimate.mean() - y.mean()) < 4 * mc_se
    # the residuals' standard error is that of the estimates over the orders, to within 10 %
    assert sim.standard_error.mean() == pytest.approx(sim.estimate.std(), rel=0.1)
    # and the correction pays: the plain stratified mean varies more
    plain = SequentialEvaluator([Precision(1e-4)], fpc=True, initial=25, batch=25, max_n=300).simulate(
        y, groups=strata, n_runs=2000, rng=1)
    assert sim.estimate.std() < 0.9 * plain.estimate.std()


def test_coverage_and_items_of_the_corrected_rule():
    # 400 random orders: the final 95 % interval covers the benchmark's score at least 0.92 of the time (3 binomial
    # standard errors below 0.95), with fewer items than the uncorrected stratified rule and never more than the
    # worst-case fixed design
    y, feats, strata = _benchmark(seed=2)
    kw = dict(fpc=True, initial=25, batch=25)
    corr = SequentialEvaluator([Precision(0.03, correction="logistic")], **kw).simulate(
        y, groups=strata, features=feats, n_runs=400, rng=3)
    plain = SequentialEvaluator([Precision(0.03)], **kw).simulate(y, groups=strata, n_runs=400, rng=3)
    score = y.mean()
    cover = np.mean((corr.ci_low <= score) & (score <= corr.ci_high))
    assert cover >= 0.92
    assert np.all(corr.reason == "precision")
    assert np.all((corr.ci_high - corr.ci_low) / 2 <= 0.03 + 1e-12)
    assert corr.n.mean() < 0.9 * plain.n.mean()
    assert corr.n.max() <= _worst_case(N, 0.03) + 4 * 25


def test_perfect_predictions_give_the_score():
    # a feature that is the response itself: the residuals vanish but for the penalty's shrinkage of the logistic
    # fit, so at a fixed look of 200 items the estimate is the benchmark's score to within a point in every
    # order and to 0.3 points on average, where the plain stratified mean is off by 2.5 points
    y, _, strata = _benchmark(seed=4)
    feats = y[:, None].copy()
    kw = dict(fpc=True, initial=25, batch=25, max_n=200)
    corr = SequentialEvaluator([Precision(1e-4, correction="logistic")], **kw).simulate(
        y, groups=strata, features=feats, n_runs=200, rng=0)
    plain = SequentialEvaluator([Precision(1e-4)], **kw).simulate(y, groups=strata, n_runs=200, rng=0)
    err, err_plain = np.abs(corr.estimate - y.mean()), np.abs(plain.estimate - y.mean())
    assert err.max() < 0.01 and err.mean() < 3e-3 and err_plain.mean() > 0.02
    assert np.all((corr.ci_low <= y.mean()) & (y.mean() <= corr.ci_high))


def test_all_items_give_the_exact_score_with_a_zero_width_interval():
    y, feats, strata = _benchmark(seed=5)
    y, feats, strata = y[:400], feats[:400], np.arange(400) % 4
    sim = SequentialEvaluator([Precision(1e-6, correction="logistic")], fpc=True, initial=20, batch=20).simulate(
        y, groups=strata, features=feats, n_runs=20, rng=0)
    assert set(sim.n) == {400}
    means = np.mean([y[strata == d].mean() for d in range(4)])
    np.testing.assert_allclose(sim.estimate, means, rtol=0, atol=1e-12)
    np.testing.assert_allclose(sim.ci_high - sim.ci_low, 0.0, atol=1e-9)


def test_features_are_aligned_by_item_ids():
    y, feats, strata = _benchmark(seed=6)
    ids = [f"item{i}" for i in range(N)]
    ev = SequentialEvaluator([Precision(0.03, correction="logistic")], fpc=True, initial=25, batch=25, rng=0)
    a = ev.fit(y, groups=strata, features=feats)
    frame = pd.DataFrame(feats, index=ids).iloc[::-1]  # rows in another order: aligned by the ids
    b = ev.fit(pd.Series(y, index=ids), groups=pd.Series(strata, index=ids), features=frame)
    assert a.n == b.n and (b.estimate, b.ci_low) == pytest.approx((a.estimate, a.ci_low), rel=1e-12)


@pytest.mark.parametrize("make, match", [
    (lambda y, f, s, ev: Precision(0.02, correction="probit"), "correction: expected None or 'logistic'"),
    (lambda y, f, s, ev: ev.fit(y, groups=s), "features: Precision\\(correction='logistic'\\) needs"),
    (lambda y, f, s, ev: SequentialEvaluator([Precision(0.02)]).fit(y, features=f), "features: only"),
    (lambda y, f, s, ev: ev.fit(y, groups=s, features=f[:-1]), "features: expected one row per item"),
    (lambda y, f, s, ev: ev.fit(y, groups=s, features=np.where(f > 1, np.nan, f)), "features"),
    (lambda y, f, s, ev: ev.fit(y, y, groups=s, features=f), "correction: the logistic correction"),
    (lambda y, f, s, ev: SequentialEvaluator([Precision(0.02, correction="logistic"), Efficacy()], null=0.5)
     .fit(y, groups=s, features=f), "rules: "),
    (lambda y, f, s, ev: SequentialEvaluator([Precision(0.02, correction="logistic")], stratified=False)
     .fit(y, groups=s, features=f), "stratified: "),
    (lambda y, f, s, ev: ev.start(N), "correction: "),
    (lambda y, f, s, ev: ev.fit(pd.Series(y, index=[f"i{j}" for j in range(N)]), groups=s,
                                features=pd.DataFrame(f, index=[f"i{j % (N - 1)}" for j in range(N)])),
     "features: item ids \\['i0'\\] have more than one row"),
    (lambda y, f, s, ev: ev.fit(y, groups=s, features=pd.DataFrame(f, index=[f"i{j}" for j in range(N)])),
     "features: a DataFrame's rows are matched to the items by its index"),
])
def test_bad_input_names_the_argument(make, match):
    y, feats, strata = _benchmark()
    ev = SequentialEvaluator([Precision(0.02, correction="logistic")], fpc=True)
    with pytest.raises(ValueError, match=match):
        make(y, feats, strata, ev)


def test_cli_run_with_the_correction_matches_the_evaluator(tmp_path, capsys):
    # effstats sequential start --correction logistic: batches of equal numbers from the 5 strata of the reference
    # models' difficulty order; the decision is the evaluator's on the same items in the same order
    from effstats.cli import main
    from effstats.datasets import simulate_responses
    from effstats.workflow._sequential import _correction_inputs

    truth = simulate_responses(31, 2000, rng=3)
    ref, new_id = truth.subset(models=range(30)), str(truth.model_ids[30])
    ref.to_long().to_csv(tmp_path / "ref.csv", index=False)
    start = ["sequential", "start", tmp_path / "ref.csv", "--half-width", 0.04, "--correction", "logistic",
             "--initial", 50, "--batch", 50, "--seed", 1, "--out", tmp_path / "run"]
    assert main([str(a) for a in start]) == 0, capsys.readouterr().err
    assert "logistic correction" in capsys.readouterr().out
    strata, features = _correction_inputs(ref)
    pos = {str(i): j for j, i in enumerate(truth.item_ids)}
    looks = []
    while json.loads((tmp_path / "run" / "state.json").read_text())["status"] == "continue":
        k = len(looks) + 1
        batch = pd.read_csv(tmp_path / "run" / f"batch_{k:03d}" / "items.csv")["item"].astype(str).tolist()
        assert np.bincount(strata[[pos[i] for i in batch]], minlength=5).tolist() == [10] * 5
        pd.DataFrame({"model": new_id, "item": batch,
                      "score": truth.subset(models=[new_id], items=batch).values[0].astype(int)}).to_csv(
            tmp_path / f"b{k}.csv", index=False)
        assert main([str(a) for a in ["sequential", "update", tmp_path / "run", tmp_path / f"b{k}.csv"]]) == 0
        looks.append(batch)
    decision = json.loads((tmp_path / "run" / "decision.json").read_text())
    seen = np.array([pos[i] for b in looks for i in b])
    at = np.concatenate([seen, np.setdiff1d(np.arange(truth.n_items), seen)])
    y = truth.subset(models=[new_id]).values[0].astype(float)[at]
    res = SequentialEvaluator([Precision(0.04, correction="logistic")], initial=10, batch=10, fpc=True).fit(
        y, groups=strata[at], features=features[at], shuffle=False)
    assert decision["decision"] == res.decision == "precision"
    assert decision["n"] == res.n == seen.size
    assert (decision["ci_low"], decision["ci_high"]) == pytest.approx((res.ci_low, res.ci_high), rel=1e-12)


def test_cli_correction_needs_the_precision_rule(tmp_path, capsys):
    from effstats.cli import main
    from effstats.datasets import simulate_responses

    ref = simulate_responses(10, 300, rng=0)
    ref.to_long().to_csv(tmp_path / "ref.csv", index=False)
    code = main([str(a) for a in ["sequential", "start", tmp_path / "ref.csv", "--against", ref.model_ids[0],
                                  "--correction", "logistic", "--out", tmp_path / "run"]])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "--correction: " in err and "rule='precision'" in err


@pytest.mark.parametrize("v0", [0.0, 1.0])
def test_interval_is_continuous_as_the_responses_become_alike(v0):
    # responses all alike have no residual variance to go by: Clopper-Pearson at the items evaluated, as without the
    # correction; graded responses a hair away from alike give (nearly) that interval, not one from four times the
    # items
    g = np.random.default_rng(0)
    feats, strata = g.normal(size=(1000, 2)), np.repeat(np.arange(5), 200)

    def interval(v, correction="logistic"):
        r = SequentialEvaluator([Precision(0.03, correction=correction)], rng=0, initial=20, batch=20).fit(
            np.full(1000, v), groups=strata, features=feats if correction else None)
        return r.n, r.ci_low, r.ci_high

    exact = interval(v0)
    assert exact == pytest.approx(interval(v0, correction=None), abs=1e-12)
    assert exact[2] - exact[1] > 0.036
    step = 1e-9 if v0 == 0 else -1e-9
    for d in (step, 1e3 * step):
        assert interval(v0 + d) == pytest.approx(exact, abs=1e-5)


def _cli_run(tmp_path, name, args, truth, new_id):
    """Run ``effstats sequential start`` with ``args`` on the reference models' results in ``tmp_path/ref.csv`` and
    ``update`` with the new model's results until it stops; the decision and the items evaluated in order."""
    from effstats.cli import main

    run = tmp_path / name
    assert main([str(a) for a in ["sequential", "start", tmp_path / "ref.csv", *args, "--out", run]]) == 0
    seen = []
    while json.loads((run / "state.json").read_text())["status"] == "continue":
        k = len(seen) + 1
        batch = pd.read_csv(run / f"batch_{k:03d}" / "items.csv")["item"].astype(str).tolist()
        pd.DataFrame({"model": new_id, "item": batch,
                      "score": truth.subset(models=[new_id], items=batch).values[0].astype(int)}).to_csv(
            tmp_path / f"{name}{k}.csv", index=False)
        assert main([str(a) for a in ["sequential", "update", run, tmp_path / f"{name}{k}.csv"]]) == 0
        seen.append(batch)
    return json.loads((run / "decision.json").read_text()), [i for b in seen for i in b]


@pytest.fixture(scope="module")
def cli_data(tmp_path_factory):
    from effstats.datasets import simulate_responses
    from effstats.workflow._sequential import _correction_inputs

    tmp = tmp_path_factory.mktemp("cli")
    truth = simulate_responses(31, 2000, rng=3)
    ref = truth.subset(models=range(30))
    ref.to_long().to_csv(tmp / "ref.csv", index=False)
    return tmp, truth, str(truth.model_ids[30]), _correction_inputs(ref)


def test_cli_spending_is_the_evaluators(cli_data, capsys):
    # a run that ends at --max-n without reaching its half-width reports the repeated interval, whose bound comes
    # from the spending family: --spending gives the evaluator's interval with that family, and the two differ
    tmp, truth, new_id, (strata, features) = cli_data
    pos = {str(i): j for j, i in enumerate(truth.item_ids)}
    out = {}
    for sp in ("ld_obf", "ld_pocock"):
        decision, seen = _cli_run(tmp, sp, ["--half-width", 0.005, "--correction", "logistic", "--initial", 50,
                                            "--batch", 50, "--max-n", 150, "--spending", sp], truth, new_id)
        at = np.array([pos[i] for i in seen] + [j for j in range(truth.n_items) if str(truth.item_ids[j]) not in
                                                set(seen)])
        y = truth.subset(models=[new_id]).values[0].astype(float)[at]
        res = SequentialEvaluator([Precision(0.005, correction="logistic")], spending=sp, initial=10, batch=10,
                                  max_n=150, fpc=True).fit(y, groups=strata[at], features=features[at], shuffle=False)
        assert decision["n"] == res.n == 150 and decision["decision"] == res.decision
        assert (decision["ci_low"], decision["ci_high"]) == pytest.approx((res.ci_low, res.ci_high), rel=1e-12)
        out[sp] = decision["ci_high"] - decision["ci_low"]
    assert abs(out["ld_obf"] - out["ld_pocock"]) > 1e-3


@pytest.mark.parametrize("edit, field", [
    ("del s['strata']", "strata: missing"),
    ("del s['look_sizes']", "look_sizes: missing"),
    ("s['rule']['correction'] = None", "rule.correction: null"),
    ("s['initial'] = 7", "initial: 7"),
    ("s['batch'] = 30", "batch: 30"),
    ("s['n_eligible'] = 500", "n_eligible: 500"),
    ("s['look_sizes'][1] = 77", "look_sizes"),
    ("s['look_sizes'][1:3] = [40, 60]", "look_sizes[1]: 40"),
    ("s['looks'][0]['scores'][0] = 7", "looks[0].scores[0]"),
    ("s['strata'][3] = (s['strata'][3] + 1) % 5", "strata[3]"),
    ("s['order'][60], s['order'][61] = s['order'][61], s['order'][60]", "order[60]"),
    ("s['spending'] = 'bogus'", "spending: unknown"),
    ("s['next_batch'] = 'x'", "next_batch: expected an integer"),
    ("s['next_batch'] = 50.0", "next_batch: expected an integer"),
    ("s['next_batch'] = True", "next_batch: expected an integer"),
    ("s['batch'] = 50.0", "batch: expected an integer"),
    ("s['fpc'] = 'x'", "fpc: expected true or false"),
    ("s['n_eligible'] = 10 ** 9", "n_eligible: 1000000000 is more than the reference's 2000 items"),
])
def test_cli_tampered_corrected_state_names_the_field(cli_data, capsys, edit, field):
    from effstats.cli import main

    tmp, truth, new_id, _ = cli_data
    run = tmp / "tamper"
    args = ["sequential", "start", tmp / "ref.csv", "--half-width", 0.02, "--correction", "logistic", "--initial", 50,
            "--batch", 50, "--out", run, "--force"]
    assert main([str(a) for a in args]) == 0
    batch = pd.read_csv(run / "batch_001" / "items.csv")["item"].astype(str).tolist()
    pd.DataFrame({"model": new_id, "item": batch, "score": 1}).to_csv(tmp / "t1.csv", index=False)
    assert main([str(a) for a in ["sequential", "update", run, tmp / "t1.csv"]]) == 0
    s = json.loads((run / "state.json").read_text())
    exec(edit)
    (run / "state.json").write_text(json.dumps(s))
    batch = pd.read_csv(run / "batch_002" / "items.csv")["item"].astype(str).tolist()
    pd.DataFrame({"model": new_id, "item": batch, "score": 1}).to_csv(tmp / "t2.csv", index=False)
    capsys.readouterr()
    assert main([str(a) for a in ["sequential", "update", run, tmp / "t2.csv"]]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"state.json: {field}" in err, err


def test_precision_docstring_states_the_measured_gain_with_its_conditions():
    """The corrected rule's items relative to random batches: the range of the strata benchmark's table, for its
    targets and half-widths, and not claimed beyond them."""
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[1] / "benchmarks" / "README.md").read_text(encoding="utf-8")
    head = "| benchmark | targets | accuracy | ± points |"
    rows = [r.split("|")[1:-1] for r in readme[readme.index(head):].split("\n\n")[0].splitlines()[2:]]
    bench, acc, pts = ([r[i].strip() for r in rows] for i in (0, 2, 3))
    names = [b.split(" (")[0] for b in bench]
    ratio = np.array([float(r[-1]) for r in rows])
    assert sorted(set(names)) == ["CIFAR-10", "ImageNet"] and sorted(set(pts)) == ["1", "2"]
    assert len(set(zip(names, acc))) == 10
    doc = " ".join(Precision.__doc__.split())
    assert f"{ratio.min():.2f}-{ratio.max():.2f} times random batches'" in doc
    assert "CIFAR-10 and ImageNet" in doc and "for the ten targets of ``benchmarks/sequential_strata.py``" in doc
    assert "at ±1 and ±2 points" in doc and "the gain can be smaller" in doc


@pytest.mark.parametrize("max_n", [None, 300])
def test_cli_run_with_uninformative_references_stops_at_the_worst_case_design(tmp_path, max_n):
    # two reference models answering at random: their features say nothing of the new model, the corrected interval
    # is no narrower than the plain one, and the run must still end with ± half_width at the stratified schedule's
    # worst-case design (a few items past the unstratified one's 169 of 300), whatever --max-n allows; the new
    # model is near accuracy 1/2, where the worst case is the actual one
    from effstats.workflow._sequential import _worst_case_items

    g = np.random.default_rng(1)
    items = [f"t/{j}" for j in range(300)]
    pd.DataFrame([(m, i, int(g.random() < 0.6)) for m in ("a", "b") for i in items],
                 columns=["model", "item", "score"]).to_csv(tmp_path / "ref.csv", index=False)
    truth = ResponseMatrix([(g.random(300) < 0.5).astype(int)], model_ids=["new"], item_ids=items)
    args = ["--half-width", 0.05, "--correction", "logistic"] + ([] if max_n is None else ["--max-n", max_n])
    decision, seen = _cli_run(tmp_path, "run", args, truth, "new")
    assert decision["decision"] == "precision"
    assert (decision["ci_high"] - decision["ci_low"]) / 2 <= 0.05
    assert _worst_case_items(0.05, 0.05, 300) == 169 and 169 <= decision["n"] <= 175


def test_cli_correction_needs_ten_reference_items_and_says_how_it_splits_the_batches(tmp_path, capsys):
    from effstats.cli import main
    from effstats.datasets import simulate_responses
    from effstats.workflow import SequentialRun

    simulate_responses(10, 5, rng=0).to_long().to_csv(tmp_path / "tiny.csv", index=False)
    code = main([str(a) for a in ["sequential", "start", tmp_path / "tiny.csv", "--half-width", 0.05,
                                  "--correction", "logistic", "--out", tmp_path / "run"]])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "--correction: " in err and "at least 10 items" in err, err
    ref = simulate_responses(10, 300, rng=0)
    with pytest.warns(UserWarning, match="initial, batch: .* 10 and 5 items, not 3 and 4"):
        run = SequentialRun.start(ref, half_width=0.05, correction="logistic", initial=3, batch=4)
    assert (run.state["initial"], run.state["batch"]) == (10, 5) and len(run.next_items) == 10


def test_features_near_the_float_range_give_the_interval_of_the_same_features_scaled():
    # standardising the features is scale-free: features times 1e300 (whose squares overflow) give the same
    # interval, without a warning; a DataFrame with the default index is taken in the scores' order, as an array
    import warnings

    y, feats, strata = _benchmark(seed=7)
    ev = SequentialEvaluator([Precision(0.03, correction="logistic")], fpc=True, initial=25, batch=25, rng=0)
    a = ev.fit(y, groups=strata, features=feats)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        b = ev.fit(y, groups=strata, features=feats * 1e300)
    c = ev.fit(y, groups=strata, features=pd.DataFrame(feats))
    assert a.n == b.n == c.n and (b.ci_low, b.ci_high) == pytest.approx((a.ci_low, a.ci_high), rel=1e-9)
    assert (c.ci_low, c.ci_high) == (a.ci_low, a.ci_high)


def test_repeated_interval_of_a_run_under_way_spends_alpha_as_planned():
    # a corrected run that has not stopped: its repeated interval is the evaluator's at that look of the whole
    # planned schedule (up to the run's cap), wider than that of a schedule ending at the current look, which
    # spends all of alpha there
    from effstats.datasets import simulate_responses
    from effstats.workflow import SequentialRun
    from effstats.workflow._sequential import _correction_inputs

    truth = simulate_responses(31, 2000, rng=3)
    ref, new_id = truth.subset(models=range(30)), str(truth.model_ids[30])
    run = SequentialRun.start(ref, rule="precision", half_width=0.02, correction="logistic", initial=50, batch=50,
                              seed=1)
    for _ in range(3):
        res = run.update(truth.subset(models=[new_id], items=list(run.next_items)))
    assert res.decision == "continue" and res.n == 150 < run.state["max_n"]
    strata, features = _correction_inputs(ref)
    pos = pd.Index(truth.item_ids.astype(str)).get_indexer(run.state["order"][:150])
    at = np.concatenate([pos, np.setdiff1d(np.flatnonzero(strata >= 0), pos)])
    y = truth.subset(models=[new_id]).values[0].astype(float)[at]

    def fit(max_n):
        ev = SequentialEvaluator([Precision(0.02, correction="logistic")], initial=10, batch=10, max_n=max_n, fpc=True)
        return ev.fit(y, groups=strata[at], features=features[at], shuffle=False).trace.loc[3]

    planned, ending_here = fit(run.state["max_n"]), fit(150)
    assert (res.rci_low, res.rci_high) == pytest.approx((planned["ci_low"], planned["ci_high"]), rel=1e-12)
    assert (res.ci_low, res.ci_high) == (res.rci_low, res.rci_high)
    assert res.rci_high - res.rci_low > 1.2 * (ending_here["ci_high"] - ending_here["ci_low"])


def test_repeated_intervals_of_a_run_under_way_cover_together():
    # Monte-Carlo over 200 random orders within the strata of a 2000-item benchmark: the repeated intervals of the
    # first three looks of a run planned to 600 items (as a run under way reports them) all cover the benchmark's
    # score in at least 95 % of the orders, less 3 standard errors of the proportion (tolerance 0.046)
    y, feats, strata = _benchmark(1)
    g = np.random.default_rng(2)
    ev = SequentialEvaluator([Precision(0.01, correction="logistic")], initial=10, batch=10, max_n=600, fpc=True)
    reps, covered = 200, 0
    for _ in range(reps):
        at = np.concatenate([g.permutation(np.flatnonzero(strata == d)) for d in range(N_STRATA)])
        ok = True
        for seen in (40, 80, 120):
            res = ev._fit(y[at], groups=strata[at], features=feats[at], shuffle=False, seen=seen)
            assert res.n == seen
            ok &= res.rci_low <= y.mean() <= res.rci_high
        covered += ok
    assert covered / reps >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / reps)



@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n_items=st.integers(10, 2500), unanswered=st.integers(0, 40), initial=st.integers(2, 150),
       batch=st.integers(1, 150), max_n=st.one_of(st.none(), st.integers(2, 2500)),
       half_width=st.sampled_from([0.005, 0.01, 0.02, 0.05]), seed=st.integers(0, 3))
@example(n_items=2000, unanswered=0, initial=100, batch=100, max_n=1502, half_width=0.005, seed=0)
def test_started_state_is_what_its_loader_accepts(n_items, unanswered, initial, batch, max_n, half_width, seed):
    # whatever cap the worst-case design or max_n sets, the stratified batches' sizes add up to the order, each
    # stratum's items come in running counts that never decrease, and the saved run loads back as it was
    import tempfile

    from effstats.datasets import simulate_responses
    from effstats.workflow import SequentialRun
    from effstats.workflow._sequential import _correction_inputs

    values = simulate_responses(8, n_items, rng=seed).values.astype(float)
    values[:, : min(unanswered, n_items - 10)] = np.nan  # items no reference model answered are outside the strata
    ref = ResponseMatrix(values, item_ids=[f"t/{j}" for j in range(n_items)], nan_as_missing=True)
    n_elig = int((_correction_inputs(ref)[0] >= 0).sum())
    assume(initial <= n_elig and batch <= n_elig and (max_n is None or initial <= max_n <= n_elig))
    with warnings.catch_warnings():  # the rounding of initial and batch to the strata is warned about
        warnings.simplefilter("ignore", UserWarning)
        run = SequentialRun.start(ref, half_width=half_width, correction="logistic", initial=initial, batch=batch,
                                  max_n=max_n, seed=seed)
    s = run.state
    assert sum(s["look_sizes"]) == len(s["order"]) == len(set(s["order"])) == s["max_n"]
    assert min(s["look_sizes"]) > 0 and (max_n is None or s["max_n"] <= max(max_n, s["initial"]))
    ends = np.cumsum(s["look_sizes"])
    strata = np.array(s["strata"])
    counts = np.array([np.bincount(strata[:e], minlength=5) for e in ends])
    assert (np.diff(counts, axis=0) >= 0).all() and (counts[1:] - counts[:-1] <= s["batch"] // 5).all()
    with tempfile.TemporaryDirectory() as d:
        run.save(d)
        back = SequentialRun.load(d, reference=ref)
    assert back.state["look_sizes"] == s["look_sizes"] and list(back.next_items) == list(run.next_items)


def test_cli_run_capped_off_the_strata_schedule_updates(tmp_path, capsys):
    # --max-n 1502 on 2,000 items in 5 strata of 400: looks of 20 a stratum reach 1,500, and the last look's 2 items
    # come from 2 strata; the run's state is one its update reads
    from effstats.datasets import simulate_responses

    truth = simulate_responses(31, 2000, rng=3)
    truth.subset(models=range(30)).to_long().to_csv(tmp_path / "ref.csv", index=False)
    new_id = str(truth.model_ids[30])
    decision, seen = _cli_run(tmp_path, "run", ["--half-width", 0.005, "--correction", "logistic", "--max-n", 1502],
                              truth, new_id)
    state = json.loads((tmp_path / "run" / "state.json").read_text())
    assert state["look_sizes"][-1] == 2 and sum(state["look_sizes"]) == 1502 == len(seen)
    assert decision["n"] == 1502 and decision["decision"] == "no decision"
    assert capsys.readouterr().err == ""
