"""Builder of the digits lifelong benchmark: shifted domains, the model zoo, training and quantisation.

:func:`effstats.datasets.make_lifelong_digits` trains the zoo's scikit-learn models and returns the benchmark as a
:class:`effstats.ResponseMatrix`; ``save_lifelong_digits`` writes the arrays that
``scripts/build_lifelong_digits.py`` commits as ``data/lifelong_digits.npz``. The storage format and the
loader live in :mod:`effstats.datasets.digits`.
"""
from __future__ import annotations

import json
import os
import warnings
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import numpy as np
from scipy import ndimage

from .._shared import _plain
from .._validation import check_positive_int
from ..responses import ResponseMatrix
from ._digits_format import _ARTIFACT as ARTIFACT
from ._digits_format import N_CLASSES, _Q, _pack_codes, _to_response_matrix, _unpack_codes

__all__ = ["make_lifelong_digits", "save_lifelong_digits", "DOMAINS", "FAMILIES"]

_START = np.datetime64("2012-01-01")
_SPAN_DAYS = 12 * 365

# ---------------------------------------------------------------------------------------------- domains
# Each shift maps a stack of images (n, 8, 8) in [0, 1] and a Generator to shifted images (clipped to [0, 1]).
_Shift = Callable[[np.ndarray, np.random.Generator], np.ndarray]


def _gauss(s: float) -> _Shift:
    return lambda x, g: x + g.normal(0.0, s, x.shape)


def _salt_pepper(p: float) -> _Shift:
    def f(x, g):
        u = g.random(x.shape)
        return np.where(u < p / 2, 0.0, np.where(u > 1 - p / 2, 1.0, x))

    return f


def _blur(s: float) -> _Shift:
    return lambda x, g: ndimage.gaussian_filter(x, sigma=(0, s, s), mode="constant")


def _rotate(deg: float) -> _Shift:
    return lambda x, g: ndimage.rotate(x, deg, axes=(2, 1), reshape=False, order=1, mode="constant")


def _shift(dy: float, dx: float) -> _Shift:
    return lambda x, g: ndimage.shift(x, (0, dy, dx), order=1, mode="constant")


def _affine(m: np.ndarray) -> _Shift:
    """Output pixel p samples input at m @ (p - c) + c (c = image centre)."""
    c = np.array([3.5, 3.5])
    mat = np.eye(3)
    mat[1:, 1:] = m
    off = np.r_[0.0, c - m @ c]
    return lambda x, g: ndimage.affine_transform(x, mat, offset=off, order=1, mode="constant")


def _elastic(alpha: float, sigma: float = 1.0) -> _Shift:
    def f(x, g):
        n = len(x)
        d = ndimage.gaussian_filter(g.uniform(-1, 1, (2, n, 8, 8)), sigma=(0, 0, sigma, sigma)) * alpha
        i, r, c = np.meshgrid(np.arange(n), np.arange(8), np.arange(8), indexing="ij")
        return ndimage.map_coordinates(x, [i, r + d[0], c + d[1]], order=1, mode="constant")

    return f


def _occlude_rows(rows: slice) -> _Shift:
    def f(x, g):
        y = x.copy()
        y[:, rows, :] = 0.0
        return y

    return f


def _occlude_cols(cols: slice) -> _Shift:
    def f(x, g):
        y = x.copy()
        y[:, :, cols] = 0.0
        return y

    return f


def _occlude_patch(size: int = 3) -> _Shift:
    def f(x, g):
        n = len(x)
        r0 = g.integers(0, 8 - size + 1, n)[:, None, None]
        c0 = g.integers(0, 8 - size + 1, n)[:, None, None]
        rr, cc = np.arange(8)[None, :, None], np.arange(8)[None, None, :]
        mask = (rr >= r0) & (rr < r0 + size) & (cc >= c0) & (cc < c0 + size)
        return np.where(mask, 0.0, x)

    return f


def _pixelate(x: np.ndarray, g: np.random.Generator) -> np.ndarray:
    m = x.reshape(len(x), 4, 2, 4, 2).mean(axis=(2, 4))
    return np.repeat(np.repeat(m, 2, axis=1), 2, axis=2)


