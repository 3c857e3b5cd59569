"""Aggregates a leaderboard prints beside its scenarios that no exact rule reproduces (a normalised average, a
geometric mean) are left out by how closely they rank the models as the scenarios do together; a named aggregate
that ranks them the other way round (a mean rank, lower is better) is read negated."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from effstats.datasets import read_scores
from effstats.workflow import read_results


def _board(n_models: int = 60, n_tasks: int = 10, seed: int = 0) -> pd.DataFrame:
    """Scores of models of unequal skill on tasks that rank them differently (ρ with the rest 0.6–0.9)."""
    rng = np.random.default_rng(seed)
    skill = rng.normal(0, 1, n_models)
    x = 1 / (1 + np.exp(-(skill[:, None] * rng.uniform(0.5, 1.5, n_tasks) + rng.normal(0, 0.7, (n_models, n_tasks))
                          + rng.normal(0, 1, n_tasks))))
    return pd.DataFrame(x.round(3), index=pd.Index([f"m{i}" for i in range(n_models)], name="Model"),
                        columns=[f"Task {k} - EM" for k in range(n_tasks)])


def test_normalised_and_geometric_means_are_aggregates_and_a_mean_rank_is_lower_better(tmp_path):
    d = _board()
    x = d.copy()
    d["Normalized average"] = ((x - x.min()) / (x.max() - x.min())).mean(axis=1).round(3)
    d["Avg. rank"] = x.rank(ascending=False).mean(axis=1).round(2)
    d["Geo. mean"] = np.exp(np.log(x.clip(lower=1e-3)).mean(axis=1)).round(3)
    f = tmp_path / "board.csv"
    d.to_csv(f)
    wide, pub = read_scores(f)
    assert list(wide.columns) == list(x.columns)
    assert pub.name == "Avg. rank" and pub.attrs["info"]["lower"] and pub.attrs["kind"] == "mwr"
    np.testing.assert_allclose(pub.to_numpy(), -d["Avg. rank"].to_numpy())
    note = wide.attrs["note"]
    assert "'Avg. rank' (lower is better, read negated; ranks as the Mean Win Rate)" in note
    assert "'Normalized average' (a likely aggregate of the other columns" in note and "'Geo. mean' (a likely" in note


def test_scenarios_that_rank_alike_stay_scenarios(tmp_path):
    # tasks that all follow one skill closely (ρ with the rest above 0.93): none is taken for an aggregate
    rng = np.random.default_rng(1)
    skill = rng.normal(0, 1, 40)
    x = pd.DataFrame((1 / (1 + np.exp(-(skill[:, None] + rng.normal(0, 0.15, (40, 8)))))).round(3),
                     index=pd.Index([f"m{i}" for i in range(40)], name="Model"), columns=[f"T{k}" for k in range(8)])
    f = tmp_path / "board.csv"
    x.to_csv(f)
    wide, pub = read_scores(f)
    assert list(wide.columns) == list(x.columns) and pub is None


def test_a_leaderboard_is_not_read_as_per_item_results(tmp_path):
    from effstats.datasets import read_scores_csv
    from effstats.reliability import mean_win_rate

    d = _board()
    d.insert(0, "Mean win rate", mean_win_rate(d).round(3))
    f = tmp_path / "board.csv"
    d.to_csv(f)
    with pytest.raises(ValueError, match=r"^path: board\.csv: column 'Mean win rate' is the Mean Win Rate of the "
                                         r"other columns within rounding: a leaderboard .*`effstats audit`"):
        read_scores_csv(f)
    # named like an aggregate, following the others without reproducing them (a win rate over unrounded scores)
    d["Mean win rate"] = (d["Mean win rate"] + np.random.default_rng(2).normal(0, 0.05, len(d))).clip(0, 1).round(3)
    d.to_csv(f)
    with pytest.raises(ValueError, match=r"^source: board\.csv: column 'Mean win rate' is named like an aggregate "
                                         r"and follows the other columns \(\|r\| = 0\.9\d\): a leaderboard"):
        read_results(f)
    d.drop(columns="Mean win rate").to_csv(f)  # the scenarios alone: read (a table of graded items)
    assert read_results(f).n_items == 10


def test_row_minimum_and_maximum_columns_are_summaries_and_sparse_columns_stay_scenarios(tmp_path):
    d = _board(seed=5)
    x = d.copy()
    rng = np.random.default_rng(6)
    # a sparse column of near-zero fractions: the row minimum of the others in many rows by chance
    d["Rare"] = np.where(rng.random(len(d)) < 0.7, 0.0, rng.uniform(0, 0.02, len(d))).round(3)
    d["Min"], d["Max"] = x.min(axis=1), x.max(axis=1)
    f = tmp_path / "board.csv"
    d.to_csv(f)
    wide, _ = read_scores(f)
    assert list(wide.columns) == [*x.columns, "Rare"]
    assert ("'Min' (the minimum of the other columns within rounding); 'Max' (the maximum of the other columns "
            "within rounding)") in wide.attrs["note"]


def test_a_price_among_fractions_is_off_their_scale_beside_other_metadata(tmp_path):
    # the parameter count, context length and year are off every scale; once they are set aside, the price (decimals,
    # up to 30) is off the fractions' scale and the 0/1 flag is a flag among scores with decimals
    d = _board(seed=7)
    x = d.copy()
    rng = np.random.default_rng(8)
    n = len(d)
    d["Billions"] = rng.choice([7, 13, 34, 70, 405], n)
    d["Context"] = rng.choice([4096, 8192, 32000, 128000], n)
    d["Year"] = rng.choice([2022, 2023, 2024], n)
    d["Open weights"] = rng.integers(0, 2, n)
    d["$ / 1M tok"] = rng.uniform(0.4, 30, n).round(2)
    f = tmp_path / "board.csv"
    d.to_csv(f)
    wide, _ = read_scores(f)
    assert list(wide.columns) == list(x.columns)
    assert "'$ / 1M tok' (values up to" in wide.attrs["note"] and "'Open weights' (whole numbers of 2 levels" in (
        wide.attrs["note"])


def test_the_report_compares_a_mean_rank_by_its_ranking_only(tmp_path):
    from effstats.reliability import audit

    d = _board(seed=9)
    d["Avg. rank"] = d.rank(ascending=False).mean(axis=1).round(2)
    f = tmp_path / "board.csv"
    d.to_csv(f)
    audit(f, tmp_path / "a", n_boot=20, progress=False)
    md = (tmp_path / "a" / "report.md").read_text()
    line = next(x for x in md.splitlines() if x.startswith("Recomputed"))
    assert "'Avg. rank' (lower is better, read negated: only the rankings compare): Kendall τ" in line
    assert "max |Δ|" not in line


def test_metrics_whose_names_begin_like_an_aggregate_are_scenarios(tmp_path):
    # "Mean IoU", "Average Precision", "Mean squared error" are one task each: a column is an aggregate by its
    # name only where the whole name is an aggregate's ("Average ⬆️", "Mean win rate ↑ [ sort ]", "Avg. rank")
    d = _board(12, 5, seed=3).rename_axis("model")
    d.columns = ["ImageNet top-1", "Mean IoU (ADE20K)", "Average Precision (COCO)", "CIFAR-100",
                 "Mean squared error (depth)"]
    f = tmp_path / "board.csv"
    d.to_csv(f)
    with pytest.warns(UserWarning, match="'Mean squared error \\(depth\\)' named like a lower-is-better"):
        wide, pub = read_scores(f)
    assert list(wide.columns) == list(d.columns) and pub is None
    assert wide.attrs["note"].startswith("1 column(s) lower-is-better (")  # the error negated, nothing left out
    for name in ("Average ⬆️", "Mean win rate ↑ [ sort ]", "average_score", "Average (56 datasets)"):
        d2 = d.assign(**{name: (d["ImageNet top-1"] + 0.01).round(3)})  # a named aggregate, whatever its values
        d2.to_csv(f)
        wide, pub = read_scores(f, higher_is_better=["Mean squared error (depth)"])
        assert list(wide.columns) == list(d.columns) and pub.name == name, name


def test_a_scenario_of_a_ten_model_excerpt_ranking_as_the_others_do_stays(tmp_path):
    # 10 real HELM Lite models: MedQA ranks them as the other six tasks together do (Spearman ρ = 0.985, two
    # adjacent swaps) by chance, not as their aggregate
    f = tmp_path / "lite.csv"
    f.write_text(
        "Model,NarrativeQA - F1,MedQA - EM,WMT 2014 - BLEU-4,NaturalQuestions (closed) - F1,GSM8K - EM,"
        "OpenbookQA - EM,LegalBench - EM\n"
        "Mixtral (8x22B),0.779,0.704,0.209,0.478,0.8,0.882,0.708\n"
        "Qwen1.5 (72B),0.601,0.67,0.201,0.417,0.799,0.93,0.694\n"
        "Llama 2 (13B),0.741,0.392,0.167,0.371,0.266,0.634,0.591\n"
        "LLaMA (65B),0.755,0.507,0.189,0.433,0.489,0.754,0.48\n"
        "Qwen1.5 (32B),0.589,0.656,0.193,0.353,0.773,0.932,0.636\n"
        "Claude 3.5 Sonnet (20241022),0.77,0.859,0.226,0.467,0.956,0.966,0.647\n"
        "Gemini 1.5 Flash (002),0.746,0.656,0.212,0.323,0.328,0.914,0.67\n"
        "Qwen2.5 Instruct Turbo (7B),0.742,0.6,0.155,0.205,0.83,0.862,0.632\n"
        "Palmyra-X-004,0.773,0.775,0.203,0.457,0.905,0.926,0.73\n"
        "GPT-4 (0613),0.768,0.815,0.211,0.457,0.932,0.96,0.713\n")
    wide, pub = read_scores(f)
    assert "MedQA - EM" in wide.columns and wide.shape == (10, 7) and pub is None


@pytest.mark.parametrize("name", ["Mean squared error", "WER (%)", "val_loss", "Perplexity (wikitext)", "Top-1 err"])
def test_a_metric_named_lower_is_better_is_negated_with_one_warning_and_can_be_read_as_is(tmp_path, name):
    d = _board(12, 4, seed=5).rename_axis("model")
    d[name] = (1 - d.mean(axis=1)).round(3)  # an error: the best models lowest
    f = tmp_path / "board.csv"
    d.to_csv(f)
    with pytest.warns(UserWarning) as said:
        wide, _ = read_scores(f)
    assert [str(w.message) for w in said] == [
        f"SCORES: column(s) {name!r} named like a lower-is-better metric (an error, loss or perplexity) are read "
        "negated, so that higher is better; name them in --higher-is-better (Python: higher_is_better=[...]) to read "
        "them as they are, or mark such a header ↑ or ↓"]
    np.testing.assert_array_equal(wide[name], -d[name])
    for kw in (dict(scenarios=[name, "Task 0 - EM"]), {}):  # as the columns named, and as every column
        with pytest.warns(UserWarning, match="named like a lower-is-better") if kw else _no_warning():
            wide, _ = read_scores(f, **kw) if kw else read_scores(f, higher_is_better=[name])
        np.testing.assert_array_equal(wide[name], -d[name] if kw else d[name])
    with pytest.raises(ValueError, match=r"^--higher-is-better: unknown column\(s\) \['Nope'\]"):
        read_scores(f, higher_is_better=["Nope"])


def test_a_metric_named_lower_is_better_is_ranked_so_by_the_audit(tmp_path):
    from effstats.cli import main

    d = _board(12, 4, seed=5).rename_axis("model")
    d["Mean squared error"] = (1 - d.mean(axis=1)).round(3)
    f = tmp_path / "board.csv"
    d.to_csv(f)
    for extra, negated in (([], True), (["--higher-is-better", "Mean squared error"], False)):
        out = tmp_path / f"o{negated}"
        assert main(["audit", str(f), "--out", str(out), "--n-boot", "20", "--no-progress", *extra]) == 0
        md = (out / "report.md").read_text()
        assert ("named like a lower-is-better metric" in md) == negated and "holds negative values" not in md
        tau = pd.read_csv(out / "scenarios.csv").set_index("scenario")["tau_with_rest"]
        # negated, the error ranks the models as the tasks do; read as it is, the other way round
        assert (tau["Mean squared error"] > 0) == negated


def test_two_columns_named_as_the_aggregate_are_said_in_one_warning_and_scenarios_keeps_one(tmp_path):
    d = _board(12, 4, seed=6).rename_axis("model")
    d.insert(0, "Average", d.mean(axis=1).round(3))
    d.insert(1, "Mean", (d.iloc[:, 1:].median(axis=1) + 0.05).round(3))
    f = tmp_path / "board.csv"
    d.to_csv(f)
    with pytest.warns(UserWarning) as said:
        wide, pub = read_scores(f)
    assert [str(w.message) for w in said] == [
        "SCORES: columns 'Average', 'Mean' are each named as a published aggregate: all are set aside from the "
        "scores, 'Average' read as the leaderboard's; to score one of them, name the score columns with --scenarios "
        "(Python: scenarios=[...])"]
    assert list(wide.columns) == list(d.columns[2:]) and pub.name == "Average"
    wide, pub = read_scores(f, scenarios=["Mean", *d.columns[2:]])
    assert list(wide.columns) == ["Mean", *d.columns[2:]] and pub.name == "Average"
    wide, pub = read_scores(f, scenarios=["Average", "Mean", *d.columns[2:]])  # both scored: no aggregate by name
    assert list(wide.columns) == list(d.columns) and (pub is None or pub.name not in ("Average", "Mean"))


class _no_warning:
    def __enter__(self):
        import warnings

        self._w = warnings.catch_warnings()
        self._w.__enter__()
        warnings.simplefilter("error")

    def __exit__(self, *exc):
        self._w.__exit__(*exc)
