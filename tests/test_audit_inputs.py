"""``effstats audit`` on exports that are not what they seem: scores on two scales, lm-evaluation-harness groups
beside their subtasks, odd encodings and spreadsheet leftovers, and names that print alike.

Each case is a real file in ``tmp_path`` read by the command line or :func:`effstats.reliability.audit`; a refused
input must give one line naming what is wrong (the rows, the columns, the file).
"""
from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from effstats.cli import main, read_openllm_json, read_scores
from effstats.datasets._scores import PercentColumnsWarning
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


def test_trailing_empty_columns_of_a_spreadsheet_export_are_dropped(tmp_path):
    board = _board(8, 3)
    lines = ["model,s0,s1,s2,,"] + [f"{m},{a},{b},{c},," for m, (a, b, c) in zip(board.index, board.to_numpy())]
    (tmp_path / "excel.csv").write_bytes(("\r\n".join(lines) + "\r\n").encode())
    res = audit(tmp_path / "excel.csv", n_boot=20, progress=False)
    assert res.settings["n_scenarios"] == 3
    pd.testing.assert_frame_equal(res.scores, audit(board, n_boot=20, progress=False).scores)
    # unnamed columns that hold values are data: still refused as columns of one (empty) name
    (tmp_path / "two.csv").write_text("model,s0,s1,,,\n" + "".join(f"m{i},0.{i},0.{i},0.5,0.6,\n"
                                                                    for i in range(1, 8)))
    with pytest.raises(ValueError, match="duplicate column names"):
        audit(tmp_path / "two.csv", n_boot=20, progress=False)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-8-sig"])
def test_unicode_encodings_are_read_by_their_bytes(tmp_path, encoding):
    board = _board(8, 4)
    board.index = [f"modèle-{i}" for i in range(8)]
    board.index.name = "model"
    text = board.to_csv(sep="\t")
    (tmp_path / "board.tsv").write_bytes(text.encode(encoding))
    (tmp_path / "plain.tsv").write_text(text, encoding="utf-8")
    want = audit(tmp_path / "plain.tsv", n_boot=20, progress=False)
    got = audit(tmp_path / "board.tsv", n_boot=20, progress=False)
    pd.testing.assert_frame_equal(got.scores, want.scores)
    assert got.leader == "modèle-0"


def test_a_latin1_file_is_refused_naming_the_file_the_byte_and_its_line(tmp_path, capsys):
    board = _board(8, 3)
    board.index = [f"modèle-{i}" for i in range(8)]
    (tmp_path / "latin1.csv").write_bytes(board.to_csv().encode("latin-1"))
    code, err = _run([tmp_path / "latin1.csv", "--out", tmp_path / "o"], capsys)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, err
    assert "latin1.csv' is not UTF-8 text (byte 0xe8 on line 2, which reads 'modèle-0," in lines[0]
    assert "save it as UTF-8" in lines[0]


def test_a_csv_named_parquet_is_read_by_its_bytes(tmp_path):
    from effstats.workflow import read_results

    text = "model,item,score\n" + "".join(f"m{m},i{i},{(m + i) % 2}\n" for m in range(3) for i in range(4))
    (tmp_path / "scores.parquet").write_text(text)
    (tmp_path / "scores.csv").write_text(text)
    got, want = read_results(tmp_path / "scores.parquet"), read_results(tmp_path / "scores.csv")
    assert got.model_ids.tolist() == want.model_ids.tolist() and np.array_equal(got.values, want.values)
    # bytes of neither: read as Parquet, whose reader says it is not one
    (tmp_path / "junk.parquet").write_bytes(b"\x00\x01junk")
    with pytest.raises(ValueError, match="not a Parquet file"):
        read_results(tmp_path / "junk.parquet")


