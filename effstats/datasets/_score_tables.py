"""Score tables users have: a long or wide CSV/TSV (or Parquet frame) of per-item scores read into a
:class:`effstats.responses.ResponseMatrix`, refusing what is not such a table.

The file is read by :mod:`effstats.datasets._long_read` (a long table of numbers, straight into the matrix) or by
:mod:`effstats.datasets._delimited` (any table, into a frame); the layout checks are in
:mod:`effstats.datasets._table_layouts`; this module turns the frame into the matrix."""
from __future__ import annotations

import os
import warnings
from collections import Counter
from functools import partial
from pathlib import Path
from typing import Any, Callable, Literal, Sequence

import numpy as np
import pandas as pd

from .._shared import _is_float, _name_list, _plain, _repeated, _sorted_codes
from .._user_files import refuse_empty_path
from ..responses import ResponseMatrix
from ._delimited import _compression, _other_separator, _read_delimited, _TextColumns, record_line, refuse_json_lines
from ._files import _check_duplicates
from ._long_read import _read_long
from ._summaries import summary_model_rows
from ._table_layouts import (_EXPECTED, _id_column, _refuse_empty_ids, _refuse_headerless, _refuse_items_in_two_tasks,
                             _refuse_long_as_wide, _refuse_non_items, _refuse_out_of_range, _refuse_scores_as_ids,
                             _refuse_transposed, _row_models, _text_example, _text_examples, _true_false, _values,
                             refuse_score_text, refused_scores)

__all__ = ["read_scores_csv", "read_scores_frame"]