def _then(*fs: _Shift) -> _Shift:
    def f(x, g):
        for h in fs:
            x = h(x, g)
        return x

    return f


#: The 38 item domains: name -> (kind, shift function); ``"clean"`` first. The order is part of the benchmark's
#: definition: each domain's random stream is keyed by its position here.
DOMAINS: dict[str, tuple[str, _Shift | None]] = {
    "clean": ("clean", None),
    "gauss_0.10": ("noise", _gauss(0.10)),
    "gauss_0.20": ("noise", _gauss(0.20)),
    "gauss_0.35": ("noise", _gauss(0.35)),
    "gauss_0.50": ("noise", _gauss(0.50)),
    "salt_pepper_0.05": ("noise", _salt_pepper(0.05)),
    "salt_pepper_0.15": ("noise", _salt_pepper(0.15)),
    "speckle_0.5": ("noise", lambda x, g: x * (1.0 + g.normal(0.0, 0.5, x.shape))),
    "blur_0.5": ("blur", _blur(0.5)),
    "blur_0.8": ("blur", _blur(0.8)),
    "blur_1.2": ("blur", _blur(1.2)),
    "pixelate_2": ("blur", _pixelate),
    "rotate_+15": ("geometric", _rotate(15)),
    "rotate_-15": ("geometric", _rotate(-15)),
    "rotate_+30": ("geometric", _rotate(30)),
    "rotate_-45": ("geometric", _rotate(-45)),
    "shift_right_1": ("geometric", _shift(0, 1)),
    "shift_down_1": ("geometric", _shift(1, 0)),
    "shift_left_1.5": ("geometric", _shift(0, -1.5)),
    "shift_diag_1": ("geometric", _shift(-1, 1)),
    "zoom_in_1.3": ("geometric", _affine(np.eye(2) / 1.3)),
    "zoom_out_0.7": ("geometric", _affine(np.eye(2) / 0.7)),
    "shear_0.4": ("geometric", _affine(np.array([[1.0, 0.0], [0.4, 1.0]]))),
    "hflip": ("geometric", lambda x, g: x[:, :, ::-1]),
    "elastic_1": ("elastic", _elastic(1.0)),
    "elastic_2": ("elastic", _elastic(2.0)),
    "occlude_top": ("occlusion", _occlude_rows(slice(0, 3))),
    "occlude_left": ("occlusion", _occlude_cols(slice(0, 3))),
    "occlude_patch_3": ("occlusion", _occlude_patch(3)),
    "contrast_0.4": ("photometric", lambda x, g: (x - 0.5) * 0.4 + 0.5),
    "gamma_0.4": ("photometric", lambda x, g: x**0.4),
    "gamma_2.5": ("photometric", lambda x, g: x**2.5),
    "brightness_+0.3": ("photometric", lambda x, g: x + 0.3),
    "invert": ("photometric", lambda x, g: 1.0 - x),
    "dilate": ("morphology", lambda x, g: ndimage.grey_dilation(x, size=(1, 2, 2))),
    "erode": ("morphology", lambda x, g: ndimage.grey_erosion(x, size=(1, 2, 2))),
    "blur_noise": ("combined", _then(_blur(0.8), _gauss(0.2))),
    "rotate_noise": ("combined", _then(_rotate(20), _gauss(0.2))),
}
_DOMAIN_NAMES = list(DOMAINS)


def _split(seed: int, n_test: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Images (n, 8, 8) in [0, 1], labels and a stratified train/test split of load_digits."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    d = load_digits()
    images = d.images / 16.0
    idx = np.arange(len(images))
    rs = int(np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(0,))).integers(2**31))
    train, test = train_test_split(idx, test_size=n_test, stratify=d.target, random_state=rs)
    return images, d.target.astype(np.int64), np.sort(train), np.sort(test)


