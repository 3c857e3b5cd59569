"""The score-table readers' fast paths against the plain ones they replace, on generated tables.

A CSV is read with its number columns parsed by pandas' C parser (``_delimited._read_typed``), a long one of the
three columns model, item and score chunk by chunk straight into the matrix (``_long_scores.long_matrix``); the plain
path reads every cell as text and parses it with numpy. A long table becomes a matrix from sorted id codes
(``_shared._sorted_codes``, in the reader and in ``ResponseMatrix.from_long``); the plain path is
``DataFrame.pivot`` on the ids. A Parquet table keeps its number columns;
the plain path turns every cell into text first. Each pair must give the same matrix (ids, values, missing
cells, kind), the same warnings, or the same error message.
"""
from __future__ import annotations

import pickle
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from effstats import ResponseMatrix, responses
from effstats.datasets import _delimited as delimited
from effstats.datasets import _long_read as long_read
from effstats.datasets import _score_tables as tables
from effstats.datasets import _table_layouts as layouts
from effstats.datasets import read_scores_csv, read_scores_frame
from effstats.workflow import _io, _reference_copy, read_results

# cells users write: numbers in several spellings, markers, booleans, text, values outside [0, 1]
CELLS = ["0", "1", "0.5", " 1", "1 ", "-", "", "nan", "inf", "1e0", "0.25", "True", "false", "x", "1.0", "+0",
         "00", ".5", "7", "-1", "0.1000000000000000055511151231257827", "2.5e-1", " - ", "50"]
IDS = ["m1", "m2", "gpt", "1", "arc/3", "", "-", "m1", "a b"]
ITEMS = ["arc/1", "arc/2", "q", "score", "item", "average", "0.5", "1", "", "q", "mmlu/7", "doc"]

table = st.fixed_dictionaries({
    "layout": st.sampled_from(["wide", "long", "long_task", "wide_model_last", "row_numbers"]),
    "n_rows": st.integers(1, 5),
    "items": st.lists(st.sampled_from(ITEMS), min_size=1, max_size=4),
    "ids": st.lists(st.sampled_from(IDS), min_size=5, max_size=5),
    "cells": st.lists(st.sampled_from(CELLS), min_size=20, max_size=20),
    "numbers": st.booleans(),  # mostly 0/1 cells, as real tables are
    "duplicates": st.sampled_from(["last", "first", "mean", "error"]),
})


def _write(path, t) -> None:
    n, items = t["n_rows"], t["items"]
    pool = [c if not t["numbers"] or k % 3 == 0 else "01"[k % 2] for k, c in enumerate(t["cells"])]
    cells = iter(pool * 4)
    cell = lambda: next(cells)  # noqa: E731
    if t["layout"] == "long":
        rows = ["model,item,score"] + [f"{t['ids'][r % 5]},{items[r % len(items)]},{cell()}" for r in range(n * 2)]
    elif t["layout"] == "long_task":  # the task column is kept as the items' task
        rows = ["model,item,score,task"] + [f"{t['ids'][r % 5]},{items[r % len(items)]},{cell()},{'ab'[r % 3 == 0]}"
                                            for r in range(n * 2)]
    elif t["layout"] == "wide_model_last":
        rows = [",".join(items + ["model"])] + [",".join([cell() for _ in items] + [t["ids"][r]]) for r in range(n)]
    elif t["layout"] == "row_numbers":
        rows = [",".join(["", "model"] + items)] + [",".join([str(r), t["ids"][r]] + [cell() for _ in items])
                                                   for r in range(n)]
    else:
        rows = [",".join(["model"] + items)] + [",".join([t["ids"][r]] + [cell() for _ in items]) for r in range(n)]
    path.write_text("\n".join(rows) + "\n")


def _outcome(read):
    """The matrix (as plain values), the warnings and the error message of one read."""
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        try:
            rm = read()
        except ValueError as exc:
            return "error", str(exc), [str(w.message) for w in said]
    return ("matrix", (list(rm.model_ids), list(rm.item_ids), rm.kind, rm.values_with_nan().tobytes(),
                       None if rm.missing is None else rm.missing.tobytes(), rm.items.to_dict()),
            [str(w.message) for w in said])


def _plain_csv(monkeypatch):
    monkeypatch.setattr(delimited, "_read_typed", lambda *a, **k: None)
    monkeypatch.setattr(tables, "_read_long", lambda *a, **k: None)


def _long_chunk_rows(monkeypatch, rows):
    """Long tables parsed in chunks of ``rows`` rows, by the chunked reader and by the general one."""
    monkeypatch.setattr(long_read, "_LONG_CHUNK_ROWS", rows)
    monkeypatch.setattr(delimited, "_LONG_CHUNK_ROWS", rows)


def _plain_pivot(monkeypatch):
    monkeypatch.setattr(responses, "_sorted_codes", lambda col: None)
    monkeypatch.setattr(tables, "_sorted_codes", lambda col: None)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(t=table)
# a long table of one score text (read as categories by the chunked reader): its refused score and its empty model
# id (the text path refuses the empty id first)
@example(t=dict(layout="long", n_rows=1, items=["q"], ids=["m1", "", "m2", "gpt", "1"], cells=[" - "] * 20,
                numbers=False, duplicates="last"))
