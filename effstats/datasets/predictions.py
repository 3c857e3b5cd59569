"""Loaders for released per-item predictions of real models (ImageNet + ImageNetV2, CIFAR-10 + CIFAR-10.1, AlpacaEval).

The data are *not* shipped with effstats. They live beside the checkout in ``shared/data/predictions/`` (compressed
numpy archives extracted once from the public releases; each folder's ``PROVENANCE.md`` says what, from where and
which checks were made), or wherever ``root`` / the ``EFFSTATS_DATA`` environment variable points.

Every loader also reads the *original public release layout* directly when ``root`` points at a checkout of it:

* ImageNetV2 (github.com/modestyachts/ImageNetV2): ``data/predictions/<dataset>/<model>.npy`` (top-5 class ids, best
  first), ``data/datasets/<dataset>.json`` (``image_filenames`` = ``[[filename, wnid], ...]`` in row order) and
  ``data/metadata/class_info.json`` (``[{"cid": ..., "wnid": ...}, ...]``).
* CIFAR-10.1 (github.com/modestyachts/CIFAR-10.1):
  ``model_predictions/{original,v4,v6}_predictions/<model>_predictions.json`` (arg-max class per image) with
  ``datasets/cifar10.1_v{4,6}_labels.npy``; the CIFAR-10 test labels are not in that
  repository and are passed as ``cifar10_labels`` (or taken from the extracted archive when it is available).
* AlpacaEval (github.com/tatsu-lab/alpaca_eval): ``results/<model>/<annotator>/annotations.json`` (records with
  ``instruction``, ``dataset``, ``generator_2`` and ``preference`` = 1 + P(judge prefers the model over the reference)).

All loaders return a :class:`effstats.ResponseMatrix`.
"""
from __future__ import annotations

import functools
import json
import os
import re
import warnings
import zipfile
from pathlib import Path
from typing import Any, Iterable, Literal, Sequence

import numpy as np
import pandas as pd

from .._shared import _plain
from .._validation import check_array, check_flag
from ._files import file_version
from ..responses import ResponseMatrix

__all__ = [
    "data_root",
    "load_imagenet_predictions",
    "load_cifar10_predictions",
    "load_alpacaeval",
    "IMAGENET_DOMAINS",
    "CIFAR10_DOMAINS",
    "ALPACAEVAL_EXCLUDED",
]

#: ImageNet domains in load order -> dataset name in the ImageNetV2 release.
IMAGENET_DOMAINS: dict[str, str] = {
    "imagenet_val": "imagenet-validation-original",
    "imagenetv2_matched_frequency": "imagenetv2-b-33",
    "imagenetv2_threshold0.7": "imagenetv2-a-44",
    "imagenetv2_top_images": "imagenetv2-c-12",
}
#: CIFAR-10 domains in load order -> (archive stem, CIFAR-10.1 release split).
CIFAR10_DOMAINS: dict[str, tuple[str, str]] = {
    "cifar10": ("cifar10_test", "original"),
    "cifar10.1_v4": ("cifar10.1_v4", "v4"),
    "cifar10.1_v6": ("cifar10.1_v6", "v6"),
}
#: AlpacaEval rows dropped by default: the reference model itself (P(win) = 0.5 by construction) and the
#: adversarial null-output entry that games the judge (win rate 0.84).
ALPACAEVAL_EXCLUDED: tuple[str, ...] = ("gpt4_1106_preview", "NullModel")
ALPACAEVAL_ANNOTATOR = "weighted_alpaca_eval_gpt4_turbo"

# Cadene `pretrainedmodels` PyTorch ports (and torchvision's port of Google's Inception-v3) of TF-slim weights: the
# same trained network evaluated twice (top-1 agreement 0.84-0.93 on ImageNet val vs <= 0.87 between different
# architectures of similar accuracy). Maps port -> original.
_IMAGENET_PORTS: dict[str, str] = {
    "inceptionv4": "inception_v4_tf",
    "inceptionresnetv2": "inception_resnet_v2_tf",
    "nasnetalarge": "nasnet_large_tf",
    "nasnetamobile": "nasnet_mobile_tf",
    "pnasnet5large": "pnasnet_large_tf",
    "cafferesnet101": "resnet_v1_101_tf",  # MSRA Caffe ResNet-101, which TF-slim's resnet_v1_101 was converted from
    "inception_v3": "inception_v3_tf",
    "inceptionv3": "inception_v3_tf",
}

_FAMILIES: list[tuple[str, str]] = [  # vision models; first match wins; applied to lower-cased names
    (r"^fv_", "fisher_vector"),
    (r"^random_features", "random_features"),
    (r"inception_?resnet", "inception_resnet"),
    (r"inception|bninception", "inception"),
    (r"pnasnet", "pnasnet"),
    (r"nasnet|^nas$", "nasnet"),
    (r"^se_|^senet", "senet"),
    (r"resnext", "resnext"),
    (r"pyramidnet|shake_drop", "pyramidnet"),
    (r"shake_shake", "shake_shake"),
    (r"wide_resnet|^wrn", "wide_resnet"),
    (r"resnet", "resnet"),
    (r"densenet", "densenet"),
    (r"^dpn", "dpn"),
    (r"vgg", "vgg"),
    (r"alexnet", "alexnet"),
    (r"squeezenet", "squeezenet"),
    (r"mobilenet", "mobilenet"),
    (r"xception", "xception"),
    (r"polynet", "polynet"),
    (r"cudaconvnet", "cudaconvnet"),
    (r"darc", "darc"),
]


