"""``effstats audit`` on leaderboard exports as their sites write them: what is a scenario, what names the models,
what the published aggregate is, and what a table of ties says.

Real exports are read where ../shared/data/leaderboards holds them (BBH, GLUE, MTEB: Rank, Parameters, Model Size);
the others are written here column for column as the sites export them (Open LLM Leaderboard v1 and v2, a table with
summary columns, a weighted domain average).
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from effstats.cli import main, read_scores
from effstats.reliability import audit


def _board(n_models: int = 10, n_scen: int = 5, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = np.clip(np.linspace(0.85, 0.3, n_models)[:, None] + rng.normal(0, 0.06, (n_models, n_scen)), 0, 1)
    return pd.DataFrame(x.round(3), index=pd.Index([f"org/model-{i}" for i in range(n_models)], name="model"),
                        columns=[f"S{j}" for j in range(n_scen)])


def _run(argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_all_equal_scores_say_every_model_ties(tmp_path):
    board = _board() * 0 + 0.5
    board.to_csv(tmp_path / "ties.csv")
    res = audit(tmp_path / "ties.csv", tmp_path / "out", n_boot=20, progress=False)
    assert (res.scores["rank"] == 1).all()
    report = (tmp_path / "out" / "report.md").read_text()
    assert "**No leader**: every model ties, with the same Mean Win Rate for all 10 models" in report
    assert "**The leader**" not in report


def test_a_tie_for_first_names_the_tied_models(tmp_path):
    board = _board()
    board.iloc[1] = board.iloc[0]
    board.to_csv(tmp_path / "top.csv")
    res = audit(tmp_path / "top.csv", tmp_path / "out", n_boot=20, progress=False)
    first = sorted(res.scores["model"][res.scores["rank"] == 1])
    assert first == ["org/model-0", "org/model-1"]
    report = (tmp_path / "out" / "report.md").read_text()
    assert ("**No single leader**: 2 models tie for first with the same Mean Win Rate: org/model-0, org/model-1"
            in report)


@pytest.mark.parametrize("layout", ["wide", "long", "openllm"])
def test_an_empty_model_name_is_refused_naming_its_row(tmp_path, capsys, layout):
    board = _board()
    if layout == "wide":
        board.rename(index={"org/model-3": ""}).to_csv(tmp_path / "t.csv")
    elif layout == "long":
        long = board.reset_index().melt(id_vars="model", var_name="scenario", value_name="score")
        long.loc[3, "model"] = " "
        long.to_csv(tmp_path / "t.csv", index=False)
    else:
        v1 = (board.iloc[:, :5] * 100).set_axis(["ARC", "HellaSwag", "MMLU", "TruthfulQA", "Winogrande"], axis=1)
        v1 = v1.assign(GSM8K=v1["ARC"], Average=v1.mean(axis=1).round(2)).reset_index().rename(
            columns={"model": "fullname"})
        v1.loc[3, "fullname"] = np.nan
        v1.to_csv(tmp_path / "t.csv", index=False)
    code, out, err = _run(["audit", tmp_path / "t.csv", "--out", tmp_path / "o", "--n-boot", 20, "--no-progress"],
                          capsys)
    assert code == 2 and len(err.splitlines()) == 1, err
    assert "SCORES: row 4 (line 5) has an empty model name in column" in err


V1_HEADERS = {"ARC": "ARC(25-shot)", "HellaSwag": "HellaSwag(10-shot)", "MMLU": "MMLU(5-shot)",
              "TruthfulQA": "TruthfulQA(0-shot)", "Winogrande": "Winogrande(5-shot)", "GSM8K": "GSM8K(5-shot)"}


def _openllm_v1(spaced: bool) -> pd.DataFrame:
    """The v1 leaderboard's export: model link and name, the average, then the six tasks with their shots, in %."""
    board = (_board(12, 6, seed=4) * 100).round(1)
    heads = {k: (v.replace("(", " (") + " ⬆️" if spaced else v) for k, v in V1_HEADERS.items()}
    board.columns = list(heads.values())
    links = [f'<a target="_blank" href="https://huggingface.co/{m}">{m}</a>' for m in board.index]
    out = board.assign(**{"Average ⬆️": board.mean(axis=1).round(2)}).reset_index()
    return out.assign(Model=links, **{"#Params (B)": np.linspace(1, 70, 12).round(1)}).rename(
        columns={"model": "model_name_for_query"})