# percentages in some models' rows: the models named in the order they first appear, by the matrix or the rows
@example(t=dict(layout="long", n_rows=4, items=["0.5", "average", "q"], ids=["m2", "1", "gpt", "m1", "m1"],
                cells=["2.5e-1", "1", "00", "50", "1", "0.5", "7"] + ["1"] * 13, numbers=True, duplicates="last"))
def test_csv_numbers_parsed_by_pandas_read_as_the_text_path_reads_them(tmp_path, t):
    f = tmp_path / "scores.csv"
    _write(f, t)
    fast = _outcome(lambda: read_scores_csv(f, duplicates=t["duplicates"]))
    with pytest.MonkeyPatch.context() as mp:
        _plain_csv(mp)
        _plain_pivot(mp)
        plain = _outcome(lambda: read_scores_csv(f, duplicates=t["duplicates"]))
    assert fast == plain


def test_the_generated_tables_reach_both_outcomes(tmp_path):
    # the property above compares errors as well as matrices: both kinds occur among such tables
    ok = tmp_path / "ok.csv"
    ok.write_text("model,arc/1,arc/2\nm1,1,0\nm2,-,0.5\n")
    bad = tmp_path / "bad.csv"
    bad.write_text("model,arc/1,arc/2\nm1,1,x\nm2,-,0.5\n")
    assert _outcome(lambda: read_scores_csv(ok))[0] == "matrix"
    assert _outcome(lambda: read_scores_csv(bad))[0] == "error"


@settings(max_examples=200, deadline=None)
@given(models=st.lists(st.sampled_from(["b", "a", "c", "a b", "10", "9"]), min_size=1, max_size=12),
       items=st.lists(st.sampled_from(["q2", "q1", "arc/10", "arc/9", "z"]), min_size=12, max_size=12),
       scores=st.lists(st.sampled_from([0.0, 1.0, 0.5, np.nan, np.inf, 2.0]), min_size=12, max_size=12),
       ints=st.sampled_from([None, "small", "large"]), groups=st.booleans())
def test_from_long_by_codes_is_pivot(models, items, scores, ints, groups):
    n = len(models)
    df = pd.DataFrame({"model": models, "item": items[:n], "score": scores[:n]})
    if ints:  # integer ids are ordered as numbers by both; small ones are coded without hashing
        df = df.assign(model=[(len(m) * 7 + ord(m[0])) % (3 if ints == "small" else 1000) for m in df["model"]])
    if groups:
        df = df.assign(task=[i[0] for i in df["item"]])
    build = lambda: ResponseMatrix.from_long(df, groups="task" if groups else None)  # noqa: E731
    fast = _outcome(build)
    with pytest.MonkeyPatch.context() as mp:
        _plain_pivot(mp)
        plain = _outcome(build)
    assert fast == plain


def _plain_parquet(path, duplicates="last"):
    """Every cell as text, as a CSV holds it, then the same checks."""
    df = pd.read_parquet(path)
    if not isinstance(df.index, pd.RangeIndex):
        df = df.reset_index()
    text = pd.DataFrame({str(c): [("" if pd.isna(v) else str(v)) for v in df[c].tolist()] for c in df.columns})
    return read_scores_frame(text, name=path.name, duplicates=duplicates)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=st.lists(st.sampled_from([0.0, 1.0, 0.25, np.nan, 1 / 3, 2.0, 100.0]), min_size=12, max_size=12),
       dtype=st.sampled_from(["float64", "float32", "Int64", "bool", "object"]),
       ids=st.sampled_from([["m1", "m2", "m3"], [3, 1, 2], ["m1", "m1", "m2"], ["arc/1", "arc/2", "arc/3"]]),
       long=st.booleans(), index=st.booleans())
def test_parquet_number_columns_read_as_their_text(tmp_path, monkeypatch, values, dtype, ids, long, index):
    vals = np.array(values).reshape(3, 4)
    if dtype == "Int64":
        vals = np.where(np.isnan(vals), np.nan, np.round(vals))
    wide = pd.DataFrame(vals, columns=["arc/1", "arc/2", "mmlu/1", "mmlu/2"])
    wide = wide.astype(bool) if dtype == "bool" else wide.astype(dtype)
    frame = (wide.assign(model=ids).melt(id_vars="model", var_name="item", value_name="score") if long
             else wide.set_axis(pd.Index(ids, name="model")) if index else wide.assign(model=ids))
    f = tmp_path / "scores.parquet"
    f.write_bytes(b"PAR1")  # the engine is replaced: `frame` is what it returns
    monkeypatch.setattr(pd, "read_parquet", lambda path: frame.copy())
    fast = _outcome(lambda: _io._read_parquet(f))
    plain = _outcome(lambda: _plain_parquet(f))
    assert fast == plain