def _family(name: str) -> str:
    """Architecture family of a vision model (``"resnet_v1_50_tf"`` -> ``"resnet"``); the name itself if unknown."""
    low = name.lower()
    for pat, fam in _FAMILIES:
        if re.search(pat, low):
            return fam
    return low


def _chat_family(name: str) -> str:
    """Family of a chat model: the first token of its name, digits stripped (``"claude-2.1"`` -> ``"claude"``,
    ``"Qwen-14B-Chat"`` -> ``"qwen"``); OpenAI's ``gpt*`` / ``text_davinci*`` -> ``"gpt"``."""
    low = name.lower()
    if re.match(r"gpt|text_davinci", low):
        return "gpt"
    return re.split(r"[-_.]", low)[0].rstrip("0123456789") or low


# ----------------------------------------------------------------------------------------------------- data root
def _candidates() -> list[Path]:
    import effstats

    here = Path(effstats.__file__).resolve().parents[2]  # the directory holding the checkout
    return [
        here / "shared" / "data" / "predictions",
        Path.cwd() / ".." / "shared" / "data" / "predictions",
        Path.cwd() / ".." / ".." / "shared" / "data" / "predictions",  # from notebooks/
    ]


def data_root(root: str | os.PathLike | None = None) -> Path:
    """Directory holding the released per-item predictions.

    Looked up in order: ``root``; the ``EFFSTATS_DATA`` environment variable; ``shared/data/predictions`` beside the
    checkout (``Path(effstats.__file__).parents[2]``); ``../shared/data/predictions`` relative to the working
    directory (and ``../../`` from ``notebooks/``). A directory that holds a ``predictions/`` folder is descended into.

    Parameters
    ----------
    root : path, optional
        Either the extracted archives (with ``imagenet/``, ``cifar10/``, ``alpacaeval/``) or a checkout of an
        original public release (ImageNetV2, CIFAR-10.1, AlpacaEval).

    Returns
    -------
    pathlib.Path

    Raises
    ------
    FileNotFoundError
        When no candidate exists; the message says where the data come from.

    See Also
    --------
    effstats.datasets.load_imagenet_predictions, effstats.datasets.load_cifar10_predictions,
    effstats.datasets.load_alpacaeval

    Examples
    --------
    The released predictions are external data; the example is skipped where they are not installed.

    >>> import pytest
    >>> from effstats.datasets import data_root
    >>> try:
    ...     root = data_root()
    ... except FileNotFoundError:
    ...     pytest.skip("the released per-item predictions are not installed")
    >>> sorted(p.name for p in root.iterdir() if p.is_dir())
    ['alpacaeval', 'cifar10', 'imagenet']
    """
    if root is not None:
        if not isinstance(root, (str, os.PathLike)):
            raise TypeError(f"root: expected a directory path, got {type(root).__name__}")
        p = Path(root).expanduser()
        if not p.is_dir():
            raise FileNotFoundError(f"root: {str(p)!r} is not a directory")
        return _descend(p)
    env = os.environ.get("EFFSTATS_DATA")
    if env:
        p = Path(env).expanduser()
        if not p.is_dir():
            raise FileNotFoundError(f"EFFSTATS_DATA={env!r} is not a directory")
        return _descend(p)
    for p in _candidates():
        if p.is_dir():
            return p.resolve()
    raise FileNotFoundError(
        "per-item predictions not found. They are not shipped with effstats: they are extracted from the public "
        "ImageNetV2 (github.com/modestyachts/ImageNetV2), CIFAR-10.1 (github.com/modestyachts/CIFAR-10.1) and "
        "AlpacaEval (github.com/tatsu-lab/alpaca_eval) releases into shared/data/predictions/ beside the checkout. "
        "Pass root=<directory> (the extracted archives or a checkout of an original release) or set EFFSTATS_DATA. "
        f"Looked in: {[str(c) for c in _candidates()]}"
    )


def _descend(p: Path) -> Path:
    sub = p / "predictions"
    if sub.is_dir() and not any((p / d).is_dir() for d in ("imagenet", "cifar10", "alpacaeval", "data", "results")):
        return sub
    return p


def _archive_dir(root: Path, sub: str, probe: str) -> Path | None:
    """Folder of the extracted archives (root/sub or root itself), or None."""
    for d in (root / sub, root):
        if (d / probe).is_file():
            return d
    return None


# ----------------------------------------------------------------------------------------------------- caching
class _Archive(dict):
    """The arrays of one archive; a missing array is reported by file and name (not as a bare KeyError)."""

    path = ""

    def __missing__(self, key: str) -> np.ndarray:
        raise ValueError(f"root: {self.path!r} lacks the array {key!r}; not an effstats predictions archive (has "
                         f"{sorted(self)})")


