"""Readers for users' own outputs: lm-evaluation-harness --log_samples JSONL and generic score CSVs.

The fixtures are written in the harness's format: one JSON record per document with doc_id, doc, target,
arguments, resps, filtered_resps (per choice [loglikelihood, is_greedy]) and the per-sample metrics. Recent
harness versions stringify the numbers (``sanitize_list``) and log ``arguments`` as ``{"gen_args_i": {"arg_j": ..}}``;
older ones log numbers and ``[[context, continuation], ...]``. Both are covered.
"""
from __future__ import annotations

import gzip
import json
import tempfile
from pathlib import Path

import hypothesis.extra.numpy as hnp
import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings
from scipy.special import softmax

from effstats import ResponseMatrix
from effstats.datasets import read_lm_eval_samples, read_scores_csv

CHOICES = {
    "arc_easy": [["a cat", "dogs", "the elephant", "x"]] * 6,
    "hellaswag": [["runs away quickly", "sits", "jumps over the fence"]] * 5,
}


def _records(task, rng, new_format=True, text_target=False, with_acc=True):
    """Harness-like records with known loglikelihoods; acc / acc_norm computed as the harness does."""
    out, truth = [], []
    for doc_id, choices in enumerate(CHOICES[task]):
        ll = rng.normal(-2.0 * np.array([len(c) for c in choices]) / 4, 1.0)
        gold = doc_id % len(choices)  # the same documents for every model
        acc = float(np.argmax(ll) == gold)
        acc_norm = float(np.argmax(ll / np.array([len(c) for c in choices])) == gold)
        conts = [" " + c for c in choices]  # the harness prepends target_delimiter to each choice
        greedy = [False] * len(choices)
        if new_format:
            arguments = {f"gen_args_{i}": {"arg_0": f"Question {doc_id}:", "arg_1": c} for i, c in enumerate(conts)}
            resps = [[[str(v), str(g)]] for v, g in zip(ll, greedy)]
            filtered = [[str(v), str(g)] for v, g in zip(ll, greedy)]
        else:
            arguments = [[f"Question {doc_id}:", c] for c in conts]
            resps = [[[float(v), g]] for v, g in zip(ll, greedy)]
            filtered = [[float(v), g] for v, g in zip(ll, greedy)]
        rec = {
            "doc_id": doc_id,
            "doc": {"query": f"Question {doc_id}:", "choices": choices, "gold": gold},
            "target": choices[gold] if text_target else str(gold),
            "arguments": arguments,
            "resps": resps,
            "filtered_resps": filtered,
            "filter": "none",
            "metrics": ["acc", "acc_norm"],
            "doc_hash": "0" * 64,
            "prompt_hash": "1" * 64,
            "target_hash": "2" * 64,
        }
        if with_acc:
            rec.update(acc=acc, acc_norm=acc_norm)
        out.append(rec)
        truth.append((ll, gold, acc, acc_norm))
    return out, truth


def _write(path, records):
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(r) + "\n" for r in records)
    if path.name.endswith(".gz"):
        with gzip.open(path, "wt", encoding="utf-8") as fh:
            fh.write(text)
    else:
        path.write_text(text)


TS = "2024-05-01T12-00-00.123456"


@pytest.fixture()
def run_dir(tmp_path):
    """Two models; model B did not run hellaswag."""
    rng = np.random.default_rng(0)
    truth = {}
    for model, tasks in {"EleutherAI__pythia-160m": ["arc_easy", "hellaswag"], "org__model-b": ["arc_easy"]}.items():
        for task in tasks:
            recs, t = _records(task, rng)
            _write(tmp_path / "out" / model / f"samples_{task}_{TS}.jsonl", recs)
            truth[(model.replace("__", "/"), task)] = t
    return tmp_path / "out", truth


