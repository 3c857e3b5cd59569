"""Readers for users' own outputs: lm-evaluation-harness --log_samples JSONL and generic score CSVs.

The fixtures are written in the harness's format: one JSON record per document with doc_id, doc, target,
arguments, resps, filtered_resps (per choice [loglikelihood, is_greedy]) and the per-sample metrics. Recent
harness versions stringify the numbers (``sanitize_list``) and log ``arguments`` as ``{"gen_args_i": {"arg_j": ..}}``;
older ones log numbers and ``[[context, continuation], ...]``. Both are covered.
"""
from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import tempfile
import warnings
from pathlib import Path

import hypothesis.extra.numpy as hnp
import hypothesis.strategies as st
import numpy as np
import pandas as pd
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
        return {"doc_id": doc_id, "doc": {"question": "?"}, "target": "4",
                "arguments": {"gen_args_0": {"arg_0": "2+2=", "arg_1": {"until": ["\n"]}}},
                "resps": [["4"]], "filtered_resps": ["4" if em else "5"], "filter": filt, "metrics": ["exact_match"],
                "exact_match": em}

    recs = [gen(i, f, float(i % 2 == 0 or f == "flexible-extract")) for f in ["strict-match",
                                                                              "flexible-extract"] for i in range(4)]
    _write(tmp_path / "m" / f"samples_gsm8k_{TS}.jsonl", recs)
    with pytest.raises(ValueError, match="^filter:"):
        read_lm_eval_samples(tmp_path, metric="exact_match")
    rm = read_lm_eval_samples(tmp_path, metric="exact_match", filter="strict-match")
    assert rm.probabilities is None and rm.values.tolist() == [[True, False, True, False]]
    assert (rm.items["n_choices"] == 0).all()  # generated text "4" is not a loglikelihood
    assert read_lm_eval_samples(tmp_path, metric="exact_match", filter="flexible-extract").values.all()
    # a later run of the same task replaces the earlier one
    _write(tmp_path / "m" / "samples_gsm8k_2025-01-01T00-00-00.000001.jsonl",
           [gen(i, "strict-match", 1.0) for i in range(4)])
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
    # repeated rows are refused under duplicates="error"
    with pytest.raises(ValueError, match="^path: s.csv: duplicate"):
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
    # the file's content: the message names the file argument
    with pytest.raises(ValueError, match=r"^path: r.csv:.*\[0, 1\]"):
        read_scores_csv(r)


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_scores_csv_round_trips_long_and_wide(data):
    n_m, n_i = data.draw(st.integers(1, 5)), data.draw(st.integers(1, 6))
    vals = data.draw(hnp.arrays(float, (n_m, n_i), elements=st.floats(0, 1)))
    miss = data.draw(hnp.arrays(bool, (n_m, n_i)))
    miss[0, :] = miss[:, 0] = False  # every model and every item evaluated somewhere
    rm = ResponseMatrix(vals, kind="score", missing=miss, model_ids=[f"m{i}" for i in range(n_m)],
                        item_ids=[f"q{j}" for j in range(n_i)])
    with tempfile.TemporaryDirectory() as d:
        long_f, wide_f = Path(d) / "long.csv", Path(d) / "wide.csv"
        rm.to_long().to_csv(long_f, index=False)
        rm.to_frame().to_csv(wide_f, na_rep="-", index_label="model")
        for f, fmt in [(long_f, "long"), (wide_f, "wide")]:
            back = read_scores_csv(f, kind="score")
            assert read_scores_csv(f, format=fmt, kind="score").shape == rm.shape
            # exact: floats are written with repr
            np.testing.assert_array_equal(back.values_with_nan(), rm.values_with_nan())
            assert list(back.model_ids) == list(rm.model_ids) and list(back.item_ids) == list(rm.item_ids)


# ----------------------------------------------------------------------------------------------------- runs, names,
# damaged files
def _sanitized(name):
    # the folder lm-eval's EvaluationTracker writes for a model name
    return re.sub(r"[\"<>:/|\\?*\[\]]+", "__", name)


def _mc_record(doc_id, correct, new_format, n=4):
    """A multiple-choice record whose loglikelihoods put the arg-max on the gold choice iff ``correct``; acc is not
    logged, so the reader has to recompute it from ``resps`` in the string or the numeric form."""
    gold = doc_id % n
    ll = np.full(n, -3.0)
    ll[gold if correct else (gold + 1) % n] = -0.5
    conts = [f" choice {k}" for k in range(n)]
    if new_format:
        return {"doc_id": doc_id, "target": str(gold), "filter": "none", "metrics": ["acc"],
                "arguments": {f"gen_args_{k}": {"arg_0": "Q:", "arg_1": c} for k, c in enumerate(conts)},
                "resps": [[[str(v), "False"]] for v in ll], "filtered_resps": [[str(v), "False"] for v in ll]}
    return {"doc_id": doc_id, "target": gold, "filter": "none", "metrics": ["acc"],
            "arguments": [["Q:", c] for c in conts],
            "resps": [[[float(v), False]] for v in ll], "filtered_resps": [[float(v), False] for v in ll]}


def _write_run(out, name, task, ts, rows, *, results=True, model_args=None):
    folder = out / _sanitized(name)
    _write(folder / f"samples_{task}_{ts}.jsonl", rows)
    if results:
        doc = {"results": {task: {"alias": task}},
               "config": {"model": "hf", "model_args": model_args or f"pretrained={name},dtype=float16"},
               "model_name": "" if model_args else name, "model_name_sanitized": _sanitized(name)}
        (folder / f"results_{ts}.json").write_text(json.dumps(doc, indent=2))
    return folder


@settings(max_examples=20, deadline=None)
@given(truth=hnp.arrays(bool, st.tuples(st.integers(1, 3), st.integers(1, 6))), data=st.data())
def test_lm_eval_values_and_model_names_read_back_from_a_truth_matrix(truth, data):
    names = ["/home/me/ckpt/step-1000", "EleutherAI/pythia-160m", "org/model:v2"][: truth.shape[0]]
    observed = data.draw(hnp.arrays(bool, truth.shape))
    observed[:, 0] = True
    new_format = data.draw(st.booleans())
    with tempfile.TemporaryDirectory() as d:
        for m, name in enumerate(names):
            rows = [_mc_record(j, truth[m, j], new_format) for j in range(truth.shape[1]) if observed[m, j]]
            _write_run(Path(d), name, "arc_easy", TS, rows)
        rm = read_lm_eval_samples(d)
    assert list(rm.model_ids) == sorted(names)  # from results_<ts>.json: the folder names lost "/" and ":"
    order = [names.index(m) for m in rm.model_ids]
    cols = observed.any(axis=0)
    np.testing.assert_array_equal(rm.values[rm.observed], truth[order][:, cols][observed[order][:, cols]])
    np.testing.assert_array_equal(rm.observed, observed[order][:, cols])
    assert rm.items["doc_id"].tolist() == [j for j in range(truth.shape[1]) if cols[j]]
    assert all(type(v) is int for v in rm.items["doc_id"])
    assert list(rm.item_ids) == [f"arc_easy/{j}" for j in rm.items["doc_id"]]