@functools.lru_cache(maxsize=32)
def _npz(path: str, version: tuple | None) -> dict[str, np.ndarray]:
    # Parsed once per file version; arrays are read-only so a cached copy cannot be altered through a result.
    # allow_pickle=False: a data file never gets to run code (numpy refuses object arrays and pickles).
    try:
        with np.load(path, allow_pickle=False) as z:
            out = _Archive({k: z[k] for k in z.files})
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as exc:
        raise ValueError(f"root: {path!r} is not a readable .npz of plain arrays (pickled objects are never loaded): "
                         f"{exc}") from None
    out.path = path
    for a in out.values():
        a.flags.writeable = False
    return out


def _load_npz(path: Path) -> dict[str, np.ndarray]:
    return _npz(str(path), file_version(path))


@functools.lru_cache(maxsize=8)
def _json(path: str, version: tuple | None) -> Any:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def _load_json(path: Path) -> Any:
    return _json(str(path), file_version(path))


# ----------------------------------------------------------------------------------------------------- helpers
def _domains(domains: Any, valid: Sequence[str], aliases: dict[str, str]) -> list[str]:
    if domains is None:
        return list(valid)
    if isinstance(domains, str):
        domains = [domains]
    try:
        ds = list(domains)
    except TypeError:
        raise ValueError(f"domains: expected a name or a sequence of names from {list(valid)}, "
                         f"got {domains!r}") from None
    out = []
    for d in ds:
        name = aliases.get(d, d) if isinstance(d, str) else d
        if name not in valid:
            raise ValueError(f"domains: unknown domain {d!r}; expected some of {list(valid)}")
        if name in out:
            raise ValueError(f"domains: {name!r} given twice")
        out.append(name)
    if not out:
        raise ValueError("domains: expected at least one domain")
    return out


def _select_models(names: np.ndarray, models: Any, drop: set[str]) -> np.ndarray:
    """Row positions kept: ``models`` if given (in that order; explicitly named models are never dropped),
    else every model not in ``drop``."""
    names = [str(n) for n in names]
    if models is not None:
        if not isinstance(models, str) and not np.iterable(models):
            raise TypeError(f"models: expected model names, got {type(models).__name__}")
        wanted = [models] if isinstance(models, str) else list(models)
        unknown = [m for m in wanted if m not in names]
        if unknown:
            raise ValueError(f"models: unknown model names {_plain(unknown[:5])}; available: {names}")
        if len(set(wanted)) != len(wanted):
            raise ValueError("models: a model is named twice")
        pos = [names.index(m) for m in wanted]
    else:
        pos = [p for p in range(len(names)) if names[p] not in drop]
    if not pos:
        raise ValueError("models: no model left after the selection and exclusions")
    return np.asarray(pos)


def _model_meta(names: Sequence[str], ports: dict[str, str]) -> pd.DataFrame:
    names = [str(n) for n in names]
    dup = [ports.get(n) for n in names]
    return pd.DataFrame(
        {
            "family": [_family(n) for n in names],
            "framework": [
                "fisher_vector" if n.startswith("fv_") else "tensorflow" if n.endswith("_tf") else "pytorch"
                for n in names
            ],
            "duplicate_of": pd.array(dup, dtype=object),
            "is_duplicate": [d is not None for d in dup],
        },
        index=pd.Index(names, name="model"),
    )


# ----------------------------------------------------------------------------------------------------- ImageNet
_IMAGENET_ALIASES = {v: k for k, v in IMAGENET_DOMAINS.items()} | {
    "val": "imagenet_val",
    "imagenet": "imagenet_val",
    "matched_frequency": "imagenetv2_matched_frequency",
    "threshold0.7": "imagenetv2_threshold0.7",
    "top_images": "imagenetv2_top_images",
}