def _make_items(images: np.ndarray, target: np.ndarray, test: np.ndarray, domains: Sequence[str], seed: int):
    """Shifted test images: X (n_items, 64) float32, labels, and item metadata columns."""
    xs, dom, kind, src = [], [], [], []
    for name in domains:
        k, f = DOMAINS[name]
        g = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(2, _DOMAIN_NAMES.index(name))))
        x = images[test] if f is None else np.clip(f(images[test], g), 0.0, 1.0)
        xs.append(x.reshape(len(test), 64))
        dom += [name] * len(test)
        kind += [k] * len(test)
        src.append(test)
    return (np.concatenate(xs).astype(np.float32), np.tile(target[test], len(domains)),
            np.array(dom), np.array(kind), np.concatenate(src))


def _resolve_domains(domains: Any) -> list[str]:
    if domains is None:
        return list(_DOMAIN_NAMES)
    if isinstance(domains, (int, np.integer)) and not isinstance(domains, bool):
        n = check_positive_int(int(domains), "domains", maximum=len(_DOMAIN_NAMES))
        return _DOMAIN_NAMES[:n]
    if isinstance(domains, str):
        domains = [domains]
    if not isinstance(domains, Iterable) or isinstance(domains, (bytes, dict)):
        raise ValueError(f"domains: expected None, a count or names from DOMAINS, got {type(domains).__name__} "
                         f"{domains!r:.40}")
    names = list(domains)
    if any(not isinstance(d, str) for d in names):
        raise ValueError(f"domains: expected domain names (str) from DOMAINS, got {_plain(names[:5])!r}")
    if len(set(names)) < len(names):
        raise ValueError(f"domains: a domain is named twice: {sorted(d for d in set(names) if names.count(d) > 1)}")
    bad = [d for d in names if d not in DOMAINS]
    if bad or not names:
        raise ValueError(f"domains: expected None, a count or names from DOMAINS, unknown {bad}" if bad
                         else "domains: expected a non-empty selection")
    if "clean" not in names:
        names = ["clean", *names]
    # keep the canonical order so a selection is a sub-block of the full benchmark
    return [d for d in _DOMAIN_NAMES if d in names]


# ---------------------------------------------------------------------------------------------- model zoo
_TRAIN_SIZES = np.array([10, 15, 20, 30, 45, 70, 100, 150, 220, 330, 500, 700, 997])
_AUGMENTATIONS = ["none", "none", "noise", "shift", "rotate", "blur", "mixed"]


def _logu(g: np.random.Generator, lo: float, hi: float) -> float:
    return float(np.exp(g.uniform(np.log(lo), np.log(hi))))


def _sample_params(family: str, g: np.random.Generator, n_max: int) -> dict[str, Any]:
    """Hyper-parameters of one model; sizes (neighbours, components) are at most ``n_max`` training images."""
    c = lambda seq: seq[int(g.integers(len(seq)))]  # noqa: E731
    cn = lambda seq: c([v for v in seq if v <= n_max])  # noqa: E731
    if family == "logistic":
        return {"C": round(_logu(g, 1e-4, 1e2), 6)}
    if family == "pca_logistic":
        return {"n_components": cn([2, 3, 5, 8, 12, 20, 32]), "C": round(_logu(g, 1e-2, 1e2), 6)}
    if family == "sgd_log":
        return {"alpha": round(_logu(g, 1e-5, 1e-1), 8), "max_iter": c([5, 20, 100])}
    if family == "linear_svm":
        return {"C": round(_logu(g, 1e-3, 1e1), 6)}
    if family == "rbf_svm":
        return {"C": round(_logu(g, 1.0, 100.0), 5), "gamma": round(_logu(g, 0.003, 0.5), 6)}
    if family == "poly_svm":
        return {"C": round(_logu(g, 0.01, 10.0), 5), "degree": c([2, 3, 4])}
    if family == "nystroem_logistic":
        return {"gamma": round(_logu(g, 0.01, 1.0), 6), "n_components": cn([10, 30, 100, 300]),
                "C": round(_logu(g, 0.1, 100.0), 5)}
    if family == "knn":
        return {"n_neighbors": cn([1, 2, 3, 5, 8, 13, 25, 50]), "weights": c(["uniform", "distance"]), "p": c([1, 2])}
    if family == "pca_knn":
        return {"n_components": cn([2, 4, 8, 16]), "n_neighbors": cn([1, 3, 5, 10, 20])}
    if family == "decision_tree":
        return {"max_depth": c([1, 2, 3, 4, 6, 8, 12, None]), "min_samples_leaf": c([1, 2, 5, 10]),
                "criterion": c(["gini", "entropy"])}
    if family in ("random_forest", "extra_trees"):
        return {"n_estimators": c([5, 10, 25, 50, 100, 200]), "max_depth": c([2, 4, 8, None]),
                "max_features": c(["sqrt", 0.3, 1])}
    if family == "hist_gradient_boosting":
        return {"max_iter": c([5, 10, 25, 50]), "max_depth": c([2, 3, None]),
                "learning_rate": round(_logu(g, 0.03, 0.3), 4)}
    if family == "mlp":
        return {"hidden_layer_sizes": c([(8,), (16,), (32,), (64,), (128,), (32, 16), (64, 32), (128, 64)]),
                "alpha": round(_logu(g, 1e-5, 1e-1), 8), "max_iter": c([10, 30, 100, 200]),
                "learning_rate_init": round(_logu(g, 3e-4, 1e-2), 6)}
    if family == "gaussian_nb":
        return {"var_smoothing": round(_logu(g, 1e-9, 1.0), 11)}
    if family == "bernoulli_nb":
        return {"binarize": c([0.1, 0.25, 0.5, 0.75]), "alpha": round(_logu(g, 0.01, 10.0), 5)}
    if family == "multinomial_nb":
        return {"alpha": round(_logu(g, 0.001, 10.0), 6)}
    if family == "lda":
        return {"shrinkage": c(["auto", 0.01, 0.1, 0.3, 0.6, 0.9])}
    if family == "qda":
        return {"reg_param": round(g.uniform(0.02, 0.95), 4)}
    raise ValueError(f"family: unknown model family {family!r}")


