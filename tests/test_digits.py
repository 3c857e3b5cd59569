"""The digits lifelong benchmark: the committed artifact, determinism, and that it matches the code."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from scipy import stats

from effstats import ResponseMatrix, chronological_split
from effstats.datasets import _digits_build as build, _digits_format, digits, load_lifelong_digits, make_lifelong_digits
pytestmark = pytest.mark.slow  # builds and loads the 500-model benchmark


@pytest.fixture(scope="module")
def bench() -> ResponseMatrix:
    return load_lifelong_digits()


@pytest.fixture(scope="module")
def bench_binary() -> ResponseMatrix:
    """Correctness and metadata only (subsets stay cheap)."""
    return load_lifelong_digits(probabilities=False)


def test_artifact_shape_and_metadata(bench):
    assert digits.ARTIFACT.stat().st_size < 33e6  # committed: ~30 MB at most
    assert bench.n_models >= 500 and bench.n_items >= 30_000
    assert bench.probabilities.shape == (bench.n_models, bench.n_items, 10)
    assert bench.items["domain"].nunique() >= 21 and "clean" in set(bench.items["domain"])
    assert bench.models["family"].nunique() >= 12
    assert bench.models["n_train"].nunique() >= 8
    assert {"release_date", "family", "params", "n_train", "augmentation"} <= set(bench.models.columns)
    # every domain holds a shifted copy of the same held-out images
    per_domain = bench.items.groupby("domain")["source_image"].apply(lambda s: tuple(sorted(s)))
    assert per_domain.nunique() == 1
    assert load_lifelong_digits().values is bench.values  # cached arrays, hence read-only
    with pytest.raises(ValueError):
        bench.values[0, 0] = True


def test_a_loads_frames_edited_in_place_reach_no_later_load():
    first = load_lifelong_digits(probabilities=False)
    family = first.models["family"].copy()
    first.models["family"] = 0
    first.items.drop(columns="domain", inplace=True)
    again = load_lifelong_digits(probabilities=False)
    assert again.values is first.values
    pd.testing.assert_series_equal(again.models["family"], family)
    assert "domain" in again.items


def test_items_are_held_out_test_images(bench):
    info = digits.artifact_info()
    images, target, train, test = build._split(info["seed"], info["n_test"])
    src = np.unique(bench.items["source_image"])
    np.testing.assert_array_equal(src, test)
    assert np.intersect1d(src, train).size == 0
    np.testing.assert_array_equal(bench.labels, target[bench.items["source_image"].to_numpy()])


def test_probabilities_valid_and_correctness_consistent(bench):
    p = bench.probabilities
    assert p.min() >= 0 and p.max() <= 1
    np.testing.assert_allclose(p.sum(axis=2), 1.0, atol=1e-5)
    # multiples of 1/15 (the stored 4-bit counts)
    np.testing.assert_allclose(p[:5] * 15, np.rint(p[:5] * 15), atol=1e-4)
    np.testing.assert_array_equal(p.argmax(axis=2) == bench.labels[None, :], bench.values)


def test_accuracy_spread_on_clean_items(bench_binary):
    bench = bench_binary
    clean = bench.subset(items=(bench.items["domain"] == "clean").to_numpy())
    acc = clean.accuracy()
    assert acc.min() < 0.3  # near chance (10 classes)
    assert acc.max() > 0.95
    # shifted domains are harder on average
    assert bench.accuracy().mean() < acc.mean() - 0.1


def test_release_dates_track_capability(bench_binary):
    bench = bench_binary
    dates = bench.models["release_date"].to_numpy().astype("datetime64[D]").astype(float)
    rho = stats.spearmanr(dates, bench.accuracy().to_numpy())[0]
    assert 0.8 < rho < 1.0  # monotone-ish, with noise
    split = chronological_split(bench, bench.models["release_date"].quantile(0.8))
    src, tgt = split.apply(bench.subset(items=slice(0, 800)))
    assert tgt.accuracy().mean() > src.accuracy().mean()


def _small(seed):
    return make_lifelong_digits(seed, n_models=3, domains=["gauss_0.20", "rotate_+15"], n_test=60)


def test_determinism_under_a_seed():
    a, b, c = _small(3), _small(3), _small(4)
    assert a.shape == (3, 180)
    np.testing.assert_array_equal(a.probabilities, b.probabilities)
    np.testing.assert_array_equal(a.values, b.values)
    assert a.models.equals(b.models) and a.items.equals(b.items)
    assert not np.array_equal(a.probabilities, c.probabilities)
    assert list(a.items["domain"].unique()) == ["clean", "gauss_0.20", "rotate_+15"]


def test_parallel_build_equals_serial_build():
    kw = dict(n_models=4, models=[0, 3], domains=["blur_0.8"], n_test=40)
    serial = make_lifelong_digits(5, n_jobs=1, **kw)
    parallel = make_lifelong_digits(5, n_jobs=2, **kw)
    np.testing.assert_array_equal(serial.probabilities, parallel.probabilities)
    assert serial.models.equals(parallel.models)


def test_artifact_rows_are_reproduced_by_the_code(bench):
    """Rebuild a few models of the committed zoo from scratch: their rows must match exactly."""
    info = digits.artifact_info()
    m = bench.models
    cost = (m["n_train"] * (1 + m["n_augmented"])).to_numpy()
    rows = []
    for fam in ["logistic", "knn", "decision_tree", "gaussian_nb", "mlp"]:
        # the family's member with the largest training set among the cheap half (fast, still non-trivial)
        pos = np.flatnonzero(m["family"].to_numpy() == fam)
        pos = pos[cost[pos] <= np.median(cost[pos])]
        rows.append(int(pos[np.argmax(cost[pos])]))
    zoo = bench.models["zoo_index"].to_numpy()[rows]
    rebuilt = make_lifelong_digits(info["seed"], n_models=info["n_models_zoo"], models=zoo, n_test=info["n_test"])
    ref_values = bench.values[rows]
    ref_proba = bench.probabilities[rows]
    np.testing.assert_array_equal(rebuilt.model_ids, bench.model_ids[rows])
    np.testing.assert_array_equal(rebuilt.item_ids, bench.item_ids)
    for col in ["family", "params", "n_train", "augmentation"]:
        np.testing.assert_array_equal(rebuilt.models[col].to_numpy(), bench.models[col].to_numpy()[rows])
    if info.get("versions") == _versions():
        # same numpy / scipy / scikit-learn as the build: bit-for-bit
        np.testing.assert_array_equal(rebuilt.probabilities, ref_proba)
        np.testing.assert_array_equal(rebuilt.values, ref_values)
        np.testing.assert_array_equal(rebuilt.models["release_date"].to_numpy(),
                                      bench.models["release_date"].to_numpy()[rows])
    else:
        # other library releases may move a few near-ties; the models must still be the same models
        assert (rebuilt.values == ref_values).mean() > 0.98
        assert np.abs(rebuilt.probabilities - ref_proba).mean() < 0.02


def _versions():
    import scipy
    import sklearn

    return {"numpy": np.__version__, "scipy": scipy.__version__, "sklearn": sklearn.__version__}


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.data_too_large, HealthCheck.filter_too_much])
@given(st.lists(st.integers(0, 6), min_size=10, max_size=10).filter(lambda v: sum(v) > 0), st.integers(0, 10_000))
def test_quantiser_keeps_sum_and_argmax(weights, seed):
    # integer weights make exact ties common; jitter some rows to test generic values
    w = np.array(weights, float)
    rows = np.vstack([w, w + np.random.default_rng(seed).random(10) * 0.3])
    p = rows / rows.sum(1, keepdims=True)
    q = build._quantise(p)
    assert (q.sum(1) == 15).all()
    np.testing.assert_array_equal(q.argmax(1), p.argmax(1))
    assert np.abs(q / 15 - p).max() <= 2 / 15 + 1e-12
    np.testing.assert_array_equal(_digits_format._unpack_codes(_digits_format._pack_codes(q)), q)


@pytest.mark.parametrize(
    "kwargs, arg",
    [
        (dict(rng=-1), "rng"),
        (dict(rng=np.random.default_rng(0)), "rng"),
        (dict(n_models=0), "n_models"),
        (dict(n_models=5, models=[7]), "models"),
        (dict(n_models=5, models=[]), "models"),
        (dict(domains=["fog"]), "domains"),
        (dict(domains=0), "domains"),
        (dict(n_test=5), "n_test"),
        (dict(n_jobs=0), "n_jobs"),
    ],
)
def test_bad_input_names_the_argument(kwargs, arg):
    with pytest.raises(ValueError, match=f"^{arg}"):
        make_lifelong_digits(**kwargs)


def test_loader_and_builder_share_the_public_names():
    """``make_lifelong_digits``, ``DOMAINS`` and ``FAMILIES`` live in the builder and are reachable from the
    loader module and from :mod:`effstats.datasets`."""
    import effstats.datasets as ds

    assert digits.make_lifelong_digits is build.make_lifelong_digits is ds.make_lifelong_digits
    assert digits.DOMAINS is build.DOMAINS and digits.FAMILIES is build.FAMILIES
    assert list(build.DOMAINS)[0] == "clean" and len(build.DOMAINS) == 38
    with pytest.raises(AttributeError):
        digits.no_such_name


def test_missing_artifact_path_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match="^path"):
        load_lifelong_digits(tmp_path / "nope.npz")


def test_an_artifact_rewritten_at_the_same_path_is_read_again(tmp_path):
    import os
    import shutil

    from effstats.datasets import digits

    p = tmp_path / "copy.npz"
    shutil.copy(digits.ARTIFACT, p)
    first = digits.load_lifelong_digits(p, probabilities=False)
    assert digits.load_lifelong_digits(p, probabilities=False).values is first.values  # read once per version
    st = p.stat()
    with np.load(p, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["correct_packed"] = np.invert(arrays["correct_packed"])
    np.savez(tmp_path / "new.npz", **arrays)
    os.replace(tmp_path / "new.npz", p)
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))  # as cp -p, rsync -a and tar x keep it
    again = digits.load_lifelong_digits(p, probabilities=False)
    assert again.values is not first.values and bool((again.values != first.values).any())
