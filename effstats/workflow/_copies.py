"""The copies kept beside a saved selection or sequential run: the reference data (``reference.npz``, read instead
of the original files, which :func:`reread_reference` reads where there is no usable copy) and, for a run of rule
"adaptive", the fitted item bank (``bank.npz``, used instead of a refit); each checked against its record and
refused, with a warning, when it is not a usable copy."""
from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np

from .._shared import _plain, open_regular
from ..responses import ResponseMatrix
from ._io import read_results
from ._reference_copy import cells_digest, content_hash, copy_cells_digest, reference_copy


def reread_reference(info: dict, reference: Any, directory: Path | None, *, made: str, where: str, again: str,
                     owner: str, warned_as: str, duplicates: str, progress: bool = False) -> ResponseMatrix:
    """The reference data a saved selection or run (its record ``info``) was made from: its copy in ``directory``
    (unless ``reference`` is given), else read as it was read then, on the record's tasks; checked by its content
    hash either way.

    The messages say what the data was for (``made``: "the manifest was made from", "the run was started from"),
    name the saved folder ``where`` and the copy's ``owner``, and end a hash mismatch with ``again`` ("select
    again"); a refused copy warns as ``warned_as``, at the user's call of ``estimate`` or ``SequentialRun.load``
    (their callers' caller)."""
    from ._select import _keep_tasks

    refused = None
    if reference is None and directory is not None:
        saved, refused = reference_copy(directory, info["sha256"], owner=owner)
        if saved is not None:
            return saved
    ref = reference if reference is not None else info.get("source")
    # a refused copy and an unreadable source: one error saying both, as either alone would mislead
    also = "" if refused is None else f" and {refused}"
    if ref is None:
        raise ValueError(f"reference: {made} data in memory{also}; pass reference= (the same data)")
    layout = info.get("layout")
    _refuse_other_layout(reference, layout, info.get("metric"), made)
    try:
        rm = read_results(ref, format=info.get("format", "auto"), name="reference", filter=info.get("filter"),
                          metric=info.get("metric") if layout in ("lm-eval", "helm") else None,
                          duplicates=duplicates, tasks=info.get("tasks"), progress=progress,
                          **(info.get("helm") or {}))
    except ValueError as exc:
        if refused is None and reference is not None:
            raise
        msg = str(exc).removeprefix("reference: ")  # the source the record names, not an argument given
        raise ValueError(f"{where}: {msg}{also}; pass reference= (--reference) with the data {made}") from None
    if refused is not None:
        warnings.warn(f"{warned_as}: {refused}; reading the reference data instead", UserWarning, stacklevel=4)
    rm = _keep_tasks(rm, info.get("tasks"))
    # the data given, or else the source the record names (no argument of the user's)
    this = "reference: this reference data" if reference is not None else f"{where}: the reference data at {ref!r}"
    fix = (f"pass the same data or {again}" if reference is not None else
           f"pass the data {made} with reference= (--reference), or {again}")
    h = content_hash(rm)
    if h != info["sha256"]:
        raise ValueError(f"{this} differs from the data {made} (content hash {h[:12]}… vs "
                         f"{info['sha256'][:12]}…; {rm.n_models} × {rm.n_items} vs {info['n_models']} × "
                         f"{info['n_items']}); {fix}")
    # the content hash covers the ids and scores only: the class probabilities a refit reads are checked by their
    # digest, recorded in the record (or, for records written without it, in the copy beside it)
    want = info.get("arrays_sha256")
    if want is None and directory is not None:
        want = copy_cells_digest(directory, info["sha256"])
    got = cells_digest(rm)
    if want is not None and got != want:
        raise ValueError(f"{this} differs from the data {made}: the same scores, but other "
                         f"class probabilities, labels or predicted classes (digest "
                         f"{'none' if got is None else got[:12] + '…'} vs {want[:12]}…); {fix}")
    return rm


_LAYOUTS = {"lm-eval": "lm-eval logs", "helm": "HELM runs", "csv": "a table (csv)", "parquet": "a table (parquet)"}


def _refuse_other_layout(reference: Any, layout: Any, metric: Any, made: str) -> None:
    """Refuse a ``reference`` given in another layout than the record's (a table for lm-eval logs, ...): the
    content hash covers the ids and the scores only, not what else the logs or runs carry and a refit reads (the
    class probabilities, the document ids), so equal hashes do not make it the same data; tables of either kind
    hold the same."""
    from ._io import detect_format

    given = None if reference is None else detect_format(reference)
    family = {"parquet": "csv"}
    if given not in _LAYOUTS or layout not in _LAYOUTS or family.get(given, given) == family.get(layout, layout):
        return
    used = f" (metric {metric!r})" if isinstance(metric, str) and layout in ("lm-eval", "helm") else ""
    raise ValueError(f"reference: {str(reference)!r} is {_LAYOUTS[given]}, but {made} {_LAYOUTS[layout]}{used}: "
                     "pass those, moved or copied anywhere (the content hash covers the ids and scores only, not "
                     "what else a layout carries and the refit reads, such as lm-eval logs' class probabilities and "
                     "document ids)")


