"""A "lifelong" per-item benchmark built from real scikit-learn models on the handwritten digits.

Items are the held-out test images of :func:`sklearn.datasets.load_digits` (UCI optdigits, 1,797 8×8
images) in a clean domain plus deterministic shifted domains (noise, blur, rotations, shifts, zoom,
shear, elastic distortions, occlusions, contrast/gamma/brightness, inversion, morphology, ...).
Models are real scikit-learn classifiers of many families and hyper-parameters, each trained on its
own subset of the training images, some with augmented copies (never the test images). Every model
records its class probabilities on every item (10 classes), quantised to multiples of 1/15 (4-bit counts
summing to 15, rounded by largest remainder with the model's own arg-max kept), so that 500 models ×
30,400 items fit in a ~30 MB artifact; correctness is the model's arg-max (= the stored arg-max) against
the label.

:func:`effstats.datasets.load_lifelong_digits` loads the committed artifact ``data/lifelong_digits.npz``;
:func:`effstats.datasets.make_lifelong_digits` builds the benchmark (or any subset of its model zoo, reproducing those
rows exactly). The builder (domains, zoo, training) lives in ``effstats.datasets._digits_build``, the storage
format both use in ``effstats.datasets._digits_format``; this module holds the loader.
"""
from __future__ import annotations

import copy
import importlib
import json
import os
import zipfile
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from .._validation import check_flag
from ..responses import ResponseMatrix
from ._digits_format import _ARTIFACT, _to_response_matrix
from ._files import file_version

__all__ = ["make_lifelong_digits", "load_lifelong_digits", "DOMAINS", "FAMILIES", "ARTIFACT"]

#: The bundled artifact: 500 models × 30,400 items × 10 classes (``data/lifelong_digits.npz``).
ARTIFACT = _ARTIFACT

# names defined by the builder; imported on first use, so loading the artifact needs neither scipy.ndimage
# nor the builder's code (the builder and this loader share the storage format, _digits_format.py)
_BUILDER_NAMES = ("make_lifelong_digits", "DOMAINS", "FAMILIES")


def __getattr__(name: str) -> Any:
    if name in _BUILDER_NAMES:
        return getattr(importlib.import_module("._digits_build", __package__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _Arrays(dict):
    """The artifact's arrays, each decompressed on first access (correctness needs no probabilities)."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        with np.load(path, allow_pickle=False) as z:
            self.files = list(z.files)

    def __missing__(self, key: str) -> np.ndarray:
        if key not in self.files:
            raise KeyError(key)
        with np.load(self.path, allow_pickle=False) as z:
            self[key] = z[key]
        return self[key]


_REQUIRED = ("labels", "correct_packed", "item_domain", "item_shift", "item_source_image", "model_index",
             "model_family",
             "model_params", "model_n_train", "model_augmentation", "model_n_augmented", "model_release_date",
             "model_seed")


@lru_cache(maxsize=4)
def _load_arrays(path: str, version: tuple | None = None) -> _Arrays:
    """The arrays of the artifact at ``path``, read once per version of the file (``file_version``)."""
    p = Path(path)
    if not p.exists():
        raise ValueError(f"path: no digits artifact at {p}; build it with scripts/build_lifelong_digits.py")
    if not p.is_file():
        raise ValueError(f"path: {str(p)!r} is not a file (expected the .npz digits artifact)")
    try:
        # allow_pickle=False: a data file never gets to run code; numpy refuses object arrays and non-npz files
        return _Arrays(p)
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as exc:
        raise ValueError(f"path: {str(p)!r} is not a readable .npz of plain arrays (pickled objects are never loaded): "
                         f"{exc}") from None


@lru_cache(maxsize=4)
def _load_cached(path: str, probabilities: bool, version: tuple | None = None) -> ResponseMatrix:
    arrays = _load_arrays(path, version)
    missing = [k for k in _REQUIRED + (("proba_q15_packed",) if probabilities else ()) if k not in arrays.files]
    if missing:
        raise ValueError(f"path: {path!r} is not a digits artifact; it lacks the arrays {missing}")
    try:
        rm = _to_response_matrix(arrays, probabilities=probabilities)
    except (ValueError, TypeError, KeyError, IndexError, zipfile.BadZipFile, OSError) as exc:
        raise ValueError(f"path: {path!r} holds malformed digits arrays ({type(exc).__name__}: {exc})") from None
    for arr in (rm.values, rm.labels, rm.probabilities):
        if arr is not None:
            arr.flags.writeable = False  # the cached object is shared: in-place edits would leak
    return rm


def load_lifelong_digits(path: str | Path | None = None, *, probabilities: bool = True) -> ResponseMatrix:
    """Load the committed digits lifelong benchmark (its arrays read once per version of the file, and shared).

    Parameters
    ----------
    path : str or Path, default=None
        An ``.npz`` written by ``scripts/build_lifelong_digits.py`` (default: the bundled artifact).
    probabilities : bool, default=True
        Attach the class probabilities (n_models, n_items, 10) as float32 (~0.6 GB for the full
        artifact); ``False`` gives correctness and metadata only.

    Returns
    -------
    ResponseMatrix
        See :func:`effstats.datasets.make_lifelong_digits`. Its arrays, shared by every load of the file, are
        read-only; its ``models`` and ``items`` frames are its own, so an edit of them reaches no other load.

    See Also
    --------
    effstats.datasets.make_lifelong_digits : build it, or any part of its model zoo.
    effstats.chronological_split : split by the models' ``release_date``.

    Examples
    --------
    >>> from effstats.datasets import load_lifelong_digits
    >>> bench = load_lifelong_digits(probabilities=False)
    >>> bench.shape
    (500, 30400)
    >>> bench.items["domain"].nunique(), bench.models["family"].nunique()
    (38, 19)
    >>> bench.group_scores("domain")[["clean", "invert"]].mean().round(3)
    domain
    clean     0.757
    invert    0.025
    dtype: float64
    """
    if path is not None and not isinstance(path, (str, os.PathLike)):
        raise ValueError(f"path: expected a file path, got {type(path).__name__}")
    path = str(Path(path) if path is not None else ARTIFACT)
    rm = copy.copy(_load_cached(path, check_flag(probabilities, "probabilities"), file_version(path)))
    for name in ("models", "items"):
        object.__setattr__(rm, name, getattr(rm, name).copy())
    return rm


def artifact_info(path: str | Path | None = None) -> dict[str, Any]:
    """The build parameters stored in the artifact (seed, zoo size, n_test, domains)."""
    path = str(Path(path) if path is not None else ARTIFACT)
    return json.loads(str(_load_arrays(path, file_version(path))["meta"]))