#: The 19 model families: name -> smallest training set it is trained on (SVMs' probability calibration needs a
#: few images per class).
FAMILIES: dict[str, int] = {
    "logistic": 10,
    "pca_logistic": 10,
    "sgd_log": 10,
    "linear_svm": 45,
    "rbf_svm": 45,
    "poly_svm": 45,
    "nystroem_logistic": 10,
    "knn": 10,
    "pca_knn": 10,
    "decision_tree": 10,
    "random_forest": 10,
    "extra_trees": 10,
    "hist_gradient_boosting": 20,
    "mlp": 10,
    "gaussian_nb": 10,
    "bernoulli_nb": 10,
    "multinomial_nb": 10,
    "lda": 20,
    "qda": 30,
}
_FAMILY_NAMES = list(FAMILIES)


def _zoo(seed: int, n_models: int) -> list[dict[str, Any]]:
    """Model configurations 0..n_models-1; configuration i does not depend on n_models."""
    g = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(1,)))
    out = []
    for i in range(n_models):
        family = _FAMILY_NAMES[int(g.integers(len(_FAMILY_NAMES)))] if i >= len(_FAMILY_NAMES) else _FAMILY_NAMES[i]
        sizes = _TRAIN_SIZES[_TRAIN_SIZES >= FAMILIES[family]]
        n_train = int(sizes[int(g.integers(len(sizes)))])
        params = _sample_params(family, g, n_train)
        aug = _AUGMENTATIONS[int(g.integers(len(_AUGMENTATIONS)))]
        n_aug = 0 if aug == "none" else int(g.integers(1, 4))
        out.append({"family": family, "params": params, "n_train": n_train, "augmentation": aug,
                    "n_augmented": n_aug, "seed": int(g.integers(2**31))})
    return out


