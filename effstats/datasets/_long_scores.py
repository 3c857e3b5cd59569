"""A long score table of three columns (model, item, score) read into a matrix chunk by chunk of rows: the ids kept
as the codes pandas' parser gives each chunk, the scores of a chunk of exact 0/1 as booleans, then the cells placed
by code. No frame of the whole table, no text object per cell, no float copy of the matrix: at the Open LLM
Leaderboard's scale (135 M rows) the general reader holds the table several times over. A large file is parsed in
ranges of lines, each by a process of its own (:func:`chunk_parts` of each range, joined in file order by
:func:`long_matrix`)."""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd

from .._validation import ZERO_ONE_ATOL
from ._table_layouts import refused_scores
from ..responses import ResponseMatrix

#: one chunk of rows: each id column's (categories, codes), the scores (booleans where exact 0/1), whether every
#: score is within ZERO_ONE_ATOL of 0 or 1 (NaN aside) and where its first score outside [0, 1] is (the byte its
#: reader started at and the record's number from there, as :class:`BadCell`), None where every score is within
Part = tuple[tuple[tuple[pd.Index, np.ndarray], tuple[pd.Index, np.ndarray]], np.ndarray, bool,
             tuple[int, int] | None]


class BadCell(Exception):
    """A score cell the general reader refuses (:func:`~effstats.datasets._table_layouts.refused_scores`): its
    ``text`` as written, and where it is: record number ``record`` of the lines from byte ``start`` (the header is
    record 0 of the lines from byte 0). ``gap``: whether a chunk read before it has a missing cell in its last
    column (where a row of fewer fields than the header shows first)."""

    def __init__(self, text: str, start: int, record: int, gap: bool = False) -> None:
        super().__init__(text, start, record, gap)
        self.text, self.start, self.record, self.gap = text, start, record, gap


class Flagged(Exception):
    """A chunk of scores read as floats whose every score is 0 or 1 (NaN aside): pandas' parser reads a chunk of
    ``True``/``False`` cells so in a column of floats (and a chunk mixing them with numbers as an error), which the
    general reader reads as 1/0 only where the whole column is such cells. The caller reads the table again with the
    scores as categories, whose texts :func:`chunk_parts` checks."""


class OutOfRange(Exception):
    """Scores outside [0, 1] in a table otherwise read: the matrix ``values`` (NaN where not evaluated), the
    model of each of its rows, and where the first such score is (``start``, ``record`` as for :class:`BadCell`)."""

    def __init__(self, values: np.ndarray, models: np.ndarray, start: int, record: int) -> None:
        super().__init__(start, record)
        self.values, self.models, self.start, self.record = values, models, start, record


