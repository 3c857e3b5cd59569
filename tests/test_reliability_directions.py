"""Score frames whose lower-is-better columns a reader negated (``attrs["lower_is_better"]``) in the public
reliability functions: those that rank models honour the direction (the frame ranks as the table with those columns
negated by hand), the means warn that they subtract those columns, and the simulation of examples refuses them."""
from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from effstats import reliability as rel
from effstats.datasets import read_scores
from effstats.datasets._score_json import read_helm_json


@pytest.fixture
def board(tmp_path):
    """A leaderboard CSV with an error-rate column (WER, lower is better) as read, and as written."""
    rng = np.random.default_rng(3)
    n = 8
    written = pd.DataFrame({"ARC": rng.random(n), "MMLU": rng.random(n), "GSM8K": rng.random(n),
                            "WER": 0.5 * rng.random(n)}, index=pd.Index([f"m{i}" for i in range(n)], name="model"))
    written = written.round(3)
    written.to_csv(tmp_path / "board.csv")
    with pytest.warns(UserWarning, match="'WER' named like a lower-is-better metric"):
        read, _ = read_scores(tmp_path / "board.csv")
    assert read.attrs["lower_is_better"] == ["WER"]
    return read, written


def _quiet(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning expected from the ranking functions
        return fn()


RANKINGS = {  # the same values read as written negated by hand: the same results, exactly
    "mean_win_rate": lambda t: rel.mean_win_rate(t).tolist(),
    "dior": lambda t: rel.dior(t, n_boot=60, rng=0).statistic,
    "clone_flips": lambda t: rel.clone_flips(t, top_k=3).to_numpy().tolist(),
    "removal_flips": lambda t: rel.removal_flips(t, top_k=3).to_numpy().tolist(),
}


@pytest.mark.parametrize("name", list(RANKINGS))
def test_ranking_functions_rank_a_read_frame_as_its_table_with_the_lower_is_better_columns_negated(board, name):
    read, written = board
    by_hand = written.assign(WER=-written["WER"])
    assert _quiet(lambda: RANKINGS[name](read)) == _quiet(lambda: RANKINGS[name](by_hand))
    if name == "mean_win_rate":  # the direction matters: the table as written ranks otherwise
        assert RANKINGS[name](read) != RANKINGS[name](written)


@pytest.mark.parametrize("mean", ["mean_score", "mean_of_means"])
def test_the_means_of_a_read_frame_warn_that_they_subtract_its_lower_is_better_columns(board, mean):
    read, written = board
    call = (lambda t: rel.mean_score(t)) if mean == "mean_score" else (
        lambda t: rel.mean_of_means(t, ["a"] * (t.shape[1] - 1) + ["b"]))
    with pytest.warns(UserWarning, match=r"^scores: column\(s\) 'WER' are lower-is-better, negated as read .*"
                                         r"scores\.drop\(columns=\['WER'\]\)"):
        got = call(read)
    pd.testing.assert_series_equal(got, _quiet(lambda: call(written.assign(WER=-written["WER"]))))
    # without the column (the attribute follows the frame through pandas' operations), or on a frame without the
    # attribute: no warning
    _quiet(lambda: call(read.drop(columns=["WER"])))
    _quiet(lambda: call(written))


def test_simulating_examples_refuses_a_read_frames_lower_is_better_columns(board):
    read, _ = board
    with pytest.raises(ValueError, match=r"^table: column\(s\) 'WER' are lower-is-better, negated as read "
                                         r"\(table\.attrs\['lower_is_better'\]\), not accuracies"):
        rel.simulate_examples(read, 10, rng=0)
    rm = rel.simulate_examples(read.drop(columns=["WER"]), 10, rng=0)
    assert list(rm.items["scenario"].unique()) == ["ARC", "MMLU", "GSM8K"]


def test_a_helm_tables_lower_is_better_columns_are_named_by_the_means_and_the_simulation(tmp_path):
    head = [{"value": "Model/adapter"}, {"value": "MMLU - EM"}, {"value": "BoolQ - EM"},
            {"value": "Time (s)", "lower_is_better": True}]
    rows = [[{"value": f"model-{k}"}, {"value": a}, {"value": b}, {"value": t}]
            for k, (a, b, t) in enumerate([(0.6, 0.7, 1.2), (0.65, 0.5, 0.8), (0.3, 0.4, 0.5)])]
    path = tmp_path / "lite.json"
    path.write_text(json.dumps([{"title": "Accuracy", "header": head, "rows": rows}]))
    scores, _ = read_helm_json(path)
    with pytest.warns(UserWarning, match=r"^scores: column\(s\) 'Time \(s\)' are lower-is-better"):
        rel.mean_score(scores)
    with pytest.raises(ValueError, match=r"^table: column\(s\) 'Time \(s\)' are lower-is-better"):
        rel.simulate_examples(scores, 5, rng=0)