def test_a_wide_csv_of_numbers_is_read_by_columns_of_numbers(tmp_path, monkeypatch):
    # the fast path is taken on a plain 0/1 table (no fall back to reading every cell as text)
    f = tmp_path / "scores.csv"
    rng = np.random.default_rng(0)
    pd.DataFrame(rng.integers(0, 2, (6, 50)), columns=[f"arc/{i}" for i in range(50)]).assign(
        model=[f"m{i}" for i in range(6)])[["model"] + [f"arc/{i}" for i in range(50)]].to_csv(f, index=False)
    typed = []
    real = delimited._read_typed
    monkeypatch.setattr(delimited, "_read_typed", lambda *a: typed.append(real(*a)) or typed[-1])
    rm = read_results(f)
    assert typed and typed[0] is not None and (typed[0].dtypes.iloc[1:] == np.int64).all()
    assert rm.shape == (6, 50) and rm.kind == "binary"


def test_the_read_progress_counts_the_file_and_the_cli_prints_no_bar_off_a_terminal(tmp_path, monkeypatch, capsys):
    from effstats.cli import main

    f = tmp_path / "scores.csv"
    rng = np.random.default_rng(1)
    pd.DataFrame(rng.integers(0, 2, (30, 400)), columns=[f"arc/{i}" for i in range(400)]).assign(
        model=[f"m{i}" for i in range(30)])[["model"] + [f"arc/{i}" for i in range(400)]].to_csv(f, index=False)
    counted = []

    class Bar:
        def __init__(self, enabled, **kw):
            counted.append(enabled)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def update(self, n):
            counted.append(n)

    plain = read_scores_csv(f)
    monkeypatch.setattr(delimited, "_progress", Bar)
    shown = read_scores_csv(f, progress=True)
    assert counted[0] is True and sum(counted[1:]) == f.stat().st_size
    assert shown.item_ids.equals(plain.item_ids) and np.array_equal(shown.values, plain.values)
    monkeypatch.undo()
    # tqdm draws only on a terminal: the test's standard error is not one
    assert main(["select", str(f), "--budget", "20", "--out", str(tmp_path / "sel")]) == 0
    assert main(["select", str(f), "--budget", "20", "--out", str(tmp_path / "sel2"), "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "reading" not in err and "fitting" not in err


def test_a_separator_of_several_characters_is_read_by_pandas_python_parser(tmp_path):
    f = tmp_path / "scores.csv"
    f.write_text("model::arc/1::arc/2\nm1::1::0\nm2::-::1\n")
    with pytest.warns(pd.errors.ParserWarning, match="python"):  # pandas says it reads such a separator slowly
        rm = read_scores_csv(f, sep="::")
    assert list(rm.model_ids) == ["m1", "m2"] and list(rm.item_ids) == ["arc/1", "arc/2"]
    assert np.array_equal(rm.values_with_nan(), [[1.0, 0.0], [np.nan, 1.0]], equal_nan=True)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), n_models=st.integers(1, 6), n_items=st.integers(1, 9),
       repeated=st.integers(0, 2), duplicates=st.sampled_from(["last", "first", "mean", "error"]),
       chunk=st.sampled_from([1, 5, 1000]), kind=st.sampled_from(["binary", "score"]))
def test_long_and_wide_files_of_one_table_read_alike(tmp_path, seed, n_models, n_items, repeated, duplicates, chunk,
                                                     kind):
    # one table of scores with cells not evaluated and models run twice, written long (pairs not evaluated left out,
    # except on a repeated model's runs, where "-" says so as the wide row does; each run's rows below the earlier
    # run's, shuffled) and wide; the long file is parsed in chunks of `chunk` rows whose ids are joined
    rng = np.random.default_rng(seed)
    models = [f"org/m{m}" for m in rng.permutation(n_models)]
    items = [f"task{t % 2}/{t}" for t in rng.permutation(n_items)]
    # (a model run once among them: a wide table whose every model repeats is refused as a long one)
    runs = models + [models[m] for m in rng.integers(1, n_models, repeated if n_models > 1 else 0)]
    values = rng.choice([0.0, 1.0] if kind == "binary" else [0.0, 0.25, 1.0], size=(len(runs), n_items))
    values[rng.random(values.shape) < 0.25] = np.nan
    values[np.arange(len(runs)), rng.integers(0, n_items, len(runs))] = 1.0  # every run evaluated somewhere
    twice = {m for m in runs if runs.count(m) > 1}
    text = lambda v: "-" if np.isnan(v) else f"{v:g}"  # noqa: E731
    long = ["model,item,score"] + [f"{m},{items[j]},{text(row[j])}" for m, row in zip(runs, values)
                                   for j in rng.permutation(n_items) if m in twice or not np.isnan(row[j])]
    (tmp_path / "long.csv").write_text("\n".join(long) + "\n")
    wide = ["model," + ",".join(items)] + [f"{m}," + ",".join(text(v) for v in row) for m, row in zip(runs, values)]
    (tmp_path / "wide.csv").write_text("\n".join(wide) + "\n")

    def read(name):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                rm = read_scores_csv(tmp_path / name, duplicates=duplicates)
            except ValueError as exc:
                return "error" if "duplicate" in str(exc) or "repeat" in str(exc) else str(exc)
        # an item no model was evaluated on has no row in a long table: its column of a wide one is left out
        frame = rm.to_frame().sort_index().sort_index(axis=1).dropna(axis=1, how="all")
        return rm.kind, list(frame.index), list(frame.columns), frame.to_numpy().tobytes()

    with pytest.MonkeyPatch.context() as mp:
        _long_chunk_rows(mp, chunk)
        fast = read("long.csv")
    assert fast == read("wide.csv")
    if twice and duplicates == "error":
        assert fast == "error"
    with pytest.MonkeyPatch.context() as mp:
        _plain_csv(mp)
        _plain_pivot(mp)
        assert read("long.csv") == fast