def chunk_parts(reader: Any, model: str, item: str, score: str, numbers: Callable[[pd.Index], np.ndarray],
                start: int = 0) -> list[Part] | None:
    """The parts of the chunks ``reader`` yields (frames with the ids categorical, the scores categorical or floats,
    rows not evaluated missing; the lines from byte ``start`` of the file, the header among them where ``start`` is
    0), in order, categorical scores' distinct cells read as numbers by ``numbers``, which raises on cells that are
    not numbers; raises :class:`BadCell` for the first cell the general reader refuses as a score, worded there
    with its line, at the cost of no other pass over the file, and :class:`Flagged` for a chunk of scores read as
    floats that are all 0 or 1 (perhaps ``True``/``False``). None where a chunk holds what the general reader has
    more to say about: infinite scores, a missing or blank id, a cell that is not a number among scores read as
    numbers (graded scores, whose parser stops at it without saying where), ``True``/``False`` (which a column of
    such cells only means).

    The general reader refuses a table's structure before its cells' values, whatever their order in the file: a
    row of fewer fields than the header, then an empty id anywhere, then the first score that is not a number. So
    the refused score is raised once the lines are read: the chunks after it are read for their ids (and, by the
    caller's watched reader, for short rows) only."""
    ids = (model, item)
    parts: list[Part] = []
    bad: BadCell | None = None  # the first score refused, raised once every chunk's ids are checked
    later: list[pd.Index] = []  # the ids of the chunks after it
    row = int(start == 0)  # the record number of the chunk's first row
    with reader:
        chunks = iter(reader)
        while True:
            try:
                chunk = next(chunks)
            except StopIteration:
                break
            except (pd.errors.ParserError, UnicodeError):
                raise
            except ValueError:  # a cell of graded scores that is not a number
                return None
            if not isinstance(chunk.index, pd.RangeIndex):
                return None  # a first line of one field more than the header: pandas took a column for row labels
            if any(not isinstance(chunk[c].dtype, pd.CategoricalDtype) for c in ids):
                return None
            codes = []
            for c in ids:  # a missing id first: the general reader refuses it before any score
                kc = chunk[c].cat.codes.to_numpy()
                if len(kc) and kc.min() < 0:
                    return None
                codes.append((chunk[c].cat.categories, kc))
            if bad is not None:
                later += [cats for cats, _ in codes]
                continue
            s = chunk[score]
            if isinstance(s.dtype, pd.CategoricalDtype):
                # each cell's text is a category of the chunk: the checks run on the distinct scores; True/False
                # read as 1/0 only where the whole column is such cells, which one chunk cannot tell
                if s.cat.categories.str.strip().str.lower().isin(["true", "false"]).any():
                    return None
                k = s.cat.codes.to_numpy()
                try:
                    v = numbers(s.cat.categories)
                except ValueError:
                    bad = refused_scores(s.cat.categories, ("",))
                    if bad is None or not bad.any():
                        return None
                    i = int(np.argmax(np.append(bad, False)[k]))
                    bad = BadCell(str(s.cat.categories[k[i]]), start, row + i)
                    later += [cats for cats, _ in codes]
                    continue
            elif s.dtype.kind == "f":
                v, k = s.to_numpy(), None  # a score a cell
            else:
                return None
            with np.errstate(invalid="ignore"):
                if np.isinf(v).any():
                    return None
                outside = (v < 0) | (v > 1)
            out = None
            if outside.any():  # read on: the message names the range of the whole column
                cells = outside if k is None else np.append(outside, False)[k]
                out = (start, row + int(np.argmax(cells)))
            nan, r = np.isnan(v), np.rint(v)
            if k is None and out is None and not nan.all() and bool((nan | (v == r)).all()):
                raise Flagged  # scores within [0, 1] that are whole: 0 and 1 only
            exact = out is None and not nan.any() and not (k is not None and len(k) and k.min() < 0) \
                and bool((v == r).all()) and not np.signbit(v).any()  # -0.0 kept as written
            near = exact or (out is None and bool((nan | (np.abs(v - r) <= ZERO_ONE_ATOL)).all()))
            # exact 0/1: a byte a row, not eight
            if k is None:
                x = v == 1 if exact else v
            else:
                x = (v == 1)[k] if exact else np.append(v, np.nan)[k]
            parts.append(((codes[0], codes[1]), x, near, out))
            row += len(chunk)
    if bad is not None:
        if blank_ids(parts) or _blank(later):
            return None  # the general reader names the empty id first
        raise bad
    return parts


def _blank(ids: Sequence[pd.Index]) -> bool:
    """Whether one of the ids is empty or blank (the general reader refuses it), or not text."""
    for v in ids:
        v = v.to_numpy()
        if pd.api.types.infer_dtype(v) != "string" or any(not str(u).strip() for u in v):
            return True
    return False


def blank_ids(parts: list[Part]) -> bool:
    """Whether a model or item id of the chunks' ``parts`` is empty or blank, or not text."""
    return _blank([cats for pairs, *_ in parts for cats, _ in pairs])