def test_json_lines_named_csv_are_refused_as_json_lines(tmp_path, capsys):
    # by content: the fields of JSON lines read as a table are keys and values, refused as non-numeric columns
    rows = [{"model": f"m{m}", "scenario": f"s{j}", "score": 0.1 * (m + j)} for m in range(4) for j in range(3)]
    (tmp_path / "board.csv").write_text("\n" + "".join(json.dumps(r) + "\n" for r in rows))
    code, err = _run([tmp_path / "board.csv", "--out", tmp_path / "out"], capsys)
    assert code == 2 and len(err.splitlines()) == 1, err
    assert err.startswith("effstats audit: error: SCORES: board.csv holds JSON lines (its first non-blank line is a "
                          "JSON object), not a CSV/TSV table"), err
    # a table whose header starts with a brace is still a table
    pd.DataFrame({"{model": [f"m{m}" for m in range(4)], "s0": [0.1, 0.5, 0.3, 0.7],
                  "s1": [0.2, 0.4, 0.6, 0.8]}).to_csv(tmp_path / "brace.csv", index=False)
    code, err = _run([tmp_path / "brace.csv", "--model", "{model", "--out", tmp_path / "out2"], capsys)
    assert code == 0, err


@pytest.mark.parametrize("option", ["--model", "--by", "--item", "--score"])
@pytest.mark.parametrize("value", ["", " "])
def test_an_empty_column_option_is_refused_naming_it(tmp_path, capsys, option, value):
    # not read as the default column: the default's name would then appear in a refusal the user cannot place
    rows = [(f"m{m}", f"s{j}", f"s{j}/{i}", float((m + i) % 2)) for m in range(4) for j in range(2) for i in range(3)]
    pd.DataFrame(rows, columns=["model", "scenario", "item", "score"]).to_csv(tmp_path / "long.csv", index=False)
    code, err = _run([tmp_path / "long.csv", option, value, "--out", tmp_path / "out"], capsys)
    assert code == 2 and err == f"effstats audit: error: {option}: expected a column name, got {value!r}\n", err
    assert not (tmp_path / "out").exists()

def test_lm_eval_samples_with_a_byte_order_mark_are_read(tmp_path):
    from effstats import ResponseMatrix
    from effstats.datasets import read_lm_eval_samples
    from effstats.workflow import write_lm_eval_samples

    values = (np.random.default_rng(1).random((3, 20)) < 0.6).astype(float)
    truth = ResponseMatrix(values, model_ids=["a", "b", "c"], item_ids=[f"arc/{i}" for i in range(20)])
    write_lm_eval_samples(truth, tmp_path / "runs")
    want = read_lm_eval_samples(tmp_path / "runs")
    for f in (tmp_path / "runs").rglob("samples_*.jsonl"):
        f.write_bytes(b"\xef\xbb\xbf" + f.read_bytes())
    got = read_lm_eval_samples(tmp_path / "runs")
    assert got.item_ids.tolist() == want.item_ids.tolist() and np.array_equal(got.values, want.values)


# ---------------------------------------------------------------------------- what the report says
def test_all_equal_scores_get_no_advice_to_add_scenarios(tmp_path):
    board = _board() * 0 + 0.5
    res = audit(board, n_boot=20, progress=False)
    todo = " ".join(res.recommendations)
    assert "the scores do not separate the models" in todo
    assert "Add scenarios" not in todo and "Resolved rank differences" not in todo and "disagree" not in todo
    # one model apart: the advice is back
    board.loc["m0"] = [0.9, 0.8, 0.7, 0.9, 0.6, 0.8]
    assert any("Resolved rank differences" in r for r in audit(board, n_boot=20, progress=False).recommendations)


def test_names_equal_but_for_unicode_normalisation_or_case_are_warned_naming_both(tmp_path, capsys):
    board = _board()
    board.index = ["caf\u00e9", "cafe\u0301", "GPT", "gpt", *board.index[4:]]
    board.index.name = "model"
    board.to_csv(tmp_path / "names.csv")
    code, err = _run([tmp_path / "names.csv", "--out", tmp_path / "o"], capsys)
    warned = [line for line in err.splitlines() if "differ only in Unicode normalisation or case" in line]
    assert code == 0 and len(warned) == 1, err
    assert "'caf\u00e9' and 'cafe\u0301' (the same letters, composed and decomposed" in warned[0]
    assert "'GPT' and 'gpt' (in case)" in warned[0]
    assert "differ only in Unicode normalisation or case" in (tmp_path / "o" / "report.md").read_text()
    res = audit(_board(), n_boot=20, progress=False)
    assert not any("Unicode" in n for n in res.notes)


