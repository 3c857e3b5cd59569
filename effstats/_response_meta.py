"""The checks and conversions of a :class:`~effstats.ResponseMatrix`'s ids and metadata: model and item ids,
their look-alikes, the per-model and per-item metadata frames and their subsets, and the naming of empty rows."""
from __future__ import annotations

import unicodedata
import warnings
from typing import Any

import numpy as np
import pandas as pd

from ._plain_exceptions import InputTypeError
from ._shared import _label_order, _name_list, _plain


def _ids(ids: Any, n: int, name: str, prefix: str) -> pd.Index:
    if ids is None:
        return pd.Index([f"{prefix}{i}" for i in range(n)], name=name)
    if isinstance(ids, (str, bytes)) or not np.iterable(ids):
        raise ValueError(f"{name}: expected a sequence of {n} ids, got {type(ids).__name__} {ids!r:.60}")
    if isinstance(ids, (set, frozenset)):  # its order is the hash's: ids would land on rows at random
        raise InputTypeError(f"{name}: expected an ordered sequence of {n} ids (a list, array or Index), got a "
                             f"{type(ids).__name__}, whose order is arbitrary")
    # tuples stay whole ids, as in a MultiIndex given as ids (pandas would build a MultiIndex of a list of tuples)
    idx = pd.Index(ids, name=name) if isinstance(ids, pd.Index) else pd.Index(list(ids), name=name,
                                                                               tupleize_cols=False)
    if len(idx) != n:
        raise ValueError(f"{name}: expected {n} ids, got {len(idx)}")
    if isinstance(idx, pd.MultiIndex) or any(not _hashable(i) for i in idx[:1000]):
        raise ValueError(f"{name}: expected hashable scalar ids (str or int), got e.g. {_plain(idx[0])!r}")
    if idx.hasnans:  # None, NaN, NA: no id (ResponseMatrix.from_long refuses such rows alike)
        at = np.flatnonzero(idx.isna())
        raise ValueError(f"{name}: {len(at)} id(s) missing (None or NaN), the first at position {int(at[0])}; give "
                         "each an id")
    if idx.has_duplicates:
        dup = _plain(idx[idx.duplicated()].unique()[:5])
        raise ValueError(f"{name}: ids must be unique, duplicated: {dup}")
    if idx.dtype == object and idx.inferred_type.startswith("mixed"):  # 1 and "1": two ids written alike
        text = pd.Index(idx.map(str))
        if text.has_duplicates:
            twin = text[text.duplicated()][0]
            a, b = idx[text == twin][:2]
            raise ValueError(f"{name}: ids {_plain(a)!r} and {_plain(b)!r} are two ids written alike ({twin!r} in a "
                             "file or a report); make them one type (all text, say)")
    _warn_unicode_twins(idx, name)
    return idx


def _warn_unicode_twins(idx: pd.Index, name: str) -> None:
    """Warn when two ids differ only by Unicode normalisation (``'café'`` composed, NFC, or decomposed, NFD): they
    print alike but are two ids, as a file written on macOS and one written elsewhere may spell the same name.
    Ids differing by case stay apart without a word (``GPT`` and ``gpt`` may be two models)."""
    if idx.dtype != object:
        return
    try:  # one check for all the ids (a newline composes with nothing); join refuses ids that are not text
        if unicodedata.is_normalized("NFC", "\n".join(idx)):  # the common case: no id can have an NFC twin
            return
    except TypeError:
        if all(unicodedata.is_normalized("NFC", i) for i in idx if isinstance(i, str)):
            return
    nfc = pd.Index([unicodedata.normalize("NFC", i) if isinstance(i, str) else i for i in idx])
    twins = nfc.duplicated(keep=False)
    if twins.any():
        first = nfc[twins][0]
        a, b = idx[twins & (nfc == first)][:2]
        # no count: a matrix rebuilt from this one, or a part of it, says the same words (the CLI shows them once)
        warnings.warn(f"{name}: ids that differ only by Unicode normalisation (NFC/NFD) are kept apart, e.g. "
                      f"{_plain(a)!r} and {_plain(b)!r} (written {ascii(a)} and {ascii(b)}); normalise them with "
                      "unicodedata.normalize('NFC', id) if they name the same thing", UserWarning, stacklevel=3)


def _hashable(x: Any) -> bool:
    try:
        hash(x)
    except TypeError:
        return False
    return True


def _meta(meta: Any, ids: pd.Index, name: str) -> pd.DataFrame:
    """Metadata aligned to ``ids``: reindexed by id, or taken in row order when it has the default 0..n-1 index
    (refused when the ids are the integers 0..n-1 in another order: see :func:`effstats._shared._label_order`)."""
    if meta is None:
        return pd.DataFrame(index=ids)
    if isinstance(meta, pd.Series):
        meta = meta.to_frame()
    if isinstance(meta, dict):
        meta = pd.DataFrame(meta)
    if not isinstance(meta, pd.DataFrame):
        raise ValueError(f"{name}: expected a DataFrame, a dict of columns or None, got {type(meta).__name__}")
    if len(meta) != len(ids):
        raise ValueError(f"{name}: expected {len(ids)} rows, got {len(meta)}")
    if meta.columns.has_duplicates:
        raise ValueError(f"{name}: duplicated columns {_plain(meta.columns[meta.columns.duplicated()].unique()[:5])}")
    if meta.index.has_duplicates:
        dup = meta.index[meta.index.duplicated()].unique()[:5].tolist()
        raise ValueError(f"{name}: the index must hold unique ids, duplicated: {dup}")
    out = meta.iloc[_label_order(meta.index, ids, name)].set_axis(ids)  # labels are ids; a default index: row order
    out.index.name = ids.name
    return out