def long_matrix(ranges: Sequence[Callable[[], list[Part] | None]], model: str, item: str) -> ResponseMatrix | None:
    """The matrix of the chunks' parts each of ``ranges`` returns (:func:`chunk_parts` of the file's ranges of
    lines, in order: one range, or the ranges parsed by processes of their own), models and items in the order they
    first appear, as the general reader orders them (a wide file keeps its rows' and columns' order); None where the
    general reader has more to say: infinite scores, blank ids, repeated (model, item) pairs, a model or an item
    whose every row is not evaluated (its errors and warnings name these). Raises :class:`BadCell` (from
    :func:`chunk_parts`) and, once the file is read, :class:`OutOfRange`: errors the caller words.

    Scores within 1e-9 of 0 or 1 make a binary matrix when every score does (as ``ResponseMatrix`` snaps them);
    else the scores are kept as read."""
    parts: list[Part] = []
    bad: BadCell | None = None
    for get in ranges:
        try:
            more = get()
        except BadCell as exc:  # raised once the ranges after it are read too (see chunk_parts)
            bad = bad or exc
            continue
        if more is None:
            return None
        parts += more
    if bad is not None:
        if blank_ids(parts):
            return None
        raise bad
    return _placed(parts, model, item)


def _placed(parts: list[Part], model: str, item: str) -> ResponseMatrix | None:
    """The matrix of the chunks' parts, in file order (each part freed once placed)."""
    seen = [pd.Index([], dtype=object), pd.Index([], dtype=object)]
    # per chunk: each id column's codes in the chunk and where its categories stand in `seen`; the scores
    chunks: list[tuple[list[tuple[np.ndarray, np.ndarray]], np.ndarray]] = []
    near, n, outside = True, 0, None
    parts.reverse()
    while parts:
        pairs, x, near_chunk, out = parts.pop()
        near, outside = near and near_chunk, outside or out
        codes = []
        for j, (cats, k) in enumerate(pairs):
            at = seen[j].get_indexer(cats)
            new = np.flatnonzero(at < 0)
            if len(new):
                # the parser's categories are sorted: the new ones in their first row's order
                first = np.full(len(cats), len(k), np.int64)
                first[k[::-1]] = np.arange(len(k) - 1, -1, -1)  # the last write, the first row, wins
                new = new[np.argsort(first[new], kind="stable")]
                at[new] = len(seen[j]) + np.arange(len(new))
                seen[j] = seen[j].append(cats[new])
            codes.append((k, at))
        chunks.append((codes, x))
        n += len(x)
    if not n or _blank(seen):
        return None
    n_models, n_items = len(seen[0]), len(seen[1])
    # 1: evaluated, 2: a row marked not evaluated; fewer cells marked than rows: some pair is repeated
    state = np.zeros(n_models * n_items, np.uint8)
    values = np.zeros(n_models * n_items, bool if near else float)
    chunks.reverse()
    while chunks:  # chunk by chunk, each freed once placed
        ((km, am), (ki, ai)), x = chunks.pop()
        cell = am[km] * n_items + ai[ki]
        if x.dtype == bool:
            values[cell], state[cell] = x, 1
            continue
        ok = ~np.isnan(x)
        values[cell[ok]] = (np.rint(x[ok]) == 1) if near else x[ok]
        state[cell[ok]], state[cell[~ok]] = 1, 2
    if np.count_nonzero(state) < n:
        return None
    if outside is not None:  # what the general reader refuses first, once the file is read
        values[state != 1] = np.nan
        raise OutOfRange(values.reshape(n_models, n_items), np.asarray(seen[0], dtype=object), *outside)
    observed = (state == 1).reshape(n_models, n_items)
    del state
    if not observed.any(axis=1).all() or not observed.any(axis=0).all():
        return None
    missing = None if observed.all() else ~observed
    del observed
    return ResponseMatrix(values.reshape(n_models, n_items), missing=missing,
                          model_ids=pd.Index(seen[0], dtype=object, name=model),
                          item_ids=pd.Index(seen[1], dtype=object, name=item))
