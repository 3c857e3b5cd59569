"""Loaders of released per-item predictions: the extracted archives beside the checkout and the original release
layouts."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from effstats.datasets import data_root, load_alpacaeval, load_cifar10_predictions, load_imagenet_predictions
from effstats.datasets import predictions as P

try:
    ROOT = data_root()
except FileNotFoundError:  # the data live beside the checkout, not in the repository
    ROOT = None
needs_data = pytest.mark.skipif(ROOT is None, reason="shared/data/predictions not found beside the checkout")


# ----------------------------------------------------------------------------------------------------- ImageNet
@needs_data
def test_imagenet_shape_labels_and_published_resnet50():
    rm = load_imagenet_predictions()
    assert rm.shape == (67, 80_000)
    assert rm.kind == "binary" and rm.missing is None
    assert rm.items["domain"].value_counts().to_dict() == {
        "imagenet_val": 50_000,
        "imagenetv2_matched_frequency": 10_000,
        "imagenetv2_threshold0.7": 10_000,
        "imagenetv2_top_images": 10_000,
    }
    assert rm.predictions.shape == (67, 80_000) and rm.labels.shape == (80_000,)
    np.testing.assert_array_equal(rm.values, rm.predictions == rm.labels[None, :])
    acc = rm.group_scores("domain")
    assert round(acc.loc["resnet50", "imagenet_val"], 4) == 0.7613  # torchvision's published 76.13 %
    assert round(acc.loc["alexnet", "imagenet_val"], 4) == 0.5652
    assert rm.item_ids.is_unique and rm.item_ids[0].startswith("imagenet_val/ILSVRC2012_val_")
    assert set(np.unique(rm.labels)) == set(range(1000))


@needs_data
def test_imagenet_accuracy_matches_the_release_summary_tables():
    rm = load_imagenet_predictions()
    acc = rm.group_scores("domain")
    for dom in P.IMAGENET_DOMAINS:
        ref = pd.read_csv(ROOT / "imagenet" / f"{dom}_model_accuracy.csv", index_col="model")
        np.testing.assert_allclose(acc[dom].loc[ref.index], ref["top1"], atol=1e-12)


@needs_data
def test_imagenet_top5_predictions_and_correctness():
    dom = "imagenetv2_matched_frequency"
    r5 = load_imagenet_predictions(domains=dom, top5=True, correct="top5")
    r1 = load_imagenet_predictions(domains="imagenetv2-b-33")  # release name as alias
    assert r5.predictions.shape == (67, 10_000, 5)
    np.testing.assert_array_equal(r5.predictions[:, :, 0], r1.predictions)
    ref = pd.read_csv(ROOT / "imagenet" / f"{dom}_model_accuracy.csv", index_col="model")
    np.testing.assert_allclose(r5.accuracy().loc[ref.index], ref["top5"], atol=1e-12)
    stored = load_imagenet_predictions(domains=dom, correct="top5")  # the archives' own top-5 correctness
    assert stored.predictions.ndim == 2
    np.testing.assert_array_equal(stored.values, r5.values)
    # the ranked ids of one image are distinct classes
    assert (np.diff(np.sort(r5.predictions[:, :100], axis=2), axis=2) > 0).all()


@needs_data
def test_imagenet_duplicates_and_baselines_flagged():
    rm = load_imagenet_predictions(domains="imagenet_val")
    m = rm.models
    dups = m.index[m["is_duplicate"]]
    assert len(dups) == 8 and set(m.loc[dups, "duplicate_of"]) <= set(m.index)
    assert m.loc["inceptionv4", "duplicate_of"] == "inception_v4_tf"
    assert m.loc["inception_v4_tf", "framework"] == "tensorflow" and m.loc["fv_4k", "family"] == "fisher_vector"
    # the model whose top-1 classes agree most with a port's is its original (or another port of the same weights)
    ids = list(rm.model_ids)
    for port, orig in m.loc[dups, "duplicate_of"].items():
        agree = (rm.predictions[ids.index(port)][None, :] == rm.predictions).mean(1)
        agree[ids.index(port)] = -1
        best = ids[int(np.argmax(agree))]
        assert best == orig or m.loc[best, "duplicate_of"] == orig, (port, best)
        assert agree[ids.index(orig)] > 0.84
    assert load_imagenet_predictions(domains="imagenet_val", drop_duplicates=True).n_models == 59
    assert load_imagenet_predictions(domains="imagenet_val", drop_fisher_vectors=True).n_models == 64
    sub = load_imagenet_predictions(domains="imagenet_val", models=["resnet50", "alexnet"])
    assert list(sub.model_ids) == ["resnet50", "alexnet"]


@needs_data
@pytest.mark.parametrize(
    "kw, name",
    [
        ({"domains": "imagenet_test"}, "domains"),
        ({"domains": ["imagenet_val", "val"]}, "domains"),
        ({"correct": "top3"}, "correct"),
        ({"top5": "yes"}, "top5"),
        ({"models": ["resnet50", "gpt-5"]}, "models"),
    ],
)
def test_imagenet_bad_arguments_name_the_argument(kw, name):
    with pytest.raises(ValueError, match=f"^{name}:"):
        load_imagenet_predictions(**kw)


# ----------------------------------------------------------------------------------------------------- CIFAR-10
@needs_data
def test_cifar10_shape_and_published_wrn():
    rm = load_cifar10_predictions()
    assert rm.shape == (30, 14_021)
    assert rm.items["domain"].value_counts().to_dict() == {"cifar10": 10_000, "cifar10.1_v4": 2_021,
                                                           "cifar10.1_v6": 2_000}
    acc = rm.group_scores("domain")
    assert round(acc.loc["wrn_28_10", "cifar10"], 4) == 0.9593
    assert round(acc.loc["alexnet_tf_ben", "cifar10"], 4) == 0.8198
    np.testing.assert_array_equal(rm.labels[:10], [3, 8, 8, 0, 6, 6, 1, 6, 3, 1])  # the public test labels
    for dom, stem in [("cifar10", "cifar10_test"), ("cifar10.1_v4", "cifar10.1_v4"), ("cifar10.1_v6", "cifar10.1_v6")]:
        ref = pd.read_csv(ROOT / "cifar10" / f"{stem}_model_accuracy.csv", index_col="model")
        np.testing.assert_allclose(acc[dom].loc[ref.index], ref["acc"], atol=1e-12)
    assert rm.models.loc["wrn_28_10", "family"] == "wide_resnet"
    assert rm.models.loc["densenet_BC_100_12", "family"] == "densenet"
    v6 = load_cifar10_predictions(domains="v6")
    assert v6.shape == (30, 2_000) and (v6.accuracy() < rm.subset(items=rm.items.domain == "cifar10").accuracy()).all()


# ----------------------------------------------------------------------------------------------------- AlpacaEval
@needs_data
def test_alpacaeval_shape_missing_and_exclusions():
    raw = np.load(ROOT / "alpacaeval" / "alpacaeval2_weighted_gpt4turbo.npz")
    full = load_alpacaeval(exclude=None)
    assert full.shape == (58, 805) and full.kind == "score"
    nan = np.isnan(raw["p_win"])
    assert nan.sum() == 10
    np.testing.assert_array_equal(full.missing, nan)  # not-evaluated cells are missing ...
    assert np.isfinite(full.values).all()  # ... never NaN scores
    np.testing.assert_allclose(full.values[~nan], raw["p_win"][~nan], rtol=0, atol=0)
    summary = pd.read_csv(ROOT / "alpacaeval" / "model_summary.csv", index_col="model")
    np.testing.assert_allclose(full.accuracy().loc[summary.index], summary["mean_p_win"], atol=1e-6)

    rm = load_alpacaeval()
    assert rm.shape == (56, 805)
    assert not {"gpt4_1106_preview", "NullModel"} & set(rm.model_ids)
    assert full.models.loc["gpt4_1106_preview", "is_reference"] and full.models.loc["NullModel", "is_null_model"]
    assert rm.models.loc["claude-2.1_concise", "variant"] == "concise" and rm.models.loc["claude-2.1",
                                                                                         "family"] == "claude"

    win = load_alpacaeval(outcome="win", exclude=None)
    assert win.kind == "binary"
    np.testing.assert_array_equal(win.values[~nan], raw["p_win"][~nan] > 0.5)
    np.testing.assert_array_equal(win.missing, nan)
    # the published win rate counts a missing judgement as no win
    np.testing.assert_allclose(win.values.sum(1) / 805, summary.loc[win.model_ids, "win_rate"], atol=1e-12)
    assert rm.items["dataset"].value_counts()["selfinstruct"] == 252
    with pytest.raises(ValueError, match="^outcome:"):
        load_alpacaeval(outcome="tie")
    named = load_alpacaeval(models=["NullModel", "claude-2"])  # explicitly named models are kept
    assert list(named.model_ids) == ["NullModel", "claude-2"]
    with pytest.raises(ValueError, match="^models:"):
        load_alpacaeval(models=["claude-2", "claude-2"])


# ----------------------------------------------------------------------------------------------------- data root
def test_data_root_order_and_errors(tmp_path, monkeypatch):
    with pytest.raises(FileNotFoundError, match="root"):
        data_root(tmp_path / "nope")
    (tmp_path / "predictions").mkdir()
    assert data_root(tmp_path) == tmp_path / "predictions"  # a data/ folder holding predictions/ is descended into
    monkeypatch.setenv("EFFSTATS_DATA", str(tmp_path))
    assert data_root() == tmp_path / "predictions"
    assert data_root(tmp_path / "predictions") == tmp_path / "predictions"  # the argument wins
    monkeypatch.setenv("EFFSTATS_DATA", str(tmp_path / "missing"))
    with pytest.raises(FileNotFoundError, match="EFFSTATS_DATA"):
        data_root()
    monkeypatch.delenv("EFFSTATS_DATA")
    monkeypatch.setattr(P, "_candidates", lambda: [tmp_path / "a", tmp_path / "b"])
    with pytest.raises(FileNotFoundError, match="ImageNetV2.*EFFSTATS_DATA"):
        data_root()
    with pytest.raises(FileNotFoundError, match="root:"):
        load_imagenet_predictions(root=tmp_path / "predictions")  # exists but holds nothing known


def test_default_candidates_point_beside_the_checkout():
    import effstats
    from pathlib import Path

    first = P._candidates()[0]
    assert first == Path(effstats.__file__).resolve().parents[2] / "shared" / "data" / "predictions"


# ----------------------------------------------------------------------------------------------------- original release
# layouts
WNIDS = ["n01440764", "n01443537", "n01484850", "n01491361", "n01494475", "n01496331", "n01498041"]


def _write_imagenetv2(root, rng):
    """A tiny ImageNetV2 checkout: 7 classes, 6 val images, 4 images in imagenetv2-b-33, 4 models."""
    (root / "data" / "metadata").mkdir(parents=True)
    (root / "data" / "metadata" / "class_info.json").write_text(
        json.dumps([{"cid": i, "wnid": w, "synset": [f"c{i}"], "gloss": ""} for i, w in enumerate(WNIDS)])
    )
    sets = {
        "imagenet-validation-original": [[f"ILSVRC2012_val_{i:08d}.JPEG", WNIDS[i % 7]] for i in range(1, 7)],
        "imagenetv2-b-33": [[f"{h:040x}", WNIDS[(3 * h) % 7]] for h in range(4)],
    }
    (root / "data" / "datasets").mkdir()
    preds = {}
    for ds, fn in sets.items():
        (root / "data" / "datasets" / f"{ds}.json").write_text(json.dumps({"seed": 1, "image_filenames": fn}))
        (root / "data" / "predictions" / ds).mkdir(parents=True)
        for m in ["resnet50", "inceptionv4", "inception_v4_tf", "fv_16k"]:
            top5 = np.stack([rng.permutation(7)[:5] for _ in fn]).astype(np.int64)
            fname = "fv_16k_model" if (m == "fv_16k" and ds != "imagenet-validation-original") else m  # release quirk
            np.save(root / "data" / "predictions" / ds / f"{fname}.npy", top5)
            preds[(ds, m)] = top5
    return sets, preds


def test_imagenetv2_release_layout(tmp_path):
    rng = np.random.default_rng(0)
    sets, preds = _write_imagenetv2(tmp_path, rng)
    rm = load_imagenet_predictions(root=tmp_path, domains=["imagenet_val", "imagenetv2_matched_frequency"], top5=True)
    assert rm.shape == (4, 10) and list(rm.model_ids) == sorted(["resnet50", "inceptionv4", "inception_v4_tf",
                                                                 "fv_16k"])
    labels = [WNIDS.index(w) for ds in sets for _, w in sets[ds]]
    np.testing.assert_array_equal(rm.labels, labels)
    for i, m in enumerate(rm.model_ids):
        val = preds[("imagenet-validation-original", m)]
        v2 = preds[("imagenetv2-b-33", m)]
        if m == "fv_16k":
            v2 = v2[:, ::-1]  # stored worst-to-best in the release; the reader restores best-first
        np.testing.assert_array_equal(rm.predictions[i], np.concatenate([val, v2]))
    np.testing.assert_array_equal(rm.values, rm.predictions[:, :, 0] == rm.labels)
    assert rm.item_ids[0] == "imagenet_val/ILSVRC2012_val_00000001.JPEG"
    assert rm.models.loc["inceptionv4", "duplicate_of"] == "inception_v4_tf"
    top5 = load_imagenet_predictions(root=tmp_path, domains="imagenet_val", correct="top5")
    np.testing.assert_array_equal(top5.values, (rm.predictions[:, :6] == rm.labels[None, :6, None]).any(2))
    assert top5.predictions.ndim == 2
    with pytest.raises(FileNotFoundError, match="domains"):
        load_imagenet_predictions(root=tmp_path, domains="imagenetv2_threshold0.7")


def _write_cifar101(root, rng, n=(8, 5, 4)):
    models = ["wrn_28_10", "resnet_basic_32", "vgg_15_BN_64"]
    preds, labels = {}, {}
    for split, size in zip(["original", "v4", "v6"], n):
        d = root / "model_predictions" / f"{split}_predictions"
        d.mkdir(parents=True)
        labels[split] = rng.integers(0, 10, size)
        for m in models:
            p = np.where(rng.random(size) < 0.7, labels[split], rng.integers(0, 10, size))
            (d / f"{m}_predictions.json").write_text(json.dumps(p.tolist(), indent=2))
            preds[(split, m)] = p
    (root / "datasets").mkdir()
    for split in ["v4", "v6"]:
        np.save(root / "datasets" / f"cifar10.1_{split}_labels.npy", labels[split].astype(np.uint8))
    return models, preds, labels


def test_cifar101_release_layout(tmp_path):
    rng = np.random.default_rng(1)
    models, preds, labels = _write_cifar101(tmp_path, rng)
    rm = load_cifar10_predictions(root=tmp_path, cifar10_labels=labels["original"])
    assert rm.shape == (3, 17) and list(rm.model_ids) == sorted(models)
    want = np.stack([np.concatenate([preds[(s, m)] for s in ["original", "v4", "v6"]]) for m in rm.model_ids])
    np.testing.assert_array_equal(rm.predictions, want)
    np.testing.assert_array_equal(rm.labels, np.concatenate([labels[s] for s in ["original", "v4", "v6"]]))
    np.testing.assert_array_equal(rm.values, want == rm.labels)
    assert list(rm.items["domain"].unique()) == ["cifar10", "cifar10.1_v4", "cifar10.1_v6"]
    only_v = load_cifar10_predictions(root=tmp_path, domains=["cifar10.1_v4", "cifar10.1_v6"])
    assert only_v.shape == (3, 9)
    np.save(tmp_path / "c10.npy", labels["original"])
    assert load_cifar10_predictions(root=tmp_path, domains="cifar10", cifar10_labels=tmp_path / "c10.npy").shape == (3,
                                                                                                                     8)
    with pytest.raises(ValueError, match="cifar10_labels"):
        load_cifar10_predictions(root=tmp_path, cifar10_labels=[0.5] * 8)
    with pytest.raises(ValueError, match="domains"):
        load_cifar10_predictions(root=tmp_path, cifar10_labels=labels["original"][:5])


def _write_alpaca(root, prefs):
    for m, ps in prefs.items():
        d = root / "results" / m / P.ALPACAEVAL_ANNOTATOR
        d.mkdir(parents=True)
        recs = [
            {
                "instruction": f"instruction {i}",
                "output_1": "reference answer",
                "generator_1": "gpt4_1106_preview",
                "dataset": "helpful_base" if i < 2 else "koala",
                "output_2": f"{m} answer",
                "generator_2": m,
                "annotator": P.ALPACAEVAL_ANNOTATOR,
                "preference": p,
            }
            for i, p in enumerate(ps)
        ]
        (d / "annotations.json").write_text(json.dumps(recs))


def test_alpacaeval_release_layout(tmp_path):
    prefs = {
        "gpt4_1106_preview": [1.5, 1.5, 1.5, 1.5],
        "model-a": [1.9, 1.2, None, 1.51],
        "model-b": [1.0, 2.0, 1.25, 1.5],
    }
    _write_alpaca(tmp_path, prefs)
    rm = load_alpacaeval(root=tmp_path)
    assert list(rm.model_ids) == ["model-a", "model-b"] and rm.shape == (2, 4)
    assert rm.missing is not None and rm.missing.tolist() == [[False, False, True, False], [False] * 4]
    np.testing.assert_allclose(rm.values_with_nan(), [[0.9, 0.2, np.nan, 0.51], [0.0, 1.0, 0.25, 0.5]])
    assert list(rm.items["dataset"]) == ["helpful_base", "helpful_base", "koala", "koala"]
    win = load_alpacaeval(root=tmp_path, outcome="win", exclude=None)
    assert win.shape == (3, 4)
    np.testing.assert_array_equal(win.values[2], [False, True, False, False])  # 0.5 is not a win
    _write_alpaca(tmp_path / "bad", {"model-c": [1.5, 3.0]})
    with pytest.raises(ValueError, match="preference"):
        load_alpacaeval(root=tmp_path / "bad")
    with pytest.raises(FileNotFoundError, match="annotator"):
        load_alpacaeval(root=tmp_path, annotator="alpaca_eval_gpt4")



def test_a_data_file_replaced_with_its_modification_time_kept_is_read_again(tmp_path):
    import os

    from effstats.datasets import predictions

    f = tmp_path / "a.npz"
    np.savez(f, x=np.array([1.0, 2.0]))
    st = f.stat()
    assert predictions._load_npz(f)["x"].tolist() == [1.0, 2.0]
    np.savez(tmp_path / "b.npz", x=np.array([3.0, 4.0]))
    os.replace(tmp_path / "b.npz", f)
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))  # as cp -p, rsync -a and tar x keep it
    assert f.stat().st_mtime_ns == st.st_mtime_ns
    assert predictions._load_npz(f)["x"].tolist() == [3.0, 4.0]
    j = tmp_path / "a.json"
    j.write_text("[1]")
    st = j.stat()
    assert predictions._load_json(j) == [1]
    (tmp_path / "b.json").write_text("[2]")
    os.replace(tmp_path / "b.json", j)
    os.utime(j, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert predictions._load_json(j) == [2]