@pytest.mark.parametrize("spaced", [False, True])
@pytest.mark.parametrize("fmt", ["openllm-csv", "auto"])
def test_openllm_v1_headers_with_shots_are_its_tasks(tmp_path, spaced, fmt):
    df = _openllm_v1(spaced)
    df.to_csv(tmp_path / "v1.csv", index=False)
    res = audit(tmp_path / "v1.csv", tmp_path / "out", format=fmt, n_boot=20, progress=False)
    assert sorted(res.scenarios["scenario"]) == sorted(V1_HEADERS)  # not "#Params (B)", not the average
    # models named by the links' text, ranked by the published average
    assert set(res.scores["model"]) == {f"org/model-{i}" for i in range(12)}
    assert res.published["column"] == "Average ⬆️"
    assert res.published["kendall_tau"] == pytest.approx(1.0)
    assert "<a " not in (tmp_path / "out" / "report.md").read_text()


def test_openllm_csv_without_its_task_columns_names_the_columns_it_expects(tmp_path, capsys):
    _board().reset_index().rename(columns={"model": "fullname"}).to_csv(tmp_path / "x.csv", index=False)
    code, out, err = _run(["audit", tmp_path / "x.csv", "--format", "openllm-csv", "--out", tmp_path / "o",
                           "--n-boot", 20, "--no-progress"], capsys)
    assert code == 2 and len(err.splitlines()) == 1
    assert "expected the v1 tasks ARC, HellaSwag, MMLU, TruthfulQA, Winogrande, GSM8K (headers such as " \
           "'ARC (25-shot)' too) or the v2 tasks IFEval, BBH, MATH Lvl 5, GPQA, MUSR, MMLU-PRO" in err


@pytest.mark.parametrize("order", ["Model first", "fullname first"])
def test_the_plain_model_column_is_the_id_not_the_html_link(tmp_path, order):
    """Open LLM v2's export: 'Model' holds <a href=…> links, 'fullname' the ids (here with tasks of its own, so the
    generic table reader chooses)."""
    board = _board(10, 4, seed=2)
    links = [f'<a target="_blank" href="https://huggingface.co/{m}" style="color: x;">{m}</a>  📑'
             for m in board.index]
    t = board.reset_index().rename(columns={"model": "fullname"}).assign(Model=links)
    cols = ["Model", "fullname"] if order == "Model first" else ["fullname", "Model"]
    t[cols + list(board.columns)].to_csv(tmp_path / "v2.csv", index=False)
    res = audit(tmp_path / "v2.csv", tmp_path / "out", n_boot=20, progress=False)
    assert sorted(res.scores["model"]) == sorted(board.index)
    report = (tmp_path / "out" / "report.md").read_text()
    assert "href" not in report and "<a" not in report


def test_a_link_column_alone_is_read_by_its_text(tmp_path):
    board = _board(8, 4, seed=5)
    t = board.reset_index()
    t["model"] = [f'<a href="https://x.org/{m}">{m}</a>' for m in board.index]
    t.to_csv(tmp_path / "links.csv", index=False)
    res = audit(tmp_path / "links.csv", tmp_path / "out", n_boot=20, progress=False)
    assert sorted(res.scores["model"]) == sorted(board.index)
    assert any("HTML links" in n for n in res.notes)


SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "leaderboards"


def _with_summaries(names: dict) -> tuple[pd.DataFrame, list]:
    """A paper's results table: per-task accuracies in percent (1 decimal) and, named as ``names`` says, the row
    median (1 decimal), the standard deviation over tasks (2 decimals), the rank by mean and the parameter count."""
    board = (_board(14, 6, seed=9) * 100).round(1)
    tasks = list(board.columns)
    out = board.copy()
    out[names["median"]] = board.median(axis=1).round(1)
    out[names["sd"]] = board.std(axis=1, ddof=1).round(2)
    out[names["rank"]] = board.mean(axis=1).rank(ascending=False, method="min").astype(int)
    out[names["params"]] = np.geomspace(7e10, 1e8, 14).round(-6).astype(np.int64)  # the best are the largest
    front = [names["rank"], names["median"], names["sd"], names["params"]]
    return out[front + tasks].reset_index(), tasks


