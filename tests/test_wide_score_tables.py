"""Wide score tables of many columns: the cells are judged in one pass over the table, and the columns that could
be an aggregate, a row statistic or a likely aggregate of the others are screened for all columns at once before
any is judged alone. What is read is what judging every cell and every column on its own reads."""
from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from effstats import _published
from effstats.cli import read_scores
from effstats.datasets import _cells, _summaries
from effstats.reliability import audit

# cells as spreadsheets and web pages write them (None: an empty cell)
CELLS = ["0.5", " 0.25 ", "7", "1,085", "19,999.5", "12,34", "\u22120.4", "\u2013 0.3", "N/A", "nan", "-", "\u2014",
         "?", "abc", "85%", " 12.5 %", "0,53", "1/2", "94.2/92.3", "", None]


def _frame(cols: list[list]) -> pd.DataFrame:
    return pd.DataFrame({f"c{j}": pd.Series(c, dtype=object) for j, c in enumerate(cols)}).where(
        lambda d: d.notna(), np.nan)


def _plain_column(col: list, sep: str) -> list:
    """One column's cells made plain by the rules of effstats.datasets._cells, cell by cell."""
    present = [isinstance(v, str) for v in col]
    txt = [_cells._DASH_MINUS.sub(r"\1-", str(v).strip()) for v in col]
    if sep == ";":
        txt = [t.replace(",", ".") if p and _cells._DECIMAL_COMMA.match(t) else t for t, p in zip(txt, present)]
    else:
        grouped = [p and bool(_cells._THOUSANDS.match(t)) for t, p in zip(txt, present)]
        if any(grouped) and all(g or not p or _cells._PLAIN.match(t) or t.lower() in _cells._MARKERS
                                for g, p, t in zip(grouped, present, txt)):
            txt = [t.replace(",", "") if g else t for t, g in zip(txt, grouped)]
    number = [p and bool(_cells._PLAIN.match(t)) for t, p in zip(txt, present)]
    if not any(number):
        return list(col)
    return [t if n else "-" if p and t.lower() in _cells._MARKERS else v
            for v, t, n, p in zip(col, txt, number, present)]


table = st.integers(1, 6).flatmap(lambda n: st.lists(st.lists(st.sampled_from(CELLS), min_size=n, max_size=n),
                                                     min_size=1, max_size=5))


@settings(max_examples=150, deadline=None)
@given(cols=table, sep=st.sampled_from([",", ";"]))
def test_cells_are_made_plain_as_column_by_column_cell_by_cell(cols, sep):
    df = _frame(cols)
    want = pd.DataFrame({c: _plain_column(df[c].tolist(), sep) for c in df.columns}, dtype=object)
    got = _cells.plain_cells(df, sep)
    assert got.shape == df.shape and list(got.columns) == list(df.columns)
    for c in df.columns:
        assert [None if pd.isna(v) else v for v in got[c]] == [None if pd.isna(v) else v for v in want[c]], c


@settings(max_examples=150, deadline=None)
@given(cols=table)
def test_pairs_and_percent_cells_are_found_as_column_by_column(cols):
    df = _frame(cols)
    want = [c for c in df.columns
            if (v := [t for t in df[c].dropna().astype(str).str.strip() if t not in ("", "-")])
            and all(_cells._PAIR.match(t) for t in v)]
    assert _cells._metric_pair_columns(df) == want
    alone = []
    for c in df.columns:  # the first column refused on its own is the one refused in the table
        try:
            alone.append(_cells._percent(df[[c]]))
        except ValueError as exc:
            with pytest.raises(ValueError, match=re.escape(str(exc))):
                _cells._percent(df)
            return
    out, converted = _cells._percent(df)
    assert converted == [c for (_, conv) in alone for c in conv]
    pd.testing.assert_frame_equal(out, pd.concat([o for o, _ in alone], axis=1))