def test_lm_eval_correctness_probabilities_and_labels(run_dir):
    out, truth = run_dir
    rm = read_lm_eval_samples(out)
    assert list(rm.model_ids) == ["EleutherAI/pythia-160m", "org/model-b"]
    assert rm.shape == (2, 11) and rm.kind == "binary"
    assert rm.item_ids[0] == "arc_easy/0" and rm.item_ids[-1] == "hellaswag/4"
    assert rm.items["task"].value_counts().to_dict() == {"arc_easy": 6, "hellaswag": 5}
    assert rm.missing.sum() == 5 and rm.missing[1, 6:].all()  # model B has no hellaswag
    assert rm.models.loc["EleutherAI/pythia-160m", "n_tasks"] == 2
    for i, m in enumerate(rm.model_ids):
        for j, (task, doc) in enumerate(zip(rm.items["task"], rm.items["doc_id"])):
            if (m, task) not in truth:
                continue
            ll, gold, acc, _ = truth[(m, task)][doc]
            assert rm.values[i, j] == acc and rm.labels[j] == gold
            np.testing.assert_allclose(rm.probabilities[i, j, : len(ll)], softmax(ll), rtol=1e-12)
            assert (rm.probabilities[i, j, len(ll):] == 0).all()  # hellaswag has 3 of 4 choices
    # where not evaluated the distribution is uniform over the item's own choices
    np.testing.assert_allclose(rm.probabilities[1, 6], [1 / 3, 1 / 3, 1 / 3, 0])
    # acc is the arg-max of the raw loglikelihoods
    obs = rm.observed
    np.testing.assert_array_equal((rm.probabilities.argmax(2) == rm.labels)[obs], rm.values[obs])


def test_lm_eval_acc_norm_is_reproduced_by_length_normalised_probabilities(run_dir):
    out, truth = run_dir
    rm = read_lm_eval_samples(out, metric="acc_norm")
    expected = [truth[("EleutherAI/pythia-160m", t)][d][3] for t, d in zip(rm.items["task"], rm.items["doc_id"])]
    np.testing.assert_array_equal(rm.values[0], expected)
    # normalising by choice length (without the delimiter) makes the arg-max agree with the harness's acc_norm
    obs = rm.observed
    np.testing.assert_array_equal((rm.probabilities.argmax(2) == rm.labels)[obs], rm.values[obs])
    assert not np.array_equal(rm.values, read_lm_eval_samples(out, metric="acc").values)
    raw = read_lm_eval_samples(out, metric="acc_norm", normalize=False)
    np.testing.assert_array_equal(raw.probabilities, read_lm_eval_samples(out).probabilities)


def test_lm_eval_old_format_gzip_mapping_and_recomputed_acc(tmp_path):
    rng = np.random.default_rng(3)
    recs, truth = _records("arc_easy", rng, new_format=False, text_target=True, with_acc=False)
    f = tmp_path / "run" / "samples_arc_easy.jsonl.gz"
    _write(f, recs)
    rm = read_lm_eval_samples({"my-model": f})
    assert list(rm.model_ids) == ["my-model"] and rm.shape == (1, 6)
    np.testing.assert_array_equal(rm.labels, [g for _, g, _, _ in truth])  # gold from the text target
    np.testing.assert_array_equal(rm.values[0], [a for _, _, a, _ in truth])  # acc recomputed (not logged)
    np.testing.assert_allclose(rm.probabilities[0, 2], softmax(truth[2][0]))