@pytest.mark.parametrize("names", [
    {"median": "Median Accuracy", "sd": "SD", "rank": "Rank", "params": "#Params"},
    {"median": "Median Accuracy", "sd": "Std", "rank": "Rank", "params": "#Params"},
    # the same columns under names that say nothing: recognised by their content
    {"median": "Q2", "sd": "s", "rank": "Place", "params": "Count"},
])
def test_summary_columns_are_not_scenarios(tmp_path, names):
    table, tasks = _with_summaries(names)
    table.to_csv(tmp_path / "paper.csv", index=False)
    res = audit(tmp_path / "paper.csv", tmp_path / "out", n_boot=20, progress=False)
    assert sorted(res.scenarios["scenario"]) == sorted(tasks)
    note = " ".join(res.notes)
    for key in ("median", "sd", "rank", "params"):
        assert repr(names[key]) in note, (key, note)
    # the published ranking is compared with the recomputed one (here: the same, ranked by the mean)
    assert res.settings["aggregate"] == "mwr"
    pr = res.published_rank
    assert pr["column"] == names["rank"] and pr["n_compared"] == 14
    mean_rank = table.set_index("model")[tasks].mean(axis=1).rank(ascending=False, method="min")
    assert (table.set_index("model")[names["rank"]] == mean_rank).all()
    report = (tmp_path / "out" / "report.md").read_text()
    assert f"Published ranking {names['rank']!r} vs the recomputed ranking" in report


def test_a_rank_column_is_compared_and_its_disagreements_named(tmp_path):
    table, tasks = _with_summaries({"median": "Median Accuracy", "sd": "SD", "rank": "Rank", "params": "#Params"})
    r = table["Rank"].to_numpy().copy()
    i, j = int(np.argmin(r)), int(np.argsort(r)[1])
    r[i], r[j] = r[j], r[i]  # the published top two swapped
    table["Rank"] = r
    table.to_csv(tmp_path / "paper.csv", index=False)
    res = audit(tmp_path / "paper.csv", tmp_path / "out", aggregate="mean", n_boot=20, progress=False)
    pr = res.published_rank
    assert pr["n_moved"] == 2 and pr["kendall_tau"] < 1
    top = res.scores["model"].iloc[0]
    assert pr["moved"][top] == (2, 1)


@pytest.mark.skipif(not (SHARED / "bbh" / "leaderboard.tsv").is_file(), reason="shared leaderboards not present")
def test_real_exports_rank_and_parameter_columns(tmp_path):
    # BBH: Rank, Parameters and the published Average beside 27 tasks; its Rank follows the Average exactly
    res = audit(SHARED / "bbh" / "leaderboard.tsv", n_boot=20, progress=False)
    assert res.settings["n_scenarios"] == 27 and res.published["column"] == "Average"
    assert res.published_rank["column"] == "Rank" and res.published_rank["kendall_tau"] == pytest.approx(1.0)
    assert res.published_rank["n_moved"] == 0
    # MTEB: Rank beside Model Size / Embedding Dimensions / Max Tokens; its ranking is compared
    res = audit(SHARED / "mteb" / "leaderboard.tsv", n_boot=20, progress=False)
    assert res.published_rank["column"] == "Rank" and res.published_rank["kendall_tau"] > 0.9
    assert not {"Model Size (GB)", "Embedding Dimensions", "Max Tokens", "Rank"} & set(res.scenarios["scenario"])


def test_a_weighted_domain_average_is_recognised_with_its_weights(tmp_path):
    """An Open LLM v2-style export of 40 models in percent (2 decimals) with a published domain_average =
    0.5 MMLU-PRO + 0.3 BBH + 0.2 GPQA, rounded as printed."""
    rng = np.random.default_rng(1)
    tasks = ["IFEval", "BBH", "MATH Lvl 5", "GPQA", "MUSR", "MMLU-PRO"]
    t = pd.DataFrame(np.clip(np.linspace(60, 20, 40)[:, None] + rng.normal(0, 6, (40, 6)), 0, 100).round(2),
                     columns=tasks)
    t.insert(0, "model", [f"org/m{i}" for i in range(40)])
    t["domain_average"] = (0.5 * t["MMLU-PRO"] + 0.3 * t["BBH"] + 0.2 * t["GPQA"]).round(2)
    t.to_csv(tmp_path / "v2.csv", index=False)
    res = audit(tmp_path / "v2.csv", tmp_path / "out", n_boot=20, progress=False)
    pub = res.published
    assert pub["column"] == "domain_average" and pub["kind"] == "weighted" and pub["rule"] == "exact"
    assert pub["weights"] == pytest.approx({"MMLU-PRO": 0.5, "BBH": 0.3, "GPQA": 0.2}, abs=1e-3)
    assert sorted(res.scenarios["scenario"]) == sorted(tasks)  # not a scenario
    # compared like an unweighted aggregate: the recomputed weighted mean ranks as the published one
    assert pub["kendall_tau"] == pytest.approx(1.0) and pub["max_abs_diff"] < 0.01
    assert res.settings["aggregate"] == "mean"
    report = (tmp_path / "out" / "report.md").read_text()
    assert "0.5 × MMLU-PRO + 0.3 × BBH + 0.2 × GPQA" in report
    # a weighted mean of 3 of the 6 columns: the ranking is the unweighted mean of all 6, and the report says why
    assert res.settings["weights"] is None
    np.testing.assert_allclose(res.scores.set_index("model")["mean"],
                               t.set_index("model")[tasks].mean(axis=1).reindex(res.scores["model"]) / 100, atol=1e-9)
    assert "use the unweighted mean: the weighted mean leaves out some of the score columns" in report