def load_imagenet_predictions(
    root: str | os.PathLike | None = None,
    domains: str | Iterable[str] | None = None,
    *,
    top5: bool = False,
    correct: Literal["top1", "top5"] = "top1",
    models: Sequence[str] | None = None,
    drop_duplicates: bool = False,
    drop_fisher_vectors: bool = False,
    drop_duplicate_images: bool = False,
) -> ResponseMatrix:
    """67 ImageNet classifiers on ImageNet val and the three ImageNetV2 test sets (ImageNetV2 release, MIT).

    Parameters
    ----------
    root : path, optional
        See :func:`effstats.datasets.data_root`. May also be a checkout of the ImageNetV2 repository
        (``data/predictions/...``).
    domains : str or sequence of str, optional
        Any of ``"imagenet_val"`` (50,000 images), ``"imagenetv2_matched_frequency"``, ``"imagenetv2_threshold0.7"``,
        ``"imagenetv2_top_images"`` (10,000 each), in the order given; default all four (80,000 items). The release
        names (``"imagenet-validation-original"``, ``"imagenetv2-b-33"``, ``"imagenetv2-a-44"``, ``"imagenetv2-c-12"``)
        are accepted too.
    top5 : bool, default=False
        ``predictions`` holds the top-5 ranked class ids, shape (n_models, n_items, 5), best first, instead of the
        top-1 class, shape (n_models, n_items). Reads the larger ``*_top5preds.npz`` archives.
    correct : {"top1", "top5"}, default="top1"
        Which correctness goes into ``values``.
    models : sequence of str, optional
        Model names to keep, in that order (the ``drop_*`` flags then do not apply).
    drop_duplicates : bool, default=False
        Drop the PyTorch ports of TF-slim weights (``models["is_duplicate"]``; the original is
        ``models["duplicate_of"]``): the same trained network evaluated twice, e.g. ``inceptionv4`` vs
        ``inception_v4_tf``.
    drop_fisher_vectors : bool, default=False
        Drop the three non-deep Fisher-vector baselines ``fv_4k``, ``fv_16k``, ``fv_64k``.
    drop_duplicate_images : bool, default=False
        Keep each image once: the three ImageNetV2 sets share 9,317 images (same ``image`` hash); later
        occurrences (in the order of ``domains``) are dropped, so an image is not counted two or three times.

    Returns
    -------
    ResponseMatrix
        Binary, shape (n_models, n_items) = (67, 80,000) by default; ``labels`` (n_items,) true class ids
        (0..999, sorted-wnid order); ``predictions`` top-1 (or top-5) class ids; ``items`` columns ``domain``,
        ``image`` (file name or hash in the release), ``label``; ``models`` columns ``family``, ``framework``
        (pytorch / tensorflow / fisher_vector), ``duplicate_of``, ``is_duplicate``. Item ids are ``"<domain>/<image>"``
        (the V2 sets share images).

    See Also
    --------
    effstats.datasets.load_imagenet_classes : bundled per-class accuracies of torchvision models.
    effstats.datasets.load_cifar10_predictions : the CIFAR-10 counterpart.

    Notes
    -----
    In the release, ``fv_16k`` on the three V2 sets is stored worst-to-best; the extracted archives (and the release
    reader here) reverse those rows. ResNet-50 top-1 on ImageNet val is 0.7613, as published.

    References
    ----------
    Recht, B., Roelofs, R., Schmidt, L. and Shankar, V. (2019). Do ImageNet Classifiers Generalize to ImageNet?
    *Proceedings of the 36th International Conference on Machine Learning (ICML)*, arXiv:1902.10811.

    Russakovsky, O., Deng, J., Su, H., Krause, J., Satheesh, S., Ma, S., Huang, Z., Karpathy, A., Khosla, A.,
    Bernstein, M., Berg, A. C. and Fei-Fei, L. (2015). ImageNet Large Scale Visual Recognition Challenge.
    *International Journal of Computer Vision* 115(3), 211-252.

    Examples
    --------
    External data; skipped where the released predictions are not installed.

    >>> import pytest
    >>> from effstats.datasets import load_imagenet_predictions
    >>> try:
    ...     rm = load_imagenet_predictions(domains="imagenet_val")
    ... except FileNotFoundError:
    ...     pytest.skip("the released per-item predictions are not installed")
    >>> rm
    ResponseMatrix(67 models × 50000 items, kind='binary', item groups ['domain', 'image', 'label'])
    >>> round(float(rm.accuracy()["resnet50"]), 4)
    0.7613
    """
    top5 = check_flag(top5, "top5")
    drop_duplicates = check_flag(drop_duplicates, "drop_duplicates")
    drop_fisher_vectors = check_flag(drop_fisher_vectors, "drop_fisher_vectors")
    if correct not in ("top1", "top5"):
        raise ValueError(f"correct: expected 'top1' or 'top5', got {correct!r}")
    doms = _domains(domains, list(IMAGENET_DOMAINS), _IMAGENET_ALIASES)
    base = data_root(root)
    arch = _archive_dir(base, "imagenet", "imagenet_val.npz")
    if arch is not None:
        names, parts = _imagenet_archives(arch, doms, top5)
    elif (base / "data" / "predictions").is_dir():
        names, parts = _imagenet_release(base, doms)
    else:
        raise FileNotFoundError(
            f"root: {str(base)!r} holds neither the extracted archives (imagenet/imagenet_val.npz) nor an ImageNetV2 "
            "checkout (data/predictions/<dataset>/<model>.npy)"
        )
    drop = set(_IMAGENET_PORTS) if drop_duplicates else set()
    if drop_fisher_vectors:
        drop |= {n for n in names if str(n).startswith("fv_")}
    rows = _select_models(names, models, drop)
    # parts: per domain (labels, image ids, top-1 or top-5 ranked predictions)
    labels = np.concatenate([p[0] for p in parts]).astype(np.int64)
    pred = np.concatenate([p[2][rows] for p in parts], axis=1)
    if correct == "top1":
        values = (pred[:, :, 0] if pred.ndim == 3 else pred) == labels[None, :]
    elif pred.ndim == 3:
        values = (pred == labels[None, :, None]).any(axis=2)
    else:  # top-5 correctness without loading the top-5 ids: the archives store it
        values = np.concatenate([p[3][rows] for p in parts], axis=1)
    if not top5 and pred.ndim == 3:
        pred = pred[:, :, 0]
    key = None if arch is None else (str(arch), tuple(doms), tuple(file_version(arch / f"{d}.npz") for d in doms))
    item_ids, items = _item_table(key, doms, [p[1] for p in parts])
    sel = [str(names[r]) for r in rows]
    if check_flag(drop_duplicate_images, "drop_duplicate_images"):
        keep = ~items["image"].duplicated().to_numpy()
        values, labels, pred, item_ids, items = values[:, keep], labels[keep], pred[:,
                                                                                    keep], item_ids[keep], items[keep]
    return ResponseMatrix(
        values,
        kind="binary",
        labels=labels,
        predictions=pred,
        model_ids=pd.Index(sel, name="model"),
        item_ids=item_ids,
        models=_model_meta(sel, _IMAGENET_PORTS),
        items=items.assign(label=labels),
    )