def _estimator(family: str, p: dict[str, Any], seed: int):
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.decomposition import PCA
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis, QuadraticDiscriminantAnalysis
    from sklearn.ensemble import ExtraTreesClassifier, HistGradientBoostingClassifier, RandomForestClassifier
    from sklearn.kernel_approximation import Nystroem
    from sklearn.linear_model import LogisticRegression, SGDClassifier
    from sklearn.naive_bayes import BernoulliNB, GaussianNB, MultinomialNB
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.neural_network import MLPClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC, LinearSVC
    from sklearn.tree import DecisionTreeClassifier

    if family == "logistic":
        return LogisticRegression(C=p["C"], max_iter=500)
    if family == "pca_logistic":
        return make_pipeline(PCA(p["n_components"], random_state=seed), LogisticRegression(C=p["C"], max_iter=500))
    if family == "sgd_log":
        return make_pipeline(StandardScaler(),
                             SGDClassifier(loss="log_loss", alpha=p["alpha"], max_iter=p["max_iter"], tol=None,
                                           random_state=seed))
    if family == "linear_svm":
        return CalibratedClassifierCV(LinearSVC(C=p["C"], dual=True, max_iter=5000, random_state=seed), cv=3)
    if family == "rbf_svm":
        return SVC(C=p["C"], gamma=p["gamma"], probability=True, random_state=seed)
    if family == "poly_svm":
        return SVC(kernel="poly", C=p["C"], degree=p["degree"], gamma="scale", probability=True, random_state=seed)
    if family == "nystroem_logistic":
        return make_pipeline(Nystroem(gamma=p["gamma"], n_components=p["n_components"], random_state=seed),
                             LogisticRegression(C=p["C"], max_iter=500))
    if family == "knn":
        return KNeighborsClassifier(n_neighbors=p["n_neighbors"], weights=p["weights"], p=p["p"])
    if family == "pca_knn":
        return make_pipeline(PCA(p["n_components"], random_state=seed),
                             KNeighborsClassifier(n_neighbors=p["n_neighbors"]))
    if family == "decision_tree":
        return DecisionTreeClassifier(max_depth=p["max_depth"], min_samples_leaf=p["min_samples_leaf"],
                                      criterion=p["criterion"], random_state=seed)
    if family == "random_forest":
        return RandomForestClassifier(n_estimators=p["n_estimators"], max_depth=p["max_depth"],
                                      max_features=p["max_features"], random_state=seed, n_jobs=1)
    if family == "extra_trees":
        return ExtraTreesClassifier(n_estimators=p["n_estimators"], max_depth=p["max_depth"],
                                    max_features=p["max_features"], random_state=seed, n_jobs=1)
    if family == "hist_gradient_boosting":
        return HistGradientBoostingClassifier(max_iter=p["max_iter"], max_depth=p["max_depth"],
                                              learning_rate=p["learning_rate"], early_stopping=False, random_state=seed)
    if family == "mlp":
        return MLPClassifier(hidden_layer_sizes=p["hidden_layer_sizes"], alpha=p["alpha"], max_iter=p["max_iter"],
                             learning_rate_init=p["learning_rate_init"], random_state=seed)
    if family == "gaussian_nb":
        return GaussianNB(var_smoothing=p["var_smoothing"])
    if family == "bernoulli_nb":
        return BernoulliNB(alpha=p["alpha"], binarize=p["binarize"])
    if family == "multinomial_nb":
        return MultinomialNB(alpha=p["alpha"])
    if family == "lda":
        return LinearDiscriminantAnalysis(solver="lsqr", shrinkage=p["shrinkage"])
    if family == "qda":
        return QuadraticDiscriminantAnalysis(reg_param=p["reg_param"])
    raise ValueError(f"family: unknown model family {family!r}")


_AUG_SHIFTS: dict[str, Callable[[np.random.Generator], _Shift]] = {
    "noise": lambda g: _gauss(float(g.uniform(0.05, 0.3))),
    "shift": lambda g: _shift(float(g.uniform(-1, 1)), float(g.uniform(-1, 1))),
    "rotate": lambda g: _rotate(float(g.uniform(-20, 20))),
    "blur": lambda g: _blur(float(g.uniform(0.3, 1.0))),
}