def test_a_mean_is_not_mistaken_for_a_weighted_one_and_scenarios_are_not_aggregates(tmp_path):
    board = _board(30, 6, seed=3)
    board.insert(0, "Average", board.mean(axis=1).round(3))
    board.to_csv(tmp_path / "b.csv")
    res = audit(tmp_path / "b.csv", n_boot=20, progress=False)
    assert res.published["kind"] == "mean" and res.settings["n_scenarios"] == 6
    plain = _board(30, 6, seed=3)
    plain.to_csv(tmp_path / "p.csv")
    assert audit(tmp_path / "p.csv", n_boot=20, progress=False).published is None




@pytest.mark.parametrize("levels", [[0, 1], [7, 13, 34, 65, 70], list(range(7))])
def test_a_column_of_few_whole_number_levels_among_decimal_scores_is_not_a_scenario(tmp_path, levels):
    """A 0/1 flag, parameter sizes or a count of tasks passed, under a neutral name, among scores printed with
    decimals: left out and named (as a scenario, under the Mean Win Rate a larger size would count as a win); named
    with --scenarios it is kept."""
    board = _board(40, 6, seed=7)
    board["B"] = [levels[i % len(levels)] for i in range(len(board))]
    board.to_csv(tmp_path / "t.csv")
    res = audit(tmp_path / "t.csv", tmp_path / "out", n_boot=20, progress=False)
    assert sorted(res.scenarios["scenario"]) == [f"S{j}" for j in range(6)]
    report = (tmp_path / "out" / "report.md").read_text()
    assert re.search(rf"Left out of the scores: .*'B' \((whole numbers of {len(levels)} levels among scores with "
                     r"decimals|values up to \d+, off the scores' scale)", report)
    kept = audit(tmp_path / "t.csv", n_boot=20, progress=False, scenarios=["S0", "S1", "B"])
    assert "B" in set(kept.scenarios["scenario"])


@pytest.mark.parametrize("suffix", [" ±", "_stderr", " (n)", " (95% CI)"])
def test_uncertainty_count_and_bound_columns_beside_each_score_are_not_scenarios(tmp_path, suffix):
    """A column named as a score column plus a suffix is that column's: a standard error or half-width (small
    against its scores), a count (whole numbers beside fractions), or a pair of interval bounds bracketing it (read
    as scenarios, the bounds would make the score, their mean, look like a published aggregate)."""
    board = _board(30, 5, seed=6)
    rng = np.random.default_rng(0)
    t = pd.DataFrame(index=board.index)
    for c in board.columns:
        t[c] = board[c]
        if suffix == " (95% CI)":
            t[f"{c} (95% CI low)"] = (board[c] - 0.02).round(3)
            t[f"{c} (95% CI high)"] = (board[c] + 0.02).round(3)
        elif suffix == " (n)":
            t[c + suffix] = rng.integers(100, 1000, len(board))
        else:
            t[c + suffix] = rng.uniform(0.005, 0.03, len(board)).round(3)
    t.to_csv(tmp_path / "t.csv")
    res = audit(tmp_path / "t.csv", tmp_path / "out", n_boot=20, progress=False)
    assert sorted(res.scenarios["scenario"]) == sorted(board.columns) and res.published is None
    report = (tmp_path / "out" / "report.md").read_text()
    assert re.search(r"summary columns .*'S0[^']+' \((a count beside|an uncertainty of|a bound of) 'S0'", report)
    # a task named as another plus a suffix, on the scores' own scale, stays a scenario
    board["S0-hard"] = (board["S0"] * 0.6).round(3)
    board.to_csv(tmp_path / "hard.csv")
    assert "S0-hard" in set(audit(tmp_path / "hard.csv", n_boot=20, progress=False).scenarios["scenario"])