def test_lm_eval_model_name_sources(tmp_path):
    # model_name empty: the pretrained= entry of config.model_args names the model
    _write_run(tmp_path, "/data/ckpt-a", "arc_easy", TS, [_mc_record(0, True, True)],
               model_args="pretrained=/data/ckpt-a,dtype=float16")
    # model_args logged as a mapping (the Python API)
    _write_run(tmp_path, "org/b", "arc_easy", TS, [_mc_record(0, False, True)],
               model_args={"pretrained": "org/b", "dtype": "float16"})
    # no results file: the folder name
    _write_run(tmp_path, "org/c", "arc_easy", TS, [_mc_record(0, True, True)], results=False)
    # a results file of another run (another timestamp) does not name this one
    other = _write_run(tmp_path, "org/d", "arc_easy", TS, [_mc_record(0, True, True)], results=False)
    (other / "results_2023-01-01T00-00-00.000001.json").write_text(json.dumps({"model_name": "not/this"}))
    # --output_path ending in .json: "<stem>_<ts>.json" beside the samples
    e = tmp_path / "flat"
    _write(e / f"samples_arc_easy_{TS}.jsonl", [_mc_record(0, True, True)])
    (e / f"my_results_{TS}.json").write_text(json.dumps({"model_name": "org/e"}))
    rm = read_lm_eval_samples(tmp_path)
    assert list(rm.model_ids) == ["/data/ckpt-a", "org/b", "org/c", "org/d", "org/e"]
    np.testing.assert_array_equal(rm.values[:, 0], [1, 0, 1, 1, 1])
    # a mapping names the models itself
    assert list(read_lm_eval_samples({"mine": tmp_path / _sanitized("/data/ckpt-a")}).model_ids) == ["mine"]
    (tmp_path / _sanitized("org/b") / f"results_{TS}.json").write_text('{"model_name": "org/b", "res')
    with pytest.raises(ValueError,
                       match=r"^path_or_paths: org__b/results_.*\.json \(the results file of the run\) is not valid "
                             r"JSON"):
        read_lm_eval_samples(tmp_path)
    (tmp_path / _sanitized("org/b") / f"results_{TS}.json").write_text("[" * 50_000)
    with pytest.raises(ValueError, match=r"^path_or_paths: org__b/results_.*\.json \(the results file of the run\) "
                                         r"is not valid JSON \(nests lists or objects too deeply to read\)"):
        read_lm_eval_samples(tmp_path)


def test_lm_eval_duplicate_runs_first_last_mean_error(tmp_path):
    early, late = "2024-01-01T00-00-00.000001", "2024-06-01T00-00-00.000001"
    _write_run(tmp_path, "org/m", "arc_easy", late, [_mc_record(j, v, True) for j, v in enumerate([0, 0, 1])])
    _write_run(tmp_path, "org/m", "arc_easy", early, [_mc_record(j, v, False) for j, v in enumerate([1, 0, 1, 1])])
    _write_run(tmp_path, "org/n", "arc_easy", early, [_mc_record(j, 1, True) for j in range(4)])
    with pytest.warns(UserWarning, match=r"model 'org/m', task 'arc_easy' \(2 runs\); using the latest run"):
        last = read_lm_eval_samples(tmp_path)
    assert list(last.model_ids) == ["org/m", "org/n"]
    np.testing.assert_array_equal(last.values_with_nan()[0], [0, 0, 1, np.nan])  # doc 3 only in the earlier run
    with pytest.warns(UserWarning, match=r"model 'org/m', task 'arc_easy' \(2 runs\); using the earliest run"):
        first = read_lm_eval_samples(tmp_path, duplicates="first")
    np.testing.assert_array_equal(first.values[0], [1, 0, 1, 1])
    with pytest.warns(UserWarning, match=r"model 'org/m', task 'arc_easy' \(2 runs\); averaging the runs of each: an "
                                         r"item's 0/1 results become a graded score, the share of runs right "
                                         r"\(duplicates='mean'; 'last' or 'first' takes one run, 'error' refuses "
                                         r"them\)"):  # as read_helm_runs says it
        mean = read_lm_eval_samples(tmp_path, duplicates="mean")
    assert mean.kind == "score"
    np.testing.assert_array_equal(mean.values[0], [0.5, 0, 1, 1])
    # the probabilities of the mean are the mean of the runs' probabilities
    p_late, p_early = last.probabilities[0, 0], first.probabilities[0, 0]
    np.testing.assert_allclose(mean.probabilities[0, 0], (p_late + p_early) / 2, rtol=1e-12)
    with pytest.raises(ValueError,
                       match=r"^path_or_paths: model 'org/m' has 2 runs of task 'arc_easy' "
                             r"\(org__m/samples_arc_easy_2024-01"):
        read_lm_eval_samples(tmp_path, duplicates="error")
    with pytest.raises(ValueError, match="^duplicates: expected one of 'last', 'first', 'error', 'mean'"):
        read_lm_eval_samples(tmp_path, duplicates="latest")