_ITEM_TABLES: dict[tuple, tuple[pd.Index, pd.DataFrame]] = {}


def _item_table(key: tuple | None, doms: list[str], images: list[np.ndarray]) -> tuple[pd.Index, pd.DataFrame]:
    # building 80,000 string ids dominates a warm load: the (immutable) Index and a template frame are cached per
    # archive version and domain list
    if key is not None and key in _ITEM_TABLES:
        ids, frame = _ITEM_TABLES[key]
        return ids, frame.copy()
    domain = np.repeat(np.array(doms), [len(im) for im in images])
    image = np.concatenate([np.asarray(im, dtype=str) for im in images])
    item_ids = pd.Index([f"{d}/{i}" for d, i in zip(domain.tolist(), image.tolist())], name="item")
    frame = pd.DataFrame({"domain": domain, "image": image}, index=item_ids)
    if key is not None:
        if len(_ITEM_TABLES) >= 16:
            _ITEM_TABLES.pop(next(iter(_ITEM_TABLES)))
        _ITEM_TABLES[key] = (item_ids, frame)
    return item_ids, frame.copy()


def _domain_archives(doms: list[str], path_of) -> tuple[np.ndarray, list]:
    """One npz archive per domain (``path_of(domain)``); all must list the same models in the same order."""
    names = None
    archives = []
    for d in doms:
        f = path_of(d)
        if not f.is_file():
            raise FileNotFoundError(f"domains: {d!r} requested but {str(f)!r} does not exist")
        z = _load_npz(f)
        if names is None:
            names = z["models"]
        elif not np.array_equal(names, z["models"]):
            raise ValueError(f"domains: model rows of {d!r} differ from those of {doms[0]!r}")
        archives.append(z)
    return names, archives


def _common_models(per_dom: list[dict[str, Path]]) -> list[str]:
    """Models with a prediction file on every domain of a release layout (the others are dropped, with a warning)."""
    common = sorted(set.intersection(*(set(m) for m in per_dom)))
    missing = sorted(set.union(*(set(m) for m in per_dom)) - set(common))
    if missing:  # stacklevel: the user's call of the public loader
        warnings.warn(f"models without predictions on every requested domain were dropped: {missing}", stacklevel=4)
    if not common:
        raise ValueError("domains: no model has predictions on every requested domain")
    return common


def _imagenet_archives(arch: Path, doms: list[str], top5: bool):
    names, archives = _domain_archives(doms, lambda d: arch / f"{d}.npz")
    parts = []
    for d, z in zip(doms, archives):
        if top5:
            f5 = arch / f"{d}_top5preds.npz"
            if not f5.is_file():
                raise FileNotFoundError(f"top5: {str(f5)!r} does not exist (top-5 predictions are optional archives)")
            pred = _load_npz(f5)["pred_top5"]
        else:
            pred = z["pred_top1"]
        parts.append((z["labels"], z["item_ids"], pred, z["correct_top5"]))
    return names, parts


def _imagenet_release(base: Path, doms: list[str]):
    """ImageNetV2 layout: data/predictions/<dataset>/<model>.npy (int [n, 5] top-5 ids, best first)."""
    info = _load_json(base / "data" / "metadata" / "class_info.json")
    wnid_to_cid = {c["wnid"]: int(c["cid"]) for c in info}
    per_dom: list[dict[str, Path]] = []
    for d in doms:
        pdir = base / "data" / "predictions" / IMAGENET_DOMAINS[d]
        if not pdir.is_dir():
            raise FileNotFoundError(f"domains: {d!r} requested but {str(pdir)!r} does not exist")
        # the release names two files <model>_model.npy; they are the same models as elsewhere
        per_dom.append({re.sub(r"_model$", "", f.stem): f for f in sorted(pdir.glob("*.npy"))})
    common = _common_models(per_dom)
    parts = []
    for d, files in zip(doms, per_dom):
        meta = _load_json(base / "data" / "datasets" / f"{IMAGENET_DOMAINS[d]}.json")
        fn = meta["image_filenames"]
        try:
            labels = np.array([wnid_to_cid[w] for _, w in fn], dtype=np.int64)
        except KeyError as exc:
            raise ValueError(f"domains: {d!r} has an image whose wnid {exc} is not in class_info.json") from None
        image = np.array([f for f, _ in fn])
        pred = np.stack([np.load(files[m], allow_pickle=False) for m in common])
        if pred.ndim != 3 or pred.shape[1] != len(fn):
            raise ValueError(f"domains: predictions for {d!r} have shape {pred.shape}, expected (n_models, {len(fn)}, "
                             "k)")
        if d != "imagenet_val" and "fv_16k" in common:  # stored worst-to-best in the release (see PROVENANCE.md)
            i = common.index("fv_16k")
            pred[i] = pred[i, :, ::-1]
        parts.append((labels, image, pred, None))
    return np.array(common), parts