def test_lm_eval_generation_task_filters_and_runs(tmp_path):
    def gen(doc_id, filt, em):
        return {"doc_id": doc_id, "doc": {"question": "?"}, "target": "4", "arguments": {"gen_args_0": {"arg_0": "2+2=", "arg_1": {"until": ["\n"]}}},
                "resps": [["4"]], "filtered_resps": ["4" if em else "5"], "filter": filt, "metrics": ["exact_match"], "exact_match": em}

    recs = [gen(i, f, float(i % 2 == 0 or f == "flexible-extract")) for f in ["strict-match", "flexible-extract"] for i in range(4)]
    _write(tmp_path / "m" / f"samples_gsm8k_{TS}.jsonl", recs)
    with pytest.raises(ValueError, match="^filter:"):
        read_lm_eval_samples(tmp_path, metric="exact_match")
    rm = read_lm_eval_samples(tmp_path, metric="exact_match", filter="strict-match")
    assert rm.probabilities is None and rm.values.tolist() == [[True, False, True, False]]
    assert (rm.items["n_choices"] == 0).all()  # generated text "4" is not a loglikelihood
    assert read_lm_eval_samples(tmp_path, metric="exact_match", filter="flexible-extract").values.all()
    # a later run of the same task replaces the earlier one
    _write(tmp_path / "m" / "samples_gsm8k_2025-01-01T00-00-00.000001.jsonl", [gen(i, "strict-match", 1.0) for i in range(4)])
    with pytest.warns(UserWarning, match="latest"):
        rm2 = read_lm_eval_samples(tmp_path, metric="exact_match", filter="strict-match")
    assert rm2.values.all()
    with pytest.warns(UserWarning, match="latest"), pytest.raises(ValueError, match="^filter:"):
        read_lm_eval_samples(tmp_path, metric="exact_match", filter="none")


