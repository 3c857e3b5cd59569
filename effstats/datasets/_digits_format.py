"""The lifelong digits benchmark's storage format, shared by its builder (``_digits_build.py``) and its loader
(``digits.py``): class probabilities as 4-bit counts, two classes a byte, and the arrays read back as a
:class:`effstats.ResponseMatrix`."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..responses import ResponseMatrix

_ARTIFACT = Path(__file__).with_name("data") / "lifelong_digits.npz"
N_CLASSES = 10
_Q = 15  # probabilities are stored as 4-bit counts summing to _Q (two classes a byte)


def _pack_codes(q: np.ndarray) -> np.ndarray:
    """(..., 10) counts in [0, 15] -> (..., 5) bytes, even class in the high nibble."""
    return (q[..., 0::2] << 4) | q[..., 1::2]


def _unpack_codes(b: np.ndarray) -> np.ndarray:
    q = np.empty(b.shape[:-1] + (2 * b.shape[-1],), np.uint8)
    q[..., 0::2] = b >> 4
    q[..., 1::2] = b & 15
    return q


def _to_response_matrix(a: Any, *, probabilities: bool = True) -> ResponseMatrix:
    labels = a["labels"].astype(np.int64)
    n_items = len(labels)
    correct = np.unpackbits(a["correct_packed"], axis=1, count=n_items).astype(bool)
    n_models = len(correct)
    domain, src = a["item_domain"], a["item_source_image"]
    items = pd.DataFrame({"domain": domain, "shift": a["item_shift"], "source_image": src, "label": labels})
    item_ids = np.char.add(np.char.add(domain.astype(str), ":"), src.astype(str))
    idx = a["model_index"]
    fam = a["model_family"]
    models = pd.DataFrame({
        "family": fam,
        "params": a["model_params"],
        "n_train": a["model_n_train"],
        "augmentation": a["model_augmentation"],
        "n_augmented": a["model_n_augmented"],
        "release_date": pd.to_datetime(a["model_release_date"].astype("datetime64[ns]")),
        "zoo_index": idx,
        "seed": a["model_seed"],
    })
    model_ids = [f"{f}-{i:04d}" for f, i in zip(fam, idx)]
    rm = ResponseMatrix(correct, kind="binary", labels=labels, model_ids=model_ids, item_ids=item_ids, models=models,
                        items=items)
    if probabilities:
        # float32 and set after construction: ResponseMatrix's validation would copy 150M cells to
        # float64 (1.2 GB); the counts sum to 15 by construction, so rows sum to 1 within 1e-6.
        packed = a["proba_q15_packed"]
        p = np.empty((n_models, n_items, N_CLASSES), np.float32)
        # unpack the nibbles straight into float32 (no uint8 intermediate of 150M cells)
        np.right_shift(packed, 4, out=p[..., 0::2], dtype=np.uint8, casting="unsafe")
        np.bitwise_and(packed, 15, out=p[..., 1::2], dtype=np.uint8, casting="unsafe")
        p *= np.float32(1.0 / _Q)
        object.__setattr__(rm, "probabilities", p)
    return rm