# ----------------------------------------------------------------------------------------------------- CIFAR-10
_CIFAR_ALIASES = {"original": "cifar10", "cifar10_test": "cifar10", "v4": "cifar10.1_v4", "v6": "cifar10.1_v6"}


def load_cifar10_predictions(
    root: str | os.PathLike | None = None,
    domains: str | Iterable[str] | None = None,
    *,
    models: Sequence[str] | None = None,
    cifar10_labels: Any = None,
) -> ResponseMatrix:
    """30 CIFAR-10 classifiers on CIFAR-10 test and CIFAR-10.1 v4 / v6 (CIFAR-10.1 release, MIT).

    Parameters
    ----------
    root : path, optional
        See :func:`effstats.datasets.data_root`; may also be a checkout of the CIFAR-10.1 repository
        (``model_predictions/...``).
    domains : str or sequence of str, optional
        Any of ``"cifar10"`` (10,000 test images), ``"cifar10.1_v4"`` (2,021), ``"cifar10.1_v6"`` (2,000); default
        all three in that order (14,021 items).
    models : sequence of str, optional
        Model names to keep, in that order.
    cifar10_labels : array of shape (10000,) or path to a ``.npy`` file, optional
        Release layout only: the CIFAR-10 test labels, which the CIFAR-10.1 repository does not contain. Defaults
        to the labels in the extracted archives when those can be found.

    Returns
    -------
    ResponseMatrix
        Binary correctness (n_models, n_items); ``predictions`` the arg-max class (n_models, n_items);
        ``labels`` (n_items,); ``items`` columns ``domain``, ``index`` (position in its set), ``label``; ``models``
        columns ``family``, ``framework``, ``duplicate_of``, ``is_duplicate`` (no duplicates are known here).
        WRN-28-10 on CIFAR-10 test has accuracy 0.9593, as published.

    See Also
    --------
    effstats.datasets.load_imagenet_predictions : the ImageNet counterpart.

    References
    ----------
    Recht, B., Roelofs, R., Schmidt, L. and Shankar, V. (2018). Do CIFAR-10 Classifiers Generalize to CIFAR-10?
    arXiv:1806.00451.

    Krizhevsky, A. (2009). Learning Multiple Layers of Features from Tiny Images. Technical report, University of
    Toronto.

    Examples
    --------
    External data; skipped where the released predictions are not installed.

    >>> import pytest
    >>> from effstats.datasets import load_cifar10_predictions
    >>> try:
    ...     rm = load_cifar10_predictions(domains="cifar10")
    ... except FileNotFoundError:
    ...     pytest.skip("the released per-item predictions are not installed")
    >>> rm.shape
    (30, 10000)
    >>> round(float(rm.accuracy()["wrn_28_10"]), 4)
    0.9593
    """
    doms = _domains(domains, list(CIFAR10_DOMAINS), _CIFAR_ALIASES)
    base = data_root(root)
    arch = _archive_dir(base, "cifar10", "cifar10_test.npz")
    if arch is not None and cifar10_labels is None:
        names, parts = _cifar_archives(arch, doms)
    elif (base / "model_predictions").is_dir():
        names, parts = _cifar_release(base, doms, cifar10_labels)
    elif arch is not None:
        raise ValueError("cifar10_labels: only used with the CIFAR-10.1 release layout (model_predictions/...)")
    else:
        raise FileNotFoundError(
            f"root: {str(base)!r} holds neither the extracted archives (cifar10/cifar10_test.npz) nor a CIFAR-10.1 "
            "checkout (model_predictions/<split>_predictions/<model>_predictions.json)"
        )
    rows = _select_models(names, models, set())
    labels = np.concatenate([p[0] for p in parts]).astype(np.int64)
    pred = np.concatenate([p[1][rows] for p in parts], axis=1).astype(np.int64)
    domain = np.repeat(doms, [len(p[0]) for p in parts])
    index = np.concatenate([np.arange(len(p[0])) for p in parts])
    item_ids = pd.Index([f"{d}/{i}" for d, i in zip(domain, index)], name="item")
    sel = [str(names[r]) for r in rows]
    return ResponseMatrix(
        pred == labels[None, :],
        kind="binary",
        labels=labels,
        predictions=pred,
        model_ids=pd.Index(sel, name="model"),
        item_ids=item_ids,
        models=_model_meta(sel, {}),
        items=pd.DataFrame({"domain": domain, "index": index, "label": labels}, index=item_ids),
    )


def _cifar_archives(arch: Path, doms: list[str]):
    names, archives = _domain_archives(doms, lambda d: arch / f"{CIFAR10_DOMAINS[d][0]}.npz")
    return names, [(z["labels"], z["pred"]) for z in archives]