def _bank_key(state: dict, bank: Any) -> str:
    """What an item bank is fitted from: the reference data's content hash and the model's settings."""
    import hashlib
    import json

    return hashlib.sha256(json.dumps([state["reference"]["sha256"], bank.get_params()], sort_keys=True,
                                     default=str).encode()).hexdigest()


_BANK_ARRAYS = ("a_", "b_", "theta_", "loss_curve_")
_BANK_VALUES = ("method_", "n_items_", "n_missing_", "converged_", "n_iter_")


def _bank_bytes(key: str, bank: Any) -> bytes:
    """The file of the fitted item bank (its fitted arrays, and the key it was fitted under), without pickles."""
    import io
    import json

    meta = {"key": key, "item_ids": [str(i) for i in bank.item_ids_], "model_ids": [str(m) for m in bank.model_ids_],
            "_last_change": float(bank._last_change), **{k: _plain(getattr(bank, k)) for k in _BANK_VALUES}}
    buf = io.BytesIO()
    np.savez(buf, meta=np.frombuffer(json.dumps(meta).encode(), np.uint8),
             **{k: np.asarray(getattr(bank, k), np.float64) for k in _BANK_ARRAYS})
    return buf.getvalue()


def _load_bank(path: Path, key: str, bank: Any, rm: ResponseMatrix) -> Any:
    """``bank`` (unfitted) with the fitted attributes :func:`_save_bank` wrote to ``path``, or None where there is
    no such file; a copy that is damaged (unreadable, or not the values and arrays a bank fitted on ``rm`` with
    ``bank``'s settings has) or fitted under another key is refused with a warning, and None (the bank is then
    fitted again)."""
    import json

    if not path.is_file():
        return None
    try:
        with open_regular(path) as fh, np.load(fh, allow_pickle=False) as z:  # closed even where np.load fails
            meta = json.loads(z["meta"].tobytes().decode())
            arrays = {k: z[k] for k in _BANK_ARRAYS}
        why = _bank_damage(meta, arrays, key, bank, rm)
    except Exception as exc:  # a damaged copy: numpy's, zipfile's and json's errors vary; it is only a copy
        why = f"unreadable ({type(exc).__name__})"
    if why is not None:
        _refuse_bank(path, why)
        return None
    for k, v in arrays.items():
        setattr(bank, k, v)
    for k in _BANK_VALUES:
        setattr(bank, k, meta[k])
    bank._last_change = np.float64(meta["_last_change"])
    bank.item_ids_, bank.model_ids_ = rm.item_ids, rm.model_ids
    return bank


def _refuse_bank(path: Path, why: str) -> None:
    warnings.warn(f"directory: {path} is not a usable copy of this run's item bank ({why}); fitting the bank again "
                  "from the reference data", UserWarning, stacklevel=5)


def _bank_damage(meta: Any, arrays: dict, key: str, bank: Any, rm: ResponseMatrix) -> str | None:
    """What makes a saved item bank unusable for ``bank`` (unfitted) on ``rm``, in words, or None: every value and
    array of a fitted bank must be there, of its type and shape, and finite; anything else is a damaged copy."""
    if not isinstance(meta, dict):
        return f"its meta is a JSON {type(meta).__name__}, not an object"
    lacking = [k for k in ("key", "item_ids", "model_ids", "_last_change", *_BANK_VALUES) if k not in meta]
    if lacking:
        return f"no {', '.join(lacking)}"
    if meta["key"] != key:
        return "fitted under another key: other reference data or other settings"
    if meta["item_ids"] != [str(i) for i in rm.item_ids] or meta["model_ids"] != [str(m) for m in rm.model_ids]:
        return "fitted on other items or models"
    m, n, d = rm.n_models, rm.n_items, bank._check_params()
    missing = 0 if rm.missing is None else int(rm.missing.sum())
    ints = all(type(meta[k]) is int for k in ("n_items_", "n_missing_", "n_iter_"))  # JSON's: not bool, not float
    if not (ints and meta["method_"] == d[1] and meta["n_items_"] == n and meta["n_missing_"] == missing
            and meta["n_iter_"] >= 1 and isinstance(meta["converged_"], bool)
            and type(meta["_last_change"]) in (int, float) and np.isfinite(meta["_last_change"])):
        return "its fitted values are not a fit's on this reference data"
    shapes = {"a_": (n, d[0]), "b_": (n,), "theta_": (m, d[0])}
    for k, v in arrays.items():
        if v.dtype != np.float64 or v.shape != shapes.get(k, (v.size,)):
            return f"{k} of dtype {v.dtype} and shape {v.shape}"
        if not np.isfinite(v).all():
            return f"{k} not finite"
    return None