def test_lm_eval_lfs_pointer_and_truncated_last_line(tmp_path):
    folder = _write_run(tmp_path, "org/m", "arc_easy", TS, [_mc_record(j, True, True) for j in range(3)])
    f = folder / f"samples_arc_easy_{TS}.jsonl"
    good = f.read_text()
    f.write_text("version https://git-lfs.github.com/spec/v1\noid sha256:" + "a" * 64 + "\nsize 52311\n")
    with pytest.raises(ValueError) as exc:
        read_lm_eval_samples(tmp_path)
    assert str(exc.value) == f"path_or_paths: org__m/{f.name} is a Git LFS pointer, not the log; run `git lfs pull`"
    lines = good.splitlines(keepends=True)
    f.write_text("".join(lines[:2]) + lines[2][: len(lines[2]) // 2])  # a run stopped while writing its third record
    with pytest.raises(ValueError,
                       match=rf"^path_or_paths: org__m/{f.name} line 3 \(the last line\) is truncated, "
                             r"not valid JSON") as exc:
        read_lm_eval_samples(tmp_path)
    assert "\n" not in str(exc.value)
    gz = folder / f"samples_arc_easy_{TS}.jsonl.gz"
    f.unlink()
    gz.write_bytes(gzip.compress(good.encode())[:-20])  # a cut gzip stream
    with pytest.raises(ValueError, match=rf"^path_or_paths: org__m/{gz.name} is not UTF-8 JSON lines"):
        read_lm_eval_samples(tmp_path)


def test_scores_csv_duplicates_first_last_mean_error(tmp_path):
    long = tmp_path / "long.csv"
    long.write_text("model,item,score,benchmark\nm1,q1,0,arc\nm1,q2,1,arc\nm2,q1,1,arc\nm2,q2,0,arc\n"
                    "m1,q1,0.5,arc\nm1,q2,-,arc\n")
    with pytest.warns(UserWarning,
                      match=r"^path: long.csv: duplicate \(model, item\) rows, e.g. \('m1', 'q1'\), \('m1', 'q2'\); "
                            r"using the last row"):
        last = read_scores_csv(long, groups="benchmark")
    np.testing.assert_array_equal(last.values_with_nan(), [[0.5, np.nan], [1, 0]])  # the last m1,q2 row: not evaluated
    with pytest.warns(UserWarning, match="using the first row"):
        first = read_scores_csv(long, duplicates="first")
    np.testing.assert_array_equal(first.values_with_nan(), [[0, 1], [1, 0]])
    mean = read_scores_csv(long, duplicates="mean", groups="benchmark")
    np.testing.assert_array_equal(mean.values_with_nan(), [[0.25, 1], [1, 0]])  # the mean of the evaluated rows
    assert mean.items["benchmark"].tolist() == ["arc", "arc"]
    with pytest.raises(ValueError, match=r"^path: long.csv: duplicate \(model, item\) rows, e.g. \('m1', 'q1'\)"):
        read_scores_csv(long, duplicates="error")
    wide = tmp_path / "wide.csv"
    wide.write_text("model,a,b\nm1,1,-\nm2,0,0\nm1,0,1\n")
    with pytest.warns(UserWarning,
                      match=r"^path: wide.csv: model ids in column 'model' repeat, e.g. 'm1'; using the last row"):
        assert read_scores_csv(wide).values_with_nan().tolist() == [[0, 1], [0, 0]]
    with pytest.warns(UserWarning, match="using the first row"):
        np.testing.assert_array_equal(read_scores_csv(wide, duplicates="first").values_with_nan(),
                                      [[1, np.nan], [0, 0]])
    assert read_scores_csv(wide, duplicates="mean").values_with_nan().tolist() == [[0.5, 1], [0, 0]]
    with pytest.raises(ValueError, match="^path: wide.csv: model ids in column 'model' repeat"):
        read_scores_csv(wide, duplicates="error")
    with pytest.raises(ValueError, match="^duplicates:"):
        read_scores_csv(wide, duplicates=None)


def test_scores_csv_read_as_wide_says_which_long_columns_are_absent(tmp_path):
    f = tmp_path / "scores.csv"
    f.write_text("llm,item,score\nm1,q1,1\nm2,q1,0\n")
    with pytest.raises(ValueError,
                       match=r"^path: scores.csv: column 'item' has non-numeric.*read as a wide table: the long "
                             r"layout's columns model='model' are absent"):
        read_scores_csv(f)
    with pytest.raises(ValueError, match=r"^path: scores.csv: column 'item' has non-numeric values, e.g. 'q1'$"):
        read_scores_csv(f, format="wide")


def test_harness_examples_run():
    import doctest

    from effstats.datasets import harness

    result = doctest.testmod(harness)
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize("bad", [None, "abc", "5", -7, 1e30, 10**30, 5.5, True, [1], {"i": 1}])
def test_lm_eval_doc_id_not_an_index_is_refused_naming_file_and_line(tmp_path, bad):
    recs = [_mc_record(j, j % 2, True) for j in range(6)]
    recs[4]["doc_id"] = bad
    _write_run(tmp_path, "org/m", "arc_easy", TS, recs)
    with pytest.raises(ValueError, match=rf"^path_or_paths: org__m/samples_arc_easy_{TS}\.jsonl line 5 has doc_id "
                                         r".*; expected the document's index, an integer ≥ 0$"):
        read_lm_eval_samples(tmp_path)


def test_lm_eval_doc_id_written_as_a_whole_float_is_that_index(tmp_path):
    recs = [_mc_record(j, j % 2, True) for j in range(4)]
    _write_run(tmp_path / "a", "org/m", "arc_easy", TS, recs)
    for r in recs:
        r["doc_id"] = float(r["doc_id"])
    _write_run(tmp_path / "b", "org/m", "arc_easy", TS, recs)
    a, b = read_lm_eval_samples(tmp_path / "a"), read_lm_eval_samples(tmp_path / "b")
    assert list(b.item_ids) == list(a.item_ids) == [f"arc_easy/{j}" for j in range(4)]
    assert b.items["doc_id"].tolist() == [0, 1, 2, 3]
    np.testing.assert_array_equal(a.values, b.values)


@pytest.mark.parametrize("copy", [" (1)", " - Copy", " copy"])
def test_lm_eval_a_copied_log_is_a_second_run_of_its_task(tmp_path, copy):
    folder = _write_run(tmp_path, "org/m", "arc_easy", TS, [_mc_record(j, 1, True) for j in range(3)])
    _write(folder / f"samples_arc_easy_{TS}{copy}.jsonl", [_mc_record(j, 0, True) for j in range(3)])
    with pytest.warns(UserWarning, match=r"model 'org/m', task 'arc_easy' \(2 runs\); using the latest run"):
        rm = read_lm_eval_samples(tmp_path)
    assert list(rm.item_ids) == [f"arc_easy/{j}" for j in range(3)]  # one task, not a task "arc_easy_… (1)"
    np.testing.assert_array_equal(rm.values, [[0, 0, 0]])  # the copy sorts after the original
    with pytest.raises(ValueError, match=r"has 2 runs of task 'arc_easy'"):
        read_lm_eval_samples(tmp_path, duplicates="error")


@pytest.mark.parametrize("task", ["red\nnl", "a\rb", "tab\tx"])
def test_lm_eval_a_task_name_with_control_characters_keeps_its_name_and_timestamp(tmp_path, task):
    """A file name holding a newline: the task is the name between ``samples_`` and the timestamp, as for any
    other (the whole stem, prefix and timestamp included, made two runs two tasks)."""
    folder = _write_run(tmp_path, "org/m", task, TS, [_mc_record(j, 1, True) for j in range(3)])
    _write(folder / f"samples_{task}_{TS.replace('00', '01', 1)}.jsonl", [_mc_record(j, 0, True) for j in range(3)])
    with pytest.warns(UserWarning, match=r"\(2 runs\); using the latest run"):
        rm = read_lm_eval_samples(tmp_path)
    assert list(rm.item_ids) == [f"{task}/{j}" for j in range(3)]


@pytest.mark.parametrize("opener", ["gzip", "bz2", "lzma"])
def test_lm_eval_compressed_logs_are_read(tmp_path, opener):
    import bz2
    import lzma

    mod = {"gzip": gzip, "bz2": bz2, "lzma": lzma}[opener]
    ending = {"gzip": ".gz", "bz2": ".bz2", "lzma": ".xz"}[opener]
    plain = _write_run(tmp_path / "plain", "org/m", "arc_easy", TS, [_mc_record(j, j % 2, True) for j in range(5)])
    packed = _write_run(tmp_path / "packed", "org/m", "arc_easy", TS, [_mc_record(j, j % 2, True) for j in range(5)])
    f = packed / f"samples_arc_easy_{TS}.jsonl"
    (packed / (f.name + ending)).write_bytes(mod.compress(f.read_bytes()))
    f.unlink()
    a, b = read_lm_eval_samples(tmp_path / "plain"), read_lm_eval_samples(tmp_path / "packed")
    assert list(b.item_ids) == list(a.item_ids) and list(b.model_ids) == ["org/m"]
    np.testing.assert_array_equal(a.values, b.values)
    (packed / (f.name + ending)).write_bytes(b"\x00junk" * 20)
    with pytest.raises(ValueError, match=rf"^path_or_paths: org__m/{re.escape(f.name + ending)} is not UTF-8 JSON"):
        read_lm_eval_samples(tmp_path / "packed")
    assert plain.is_dir()


@pytest.mark.parametrize("ending", [".gz", ".bz2", ".xz"])
def test_lm_eval_results_file_compressed_beside_compressed_logs_names_the_model(tmp_path, ending):
    """An output folder compressed whole (``gzip -r``): the run's results_<ts>.json.gz names the model and its
    checkpoint, as the plain file does; one that is not what its name says is refused naming it."""
    import bz2
    import lzma

    mod = {".gz": gzip, ".bz2": bz2, ".xz": lzma}[ending]
    for ts, revision in (("2024-01-01T00-00-00.000001", "step1000"), (TS, "step2000")):
        folder = _write_run(tmp_path, "/data/ckpt-a", "arc_easy", ts, [_mc_record(j, j % 2, True) for j in range(4)],
                            model_args=f"pretrained=/data/ckpt-a,revision={revision}")
        for f in (folder / f"samples_arc_easy_{ts}.jsonl", folder / f"results_{ts}.json"):
            (folder / (f.name + ending)).write_bytes(mod.compress(f.read_bytes()))
            f.unlink()
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        f"{stem}_{ts}{kind}{ending}" for ts in ("2024-01-01T00-00-00.000001", TS)
        for stem, kind in (("samples_arc_easy", ".jsonl"), ("results", ".json")))
    with pytest.warns(UserWarning, match=r"other checkpoints.*model '/data/ckpt-a' as 2 models"):
        rm = read_lm_eval_samples(tmp_path)
    assert list(rm.model_ids) == ["/data/ckpt-a@revision=step1000", "/data/ckpt-a@revision=step2000"]
    np.testing.assert_array_equal(rm.values, [[0, 1, 0, 1]] * 2)
    damaged = folder / f"results_{TS}.json{ending}"
    damaged.write_bytes(mod.compress(b'{"model_name": "x"}')[:-8])  # a cut stream
    with pytest.raises(ValueError, match=rf"^path_or_paths: {re.escape(folder.name)}/{re.escape(damaged.name)} "
                                         r"\(the results file of the run\) cannot be read \(.+\); repair it"):
        read_lm_eval_samples(tmp_path)


def test_lm_eval_0_4_0_sample_files_compressed_are_named_with_what_to_do(tmp_path, capsys):
    from effstats.cli import main

    out = tmp_path / "out"
    out.mkdir()
    (out / "results.json.gz").write_bytes(gzip.compress(json.dumps({"config": {"model_args": "pretrained=org/m"}},
                                                                   indent=2).encode()))
    f = out / "pretrained__org__m_arc_easy.jsonl.gz"
    f.write_bytes(gzip.compress(json.dumps([_mc_record(j, j % 2, False) for j in range(3)], indent=2).encode()))
    what = "lm-evaluation-harness 0.4.0/0.4.1 sample files (<model_args>_<task>.jsonl, one JSON array per task)"
    with pytest.raises(ValueError, match=re.escape(f"contains no samples_*.jsonl file; it holds {what}, which are "
                                                   "not read") + r".*" + re.escape(f"(e.g. out/{f.name})")):
        read_lm_eval_samples(out)
    code = main(["select", str(out), "--budget", "2", "--out", str(tmp_path / "sel")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and what in err and f"(e.g. out/{f.name})" in err, err
    f.write_bytes(b"[" + gzip.compress(b"[]")[1:])  # named .gz, neither gzip nor JSON: no hint, and no error
    with pytest.raises(ValueError, match=r"contains no samples_\*\.jsonl file$"):
        read_lm_eval_samples(out)


def test_lm_eval_log_named_with_another_ending_is_named_in_a_warning(tmp_path):
    folder = _write_run(tmp_path, "org/m", "arc_easy", TS, [_mc_record(j, 1, True) for j in range(3)])
    (folder / f"samples_hellaswag_{TS}.jsonl.zip").write_bytes(b"PK")
    with pytest.warns(UserWarning, match=rf"left out 1 file\(s\) named like logs .*org__m/samples_hellaswag_{TS}"):
        rm = read_lm_eval_samples(tmp_path)
    assert list(rm.item_ids) == [f"arc_easy/{j}" for j in range(3)]


def test_lm_eval_metric_beyond_float_and_deep_nesting_are_refused_by_line(tmp_path):
    recs = [_mc_record(j, 1, True) for j in range(4)]
    recs[2]["acc"] = 10**400  # JSON allows any integer
    folder = _write_run(tmp_path, "org/m", "arc_easy", TS, recs)
    with pytest.raises(ValueError,
                       match=r"^path_or_paths: org__m/samples_arc_easy_\S* line 3: 'acc' of doc 2 is 1000.*expected a "
                             r"number"):
        read_lm_eval_samples(tmp_path)
    recs[2]["acc"] = 1.0
    f = folder / f"samples_arc_easy_{TS}.jsonl"
    lines = f.read_text().splitlines()
    lines[1] = lines[1][:-1] + ', "doc": ' + "[" * 100_000 + "]" * 100_000 + "}"
    f.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=rf"^path_or_paths: org__m/{f.name} line 2 nests lists or objects too deeply"):
        read_lm_eval_samples(tmp_path)



@pytest.mark.parametrize("new_format", [True, False])
@pytest.mark.parametrize("key,first,then", [
    ("acc", '"acc": 0.0', '"acc": 1.0'), ("doc_id", '"doc_id": 2', '"doc_id": 9'),
    ("filter", '"filter": "none"', '"filter": "strict"'), ("arg_1", '"arg_1": " choice 1"', '"arg_1": " choice 2"')])
def test_lm_eval_a_key_named_twice_in_a_record_is_refused_naming_file_line_and_key(tmp_path, key, first, then,
                                                                                  new_format):
    """``json`` keeps the last value of a key named twice: a record logging ``"acc"`` 0 and then 1 moved a score from
    0.75 to 1.00 without a word. The file, the line and the key are named, in a nested object too."""
    recs = [_mc_record(j, True, new_format) for j in range(4)]
    for r in recs:
        r["acc"] = 1.0
    recs[2]["acc"] = 0.0
    folder = _write_run(tmp_path, "org/m", "arc_easy", TS, recs)
    f = folder / f"samples_arc_easy_{TS}.jsonl"
    assert read_lm_eval_samples(tmp_path).values.mean() == 0.75
    lines = f.read_text().splitlines()
    if key == "arg_1" and not new_format:  # the older harness logs the arguments as lists: no key to repeat
        first, then = '"metrics": ["acc"]', '"metrics": ["acc"], "metrics": []'
        key = "metrics"
    assert first in lines[2]
    twice = lines[2].replace(first, f"{first}, {then}", 1)
    for sep in ('": ', '" : '):  # keys written as json.dumps writes them, or "key" : value
        lines[2] = twice.replace('": ', sep)
        f.write_text("\n".join(lines) + "\n")
        with pytest.raises(ValueError) as e:
            read_lm_eval_samples(tmp_path)
        assert str(e.value) == (f"path_or_paths: org__m/{f.name} line 3 names the key {key!r} twice in one record "
                                "(a hand-merged log?); keep one of them")


def test_lm_eval_keys_and_escaped_quotes_in_texts_are_read_as_logged(tmp_path):
    """A document whose texts hold ``":`` (escaped quotes before a colon) and keys that only look alike are read."""
    recs = [_mc_record(j, j != 1, True) for j in range(4)]
    for r in recs:
        r["doc"] = {"question": 'He said "stop": why?', "acc ": 1, "Acc": 2, "nested": [{"\"acc\":": 0}, [{"a": 1}]]}
        r["arguments"]["gen_args_0"]["arg_0"] = 'Q "x": "y":'
    _write_run(tmp_path, "org/m", "arc_easy", TS, recs)
    assert read_lm_eval_samples(tmp_path).values.mean() == 0.75

@pytest.mark.parametrize("column,what", [("model", "model"), ("item", "item")])
def test_scores_csv_an_empty_id_is_refused_naming_its_row(tmp_path, column, what):
    df = pd.DataFrame({"model": ["a", "a", "b", "b"], "item": ["q1", "q2", "q1", "q2"], "score": [1, 0, 1, 1]})
    df.loc[2, column] = " "
    df.to_csv(tmp_path / "long.csv", index=False)
    with pytest.raises(ValueError, match=rf"^path: long.csv: row 3 \(line 4\) has an empty '{column}'; every row "
                                         rf"names its {what}$"):
        read_scores_csv(tmp_path / "long.csv")
    wide = pd.DataFrame({"model": ["a", "", "c"], "q1": [1, 0, 1], "q2": [0, 0, 1]})
    wide.to_csv(tmp_path / "wide.csv", index=False)
    with pytest.raises(ValueError, match=r"^path: wide.csv: row 2 \(line 3\) has an empty 'model'"):
        read_scores_csv(tmp_path / "wide.csv")


def test_lm_eval_log_compressed_under_a_plain_name_is_read(tmp_path):
    plain = _write_run(tmp_path / "plain", "org/m", "arc_easy", TS, [_mc_record(j, j % 2, True) for j in range(5)])
    packed = _write_run(tmp_path / "packed", "org/m", "arc_easy", TS, [_mc_record(j, j % 2, True) for j in range(5)])
    f = packed / f"samples_arc_easy_{TS}.jsonl"
    f.write_bytes(gzip.compress(f.read_bytes()))  # gzip, named .jsonl: read by its first bytes
    a, b = read_lm_eval_samples(tmp_path / "plain"), read_lm_eval_samples(tmp_path / "packed")
    assert list(b.item_ids) == list(a.item_ids) and list(b.model_ids) == ["org/m"]
    np.testing.assert_array_equal(a.values, b.values)
    assert plain.is_dir()


def test_lm_eval_metric_logged_as_nan_is_a_missing_cell_counted_in_one_warning(tmp_path):
    """A failed document logs its metric as NaN: it reads as a missing cell, as a document without a record does,
    with one warning counting them and naming the first; infinity is refused naming the file, line and value (not
    the metric argument, which the logs' field is not)."""
    recs = [_mc_record(j, 1, True) for j in range(5)]
    for j in (1, 3):
        recs[j]["acc"] = float("nan")
    _write_run(tmp_path, "org/m", "arc_easy", TS, recs)
    _write_run(tmp_path, "org/n", "arc_easy", TS, [_mc_record(j, 1, True) for j in range(5)])
    with pytest.warns(UserWarning) as caught:
        rm = read_lm_eval_samples(tmp_path)
    said = [str(w.message) for w in caught if "NaN" in str(w.message)]
    assert len(said) == 1 and said[0].startswith("path_or_paths: 2 document(s) log their metric as NaN")
    assert "doc 1, org__m/samples_arc_easy_" in said[0] and "line 2)" in said[0]
    assert rm.missing[list(rm.model_ids).index("org/m")].tolist() == [False, True, False, True, False]
    assert not rm.missing[list(rm.model_ids).index("org/n")].any()
    recs[3]["acc"] = float("inf")
    _write_run(tmp_path, "org/m", "arc_easy", TS, recs)
    with pytest.raises(ValueError, match=r"^path_or_paths: org__m/samples_arc_easy_\S* line 4: 'acc' of doc 3 is inf"):
        read_lm_eval_samples(tmp_path)


@pytest.mark.parametrize("failed", [["org/m"], ["org/m", "org/n"]])
def test_lm_eval_a_model_whose_every_document_is_nan_is_named(tmp_path, failed):
    for name in ("org/m", "org/n", "org/o"):
        recs = [_mc_record(j, 1, True) for j in range(5)]
        if name in failed:
            for r in recs:
                r["acc"] = float("nan")
        _write_run(tmp_path, name, "arc_easy", TS, recs)
    shown = "model 'org/m' has" if len(failed) == 1 else r"2 of 3 models \('org/m', 'org/n'\) have"
    n = 5 * len(failed)
    with pytest.warns(UserWarning, match="NaN"):
        with pytest.raises(ValueError, match=rf"^path_or_paths: {shown} no result: every one of (its|their) {n} "
                                             r"document\(s\) logs its metric as NaN \(a failed run\?\); leave"):
            read_lm_eval_samples(tmp_path)
    with pytest.warns(UserWarning, match="NaN"):
        with pytest.raises(ValueError, match=r"^path_or_paths: model 'org/m' has no result: .*; run it again$"):
            read_lm_eval_samples({"org/m": tmp_path / "org__m"})


def test_lm_eval_documents_failed_by_every_model_are_named_as_left_out(tmp_path):
    for name in ("org/m", "org/n", "org/o"):
        recs = [_mc_record(j, j % 2, True) for j in range(6)]
        for j in (2, 4):  # every model fails these
            recs[j]["acc"] = float("nan")
        _write_run(tmp_path, name, "arc_easy", TS, recs)
        failed = [_mc_record(j, 1, True) for j in range(4)]
        for r in failed:
            r["acc"] = float("nan")
        _write_run(tmp_path, name, "boolq", TS, failed)
    with pytest.warns(UserWarning) as caught:
        rm = read_lm_eval_samples(tmp_path)
    said = [str(w.message) for w in caught if "left out" in str(w.message)]
    assert said == ["path_or_paths: 6 document(s) (e.g. arc_easy/2), every document of task(s) 'boolq', have no "
                    "result from any model (every model logs their metric as NaN) and are left out"], said
    assert rm.item_ids.tolist() == [f"arc_easy/{j}" for j in (0, 1, 3, 5)]


def test_scores_csv_long_items_and_tasks_without_any_score_are_named_as_left_out(tmp_path):
    rows = [(m, f"{t}/{k}", float((k + i) % 2), t) for i, m in enumerate("abcd") for t in "xy" for k in range(3)]
    df = pd.DataFrame(rows, columns=["model", "item", "score", "task"])
    df.loc[df["task"].eq("y") | df["item"].eq("x/1"), "score"] = np.nan
    df.to_csv(tmp_path / "long.csv", index=False)
    with pytest.warns(UserWarning) as caught:
        rm = read_scores_csv(tmp_path / "long.csv")
    said = [str(w.message) for w in caught if "left out" in str(w.message)]
    assert len(said) == 1 and said[0].startswith("path: long.csv: 4 item(s) (e.g. "), said
    assert said[0].endswith(", every item of task(s) 'y', have no score from any model (every row not evaluated) "
                            "and are left out"), said
    assert rm.item_ids.tolist() == ["x/0", "x/2"]


def test_lm_eval_0_4_0_sample_files_are_named_with_what_to_do(tmp_path, capsys):
    # lm-eval 0.4.0 and 0.4.1: one results.json per output folder and, per task, one indented JSON array in
    # "<model_args with '/' and '=' as '__'>_<task>.jsonl"
    from effstats.cli import main

    out = tmp_path / "out"
    out.mkdir()
    (out / "results.json").write_text(json.dumps({"config": {"model_args": "pretrained=org/m"}}, indent=2))
    f = out / "pretrained__org__m_arc_easy.jsonl"
    f.write_text(json.dumps([_mc_record(j, j % 2, False) for j in range(3)], indent=2))
    what = ("lm-evaluation-harness 0.4.0/0.4.1 sample files (<model_args>_<task>.jsonl, one JSON array per task), "
            "which are not read: rerun with lm-eval >= 0.4.2 (samples_<task>_<timestamp>.jsonl), or write each "
            "array's records one per line to <model>/samples_<task>.jsonl")
    with pytest.raises(ValueError, match=re.escape(f"contains no samples_*.jsonl file; it holds {what} (e.g. "
                                                   f"out/{f.name})")):
        read_lm_eval_samples(out)
    with pytest.raises(ValueError, match=re.escape(f"path_or_paths: out/{f.name} is one JSON array over several "
                                                   f"lines, as in {what}")):
        read_lm_eval_samples(f)
    for source in (out, f):
        code = main(["select", str(source), "--budget", "2", "--out", str(tmp_path / "sel")])
        err = capsys.readouterr().err.strip()
        assert code == 2 and len(err.splitlines()) == 1 and what in err, err


def test_lm_eval_checkpoints_of_one_model_in_one_folder_are_models_of_their_own(tmp_path):
    # lm-eval names the folder by the model without its revision: two checkpoints share it, their results files
    # log other model_args; a device or batch size is how a run is made, not another model
    early, late = "2024-01-01T00-00-00.000001", "2024-06-01T00-00-00.000001"
    _write_run(tmp_path, "org/m", "arc_easy", early, [_mc_record(j, 1, True) for j in range(3)],
               model_args="pretrained=org/m,revision=step1000,device=cuda:0")
    _write_run(tmp_path, "org/m", "arc_easy", late, [_mc_record(j, 0, True) for j in range(3)],
               model_args="pretrained=org/m,revision=step143000,device=cuda:1")
    _write_run(tmp_path, "org/n", "arc_easy", early, [_mc_record(j, 1, True) for j in range(3)],
               model_args="pretrained=org/n,batch_size=8")
    _write_run(tmp_path, "org/n", "arc_easy", late, [_mc_record(j, 0, True) for j in range(3)],
               model_args="pretrained=org/n,batch_size=16")
    # tasks run at other times under other model_args (no task twice): one model
    _write_run(tmp_path, "org/k", "arc_easy", early, [_mc_record(0, 1, True)], model_args="pretrained=org/k")
    _write_run(tmp_path, "org/k", "boolq", late, [_mc_record(0, 1, True)], model_args="pretrained=org/k,max_length=9")
    with pytest.warns(UserWarning) as got:
        rm = read_lm_eval_samples(tmp_path)
    said = " | ".join(str(w.message) for w in got)
    assert ("path_or_paths: runs whose results files log other model_args are other checkpoints, read as models of "
            "their own: model 'org/m' as 2 models ('org/m@revision=step1000', 'org/m@revision=step143000'): its runs "
            "log other revision") in said
    assert "model 'org/n', task 'arc_easy' (2 runs); using the latest run" in said and "org/m'" not in said.split(
        "several runs")[-1]
    assert list(rm.model_ids) == ["org/k", "org/m@revision=step1000", "org/m@revision=step143000", "org/n"]
    np.testing.assert_array_equal(rm.values_with_nan()[:, 0], [1, 1, 0, 0])
    assert rm.models.loc["org/k", "n_tasks"] == 2


@pytest.mark.parametrize("how", ["tensor_parallel_size={},gpu_memory_utilization=0.{}",  # lm-eval's vllm
                                 "data_parallel_size={},max_num_seqs={}", "pipeline_parallel_size={},swap_space={}",
                                 "enforce_eager={},device_map_option=auto{}", "tp_size={},dp_size={}",  # sglang
                                 "mem_fraction_static=0.{},gpus={}"])
def test_lm_eval_a_rerun_on_other_gpus_is_the_same_model(tmp_path, how):
    # a task run again with more GPUs or another memory share (an interrupted run resumed on another node) is a run
    # of the same weights: the latest one kept, not a model of its own named by its parallelism
    early, late = "2024-01-01T00-00-00.000001", "2024-06-01T00-00-00.000001"
    for ts, k, right in ((early, 1, 1), (late, 2, 0)):
        _write_run(tmp_path, "org/v", "arc_easy", ts, [_mc_record(j, right, True) for j in range(3)],
                   model_args=f"pretrained=org/v,dtype=bfloat16,{how.format(k, 8 - k)}")
    with pytest.warns(UserWarning, match=r"model 'org/v', task 'arc_easy' \(2 runs\); using the latest run"):
        rm = read_lm_eval_samples(tmp_path)
    assert list(rm.model_ids) == ["org/v"] and not rm.values.any()


def test_lm_eval_a_limit_run_kept_over_a_whole_run_is_said(tmp_path):
    early, late = "2024-01-01T00-00-00.000001", "2024-06-01T00-00-00.000001"
    _write_run(tmp_path, "org/m", "arc_easy", early, [_mc_record(j, 1, True) for j in range(5)])
    folder = _write_run(tmp_path, "org/m", "arc_easy", late, [_mc_record(j, 0, True) for j in range(2)])
    doc = json.loads((folder / f"results_{late}.json").read_text())
    doc["config"]["limit"] = 2
    (folder / f"results_{late}.json").write_text(json.dumps(doc))
    with pytest.warns(UserWarning, match=re.escape(
            "model 'org/m', task 'arc_easy' (2 runs; the run kept ran with --limit 2, 1 left out on every document: "
            "delete the --limit run's files to read the whole run); using the latest run")):
        rm = read_lm_eval_samples(tmp_path)
    assert rm.observed.sum() == 2
    with pytest.warns(UserWarning, match=r"task 'arc_easy' \(2 runs\); using the earliest run"):
        assert read_lm_eval_samples(tmp_path, duplicates="first").observed.sum() == 5


def _big_run(out, name, flip=(), failed=5):
    """A run of 700 ten-choice documents (over 1 MB: large enough to be cached), digests logged, doc ``failed``
    logged as NaN."""
    rows = []
    for j in range(700):
        r = _mc_record(j, (j % 3 > 0) != (j in flip), True, n=10)
        r.update(doc={"text": "x" * 1200}, doc_hash=f"{j:064x}", prompt_hash="p" * 64, target_hash="t" * 64)
        r["acc"] = float("nan") if j == failed else float((j % 3 > 0) != (j in flip))
        rows.append(r)
    return _write_run(out, name, "arc_easy", TS, rows) / f"samples_arc_easy_{TS}.jsonl"


def _same(a, b):
    for k in ("values", "missing", "probabilities", "labels"):
        x, y = getattr(a, k), getattr(b, k)
        assert x is not None and x.dtype == y.dtype and x.tobytes() == y.tobytes(), k  # bit for bit
    pd.testing.assert_frame_equal(a.items, b.items)
    pd.testing.assert_frame_equal(a.models, b.models)


def test_lm_eval_a_second_read_of_large_logs_comes_from_the_cache_and_equals_a_parse(tmp_path, monkeypatch):
    logs = tmp_path / "logs"
    f = _big_run(logs, "org/a")
    g = _big_run(logs, "org/b", flip={1, 2, 3}, failed=6)
    assert f.stat().st_size > 1 << 20
    for x in (f, g):  # logs written a minute ago (a file modified in the last seconds is not kept)
        os.utime(x, ns=(x.stat().st_atime_ns, x.stat().st_mtime_ns - 60 * 10**9))
    monkeypatch.setenv("EFFSTATS_CACHE_DIR", "")
    with pytest.warns(UserWarning, match="2 document.s. log their metric as NaN") as w:
        parsed = read_lm_eval_samples(logs)
    monkeypatch.setenv("EFFSTATS_CACHE_DIR", str(tmp_path / "cache"))
    for _ in range(2):  # the first read keeps a copy of each file, the second reads them
        with pytest.warns(UserWarning) as again:
            _same(read_lm_eval_samples(logs), parsed)
        assert [str(x.message) for x in again] == [str(x.message) for x in w]
    assert len(list((tmp_path / "cache" / "lm_eval").glob("*.npz"))) == 2
    # the copy is what is read while the file is as it was made from (a damaged copy would be read) ...
    entry = next(p for p in (tmp_path / "cache" / "lm_eval").glob("*.npz")
                 if str(f.resolve()).encode() == bytes(np.load(p)["path"]))
    with np.load(entry) as z:
        arrays = {k: z[k] for k in z.files}
    np.savez(entry, **{**arrays, "value": np.zeros_like(arrays["value"])})
    with pytest.warns(UserWarning):
        assert read_lm_eval_samples(logs).values[0].sum() == 0
    # ... and a changed file is parsed again: its other results are read, also after a same-size edit whose
    # modification time is put back (its status-change time differs)
    stat, text = f.stat(), f.read_text()
    f.write_text(text.replace('"acc": 1.0', '"acc": 0.0'))
    os.utime(f, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert f.stat().st_size == stat.st_size
    with pytest.warns(UserWarning):
        changed = read_lm_eval_samples(logs)
    assert changed.values[0].sum() == 0 and parsed.values[0].sum() > 0
    monkeypatch.setenv("EFFSTATS_CACHE_DIR", "")
    with pytest.warns(UserWarning):
        _same(read_lm_eval_samples(logs), changed)


def _aged_run(logs, name="org/a", **kw):
    f = _big_run(logs, name, **kw)
    os.utime(f, ns=(f.stat().st_atime_ns, f.stat().st_mtime_ns - 60 * 10**9))  # written a minute ago
    return f


def _equal(a, b):
    for k in ("values", "missing", "probabilities", "labels"):
        x, y = getattr(a, k), getattr(b, k)
        assert (x is None and y is None) or (x.dtype == y.dtype and x.tobytes() == y.tobytes()), k
    pd.testing.assert_frame_equal(a.items, b.items)


def _read_quietly(logs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return read_lm_eval_samples(logs)


def test_lm_eval_cache_stats_each_file_once_a_read(tmp_path, monkeypatch):
    f = _aged_run(tmp_path / "logs")
    real, calls = os.stat, []
    monkeypatch.setattr(os, "stat", lambda p, *a, **k: (calls.append(str(p)), real(p, *a, **k))[1])
    counts = []
    for cache in ("", str(tmp_path / "cache"), str(tmp_path / "cache")):  # no cache; a copy kept; a copy read
        monkeypatch.setenv("EFFSTATS_CACHE_DIR", cache)
        calls.clear()
        _read_quietly(tmp_path / "logs")
        counts.append(calls.count(str(f)))
    assert counts[1] == counts[2] == counts[0] + 1, counts  # the cache stats the file once, before the parse


def test_lm_eval_a_file_changed_during_its_parse_is_never_served_from_the_cache(tmp_path, monkeypatch):
    from effstats.datasets import _lm_eval_records

    logs = tmp_path / "logs"
    f = _aged_run(logs)
    monkeypatch.setenv("EFFSTATS_CACHE_DIR", str(tmp_path / "cache"))
    parse = _lm_eval_records._read_file

    def parse_then_edit(*args, **kw):  # the file is rewritten (same size, modification time put back) meanwhile
        out = parse(*args, **kw)
        st, text = f.stat(), f.read_text()
        f.write_text(text.replace('"acc": 1.0', '"acc": 0.0'))
        os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
        return out

    monkeypatch.setattr(_lm_eval_records, "_read_file", parse_then_edit)
    first = _read_quietly(logs)
    monkeypatch.setattr(_lm_eval_records, "_read_file", parse)
    assert first.values[0].sum() > 0 and _read_quietly(logs).values[0].sum() == 0  # the file as it is now


@pytest.mark.parametrize("damage", ["no-path", "no-value", "short-value", "short-logits", "foreign-layout"])
def test_lm_eval_a_damaged_cache_entry_is_parsed_again_and_replaced(tmp_path, monkeypatch, damage):
    logs = tmp_path / "logs"
    _aged_run(logs)
    monkeypatch.setenv("EFFSTATS_CACHE_DIR", "")
    parsed = _read_quietly(logs)
    monkeypatch.setenv("EFFSTATS_CACHE_DIR", str(tmp_path / "cache"))
    _read_quietly(logs)
    (entry,) = (tmp_path / "cache" / "lm_eval").glob("*.npz")
    with np.load(entry) as z:
        a = {k: z[k] for k in z.files}
    if damage.startswith("no-"):
        del a[damage[3:]]
    elif damage == "short-value":
        a["value"] = a["value"][:10]
    elif damage == "short-logits":
        a["logits"] = a["logits"][:-3]
    else:
        a["meta"] = np.array([1, *a["meta"][1:3]])
    np.savez(entry, **a)
    for _ in range(2):  # parsed again, then read from the copy that replaced the damaged one
        _equal(_read_quietly(logs), parsed)
    with np.load(entry) as z:
        assert sorted(z.files) == sorted(["meta", "path", "doc_id", "value", "gold", "n", "has_logits", "logits",
                                          "hash_len", "hashes", "failed_line", "failed_doc"])
        assert len(z["value"]) == parsed.n_items


def test_lm_eval_cache_copies_that_can_no_longer_be_read_are_removed_when_one_is_written(tmp_path, monkeypatch):
    logs = tmp_path / "logs"
    gone, changed = _aged_run(logs, "org/gone"), _aged_run(logs, "org/changed")
    monkeypatch.setenv("EFFSTATS_CACHE_DIR", str(tmp_path / "cache"))
    _read_quietly(logs)
    folder = tmp_path / "cache" / "lm_eval"
    assert len(list(folder.glob("*.npz"))) == 2
    old_tmp, new_tmp = folder / ".tmp-killed.npz", folder / ".tmp-writing.npz"
    for t, age in ((old_tmp, 2 * 3600), (new_tmp, 60)):  # a writer killed two hours ago; one writing now
        t.write_bytes(b"PK")
        os.utime(t, (t.stat().st_atime - age, t.stat().st_mtime - age))
    gone.unlink()
    changed.write_text(changed.read_text() + "\n")  # parsed again later with other options, or never
    os.utime(changed, ns=(changed.stat().st_atime_ns, changed.stat().st_mtime_ns - 60 * 10**9))
    monkeypatch.setenv("EFFSTATS_CACHE_DIR", "")
    _aged_run(logs, "org/new")
    monkeypatch.setenv("EFFSTATS_CACHE_DIR", str(tmp_path / "cache"))
    _read_quietly(logs / "org__new")  # writes the new file's copy
    left = sorted(p.name for p in folder.iterdir())
    assert len(left) == 2 and ".tmp-writing.npz" in left, left  # the new copy and the temporary file of a writer


def test_lm_eval_cache_folder_is_pruned_once_a_read_not_once_a_copy(tmp_path, monkeypatch):
    # a first read of n files writes n copies: pruning after each would open n²/2 copies
    from effstats.datasets import _lm_eval_cache

    logs = tmp_path / "logs"
    for i in range(3):
        _aged_run(logs, f"org/m{i}")
    monkeypatch.setenv("EFFSTATS_CACHE_DIR", str(tmp_path / "cache"))
    real, calls = _lm_eval_cache._prune, []
    monkeypatch.setattr(_lm_eval_cache, "_prune", lambda folder, keep: (calls.append(len(keep)), real(folder, keep)))
    parsed = _read_quietly(logs)
    assert calls == [3], calls  # once, keeping the three copies just written
    assert len(list((tmp_path / "cache" / "lm_eval").glob("*.npz"))) == 3
    _equal(_read_quietly(logs), parsed)  # read back from the copies: nothing written, nothing pruned
    assert calls == [3], calls


@pytest.mark.skipif(not hasattr(__import__("signal"), "SIGXFSZ"), reason="needs RLIMIT_FSIZE (POSIX)")
def test_lm_eval_a_cache_that_cannot_be_written_is_passed_over_without_a_word(tmp_path):
    # a full disk: writes of the copies fail (EFBIG under a file-size limit); the read is right and says nothing
    import subprocess
    import sys

    logs = tmp_path / "logs"
    for name in ("org/a", "org/b"):
        _aged_run(logs, name)
    code = ("import resource, signal, warnings, gc, sys\n"
            "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
            "resource.setrlimit(resource.RLIMIT_FSIZE, (20000, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))\n"
            "warnings.simplefilter('ignore')\n"
            "from effstats.datasets import read_lm_eval_samples\n"
            f"rm = read_lm_eval_samples({str(logs)!r})\n"
            "gc.collect()\n"
            "print(rm.shape, int(rm.values.sum()))\n")
    env = {**os.environ, "EFFSTATS_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    rm = _read_quietly(logs)
    assert proc.returncode == 0 and proc.stdout.strip() == f"{rm.shape} {int(rm.values.sum())}", proc.stderr
    assert proc.stderr == "" and not list((tmp_path / "cache" / "lm_eval").iterdir())


def test_lm_eval_a_model_folder_whose_name_is_not_utf8_is_named_with_escapes(tmp_path):
    # no results file names the model: its folder does, and a name that is not UTF-8 is written \xNN, so that the
    # commands can write it to their manifests and reports
    from effstats.cli import main

    logs = tmp_path / "logs"
    for name in ("org/a", "org/b", "org/c"):
        _write_run(logs, name, "arc_easy", TS, [_mc_record(j, j % 3 > 0, True) for j in range(40)], results=False)
    bad = os.fsdecode(bytes(tmp_path / "logs") + b"/org__bad\xff\xfename")
    os.rename(logs / "org__c", bad)
    rm = _read_quietly(logs)
    assert "org/bad\\xff\\xfename" in list(rm.model_ids)
    assert main(["select", str(logs), "--budget", "10", "--out", str(tmp_path / "sel"), "--no-progress"]) == 0


def test_lm_eval_a_log_whose_task_name_is_not_utf8_is_named_with_escapes(tmp_path, capsys):
    # a task is named by its file: bytes that are not UTF-8 are written \xNN, as a model folder's are, so that the
    # commands can write the items' ids to their manifests and print them (select stopped: "'utf-8' codec can't
    # encode character '\udcff'")
    from effstats.cli import main

    logs = tmp_path / "logs"
    for name in ("org/a", "org/b", "org/c"):
        folder = _write_run(logs, name, "arc_easy", TS, [_mc_record(j, j % 3 > 0, True) for j in range(40)])
        os.rename(folder / f"samples_arc_easy_{TS}.jsonl",
                  os.fsdecode(bytes(folder) + f"/samples_arc\xffeasy_{TS}.jsonl".encode("latin-1")))
    rm = read_lm_eval_samples(logs)
    assert set(rm.items["task"]) == {"arc\\xffeasy"} and rm.item_ids[0] == "arc\\xffeasy/0"
    assert main(["select", str(logs), "--budget", "10", "--out", str(tmp_path / "sel"), "--no-progress"]) == 0
    assert "arc\\xffeasy" in capsys.readouterr().out


@pytest.mark.filterwarnings("ignore:path_or_paths. several runs of one task")
@pytest.mark.parametrize("duplicates", ["last", "mean"])
def test_lm_eval_models_scored_under_other_filters_of_one_task_are_refused_naming_both(tmp_path, duplicates):
    # each log holds one filter, so none is asked for; but 'strict-match' and 'flexible-extract' extract other
    # answers from one generation: joined as one task, the models' scores are of two metrics
    def gen(doc_id, filt):
        return {"doc_id": doc_id, "target": "4", "resps": [["4"]], "filtered_resps": ["4"], "filter": filt,
                "metrics": ["exact_match"], "exact_match": float(doc_id % 2)}

    _write_run(tmp_path, "org/a", "gsm8k", TS, [gen(i, "strict-match") for i in range(4)])
    _write_run(tmp_path, "org/b", "gsm8k", TS, [gen(i, "flexible-extract") for i in range(4)])
    _write_run(tmp_path, "org/c", "gsm8k", TS, [gen(i, "strict-match") for i in range(4)])
    if duplicates == "mean":  # the runs of one model averaged: one under each filter
        shutil.rmtree(tmp_path / "org__b")
        _write_run(tmp_path, "org/a", "gsm8k", "2025-02-01T00-00-00.000000",
                   [gen(i, "flexible-extract") for i in range(4)])
    with pytest.raises(ValueError, match=r"^path_or_paths: task 'gsm8k' is scored under other filters: "
                                         r"'flexible-extract' in org__(a|b)/samples_gsm8k_.*, 'strict-match' in "
                                         r"org__a/samples_gsm8k_"):
        read_lm_eval_samples(tmp_path, metric="exact_match", duplicates=duplicates)


def test_lm_eval_the_filter_read_is_kept_per_task(tmp_path):
    rows = [_mc_record(j, j % 2 == 0, True) for j in range(3)]
    _write_run(tmp_path, "org/a", "arc_easy", TS, rows)
    _write_run(tmp_path, "org/a", "boolq", TS, [dict(r, filter="take_first") for r in rows])
    rm = read_lm_eval_samples(tmp_path)
    assert rm.items["lm_eval_filter"].tolist() == ["none"] * 3 + ["take_first"] * 3


def test_lm_eval_copies_jupyter_keeps_in_ipynb_checkpoints_are_left_out_and_named(tmp_path):
    # JupyterLab's editor saves a copy of an opened log as .ipynb_checkpoints/<name>-checkpoint.jsonl beside it:
    # read, its name made a task of its own ('arc_easy_<timestamp>-checkpoint') of a model '.ipynb_checkpoints'
    from effstats.datasets._files import LeftOutPathsWarning

    rows = [_mc_record(j, j % 2 == 0, True) for j in range(3)]
    for name in ("org/a", "org/b"):
        folder = _write_run(tmp_path, name, "arc_easy", TS, rows)
        _write(folder / ".ipynb_checkpoints" / f"samples_arc_easy_{TS}-checkpoint.jsonl", rows[:2])
    with pytest.warns(LeftOutPathsWarning, match=r"^path_or_paths: left out 2 file\(s\) in \.ipynb_checkpoints "
                                                 r"folders \(JupyterLab's copies of files opened in it\): "
                                                 r"org__a/\.ipynb_checkpoints/samples_arc_easy_"):
        rm = read_lm_eval_samples(tmp_path)
    assert rm.model_ids.tolist() == ["org/a", "org/b"] and set(rm.items["task"]) == {"arc_easy"}
    assert rm.values.tolist() == [[True, False, True]] * 2