def _one_table_long_and_wide(tmp_path: Path) -> tuple[list[str], pd.DataFrame]:
    """One table written as ``wide.csv`` and long, model by model (``by_model.csv``, the first model evaluated on
    every item) and item by item (``by_item.csv``, as a melt writes it), cells not evaluated left out; returns its
    items in their file order and its long cells."""
    # items numbered within tasks, so that their file order (clean/7, clean/8, ..., clean/73) is not their order as
    # text (clean/7, clean/73, clean/8)
    rng = np.random.default_rng(0)
    items = [f"{t}/{i}" for t in ("clean", "noisy") for i in range(80)]
    models = [f"org/m{m:02d}" for m in range(12)]
    values = (rng.random((len(models), len(items))) < np.linspace(0.2, 0.9, len(models))[:, None]).astype(float)
    values[1:][rng.random(values[1:].shape) < 0.05] = np.nan
    pd.DataFrame(values, index=pd.Index(models, name="model"), columns=items).to_csv(tmp_path / "wide.csv",
                                                                                   na_rep="-")
    cells = pd.DataFrame({"model": np.repeat(models, len(items)), "item": np.tile(items, len(models)),
                          "score": values.ravel()}).dropna()
    cells.to_csv(tmp_path / "by_model.csv", index=False)
    cells.sort_values("item", key=lambda c: c.map(items.index), kind="stable").to_csv(tmp_path / "by_item.csv",
                                                                                        index=False)
    return items, cells


@pytest.mark.parametrize("chunk", [1, 7, 100_000])
def test_one_table_long_and_wide_reads_with_one_item_order(tmp_path, chunk):
    items, cells = _one_table_long_and_wide(tmp_path)
    wide = read_scores_csv(tmp_path / "wide.csv")
    assert list(wide.item_ids) == items
    with pytest.MonkeyPatch.context() as mp:
        _long_chunk_rows(mp, chunk)
        longs = [read_scores_csv(tmp_path / f) for f in ("by_model.csv", "by_item.csv")]
        longs.append(read_scores_frame(cells.assign(task=cells["item"].str.split("/").str[0])))  # the general path
    with pytest.MonkeyPatch.context() as mp:
        _plain_csv(mp)
        _plain_pivot(mp)
        longs.append(read_scores_csv(tmp_path / "by_item.csv"))
    for rm in longs:
        assert list(rm.item_ids) == items
        frame = rm.to_frame()[items]
        pd.testing.assert_frame_equal(frame.reindex(wide.model_ids), wide.to_frame(), check_names=False)


def test_one_table_long_and_wide_gives_one_selection(tmp_path):
    # select reads each file as a user's command does (chunks of the reader's own size)
    from effstats.workflow import select

    _one_table_long_and_wide(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the cells not evaluated
        chosen = [list(select(f, budget=30, method="aipw", seed=0).items)
                  for f in (tmp_path / "wide.csv", tmp_path / "by_model.csv", tmp_path / "by_item.csv")]
    assert chosen[1] == chosen[0] and chosen[2] == chosen[0]


@pytest.mark.parametrize("chunk", [1, 3, 100_000])
def test_a_long_table_keeps_its_models_in_the_order_they_first_appear(tmp_path, chunk):
    # models whose order in the file (a, m10, m9, b) is not their order as text (a, b, m10, m9); a's first row not
    # evaluated ("-"), m9 and b new in one chunk of 3 rows: the order of the rows, evaluated or not, is the order of
    # the models, as a wide file keeps its rows' order
    rows = [("a", "q1", "-"), ("m10", "q2", "1"), ("m10", "q1", "0"), ("m9", "q1", "1"), ("b", "q2", "0"),
            ("m9", "q2", "0"), ("a", "q2", "1"), ("b", "q1", "1")]
    (tmp_path / "long.csv").write_text("model,item,score\n" + "\n".join(map(",".join, rows)) + "\n")
    wide = pd.DataFrame([[np.nan, 1.0], [0.0, 1.0], [1.0, 0.0], [1.0, 0.0]],
                        index=pd.Index(["a", "m10", "m9", "b"], name="model"), columns=["q1", "q2"])
    wide.to_csv(tmp_path / "wide.csv", na_rep="-")
    frame = pd.DataFrame(rows, columns=["model", "item", "score"]).replace("-", np.nan).astype({"score": float})
    with pytest.MonkeyPatch.context() as mp:
        _long_chunk_rows(mp, chunk)
        read = [read_scores_csv(tmp_path / "long.csv"), read_scores_csv(tmp_path / "wide.csv"),
                read_scores_frame(frame)]  # chunked, wide, the general path
    with pytest.MonkeyPatch.context() as mp:
        _plain_csv(mp)
        _plain_pivot(mp)
        read.append(read_scores_csv(tmp_path / "long.csv"))
    for rm in read:
        pd.testing.assert_frame_equal(rm.to_frame(), wide, check_names=False)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), n_models=st.integers(1, 5), n_items=st.integers(1, 6),
       cells=st.lists(st.sampled_from(["0", "1", "1.0", "0.5", "0.999999999999", "1e-13", "-", "", "2", "inf"]),
                      min_size=1, max_size=4),
       share=st.sampled_from([0.0, 0.1, 0.5]), repeat=st.booleans(), chunk=st.sampled_from([1, 3, 1000]),
       header=st.sampled_from(["model,item,score", "item,score,model"]))
