"""Per-example results in the shapes a benchmark maintainer has them: a ResponseMatrix from a long table, a wide table
of one column per example, a long DataFrame. None of them may be audited as a models × scenarios table without a
word: each example read as a scenario turns "add scenarios" into "the ranking is robust"."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from effstats import ResponseMatrix
from effstats.cli import main
from effstats.datasets import load_helm_lite
from effstats.reliability import audit, dior, flash_helm


def _long(n_models: int = 8, n_scen: int = 3, n_items: int = 30, seed: int = 0) -> pd.DataFrame:
    """0/1 results of models of spread ability on examples of a few scenarios, one row per model and example."""
    rng = np.random.default_rng(seed)
    ability = np.linspace(0.8, 0.3, n_models)
    rows = [(f"m{m}", f"s{s}", f"s{s}/{i}", float(rng.random() < ability[m] + 0.1 * (s - 1)))
            for m in range(n_models) for s in range(n_scen) for i in range(n_items)]
    return pd.DataFrame(rows, columns=["model", "scenario", "item", "score"])


def _said(record) -> list[str]:
    return [str(w.message) for w in record if issubclass(w.category, UserWarning)]


def test_a_response_matrix_whose_items_name_no_scenario_is_audited_as_a_table_with_a_warning():
    df = _long()
    with pytest.warns(UserWarning, match=r"items carry no 'scenario' column, so each of its 90 items is read as a "
                                         r"scenario.*from_long\(df, groups='scenario'\)") as record:
        res = audit(ResponseMatrix.from_long(df), n_boot=20, progress=False, n_jobs=1)
    assert res.settings["n_scenarios"] == 90
    said = [s for s in _said(record) if "items carry no" in s]
    assert len(said) == 1 and f"**Warning**: {said[0]}" in res.notes and said[0] in res.to_markdown()
    # given their scenario, the examples are audited as examples, without the warning
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        grouped = audit(ResponseMatrix.from_long(df, groups="scenario"), n_boot=20, progress=False, n_jobs=1)
    assert grouped.settings["n_scenarios"] == 3 and grouped.settings["n_items"] == 90
    assert not [s for s in _said(record) if "items carry no" in s]
    # a leaderboard with a scenario per item (the bundled HELM Lite) is a table, and says nothing
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        audit(load_helm_lite(), n_boot=20, progress=False, n_jobs=1)
    assert not [s for s in _said(record) if "items carry no" in s]


def test_dior_and_flash_helm_say_that_the_items_name_no_scenario():
    rm = ResponseMatrix.from_long(_long())
    with pytest.raises(ValueError, match=r"^decision: 'examples' needs per-example data .*this ResponseMatrix's items "
                                         r"carry no 'scenario' column.*groups='scenario'"):
        dior(rm, "examples", n_boot=20, rng=0)
    with pytest.raises(ValueError, match=r"^data: Flash-HELM .*this ResponseMatrix's items carry no 'scenario' "
                                         r"column.*groups='scenario'"):
        flash_helm(rm, n_boot=10, rng=0)
    # a table that is one (the bundled HELM Lite) keeps the message about tables
    with pytest.raises(ValueError, match="this table has one score per scenario"):
        dior(load_helm_lite(), "examples", n_boot=20, rng=0)


@pytest.mark.parametrize("call", ["dior", "flash_helm"])
def test_a_long_dataframe_given_to_dior_or_flash_helm_is_named_as_one(call):
    df = _long()
    fn = {"dior": lambda: dior(df, "examples", n_boot=20, rng=0), "flash_helm": lambda: flash_helm(df, rng=0)}[call]
    with pytest.raises(ValueError, match=r"^data: a long table \(columns model, item, score\).*"
                                         r"ResponseMatrix\.from_long\(df, groups='scenario'\)"):
        fn()


def test_a_wide_table_of_one_column_per_example_is_refused_naming_the_long_layout(tmp_path, capsys):
    df = _long(n_items=10)
    wide = tmp_path / "wide.csv"
    df.pivot(index="model", columns="item", values="score").to_csv(wide)
    assert main(["audit", str(wide), "--out", str(tmp_path / "w"), "--n-boot", "20", "--no-progress"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("effstats audit: error: SCORES: its 30 score columns are named as "
                                               "examples of 3 tasks, <task>/<doc>")
    assert "long table with the columns model, scenario, item and score" in err[0]
    assert not (tmp_path / "w" / "report.md").exists()
    # said from the header, before the cells are read (minutes on tens of thousands of columns): a bad cell of such a
    # file gets the same answer
    text = wide.read_text().splitlines()
    wide.write_text("\n".join([text[0], text[1].rsplit(",", 1)[0] + ",oops", *text[2:]]) + "\n")
    assert main(["audit", str(wide), "--out", str(tmp_path / "w"), "--n-boot", "20", "--no-progress"]) == 2
    assert "score columns are named as examples of 3 tasks" in capsys.readouterr().err
    with pytest.raises(ValueError, match=r"^SCORES: its 30 score columns are named as examples of 3 tasks"):
        audit(df.pivot(index="model", columns="item", values="score"), n_boot=20, progress=False)
    # the same results as the long table it came from are audited per example
    long = tmp_path / "long.csv"
    df.to_csv(long, index=False)
    assert main(["audit", str(long), "--out", str(tmp_path / "l"), "--n-boot", "20", "--no-progress"]) == 0
    assert "30 examples" in (tmp_path / "l" / "report.md").read_text()
    # named as scenarios on purpose, they are audited as such
    cols = sorted(df["item"].unique())
    assert main(["audit", str(wide), "--out", str(tmp_path / "s"), "--n-boot", "20", "--no-progress",
                 "--scenarios", ",".join(cols)]) == 0


def test_a_leaderboard_with_a_few_columns_named_like_task_and_number_is_a_table(tmp_path):
    rng = np.random.default_rng(1)
    board = pd.DataFrame(rng.random((6, 3)).round(3), index=[f"m{i}" for i in range(6)],
                         columns=["WMT/2014", "WMT/2016", "MMLU"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        res = audit(board, n_boot=20, progress=False)
    assert res.settings["n_scenarios"] == 3


def test_the_header_counts_the_examples_not_evaluated(tmp_path):
    df = _long()
    df.loc[[3, 40, 200], "score"] = np.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # from_long's note of the NaN rows
        res = audit(ResponseMatrix.from_long(df, groups="scenario"), n_boot=20, progress=False, n_jobs=1)
    first = res.to_markdown().split("\n\n")[1]
    assert first.startswith("8 models, 3 scenarios, 90 examples (3 of 720 results not evaluated, omitted), "
                            "0 missing cells")


def test_one_long_table_for_audit_and_the_loop_says_which_column_each_reads(tmp_path, capsys):
    # audit's scenario column is the loop's task: each command says so, instead of ignoring it (select: one task
    # 'all') or refusing it without the option that reads it (audit)
    df = _long().assign(item=lambda d: d["item"].str.replace("/", "-"))  # ids that name no task
    f = tmp_path / "long.csv"
    df.to_csv(f, index=False)
    assert main(["select", str(f), "--budget", "12", "--method", "random", "--out", str(tmp_path / "sel"),
                 "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert err.count("column 'scenario' is not read") == 1 and "name it 'task'" in err
    df.rename(columns={"scenario": "task"}).to_csv(f, index=False)
    assert main(["select", str(f), "--budget", "12", "--method", "random", "--out", str(tmp_path / "sel2"),
                 "--no-progress"]) == 0
    out, err = capsys.readouterr()
    assert "in 3 task(s)" in out and "is not read" not in err
    assert main(["audit", str(f), "--out", str(tmp_path / "a"), "--n-boot", "20", "--no-progress"]) == 2
    assert capsys.readouterr().err.strip().endswith("its scenarios in column 'task': pass --by task")
    assert main(["audit", str(f), "--by", "task", "--out", str(tmp_path / "a"), "--n-boot", "20",
                 "--no-progress"]) == 0


def test_a_leaderboard_straight_from_read_csv_is_told_to_index_its_model_names(tmp_path):
    from effstats.reliability import mean_win_rate

    board = pd.DataFrame({"Model": ["a", "b", "c"], "X": [0.5, 0.3, 0.2], "Y": [0.4, 0.6, 0.1]})
    with pytest.raises(ValueError, match=r"^scores: column 'Model' has non-numeric values, e\.g\. 'a'; to read it as "
                                         r"the model names: table\.set_index\('Model'\)$"):
        mean_win_rate(board)
    # as suggested it reads: each model's share of the others beaten, averaged over X and Y
    beaten = [(np.sum(board[c].to_numpy() < v) / 2) for c in ("X", "Y") for v in board[c]]
    want = np.reshape(beaten, (2, 3)).mean(axis=0)
    np.testing.assert_allclose(mean_win_rate(board.set_index("Model")).to_numpy(), want)
    # a text cell among scores is no column of names: said as before
    bad = board.set_index("Model").astype(object)
    bad.loc["b", "X"] = "oops"
    with pytest.raises(ValueError, match=r"^scores: column 'X' has non-numeric values, e\.g\. 'oops'$"):
        mean_win_rate(bad)


def test_the_duplicates_warning_names_the_column_of_run_times_to_sort_by(tmp_path, capsys):
    # an Open LLM details export (leaderboards/mmlu): two runs of a model told apart by a timestamp, the file sorted
    # by score, so that the last row in file order is not the latest run
    p = tmp_path / "mmlu.tsv"
    rows = ["model_name\tsplit_name\ta\tb", "x\t2024-01-02T11-05-01.000001\t0.6\t0.7",
            "y\t2023-11-01T00-00-00.5\t0.5\t0.6", "x\t2023-12-10T04-42-16.291896\t0.4\t0.5",
            "z\t2023-10-01 08:30:00\t0.3\t0.2"]
    p.write_text("\n".join(rows) + "\n")
    assert main(["audit", str(p), "--out", str(tmp_path / "o"), "--n-boot", "20", "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "kept the last row of each in file order (no date column is read: sort the rows by 'split_name', which " \
           "holds times, to keep the latest)" in err
    # the refusal on request still suggests no column of times as the model column
    assert main(["audit", str(p), "--out", str(tmp_path / "o2"), "--no-progress", "--duplicates", "error"]) == 2
    assert "--model 'split_name'" not in capsys.readouterr().err