def _refuse_times(frame: pd.DataFrame, name: str) -> None:
    """Refuse duration and date columns: they cast to numbers silently (a duration of 1 s would read as correct)."""
    for col, dt in frame.dtypes.items():
        if dt.kind in "mM":
            raise ValueError(f"{name}: column {_plain(col)!r} holds {dt} values (durations or dates); expected 0/1 "
                             "correctness or scores in [0, 1]")


def _without_unscored_rows(df: pd.DataFrame, s: pd.Series, model: Any, item: Any, score: Any
                           ) -> tuple[pd.DataFrame, pd.Series]:
    """A long table's rows with a score (``s``, its scores as floats): a NaN score is a cell not evaluated, as an
    absent row, said once; a model or item left with no score is refused (it would vanish from the matrix)."""
    kept = s.notna().to_numpy()
    for col, nm in ((model, "model"), (item, "item")):
        gone = pd.unique(df[col].to_numpy()[~kept])
        gone = gone[~pd.Index(gone).isin(df[col].to_numpy()[kept])]
        if len(gone):
            raise ValueError(f"score: {nm}(s) {_name_list(repr(g) for g in _plain(list(gone)))} have NaN in column "
                             f"{_plain(score)!r} on every row: no score left; drop their rows or give their scores")
    warnings.warn(f"score: NaN in {int((~kept).sum())} of {len(kept)} rows of column {_plain(score)!r}: read as cells "
                  "not evaluated (missing, as absent rows)", UserWarning, stacklevel=3)
    return df[kept], s[kept]


def _as_float(frame: pd.DataFrame, name: str) -> pd.DataFrame:
    """Exact float conversion (``astype`` parses text with Python's correctly rounded ``float``;
    ``pd.to_numeric`` is not correctly rounded on pandas 1.5); the first bad value is named."""
    _refuse_times(frame, name)
    for col, dt in frame.dtypes.items():
        if dt.kind == "c" or (dt == object and frame[col].map(lambda v: isinstance(v, complex)).any()):
            raise ValueError(f"{name}: column {col!r} has complex values; expected real numbers")
    try:
        return frame.astype(float)
    except (TypeError, ValueError):
        bad = frame.apply(pd.to_numeric, errors="coerce").isna() & frame.notna()
        col = bad.any().idxmax()
        raise ValueError(f"{name}: column {col!r} has non-numeric values, e.g. "
                         f"{_plain(frame.loc[bad[col], col].iloc[0])!r}") from None


def _renamed(names: dict[str, str], build: Any) -> Any:
    """Run ``build``; a ValueError about an internal argument is re-worded with the caller's argument name."""
    try:
        return build()
    except ValueError as exc:
        msg = str(exc)
        for old, new in names.items():
            if msg.startswith(f"{old}:"):
                raise ValueError(f"{new}:{msg[len(old) + 1:]}") from None
        raise


def _subset_meta(meta: Any, ids: pd.Index, name: str) -> pd.DataFrame | None:
    """Rows of a metadata table (which may list more ids than needed) for ``ids``, refusing missing ones."""
    if meta is None:
        return None
    if not isinstance(meta, pd.DataFrame):
        raise ValueError(f"{name}: expected a DataFrame indexed by id, got {type(meta).__name__}")
    if meta.index.has_duplicates:
        raise ValueError(f"{name}: the index must hold unique ids, duplicated: "
                         f"{_plain(meta.index[meta.index.duplicated()].unique()[:5])}")
    missing = ids.difference(meta.index)
    if len(missing):
        raise ValueError(f"{name}: no rows for ids {_plain(missing[:5])}")
    return meta.loc[ids]



def _empty_rows(miss: np.ndarray, model_ids: Any, values: Any) -> str:
    """Name the rows of ``miss`` that are missing in every cell: by their model ids where given, else by row."""
    rows = np.flatnonzero(miss.all(axis=1))
    ids = model_ids if model_ids is not None else values.index if isinstance(values, pd.DataFrame) else None
    try:
        names = [repr(_plain(list(ids)[r])) for r in rows[:5]] if ids is not None and len(ids) == len(miss) else None
    except TypeError:
        names = None
    shown = ", ".join(names or map(str, rows[:5].tolist())) + (" …" if len(rows) > 5 else "")
    return f"model{'s' if len(rows) > 1 else ''} {shown}" if names else f"row{'s' if len(rows) > 1 else ''} {shown}"


def twin_note(unknown: Any, known: Any, what: str = "task") -> str:
    """Where a name of ``unknown`` (names given that are not among ``known``) equals one of ``known`` but for
    Unicode normalisation (``'café'`` composed, NFC, or decomposed, NFD: they print alike), a clause for the
    refusal naming both as escapes; else ``""``."""
    known = [k for k in known if isinstance(k, str)]
    nfc = {unicodedata.normalize("NFC", k): k for k in known}
    for u in unknown:
        k = nfc.get(unicodedata.normalize("NFC", u)) if isinstance(u, str) else None
        if k is not None and k != u:
            return (f"; {_plain(u)!r} (written {ascii(_plain(u))}) differs from the {what} {_plain(k)!r} (written "
                    f"{ascii(_plain(k))}) only by Unicode normalisation: give that one")
    return ""
