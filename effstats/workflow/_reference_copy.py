"""The reference data as a selection or a sequential run keeps it: in memory (:func:`kept_reference`, arrays
nothing edits in place), by its content hash (:func:`content_hash`, recorded in the manifest and the state) and
as a compact copy beside the manifest or the state (``reference.npz``: :func:`save_reference`,
:func:`stage_reference`, read back by :func:`reference_copy` only where its hash is the recorded one)."""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._shared import open_regular, put_in_place, temporary_copy
from ..responses import ResponseMatrix

__all__ = ["content_hash"]


def kept_reference(rm: ResponseMatrix, source: Any) -> ResponseMatrix:
    """``rm``, read from ``source``, as a selection or a sequential run keeps it: arrays nothing can edit in place
    and model and item frames of its own, so that a caller's later edit of its matrix reaches neither the fits, nor
    the ranking against its reference models, nor the copy saved beside the manifest under the hash it was made with.

    The kept arrays are bitwise those a reread of the same data gives, in the reader's memory layout: a fit's sums run
    in memory order (a table file's values are read in Fortran order, whose column means numpy sums pairwise, where
    it sums a C-ordered matrix's row by row), so another layout moves an item bank's fitted values in their last
    digits. Arrays read from files (``source`` a path) are nobody else's: they are made read-only where they are,
    without a copy. The writeable arrays of a matrix or table given in memory, which its owner can still edit, are
    copied once, in their own layout (``order="K"``)."""
    import copy

    from .._results import _read_only

    kept = copy.copy(rm)
    fresh = isinstance(source, (str, os.PathLike))
    for name in ("values", "missing", "probabilities", "labels", "predictions"):
        a = getattr(rm, name)
        if a is None or _read_only(a):
            continue
        if fresh:
            base = a
            while isinstance(base, np.ndarray):  # down to the memory's owner, as _read_only looks
                base.flags.writeable = False
                base = base.base
            if _read_only(a):
                continue
        a = a.copy(order="K")
        a.flags.writeable = False
        object.__setattr__(kept, name, a)
    for name in ("models", "items"):
        object.__setattr__(kept, name, getattr(rm, name).copy())
    return kept