@settings(max_examples=150, deadline=None)
@given(cols=table, plain=st.booleans())
def test_cells_are_read_as_numbers_as_column_by_column(cols, plain):
    df = _cells.plain_cells(_frame(cols)) if plain else _frame(cols)
    num = _cells.as_numbers(df)
    pd.testing.assert_frame_equal(num, df.apply(pd.to_numeric, errors="coerce"))
    mixed = df.assign(pairs=_cells._pair_means(df.iloc[:, 0]).astype(object).where(lambda v: v.notna(), "0.125"))
    assert _published._decimals_of(mixed) == {c: _published._decimals(mixed[c]) for c in mixed.columns}
    text = _cells._text_cells(df)
    for c in df.columns:
        want = [pd.isna(x) and isinstance(v, str) and v.strip() not in ("-", "") for v, x in zip(df[c], num[c])]
        assert text[c].tolist() == want, c


def _wide_board(path, seed: int, planted: str = "", n_models: int = 40, n_cols: int = 80) -> None:
    """A leaderboard of ``n_cols`` scenarios in percent (2 decimals) beside the published mean (1 decimal) and a
    column that is not a scenario: ``planted`` "Middle" or "Variation", the row median or standard deviation of the
    scenarios, or else a standard error beside one scenario, with a few cells not evaluated."""
    rng = np.random.default_rng(seed)
    ability = rng.normal(size=n_models)
    x = np.clip(60 + 12 * ability[:, None] + rng.normal(0, 8, (n_models, n_cols)), 0, 100).round(2)
    if not planted:
        x[rng.random(x.shape) < 0.01] = np.nan
    board = pd.DataFrame({"model": [f"org/m{i}" for i in range(n_models)], "Average": np.nanmean(x, axis=1).round(1),
                          **{f"task {j:03d}": x[:, j] for j in range(n_cols)}})
    if planted:
        stat = np.median(x, axis=1) if planted == "Middle" else np.std(x, axis=1, ddof=1)
        board.insert(2, planted, stat.round(2))
    else:
        board["task 003 (stderr)"] = rng.uniform(0.5, 1.5, n_models).round(2)
    board.to_csv(path, index=False)


def _column_by_column(monkeypatch) -> None:
    """Every column judged alone, as without the screens."""
    monkeypatch.setattr(_summaries, "_row_statistic_screen", lambda x, tols: np.ones(x.shape[1], bool))
    monkeypatch.setattr(_summaries, "_spearman_columns", lambda x, ref: np.ones(x.shape[1]))
    monkeypatch.setattr(_published, "_could_match", lambda x, rest, in_round, unit: np.ones(x.shape[1], bool))


def _read(path):
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        wide, published = read_scores(path)
    return wide, published, [str(w.message) for w in said]


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("planted, why", [("Middle", "the median"), ("Variation", "the standard deviation"),
                                          ("", "an uncertainty of 'task 003'")])
def test_a_wide_board_reads_as_every_column_judged_alone(tmp_path, monkeypatch, seed, planted, why):
    path = tmp_path / "board.csv"
    _wide_board(path, seed, planted)
    fast = _read(path)
    with monkeypatch.context() as m:
        _column_by_column(m)
        slow = _read(path)
    pd.testing.assert_frame_equal(fast[0], slow[0])
    assert fast[0].attrs.get("note") == slow[0].attrs.get("note")
    pd.testing.assert_series_equal(fast[1], slow[1])
    assert fast[1].attrs == slow[1].attrs and fast[2] == slow[2]
    assert fast[1].attrs["info"]["column"] == "Average" and fast[0].shape == (40, 80)
    assert f"({why}" in fast[0].attrs["note"]  # the planted column is found, not scored


def test_a_wide_board_is_audited_as_every_column_judged_alone(tmp_path, monkeypatch):
    path = tmp_path / "board.csv"
    _wide_board(path, 7, "Middle")
    audit(path, tmp_path / "fast", n_boot=20, progress=False, n_jobs=1)
    with monkeypatch.context() as m:
        _column_by_column(m)
        audit(path, tmp_path / "slow", n_boot=20, progress=False, n_jobs=1)
    for f in sorted(p.name for p in (tmp_path / "fast").iterdir() if p.suffix in (".md", ".csv", ".json")):
        assert (tmp_path / "fast" / f).read_bytes() == (tmp_path / "slow" / f).read_bytes(), f
