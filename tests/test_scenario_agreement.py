"""The audit's per-scenario agreement (the ranking without each scenario against the full one and against the
scenario's own) scores every scenario left out and alone at once: the same numbers as scoring them one at a time,
the MWR's from the exact win counts without the scorer, the means' a block of scenarios a call."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from effstats import ResponseMatrix
from effstats.reliability import kendall_tau
from effstats.reliability._audit_tables import _scenario_agreement
from effstats.reliability._benchmark import Benchmark
from effstats.reliability._metametrics import kendall_tau_rows
from effstats.reliability._winrate import _mwr_from_counts, _mwr_one_out, _score, _scorer, _win_counts


def one_at_a_time(bench, num, den, main, aggregate, ties):
    """The agreement scenario by scenario: each left out and alone scored by the scorer, two rows a call."""
    scen_obs = bench.scenario_observed()
    rows = []
    score = _scorer(bench, num, den, aggregate, ties)
    for s in range(bench.n_scen):
        one = np.zeros((1, bench.n_scen))
        one[0, s] = 1.0
        without = score(np.repeat(1.0 - one, 2, axis=0))[0]
        alone = score(np.repeat(one, 2, axis=0))[0]
        others = scen_obs.sum(1) - scen_obs[:, s]
        rows.append(dict(scenario=bench.scenario_names[s], models=int(scen_obs[:, s].sum()),
                         only_scenario_of=int((others == 0).sum()),
                         tau_with_rest=float(kendall_tau(without, alone[None])[0]),
                         tau_full_vs_without=float(kendall_tau(main, without[None])[0])))
    return pd.DataFrame(rows).sort_values("tau_with_rest").reset_index(drop=True)


def _bench(layout, seed=0):
    rng = np.random.default_rng(seed)
    if layout == "subscenarios":  # scenarios of several subscenarios of several items, some cells missing
        n_models, n_items = 14, 240
        x = (rng.random((n_models, n_items)) < np.linspace(0.2, 0.8, n_models)[:, None]).astype(float)
        miss = rng.random(x.shape) < 0.1
        items = pd.DataFrame({"scenario": [f"s{j % 9}" for j in range(n_items)],
                              "subscenario": [f"s{j % 9}-{j % 4}" for j in range(n_items)]})
        return Benchmark.from_data(ResponseMatrix(x, missing=miss, items=items))
    n_models, n_scen = (30, 400) if layout == "wide" else (12, 25)
    x = rng.random((n_models, n_scen)).round(2 if layout == "wide" else 1)  # ties within scenarios
    x[rng.random(x.shape) < 0.05] = np.nan
    x[3, :] = np.nan
    x[3, 7] = 0.5  # a model scored on one scenario only
    return Benchmark.from_data(pd.DataFrame(x, index=[f"m{i}" for i in range(n_models)],
                                            columns=[f"c{j}" for j in range(n_scen)]))


@pytest.mark.parametrize("layout", ["scenarios", "wide", "subscenarios"])
@pytest.mark.parametrize("aggregate", ["mwr", "mean", "mean_of_means"])
@pytest.mark.parametrize("ties", ["strict", "half"])
def test_scenario_agreement_is_the_scenario_by_scenario_one_bit_for_bit(layout, aggregate, ties):
    bench = _bench(layout)
    num, den = bench.sub_sums()
    main = _score(bench, num, den, aggregate, ties)[0]
    got = _scenario_agreement(bench, num, den, main, aggregate, ties)
    want = one_at_a_time(bench, num, den, main, aggregate, ties)
    assert len(got) == bench.n_scen
    if layout != "subscenarios":
        assert got["only_scenario_of"].sum() == 1  # the model scored on one scenario only
    pd.testing.assert_frame_equal(got, want, check_exact=True)


def test_scenario_agreement_scores_blocks_of_scenarios_not_each_one(monkeypatch):
    """Two scorer calls a scenario, each weighing every scenario, would be quadratic in the scenarios: the means
    take one call a block of scenarios, the MWR none."""
    from effstats.reliability import _audit_tables

    bench = _bench("wide")
    num, den = bench.sub_sums()
    calls = []

    def counted(*a, **k):
        score = _scorer(*a, **k)
        return lambda w: calls.append(len(w)) or score(w)

    monkeypatch.setattr(_audit_tables, "_scorer", counted)
    for aggregate in ("mwr", "mean", "mean_of_means"):
        calls.clear()
        _scenario_agreement(bench, num, den, _score(bench, num, den, aggregate, "strict")[0], aggregate, "strict")
        assert len(calls) == (0 if aggregate == "mwr" else 2), (aggregate, calls)


def test_mwr_without_and_with_each_scenario_alone_is_the_exact_mwr_of_those_weights():
    """Past 2**53 in the common denominator (44 scenarios, each of another number of models: the lcm of 1..44 opponent
    counts), Python's integers and Fraction's rounding, as the scorer's own exact path."""
    rng = np.random.default_rng(3)
    for n_models, n_scen, ragged in ((10, 12, False), (45, 44, True)):
        x = rng.random((n_models, n_scen)).round(1)
        if ragged:
            for s in range(n_scen):
                x[s + 2:, s] = np.nan  # scenario s scores s + 2 models
        else:
            x[rng.random(x.shape) < 0.2] = np.nan
        for ties in ("strict", "half"):
            counts = _win_counts(x[None], ties)
            without, alone = _mwr_one_out(*counts)
            eye = np.eye(n_scen)
            for s in range(n_scen):
                want_without = _mwr_from_counts(*counts, np.repeat(1.0 - eye[[s]], 2, axis=0))[0]
                want_alone = _mwr_from_counts(*counts, np.repeat(eye[[s]], 2, axis=0))[0]
                assert without[s].tobytes() == want_without.tobytes(), (n_models, ties, s)
                assert alone[s].tobytes() == want_alone.tobytes(), (n_models, ties, s)


@pytest.mark.parametrize("n", [2, 3, 17, 60, 700, 701, 760])
def test_kendall_tau_rows_is_kendall_tau_row_by_row(n):
    """Each row its own reference, NaN in either row, ties in both, on both sides of the one-root size."""
    rng = np.random.default_rng(n)
    X = rng.integers(0, 5, (24, n)).astype(float)
    Y = rng.integers(0, 5, (24, n)).astype(float)
    Y[1] = X[1]
    Y[2] = -X[2]
    X[rng.random(X.shape) < 0.1] = np.nan
    Y[rng.random(Y.shape) < 0.1] = np.nan
    X[4:6, :] = np.nan
    X[6, 1:] = np.nan  # one entry of the reference left
    Y[7, :] = np.nan
    X[8] = np.where(np.isnan(X[8]), 0.0, X[8])  # complete rows
    Y[8] = np.where(np.isnan(Y[8]), 1.0, Y[8])
    want = np.array([kendall_tau(x, y[None])[0] for x, y in zip(X, Y)])
    got = kendall_tau_rows(X, Y)
    assert got.tobytes() == want.tobytes()
    assert (got[4:8] == 0).all()
    if n >= 17:
        assert got[1] == pytest.approx(1.0, abs=1e-12) and got[2] == pytest.approx(-1.0, abs=1e-12)
