"""Bundled leaderboard tables: shapes, missing cells, exact published values, provenance."""
from __future__ import annotations

import csv
import gzip
import hashlib
import io
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import effstats.datasets as ds

DATA = resources.files("effstats.datasets").joinpath("data", "leaderboards")
SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "leaderboards"


def _raw_rows(rel: str) -> list[list[str]]:
    blob = DATA.joinpath(*rel.split("/")).read_bytes()
    if rel.endswith(".gz"):
        blob = gzip.decompress(blob)
    return list(csv.reader(io.StringIO(blob.decode("utf-8")), delimiter="\t"))


def test_helm_shape_missing_and_exact_values():
    rm = ds.load_helm()
    assert rm.shape == (67, 16) and rm.kind == "score"
    rows = _raw_rows("helm/accuracy.tsv")
    header, body = rows[0], rows[1:]
    assert header[:2] == ["Model/adapter", "Mean win rate"] and len(body) == 67
    dashes = np.array([[c == "-" for c in r[2:]] for r in body])  # parsed independently of pandas
    assert dashes.sum() == 196
    np.testing.assert_array_equal(rm.missing, dashes)
    f = rm.to_frame()
    assert f.loc["Llama 2 (70B)", "MMLU"] == 0.582
    assert f.loc["text-davinci-002", "HellaSwag"] == 0.815
    assert f.loc["Cohere Command beta (52.4B)", "MS MARCO (TREC)"] == 0.762
    assert np.isnan(f.loc["Llama 2 (70B)", "HellaSwag"])
    assert rm.models.loc["Llama 2 (70B)", "mean_win_rate"] == 0.944
    assert rm.models.loc["Llama 2 (70B)", "size"] == 70e9 and rm.models.loc["Cohere Command beta (52.4B)",
                                                                            "size"] == 52.4e9
    assert np.isnan(rm.models.loc["text-davinci-002", "size"]) and rm.models["size"].notna().sum() == 60
    assert rm.items.loc["MS MARCO (TREC)", "metric"] == "NDCG@10" and rm.items.loc["XSUM", "metric"] == "ROUGE-2"
    assert list(rm.item_ids) == [h.rpartition(" - ")[0] for h in header[2:]]


def test_helm_as_frame_is_the_tidy_table_of_evaluated_cells():
    long = ds.load_helm(as_frame=True)
    assert len(long) == 67 * 16 - 196 and not long["score"].isna().any()
    assert {"model", "item", "score", "scenario", "metric", "model_mean_win_rate"} <= set(long.columns)
    wide = long.pivot(index="model", columns="item", values="score")
    rm = ds.load_helm()
    pd.testing.assert_frame_equal(
        wide.loc[rm.model_ids, rm.item_ids], rm.to_frame(), check_names=False, check_index_type=False,
        check_column_type=False
    )
    with pytest.raises(ValueError, match="^as_frame:"):
        ds.load_helm(as_frame="yes")


def test_helm_lite():
    rm = ds.load_helm_lite()
    assert rm.shape == (91, 10)
    assert rm.missing.sum() == 1 and rm.model_ids[rm.missing.any(1)].tolist() == ["Phi-3 (7B)"]
    assert rm.to_frame().loc["GPT-4o (2024-05-13)", "NarrativeQA"] == 0.804
    assert rm.items.loc["WMT 2014", "metric"] == "BLEU-4"
    assert rm.models.loc["Claude 3.5 Sonnet (20240620)", "release_date"] == pd.Timestamp("2024-06-20")
    assert rm.models.loc["GPT-4o (2024-05-13)", "release_date"] == pd.Timestamp("2024-05-13")
    assert pd.isna(rm.models.loc["DeepSeek v3", "release_date"])


