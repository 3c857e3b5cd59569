"""Per-item tables carry rows that are not models: a spreadsheet's "Mean" or "Majority" row, an "ensemble-mean"
pseudo-model. The readers find them by content (the item means, majority answers or standard deviations of the
other rows within the printed rounding), leave them out and say so; real models are never taken for them."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from effstats.datasets import read_scores_csv, read_scores_frame
from effstats.workflow import read_results


def _correct(n_models: int = 20, n_items: int = 300, seed: int = 0) -> pd.DataFrame:
    """0/1 correctness of models of unequal skill on items of unequal difficulty (models agree on easy items)."""
    rng = np.random.default_rng(seed)
    skill, ease = rng.normal(1.5, 0.8, n_models), rng.normal(0.5, 1.5, n_items)
    p = 1 / (1 + np.exp(-(skill[:, None] + ease[None, :])))
    x = (rng.random((n_models, n_items)) < p).astype(int)
    return pd.DataFrame(x, index=pd.Index([f"org/m{i}" for i in range(n_models)], name="model"),
                        columns=[f"t{j % 2}/{j}" for j in range(n_items)])


def _read(path, **kw):
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        rm = read_scores_csv(path, **kw)
    return rm, [str(w.message) for w in said]


def test_mean_and_majority_rows_of_a_wide_table_are_left_out_and_named(tmp_path):
    x = _correct()
    foot = pd.DataFrame([x.mean().round(3), (x.mean() > 0.5).astype(int)], index=["Mean", "Majority"])
    f = tmp_path / "wide.csv"
    pd.concat([x, foot]).rename_axis("model").to_csv(f)
    rm, said = _read(f)
    assert list(rm.model_ids) == list(x.index)
    assert rm.kind == "binary"  # the Mean row alone made the table graded
    np.testing.assert_array_equal(rm.values, x.to_numpy())
    assert len(said) == 1 and "'Mean' (the other rows' item means" in said[0]
    assert "'Majority' (the other rows' majority answer" in said[0] and said[0].endswith("not models: left out")
    with pytest.warns(UserWarning, match=r"^source: wide\.csv: row\(s\) 'Mean'"):
        assert read_results(f).n_models == 20


def test_an_ensemble_mean_pseudo_model_of_a_long_table_is_left_out(tmp_path):
    x = _correct(seed=1)
    long = x.stack().rename("score").rename_axis(["model", "item"]).reset_index()
    mean = long.groupby("item", sort=False)["score"].mean().round(3).reset_index().assign(model="ensemble-mean")
    f = tmp_path / "long.csv"
    pd.concat([long, mean[["model", "item", "score"]]]).to_csv(f, index=False)
    rm, said = _read(f)
    assert rm.n_models == 20 and rm.kind == "binary" and "ensemble-mean" not in set(rm.model_ids)
    assert len(said) == 1 and "'ensemble-mean' (the other rows' item means, within rounding)" in said[0]
    frame = pd.read_csv(f)
    with pytest.warns(UserWarning, match=r"^frame: row\(s\) 'ensemble-mean'"):
        assert read_scores_frame(frame).n_models == 20
    # a kind stated by the caller stays
    assert _read(f, kind="score")[0].kind == "score"


def test_a_graded_table_keeps_its_models_and_loses_its_mean_row(tmp_path):
    rng = np.random.default_rng(3)
    x = pd.DataFrame(rng.beta(2, 2, (12, 40)).round(4), index=[f"m{i}" for i in range(12)],
                     columns=[f"q{j}" for j in range(40)])
    f = tmp_path / "graded.csv"
    pd.concat([x, x.mean().round(2).to_frame("Average").T]).rename_axis("model").to_csv(f)
    rm, said = _read(f)
    assert list(rm.model_ids) == list(x.index) and "'Average'" in said[0]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("shape", [(8, 40), (12, 300), (30, 1000)])
def test_real_models_are_never_summary_rows(tmp_path, seed, shape):
    # models that agree with the majority on nearly every item (a small, easy table) included
    x = _correct(*shape, seed=seed)
    f = tmp_path / "wide.csv"
    x.to_csv(f)
    rm, said = _read(f)
    assert rm.n_models == shape[0] and not said


def test_a_model_giving_the_majority_answer_on_a_few_contentious_items_stays(tmp_path):
    # 15 models x 20 items that 5 to 10 of them answer right, and a 16th that gives their majority answer on each:
    # a good model does that on a few contentious items often enough, so it is kept; named as a summary, or on a
    # table of 300 items, such a row is left out
    rng = np.random.default_rng(7)
    x = np.zeros((15, 20), int)
    for j in range(20):
        x[rng.choice(15, 5 + j % 6, replace=False), j] = 1
    items = [f"t/{j}" for j in range(20)]
    for who, keep in (("org/good", True), ("Majority", False)):
        f = tmp_path / "t.csv"
        pd.DataFrame(np.vstack([x, x.mean(0) > 0.5]).astype(int), columns=items,
                     index=pd.Index([f"org/m{i}" for i in range(15)] + [who], name="model")).to_csv(f)
        rm, said = _read(f)
        assert (rm.n_models == 16 and not said) if keep else (rm.n_models == 15 and "'Majority'" in said[0]), said
    big = _correct(20, 300, seed=0)
    big.loc["org/m20"] = (big.mean() > 0.5).astype(int)
    big.to_csv(f)
    rm, said = _read(f)
    assert rm.n_models == 20 and "'org/m20' (the other rows' majority answer" in said[0]


def test_a_median_pseudo_model_of_a_long_leaderboard_is_left_out(tmp_path):
    from effstats.datasets import read_scores

    rng = np.random.default_rng(4)
    x = pd.DataFrame(rng.uniform(0.2, 0.9, (30, 6)).round(3), index=[f"m{i}" for i in range(30)],
                     columns=[f"S{k}" for k in range(6)])
    long = x.stack().rename("score").rename_axis(["model", "scenario"]).reset_index()
    med = x.median().round(3).rename("score").rename_axis("scenario").reset_index().assign(model="Median")
    f = tmp_path / "long.csv"
    pd.concat([long, med[["model", "scenario", "score"]]]).to_csv(f, index=False)
    wide, _ = read_scores(f)
    assert sorted(wide.index) == sorted(x.index)
    assert "summary rows 'Median' (the column medians of the other rows within rounding)" in wide.attrs["note"]


def test_a_model_near_the_column_means_of_a_small_leaderboard_stays(tmp_path):
    # 14 models x 3 scenarios printed to 2 decimals, and a 15th within rounding of the others' means: one model in
    # 15 lands there by chance often enough (a column's spread is 0.1, the window 0.02), so it is kept; named as a
    # summary, or beside 10 scenarios printed to 3 decimals, such a row is left out
    from effstats.datasets import read_scores

    rng = np.random.default_rng(5)
    for n_cols, digits, who, kept in ((3, 2, "Claude", True), (3, 2, "Mean", False), (10, 3, "Claude", False)):
        x = pd.DataFrame(rng.normal(np.linspace(0.3, 0.7, n_cols), 0.1, (14, n_cols)).round(digits),
                         columns=[f"S{k}" for k in range(n_cols)], index=[f"org/m{i}" for i in range(14)])
        x.loc[who] = x.mean().round(digits)
        f = tmp_path / "board.csv"
        x.rename_axis("model").to_csv(f)
        wide, _ = read_scores(f)
        assert len(wide) == (15 if kept else 14) and (who in wide.index) == kept, (n_cols, who)
        note = wide.attrs.get("note", "")
        assert kept or f"summary rows {who!r} (the column means of the other rows within rounding)" in note


def test_a_model_near_the_column_means_of_a_whole_percent_leaderboard_stays(tmp_path):
    # 15 real HELM Lite models x 4 scenarios printed as whole percent: 'Claude Instant 1.2' lies within rounding of
    # the other rows' column means (chance over the table about 1/1,000 under normal scores, more for real ones)
    from effstats.datasets import read_scores

    f = tmp_path / "lite.csv"
    f.write_text(
        "Model,WMT 2014 - BLEU-4,MMLU - EM,OpenbookQA - EM,NaturalQuestions (open) - F1\n"
        "Phi-2,4,52,80,68\nGemini 1.5 Pro (001),19,77,90,75\nPaLM-2 (Unicorn),26,70,94,67\n"
        "Gemma 2 Instruct (27B),21,66,92,73\nQwen1.5 (72B),20,65,93,76\nPaLM-2 (Bison),24,61,88,81\n"
        "Mixtral (8x7B 32K seqlen),19,65,87,70\nLLaMA (65B),19,58,75,67\n"
        "Llama 3.3 Instruct Turbo (70B),22,70,93,74\n"
        "GPT-4o mini (2024-07-18),21,67,92,75\nYi (6B),12,53,80,75\nDeepSeek v3,21,80,95,76\n"
        "Claude Instant 1.2,19,63,84,73\nClaude 3.5 Sonnet (20240620),23,80,97,75\n"
        "Luminous Extended (30B),8,25,27,61\n")
    wide, _ = read_scores(f)
    assert len(wide) == 15 and "Claude Instant 1.2" in wide.index and "summary rows" not in wide.attrs.get("note", "")