def read_scores_csv(
    path: str | os.PathLike,
    *,
    format: Literal["auto", "long", "wide"] = "auto",
    model: str = "model",
    item: str = "item",
    score: str = "score",
    groups: str | Sequence[str] | None = None,
    kind: Literal["binary", "score"] | None = None,
    sep: str | None = None,
    missing_marker: str = "-",
    duplicates: Literal["last", "first", "error", "mean"] = "last",
    progress: bool = False,
) -> ResponseMatrix:
    """Read per-item scores from a CSV / TSV file in long or wide layout.

    Parameters
    ----------
    path : path
        The file (``.csv``, ``.tsv``), UTF-8 text; compressed with gzip, bz2, xz, zip or Zstandard, it is
        decompressed whatever its name (the compression is read from its first bytes).
    format : {"auto", "long", "wide"}, default="auto"
        ``"long"``: one row per (model, item) with columns ``model``, ``item``, ``score`` (+ ``groups``);
        ``"wide"``: one row per model, first column (or the ``model`` column) = model id, other columns = items.
        ``"auto"`` picks long when the three named columns exist, else wide. A table ``"auto"`` would misread is
        refused with one error saying what was found and what is expected: a transposed table (one row per
        item: its first column named like items, or rows named ``<task>/<doc_id>`` while the columns are not), a
        long table under other column names, a file without a header line, columns of model metadata or
        aggregates (text, names such as ``average`` or ``params``, or columns that are not ``<task>/<doc_id>``
        beside columns that are), a wide table without its model column (its first column named like the items
        and holding scores), scores outside [0, 1] (percentages say so), numbers written with ``_`` (``1_0``),
        scores that are not numbers (a long table's first such score, and its first outside [0, 1], named by its
        line), and cells holding a NUL character (the line and column are named). Read as they are: a
        semicolon- or tab-separated ``.csv``, pandas' row numbers before the model column, ``True``/``False``
        cells, and a model id column that is not first but named ``model`` (or ``name``, ``model_name``, ...).
    model, item, score : str, default="model", "item", "score"
        Column names in the long layout (``model`` also names the id column of a wide table, if present).
    groups : str or sequence of str, optional
        Long layout: item-level columns kept as item metadata (e.g. ``"benchmark"``, ``"scenario"``). Without
        it a ``task`` column is kept (the items' task, as the evaluation loop reads it); an item id in several
        tasks is refused.
    kind : {"binary", "score"}, optional
        Inferred when omitted (binary if every value is 0/1).
    sep : str, optional
        Field separator; default tab for ``.tsv`` files, else comma.
    missing_marker : str, default="-"
        Cell text meaning "not evaluated" (empty cells too). Long rows with it are dropped; wide cells become
        ``missing``.
    duplicates : {"last", "first", "error", "mean"}, default="last"
        What to do with repeated (model, item) rows of a long table or repeated model rows of a wide one (several
        runs of a model): ``"last"`` keeps the row lower in the file and ``"first"`` the higher one (a kept row
        marked not evaluated leaves the cell ``missing``), both with a ``UserWarning`` naming the repeated
        models; ``"mean"`` averages the evaluated values of the repeated rows; ``"error"`` raises.
    progress : bool, default=False
        Show the bytes read on a terminal (standard error) once the read has taken 2 s.

    Returns
    -------
    ResponseMatrix
        Shape (n_models, n_items); pairs absent from a long table are ``missing``. Models and items in the order
        they first appear in the file (a long table's rows not evaluated too).

    See Also
    --------
    effstats.datasets.read_lm_eval_samples : lm-evaluation-harness per-sample logs.
    effstats.datasets.read_helm_runs : HELM run folders.
    effstats.ResponseMatrix.from_long : the same from a DataFrame.

    Notes
    -----
    An uncompressed long file of the three columns of 256 MB or more is parsed in ranges of lines of at least 128 MB,
    one for each core the process may use (at most 8), each by a process forked for it but the first (POSIX systems
    but macOS); the matrix, its order and the errors are those of one pass over the file. Each process holds its
    parser's buffers (about 300 MB). Run on one core (``taskset -c 0`` on Linux) to read it in one process.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from effstats.datasets import read_scores_csv
    >>> tmp = tempfile.TemporaryDirectory()
    >>> f = pathlib.Path(tmp.name, "scores.csv")
    >>> _ = f.write_text("model,item,score\\na,q1,1\\na,q2,0\\nb,q1,0.5\\nb,q1,1\\n")
    >>> rm = read_scores_csv(f, duplicates="mean")  # b ran q1 twice; b never ran q2
    >>> rm.values_with_nan().tolist()
    [[1.0, 0.0], [0.75, nan]]
    >>> tmp.cleanup()
    """
    _check_format(format)
    _check_duplicates(duplicates)
    if not isinstance(path, (str, os.PathLike)):
        raise ValueError(f"path: expected a file path, got {type(path).__name__}")
    refuse_empty_path(path, "path", "a file path")
    p = Path(path).expanduser()
    if not p.is_file():
        raise FileNotFoundError(f"path: {str(p)!r} does not exist")
    refuse_json_lines(p, _compression(p), expected="; lm-evaluation-harness logs are read under their names "
                      "(samples_*.jsonl) or from their folder")
    text = _TextColumns(model, item, groups, missing_marker)
    if format != "wide" and groups is None and kind is None:
        rm = _read_long(p, sep or ("\t" if ".tsv" in p.suffixes else ","), text, score, progress)
        if rm is not None:
            return _without_summary_rows(rm, p, kind)
    if sep is None:
        sep = "\t" if ".tsv" in p.suffixes else ","
        df, header = _read_delimited(p, sep, text, progress)
        other = _other_separator(p, df, sep)
        if other is not None:  # a semicolon- or tab-separated file named .csv: one column at the default comma
            sep, (df, header) = other, _read_delimited(p, other, text, progress)
    else:
        df, header = _read_delimited(p, sep, text, progress)
    if df.shape[1] < 2:
        raise ValueError(f"path: {p.name} has fewer than two columns (sep={sep!r}?); {_EXPECTED}")
    _refuse_headerless(header, p, sep, model)
    dup = sorted(h for h, k in Counter(header).items() if k > 1)
    if dup:
        raise ValueError(f"path: {p.name} repeats the column names {dup[:5]}; every column needs its own name (item "
                         "ids unique across tasks, e.g. 'arc_easy/12' rather than '12')")
    if df.empty:
        raise ValueError(f"path: {p.name} has a header line but no data rows")
    return _table_to_matrix(df, p, format=format, model=model, item=item, score=score, groups=groups, kind=kind,
                            missing_marker=missing_marker, duplicates=duplicates, row_number=header[0] == "",
                            where=lambda row: f"line {record_line(p, row + 1, 0, sep)}")