def _cifar_release(base: Path, doms: list[str], cifar10_labels: Any):
    per_dom = []
    for d in doms:
        split = CIFAR10_DOMAINS[d][1]
        pdir = base / "model_predictions" / f"{split}_predictions"
        if not pdir.is_dir():
            raise FileNotFoundError(f"domains: {d!r} requested but {str(pdir)!r} does not exist")
        per_dom.append({f.name[: -len("_predictions.json")]: f for f in sorted(pdir.glob("*_predictions.json"))})
    common = _common_models(per_dom)
    parts = []
    for d, files in zip(doms, per_dom):
        if d == "cifar10":
            labels = _cifar10_test_labels(cifar10_labels)
        else:
            lf = base / "datasets" / f"{d}_labels.npy"
            if not lf.is_file():
                raise FileNotFoundError(f"domains: labels for {d!r} expected at {str(lf)!r}")
            labels = np.load(lf, allow_pickle=False)
        labels = check_array(labels, f"labels of {d}", ndim=1, dtype=None)
        rows = []
        for m in common:
            with open(files[m], encoding="utf-8") as fh:
                rows.append(np.asarray(json.load(fh)))
        if any(r.shape != labels.shape for r in rows):
            bad = next(m for m, r in zip(common, rows) if r.shape != labels.shape)
            raise ValueError(f"domains: {bad!r} has {rows[common.index(bad)].shape} predictions on {d!r}, expected "
                             f"{labels.shape}")
        parts.append((labels, np.stack(rows)))
    return np.array(common), parts


def _cifar10_test_labels(cifar10_labels: Any) -> np.ndarray:
    if cifar10_labels is None:
        try:
            arch = _archive_dir(data_root(), "cifar10", "cifar10_test.npz")
        except FileNotFoundError:
            arch = None
        if arch is None:
            raise ValueError(
                "cifar10_labels: the CIFAR-10.1 release has no CIFAR-10 test labels; pass them (array of 10,000 "
                "class ids or a .npy path) or request only the CIFAR-10.1 domains"
            )
        return np.asarray(_load_npz(arch / "cifar10_test.npz")["labels"])
    if isinstance(cifar10_labels, (str, os.PathLike)):
        return np.load(cifar10_labels, allow_pickle=False)
    lab = check_array(cifar10_labels, "cifar10_labels", ndim=1, dtype=None)
    if not np.issubdtype(lab.dtype, np.integer):
        raise ValueError(f"cifar10_labels: expected integer class ids, got dtype {lab.dtype}")
    return lab


