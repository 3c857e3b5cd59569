"""The evaluation-data model: a models × items matrix of responses that every effstats method consumes.

A :class:`effstats.ResponseMatrix` holds one of

* ``kind="binary"``: per-item correctness (0/1),
* ``kind="score"``: per-item scores in [0, 1] (F1, ROUGE, P(win), ...),

optionally with class probabilities (models × items × classes) and the true labels, an explicit
``missing`` mask for cells that were not evaluated, item groups (benchmark / scenario / subscenario /
prompt ...) and model metadata (name, release date, size, family ...).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Literal, Sequence

import numpy as np
import pandas as pd

from ._response_meta import (_as_float, _empty_rows, _hashable, _ids, _meta, _refuse_times, _renamed, _subset_meta,
                             _without_unscored_rows)
from ._shared import _group_means, _indexer, _plain, _repeated, _sorted_codes, _unique_positions
from ._validation import (check_array, check_binary, check_flag, check_probabilities, check_unit_interval,
                          snap_zero_one_scan)

__all__ = ["ResponseMatrix"]

Kind = Literal["binary", "score"]


@dataclass(frozen=True, eq=False, repr=False)
class ResponseMatrix:
    """Models × items responses with metadata: the input of every effstats method.

    Holds per-item correctness (``kind="binary"``) or per-item scores in [0, 1] (``kind="score"``), an explicit
    ``missing`` mask for cells that were not evaluated, optional class probabilities and labels, and metadata
    tables for models (release date, size, family ...) and items (benchmark, scenario, prompt ...). Instances are
    immutable; selections return new matrices.

    Build one from your own results with :meth:`effstats.ResponseMatrix.from_long` (one row per model and item,
    the layout most evaluation logs have), :meth:`effstats.ResponseMatrix.from_wide` (a models × items table,
    e.g. read with :func:`pandas.read_csv`), :func:`effstats.datasets.read_lm_eval_samples`
    (lm-evaluation-harness ``--log_samples`` output) or :func:`effstats.datasets.read_helm_runs` (HELM run
    folders).

    Parameters
    ----------
    values : array-like of shape (n_models, n_items)
        Correctness (``kind="binary"``) or scores in [0, 1] (``kind="score"``). Cells flagged in ``missing`` may
        hold anything (they are stored as 0); the masked cells of a :class:`numpy.ma.MaskedArray` are missing.
    kind : {"binary", "score"}, default=None
        Inferred from ``values`` when None: binary when every observed value is 0 or 1.
    missing : array-like of bool of shape (n_models, n_items), default=None
        True where a model was not evaluated on an item. NaN in ``values`` is refused unless
        ``nan_as_missing=True`` turns it into this mask.
    probabilities : array-like of shape (n_models, n_items, n_classes), default=None
        Class probabilities; each row sums to 1.
    labels : array-like of int of shape (n_items,), default=None
        True classes, required with ``probabilities``.
    predictions : array-like of int of shape (n_models, n_items) or (n_models, n_items, k), default=None
        Predicted class ids (top-1, or the top-k ranked best first) where no probabilities are published.
    model_ids, item_ids : sequence of hashable, default=None
        Unique identifiers (default ``m0, m1, ...`` and ``i0, i1, ...``).
    models : DataFrame or dict of columns, default=None
        Model metadata, indexed by model id or in row order (default ``0..n-1`` index). Ids are aligned by id; a
        default index when the ids are the integers ``0..n-1`` in another order is refused (row and id order differ).
    items : DataFrame or dict of columns, default=None
        Item metadata and groups (e.g. ``benchmark``, ``scenario``), indexed by item id or in row order, as ``models``.
    nan_as_missing : bool, default=False
        Read NaN in ``values`` (and pandas' ``pd.NA``, in nullable columns such as ``Int64``) as "not evaluated".

    Attributes
    ----------
    values : ndarray of shape (n_models, n_items)
        bool for ``kind="binary"``, float otherwise; 0 at missing cells.
    kind : {"binary", "score"}
    missing : ndarray of bool of shape (n_models, n_items) or None
        None when every cell is evaluated.
    probabilities, labels, predictions : ndarray or None
    model_ids, item_ids : pandas.Index
    models, items : DataFrame
        Metadata indexed by ``model_ids`` and ``item_ids``.

    Raises
    ------
    ValueError
        Naming the argument: values outside [0, 1], non-0/1 values with ``kind="binary"``, NaN without
        ``nan_as_missing``, duplicated ids, metadata indexed by other ids, a model with no evaluated item.

    See Also
    --------
    effstats.datasets.read_lm_eval_samples : per-item results of lm-evaluation-harness.
    effstats.datasets.read_helm_runs : per-instance results of HELM runs.
    effstats.datasets.simulate_responses : synthetic responses from an IRT model.
    effstats.PackedBinaryMatrix : bit-packed storage for large binary matrices.

    Examples
    --------
    >>> from effstats import ResponseMatrix
    >>> rm = ResponseMatrix([[1, 0, 1, 1], [0, 0, 1, 0]], model_ids=["big", "small"],
    ...                     item_ids=["a", "b", "c", "d"], items={"task": ["x", "x", "y", "y"]})
    >>> rm
    ResponseMatrix(2 models × 4 items, kind='binary', item groups ['task'])
    >>> rm.accuracy()
    model_ids
    big      0.75
    small    0.25
    Name: accuracy, dtype: float64
    """

    values: np.ndarray
    kind: Kind = "binary"
    missing: np.ndarray | None = None
    probabilities: np.ndarray | None = None
    labels: np.ndarray | None = None
    predictions: np.ndarray | None = None
    model_ids: pd.Index = field(default=None)  # type: ignore[assignment]
    item_ids: pd.Index = field(default=None)  # type: ignore[assignment]
    models: pd.DataFrame = field(default=None)  # type: ignore[assignment]
    items: pd.DataFrame = field(default=None)  # type: ignore[assignment]

    # ------------------------------------------------------------------ construction
    def __init__(
        self,
        values: Any,
        *,
        kind: Kind | None = None,
        missing: Any = None,
        probabilities: Any = None,
        labels: Any = None,
        predictions: Any = None,
        model_ids: Sequence | None = None,
        item_ids: Sequence | None = None,
        models: Any = None,
        items: Any = None,
        nan_as_missing: bool = False,
    ) -> None:
        nan_as_missing = check_flag(nan_as_missing, "nan_as_missing")
        masked = None
        if isinstance(values, np.ma.MaskedArray):  # its mask marks the cells not evaluated, as ``missing`` does
            masked = np.ma.getmaskarray(values)
            values = values.filled(0)
        elif isinstance(values, pd.DataFrame):
            _refuse_times(values, "values")
        # booleans are 0/1 by their type: read as they are, without a float copy of the matrix to snap and scan
        flags = isinstance(values, np.ndarray) and values.dtype == bool and kind in (None, "binary")
        try:
            vals = check_array(values, "values", ndim=2, allow_nan=nan_as_missing, dtype=None if flags else float)
        except ValueError as exc:
            if str(exc) == "values: contains NaN; expected finite numbers":
                raise ValueError(f"{exc}; pass nan_as_missing=True to read NaN as a missing cell") from None
            raise
        miss = None
        if missing is not None:
            miss = check_binary(missing, "missing", shape=vals.shape)
        if nan_as_missing and not flags:
            nan = np.isnan(vals)
            if nan.any():
                miss = nan if miss is None else (miss | nan)
        if masked is not None and masked.any():
            miss = masked if miss is None else (miss | masked)
        if miss is not None:
            if miss.all(axis=1).any():
                raise ValueError(f"missing: a model has no evaluated item ({_empty_rows(miss, model_ids, values)}); "
                                 "drop it first")
            vals = np.where(miss, vals.dtype.type(0), vals)
            if not miss.any():
                miss = None
        if flags:
            kind, is01 = "binary", True
        else:
            # 0/1 results off by floating-point noise are 0/1; the same scan tells whether all are (missing cells
            # hold 0.0 here, so the observed cells are 0/1 exactly when the whole array is)
            vals, is01 = snap_zero_one_scan(vals)
            if kind is None:
                kind = "binary" if is01 else "score"
        if kind == "binary":
            if not is01:
                observed = vals if miss is None else vals[~miss]
                bad = np.unique(observed[~np.isin(observed, (0.0, 1.0))])[:5]
                raise ValueError(f"values: kind='binary' requires 0/1 values, found {bad.tolist()}")
            vals = vals.astype(bool)
        elif kind == "score":
            vals = check_unit_interval(vals, "values")
        else:
            raise ValueError(f"kind: expected 'binary' or 'score', got {kind!r}")
        n_models, n_items = vals.shape
        proba = lab = None
        if probabilities is not None:
            proba = check_probabilities(probabilities, "probabilities", ndim=3)
            if proba.shape[:2] != vals.shape:
                raise ValueError(f"probabilities: expected shape ({n_models}, {n_items}, n_classes), got {proba.shape}")
            if labels is None:
                raise ValueError("labels: required with probabilities (the true class of each item)")
        if labels is not None:
            lab = check_array(labels, "labels", ndim=1, dtype=None, shape=(n_items,))
            if not np.issubdtype(lab.dtype, np.integer):
                raise ValueError(f"labels: expected integer class ids, got dtype {lab.dtype}")
            if proba is not None and (lab.min() < 0 or lab.max() >= proba.shape[2]):
                raise ValueError(f"labels: expected class ids in [0, {proba.shape[2] - 1}]")
        pred = None
        if predictions is not None:
            pred = check_array(predictions, "predictions", ndim=(2, 3), dtype=None)
            if pred.shape[:2] != vals.shape or not np.issubdtype(pred.dtype, np.integer):
                raise ValueError(f"predictions: expected integer class ids of shape {vals.shape} (+ top-k), got "
                                 f"{pred.dtype} {pred.shape}")
            if pred.min() < 0:
                raise ValueError(f"predictions: class ids must be >= 0, found {pred.min()}")
        mids = _ids(model_ids, n_models, "model_ids", "m")
        iids = _ids(item_ids, n_items, "item_ids", "i")
        set_ = object.__setattr__
        set_(self, "values", vals)
        set_(self, "kind", kind)
        set_(self, "missing", miss)
        set_(self, "probabilities", proba)
        set_(self, "labels", lab)
        set_(self, "predictions", pred)
        set_(self, "model_ids", mids)
        set_(self, "item_ids", iids)
        set_(self, "models", _meta(models, mids, "models"))
        set_(self, "items", _meta(items, iids, "items"))

    @classmethod
    def from_probabilities(cls, probabilities: Any, labels: Any, **kw: Any) -> "ResponseMatrix":
        """Binary correctness (arg-max equals the label) from class probabilities.

        Parameters
        ----------
        probabilities : array-like of shape (n_models, n_items, n_classes)
            Each model's class probabilities on each item; rows sum to 1.
        labels : array-like of int of shape (n_items,)
            True classes.
        **kw
            Further arguments of :class:`effstats.ResponseMatrix` (``model_ids``, ``items``, ...).

        Returns
        -------
        ResponseMatrix
            ``kind="binary"``, with ``probabilities`` and ``labels`` kept.

        Examples
        --------
        >>> import numpy as np
        >>> from effstats import ResponseMatrix
        >>> p = np.array([[[0.7, 0.3], [0.4, 0.6]], [[0.2, 0.8], [0.9, 0.1]]])
        >>> rm = ResponseMatrix.from_probabilities(p, labels=[0, 1])
        >>> rm.values
        array([[ True,  True],
               [False, False]])
        >>> rm.true_class_probability()
        array([[0.7, 0.6],
               [0.2, 0.1]])
        """
        proba = check_array(probabilities, "probabilities", ndim=3)  # __init__ checks them as probabilities
        lab = check_array(labels, "labels", ndim=1, dtype=None, shape=(proba.shape[1],))
        correct = proba.argmax(axis=2) == lab[None, :]
        return cls(correct, kind="binary", probabilities=proba, labels=lab, **kw)

    @classmethod
    def from_long(
        cls,
        df: pd.DataFrame,
        *,
        model: str = "model",
        item: str = "item",
        score: str = "score",
        groups: Iterable[str] | str | None = None,
        kind: Kind | None = None,
        models: pd.DataFrame | None = None,
    ) -> "ResponseMatrix":
        """Build a response matrix from a long table: one row per (model, item) pair with its score.

        This is the layout most evaluation logs have (a CSV with ``model``, ``item``, ``score`` columns, one line
        per evaluated example). Pairs absent from the table, or with a NaN score, become missing cells; scores are 0/1
        correctness or values in [0, 1].

        Parameters
        ----------
        df : DataFrame
            The table, e.g. from :func:`pandas.read_csv`.
        model : str, default="model"
            Column of model ids (the rows of the matrix).
        item : str, default="item"
            Column of item (example) ids (the columns of the matrix).
        score : str, default="score"
            Column of scores: 0/1 correctness or values in [0, 1]. A NaN score is a cell not evaluated, as an
            absent row (said in one warning with the count of such rows).
        groups : str or list of str, default=None
            Item-level columns kept as item metadata (e.g. ``"task"``, ``"scenario"``), constant within an item;
            :meth:`effstats.ResponseMatrix.group_scores` and :meth:`effstats.ResponseMatrix.mean_of_means` use them.
        kind : {"binary", "score"}, default=None
            Inferred when None: binary when every score is 0 or 1.
        models : DataFrame, default=None
            Model metadata indexed by model id (it may list more models than the table).

        Returns
        -------
        ResponseMatrix
            Models and items in sorted id order (a file read by :func:`effstats.datasets.read_scores_csv` or
            :func:`effstats.workflow.read_results` keeps the order in which they first appear in it).

        Raises
        ------
        ValueError
            Naming the argument: a column that is not in the table, duplicated (model, item) rows, non-numeric
            or infinite scores, a model or item whose every score is NaN, groups that vary within an item.

        See Also
        --------
        effstats.ResponseMatrix.from_wide : from a models × items table.
        effstats.ResponseMatrix.to_long : the inverse.
        effstats.datasets.read_scores_csv : read a long or wide CSV file in one call.

        Examples
        --------
        Per-example results as a CSV file (here inline) with a task column; model ``llama`` did not run ``q3``:

        >>> import io
        >>> import pandas as pd
        >>> from effstats import ResponseMatrix
        >>> log = io.StringIO('''model,item,score,task
        ... gpt,q1,1,math
        ... gpt,q2,0,math
        ... gpt,q3,1,code
        ... llama,q1,1,math
        ... llama,q2,1,math
        ... ''')
        >>> rm = ResponseMatrix.from_long(pd.read_csv(log), groups="task")
        >>> rm
        ResponseMatrix(2 models × 3 items, kind='binary', 1 missing, item groups ['task'])
        >>> rm.accuracy()
        model_ids
        gpt      0.666667
        llama    1.000000
        Name: accuracy, dtype: float64
        >>> rm.group_scores("task")
        task       code  math
        model_ids
        gpt         1.0   0.5
        llama       NaN   1.0

        Other column names are given by keyword:

        >>> log = pd.DataFrame({"system": ["a", "a", "b", "b"], "doc_id": [0, 1, 0, 1], "acc": [1, 0, 0, 0]})
        >>> ResponseMatrix.from_long(log, model="system", item="doc_id", score="acc").to_frame()
        item_ids     0    1
        model_ids
        a          1.0  0.0
        b          0.0  0.0
        """
        if not isinstance(df, pd.DataFrame):
            raise ValueError(f"df: expected a pandas DataFrame, got {type(df).__name__}")
        if df.columns.has_duplicates:
            raise ValueError(f"df: duplicated columns {_plain(df.columns[df.columns.duplicated()].unique()[:5])}")
        if groups is None or isinstance(groups, str) or _hashable(groups) and not isinstance(groups, tuple):
            groups = [] if groups is None else [groups]
        else:
            groups = list(groups)
        for col, nm in [(model, "model"), (item, "item"), (score, "score")] + [(g, "groups") for g in groups]:
            if not _hashable(col) or col not in df.columns:
                raise ValueError(f"{nm}: column {col!r} not in the table (columns: {list(df.columns)})")
        if len({model, item, score}) < 3:
            raise ValueError(f"model: the model, item and score columns must differ, got {model!r}, {item!r}, "
                             f"{score!r}")
        if df.empty:
            raise ValueError("df: expected a non-empty table")
        for col, nm in [(model, "model"), (item, "item")]:
            absent = df[col].isna().to_numpy()
            if absent.any():  # pivot would make a model or item called nan (or drop the rows)
                raise ValueError(f"{nm}: column {_plain(col)!r} has {int(absent.sum())} row(s) with no id (None or "
                                 f"NaN), the first at row {_plain(df.index[absent.argmax()])!r}; drop or name them")
        s = _as_float(df[[score]], "score")[score]
        if np.isinf(s.to_numpy()).any():
            raise ValueError(f"score: column {score!r} has infinite values")
        if s.hasnans:  # a row not evaluated: a missing cell, as if the row were absent
            df, s = _without_unscored_rows(df, s, model, item, score)
        rows, cols = _sorted_codes(df[model]), _sorted_codes(df[item])
        if rows is not None and cols is not None:
            repeated = _repeated(rows, cols)
        else:
            repeated = bool(df.duplicated([model, item]).any())
        if repeated:
            first = df.loc[df.duplicated([model, item]), [model, item]].iloc[0].tolist()
            raise ValueError(f"df: duplicate (model, item) rows, e.g. {first}")
        if rows is not None and cols is not None:  # pivot's table, filled in place by the codes
            cells = np.full(len(rows[1]) * len(cols[1]), np.nan)
            cells[rows[0].astype(np.int64) * len(cols[1]) + cols[0]] = s.to_numpy()
            wide = pd.DataFrame(cells.reshape(len(rows[1]), len(cols[1])), index=rows[1], columns=cols[1], copy=False)
        else:
            wide = df.assign(**{score: s}).pivot(index=model, columns=item, values=score)
        item_meta = None
        if groups:
            g = df[[item, *groups]].drop_duplicates()
            if g[item].duplicated().any():
                raise ValueError(f"groups: {groups} must be constant within each item")
            item_meta = g.set_index(item).loc[wide.columns]
        return _renamed({"values": "score", "missing": "df"}, lambda: cls(
            wide.to_numpy(dtype=float),
            kind=kind,
            nan_as_missing=True,
            model_ids=wide.index,
            item_ids=wide.columns,
            items=item_meta,
            models=_subset_meta(models, wide.index, "models"),
        ))

    @classmethod
    def from_wide(cls, df: pd.DataFrame, *, kind: Kind | None = None, missing_marker: Any = "-",
                  nan_as_missing: bool = True, **kw: Any) -> "ResponseMatrix":
        """Build a response matrix from a wide table: rows are models (the index), columns are items.

        Parameters
        ----------
        df : DataFrame
            Models × items; values are 0/1 correctness or scores in [0, 1]. NaN and ``missing_marker`` cells become
            missing. Read a CSV file with ``pd.read_csv(path, index_col=0)`` so that the model ids form the index.
        kind : {"binary", "score"}, default=None
            Inferred when None: binary when every observed value is 0 or 1.
        missing_marker : object, default="-"
            A cell value meaning "not evaluated" (compared as text); None disables it.
        nan_as_missing : bool, default=True
            Read NaN (and ``pd.NA``) cells as "not evaluated"; False refuses them, and ``missing_marker`` cells.
        **kw
            Further arguments of :class:`effstats.ResponseMatrix` (``models``, ``items``, ...).

        Returns
        -------
        ResponseMatrix

        Raises
        ------
        ValueError
            Naming the argument: duplicated model or item ids, non-numeric or infinite cells, values outside
            [0, 1].

        See Also
        --------
        effstats.ResponseMatrix.from_long : from one row per (model, item) pair.
        effstats.ResponseMatrix.to_frame : the inverse.
        effstats.datasets.read_scores_csv : read a long or wide CSV file in one call.

        Examples
        --------
        >>> import io
        >>> import pandas as pd
        >>> from effstats import ResponseMatrix
        >>> table = io.StringIO('''model,q1,q2,q3
        ... model-a,1,0,-
        ... model-b,0,0,1
        ... model-c,1,1,1
        ... ''')
        >>> rm = ResponseMatrix.from_wide(pd.read_csv(table, index_col="model"))
        >>> rm
        ResponseMatrix(3 models × 3 items, kind='binary', 1 missing)
        >>> rm.accuracy().round(3)
        model_ids
        model-a    0.500
        model-b    0.333
        model-c    1.000
        Name: accuracy, dtype: float64

        Scores that are not 0/1 give ``kind="score"``:

        >>> ResponseMatrix.from_wide(pd.DataFrame({"q1": [0.5, 0.9], "q2": [0.25, 1.0]}, index=["x", "y"])).kind
        'score'
        """
        if not isinstance(df, pd.DataFrame):
            raise ValueError(f"df: expected a pandas DataFrame, got {type(df).__name__}")
        if df.empty:
            raise ValueError("df: expected a non-empty table")
        for axis, what in ((df.columns, "columns (item ids)"), (df.index, "rows (model ids)")):
            if axis.has_duplicates:
                raise ValueError(f"df: duplicated {what}: {_plain(axis[axis.duplicated()].unique()[:5])}")
        # mask (not replace): replacing into an all-missing column warns on pandas >= 2.2
        raw = df.mask(df.astype(str) == str(missing_marker)) if missing_marker is not None else df
        num = _as_float(raw, "df")
        if np.isinf(num.to_numpy()).any():
            raise ValueError("df: contains infinite values")
        nan_as_missing = check_flag(nan_as_missing, "nan_as_missing")
        return _renamed({"values": "df", "missing": "df"},
                        lambda: cls(num.to_numpy(dtype=float), kind=kind, nan_as_missing=nan_as_missing,
                                    model_ids=df.index, item_ids=df.columns, **kw))

    def to_frame(self) -> pd.DataFrame:
        """Wide table (models × items); missing cells are NaN.

        Returns
        -------
        DataFrame of shape (n_models, n_items)

        See Also
        --------
        effstats.ResponseMatrix.from_wide : the inverse.

        Examples
        --------
        >>> from effstats import ResponseMatrix
        >>> ResponseMatrix([[1, 0], [0, 1]], nan_as_missing=True).to_frame()
        item_ids   i0   i1
        model_ids
        m0        1.0  0.0
        m1        0.0  1.0
        """
        return pd.DataFrame(self.values_with_nan(), index=self.model_ids, columns=self.item_ids)

    def to_long(self, *, dropna: bool = True) -> pd.DataFrame:
        """Long table with columns ``model``, ``item``, ``score`` and the item metadata columns.

        Parameters
        ----------
        dropna : bool, default=True
            Leave out missing cells (otherwise they are rows with NaN scores).

        Returns
        -------
        DataFrame of shape (n_observed, 3 + n_item_columns)

        See Also
        --------
        effstats.ResponseMatrix.from_long : the inverse.

        Examples
        --------
        >>> from effstats import ResponseMatrix
        >>> ResponseMatrix([[1, 0], [0, 1]], items={"task": ["x", "y"]}).to_long()
          model item  score task
        0    m0   i0    1.0    x
        1    m0   i1    0.0    y
        2    m1   i0    0.0    x
        3    m1   i1    1.0    y
        """
        dropna = check_flag(dropna, "dropna")
        vals = self.values_with_nan().ravel()
        long = pd.DataFrame(
            {
                "model": np.repeat(self.model_ids.to_numpy(), self.n_items),
                "item": np.tile(self.item_ids.to_numpy(), self.n_models),
                "score": vals,
            }
        )
        if dropna and self.missing is not None:
            long = long[self.observed.ravel()].reset_index(drop=True)
        if len(self.items.columns):
            long = long.merge(self.items, left_on="item", right_index=True, how="left")
        return long

    # ------------------------------------------------------------------ basic views
    @property
    def shape(self) -> tuple[int, int]:
        """``(n_models, n_items)``."""
        return self.values.shape  # type: ignore[return-value]

    @property
    def n_models(self) -> int:
        """Number of models (rows)."""
        return self.values.shape[0]

    @property
    def n_items(self) -> int:
        """Number of items (columns)."""
        return self.values.shape[1]

    @property
    def n_classes(self) -> int | None:
        """Number of classes of ``probabilities``, or None without them."""
        return None if self.probabilities is None else self.probabilities.shape[2]

    @property
    def observed(self) -> np.ndarray:
        """Bool array of shape (n_models, n_items): True where evaluated.

        Examples
        --------
        >>> from effstats import ResponseMatrix
        >>> ResponseMatrix([[1, 0, 1], [0, 1, 1]], missing=[[False, False, False], [False, True, False]]).observed
        array([[ True,  True,  True],
               [ True, False,  True]])
        """
        return np.ones(self.shape, bool) if self.missing is None else ~self.missing

    def values_with_nan(self) -> np.ndarray:
        """Float copy of the values with NaN at missing cells.

        Returns
        -------
        ndarray of float of shape (n_models, n_items)

        Examples
        --------
        >>> from effstats import ResponseMatrix
        >>> rm = ResponseMatrix([[1, 0, 1], [0, 1, 1]], missing=[[False, False, False], [False, True, False]])
        >>> rm.values_with_nan()
        array([[ 1.,  0.,  1.],
               [ 0., nan,  1.]])
        """
        out = self.values.astype(float)
        if self.missing is not None:
            out[self.missing] = np.nan
        return out

    def require_binary(self, name: str = "responses") -> np.ndarray:
        """The bool matrix of complete binary responses, for methods that need one.

        Parameters
        ----------
        name : str, default="responses"
            The argument name the error message starts with.

        Returns
        -------
        ndarray of bool of shape (n_models, n_items)

        Raises
        ------
        ValueError
            If ``kind`` is not ``"binary"`` or some cells are missing.

        Examples
        --------
        >>> from effstats import ResponseMatrix
        >>> ResponseMatrix([[1, 0], [1, 1]]).require_binary()
        array([[ True, False],
               [ True,  True]])
        >>> ResponseMatrix([[1, 0], [1, 1]], missing=[[False, False], [False, True]]).require_binary("reference")
        Traceback (most recent call last):
        ...
        ValueError: reference: a complete matrix is required, 1 cells are missing
        """
        if not isinstance(name, str):
            raise ValueError(f"name: expected the argument name (a str), got {name!r}")
        if self.kind != "binary":
            raise ValueError(f"{name}: binary correctness is required, got kind={self.kind!r}")
        if self.missing is not None:
            raise ValueError(f"{name}: a complete matrix is required, {int(self.missing.sum())} cells are missing")
        return self.values

    def true_class_probability(self) -> np.ndarray:
        """The probability each model gives the true class of each item.

        Returns
        -------
        ndarray of shape (n_models, n_items)

        Raises
        ------
        ValueError
            If the matrix has no class probabilities.

        Examples
        --------
        >>> import numpy as np
        >>> from effstats import ResponseMatrix
        >>> p = np.array([[[0.9, 0.1], [0.4, 0.6]], [[0.3, 0.7], [0.2, 0.8]]])  # 2 models, 2 items, 2 classes
        >>> ResponseMatrix.from_probabilities(p, labels=[0, 1]).true_class_probability()
        array([[0.9, 0.6],
               [0.3, 0.8]])
        """
        if self.probabilities is None:
            raise ValueError("probabilities: this ResponseMatrix has no class probabilities")
        return np.take_along_axis(self.probabilities, self.labels[None, :, None], axis=2)[..., 0]

    def __repr__(self) -> str:
        extra = f", {self.n_classes} classes" if self.probabilities is not None else ""
        miss = f", {int(self.missing.sum())} missing" if self.missing is not None else ""
        groups = f", item groups {list(self.items.columns)}" if len(self.items.columns) else ""
        return f"ResponseMatrix({self.n_models} models × {self.n_items} items, kind={self.kind!r}{extra}{miss}{groups})"

    # ------------------------------------------------------------------ selections
    def subset(self, models: Any = None, items: Any = None) -> "ResponseMatrix":
        """Select models and/or items by id, integer position, slice or boolean mask.

        Parameters
        ----------
        models, items : array-like, slice or None, default=None
            Ids, integer positions (when the ids are not integers), a slice or a boolean mask; None keeps all. An
            entry selected twice is refused. A boolean Series is aligned by its index (item or model ids; the
            default ``0..n-1`` index is row order), as metadata is.

        Returns
        -------
        ResponseMatrix
            With metadata, probabilities, labels and predictions subset alike; its arrays are read-only.

        Examples
        --------
        >>> from effstats import ResponseMatrix
        >>> rm = ResponseMatrix([[1, 0, 1], [0, 0, 1]], item_ids=["a", "b", "c"])
        >>> rm.subset(items=["a", "c"]).to_frame()
        item_ids     a    c
        model_ids
        m0         1.0  1.0
        m1         0.0  1.0
        """
        mi = _unique_positions(_indexer(models, self.model_ids, "models"), self.model_ids, "models")
        ii = _unique_positions(_indexer(items, self.item_ids, "items"), self.item_ids, "items")
        return self._take(mi, ii)

    def _take(self, models: Any = None, items: Any = None) -> "ResponseMatrix":
        """:meth:`subset` by integer positions whatever the ids' type (effstats' own selections are positions:
        with integer ids :meth:`subset` reads integers as ids). None keeps all; positions must be unique."""
        mi = np.arange(self.n_models) if models is None else np.asarray(models, dtype=np.intp)
        ii = np.arange(self.n_items) if items is None else np.asarray(items, dtype=np.intp)
        if mi.size == 0:
            raise ValueError("models: the selection is empty")
        if ii.size == 0:
            raise ValueError("items: the selection is empty")
        new = object.__new__(ResponseMatrix)
        sub = np.ix_(mi, ii)
        set_ = object.__setattr__
        set_(new, "values", self.values[sub])
        set_(new, "kind", self.kind)
        miss = None if self.missing is None else self.missing[sub]
        set_(new, "missing", miss if miss is not None and miss.any() else None)
        set_(new, "probabilities", None if self.probabilities is None else self.probabilities[sub])
        set_(new, "labels", None if self.labels is None else self.labels[ii])
        set_(new, "predictions", None if self.predictions is None else self.predictions[sub])
        set_(new, "model_ids", self.model_ids[mi])
        set_(new, "item_ids", self.item_ids[ii])
        set_(new, "models", self.models.iloc[mi])
        set_(new, "items", self.items.iloc[ii])
        for name in ("values", "missing", "probabilities", "labels", "predictions"):
            arr = getattr(new, name)
            # fresh copies (fancy indexing) nobody else holds: read-only, so caches keyed on them stay valid
            if arr is not None:
                arr.flags.writeable = False
        return new

    def transpose(self) -> "ResponseMatrix":
        """Items become models and models become items (the new-items problem of Sort & Search).

        Class probabilities are dropped: they have no meaning in the transposed problem.

        Returns
        -------
        ResponseMatrix of shape (n_items, n_models)
            Model and item metadata swap places.

        Examples
        --------
        >>> from effstats import ResponseMatrix
        >>> t = ResponseMatrix([[1, 0, 1], [0, 0, 1]]).transpose()
        >>> t, t.model_ids.tolist()
        (ResponseMatrix(3 models × 2 items, kind='binary'), ['i0', 'i1', 'i2'])
        """
        return ResponseMatrix(
            self.values.T,
            kind=self.kind,
            missing=None if self.missing is None else self.missing.T,
            model_ids=self.item_ids.rename("model_ids"),
            item_ids=self.model_ids.rename("item_ids"),
            models=self.items,
            items=self.models,
        )

    @property
    def T(self) -> "ResponseMatrix":
        """The transposed matrix, :meth:`effstats.ResponseMatrix.transpose`."""
        return self.transpose()

    def with_metadata(self, *, models: Any = None, items: Any = None) -> "ResponseMatrix":
        """A copy with model and/or item metadata replaced.

        Parameters
        ----------
        models, items : DataFrame or dict of columns, default=None
            Indexed by id, or in row order; None keeps the current table.

        Returns
        -------
        ResponseMatrix

        Examples
        --------
        >>> from effstats import ResponseMatrix
        >>> rm = ResponseMatrix([[1, 0], [0, 0]]).with_metadata(models={"size": [7, 13]})
        >>> rm.models
                   size
        model_ids
        m0            7
        m1           13
        """
        new = self.subset()
        if models is not None:
            object.__setattr__(new, "models", _meta(models, new.model_ids, "models"))
        if items is not None:
            object.__setattr__(new, "items", _meta(items, new.item_ids, "items"))
        return new

    # ------------------------------------------------------------------ aggregates
    def accuracy(self) -> pd.Series:
        """Mean score per model over its evaluated items (accuracy for binary data).

        Returns
        -------
        Series of shape (n_models,)
            Indexed by model id, named ``accuracy``.

        Examples
        --------
        >>> from effstats import ResponseMatrix
        >>> ResponseMatrix([[1, 0, 1, 1], [0, 0, 1, 0]]).accuracy()
        model_ids
        m0    0.75
        m1    0.25
        Name: accuracy, dtype: float64
        """
        # values are 0 at missing cells (set by the constructor), so only the counts need the mask
        return pd.Series(self.values.sum(1) / self.observed.sum(1), index=self.model_ids, name="accuracy")

    def item_means(self) -> pd.Series:
        """Mean score per item over the models that evaluated it.

        Returns
        -------
        Series of shape (n_items,)
            Indexed by item id, named ``mean``.

        Raises
        ------
        ValueError
            If some item was evaluated by no model.

        Examples
        --------
        >>> from effstats import ResponseMatrix
        >>> rm = ResponseMatrix([[1, 0, 1], [0, 1, 1]], missing=[[False, False, False], [False, True, False]])
        >>> rm.item_means().tolist()  # the second item: the first model's only
        [0.5, 0.0, 1.0]
        """
        obs = self.observed
        cnt = obs.sum(0)
        if (cnt == 0).any():
            raise ValueError("items: some items were evaluated by no model")
        return pd.Series(self.values.sum(0) / cnt, index=self.item_ids, name="mean")

    def group_scores(self, by: str) -> pd.DataFrame:
        """Mean score of every model within each item group.

        Parameters
        ----------
        by : str
            An item metadata column (e.g. ``"task"``).

        Returns
        -------
        DataFrame of shape (n_models, n_groups)
            Mean over each group's evaluated items; NaN where a model evaluated none of them.

        Examples
        --------
        >>> from effstats import ResponseMatrix
        >>> rm = ResponseMatrix([[1, 0, 1, 1], [0, 0, 1, 0]], items={"task": ["x", "x", "y", "y"]})
        >>> rm.group_scores("task")
        task         x    y
        model_ids
        m0         0.5  1.0
        m1         0.0  0.5
        """
        if not _hashable(by) or by not in self.items.columns:
            raise ValueError(f"by: item metadata has no column {by!r} (has {list(self.items.columns)})")
        if self.items[by].isna().any():  # factorize codes NaN as -1, which would land in the last group
            bad = self.item_ids[self.items[by].isna().to_numpy()][:5].tolist()
            raise ValueError(f"by: column {by!r} has no group label for items {bad}")
        codes, uniq = pd.factorize(self.items[by], sort=True)
        out = _group_means(self.values, self.observed.astype(float), codes, len(uniq))  # values are 0 at missing cells
        return pd.DataFrame(out, index=self.model_ids, columns=pd.Index(uniq, name=by))

    def mean_of_means(self, by: str) -> pd.Series:
        """Unweighted mean over groups of each model's per-group mean score (the multi-dataset score).

        Parameters
        ----------
        by : str
            An item metadata column.

        Returns
        -------
        Series of shape (n_models,)
            Named ``mean_of_means``.

        Raises
        ------
        ValueError
            If a model evaluated no item of some group.

        Examples
        --------
        >>> from effstats import ResponseMatrix
        >>> rm = ResponseMatrix([[1, 0, 1, 1, 1], [0, 0, 1, 0, 0]], items={"task": ["x", "x", "y", "y", "y"]})
        >>> rm.mean_of_means("task")
        model_ids
        m0    0.750000
        m1    0.166667
        Name: mean_of_means, dtype: float64
        """
        gs = self.group_scores(by)
        if gs.isna().any().any():
            raise ValueError(f"by: some models have no evaluated item in a {by!r} group; mean of means undefined")
        return gs.mean(axis=1).rename("mean_of_means")

    # ------------------------------------------------------------------ memory
    def pack(self):
        """Bit-packed copy of complete binary responses (8 cells a byte).

        Returns
        -------
        PackedBinaryMatrix

        See Also
        --------
        effstats.PackedBinaryMatrix : the packed matrix.

        Examples
        --------
        >>> from effstats import ResponseMatrix
        >>> ResponseMatrix([[1, 0, 1], [0, 0, 1]]).pack().to_dense()
        array([[ True, False,  True],
               [False, False,  True]])
        """
        from .bitpack import PackedBinaryMatrix

        return PackedBinaryMatrix.from_dense(self.require_binary())