def _training_set(cfg: dict[str, Any], images: np.ndarray, target: np.ndarray, train: np.ndarray,
                  g: np.random.Generator):
    """Class-balanced random subset of the training images plus augmented copies of it."""
    y = target[train]
    key = g.random(len(train))
    order = np.lexsort((key,))
    rank_in_class = np.empty(len(train), np.int64)
    for k in range(N_CLASSES):  # 10 classes: rank each image within its class by the random key
        members = order[y[order] == k]
        rank_in_class[members] = np.arange(len(members))
    pick = np.lexsort((key, rank_in_class))[: min(cfg["n_train"], len(train))]
    x0, y0 = images[train[pick]], y[pick]
    xs, ys = [x0], [y0]
    for _ in range(cfg["n_augmented"]):
        aug = cfg["augmentation"]
        if aug == "mixed":
            aug = list(_AUG_SHIFTS)[int(g.integers(len(_AUG_SHIFTS)))]
        # each copy splits the images into 8 random groups, each with its own random transformation
        groups = g.integers(8, size=len(x0))
        xa = np.empty_like(x0)
        for gi in range(8):
            m = groups == gi
            if m.any():
                xa[m] = _AUG_SHIFTS[aug](g)(x0[m], g)
        xs.append(np.clip(xa, 0.0, 1.0))
        ys.append(y0)
    return np.concatenate(xs).reshape(-1, 64), np.concatenate(ys)


def _quantise(p: np.ndarray) -> np.ndarray:
    """Counts (n, 10) summing exactly to ``_Q`` per row whose arg-max is ``p``'s arg-max.

    Largest-remainder rounding, then one unit at a time moves from the quantised arg-max to the
    model's own arg-max where rounding changed the prediction (correctness stays the model's).
    """
    s = p * _Q
    q = np.floor(s).astype(np.int64)
    deficit = _Q - q.sum(axis=-1, keepdims=True)
    rank = np.argsort(np.argsort(-(s - q), axis=-1, kind="stable"), axis=-1, kind="stable")
    q += rank < deficit
    top = p.argmax(axis=1)
    for _ in range(_Q):
        j = q.argmax(axis=1)
        bad = np.flatnonzero(j != top)
        if bad.size == 0:
            break
        q[bad, j[bad]] -= 1
        q[bad, top[bad]] += 1
    return q.astype(np.uint8)


def _fit_predict(cfg: dict[str, Any], images: np.ndarray, target: np.ndarray, train: np.ndarray,
                 x_items: np.ndarray) -> np.ndarray:
    """Train one model of the zoo; its quantised probabilities as nibble-packed bytes (n_items, 5)."""
    from sklearn.exceptions import ConvergenceWarning
    from threadpoolctl import threadpool_limits

    g = np.random.default_rng(cfg["seed"])
    x, y = _training_set(cfg, images, target, train, g)
    params = dict(cfg["params"])
    for key in ("n_neighbors", "n_components"):  # only binds when n_test leaves fewer training images
        if key in params:
            params[key] = min(params[key], len(x))
    est = _estimator(cfg["family"], params, cfg["seed"])
    # one BLAS thread: results must not depend on the machine's thread count (bit-for-bit rebuilds)
    with threadpool_limits(1), warnings.catch_warnings():
        # convergence, collinearity and tiny-class warnings are part of weak models; deprecations are not
        for cat in (ConvergenceWarning, UserWarning, RuntimeWarning):
            warnings.simplefilter("ignore", cat)
        est.fit(x.astype(np.float64), y)
        proba = est.predict_proba(x_items.astype(np.float64))
    full = np.zeros((len(x_items), N_CLASSES))
    full[:, np.asarray(est.classes_, dtype=np.int64)] = proba
    full = np.nan_to_num(full, nan=0.0)
    bad = full.sum(1) <= 0
    full[bad] = 1.0 / N_CLASSES
    full /= full.sum(1, keepdims=True)
    return _pack_codes(_quantise(full))


_WORKER: dict[str, np.ndarray] = {}


def _init_worker(images: np.ndarray, target: np.ndarray, train: np.ndarray, x_items: np.ndarray) -> None:
    _WORKER.update(images=images, target=target, train=train, x_items=x_items)


def _worker_fit_predict(cfg: dict[str, Any]) -> np.ndarray:
    w = _WORKER
    return _fit_predict(cfg, w["images"], w["target"], w["train"], w["x_items"])


def _params_str(p: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in p.items())