def test_figure_labels_tell_a_tab_from_the_text_backslash_t():
    from effstats.reliability._render import _labels

    names = ["a\tb", "a\\tb", "new\nline", "new\\nline", "cr\rx", "cr\\rx", "plain"]
    labels = _labels(names)
    assert len(set(labels)) == len(names)
    assert labels[0] == "a\\tb" and labels[1] == "a\\\\tb" and labels[6] == "plain"
    assert all("\t" not in s and "\n" not in s and "\r" not in s for s in labels)


# ---------------------------------------------------------------------------- what the scale says and cannot say
def test_a_rating_out_of_10_is_not_read_as_percent(tmp_path, capsys):
    board = (_board() * 10).round(2)  # a 0–10 rating (MT-Bench style): every column above 1, none above 10
    board.to_csv(tmp_path / "rating.csv")
    res = audit(tmp_path / "rating.csv", aggregate="mean", n_boot=20, progress=False)
    np.testing.assert_allclose(res.scores.set_index("model")["mean"].reindex(board.index), board.mean(axis=1))
    assert not any("in percent" in n for n in res.notes)
    assert any("lie within 0–10" in n and "read as they are" in n for n in res.notes)
    # a mean of 0–10 columns beside fractions weighs the ratings more: refused naming both groups
    board[["s3", "s4", "s5"]] = _board()[["s3", "s4", "s5"]]
    board.to_csv(tmp_path / "mixed.csv")
    code, err = _run([tmp_path / "mixed.csv", "--out", tmp_path / "o", "--aggregate", "mean"], capsys)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, err
    assert "'s0', 's1', 's2' lie in 0–10" in lines[0] and "'s3', 's4', 's5' lie in [0, 1]" in lines[0], err
    assert main(["audit", str(tmp_path / "mixed.csv"), "--out", str(tmp_path / "o2"), "--aggregate", "mean",
                 "--scale", "as-is", "--n-boot", "30", "--no-progress"]) == 0


def _hard_task(header: str, values: np.ndarray) -> pd.DataFrame:
    """Two columns in percent and a third, ``header``, within 0–10: a hard task's percentages or a rating."""
    board = (_board(n_scen=2) * 100).round(1)
    board[header] = values
    return board


@pytest.mark.parametrize("header, values", [
    ("HLE", np.linspace(9.47, 0.38, 12).round(2)),  # a hard task's percentages, arbitrary decimals
    ("HLE", np.linspace(9.5, 2.1, 12).round(1) + 0.05 * (np.arange(12) % 2 == 0)),  # none below 1
    ("HLE", np.r_[10.0, np.linspace(9.3, 2.2, 11)].round(1)),  # one model at exactly 10 %
])
def test_a_hard_task_s_percentages_beside_percent_columns_are_percent(tmp_path, capsys, header, values):
    board = _hard_task(header, values)
    board.to_csv(tmp_path / "hard.csv")
    res = audit(tmp_path / "hard.csv", aggregate="mean", n_boot=20, progress=False)
    # every column divided by 100, the hard one too: the mean is the table's mean in percent / 100
    np.testing.assert_allclose(res.scores.set_index("model")["mean"].reindex(board.index),
                               board.mean(axis=1) / 100)
    assert any(f"'{header}' lie within 0–10 and read as percent" in n and "--scale as-is" in n
               for n in res.notes), res.notes


@pytest.mark.parametrize("header, values", [
    ("MT-Bench", np.linspace(8.9, 4.5, 12).round(2)),  # a header naming the rating
    ("Quality", np.linspace(4.7, 1.3, 12).round(2)),  # within 1–5: a Likert scale
    ("Quality", np.linspace(9, 1, 12).round() / 1),  # whole points: a 0–10 rating
    ("Quality", (np.linspace(9, 1, 12) * 2).round() / 2),  # half points
])
def test_a_rating_beside_percent_columns_stays_a_rating_and_the_refusal_names_scale_percent(tmp_path, capsys,
                                                                                             header, values):
    board = _hard_task(header, values)
    board.to_csv(tmp_path / "rating.csv")
    code, err = _run([tmp_path / "rating.csv", "--out", tmp_path / "o", "--aggregate", "mean"], capsys)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, err
    assert f"column(s) '{header}' lie in 0–10" in err and "state --scale percent if the columns within 0–10 are " \
           "percentages too" in err, err
    # stated as percent, every column is divided by 100
    res = audit(tmp_path / "rating.csv", aggregate="mean", scale="percent", n_boot=20, progress=False)
    np.testing.assert_allclose(res.scores.set_index("model")["mean"].reindex(board.index),
                               board.mean(axis=1) / 100)


