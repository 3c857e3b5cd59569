"""Selections that say what their seed and budget can give: the methods whose items ignore the seed, tasks given too
few items for a meaningful interval, the standard error an interval from a count implies, and one out-of-range
paragraph in the estimate report."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from effstats import ResponseMatrix
from effstats.cli import main
from effstats.datasets import simulate_responses
from effstats.workflow import METHODS, estimate, select, write_lm_eval_samples
from effstats.workflow._names import _SEEDLESS

# the reference logs are parsed once and read by test after test (tests/conftest.py: parsed_logs_kept)
pytestmark = pytest.mark.usefixtures("parsed_logs_kept")


def _two_tasks(sizes=(300, 100), n_models=20, rng=0) -> ResponseMatrix:
    d = simulate_responses(n_models, sum(sizes), rng=rng)
    ids = [f"t{j}/{k}" for j, n in enumerate(sizes) for k in range(n)]
    return ResponseMatrix(d.values, model_ids=[f"org/m{i:02d}" for i in range(n_models)], item_ids=ids)


def test_the_seedless_methods_are_those_whose_items_ignore_the_seed():
    ref = simulate_responses(30, 400, rng=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same = {m: select(ref, 40, method=m, seed=0).items.equals(select(ref, 40, method=m, seed=1).items)
                for m in METHODS if m != "auto"}
    assert {m for m, s in same.items() if s} == set(_SEEDLESS)


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    root = tmp_path_factory.mktemp("seedless")
    write_lm_eval_samples(_two_tasks(), root / "ref")
    return root / "ref"


@pytest.mark.parametrize("method", ["hybrid", "mrmr"])
def test_select_says_in_one_line_that_the_seed_changes_nothing_for_a_deterministic_method(logs, tmp_path, capsys,
                                                                                        method):
    assert main(["select", str(logs), "--budget", "40", "--method", method, "--seed", "1", "--out",
                 str(tmp_path / "s1"), "--no-progress"]) == 0
    err = capsys.readouterr().err
    said = [line for line in err.splitlines() if "--seed 1" in line]
    assert said == [f"effstats select: note: --seed 1 changes nothing: method {method} chooses its items "
                    "deterministically"]
    # no note without --seed, nor for a method that draws its items at random
    assert main(["select", str(logs), "--budget", "40", "--method", method, "--out", str(tmp_path / "s0"),
                 "--no-progress"]) == 0
    assert "--seed" not in capsys.readouterr().err
    assert main(["select", str(logs), "--budget", "40", "--method", "random", "--seed", "1", "--out",
                 str(tmp_path / "r1"), "--no-progress"]) == 0
    assert "--seed" not in capsys.readouterr().err


def test_select_help_names_the_methods_that_ignore_the_seed(capsys):
    assert main(["select", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert f"methods {' and '.join(_SEEDLESS)} choose the same items at a --budget whatever the seed" in text


def test_select_warns_naming_the_tasks_given_fewer_than_ten_items():
    ref = _two_tasks(sizes=(1000, 200, 2))  # t2 is taken whole: a census, whatever its size
    with pytest.warns(UserWarning, match=r"budget: 1 task\(s\) get fewer than 10 items \(t1: 3\): too few") as rec:
        sel = select(ref, 15, method="random", seed=0)
    assert sel.tasks["budget"].to_dict() == {"t0": 10, "t1": 3, "t2": 2}
    assert sum("fewer than 10 items" in str(w.message) for w in rec) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        select(ref, 60, method="random", seed=0)  # 10 items or more in every task sampled in part


def test_a_task_with_every_sampled_item_alike_reports_its_counts_standard_error():
    """A new model right on all 10 random items of one task: the estimator's own standard error is 0, the interval
    the exact one of the count; the reported standard error, the task's row's as the score's, is the count's (a
    simple random sample of 10 of 400 items at the proportion shrunk by half an item, 10.5 / 11), never 0 beside an
    interval that is not a point."""
    ref = _two_tasks(sizes=(400,))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sel = select(ref, 10, method="random", seed=0)
    new = ResponseMatrix(np.ones((1, 10), bool), model_ids=["perfect"], item_ids=list(sel.items))
    res = estimate(sel, new)
    q = 10.5 / 11
    expected = np.sqrt(q * (1 - q) / 10 * (1 - 10 / 400))
    task = res.tasks().iloc[0]  # per task: its count's standard error too, not its own 0
    np.testing.assert_allclose(task["standard_error"], expected, rtol=1e-12)
    np.testing.assert_allclose(res.standard_error, [expected], rtol=1e-12)
    ci = res.confidence_interval()
    assert ci.high[0] - ci.low[0] > 0.2
    row = res.to_markdown().split("| perfect |")[1].split("\n")[0]
    assert f"| {expected:.4f} |" in row and "| 0.0000 |" not in row


def test_several_tasks_with_one_alike_report_the_standard_error_of_their_interval():
    """Two tasks, every sampled item of the first right: the whole-benchmark standard error is the one the
    Korn-Graubard interval is built from (the first task's count's and the second's own, in quadrature)."""
    ref = _two_tasks(sizes=(300, 100))
    sel = select(ref, 40, method="random", seed=0)
    in_t0 = sel.items.str.startswith("t0/")
    rows = np.where(in_t0, True, np.arange(len(sel.items)) % 2 == 0)[None, :]
    new = ResponseMatrix(rows, model_ids=["m"], item_ids=list(sel.items))
    res = estimate(sel, new)
    per = res.tasks()
    k0, k1 = int(in_t0.sum()), int((~in_t0).sum())
    w0, w1 = per["weight"].to_numpy()
    b = k0 + k1
    q = (b * 1.0 + 0.5) / (b + 1)
    se0 = np.sqrt(q * (1 - q) / k0 * (1 - k0 / 300))
    se1 = float(per.iloc[1]["standard_error"])
    assert se1 > 0
    q0 = (k0 + 0.5) / (k0 + 1)  # the task's row: its count's, shrunk by half an item of its own items
    np.testing.assert_allclose(per.iloc[0]["standard_error"], np.sqrt(q0 * (1 - q0) / k0 * (1 - k0 / 300)),
                               rtol=1e-12)
    np.testing.assert_allclose(res.standard_error, [np.hypot(w0 * se0, w1 * se1)], rtol=1e-12)


def test_auto_names_the_references_range_once_for_models_outside_it_in_tasks_of_different_kinds():
    """Under auto, new models outside the references' range on a task whose pick falls back (DISCO's ridge, to AIPW)
    and on a task read whole (a design-based census): one paragraph that names the range once, then each kind."""
    d = simulate_responses(100, 2000, ability=(0, 0.3), rng=1)
    order = np.argsort(d.accuracy().to_numpy())
    census = np.zeros((100, 2), bool)
    census[order[92:]] = True  # the new models alone answer the second task's two items right
    ids = [f"a/{k}" for k in range(2000)] + ["b/0", "b/1"]
    both = ResponseMatrix(np.hstack([d.values, census]), model_ids=d.model_ids, item_ids=ids)
    ref, new = both.subset(models=order[:92]), both.subset(models=order[92:])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sel = select(ref, 62, method="auto", seed=1)
        res = estimate(sel, new.subset(items=sel.items))
    assert sel.tasks["method"].to_dict() == {"a": "DISCO difference + ridge", "b": "all"}
    text = res.to_markdown()
    assert text.count("Outside the reference models' range") == 1
    para = next(p for p in text.split("\n\n") if p.startswith("Outside the reference models' range"))
    fallback, census_part = para.split(" Also outside it: ")
    assert "AIPW + ridge's (design-unbiased" in fallback and "design-based estimate and interval hold" in census_part
    assert all(f"{m} (b: task estimate " in census_part for m in new.model_ids)


def test_the_small_tasks_warning_shows_a_task_name_with_a_line_feed_on_its_one_line(tmp_path, capsys):
    d = simulate_responses(20, 1202, rng=0)
    ids = [f"{t}/{k}" for t, n in (("t0", 1000), ("line\nbreak", 200), ("t2", 2)) for k in range(n)]
    long = ResponseMatrix(d.values, model_ids=[f"org/m{i:02d}" for i in range(20)], item_ids=ids).to_long()
    long.assign(task=long["item"].str.rsplit("/", n=1).str[0]).to_csv(tmp_path / "ref.csv", index=False)
    assert main(["select", str(tmp_path / "ref.csv"), "--budget", "15", "--method", "random", "--out",
                 str(tmp_path / "s"), "--no-progress"]) == 0
    warned = [w for w in capsys.readouterr().err.splitlines() if "fewer than 10 items" in w]
    assert len(warned) == 1 and "(line\\nbreak: 3): too few" in warned[0] and warned[0].endswith("fewer tasks")