def test_a_long_table_read_chunk_by_chunk_into_the_matrix_reads_as_the_text_path(
        tmp_path, seed, n_models, n_items, cells, share, repeat, chunk, header):
    # mostly exact 0/1 rows (their chunks kept as booleans) with a share of other cells: graded scores, 0/1 off by
    # noise, markers of rows not evaluated, values outside [0, 1]; pairs left out, a pair written twice
    rng = np.random.default_rng(seed)
    pairs = [(f"m{m}", f"arc/{i}") for m in rng.permutation(n_models) for i in rng.permutation(n_items)
             if rng.random() < 0.8]
    pairs = pairs or [("m0", "arc/0")]
    if repeat:
        pairs.append(pairs[int(rng.integers(len(pairs)))])
    rows = []
    for m, i in pairs:
        v = str(rng.choice(cells)) if rng.random() < share else str(rng.integers(0, 2))
        row = {"model": m, "item": i, "score": v}
        rows.append(",".join(row[c] for c in header.split(",")))
    f = tmp_path / "scores.csv"
    f.write_text(header + "\n" + "\n".join(rows) + "\n")
    with pytest.MonkeyPatch.context() as mp:
        _long_chunk_rows(mp, chunk)
        fast = _outcome(lambda: read_scores_csv(f))
    with pytest.MonkeyPatch.context() as mp:
        _plain_csv(mp)
        _plain_pivot(mp)
        assert fast == _outcome(lambda: read_scores_csv(f))


@pytest.mark.parametrize("cells", [["0", "1"], ["0", "1", "-"], ["0", "0.25", "1"], ["0", "1 ", "0.999999999999"],
                                   ["-0", "0.5", "1"]])
def test_a_long_table_of_numbers_is_read_into_the_matrix_without_a_frame(tmp_path, monkeypatch, cells):
    # the chunked path gives the matrix (no fall back to the general reader) on tables of numbers: 0/1, with rows
    # not evaluated, graded, 0/1 off by noise; the general reader is not called
    from effstats.datasets import _long_scores

    rng = np.random.default_rng(0)
    models = rng.permutation(6)
    rows = [f"m{m},arc/{i},{cells[(m * 7 + i) % len(cells)] if i else rng.integers(0, 2)}"
            for m in models for i in rng.permutation(40)]
    f = tmp_path / "scores.csv"
    f.write_text("model,item,score\n" + "\n".join(rows) + "\n")
    made = []
    real = _long_scores.long_matrix
    monkeypatch.setattr(_long_scores, "long_matrix", lambda *a: made.append(real(*a)) or made[-1])
    _long_chunk_rows(monkeypatch, 50)
    monkeypatch.setattr(tables, "_table_to_matrix", None)
    rm = read_results(f)
    assert made[0] is rm and rm.shape == (6, 40) and list(rm.model_ids) == [f"m{m}" for m in models]
    assert rm.kind == ("score" if {"0.25", "0.5"} & set(cells) else "binary")
    assert (rm.missing is not None) == ("-" in cells)
    # -0 of a graded table is read as written (-0.0) in whatever chunk it stands, as one read of the file reads it
    assert np.signbit(rm.values_with_nan()).any() == ("-0" in cells)


@pytest.mark.parametrize("layout", ["long", "wide"])
def test_a_frame_reads_as_the_csv_written_from_it(tmp_path, layout):
    rng = np.random.default_rng(0)
    wide = pd.DataFrame(rng.integers(0, 2, (4, 5)).astype(float), columns=[f"arc/{j}" for j in range(5)])
    wide.iloc[1, 2] = np.nan  # not evaluated: an empty cell in the CSV, NaN in the frame
    wide.insert(0, "model", [f"m{i}" for i in range(4)])
    frame = wide.melt(id_vars="model", var_name="item", value_name="score").dropna() if layout == "long" else wide
    f = tmp_path / "scores.csv"
    frame.to_csv(f, index=False)
    a, b = read_scores_frame(frame), read_scores_csv(f)
    assert a.kind == b.kind == "binary"
    assert a.model_ids.equals(b.model_ids) and a.item_ids.equals(b.item_ids)
    np.testing.assert_array_equal(a.values_with_nan(), b.values_with_nan())
    assert np.isnan(a.values_with_nan()[1, 2])
    with pytest.raises(ValueError, match=r"^frame: scores\.parquet: .*percentages"):
        read_scores_frame(frame.assign(**{c: frame[c] * 100 for c in frame.columns if c not in ("model", "item")}),
                          name="scores.parquet")