def test_openllm_percent_rescaled_and_duplicate_ids():
    rm = ds.load_openllm()
    assert rm.shape == (100, 6) and rm.missing is None and rm.model_ids.is_unique
    assert rm.to_frame().loc["cloudyu/Yi-34Bx2-MoE-60B", "ARC"] == pytest.approx(0.7108, abs=1e-12)
    second = rm.models[rm.models["occurrence"] == 2]
    assert len(second) == 13 and all(i == f"{n}#2" for i, n in zip(second.index, second["name"]))
    # the second Mixtral_34Bx2 row is the third row of the table (rank order)
    assert rm.model_ids[2] == "cloudyu/Mixtral_34Bx2_MoE_60B#2"
    # the published average is the mean of the six tasks (rounded to 0.01 percent point)
    np.testing.assert_allclose(rm.values.mean(1), rm.models["average"], atol=1e-4)
    assert set(rm.models["model_type"]) == {"pretrained", "fine-tuned", "instruction-tuned", "RL-tuned"}
    first = ds.load_openllm(duplicates="first")
    assert first.n_models == 87 and (first.models["occurrence"] == 1).all()
    with pytest.raises(ValueError, match="^duplicates:"):
        ds.load_openllm(duplicates="mean")


def test_mmlu_subjects():
    rm = ds.load_mmlu()
    assert rm.shape == (98, 57) and rm.missing is None
    assert rm.item_ids[0] == "abstract_algebra" and rm.item_ids[-1] == "world_religions"
    assert rm.model_ids[0] == "kyujinpy/PlatYi-34B-Llama-Q"
    assert (rm.models["occurrence"] > 1).sum() == 16
    np.testing.assert_allclose(rm.values.mean(1), rm.models["average"], atol=1e-12)


def test_imagenet_per_class():
    rm = ds.load_imagenet_classes()
    assert rm.shape == (112, 1000)
    k = rm.values * 50  # 50 validation images per class
    np.testing.assert_allclose(k, np.round(k), atol=1e-9)
    np.testing.assert_allclose(rm.values.mean(1), rm.models["acc"], atol=1e-12)
    r50 = rm.models.loc["ResNet50_Weights.IMAGENET1K_V1"]
    assert r50["acc1"] == pytest.approx(0.7613) and r50["params"] == 25.6e6 and r50["architecture"] == "resnet50"
    assert np.abs(rm.models["acc"] - rm.models["acc1"]).max() < 1e-3  # re-evaluation agrees with the published top-1


def test_registry():
    table = ds.list_leaderboards()
    assert table.loc[["helm", "helm_lite", "openllm", "mmlu", "imagenet"],
                     ["n_models", "n_columns"]].to_numpy().tolist() == [
        [67, 16], [91, 10], [100, 6], [98, 57], [112, 1000]
    ]
    assert table.loc["helm", "n_missing"] == 196
    np.testing.assert_array_equal(ds.load_leaderboard("helm_classic").values, ds.load_helm().values)
    assert ds.load_leaderboard("openllm", duplicates="first").n_models == 87
    assert isinstance(ds.load_leaderboard("mmlu", as_frame=True), pd.DataFrame)
    with pytest.raises(ValueError, match="^name:"):
        ds.load_leaderboard("chatbot_arena")


def test_provenance_and_licence_ship_with_the_tables():
    prov = DATA.joinpath("PROVENANCE.md").read_text()
    assert "benchbench" in prov and DATA.joinpath("LICENSE-benchbench.txt").read_text().startswith("MIT License")
    for rel in ["helm/accuracy.tsv", "helm_lite/leaderboard.tsv", "openllm/leaderboard.tsv", "mmlu/leaderboard.tsv.gz",
                "imagenet/leaderboard.tsv.gz"]:
        blob = DATA.joinpath(*rel.split("/")).read_bytes()
        if rel.endswith(".gz"):
            blob = gzip.decompress(blob)
        digest = hashlib.sha256(blob).hexdigest()
        src = rel.removesuffix(".gz")
        assert f"{digest}  {src}" in prov  # content unchanged from the recorded source
        if SHARED.is_dir():
            assert hashlib.sha256((SHARED / src).read_bytes()).hexdigest() == digest