def read_scores_frame(
    frame: pd.DataFrame,
    *,
    format: Literal["auto", "long", "wide"] = "auto",
    model: str = "model",
    item: str = "item",
    score: str = "score",
    groups: str | Sequence[str] | None = None,
    kind: Literal["binary", "score"] | None = None,
    missing_marker: str = "-",
    duplicates: Literal["last", "first", "error", "mean"] = "last",
    name: str = "frame",
) -> ResponseMatrix:
    """Read per-item scores from a DataFrame in long or wide layout, with the CSV reader's checks.

    For a table read by other means (:func:`pandas.read_parquet`, a database query): its number columns stay
    numbers, every other column is read as a CSV holds it (missing values as empty cells), ids written as the
    index (any index but the default one) are a column, and a table whose first column holds numbers only gets
    the rows' numbers as model ids. A table :func:`effstats.datasets.read_scores_csv` would refuse is refused
    with its message.

    Parameters
    ----------
    frame : DataFrame
        One row per (model, item) (long) or per model (wide).
    format, model, item, score, groups, kind, missing_marker, duplicates
        As for :func:`effstats.datasets.read_scores_csv`.
    name : str, default="frame"
        What the messages call the table (say, the file it was read from).

    Returns
    -------
    ResponseMatrix

    See Also
    --------
    effstats.datasets.read_scores_csv : the same from a CSV / TSV file.
    effstats.ResponseMatrix.from_long : a long table without the layout checks.

    Examples
    --------
    >>> import pandas as pd
    >>> from effstats.datasets import read_scores_frame
    >>> long = pd.DataFrame({"model": ["a", "a", "b"], "item": ["q1", "q2", "q1"], "score": [1.0, 0.0, 0.5]})
    >>> read_scores_frame(long).values_with_nan().tolist()  # b never ran q2
    [[1.0, 0.0], [0.5, nan]]
    >>> read_scores_frame(long.assign(score=[100.0, 0.0, 50.0]))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: frame: ...percentages...
    """
    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"frame: expected a pandas DataFrame, got {type(frame).__name__}")
    if not isinstance(name, str) or not name:
        raise ValueError(f"name: expected a non-empty str, got {_plain(name)!r}")
    _check_format(format)
    _check_duplicates(duplicates)
    if frame.empty:
        raise ValueError(f"frame: {name} is empty ({frame.shape[0]} rows, {frame.shape[1]} columns)")
    df = frame.reset_index() if not isinstance(frame.index, pd.RangeIndex) else frame
    names = [str(c) for c in df.columns]
    ids = _TextColumns(model, item, groups, missing_marker).of(names, names) if names else set()
    for c in df.columns:
        if str(c) in ids and df[c].dtype == object:
            # 1 and "1" are two values here but one id once read as text (as in a CSV file): refused, not merged
            u = pd.Series(pd.unique(df[c].dropna()), dtype=object)
            same = u.astype(str)
            if same.duplicated().any():
                v = u[same == same[same.duplicated()].iloc[0]].tolist()
                raise ValueError(f"frame: column {str(c)!r} mixes types ({_plain(v[0])!r} and {_plain(v[1])!r} are "
                                 "the same id as text); make its ids one type")
    # number columns stay numbers (NaN: not evaluated); the ids and any other column as text, as a CSV holds them
    # (str of a float round-trips), missing values as empty cells
    text = pd.DataFrame({str(c): (df[c] if str(c) not in ids and df[c].dtype.kind in "biuf" else
                                  [("" if pd.isna(v) else str(v)) for v in df[c].tolist()]) for c in df.columns})
    for c in text.columns[(text.dtypes == object).to_numpy()]:
        nul = text[c].str.contains("\0", regex=False).to_numpy(dtype=bool, na_value=False)
        if nul.any():  # a CSV written from it would cut the value there: refused as the CSV reader refuses it
            row = int(np.argmax(nul))
            where = "" if name == "frame" else f"{name}: "
            raise ValueError(f"frame: {where}row {row + 1}, column {c!r} holds a NUL character "
                             f"({text[c].iloc[row]!r}); remove the NUL characters from its values")
    if text.shape[1] and model not in text.columns and _text_example(text.iloc[:, 0], (missing_marker,)) is None:
        text.insert(0, model, [str(i) for i in range(len(text))])  # no model ids: the rows' numbers name them
    default = name == "frame"

    def renamed(msg: str) -> str:  # the checks name the table as a file read from `path`
        if msg.startswith("path: "):
            rest = msg[len("path: "):]
            return "frame: " + (rest[len(f"{name}: "):] if default and rest.startswith(f"{name}: ") else rest)
        return msg

    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        try:
            out = _table_to_matrix(text, Path(name), format=format, model=model, item=item, score=score,
                                   groups=groups, kind=kind, missing_marker=missing_marker, duplicates=duplicates)
        except ValueError as exc:
            raise ValueError(renamed(str(exc))) from None
    for w in said:
        warnings.warn(renamed(str(w.message)), w.category, stacklevel=2)
    return out