def _columns_on_another_scale(case: str) -> pd.DataFrame:
    """Seven columns of fractions, three of them (or one model) rewritten: fewer than the fractions, so the reader
    judges them, and too many to be set aside as summary columns off the scores' scale."""
    board = _board(n_scen=7)
    odd = ["s0", "s1", "s2"]
    if case == "a 0–10 rating":
        board[odd] = (board[odd] * 10).round(2)
    elif case == "a 1–5 scale":
        board[odd] = (1 + 4 * board[odd]).round(2)
    elif case == "a % header":  # percentages of a hard task: below 10, in percent by their header
        board[odd] = (board[odd] * 9).round(1)
        board = board.rename(columns={c: f"{c} %" for c in odd})
    else:  # one model in percent: each column holds a percent cell, so none reads as fractions
        board.loc["m3"] = (board.loc["m3"] * 100).round(1)
    return board


@pytest.mark.parametrize("case, percent, audit_says", [
    ("a 0–10 rating", [], "column(s) 's0', 's1', 's2' lie in 0–10"),
    ("a 1–5 scale", [], "column(s) 's0', 's1', 's2' lie in 0–10"),
    ("a % header", ["s0 %", "s1 %", "s2 %"], "column(s) 's0 %', 's1 %', 's2 %' lie in 0–100"),
    ("one model in percent", [], "mix two scales: 'm3' score above 1"),
])
def test_the_reader_and_the_audit_judge_a_column_s_scale_alike(tmp_path, case, percent, audit_says):
    path = tmp_path / "board.csv"
    _columns_on_another_scale(case).to_csv(path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        read_scores(path)
    said = [str(w.message) for w in caught if issubclass(w.category, PercentColumnsWarning)]
    # the reader calls percent exactly the columns the audit puts in 0–100, and nothing else
    if percent:
        names = ", ".join(map(repr, percent))
        assert len(said) == 1 and said[0].startswith(f"SCORES: column(s) {names} hold values up to"), said
    else:
        assert said == [], said
    if case == "one model in percent":
        with pytest.raises(ValueError, match=audit_says):
            audit(path, n_boot=20, progress=False)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = audit(path, n_boot=20, progress=False)
    assert res.settings["aggregate"] == "mwr"
    assert any(audit_says in n and "within each column" in n for n in res.notes), res.notes
    assert any("percentages?" in n for n in res.notes) == bool(percent), res.notes


def test_a_baseline_below_1_percent_everywhere_is_read_as_percent(tmp_path, capsys):
    board = (_board() * 100).round(1)
    board = board.sample(frac=1, random_state=4)  # not sorted by score: the order says nothing of the scale
    board.loc["random"] = [0.37, 0.34, 0.41, 0.38, 0.41, 0.35]  # a random baseline on a hard benchmark, in percent
    board = board.loc[["random", *board.index[:-1]]]
    board.to_csv(tmp_path / "pct.csv")
    code, err = _run([tmp_path / "pct.csv", "--out", tmp_path / "o"], capsys)
    assert code == 0, err
    res = audit(tmp_path / "pct.csv", aggregate="mean", n_boot=20, progress=False)
    means = res.scores.set_index("model")["mean"]
    np.testing.assert_allclose(means.reindex(board.index), board.mean(axis=1) / 100)
    assert means.idxmin() == "random" and any("'random' score below 1" in n for n in res.notes)
    # the scale stated: the same numbers whatever the rows look like
    stated = audit(tmp_path / "pct.csv", aggregate="mean", scale="percent", n_boot=20, progress=False)
    pd.testing.assert_series_equal(stated.scores.set_index("model")["mean"], means)
    with pytest.raises(ValueError, match="--scale fraction: column 's0' holds"):
        audit(tmp_path / "pct.csv", scale="fraction", n_boot=20, progress=False)


@pytest.mark.parametrize("typo", [100.0, 1.2])
def test_a_typo_cell_among_fractions_is_named_by_model_column_and_value(tmp_path, capsys, typo):
    board = _board()
    board.loc["m3", "s2"] = typo
    board.to_csv(tmp_path / "typo.csv")
    for aggregate in ("auto", "mean"):
        code, err = _run([tmp_path / "typo.csv", "--out", tmp_path / "o", "--aggregate", aggregate], capsys)
        lines = err.strip().splitlines()
        assert code == 2 and len(lines) == 1, err
        assert f"'m3' in 's2' = {typo:g}" in lines[0] and "--exclude" in lines[0], err
    with pytest.raises(ValueError, match=f"'m3' in 's2' = {typo:g}"):
        audit(board, n_boot=20, progress=False)
    res = audit(tmp_path / "typo.csv", exclude=["s2"], n_boot=20, progress=False)
    assert res.settings["n_scenarios"] == 5
    board.loc["m3", "s2"] = 1 + 1e-12  # floating-point noise above 1 is a fraction: no cell named, no scale note
    res = audit(board, aggregate="mean", n_boot=20, progress=False)
    assert res.settings["n_scenarios"] == 6 and not any("0–10" in n or "percent" in n for n in res.notes)


def test_noise_above_1_is_a_fraction_for_the_percent_warning_too(tmp_path, capsys):
    board = _board()
    board.loc["m0", "s2"] = 1.0000000001
    board.to_csv(tmp_path / "noise.csv")
    code, err = _run([tmp_path / "noise.csv", "--out", tmp_path / "o", "--aggregate", "mean"], capsys)
    assert code == 0 and "percentages?" not in err, err
    assert "percentages?" not in (tmp_path / "o" / "report.md").read_text(encoding="utf-8")


def test_a_stated_scale_gets_no_percent_warning_and_the_judged_one_says_what_happens(tmp_path, capsys):
    board = _board()
    board["s0"] = (board["s0"] * 100).round(1)
    board.to_csv(tmp_path / "mix.csv")
    code, err = _run([tmp_path / "mix.csv", "--out", tmp_path / "o"], capsys)
    assert code == 0 and "column(s) 's0' hold values up to" in err, err
    # read as they are, the column is off the fractions' scale and left out as a summary column: said so
    assert ("They are left out of the scores as summary columns (off the other columns' scale); name the score "
            "columns with --scenarios to keep them (divided by 100, or with --scale as-is)") in err
    assert "summary columns 's0'" in (tmp_path / "o" / "report.md").read_text(encoding="utf-8")
    code, err = _run([tmp_path / "mix.csv", "--out", tmp_path / "o2", "--aggregate", "mean", "--scale", "as-is"],
                     capsys)
    assert code == 0 and "percentages?" not in err, err
    assert "percentages?" not in (tmp_path / "o2" / "report.md").read_text(encoding="utf-8")


def test_percent_stated_for_fractions_is_read_as_stated_with_one_warning_line(tmp_path, capsys):
    board = _board()
    board.to_csv(tmp_path / "frac.csv")
    code, err = _run([tmp_path / "frac.csv", "--out", tmp_path / "o", "--scale", "percent"], capsys)
    lines = [line for line in err.splitlines() if "--scale percent" in line]
    assert code == 0 and len(lines) == 1, err
    top = float(board.to_numpy().max())
    assert lines[0] == (f"effstats audit: warning: --scale percent: every score lies in [0, 1] (largest {top!r}), as "
                        f"fractions do; divided by 100 they read as [0, {top / 100!r}]: drop --scale percent (or "
                        "state --scale fraction) unless these are percentages below 1"), err
    assert "**Warning**: --scale percent: every score" in (tmp_path / "o" / "report.md").read_text(encoding="utf-8")
    with pytest.warns(UserWarning, match="every score lies in"):
        res = audit(board, aggregate="mean", scale="percent", n_boot=20, progress=False)
    np.testing.assert_allclose(res.scores.set_index("model")["mean"].reindex(board.index), board.mean(axis=1) / 100)
    code, err = _run([tmp_path / "frac.csv", "--out", tmp_path / "o2"], capsys)  # judged: fractions, no warning
    assert code == 0 and "--scale percent" not in err, err


def test_a_column_that_fits_no_scale_is_named_in_the_report(tmp_path, capsys):
    board = (_board() * 100).round(1)
    board.loc["m0", "s1"] = 120.0
    board.to_csv(tmp_path / "pct120.csv")
    code, err = _run([tmp_path / "pct120.csv", "--out", tmp_path / "o"], capsys)
    assert code == 0, err
    assert "Score column 's1' exceeds 100 (120): read as it is." in (tmp_path / "o" / "report.md").read_text(
        encoding="utf-8")


# ---------------------------------------------------------------------------- counts and one-column tables
def _arena(n: int = 12, seed: int = 5) -> pd.DataFrame:
    """An Elo leaderboard (Chatbot Arena's layout): Elo per category, the published Overall, a vote count."""
    rng = np.random.default_rng(seed)
    elo = np.linspace(1300, 1050, n)[:, None] + rng.normal(0, 12, (n, 3))
    board = pd.DataFrame(elo.round(), columns=["Coding", "Math", "Creative Writing"]).astype(int)
    board.insert(0, "Overall", board.mean(axis=1).round().astype(int))
    board.insert(0, "Model", [f"model-{i}" for i in range(n)])
    # more votes for some weaker models: ranked by a mean over it, the order would follow the votes
    board["Votes"] = rng.permutation(np.linspace(4000, 52000, n).round().astype(int))
    board["Organization"] = [f"Org{i}" for i in range(n)]
    return board


def test_a_vote_count_among_elo_ratings_is_left_out_and_named(tmp_path):
    path = tmp_path / "arena.csv"
    _arena().to_csv(path, index=False)
    res = audit(path, n_boot=30, progress=False)
    assert res.settings["n_scenarios"] == 3, res.notes
    assert any("'Votes' (whole numbers up to 52000, over 10 times every other column's largest value" in n
               and "a count" in n for n in res.notes), res.notes
    assert res.published["kendall_tau"] > 0.9
    # named as a score column, it is audited as one
    res = audit(path, scenarios=["Coding", "Math", "Creative Writing", "Votes"], n_boot=30, progress=False,
                aggregate="mwr")
    assert res.settings["n_scenarios"] == 4 and not any("a count" in n for n in res.notes)


def test_whole_percentages_among_elo_scale_columns_stay_scores(tmp_path):
    # a column of whole numbers up to 100 is a score on a scale of its own, not a count
    board = _arena().drop(columns="Votes")
    board["Pass rate"] = np.linspace(90, 40, len(board)).round().astype(int)
    board[["Coding", "Math", "Creative Writing"]] = (board[["Coding", "Math", "Creative Writing"]] / 200).round(2)
    board = board.drop(columns="Overall")
    board.to_csv(tmp_path / "b.csv", index=False)
    res = audit(tmp_path / "b.csv", n_boot=30, progress=False, aggregate="mwr")
    assert res.settings["n_scenarios"] == 4, res.notes


def test_a_column_of_weight_0_in_the_published_weighted_mean_is_left_out_of_the_ranking(tmp_path):
    rng = np.random.default_rng(7)
    t1, t2 = np.linspace(0.93, 0.4, 12) + rng.normal(0, 0.03, 12), rng.uniform(0.3, 0.85, 12)
    board = pd.DataFrame({"t1": t1.round(4), "t2": t2.round(4), "t3": rng.uniform(0.1, 0.9, 12).round(4)},
                         index=pd.Index([f"model-{i}" for i in range(12)], name="model"))
    board.insert(0, "Average", (0.7 * board["t1"] + 0.3 * board["t2"]).round(6))
    board.to_csv(tmp_path / "wz.csv")
    res = audit(tmp_path / "wz.csv", out=tmp_path / "o", n_boot=30, progress=False)
    assert res.settings["weights"] == {"t1": 0.7, "t2": 0.3} and res.settings["n_scenarios"] == 2
    top = board["Average"].idxmax()
    assert res.scores["model"].iloc[0] == top and res.published["kendall_tau_ranked"] == pytest.approx(1.0)
    assert any("'t3', of weight 0 in the published weighted mean 'Average'" in n for n in res.notes), res.notes
    assert "Score columns: t1, t2." in res.notes, res.notes  # the columns scored, not those read
    # named with --scenarios, the column is kept
    res = audit(tmp_path / "wz.csv", scenarios=["t1", "t2", "t3"], n_boot=30, progress=False)
    assert res.settings["n_scenarios"] == 3 and not any("of weight 0" in n for n in res.notes)


def test_a_published_plain_mean_of_two_columns_on_two_scales_is_accepted_as_with_three(tmp_path, capsys):
    mt = np.linspace(8.9, 4.5, 12).round(1)
    mmlu = np.linspace(85, 52, 12).round() - np.arange(12) % 3
    board = pd.DataFrame({"model": [f"model-{i}" for i in range(12)], "MT-Bench": mt, "MMLU": mmlu})
    board.insert(1, "Average", ((mt + mmlu) / 2).round(2))
    board.to_csv(tmp_path / "mt2.csv", index=False)
    code, err = _run([tmp_path / "mt2.csv", "--out", tmp_path / "o"], capsys)
    assert code == 0, err
    report = (tmp_path / "o" / "report.md").read_text(encoding="utf-8")
    assert "the published mean averages them as they are, and so does this audit" in report
    # an Average of the columns on one scale (MT-Bench × 10) is not their mean as they are: still refused
    board["Average"] = ((10 * mt + mmlu) / 2).round(2)
    board.to_csv(tmp_path / "mt2b.csv", index=False)
    code, err = _run([tmp_path / "mt2b.csv", "--out", tmp_path / "o2"], capsys)
    assert code == 2 and "'MMLU' lie in 0–100 while column(s) 'MT-Bench' lie in 0–10" in err, err


def test_a_wide_table_with_one_score_column_named_score_says_so(tmp_path, capsys):
    pd.DataFrame({"model": [f"m{i}" for i in range(6)], "score": np.linspace(0.9, 0.4, 6)}).to_csv(
        tmp_path / "one.csv", index=False)
    code, err = _run([tmp_path / "one.csv", "--out", tmp_path / "o"], capsys)
    lines = [x for x in err.splitlines() if x.strip()]
    assert code == 2 and len(lines) == 1 and "expected at least 2 score columns" in err and "'score'" in err, err
    assert "--by" not in err
    # models repeated: a long table missing its scenario column, named
    pd.DataFrame({"model": ["a", "a", "b", "b"], "score": [0.9, 0.8, 0.7, 0.6]}).to_csv(tmp_path / "long.csv",
                                                                                      index=False)
    code, err = _run([tmp_path / "long.csv", "--out", tmp_path / "o2"], capsys)
    assert code == 2 and "--by: column 'scenario' not in the table" in err, err
    # one row per model with more score columns beside "score": a wide table, audited
    board = _board(8, 3)
    board.columns = ["score", "t2", "t3"]
    board.to_csv(tmp_path / "wide.csv")
    code, err = _run([tmp_path / "wide.csv", "--out", tmp_path / "o3", "--aggregate", "mwr"], capsys)
    assert code == 0, err


def test_scenarios_leaving_out_a_weighted_column_compare_the_audited_mean(tmp_path):
    rng = np.random.default_rng(8)
    board = pd.DataFrame(rng.uniform(0.3, 0.9, (12, 3)).round(4), columns=["t1", "t2", "t3"],
                         index=pd.Index([f"model-{i}" for i in range(12)], name="model"))
    board.insert(0, "Average", (0.5 * board["t1"] + 0.3 * board["t2"] + 0.2 * board["t3"]).round(6))
    board.to_csv(tmp_path / "w.csv")
    res = audit(tmp_path / "w.csv", out=tmp_path / "o", scenarios=["t1", "t3"], n_boot=30, progress=False)
    assert res.published["not_audited"] == ["t2"] and res.settings["n_scenarios"] == 2
    mean = board[["t1", "t3"]].mean(axis=1)
    assert res.published["max_abs_diff"] == pytest.approx((mean - board["Average"]).abs().max(), abs=1e-6)
    report = (tmp_path / "o" / "report.md").read_text(encoding="utf-8")
    assert "its column(s) 't2' are not among the score columns audited" in report


def test_a_board_whose_last_line_is_cut_short_is_refused_naming_the_line(tmp_path, capsys):
    rows = ["Model\tMean win rate\tA - EM\tB - EM\tC - EM", "m1\t0.9\t0.8\t0.7\t0.6", "m2\t0.5\t0.4\t0.5\t0.6",
            "m3\t0.1\t0.2\t0.3\t0.2"]
    (tmp_path / "cut.tsv").write_text("\n".join(rows + ["m4\t0.5\t0.3"]))
    code, err = _run([tmp_path / "cut.tsv", "--out", tmp_path / "o"], capsys)
    assert code == 2 and err.strip() == ("effstats audit: error: SCORES: cut.tsv: line 5 has 3 fields, the header 5: "
                                         "its missing fields would read as not evaluated (a truncated file, or one "
                                         "still being written?); complete the line or remove it"), err
    (tmp_path / "ok.tsv").write_text("\n".join(rows + ["m4\t0.5\t0.3\t\t"]) + "\n")  # cells left empty: not evaluated
    assert read_scores(tmp_path / "ok.tsv")[0].loc["m4"].isna().sum() == 2


def test_a_nul_character_in_a_board_cell_is_refused_naming_its_line_and_column(tmp_path, capsys):
    (tmp_path / "nul.tsv").write_bytes(b"Model\tA - EM\tB - EM\nm1\t0.9\t0.8\nm2\t0.\x00999\t0.4\nm3\t0.1\t0.2\n")
    code, err = _run([tmp_path / "nul.tsv", "--out", tmp_path / "o"], capsys)
    assert code == 2 and err.strip() == ("effstats audit: error: SCORES: nul.tsv: line 3, column 'A - EM' holds a NUL "
                                         "character ('0.\\x00999'); pandas would cut the value there (read as '0.'): "
                                         "remove the NUL bytes from the file (a corrupted or binary export?)"), err


def test_names_equal_but_for_spaces_at_either_end_are_warned_naming_both():
    board = _board()
    board.index = ["GPT-4o", "GPT-4o ", *board.index[2:]]
    with pytest.warns(UserWarning, match=r"1 pair\(s\) of model names differ only in Unicode normalisation or case "
                                         r"\(or in spaces at either end\), e\.g\. 'GPT-4o' and 'GPT-4o ' \(spaces at "
                                         r"the start or end\)"):
        audit(board, n_boot=20, progress=False)


@pytest.mark.parametrize("n_boot, says", [
    ("1", "--n-boot: at least 2 resamples are needed for a standard error and an interval, got 1"),
    ("99999999999999999999", "--n-boot: 99,999,999,999,999,999,999 resamples need at least "),
    ("4000000000", "--n-boot: 4,000,000,000 resamples need at least "),
])
def test_a_number_of_resamples_no_memory_holds_is_one_line_naming_the_option(tmp_path, capsys, n_boot, says):
    from effstats.reliability import dior

    _board().to_csv(tmp_path / "board.csv")
    code = main(["audit", str(tmp_path / "board.csv"), "--out", str(tmp_path / "out"), "--n-boot", n_boot,
                 "--no-progress"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith(f"effstats audit: error: {says}"), err
    assert not (tmp_path / "out").exists()
    if n_boot != "1":
        with pytest.raises(ValueError, match=r"^n_boot: .* resamples need at least .* GiB \(.* bytes each\), more than "
                                             r"the .* GiB of memory this process may use; give fewer"):
            dior(_board(), "scenarios", "kendall", n_boot=int(n_boot))


@pytest.mark.parametrize("option", ["--scenarios", "--exclude", "--higher-is-better"])
def test_a_column_whose_name_holds_a_comma_is_named_with_an_escaped_comma(tmp_path, capsys, option):
    board = _board().rename(columns={"s0": "MMLU - EM, 5-shot", "s1": "=cmd|x,y"})
    board.to_csv(tmp_path / "board.csv")
    code, err = _run([tmp_path / "board.csv", option, "MMLU - EM, 5-shot", "--out", tmp_path / "no"], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert (f"{option}: unknown column(s) ['MMLU - EM', '5-shot']" in err
            and r"a comma inside a column's name is written \, (e.g. MMLU - EM\, 5-shot)" in err), err
    code, err = _run([tmp_path / "board.csv", option, r"MMLU - EM\, 5-shot,=cmd|x\,y", "--out", tmp_path / "out"],
                     capsys)
    assert code == 0, err
    audited = set(pd.read_csv(tmp_path / "out" / "scenarios.csv")["scenario"])  # a formula's cell starts with '
    if option == "--scenarios":
        assert audited == {"MMLU - EM, 5-shot", "'=cmd|x,y"}, audited
    elif option == "--exclude":
        assert audited == {"s2", "s3", "s4", "s5"}, audited