@settings(max_examples=100, deadline=None)
@given(cells=st.lists(st.sampled_from([0.0, 1.0, 0.5, -2.0, 7.0, np.nan, np.inf, -np.inf]), min_size=1, max_size=60),
       n_cols=st.integers(1, 6), block=st.sampled_from([1, 3, 2**20]))
def test_column_ranges_read_in_blocks_are_the_whole_tables(cells, n_cols, block):
    # the smallest and largest finite value per column (0 where none, and 0 taken in), block by block of rows
    rows = max(1, len(cells) // n_cols)
    x = np.resize(np.array(cells), rows * n_cols).reshape(rows, n_cols)
    finite = np.isfinite(x)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(layouts, "_BLOCK_CELLS", block)
        low, high = layouts._finite_range(x)
        np.testing.assert_array_equal(low, np.where(finite, x, 0.0).min(axis=0, initial=0.0))
        np.testing.assert_array_equal(high, np.where(finite, x, 0.0).max(axis=0, initial=0.0))
        low, high = layouts._finite_range(x, np.inf)
    for j in range(n_cols):
        col = x[finite[:, j], j]
        assert (low[j], high[j]) == ((col.min(), col.max()) if col.size else (np.inf, -np.inf))


def test_content_hash_of_a_matrix_read_in_row_blocks_is_that_of_the_whole_matrix():
    # more items than a block of rows holds: one row a block
    rng = np.random.default_rng(0)
    x = rng.random((3, 2**19 + 3)) < 0.5
    missing = rng.random(x.shape) < 0.1
    for rm in (ResponseMatrix(x, missing=missing), ResponseMatrix(x.astype(float) / 2, kind="score")):
        import hashlib
        import json

        h = hashlib.sha256()
        h.update(json.dumps([str(m) for m in rm.model_ids]).encode())
        h.update(json.dumps([str(i) for i in rm.item_ids]).encode())
        h.update(np.ascontiguousarray(rm.values_with_nan(), dtype="<f8").tobytes())
        assert _reference_copy.content_hash(rm) == h.hexdigest()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n_rows=st.integers(1, 6), cells=st.lists(st.sampled_from(["0", "1", "0.5", "-", "", "x", "True", "7", "nan"]),
                                                min_size=8, max_size=8),
       odd=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 69)), max_size=3), rows=st.sampled_from([1, 2, 100]))
# a True in one chunk's column and numbers in the next: pandas joins them as numbers, one read as text
@example(n_rows=2, cells=["True"] + ["0"] * 7, odd=[(0, 0)], rows=1)
def test_a_large_wide_table_read_in_chunks_of_rows_reads_as_the_text_path(tmp_path, n_rows, cells, odd, rows):
    # a wide table (70 item columns) over the one-pass size, parsed in chunks of `rows` rows, each in one pass:
    # chunks whose columns parse to other types (ints, floats, text, booleans) are joined as one read would
    x = np.resize(np.array(["0", "1"]), (n_rows, 70)).astype(object)
    for k, (r, c) in enumerate(odd):
        x[r % n_rows, c] = cells[k]
    f = tmp_path / "scores.csv"
    f.write_text("\n".join(["model," + ",".join(f"arc/{j}" for j in range(70))]
                          + [f"m{i}," + ",".join(row) for i, row in enumerate(x)]) + "\n")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(delimited, "_ONE_PASS_BYTES", 0)
        mp.setattr(delimited, "_WIDE_CHUNK_CELLS", 71 * rows)
        fast = _outcome(lambda: read_scores_csv(f))
    with pytest.MonkeyPatch.context() as mp:
        _plain_csv(mp)
        assert fast == _outcome(lambda: read_scores_csv(f))


@pytest.mark.parametrize("frame", [pd.DataFrame(), pd.DataFrame(columns=["model", "item", "score"])])
def test_an_empty_frame_is_refused_as_empty(frame):
    with pytest.raises(ValueError, match=r"^frame: frame is empty \(0 rows"):
        read_scores_frame(frame)


def test_an_id_column_mixing_1_and_text_1_is_refused_naming_it():
    mixed = pd.DataFrame({"model": ["a", "a", "b", "b"], "item": [1, "1", 2, "2"], "score": [1.0, 0.0, 1.0, 0.0]})
    with pytest.raises(ValueError, match=r"^frame: column 'item' mixes types \(1 and '1'"):
        read_scores_frame(mixed)
    # distinct ids of two types are read as text, as a CSV file of the same table
    rm = read_scores_frame(mixed.assign(item=[1, "3", 2, "4"]))
    assert sorted(rm.item_ids) == ["1", "2", "3", "4"]


@pytest.mark.parametrize("layout", ["long", "wide", "wide of 300 items"])
@pytest.mark.parametrize("path", ["fast", "plain"])
@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_separator_ending_every_row_reads_as_the_table_without_it(tmp_path, monkeypatch, layout, path, newline):
    rng = np.random.default_rng(1)
    models, items = [f"m{i}" for i in range(5)], [f"arc/{i}" for i in range(300 if "300" in layout else 4)]
    cells = rng.choice(["0", "1", "0.5", ""], (5, len(items)))
    if layout == "long":
        rows = ["model,item,score"] + [f"{m},{q},{cells[i, j] or '-'}" for i, m in enumerate(models)
                                       for j, q in enumerate(items)]
    else:
        rows = [",".join(["model"] + items)] + [",".join([m, *cells[i]]) for i, m in enumerate(models)]
    clean, ending = tmp_path / "clean.csv", tmp_path / "ending.csv"
    clean.write_text(newline.join(rows) + newline, newline="")
    ending.write_text(newline.join(rows[:1] + [r + "," for r in rows[1:]]) + newline, newline="")
    if path == "plain":
        _plain_csv(monkeypatch)
    want = _outcome(lambda: read_scores_csv(clean, missing_marker="-"))
    assert want[0] == "matrix"
    assert _outcome(lambda: read_scores_csv(ending, missing_marker="-")) == want


