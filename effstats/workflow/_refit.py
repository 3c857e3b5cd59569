"""The selection's refit on its reference data, checked against its manifest: :func:`_refit` rereads the reference
data (the kept copy or the original files) and refits, refusing a manifest whose items or item entries the refit does
not give."""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from .._shared import _plain
from ..responses import ResponseMatrix
from ._copies import reread_reference
from ._select import Selection, _fit_tasks
from ._tasks import _version, item_tasks


def _refit(sel: Selection, reference: Any, name: str = "reference",
           progress: bool = False) -> tuple[dict, ResponseMatrix]:
    if sel._fits is not None and reference is None:
        return sel._fits, sel._reference
    rm = reread_reference(sel.reference, reference, sel._directory, made="the manifest was made from",
                          where="selection", again="select again", owner="this manifest's", warned_as="selection",
                          duplicates=sel.reference.get("duplicates", "last"), progress=progress)
    # without reference data given, the data are the manifest's own (their hash checked): a refit choosing other
    # items says the manifest's entries do not choose its items
    return _fits_chosen(sel, rm, name if reference is not None else "selection", progress), rm


def _fits_chosen(sel: Selection, rm: ResponseMatrix, name: str, progress: bool = False) -> dict:
    """The selection's fits on its reference data ``rm``, which must choose the manifest's items."""
    info = item_tasks(rm)
    fits = _fit_tasks(rm, info["task"], sel.tasks["budget"], sel.method, sel.seed, chosen=sel.tasks["method"],
                      progress=progress, task_seeds=sel.task_seeds)
    items = pd.Index(np.concatenate([f.items.to_numpy(dtype=object) for f in fits.values()]))
    listed = pd.Index(sel.items, dtype=object)
    if set(items) != set(listed):  # a set of items: the manifest's order of them does not matter
        counts = (f"{len(items.difference(listed))} chosen by the refit only, {len(listed.difference(items))} listed "
                  f"by the manifest only; manifest made with effstats {sel.effstats_version}, this is {_version()}")
        if name == "selection":
            raise ValueError(f"selection: manifest.json: refitting {sel.method!r} on the reference data it was made "
                             f"from chose other items than it lists ({counts}): its seed, method or task seeds were "
                             "edited, or it is damaged; select again")
        raise ValueError(f"{name}: refitting {sel.method!r} chose other items than the manifest ({counts}); select "
                         "again")
    _check_item_info(sel, info)
    return fits


def _check_item_info(sel: Selection, info: pd.DataFrame) -> None:
    """Refuse a manifest whose ``item_tasks`` or ``doc_ids`` entry says other than the reference data of its item
    (the harness's ``--samples`` file and the report are made from them)."""
    mine, theirs = sel.item_info.reindex(sel.items), info.reindex(sel.items)
    for field_, col in (("item_tasks", "task"), ("doc_ids", "doc_id")):
        a, b = mine[col].to_numpy(), theirs[col].to_numpy()
        bad = np.flatnonzero(a.astype(str) != b.astype(str))
        if len(bad):
            k = int(bad[0])
            what = "is in task" if col == "task" else "is document"
            raise ValueError(f"selection: manifest {field_}[{k}]: {_plain(a[k])!r}, but items[{k}], "
                             f"{_plain(sel.items[k])!r}, {what} {_plain(b[k])!r} in the reference data; select again")