@pytest.mark.parametrize("layout", ["wide", "openllm"])
def test_summary_rows_at_the_foot_are_not_models(tmp_path, layout):
    """A spreadsheet's foot (the column means, medians and standard deviations of the models, as printed) is left
    out and named, by its values: the same rows under model-like names too; a table without them loses no row."""
    board = _board(40, 6, seed=5)
    if layout == "openllm":
        board = (board * 100).round(2)
        board.columns = ["ARC", "HellaSwag", "MMLU", "TruthfulQA", "Winogrande", "GSM8K"]
    dec = 2 if layout == "openllm" else 3
    foot = pd.DataFrame([board.mean(), board.median(), board.std()], index=["org/x-mean", "Median", "SD"]).round(dec)
    pd.concat([board, foot]).rename_axis("model").to_csv(tmp_path / "t.csv")
    res = audit(tmp_path / "t.csv", tmp_path / "out", n_boot=20, progress=False)
    assert sorted(res.scores["model"]) == sorted(board.index)
    report = (tmp_path / "out" / "report.md").read_text()
    assert ("summary rows 'org/x-mean' (the column means of the other rows within rounding); 'Median' (the column "
            "medians of the other rows within rounding); 'SD' (the column standard deviations of the other rows "
            "within rounding)") in report
    board.rename_axis("model").to_csv(tmp_path / "plain.csv")
    assert len(audit(tmp_path / "plain.csv", n_boot=20, progress=False).scores) == 40


@pytest.mark.parametrize("aggregate", [True, False])
def test_a_column_of_whole_numbers_makes_no_scenario_an_aggregate(tmp_path, aggregate):
    """Fractions printed with 3 decimals (HELM Lite's layout, with or without its Mean win rate) beside a 0/1
    column: a mean's rounding is the mean of its inputs' half units, not the coarsest one's (0.5 made a task
    'equal within rounding to the mean of the other columns'), and a bound near a column's spread proves nothing:
    every task stays a scenario and the table ranks by its Mean Win Rate."""
    board = _board(40, 10, seed=4)
    tasks = list(board.columns)
    if aggregate:
        wins = board.rank().sub(1).div(len(board) - 1)
        board.insert(0, "Mean win rate", wins.mean(axis=1).round(3))
    board["Open weights"] = [i * 7 % 3 % 2 for i in range(len(board))]
    board.to_csv(tmp_path / "lite.csv")
    res = audit(tmp_path / "lite.csv", n_boot=20, progress=False)
    assert set(tasks) <= set(res.scenarios["scenario"])
    assert res.settings["aggregate"] == "mwr"
    assert res.published is None or res.published["column"] == "Mean win rate"

@pytest.mark.skipif(not (SHARED / "mteb" / "leaderboard.tsv").is_file(), reason="shared leaderboards not present")
def test_mteb_average_is_the_dataset_weighted_mean_of_its_categories():
    """MTEB's 'Average (56 datasets)' weights each category average by its number of datasets (12, 11, 3, 4, 15,
    10 and 1 of 56): the fit finds those weights from the published numbers alone."""
    res = audit(SHARED / "mteb" / "leaderboard.tsv", n_boot=20, progress=False)
    pub = res.published
    assert pub["column"] == "Average (56 datasets)" and pub["kind"] == "weighted"
    counts = {c: int(c.split("(")[1].split()[0]) for c in pub["weights"]}
    assert sum(counts.values()) == 56
    for c, w in pub["weights"].items():
        assert w == pytest.approx(counts[c] / 56, abs=2e-3), c
    assert pub["kendall_tau"] > 0.999


def test_subscenario_names_follow_the_sums_columns_in_an_unsorted_table():
    from effstats.reliability import Benchmark

    board = _board(8, 4, seed=6).set_axis(["Zeta", "Alpha", "Mu", "Beta"], axis=1)
    bench = Benchmark.from_data(board)
    num, den = bench.sub_sums()
    means = pd.DataFrame(num[0] / den[0], index=board.index, columns=bench.subscenario_names)
    pd.testing.assert_frame_equal(means[board.columns], board, check_names=False)