def _build(
    rng: int = 0,
    n_models: int = 500,
    *,
    models: Sequence[int] | None = None,
    domains: Any = None,
    n_test: int = 800,
    n_jobs: int = 1,
    progress: bool = False,
) -> dict[str, np.ndarray]:
    """The benchmark as plain arrays (the artifact's content)."""
    if isinstance(rng, bool) or not isinstance(rng, (int, np.integer)) or rng < 0:
        raise ValueError(f"rng: expected a non-negative int seed (the benchmark is defined by it), got {rng!r}")
    seed = int(rng)
    n_models = check_positive_int(n_models, "n_models")
    n_test = check_positive_int(n_test, "n_test", minimum=N_CLASSES * 2, maximum=1797 - 100)
    n_jobs = check_positive_int(n_jobs, "n_jobs")
    dom = _resolve_domains(domains)
    if models is None:
        sel = np.arange(n_models)
    else:
        sel = np.asarray(models)
        if (sel.ndim != 1 or sel.size == 0 or not np.issubdtype(sel.dtype, np.integer) or sel.min() < 0
                or sel.max() >= n_models):
            raise ValueError(f"models: expected a non-empty 1-D array of zoo positions in [0, {n_models - 1}]")
        if len(np.unique(sel)) < sel.size:
            raise ValueError("models: zoo positions must be distinct (a model would appear twice)")
    images, target, train, test = _split(seed, n_test)
    x_items, labels, item_domain, item_kind, item_src = _make_items(images, target, test, dom, seed)
    cfgs = _zoo(seed, int(sel.max()) + 1)
    cfgs = [cfgs[i] for i in sel]
    out = np.empty((len(cfgs), len(labels), N_CLASSES // 2), np.uint8)
    bar = None
    if progress:
        from tqdm import tqdm  # text bars: widget bars break with Debian's ipywidgets 6 and nbclient

        bar = tqdm(total=len(cfgs), desc="training digits models", unit="model")
    try:
        if n_jobs == 1:
            for k, cfg in enumerate(cfgs):
                out[k] = _fit_predict(cfg, images, target, train, x_items)
                if bar is not None:
                    bar.update(1)
        else:
            # processes get the shared arrays once (initializer) and models one at a time, so a slow
            # model never idles the other workers; results land by position, so order is irrelevant
            from concurrent.futures import ProcessPoolExecutor, as_completed
            import multiprocessing as mp

            with ProcessPoolExecutor(n_jobs, mp_context=mp.get_context("spawn"), initializer=_init_worker,
                                     initargs=(images, target, train, x_items)) as pool:
                futures = {pool.submit(_worker_fit_predict, c): k for k, c in enumerate(cfgs)}
                for fut in as_completed(futures):
                    out[futures[fut]] = fut.result()
                    if bar is not None:
                        bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    correct = _unpack_codes(out).argmax(axis=2) == labels[None, :]
    # release date: "progress" = overall accuracy plus the model's own noise, mapped onto 12 years
    noise = np.array([np.random.default_rng([c["seed"], 7]).normal(0.0, 0.04) for c in cfgs])
    progress_ = np.clip(correct.mean(axis=1) + noise, 0.0, 1.0)
    release = _START + np.rint(progress_ * _SPAN_DAYS).astype("timedelta64[D]")
    import scipy
    import sklearn

    # library versions: rows are reproduced bit for bit with these; other releases may differ slightly
    meta = {"seed": seed, "n_models_zoo": n_models, "n_test": n_test, "domains": dom, "quantisation": _Q,
            "format": 2,
            "versions": {"numpy": np.__version__, "scipy": scipy.__version__, "sklearn": sklearn.__version__}}
    return {
        "proba_q15_packed": out,
        "labels": labels.astype(np.int8),
        "correct_packed": np.packbits(correct, axis=1),
        "item_domain": item_domain,
        "item_shift": item_kind,
        "item_source_image": item_src.astype(np.int32),
        "model_index": sel.astype(np.int32),
        "model_family": np.array([c["family"] for c in cfgs]),
        "model_params": np.array([_params_str(c["params"]) for c in cfgs]),
        "model_n_train": np.array([min(c["n_train"], len(train)) for c in cfgs], np.int32),
        "model_augmentation": np.array([c["augmentation"] for c in cfgs]),
        "model_n_augmented": np.array([c["n_augmented"] for c in cfgs], np.int32),
        "model_seed": np.array([c["seed"] for c in cfgs], np.int64),
        "model_release_date": release,
        "meta": np.array(json.dumps(meta)),
    }


def make_lifelong_digits(
    rng: int = 0,
    n_models: int = 500,
    *,
    models: Sequence[int] | None = None,
    domains: Any = None,
    n_test: int = 800,
    n_jobs: int = 1,
    progress: bool = False,
) -> ResponseMatrix:
    """Build the digits lifelong benchmark from real scikit-learn models.

    Parameters
    ----------
    rng : int, default=0
        Seed defining the train/test split, the random shifts and the model zoo (configurations,
        training subsets, augmentations, estimators' ``random_state``). Same seed, same benchmark.
    n_models : int, default=500
        Size of the model zoo (configuration ``i`` does not depend on ``n_models``).
    models : sequence of int, default=None
        Build only these zoo positions; their rows equal the full build's rows exactly.
    domains : None, int or sequence of str, default=None
        All of the benchmark's 38 domains (default), the first ``k``, or the named ones (``"clean"`` is always
        included; in the benchmark's order of domains).
    n_test : int, default=800
        Held-out test images (stratified); every domain holds a shifted copy of each.
    n_jobs : int, default=1
        Processes; does not change the result.
    progress : bool, default=False
        Show a tqdm progress bar.

    Returns
    -------
    ResponseMatrix
        Binary correctness (n_models, n_items) with ``probabilities`` (n_models, n_items, 10, float32,
        multiples of 1/15), ``labels`` (n_items,), ``items`` (``domain``, ``shift``, ``source_image``,
        ``label``) and ``models`` (``family``, ``params``, ``n_train``, ``augmentation``,
        ``n_augmented``, ``release_date``, ``zoo_index``, ``seed``).

    See Also
    --------
    effstats.datasets.load_lifelong_digits : the committed 500-model build, loaded in a second.
    effstats.chronological_split : split by the models' ``release_date``.

    References
    ----------
    Alpaydin, E. and Kaynak, C. (1998). Optical Recognition of Handwritten Digits. UCI Machine Learning Repository,
    doi:10.24432/C50P49 (the images, via :func:`sklearn.datasets.load_digits`).

    Prabhu, A., Udandarao, V., Torr, P., Bethge, M., Bibi, A. and Albanie, S. (2024). Efficient Lifelong Model
    Evaluation in an Era of Rapid Progress. *Advances in Neural Information Processing Systems (NeurIPS)*,
    arXiv:2402.19472 (the lifelong-benchmark setting this reproduces at small scale).

    Examples
    --------
    Three models of the zoo on the clean and one rotated domain (60 test images each); the build trains them:

    >>> from effstats.datasets import make_lifelong_digits
    >>> rm = make_lifelong_digits(0, n_models=3, domains=["rotate_+15"], n_test=60)
    >>> rm.shape
    (3, 120)
    >>> rm.group_scores("domain").round(3)
    domain             clean  rotate_+15
    model_ids
    logistic-0000      0.917       0.783
    pca_logistic-0001  0.517       0.383
    sgd_log-0002       0.933       0.700
    """
    return _to_response_matrix(_build(rng, n_models, models=models, domains=domains, n_test=n_test, n_jobs=n_jobs,
                                      progress=progress))


def save_lifelong_digits(arrays: dict[str, np.ndarray], path: str | Path = ARTIFACT) -> Path:
    """Write the benchmark's arrays (the builder's output) as a compressed ``.npz`` with no pickled objects.

    The file is written under a temporary name and renamed, so readers never see a half-written artifact.

    Parameters
    ----------
    arrays : dict of str to ndarray
        The arrays ``scripts/build_lifelong_digits.py`` builds.
    path : str or Path, default=ARTIFACT
        Destination (the bundled artifact by default).

    Returns
    -------
    Path
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.stem + ".partial.npz")
    np.savez_compressed(tmp, **arrays)
    os.replace(tmp, path)  # readers never see a half-written artifact
    return path