def test_lm_eval_bad_input_names_the_argument(tmp_path, run_dir):
    out, _ = run_dir
    with pytest.raises(FileNotFoundError, match="^path_or_paths:"):
        read_lm_eval_samples(tmp_path / "nothing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="^path_or_paths:"):
        read_lm_eval_samples(tmp_path / "empty")
    with pytest.raises(ValueError, match="^path_or_paths:"):
        read_lm_eval_samples(3.14)
    bad = tmp_path / "bad" / "m" / f"samples_arc_easy_{TS}.jsonl"
    bad.parent.mkdir(parents=True)
    bad.write_text('{"doc_id": 0, "acc": 1}\n{not json}\n')
    with pytest.raises(ValueError, match="^path_or_paths:.*line 2"):
        read_lm_eval_samples(bad)
    with pytest.raises(ValueError, match="^metric:.*'acc', 'acc_norm'"):
        read_lm_eval_samples(out, metric="f1")
    with pytest.raises(ValueError, match="^normalize:"):
        read_lm_eval_samples(out, normalize="yes")
    with pytest.raises(ValueError, match="^tasks:"):
        read_lm_eval_samples(out, tasks=["mmlu"])
    assert read_lm_eval_samples(out, tasks="arc_easy").shape == (2, 6)
    scored = tmp_path / "bleu" / "m" / f"samples_wmt_{TS}.jsonl"
    _write(scored, [{"doc_id": 0, "target": "x", "filtered_resps": ["y"], "bleu": 35.2}])
    with pytest.raises(ValueError, match=r"^metric:.*\[0, 1\]"):
        read_lm_eval_samples(scored, metric="bleu")


# ----------------------------------------------------------------------------------------------------- CSV
def test_scores_csv_long_with_groups_and_missing(tmp_path):
    f = tmp_path / "scores.csv"
    f.write_text(
        "model,item,score,benchmark\n"
        "m1,q1,1,arc\nm1,q2,0,arc\nm1,q3,0.5,gsm\n"
        "m2,q1,0,arc\nm2,q3,-,gsm\n"  # m2 never saw q2; q3 marked not evaluated
    )
    rm = read_scores_csv(f, groups="benchmark")
    assert rm.kind == "score" and rm.shape == (2, 3)
    np.testing.assert_array_equal(rm.missing, [[False, False, False], [False, True, True]])
    np.testing.assert_allclose(rm.values_with_nan(), [[1, 0, 0.5], [0, np.nan, np.nan]])
    assert rm.items.loc["q3", "benchmark"] == "gsm"
    long = rm.to_long()
    assert len(long) == 4 and set(long.columns) >= {"model", "item", "score", "benchmark"}


def test_scores_csv_wide_tsv_and_renamed_columns(tmp_path):
    f = tmp_path / "wide.tsv"
    f.write_text("name\ta\tb\tc\nm1\t1\t0\t1\nm2\t0\t-\t\nm3\t1\t1\t0\n")
    rm = read_scores_csv(f)
    assert rm.kind == "binary" and list(rm.model_ids) == ["m1", "m2", "m3"] and list(rm.item_ids) == ["a", "b", "c"]
    assert rm.missing.sum() == 2 and rm.missing[1, 1:].all()
    g = tmp_path / "long.csv"
    g.write_text("llm;question;correct\nx;1;1\nx;2;0\ny;1;1\ny;2;1\n")
    rm2 = read_scores_csv(g, sep=";", model="llm", item="question", score="correct")
    assert rm2.kind == "binary" and rm2.accuracy().tolist() == [0.5, 1.0]


def test_scores_csv_bad_input(tmp_path):
    f = tmp_path / "s.csv"
    f.write_text("model,item,score\nm1,q1,1\nm1,q1,0\n")
    with pytest.raises(ValueError, match="^path: s.csv: duplicate"):  # repeated rows are refused under duplicates="error"
        read_scores_csv(f, duplicates="error")
    with pytest.raises(ValueError, match="^model:"):
        read_scores_csv(f, format="long", model="llm")
    with pytest.raises(ValueError, match="^format:"):
        read_scores_csv(f, format="json")
    with pytest.raises(FileNotFoundError, match="^path:"):
        read_scores_csv(tmp_path / "nope.csv")
    w = tmp_path / "w.csv"
    w.write_text("model,a,b\nm1,1,yes\nm2,0,1\n")
    with pytest.raises(ValueError, match="^path: w.csv: column 'b' has non-numeric"):
        read_scores_csv(w)
    with pytest.raises(ValueError, match="^groups:"):
        read_scores_csv(w, groups="benchmark")
    d = tmp_path / "d.csv"
    d.write_text("model,a\nm1,1\nm1,0\n")
    with pytest.raises(ValueError, match="^path:.*repeat"):
        read_scores_csv(d, duplicates="error")
    r = tmp_path / "r.csv"
    r.write_text("model,a\nm1,2.5\n")
    with pytest.raises(ValueError, match=r"^path: r.csv:.*\[0, 1\]"):  # the file's content: the message names the file argument
        read_scores_csv(r)


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_scores_csv_round_trips_long_and_wide(data):
    n_m, n_i = data.draw(st.integers(1, 5)), data.draw(st.integers(1, 6))
    vals = data.draw(hnp.arrays(float, (n_m, n_i), elements=st.floats(0, 1)))
    miss = data.draw(hnp.arrays(bool, (n_m, n_i)))
    miss[0, :] = miss[:, 0] = False  # every model and every item evaluated somewhere
    rm = ResponseMatrix(vals, kind="score", missing=miss, model_ids=[f"m{i}" for i in range(n_m)], item_ids=[f"q{j}" for j in range(n_i)])
    with tempfile.TemporaryDirectory() as d:
        long_f, wide_f = Path(d) / "long.csv", Path(d) / "wide.csv"
        rm.to_long().to_csv(long_f, index=False)
        rm.to_frame().to_csv(wide_f, na_rep="-", index_label="model")
        for f, fmt in [(long_f, "long"), (wide_f, "wide")]:
            back = read_scores_csv(f, kind="score")
            assert read_scores_csv(f, format=fmt, kind="score").shape == rm.shape
            np.testing.assert_array_equal(back.values_with_nan(), rm.values_with_nan())  # exact: floats are written with repr
            assert list(back.model_ids) == list(rm.model_ids) and list(back.item_ids) == list(rm.item_ids)