@pytest.mark.skipif(not (SHARED / "helm_lite" / "leaderboard.tsv").is_file(), reason="shared leaderboards not present")
@pytest.mark.parametrize("header", ["Scenario", "name"])
def test_a_transposed_leaderboard_is_refused(tmp_path, capsys, header):
    d = pd.read_csv(SHARED / "helm_lite" / "leaderboard.tsv", sep="\t")
    num = [c for c in d.columns[2:] if pd.api.types.is_numeric_dtype(d[c])]
    t = d[["Model"] + num].set_index("Model").T
    t.index.name = header
    t.to_csv(tmp_path / "transposed.csv")
    code, _, err = _run(["audit", tmp_path / "transposed.csv", "--out", tmp_path / "a", "--n-boot", 20,
                         "--no-progress"], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "transposed.csv looks transposed" in err and "GPT-4o (2024-05-13)" in err
    t.T.rename_axis("Model").to_csv(tmp_path / "board.csv")  # the right way round: read
    code, _, err = _run(["audit", tmp_path / "board.csv", "--out", tmp_path / "b", "--n-boot", 20, "--no-progress"],
                        capsys)
    assert code == 0, err


def test_cells_of_two_metrics_are_read_as_their_mean(tmp_path):
    # GLUE's MRPC, STS-B and QQP cells give two metrics of one task ('94.2/92.3'); its Score averages them
    p = tmp_path / "glue.tsv"
    rows = [("m1", 60.0, "90.0/88.0", 70.1), ("m2", 50.0, "80.5/79.5", 65.0), ("m3", 40.0, "70.0/72.0", 55.5),
            ("m4", 45.0, "-", 45.0)]
    p.write_text("Name\tCoLA\tMRPC\tScore\n" + "".join(f"{n}\t{a}\t{b}\t{s}\n" for n, a, b, s in rows))
    wide, published = read_scores(p)
    assert list(wide.columns) == ["CoLA", "MRPC"]
    assert wide["MRPC"].tolist()[:3] == pytest.approx([89.0, 80.0, 71.0]) and np.isnan(wide.loc["m4", "MRPC"])
    assert "read as their mean" in wide.attrs["note"]
    # the columns named as the report's other notes name them, not as a Python list (escaped \[...\] in Markdown)
    assert "two metrics of one task) in 'MRPC' are read as their mean" in wide.attrs["note"]
    assert published is not None and published.attrs["info"]["column"] == "Score"


@pytest.mark.skipif(not (SHARED / "glue" / "leaderboard.tsv").is_file(), reason="shared leaderboards not present")
def test_glue_score_is_reproduced_from_its_tasks():
    wide, published = read_scores(SHARED / "glue" / "leaderboard.tsv")
    assert {"MRPC", "STS-B", "QQP"} <= set(wide.columns)
    info = published.attrs["info"]
    assert info["column"] == "Score" and info["rule"] == "exact" and info["max_abs_diff"] < 0.1
    # the nine tasks at 1/9 each, MNLI's two halves sharing one ninth, the AX diagnostic left out
    w = info["weights"]
    assert "AX" not in w and w["MNLI-m"] + w["MNLI-mm"] == pytest.approx(1 / 9, abs=0.01)
    assert all(v == pytest.approx(1 / 9, abs=0.01) for k, v in w.items() if not k.startswith("MNLI"))



@pytest.mark.skipif(not (SHARED / "superglue" / "leaderboard.tsv").is_file(),
                    reason="shared leaderboards not present")
def test_a_fitted_weighted_aggregate_sums_to_one_and_the_ranking_reproduces_it():
    """SuperGLUE's Score is the mean of its 8 tasks; an unconstrained fit of its printed numbers gives weights
    summing to 1.0009, which the ranking then normalises: its 'mean' column (91.205 for the leader) sat 0.095 below
    the published 91.3 while the report said the aggregate is reproduced within max |Δ| 0.0485. The weights sum to
    1 and the ranking's scores are the aggregate the report compares."""
    res = audit(SHARED / "superglue" / "leaderboard.tsv", n_boot=20, progress=False)
    pub = res.published
    assert pub["kind"] == "weighted" and pub["rule"] == "exact"
    assert sum(pub["weights"].values()) == pytest.approx(1, abs=5e-4)  # 4-decimal rounding of 8 weights
    # the mean of the 8 tasks (the diagnostics AX-b and AX-g left out) reproduces the Score within rounding: the
    # weights say so (1/8 each), not the least-squares fit of the rounding (0.1211 to 0.127)
    assert pub["weights"] == {t: 0.125 for t in ["BoolQ", "CB", "COPA", "MultiRC", "ReCoRD", "RTE", "WiC", "WSC"]}
    s = res.scores
    gap = (s["mean"] - s["published"]).abs().max()
    # the ranking uses the weights as reported, to 4 decimals: up to 5e-5 × 100 points off per task
    slack = len(pub["weights"]) * 5e-5 * s["published"].max()
    assert gap <= pub["max_abs_diff"] + slack, (gap, pub["max_abs_diff"], slack)

def test_a_column_in_percent_among_fractions_is_warned(tmp_path, capsys):
    board = _board()
    board.iloc[:, 2] *= 100
    board.to_csv(tmp_path / "mixed.csv")
    code, _, err = _run(["audit", tmp_path / "mixed.csv", "--out", tmp_path / "a", "--n-boot", 20, "--no-progress"],
                        capsys)
    assert code == 0, err
    assert f"warning: SCORES: column(s) {str(board.columns[2])!r} hold values up to" in err and "percentages?" in err
    board.iloc[:, 2] /= 100
    board.to_csv(tmp_path / "fractions.csv")
    code, _, err = _run(["audit", tmp_path / "fractions.csv", "--out", tmp_path / "b", "--n-boot", 20,
                         "--no-progress"], capsys)
    assert code == 0 and "percentages?" not in err, err


def test_percent_summary_columns_left_out_are_warned_as_left_out(tmp_path, capsys):
    # ImageNet's per-class table: fractions per class, and Acc@1 / Acc@5 in percent summarising them
    board = _board(n_models=12, n_scen=8)
    board["Acc@1"] = (100 * board.mean(axis=1)).round(2)
    board["Acc@5"] = (100 * board[["S0", "S1", "S2", "S3", "S4", "S5"]].max(axis=1)).round(2)
    board.to_csv(tmp_path / "classes.csv")
    code, _, err = _run(["audit", tmp_path / "classes.csv", "--out", tmp_path / "a", "--n-boot", 20,
                         "--no-progress"], capsys)
    assert code == 0, err
    warning = next(line for line in err.splitlines() if "percentages?" in line)
    assert "'Acc@1', 'Acc@5'" in warning and "left out of the scores as summary columns" in warning, warning
    assert "refused" not in warning
    report = (tmp_path / "a" / "report.md").read_text()
    assert "summary columns 'Acc@1'" in report and "Score columns: S0, S1, S2, S3, S4, S5, S6, S7." in report
    # named as scores, they are kept: the Mean Win Rate ranks, a mean would need one scale
    code, _, err = _run(["audit", tmp_path / "classes.csv", "--out", tmp_path / "b", "--n-boot", 20,
                         "--no-progress", "--scenarios", ",".join(board.columns)], capsys)
    assert code == 0 and "A mean across them weighs them 100 times more" in err and "refused" not in err, err


def test_the_progress_bar_shows_by_default_only_on_a_terminal(tmp_path, capsys, monkeypatch):
    import os
    import sys

    board = _board(6, 3)
    audit(board, n_boot=20)
    assert "effstats audit" not in capsys.readouterr().err  # captured: no terminal
    audit(board, n_boot=20, progress=True)
    assert "effstats audit" in capsys.readouterr().err
    board.to_csv(tmp_path / "b.csv")
    code, _, err = _run(["audit", tmp_path / "b.csv", "--n-boot", 20, "--out", tmp_path / "o"], capsys)
    assert code == 0 and "effstats audit" not in err, err
    try:
        primary, secondary = os.openpty()  # a real terminal as stderr
    except OSError:  # a chroot or container without /dev/pts
        pytest.skip("no pseudo-terminal on this machine")
    os.set_blocking(primary, False)

    def drain() -> str:
        got = b""
        while True:
            try:
                chunk = os.read(primary, 1 << 16)
            except BlockingIOError:
                return got.decode(errors="replace")
            if not chunk:
                return got.decode(errors="replace")
            got += chunk

    with os.fdopen(secondary, "w") as tty:
        monkeypatch.setattr(sys, "stderr", tty)
        audit(board, n_boot=20)
        tty.flush()
        shown = drain()
        audit(board, n_boot=20, progress=False)
        tty.flush()
        hidden = drain()
    os.close(primary)
    assert "effstats audit" in shown and "effstats audit" not in hidden


def test_the_leader_sentence_names_the_top_two_swap_rate_and_the_best_model_error_rate_apart():
    # a clear leader over a close pack: the top two rarely swap, the next rankings' top pairs often do
    rng = np.random.default_rng(7)
    board = _board(8, 6)
    board.iloc[:, :] = np.clip(0.6 + rng.normal(0, 0.05, board.shape), 0, 1).round(3)
    board.iloc[0] = 0.9
    res = audit(board, n_boot=400)
    line = next(x for x in res.recommendations if x.startswith("**The leader**"))
    p = float(res.scores["p_ahead_of_next"].iloc[0])
    bm = res.reliability.query("granularity == 'scenarios' and objective == 'best_model'").iloc[0]
    top = re.search(r"the top two, (.+) and (.+), swap in (\d+)% of scenario resamples \(`p_ahead_of_next` "
                    r"([0-9.]+)\)", line)
    avg = re.search(r"over the top pairs of (\d) rankings, each without the previous one's leader, a pair swaps in "
                    r"(\d+)% of scenario resamples on average \(best-model DIoR ([0-9.]+)\)", line)
    assert top and avg, line
    assert list(top.group(1, 2)) == res.scores["model"].iloc[:2].tolist()
    assert int(top.group(3)) == round(100 * (1 - p)) and float(top.group(4)) == round(p, 3)
    assert int(avg.group(1)) == res.settings["n_top"] == 5
    assert int(avg.group(2)) == round(100 * bm.error_rate) and float(avg.group(3)) == round(bm.dior, 3)
    assert bm.error_rate - (1 - p) > 0.1  # the two rates differ here: the sentence must not give one for the other


@pytest.mark.skipif(not (SHARED / "mteb" / "leaderboard.tsv").is_file(), reason="shared leaderboards not present")
def test_a_weighted_published_average_ranks_the_models_as_published(tmp_path):
    """MTEB's Average is a weighted mean of its 7 category averages: the audit ranks by that weighted mean with the
    recovered weights (said in the report), so the published 'Rank' is reproduced except between models whose
    published Average is equal as printed; the unweighted mean placed most models differently."""
    res = audit(SHARED / "mteb" / "leaderboard.tsv", tmp_path / "out", n_boot=20, progress=False)
    w = res.settings["weights"]
    assert len(w) == 7 and sum(w.values()) == pytest.approx(1.0, abs=2e-3) and res.published["kind"] == "weighted"
    table = pd.read_csv(SHARED / "mteb" / "leaderboard.tsv", sep="\t").set_index("Model")
    brute = sum(v * table[c] for c, v in w.items()) / sum(w.values()) / 100
    tab = res.scores.set_index("model")
    np.testing.assert_allclose(tab["mean"].to_numpy(), brute.reindex(tab.index).to_numpy(), atol=1e-12)
    r = res.published_rank
    assert r["n_compared"] == 83 and r["kendall_tau"] > 0.998
    printed = table["Average (56 datasets)"]
    for m, (pub_rank, got) in r["moved"].items():  # only ties of the printed Average move
        other = table.index[table["Rank"] == got][0]
        assert printed[m] == printed[other], (m, pub_rank, got)
    report = (tmp_path / "out" / "report.md").read_text()
    assert ("Models ranked by the **weighted mean** of the scenarios with the published aggregate's weights "
            "(0.2679 × Retrieval Average (15 datasets)") in report
    assert "the ranking and the resampling above use these weights" in report


def test_benchmark_item_weight_weights_the_mean_only():
    """``item_weight``: the mean score is the weighted mean (and under scenario resampling the weighted mean of the
    drawn scenarios), by brute force; the Mean Win Rate and the mean of means do not change."""
    import dataclasses

    from effstats.reliability import Benchmark
    from effstats.reliability._winrate import _score

    x = np.random.default_rng(0).random((6, 4))
    w = np.array([0.5, 0.3, 0.15, 0.05])
    plain = Benchmark.from_data(x)
    bench = dataclasses.replace(plain, item_weight=w)
    num, den = bench.sub_sums()
    np.testing.assert_allclose(_score(bench, num, den, "mean", "strict")[0], x @ w / w.sum(), rtol=1e-12)
    c = np.array([[2.0, 0.0, 1.0, 1.0]])  # scenario 0 drawn twice, scenario 1 not
    np.testing.assert_allclose(_score(bench, num, den, "mean", "strict", scen_w=c)[0], x @ (c[0] * w) / (c[0] @ w),
                               rtol=1e-12)
    n0, d0 = plain.sub_sums()
    for s in ("mwr", "mean_of_means"):
        np.testing.assert_array_equal(_score(bench, num, den, s, "strict"), _score(plain, n0, d0, s, "strict"))
