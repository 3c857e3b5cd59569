"""A long score table read by ``effstats audit``: a row not evaluated ('-', empty) is a missing cell, as
``ResponseMatrix.from_long`` reads a NaN score, and so no duplicate of an evaluated row of its cell, whatever
``--duplicates`` says."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from effstats import ResponseMatrix
from effstats.cli import main
from effstats.datasets import read_scores

ROWS = [("a", "s1", "0.5"), ("a", "s2", "0.7"), ("b", "s1", "0.3"), ("b", "s2", "0.6"), ("c", "s1", "0.2"),
        ("c", "s2", "0.1")]


def _read(path, duplicates):
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        data, _ = read_scores(path, duplicates=duplicates)
    return data, [str(w.message) for w in said if "duplicates" in str(w.message)]


def _from_long(rows, item="scenario"):
    """The scores ResponseMatrix.from_long reads from the rows, '-' as NaN: models × scenarios."""
    df = pd.DataFrame(rows, columns=["model", item, "score"]).replace({"score": {"-": np.nan}})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its note of the NaN rows
        return ResponseMatrix.from_long(df.astype({"score": float}), item=item).to_frame()


@pytest.mark.parametrize("duplicates", ["last", "first", "mean", "error"])
@pytest.mark.parametrize("where", ["after", "before"])
def test_a_row_not_evaluated_beside_an_evaluated_one_of_its_cell_is_a_missing_cell_not_a_duplicate(
        tmp_path, duplicates, where):
    rows = ROWS + [("a", "s1", "-")] if where == "after" else [("a", "s1", "-")] + ROWS
    f = tmp_path / "board.csv"
    f.write_text("model,scenario,score\n" + "\n".join(map(",".join, rows)) + "\n")
    data, said = _read(f, duplicates)
    assert said == []  # no repeated run of a model, so nothing to choose among
    pd.testing.assert_frame_equal(data.sort_index().sort_index(axis=1), _from_long(rows), check_names=False)
    assert data.loc["a", "s1"] == 0.5


def test_a_cell_of_rows_none_evaluated_is_missing_and_evaluated_rows_still_repeat(tmp_path):
    f = tmp_path / "board.csv"
    # c's s2 marked not evaluated twice: one missing cell; a's s1 evaluated twice beside a '-': a repeat
    rows = [r for r in ROWS if r[:2] != ("c", "s2")] + [("c", "s2", "-"), ("c", "s2", ""), ("a", "s1", "-"),
                                                         ("a", "s1", "0.9")]
    f.write_text("model,scenario,score\n" + "\n".join(map(",".join, rows)) + "\n")
    data, said = _read(f, "mean")
    assert np.isnan(data.loc["c", "s2"]) and data.loc["a", "s1"] == pytest.approx(0.7)
    assert len(said) == 1 and "1 model(s) have repeated (model, scenario) rows" in said[0]
    with pytest.raises(ValueError, match=r"^SCORES: duplicate \(model, scenario\) rows, e.g. \['a', 's1'\]"):
        read_scores(f, duplicates="error")


@pytest.mark.parametrize("duplicates", ["last", "error"])
def test_a_per_example_long_table_reads_as_from_long_reads_it(tmp_path, duplicates):
    # with an item column: the matrix of the evaluated rows, the row not evaluated no repeat
    rows = [("a", "q1", "1"), ("a", "q2", "0"), ("b", "q1", "0"), ("b", "q2", "1"), ("a", "q1", "-")]
    f = tmp_path / "items.csv"
    f.write_text("model,scenario,item,score\n" + "\n".join(f"{m},s,{i},{v}" for m, i, v in rows) + "\n")
    rm, said = _read(f, duplicates)
    assert said == []
    pd.testing.assert_frame_equal(rm.to_frame(), _from_long(rows, item="item"), check_names=False)


def test_the_audit_command_reads_the_row_not_evaluated_as_a_missing_cell(tmp_path, capsys):
    rows = ROWS + [("d", "s1", "0.4"), ("d", "s2", "0.3"), ("a", "s1", "-")]
    f = tmp_path / "board.csv"
    f.write_text("model,scenario,score\n" + "\n".join(map(",".join, rows)) + "\n")
    assert main(["audit", str(f), "--out", str(tmp_path / "report"), "--duplicates", "error", "--n-boot", "50"]) == 0
    scores = pd.read_csv(tmp_path / "report" / "scores.csv", index_col=0)
    assert "duplicate" not in capsys.readouterr().err
    assert scores.index[0] == "a"  # ranked on its evaluated 0.5 and 0.7, best in both scenarios