def _check_format(format: Any) -> None:
    if format not in ("auto", "long", "wide"):
        raise ValueError(f"format: expected 'auto', 'long' or 'wide', got {_plain(format)!r}")


def _table_to_matrix(df: pd.DataFrame, p: Path, *, format: str, model: str, item: str, score: str, groups: Any,
                     kind: Any, missing_marker: str, duplicates: str, row_number: bool = False,
                     where: Callable[[int], str] | None = None) -> ResponseMatrix:
    """A ResponseMatrix from a table of strings (every cell as written) in long or wide layout, refusing layouts
    it would otherwise misread; ``row_number``: the first column has no name (pandas' row numbers, or ids);
    ``where``: the text naming row ``i`` of ``df`` (its line in the file), which a long table's refused score names
    (called only then)."""
    missing = (missing_marker,)
    first = df.columns[0]
    if row_number and df.shape[1] > 2 and df[first].tolist() == [str(i) for i in range(len(df))]:
        rest = df.drop(columns=first)
        # pandas' row numbers before the real id column (to_csv without index=False): not data
        if (model in rest.columns or {model, item, score} <= set(rest.columns)
                or _text_example(rest.iloc[:, 0], missing)):
            df = rest
    guessed = format == "auto"
    if guessed:
        format = "long" if {model, item, score} <= set(df.columns) else "wide"
    if format == "long":
        # models and items in the order they first appear (rows not evaluated and repeated rows too), as a wide file
        # keeps its rows' and columns' order and the chunked reader orders them: one table in either layout is one
        # matrix
        appearance = {c: pd.Index(np.asarray(pd.unique(df[c]), dtype=object)) for c in (model, item)
                      if c in df.columns}
        # string ids as codes, computed once: the checks and the matrix read them instead of hashing the strings
        codes = {c: _codes(df[c]) for c in (model, item) if c in df.columns}
        codes = codes if len(codes) == 2 and None not in codes.values() else None
        if codes is None:
            df = _as_text(df)
        _refuse_empty_ids(df, {model: "model", item: "item"}, p, codes)
        if groups is None and "task" in df.columns and "task" not in (model, item, score) and item in df.columns:
            groups = ["task"]  # the items' task, as the loop reads it (lm-eval and HELM readers write it too)
            _refuse_items_in_two_tasks(df, item, p)
        elif groups is None and "scenario" in df.columns and "scenario" not in (model, item, score):
            # effstats audit's name for an item's group: not the loop's, which would split its budget over it
            warnings.warn(f"path: {p.name}: column 'scenario' is not read (the items' tasks are read from a 'task' "
                          "column, else from item ids <task>/<id>): name it 'task' to read it as the items' task",
                          UserWarning, stacklevel=4)
        if score in df.columns:
            df = _true_false(df, [score], missing)
            # numpy's parser is correctly rounded; pandas' fast to_numeric can be off by an ulp (pandas 1.5)
            try:
                scores = {score: _values(df[[score]], f"path: {p.name}", missing=missing)[:, 0]}
            except ValueError:
                if where is not None and df[score].dtype == object:  # the first cell refused, by its line
                    k, texts = pd.factorize(df[score].astype(str))
                    bad = np.append(refused_scores(texts, missing, true_false=False), False)[k]
                    if bad.any():
                        row = int(np.argmax(bad))
                        refuse_score_text(str(df[score].iloc[row]), p, score, missing, where(row))
                raise
            if codes is not None and not _repeated(codes[model], codes[item]):
                # the ids' codes (integers, ordered as the ids) in their place: a fraction of the frame to copy
                df = pd.DataFrame({**{c: df[c] for c in df.columns if c not in codes and c != score},
                                   **{c: k for c, (k, _) in codes.items()}, **scores})
            else:
                df, codes = _as_text(df).assign(**scores), None
            _refuse_out_of_range(df[score].to_numpy(), p, f"the scores in column {score!r}", score,
                                 partial(_row_models, df, model, codes),
                                 None if where is None else lambda: where(_first_outside(df[score].to_numpy())))
            if model in df.columns and item in df.columns and codes is None:
                df = _one_row_per_pair(df, [model, item], score, duplicates, p)
            kept = df[score].notna().to_numpy()
            if not kept.all():
                if model in df.columns:  # a model without any score would vanish from what is read: say so
                    gone = pd.Index(df[model][~kept].unique()).difference(pd.Index(df[model][kept].unique()))
                    if len(gone) and len(gone) < df[model].nunique():
                        names = codes[model][1][gone] if codes is not None and model in codes else gone
                        warnings.warn(f"path: {p.name}: model(s) {_name_list(map(repr, _plain(list(names))))} have "
                                      "no score on any item (every row not evaluated) and are left out", UserWarning,
                                      stacklevel=3)
                if item in df.columns and model in df.columns and df[model].nunique() > 1:
                    # (one model's table: its missing cells are its own, which its reader's caller words)
                    _warn_items_without_score(df, kept, item, codes, p)
                df = df[kept]
            if df.empty:
                raise ValueError(f"score: every row of {p.name} is marked not evaluated")
        else:
            df, codes = _as_text(df), None
        rm = _named(lambda: ResponseMatrix.from_long(df, model=model, item=item, score=score, groups=groups,
                                                     kind=kind), p)
        if codes is not None:
            models, items = codes[model][1][rm.model_ids], codes[item][1][rm.item_ids]
            rm = ResponseMatrix(rm.values, kind=rm.kind, missing=rm.missing, model_ids=models, item_ids=items,
                                items=rm.items.set_axis(items) if len(rm.items.columns) else None)
        return _without_summary_rows(_in_order_of_appearance(rm, appearance.get(model), appearance.get(item)), p,
                                     kind)
    if groups is not None:
        raise ValueError("groups: only available for the long layout")
    df = _as_text(df)
    idx_col = _id_column(df, model)
    _refuse_scores_as_ids(df, idx_col, p, model, missing)
    _refuse_empty_ids(df, {idx_col: "model"}, p)
    cell_text = _text_examples(df, missing)
    _refuse_transposed(df, idx_col, p, model, cell_text)
    if guessed:
        _refuse_long_as_wide(df, p, model, item, score, cell_text)
    wide = df.copy(deep=False)  # the id column moved to the index without a copy of the score columns
    wide.set_index(idx_col, inplace=True)
    wide = _true_false(wide, list(wide.columns), missing)
    text = _text_examples(wide, missing)
    if text:
        c, x = next(iter(text.items()))
        under = next(((c, x) for c, x in text.items() if "_" in x and _is_float(x.replace("_", ""))), None)
        if under is not None:  # float("1_0") is 10: a cell such as this one is text to a table
            c, x = under
            row = int(np.argmax(wide[c].astype(str).str.strip().eq(x).to_numpy()))
            raise ValueError(f"path: {p.name}: column {c!r} has non-numeric values, e.g. {_plain(x)!r} (model "
                             f"{_plain(wide.index[row])!r}, line {row + 2}: numbers are written without '_')")
        if not guessed:
            raise ValueError(f"path: {p.name}: column {c!r} has non-numeric values, e.g. {_plain(x)!r}")
        if idx_col not in cell_text:  # the ids are numbers while some other column holds text
            raise ValueError(f"path: {p.name}: the first column {str(idx_col)!r} holds numbers, not model ids, and "
                             f"column {c!r} holds text (e.g. {_plain(x)!r}); put the model ids first or name their "
                             "column "
                             f"{model!r}; {_EXPECTED}")
        more = f" (and {len(text) - 1} more: {list(text)[1:4]})" if len(text) > 1 else ""
        raise ValueError(f"path: {p.name}: column {c!r} has non-numeric values, e.g. {_plain(x)!r}{more}; a wide "
                         "table holds "
                         f"the model ids in column {str(idx_col)!r}, then one column of scores per item: drop "
                         "metadata columns such as this one")
    parsed = _values(wide, f"path: {p.name}", missing=missing)
    _refuse_non_items(wide, parsed, p)
    _refuse_leaderboard(parsed, wide.columns, p)
    _refuse_out_of_range(parsed, p, "the scores", rows=wide.index)
    values = pd.DataFrame(parsed, index=wide.index, columns=wide.columns)
    if values.index.has_duplicates:
        values = _one_row_per_pair(values.reset_index(), [idx_col], None, duplicates, p).set_index(idx_col)
    return _without_summary_rows(_named(
        lambda: ResponseMatrix(values.to_numpy(), kind=kind, nan_as_missing=True, model_ids=values.index,
                               item_ids=values.columns),
        p
    ), p, kind)