def content_hash(rm: ResponseMatrix) -> str:
    """SHA-256 of a response matrix's model ids, item ids, values and missing cells (hex).

    The same data gives the same hash on any machine (ids as UTF-8 JSON, values as little-endian float64 with NaN
    at missing cells), so a manifest can say whether the reference data it was made from has changed.

    Parameters
    ----------
    rm : ResponseMatrix
        The data to hash; class probabilities, labels and metadata are not part of the hash.

    Returns
    -------
    str
        The SHA-256 digest, 64 hexadecimal characters.

    See Also
    --------
    select : records the reference data's hash in the manifest.
    estimate : refuses reference data whose hash differs from the manifest's.

    Examples
    --------
    >>> from effstats import ResponseMatrix
    >>> from effstats.workflow import content_hash
    >>> a = ResponseMatrix([[1, 0], [0, 1]], model_ids=["m1", "m2"], item_ids=["q1", "q2"])
    >>> content_hash(a) == content_hash(a.subset(items=["q1", "q2"]))
    True
    >>> content_hash(a) == content_hash(a.subset(items=["q2", "q1"]))  # another column order is other data
    False
    """
    if not isinstance(rm, ResponseMatrix):
        raise ValueError(f"rm: expected a ResponseMatrix, got {type(rm).__name__}")
    h = hashlib.sha256()
    h.update(json.dumps([str(m) for m in rm.model_ids]).encode())
    h.update(json.dumps([str(i) for i in rm.item_ids]).encode())
    # rows in blocks of ~8 MB: the bytes hashed are those of the whole float matrix, without a copy of it
    step = max(1, 2**20 // max(rm.n_items, 1))
    for a in range(0, rm.n_models, step):
        block = rm.values[a:a + step].astype("<f8")
        if rm.missing is not None:
            block[rm.missing[a:a + step]] = np.nan
        h.update(block.tobytes())
    return h.hexdigest()


REFERENCE_CACHE = "reference.npz"


# the per-cell arrays a reader may attach beside the values; the content hash covers the values only, so the copy
# keeps its own digest of these (``arrays_sha256``), which :func:`reference_copy` checks
_CELL_ARRAYS = ("probabilities", "labels", "predictions")


def _arrays_digest(arrays: dict) -> str:
    """SHA-256 of the per-cell arrays present in ``arrays`` (name, dtype, shape and bytes of each, in order)."""
    h = hashlib.sha256()
    for k in _CELL_ARRAYS:
        if arrays.get(k) is not None:
            a = np.ascontiguousarray(arrays[k])
            h.update(json.dumps([k, a.dtype.str, list(a.shape)]).encode())
            h.update(a.tobytes())
    return h.hexdigest()


def cells_digest(rm: ResponseMatrix) -> str | None:
    """The digest of ``rm``'s class probabilities, labels and predicted classes (those :func:`content_hash` does not
    cover), or None where it has none of them."""
    cells = {k: getattr(rm, k) for k in _CELL_ARRAYS if getattr(rm, k) is not None}
    return _arrays_digest(cells) if cells else None


def copy_cells_digest(directory: Path, sha256: str) -> str | None:
    """The digest of the per-cell arrays that ``directory``'s copy of the reference data (content hash ``sha256``)
    was written with, or None where there is no such copy (records written without it fall back on this)."""
    try:
        with open_regular(Path(directory) / REFERENCE_CACHE) as fh, np.load(fh, allow_pickle=False) as z:
            if json.loads(z["sha256"].tobytes().decode()) != sha256 or "arrays_sha256" not in z.files:
                return None
            return json.loads(z["arrays_sha256"].tobytes().decode())
    except Exception:  # no copy, or a damaged one (reported where the copy is read)
        return None


def save_reference(directory: Path, rm: ResponseMatrix, sha256: str) -> str | None:
    """Write a compact copy of the reference data beside a manifest, so that a refit reads megabytes instead of
    the original files; returns its file name, or None where it would not give back ``rm`` exactly (ids or
    metadata JSON does not carry). The file is written as :func:`stage_reference` writes it, then renamed into
    place."""
    path = Path(directory) / REFERENCE_CACHE
    tmp = stage_reference(path, rm, sha256)
    if tmp is None:
        return None
    put_in_place(tmp, path)
    return REFERENCE_CACHE


def stage_reference(path: Path, rm: ResponseMatrix, sha256: str) -> Path | None:
    """Write a compact copy of the reference data to a temporary file beside ``path`` (a run's
    ``reference.npz``) and return that file's name, for the caller to put in place with the run's other files
    (:func:`effstats._user_files.swap_files`); None where the copy would not give back ``rm`` exactly (ids or metadata
    JSON does not carry), and nothing is written.

    The ``.npz`` (compressed) holds no pickled object: the ids and metadata as JSON text, the 0/1 values and the
    missing cells eight a byte, scores as float64, the class probabilities, labels and predicted classes where
    ``rm`` has them in their own dtypes (lm-eval logs' per-choice probabilities: float64, exactly as read) with
    their digest, and ``sha256`` (:func:`content_hash` of ``rm``); :func:`reference_copy` checks both.
    """
    import io

    from ..bitpack import PackedBinaryMatrix

    if not rm.n_items:
        return None
    text = lambda x: np.frombuffer(json.dumps(x, ensure_ascii=False).encode(), np.uint8)  # noqa: E731
    try:
        arrays = {"sha256": text(sha256), "kind": text(rm.kind), "model_ids": text(rm.model_ids.tolist()),
                  "item_ids": text(rm.item_ids.tolist()), "models": text(rm.models.to_dict(orient="list")),
                  "items": text(rm.items.to_dict(orient="list"))}
    except TypeError:  # ids or metadata JSON does not carry
        return None
    arrays["values"] = PackedBinaryMatrix.from_dense(rm.values).packed if rm.kind == "binary" else rm.values
    if rm.missing is not None:
        arrays["missing"] = PackedBinaryMatrix.from_dense(rm.missing).packed
    cells = {k: getattr(rm, k) for k in _CELL_ARRAYS if getattr(rm, k) is not None}
    if cells:
        arrays.update(cells, arrays_sha256=text(_arrays_digest(cells)))
    # the compressed file is made once in memory and read back from that buffer (BytesIO's getvalue shares its
    # bytes, trimmed to their size): no copy of it is made until the temporary file is written
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    with np.load(io.BytesIO(buf.getvalue()), allow_pickle=False) as z:
        back = _reference_from(z)
    if (content_hash(back) != sha256 or not back.items.equals(rm.items) or not back.models.equals(rm.models)
            or not back.model_ids.equals(rm.model_ids) or not back.item_ids.equals(rm.item_ids)
            or _arrays_digest({k: getattr(back, k) for k in _CELL_ARRAYS}) != _arrays_digest(cells)):
        return None
    del back
    return temporary_copy(path, buf.getvalue())


def _reference_from(z: Any) -> ResponseMatrix:
    from ..bitpack import PackedBinaryMatrix

    text = lambda k: json.loads(z[k].tobytes().decode())  # noqa: E731
    model_ids, item_ids = pd.Index(text("model_ids")), pd.Index(text("item_ids"))
    values = z["values"]
    if values.dtype == np.uint8:
        values = PackedBinaryMatrix(values, len(item_ids)).to_dense()
    missing = PackedBinaryMatrix(z["missing"], len(item_ids)).to_dense() if "missing" in z.files else None
    meta = lambda k, ids: pd.DataFrame(text(k), index=ids) if text(k) else None  # noqa: E731
    cells = {k: z[k] for k in _CELL_ARRAYS if k in z.files}
    if cells and text("arrays_sha256") != _arrays_digest(cells):
        raise _ChangedCells("its class probabilities, labels or predictions changed")
    with known_ids():
        return ResponseMatrix(values, kind=text("kind"), missing=missing, model_ids=model_ids, item_ids=item_ids,
                              models=meta("models", model_ids), items=meta("items", item_ids), **cells)


class _ChangedCells(ValueError):
    """A copy whose per-cell arrays are not those it was written with."""


@contextlib.contextmanager
def known_ids() -> Any:
    """Quiet ResponseMatrix's warning about ids equal after Unicode normalisation, for a matrix rebuilt from ids
    that were read, and warned about, before (the saved reference, the manifest's items)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"(item|model)_ids: ids that differ only by Unicode normalisation",
                                category=UserWarning)
        yield


def reference_copy(directory: Path, sha256: str, owner: str = "this manifest's") -> tuple[ResponseMatrix | None,
                                                                                           str | None]:
    """The reference data :func:`save_reference` wrote in ``directory`` beside a manifest (or a sequential run's
    state: ``owner`` names it in ``why``), checked against its content hash ``sha256``: ``(the copy, None)``,
    ``(None, None)`` where there is no copy, or ``(None, why)`` where the copy is refused (another selection's, or
    damaged; ``why``: "DIR/reference.npz is not a copy of …")."""
    path = Path(directory) / REFERENCE_CACHE
    if not path.exists():
        return None, None
    if not path.is_file():
        return None, f"{path} is not a copy of {owner} reference data (not a file)"
    try:
        # closed even where np.load fails; a FIFO put there since the check above is refused, not waited on
        with open_regular(path) as fh, np.load(fh, allow_pickle=False) as z:
            saved = json.loads(z["sha256"].tobytes().decode())
            rm = _reference_from(z) if saved == sha256 else None
        got = saved if rm is None else content_hash(rm)
        why = f"content hash {str(got)[:12]}… vs {sha256[:12]}…"
    except _ChangedCells as exc:
        got, why = None, str(exc)
    except Exception as exc:  # a damaged file: numpy's, zipfile's and json's errors vary
        got, why = None, f"unreadable ({type(exc).__name__})"
    if got != sha256:
        return None, f"{path} is not a copy of {owner} reference data ({why})"
    return rm, None
