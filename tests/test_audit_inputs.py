"""``effstats audit`` on exports that are not what they seem: scores on two scales, lm-evaluation-harness groups
beside their subtasks, odd encodings and spreadsheet leftovers, and names that print alike.

Each case is a real file in ``tmp_path`` read by the command line or :func:`effstats.reliability.audit`; a refused
input must give one line naming what is wrong (the rows, the columns, the file).
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from effstats.cli import main, read_openllm_json
from effstats.reliability import audit


def _board(n_models: int = 12, n_scen: int = 6, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = np.clip(np.linspace(0.85, 0.3, n_models)[:, None] + rng.normal(0, 0.06, (n_models, n_scen)), 0.01, 0.99)
    return pd.DataFrame(x.round(3), index=pd.Index([f"m{i}" for i in range(n_models)], name="model"),
                        columns=[f"s{j}" for j in range(n_scen)])


def _run(argv, capsys) -> tuple[int, str]:
    code = main(["audit", *map(str, argv), "--n-boot", "30", "--no-progress"])
    return code, capsys.readouterr().err


# ---------------------------------------------------------------------------- scores on two scales
@pytest.mark.parametrize("row", ["m3", "m11"])
@pytest.mark.parametrize("direction", ["one row in percent", "one row in fractions"])
def test_rows_on_two_scales_are_refused_naming_the_rows(tmp_path, capsys, row, direction):
    board = _board()
    if direction == "one row in percent":
        board.loc[row] = (board.loc[row] * 100).round(1)
    else:
        board = (board * 100).round(1)
        board.loc[row] = (board.loc[row] / 100).round(3)
    board.to_csv(tmp_path / "board.csv")
    code, err = _run([tmp_path / "board.csv", "--out", tmp_path / "out"], capsys)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, err
    assert "mix two scales" in lines[0] and f"{row!r} score" in lines[0] and "11 other row(s)" in lines[0]
    assert not (tmp_path / "out").exists()
    with pytest.raises(ValueError, match=f"mix two scales: {row!r}"):
        audit(board, n_boot=20, progress=False)


def test_a_whole_table_in_percent_is_still_divided_and_a_weak_row_in_it_is_not_a_mix(tmp_path):
    board = (_board() * 100).round(1)
    board.loc["m11"] = [0.0, 1.5, 0.0, 2.0, 0.0, 0.5]  # a weak model in percent: above 1 somewhere
    res = audit(board, n_boot=20, progress=False)
    got = res.scores.set_index("model")["mwr"]
    assert res.scores["mean"].max() <= 1 and any("divided by 100" in n for n in res.notes)
    np.testing.assert_allclose(res.scores.set_index("model")["mean"].reindex(board.index),
                               board.mean(axis=1) / 100)
    assert got.idxmax() == "m0"


def test_percent_columns_beside_fractions_refuse_a_mean_and_are_noted_under_the_win_rate(tmp_path, capsys):
    board = _board()
    board[["s0", "s1", "s2"]] = (board[["s0", "s1", "s2"]] * 100).round(1)
    board.to_csv(tmp_path / "mix.csv")
    for aggregate in ("mean", "mean-of-means"):
        code, err = _run([tmp_path / "mix.csv", "--out", tmp_path / "o", "--aggregate", aggregate], capsys)
        lines = err.strip().splitlines()
        assert code == 2 and len(lines) == 1, err
        assert ("--aggregate: column(s) 's0', 's1', 's2' lie in 0–100 while 's3', 's4', 's5' lie in [0, 1] "
                "(percentages beside fractions?)") in lines[0] and "--aggregate mwr" in lines[0]
    res = audit(tmp_path / "mix.csv", n_boot=20, progress=False)
    assert res.settings["aggregate"] == "mwr"
    assert any("'s0', 's1', 's2' lie in 0–100" in n and "within each column" in n for n in res.notes)
    # the Mean Win Rate compares within a column: the same ranking as with every column in fractions
    same = audit(_board(), n_boot=20, progress=False)
    pd.testing.assert_series_equal(res.scores.set_index("model")["mwr"], same.scores.set_index("model")["mwr"])


def test_a_published_mean_of_the_columns_as_they_are_is_audited_as_published(tmp_path):
    board = _board()
    board[["s0", "s1"]] = (board[["s0", "s1"]] * 100).round(1)
    board.insert(0, "Average", board.mean(axis=1).round(3))
    res = audit(board, n_boot=20, progress=False)
    assert res.settings["aggregate"] == "mean" and res.published["max_abs_diff"] < 1e-3
    assert any("the published mean averages them as they are" in n for n in res.notes)


# ---------------------------------------------------------------------------- lm-evaluation-harness results
def _lm_results(folder: Path, percent_model: int | None = None, groups: bool = False) -> Path:
    """One results_<timestamp>.json per model in lm-eval 0.4's layout: "acc,none" metrics, a group 'mmlu' in
    "results", "groups" and "group_subtasks" beside its two subtasks (a plain task listing no subtasks)."""
    rng = np.random.default_rng(9)
    tasks = ["arc_easy", "hellaswag", "winogrande", "piqa", "mmlu_astronomy", "mmlu_anatomy"]
    for i in range(8):
        d = folder / f"org__m{i}"
        d.mkdir(parents=True)
        res = {}
        for t in tasks:
            v = float(rng.uniform(0.3, 0.9)) * (100 if i == percent_model else 1)
            res[t] = {"alias": t, "acc,none": v, "acc_stderr,none": "N/A"}
        doc = {"results": res, "config": {"model": "hf", "model_args": f"pretrained=org/m{i}"},
               "model_name": f"org/m{i}"}
        if groups:
            res["mmlu"] = {"alias": "mmlu", "acc,none": float(np.mean([res[t]["acc,none"] for t in tasks[4:]]))}
            doc["groups"] = {"mmlu": res["mmlu"]}
            doc["group_subtasks"] = {"mmlu": ["mmlu_astronomy", "mmlu_anatomy"], "arc_easy": []}
        (d / "results_2026-01-01T00-00-00.json").write_text(json.dumps(doc))
    return folder


def test_lm_eval_results_with_one_model_in_percent_are_refused(tmp_path, capsys):
    folder = _lm_results(tmp_path / "runs", percent_model=2)
    code, err = _run([folder, "--out", tmp_path / "o"], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "'org/m2' score above 1" in err, err


def test_lm_eval_groups_are_left_out_beside_their_subtasks(tmp_path):
    folder = _lm_results(tmp_path / "runs", groups=True)
    wide = read_openllm_json(folder)
    assert "mmlu" not in wide.columns and {"mmlu_astronomy", "mmlu_anatomy", "arc_easy"} <= set(wide.columns)
    assert "the group(s) 'mmlu'" in wide.attrs["note"]
    res = audit(folder, n_boot=20, progress=False)
    assert res.settings["n_scenarios"] == 6 and any("the group(s) 'mmlu'" in n for n in res.notes)
    # a group none of whose subtasks the file holds is the only score of those tasks: it stays
    for f in folder.rglob("results_*.json"):
        doc = json.loads(f.read_text())
        for t in ("mmlu_astronomy", "mmlu_anatomy"):
            del doc["results"][t]
        del doc["groups"]
        f.write_text(json.dumps(doc))
    assert "mmlu" in read_openllm_json(folder).columns


# ---------------------------------------------------------------------------- odd cells and files
@pytest.mark.parametrize("extra", [[], ["--scenarios", "s0,s1,s2"], ["--aggregate", "mean"]])
def test_an_infinite_score_is_refused_naming_its_column_and_row(tmp_path, capsys, extra):
    board = _board()
    board.insert(0, "Average", board.mean(axis=1).round(3))
    board.loc["m2", "s1"] = np.inf
    board.to_csv(tmp_path / "inf.csv")
    code, err = _run([tmp_path / "inf.csv", "--out", tmp_path / "o", *extra], capsys)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, err
    assert "infinite score in column 's1', row 'm2'" in lines[0]