def _without_summary_rows(rm: ResponseMatrix, p: Path, kind: Any) -> ResponseMatrix:
    """``rm`` without the rows that are the item means, medians (majority answers) or standard deviations of the
    other rows (:func:`._summaries.summary_model_rows`: a "Mean" row, an "ensemble-mean" pseudo-model), said in a
    warning naming them; its kind inferred again unless ``kind`` is given (a mean row makes 0/1 rows graded)."""
    found = summary_model_rows(rm)
    if not found:
        return rm
    what = {"mean": "the other rows' item means", "median": "the other rows' majority answer, their item medians",
            "standard deviation": "the other rows' item standard deviations"}
    warnings.warn(f"path: {p.name}: row(s) " + "; ".join(
        f"{_plain(str(rm.model_ids[i]))!r} ({what[w]}, within rounding)" for i, w in found.items())
        + " are summary rows, not models: left out", UserWarning, stacklevel=4)
    sub = rm._take(np.setdiff1d(np.arange(rm.n_models), list(found)))
    return ResponseMatrix(sub.values, kind=kind, missing=sub.missing, model_ids=sub.model_ids, item_ids=sub.item_ids,
                          models=sub.models if len(sub.models.columns) else None,
                          items=sub.items if len(sub.items.columns) else None)


def _refuse_leaderboard(values: np.ndarray, columns: pd.Index, p: Path) -> None:
    """Refuse a wide table of at most 60 columns one of which is, within the printed rounding, the mean, a weighted
    mean or the Mean Win Rate of the others (:func:`effstats._published._detect_published`): a leaderboard of
    per-scenario scores and its published aggregate, not one score per item. Read as items, its scenarios and its
    aggregate would be sampled alike."""
    if not 4 <= values.shape[1] <= 60 or values.shape[0] < 5:
        return
    from .._published import _detect_published

    from .._published import _aggregates_of_rest, _correlations
    from ._score_headers import _is_aggregate

    with np.errstate(invalid="ignore", divide="ignore"):
        found = [f for f in _detect_published(pd.DataFrame(values, columns=[str(c) for c in columns]))
                 if f["rule"] in ("exact", "close")]
        kinds = {"mean": "mean", "mwr": "Mean Win Rate", "weighted": "weighted mean"}
        why = f"is the {kinds[found[0]['kind']]} of the other columns within rounding" if found else ""
        for j, c in enumerate(columns):
            if why or not _is_aggregate(c):
                continue
            # named like an aggregate and ranking the models as the others do together, or the other way round (a
            # win rate over lower-is-better columns)
            r = max((abs(v) for v in _correlations(values[:, j], _aggregates_of_rest(values), j).values()
                     if np.isfinite(v)), default=0.0)
            if r >= 0.6:
                found = [dict(column=c)]
                why = f"is named like an aggregate and follows the other columns (|r| = {r:.2f})"
    if found:
        raise ValueError(f"path: {p.name}: column {_plain(str(found[0]['column']))!r} {why}: a leaderboard of "
                         "per-scenario scores and their aggregate, not one column of scores per item; select and "
                         "estimate need per-item results (audit a leaderboard with `effstats audit`)")