@pytest.mark.parametrize("extra", ["every row", "one row"])
@pytest.mark.parametrize("path", ["fast", "plain"])
def test_a_field_more_than_the_header_names_is_refused_naming_the_file(tmp_path, monkeypatch, extra, path):
    # a field other than an empty last one: the first field would be taken for row labels and the columns shifted
    rows = ["model,item,score", "m0,q0,1,7", "m0,q1,0,", "m1,q0,1,", "m1,q1,0,"]
    if extra == "every row":
        rows = ["model,A,B", "m0,1,0,1", "m1,0,1,1", "m2,1,1,0"]
    f = tmp_path / "shifted.csv"
    f.write_text("\n".join(rows) + "\n")
    if path == "plain":
        _plain_csv(monkeypatch)
    outcome = _outcome(lambda: read_scores_csv(f))
    assert outcome[0] == "error"
    assert outcome[1].startswith("path: shifted.csv's rows hold 4 fields but its header names 3: name every column")


SHORT = {"wide": ("model,q1,q2,q3,q4", ["a,1,0,1,1", "b,0,1,0,1", "c,1,1,0,0"], "d,1,0", ",,"),
         "long": ("model,item,score", ["a,q1,1", "a,q2,0", "b,q1,0"], "b,q2", ","),
         "quoted": ('model,"q,1",q2,q3', ['"a,b",1,0,1', "b,0,1,0"], "c,1", ",,")}


@pytest.mark.parametrize("where", ["last line cut", "a short row amid"])
@pytest.mark.parametrize("layout", list(SHORT))
def test_a_row_of_fewer_fields_than_the_header_is_refused_on_every_path(tmp_path, monkeypatch, layout, where):
    """A row cut short (a truncated file's last line) is named by its line, never read as "not evaluated"; the row
    with its missing cells written empty reads."""
    head, rows, short, rest = SHORT[layout]
    f, ok = tmp_path / "cut.csv", tmp_path / "ok.csv"
    lines = [head, *rows, short] if where == "last line cut" else [head, rows[0], short, *rows[1:]]
    f.write_text("\n".join(lines) + ("" if where == "last line cut" else "\n"))
    ok.write_text("\n".join(lines).replace(short, short + rest) + "\n")
    line = lines.index(short) + 1
    fields = short.count(",") + 1 - ('"' in short)
    want = (f"path: cut.csv: line {line} has {fields} fields, the header {len(head.split(','))  - (layout == 'quoted')}"
            ": its missing fields would read as not evaluated (a truncated file, or one still being written?); "
            "complete the line or remove it")
    assert _read_long_paths(f, chunk_rows=2) == [("error", want, [])] * 4
    assert {o[0] for o in _read_long_paths(ok, chunk_rows=2)} == {"matrix"}


