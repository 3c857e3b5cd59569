"""The estimate report's and a sequential run's labels follow the level of their intervals."""
import pytest

from effstats.datasets import simulate_responses
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
    import pandas as pd

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