def _first_outside(values: np.ndarray) -> int:
    """The index of the first finite value of ``values`` outside [0, 1]."""
    with np.errstate(invalid="ignore"):
        return int(np.argmax(np.isfinite(values) & ((values < 0) | (values > 1))))


def _in_order_of_appearance(rm: ResponseMatrix, models: pd.Index | None, items: pd.Index | None) -> ResponseMatrix:
    """``rm`` (models and items in :meth:`effstats.ResponseMatrix.from_long`'s sorted order) with its models and
    items in the order of ``models`` and ``items``, their ids in the order they first appear in the table."""
    pos = []
    for ids, appearance in ((rm.model_ids, models), (rm.item_ids, items)):
        at = np.arange(len(ids)) if appearance is None else ids.get_indexer(appearance)
        at = at[at >= 0]
        pos.append(at if len(at) == len(ids) else np.arange(len(ids)))
    rows, cols = pos
    if (rows == np.arange(len(rows))).all() and (cols == np.arange(len(cols))).all():
        return rm
    return ResponseMatrix(rm.values[np.ix_(rows, cols)], kind=rm.kind,
                          missing=None if rm.missing is None else rm.missing[np.ix_(rows, cols)],
                          model_ids=rm.model_ids[rows], item_ids=rm.item_ids[cols],
                          models=rm.models.iloc[rows] if len(rm.models.columns) else None,
                          items=rm.items.iloc[cols] if len(rm.items.columns) else None)


