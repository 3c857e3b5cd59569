"""The estimate report's and a sequential run's labels follow the level of their intervals, and the tables written
for later reading (estimate.csv, tasks.csv, an audit's scores.csv) carry that level."""
import json

import numpy as np
import pandas as pd
import pytest

from effstats.cli import main
from effstats.datasets import simulate_responses
from effstats.reliability import audit
from effstats.workflow import estimate, select


def test_out_of_range_footnote_names_the_level_of_its_check():
    data = simulate_responses(21, 200, rng=0)
    sel = select(data.subset(models=range(20)), 40, method="random", seed=0)
    est = estimate(sel, data.subset(models=[20], items=sel.items))
    at95, at90 = est.to_markdown(0.95), est.to_markdown(0.9)
    assert "its 95 % interval clear of the range" in at95
    # the check stays at 95 %: a 90 % report says so
    assert "its 95 % interval clear of the range" not in at90
    assert "its 95 % interval, whatever the level of the intervals above, clear of the range" in at90


def test_a_one_sided_run_labels_every_interval_at_the_one_sided_tests_level(tmp_path):
    from effstats.workflow import SequentialRun

    data = simulate_responses(12, 400, rng=1)
    acc = data.accuracy()
    new, against = acc.idxmax(), acc.idxmin()
    ref = data.subset(models=[m for m in data.model_ids if m != new])
    run = SequentialRun.start(ref, rule="efficacy", against=against, alternative="greater", seed=0)
    run.save(tmp_path / "run")
    while not run.stopped:
        run.update(data.subset(models=[new], items=list(run.next_items)))
        run.save(tmp_path / "run")
    looks = pd.read_csv(tmp_path / "run" / "looks.csv", index_col="look")
    status = run._status()
    assert status["decision"] == "greater"
    assert (looks["confidence_level"] == 0.9).all() and status["confidence_level"] == 0.9
    # the stopping look's row is the decision's interval
    assert (looks["ci_low"].iloc[-1], looks["ci_high"].iloc[-1]) == pytest.approx((status["ci_low"], status["ci_high"]))


# the tables written for later reading carry the level of their intervals, as looks.csv does: ``confidence_level``
# just before the interval's columns
def _estimate_loop(reference=None):
    """A selection from 20 reference models (saved as a long table at ``reference`` when given, for the command
    line) and three new models' results on its items."""
    data = simulate_responses(23, 300, rng=2)
    ref = data.subset(models=range(20))
    if reference is not None:
        ref.to_long().to_csv(reference, index=False)
    sel = select(ref if reference is None else reference, 50, method="random", seed=0)
    return sel, data.subset(models=[20, 21, 22], items=sel.items)


def _level_before(frame, first, level):
    cols = list(frame.columns)
    assert cols[cols.index(first) - 1] == "confidence_level", cols
    assert frame["confidence_level"].dtype == float and (frame["confidence_level"] == level).all()


def test_estimate_frames_carry_the_level_of_their_intervals():
    sel, new = _estimate_loop()
    est = estimate(sel, new)
    frame, tasks = est.to_frame(0.9), est.tasks(0.9)
    _level_before(frame, "low", 0.9)
    _level_before(tasks, "low", 0.9)
    ci = est.confidence_interval(0.9)
    np.testing.assert_array_equal(frame[["low", "high"]].to_numpy(), np.c_[ci.low, ci.high])
    _level_before(est.to_frame(), "low", 0.95)
    _level_before(est.tasks(), "low", 0.95)


def test_estimate_files_carry_the_confidence_given(tmp_path, capsys):
    """``effstats estimate --confidence 0.9``: estimate.csv, tasks.csv, the report's record and its Markdown say
    0.9, and the CSVs' intervals are the API's at 0.9."""
    sel, new = _estimate_loop(tmp_path / "ref.csv")
    sel.save(tmp_path / "sel")
    new.to_long().to_csv(tmp_path / "new.csv", index=False)
    out = tmp_path / "est"
    assert main(["estimate", str(tmp_path / "sel"), str(tmp_path / "new.csv"), "--confidence", "0.9",
                 "--out", str(out), "--no-progress"]) == 0, capsys.readouterr().err
    frame = pd.read_csv(out / "estimate.csv", index_col=0)
    tasks = pd.read_csv(out / "tasks.csv", index_col=[0, 1])
    _level_before(frame, "low", 0.9)
    _level_before(tasks, "low", 0.9)
    want = estimate(sel, new).to_frame(0.9)
    np.testing.assert_allclose(frame[["low", "high"]].to_numpy(), want[["low", "high"]].to_numpy(), rtol=1e-12)
    assert json.loads((out / ".effstats_estimate.json").read_text())["confidence_level"] == 0.9
    assert "Intervals at 90 %" in (out / "estimate.md").read_text()


def test_audit_scores_carry_the_level_of_their_rank_intervals(tmp_path):
    """The audit's scores table (API) and scores.csv (CLI): ``confidence_level`` 0.95 before ``rank_low``, the
    level of the rank interval (an audit has no other)."""
    rng = np.random.default_rng(5)
    board = pd.DataFrame(np.clip(np.linspace(0.8, 0.3, 8)[:, None] + rng.normal(0, 0.1, (8, 4)), 0, 1).round(3),
                         index=pd.Index([f"m{i}" for i in range(8)], name="model"),
                         columns=[f"T{j}" for j in range(4)])
    res = audit(board, n_boot=40, seed=0, progress=False)
    _level_before(res.scores, "rank_low", 0.95)
    board.to_csv(tmp_path / "board.csv")
    out = tmp_path / "audit"
    assert main(["audit", str(tmp_path / "board.csv"), "--out", str(out), "--n-boot", "40", "--seed", "0",
                 "--no-progress"]) == 0
    scores = pd.read_csv(out / "scores.csv")
    _level_before(scores, "rank_low", 0.95)