# ----------------------------------------------------------------------------------------------------- AlpacaEval
def load_alpacaeval(
    root: str | os.PathLike | None = None,
    *,
    outcome: Literal["p_win", "win"] = "p_win",
    exclude: Iterable[str] | None = ALPACAEVAL_EXCLUDED,
    models: Sequence[str] | None = None,
    annotator: str = ALPACAEVAL_ANNOTATOR,
) -> ResponseMatrix:
    """AlpacaEval 2.0: the judge's per-instruction P(win) of 58 chat models against GPT-4-turbo (Apache-2.0).

    Parameters
    ----------
    root : path, optional
        See :func:`effstats.datasets.data_root`; may also be a checkout of the alpaca_eval repository
        (``results/<model>/<annotator>/ annotations.json``).
    outcome : {"p_win", "win"}, default="p_win"
        ``"p_win"``: ``kind="score"`` values = the judge's probability that the model's answer beats the reference's;
        ``"win"``: ``kind="binary"`` values = ``p_win > 0.5`` (ties at exactly 0.5 count as losses).
    exclude : iterable of str or None, default=("gpt4_1106_preview", "NullModel")
        Models dropped: by default the reference model itself (P(win) = 0.5 against itself) and ``NullModel``, an
        adversarial entry with empty/constant outputs that games the judge. ``None`` or ``()`` keeps all 58.
    models : sequence of str, optional
        Model names to keep, in that order (``exclude`` then does not apply).
    annotator : str
        Release layout only: the annotator folder (default the AlpacaEval 2.0 judge).

    Returns
    -------
    ResponseMatrix
        Shape (n_models, 805) (58 × 805 before exclusions). Cells without a judge preference (10 in the release)
        are in the ``missing`` mask, never NaN. ``items`` columns ``dataset`` (AlpacaEval subset) and ``index``;
        ``models`` columns ``family``, ``variant`` (``concise`` / ``verbose`` prompt variants, else ``""``),
        ``is_reference``, ``is_null_model``.

    See Also
    --------
    effstats.datasets.read_lm_eval_samples : per-item results of lm-evaluation-harness.

    References
    ----------
    Dubois, Y., Galambosi, B., Liang, P. and Hashimoto, T. B. (2024). Length-Controlled AlpacaEval: A Simple Way to
    Debias Automatic Evaluators. arXiv:2404.04475.

    Li, X., Zhang, T., Dubois, Y., Taori, R., Gulrajani, I., Guestrin, C., Liang, P. and Hashimoto, T. B. (2023).
    AlpacaEval: An Automatic Evaluator of Instruction-following Models. GitHub repository tatsu-lab/alpaca_eval.

    Examples
    --------
    Your own AlpacaEval runs in the release layout (``results/<model>/<annotator>/annotations.json``, as
    ``alpaca_eval`` writes them), here two models on three instructions:

    >>> import json, pathlib, tempfile
    >>> from effstats.datasets import load_alpacaeval
    >>> out = tempfile.TemporaryDirectory()
    >>> for model, prefs in {"my-model": [1.9, 1.2, 1.6], "my-model-v2": [1.95, 1.7, 1.4]}.items():
    ...     folder = pathlib.Path(out.name, "results", model, "weighted_alpaca_eval_gpt4_turbo")
    ...     folder.mkdir(parents=True)
    ...     records = [{"instruction": f"q{i}", "dataset": "helpful_base", "preference": p}
    ...                for i, p in enumerate(prefs)]
    ...     _ = (folder / "annotations.json").write_text(json.dumps(records))
    >>> rm = load_alpacaeval(out.name)
    >>> rm.to_frame()
    item_ids     alpacaeval/0  alpacaeval/1  alpacaeval/2
    model_ids
    my-model             0.90           0.2           0.6
    my-model-v2          0.95           0.7           0.4
    >>> load_alpacaeval(out.name, outcome="win").values.astype(int)
    array([[1, 0, 1],
           [1, 1, 0]])
    >>> out.cleanup()
    """
    if outcome not in ("p_win", "win"):
        raise ValueError(f"outcome: expected 'p_win' or 'win', got {outcome!r}")
    if exclude is None:
        exclude = ()
    elif isinstance(exclude, str):
        exclude = (exclude,)
    exclude = set(exclude)
    base = data_root(root)
    arch = _archive_dir(base, "alpacaeval", "alpacaeval2_weighted_gpt4turbo.npz")
    if arch is not None:
        z = _load_npz(arch / "alpacaeval2_weighted_gpt4turbo.npz")
        names, p_win, dataset = z["models"], z["p_win"].astype(float), z["dataset"]
        index = z["item_ids"]
    elif (base / "results").is_dir():
        names, p_win, dataset, index = _alpaca_release(base, annotator)
    else:
        raise FileNotFoundError(
            f"root: {str(base)!r} holds neither the extracted archive (alpacaeval/alpacaeval2_weighted_gpt4turbo.npz) "
            "nor an alpaca_eval checkout (results/<model>/<annotator>/annotations.json)"
        )
    rows = _select_models(names, models, exclude & {str(n) for n in names})
    p = p_win[rows]
    miss = np.isnan(p)
    vals = np.where(miss, 0.0, p)
    if outcome == "win":
        vals = vals > 0.5
    sel = [str(names[r]) for r in rows]
    item_ids = pd.Index([f"alpacaeval/{int(i)}" for i in index], name="item")
    mmeta = pd.DataFrame(
        {
            "family": [_chat_family(n) for n in sel],
            "variant": [m.group(1) if (m := re.search(r"_(concise|verbose)$", n)) else "" for n in sel],
            "is_reference": [n == ALPACAEVAL_EXCLUDED[0] for n in sel],
            "is_null_model": [n == "NullModel" for n in sel],
        },
        index=pd.Index(sel, name="model"),
    )
    return ResponseMatrix(
        vals,
        kind="binary" if outcome == "win" else "score",
        missing=miss if miss.any() else None,
        model_ids=mmeta.index,
        item_ids=item_ids,
        models=mmeta,
        items=pd.DataFrame({"dataset": np.asarray(dataset).astype(str), "index": np.asarray(index, dtype=int)},
                           index=item_ids),
    )


def _alpaca_release(base: Path, annotator: str):
    files = sorted((base / "results").glob(f"*/{annotator}/annotations.json"))
    if not files:
        raise FileNotFoundError(f"annotator: no results/<model>/{annotator}/annotations.json under {str(base)!r}")
    names, records = [], []
    for f in files:
        with open(f, encoding="utf-8") as fh:
            recs = json.load(fh)
        if not isinstance(recs, list) or not recs or not all(isinstance(r, dict) for r in recs):
            raise ValueError(f"annotator: {str(f)!r} is not a non-empty JSON list of annotation records")
        names.append(f.parent.parent.name)
        records.append(recs)
    # items are aligned on the instruction text; order = first appearance (the AlpacaEval set order)
    order: dict[str, int] = {}
    dataset: list[str] = []
    for recs in records:
        for r in recs:
            if "instruction" not in r or "preference" not in r:
                raise ValueError("annotator: annotation records need 'instruction' and 'preference' fields")
            if r["instruction"] not in order:
                order[r["instruction"]] = len(order)
                dataset.append(str(r.get("dataset", "")))
    p = np.full((len(names), len(order)), np.nan)
    for i, recs in enumerate(records):
        for r in recs:
            pref = r["preference"]
            if pref is None or (isinstance(pref, float) and np.isnan(pref)):
                continue
            pref = float(pref)
            if not 1.0 <= pref <= 2.0:
                raise ValueError(f"annotator: preference {pref} of {names[i]!r} outside [1, 2] (1 + P(model wins))")
            p[i, order[r["instruction"]]] = pref - 1.0
    return np.array(names), p, np.array(dataset), np.arange(len(order))