def _codes(col: pd.Series) -> tuple[np.ndarray, pd.Index] | None:
    """:func:`~effstats._shared._sorted_codes` of an id column, read off a categorical one
    (:func:`~effstats.datasets._delimited._read_typed`)."""
    if not isinstance(col.dtype, pd.CategoricalDtype):
        return _sorted_codes(col)
    cats = col.cat.categories
    k = col.cat.codes.to_numpy()
    if (not cats.is_monotonic_increasing or pd.api.types.infer_dtype(cats) != "string" or (len(k) and k.min() < 0)
            or np.bincount(k, minlength=len(cats)).min(initial=1) == 0):
        return _sorted_codes(_as_text(col.to_frame()).iloc[:, 0])
    return k, pd.Index(cats, dtype=object, name=col.name)


def _as_text(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with its categorical columns (:func:`~effstats.datasets._delimited._read_typed`'s ids) as text, as
    written."""
    cat = [j for j, t in enumerate(df.dtypes) if isinstance(t, pd.CategoricalDtype)]  # one look at 10^5 columns
    return df.assign(**{df.columns[j]: df.iloc[:, j].astype(object) for j in cat}) if cat else df


def _one_row_per_pair(df: pd.DataFrame, keys: list[str], score: str | None, duplicates: str, p: Path) -> pd.DataFrame:
    """``df`` with one row per ``keys`` under the ``duplicates`` rule; NaN marks cells not evaluated.

    ``score`` is the value column of a long table; None means every non-key column is a value (a wide table).
    """
    rep = df.duplicated(keys, keep=False)
    if not rep.any():
        return df
    what = "duplicate (model, item) rows" if len(keys) == 2 else f"model ids in column {keys[0]!r} repeat"
    shown = df.loc[rep, keys].drop_duplicates().head(5)
    examples = ", ".join(repr(tuple(r)) if len(keys) == 2 else repr(r[0]) for r in shown.itertuples(index=False))
    if duplicates == "error":
        raise ValueError(
            f"path: {p.name}: {what}, e.g. {examples}; pass duplicates='last', 'first' or 'mean' to choose or "
            "average them"
        )
    if duplicates == "mean":
        values = [score] if score is not None else [c for c in df.columns if c not in keys]
        # pandas' mean skips NaN: the mean of the evaluated values, NaN where none was evaluated
        agg = {c: ("mean" if c in values else "first") for c in df.columns if c not in keys}
        return df.groupby(keys, sort=False, as_index=False).agg(agg)[list(df.columns)]
    warnings.warn(
        f"path: {p.name}: {what}, e.g. {examples}; using the {duplicates} row of each (duplicates={duplicates!r}; "
        "'mean' averages them, 'error' refuses them)",
        UserWarning,
        stacklevel=3,
    )
    kept = df.drop_duplicates(keys, keep=duplicates)
    first_seen = df.groupby(keys, sort=False).ngroup()  # models keep the place of their first row
    return kept.iloc[np.argsort(first_seen[kept.index].to_numpy(), kind="stable")]


def _named(build, p: Path) -> ResponseMatrix:
    # the table came from `path`: errors about the parsed frame name that argument
    try:
        return build()
    except ValueError as exc:
        msg = str(exc)
        for internal in ("df:", "values:", "model_ids:", "item_ids:", "missing:"):  # names the user never passed
            if msg.startswith(internal):
                raise ValueError(f"path: {p.name}: {msg[len(internal):].strip()}") from None
        raise


def _warn_items_without_score(df: pd.DataFrame, kept: np.ndarray, item: str, codes: dict | None, p: Path) -> None:
    """Warn, in one line, of the items (and whole tasks) that vanish from what is read because no model has a score
    on them (``kept``: the rows with a score)."""
    gone = pd.Index(df[item][~kept].unique()).difference(pd.Index(df[item][kept].unique()))
    if not len(gone) or len(gone) == df[item].nunique():  # none, or all (refused as such)
        return
    names = codes[item][1][gone] if codes is not None and item in codes else gone
    what = f"{len(gone)} item(s) (e.g. {_name_list(map(repr, _plain(list(names[:3]))))})"
    if "task" in df.columns:
        has = df["task"][kept].unique()
        lost = [t for t in pd.unique(df["task"][~kept]) if t not in set(has)]
        if lost:
            what += f", every item of task(s) {_name_list(map(repr, _plain(lost)))},"
    warnings.warn(f"path: {p.name}: {what} have no score from any model (every row not evaluated) and are left out",
                  UserWarning, stacklevel=4)