def test_a_row_of_one_field_too_many_is_refused_on_one_line_naming_it(tmp_path, capsys):
    """pandas' tokenizer message ends in a line feed: the CLI's one line keeps its closing parenthesis."""
    from effstats.cli import main

    f = tmp_path / "four.csv"
    f.write_text("model,item,score\na,q1,1\nb,q1,0,1\n")
    assert _outcome(lambda: read_scores_csv(f)) == ("error", "path: four.csv is not a readable delimited table (Error "
                                                    "tokenizing data. C error: Expected 3 fields in line 3, saw 4)", [])
    assert main(["select", str(f), "--budget", "2", "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err.endswith("Expected 3 fields in line 3, saw 4)\n")


class _SentBack:
    """``_Forked``'s protocol without the fork: ``fn()`` computed on entry with its warnings caught and its value
    sent back pickled, or (where it raised or warned) computed again when the result is asked for, as a forked
    child's is. A forked child costs about a tenth of a CPU second here; the transport through a real child is
    checked by the tests that call :func:`_read_long_paths` with ``fork`` true."""

    def __init__(self, fn):
        self.fn, self.sent = fn, None

    def __enter__(self):
        with warnings.catch_warnings(record=True) as caught:  # what the caller's filters let through
            try:
                value = self.fn()
            except Exception:
                return self
        if not caught:
            self.sent = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        return self

    def __call__(self):
        return self.fn() if self.sent is None else pickle.loads(self.sent)

    def __exit__(self, *exc):
        pass


def _read_long_paths(f, chunk_rows=1, fork=True):
    """The outcomes of reading the long table ``f`` in one pass, in chunks of ``chunk_rows`` rows, in two ranges of
    lines (each parsed by a forked process of its own; ``fork`` false: by :class:`_SentBack`) and by the text
    path."""
    outcomes = [_outcome(lambda: read_scores_csv(f))]
    with pytest.MonkeyPatch.context() as mp:
        _long_chunk_rows(mp, chunk_rows)
        outcomes.append(_outcome(lambda: read_scores_csv(f)))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(long_read, "_RANGE_BYTES", 1)
        mp.setattr(long_read, "_cpus", lambda: 2)
        if not fork:
            mp.setattr(long_read, "_Forked", _SentBack)
        outcomes.append(_outcome(lambda: read_scores_csv(f)))
    with pytest.MonkeyPatch.context() as mp:
        _plain_csv(mp)
        _plain_pivot(mp)
        outcomes.append(_outcome(lambda: read_scores_csv(f)))
    return outcomes


@pytest.mark.parametrize("rows, want", [
    (["m1,q1,x", "m2,q1,x", ",q2,x"], "row 3 (line 4) has an empty 'model'; every row names its model"),
    (["m1,q1,x", ",q1,x", "m2,q2,x"], "row 2 (line 3) has an empty 'model'; every row names its model"),
    (["m1,q1,x", "m2,q1,x", "m3, ,x"], "row 3 (line 4) has an empty 'item'; every row names its item"),
    # (32 rows of one text and a missing one: still few enough texts to be read as categories)
    ([f"m{k},q1,x" for k in range(32)] + ["m32,q1"], "line 34 has 2 fields, the header 3"),
    (["m1,q1,x", "m2,q1,x", "m3,q1,x"], "column 'score' has non-numeric values, e.g. 'x' (line 2)"),
], ids=["empty model after", "empty model before", "blank item", "short row after", "the score alone"])
def test_a_long_tables_structure_is_refused_before_its_scores_on_every_path(tmp_path, rows, want):
    """The text path refuses a row of fewer fields than the header, then an empty id, wherever they stand, before
    the first score that is not a number: the chunked reader, which meets the score first, says the same."""
    f = tmp_path / "scores.csv"
    f.write_text("model,item,score\n" + "\n".join(rows) + "\n")
    outcomes = _read_long_paths(f)
    assert outcomes[0][0] == "error" and want in outcomes[0][1]
    assert outcomes == outcomes[:1] * 4


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(st.tuples(st.sampled_from(["m1", "m2", "gpt", "", " ", "-"]),
                               st.sampled_from(["q1", "q2", "arc/3", "", " "]),
                               st.sampled_from(["1", "0", "x", " - ", "nan", "-", "", "7", "True", None])),
                     min_size=1, max_size=12),
       one=st.sampled_from([None, "1", "x", " - ", "nan", "7"]))
# a chunk of True cells only (read as 1 in a column of floats) beside one of numbers: the text path refuses True
@example(rows=[("m1", "q1", "1"), ("m1", "q1", "True")], one=None)
def test_a_long_table_of_odd_cells_reads_alike_in_one_pass_in_chunks_in_ranges_and_as_text(tmp_path, rows, one):
    # ids empty or blank, scores that are no number, markers, values outside [0, 1], rows cut short (None); with
    # `one`, every score written is that text (which the chunked reader reads as a category): each path gives the
    # text path's outcome; the ranges' values sent back pickled as from forked children, without the forks
    lines = [f"{m},{i}" if v is None else f"{m},{i},{v if one is None else one}" for m, i, v in rows]
    f = tmp_path / "scores.csv"
    f.write_text("model,item,score\n" + "\n".join(lines) + "\n")
    outcomes = _read_long_paths(f, fork=False)
    assert outcomes == outcomes[:1] * 4


@pytest.mark.parametrize("flags, read", [(["True", "False"], False), (["TRUE"], False),
                                         (["false", "-", "tRuE"], False), (["1", "-", "0"], True),
                                         (["-0", "1"], True)])
def test_true_false_cells_after_the_sampled_rows_of_graded_scores_read_as_the_text_path(tmp_path, monkeypatch,
                                                                                         flags, read):
    """The chunked reader reads scores as floats where the rows it samples (``_few_scores``) hold many distinct
    numbers; pandas' parser reads a chunk of True/False cells alone as 1/0 in such a column, a chunk that mixes them
    with numbers as an error. Past the sampled rows, a chunk (or a range of lines) of them gives the text path's
    outcome, which refuses True/False among numbers; a chunk of 0/1 numbers reads as the text path reads it."""
    few = long_read._few_scores
    monkeypatch.setattr(long_read, "_few_scores", lambda *a: few(*a, rows=8))
    graded = [f"m{k % 3},q{k},{(k + 1) / 16}" for k in range(12)]
    # twelve rows of each, the flags' longer: the ranges' cut (half the bytes) falls among the flags
    marked = [f"m{k % 3},a-long-item-name-{k // 3},{flags[k % len(flags)]}" for k in range(12)]
    f = tmp_path / "scores.csv"
    f.write_text("model,item,score\n" + "\n".join(graded + marked) + "\n")
    outcomes = _read_long_paths(f, chunk_rows=12)
    if read:
        assert outcomes[-1][0] == "matrix"
    else:
        assert outcomes[-1][0] == "error" and "non-numeric" in outcomes[-1][1]
    assert outcomes == outcomes[-1:] * 4
