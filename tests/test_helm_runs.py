"""read_helm_runs on run folders written in HELM's layout, generated from a known truth matrix.

Each fixture run folder holds ``run_spec.json`` (name ``<scenario>:<args>,model=<org>_<name>``, adapter_spec with
``model`` and ``model_deployment``) and ``per_instance_stats.json`` as HELM's runner writes it: one entry per
(instance, perturbation, train trial), keys whose value is None left out, each stat's name carrying the split and
the perturbation of its instance. ``scenario_state.json`` and ``stats.json`` are written too, as HELM does, and
are not needed by the reader.
"""
from __future__ import annotations

import doctest
import json
import tempfile
from pathlib import Path

import hypothesis.extra.numpy as hnp
import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

from effstats.datasets import helm, read_helm_runs

TYPO = {"name": "typo", "robustness": True, "fairness": False, "computed_on": "perturbed", "seed": 0, "prob": 0.1}


def _stat(metric, value, split="test", perturbation=None):
    name = {"name": metric, "split": split}
    if perturbation is not None:
        name["perturbation"] = perturbation
    return {"name": name, "count": 1, "sum": value, "sum_squared": value * value, "min": value, "max": value,
            "mean": value, "variance": 0.0, "stddev": 0.0}


def _entry(iid, trial, stats, perturbation=None):
    e = {"instance_id": iid, "train_trial_index": trial, "stats": stats}
    if perturbation is not None:
        e["perturbation"] = perturbation
    return e


def write_run(root, suite, model, scenario, entries, *, spec=True, spec_model=True):
    """A HELM run folder ``root/runs/<suite>/<scenario>,model=<model with _>`` with the given per-instance entries."""
    sep = "," if ":" in scenario else ":"
    name = f"{scenario}{sep}model={model.replace('/', '_')}"
    run = Path(root, "runs", suite, name)
    run.mkdir(parents=True)
    if spec:
        adapter = {"method": "multiple_choice_joint", "max_train_instances": 5, "num_train_trials": 1,
                   "model_deployment": f"huggingface/{model.split('/')[-1]}"}
        if spec_model:
            adapter["model"] = model
        (run / "run_spec.json").write_text(json.dumps({
            "name": name, "scenario_spec": {"class_name": "helm.benchmark.scenarios.x.XScenario", "args": {}},
            "adapter_spec": adapter, "metric_specs": [], "groups": [scenario.split(":")[0]]}, indent=2))
    (run / "per_instance_stats.json").write_text(json.dumps(entries, indent=2))
    (run / "scenario_state.json").write_text(json.dumps({"adapter_spec": {}, "request_states": []}))
    (run / "stats.json").write_text("[]")
    return run


def truth_entries(values, observed, *, trials=1, noise=None, metric="exact_match"):
    """Entries whose trial means are ``values`` (observed instances only), plus rows that must be ignored:
    a perturbed copy and a second metric of every instance, and a valid-split instance."""
    out = []
    for j, (v, obs) in enumerate(zip(values, observed)):
        if not obs:
            continue
        deltas = [0.0] * trials if noise is None else noise[j][:trials]
        for t, dv in enumerate(deltas):
            out.append(_entry(f"id{j}", t, [_stat(metric, v + dv), _stat("num_output_tokens", 7.0)]))
            out.append(_entry(f"id{j}", t, [_stat(metric, 1.0 - v, perturbation=TYPO)], perturbation=TYPO))
    out.append(_entry("id999", 0, [_stat(metric, 0.5, split="valid")]))
    return out


MODELS = ["openai/gpt2", "eleutherai/pythia-1b", "meta/llama-7b"]
SCENARIOS = ["mmlu:subject=anatomy,method=multiple_choice_joint", "boolq"]


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_values_read_back_equal_the_truth(data):
    n_m = data.draw(st.integers(1, 3))
    n_i = data.draw(st.integers(1, 6))
    binary = data.draw(st.booleans())
    elems = st.sampled_from([0.0, 1.0]) if binary else st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0])
    truth = {s: data.draw(hnp.arrays(float, (n_m, n_i), elements=elems)) for s in SCENARIOS}
    observed = {s: data.draw(hnp.arrays(bool, (n_m, n_i))) for s in SCENARIOS}
    for s in SCENARIOS:
        observed[s][:, 0] = True  # every model has run every scenario on id0
    trials = data.draw(st.integers(1, 3))
    # trial values spread symmetrically around the truth (0.25 steps stay in [0, 1] and average exactly)
    with tempfile.TemporaryDirectory() as tmp:
        for s in SCENARIOS:
            for m, model in enumerate(MODELS[:n_m]):
                v = truth[s][m]
                noise = [([0.0] if trials != 2 else []) + [-d, d] for d in np.minimum(np.minimum(v, 1 - v), 0.25)]
                write_run(tmp, "v1", model, s, truth_entries(v, observed[s][m], trials=trials, noise=noise))
        rm = read_helm_runs(Path(tmp, "runs"))
    assert list(rm.model_ids) == sorted(MODELS[:n_m])
    order = [MODELS.index(m) for m in rm.model_ids]
    expected = np.concatenate([np.where(observed[s], truth[s], np.nan)[order] for s in sorted(SCENARIOS)], axis=1)
    present = ~np.isnan(expected).all(axis=0)  # instances no model ran are not items
    np.testing.assert_array_equal(rm.values_with_nan(), expected[:, present])
    np.testing.assert_array_equal(~rm.observed, np.isnan(expected[:, present]))
    read = expected[~np.isnan(expected)]
    assert rm.kind == ("binary" if np.isin(read, [0.0, 1.0]).all() else "score")
    ids = [f"id{j}" for j in range(n_i)]
    expected_items = [f"{s}/{i}" for s in sorted(SCENARIOS) for k, i in enumerate(ids)
                      if observed[s][:, k].any()]
    assert list(rm.item_ids) == expected_items
    assert list(rm.items.columns) == ["task", "instance_id", "doc_id", "adapter_spec"]
    # each scenario's protocol: the adapter spec without the model's own fields and the trial count
    assert set(rm.items["adapter_spec"]) == {'{"max_train_instances":5,"method":"multiple_choice_joint"}'}
    assert (rm.items["instance_id"] == rm.items["doc_id"]).all()
    assert (rm.items.index == rm.items["task"] + "/" + rm.items["instance_id"]).all()
    assert (rm.models["n_tasks"] == 2).all()


def test_model_names_and_scenarios_come_from_the_run_spec_or_the_run_name(tmp_path):
    write_run(tmp_path, "v1", "openai/gpt2", "mmlu:subject=anatomy,method=multiple_choice_joint",
              truth_entries([1.0], [True]))
    write_run(tmp_path, "v1", "org/no-model-field", "boolq", truth_entries([0.0], [True]), spec_model=False)
    write_run(tmp_path, "v1", "org/no-spec", "boolq", truth_entries([1.0], [True]), spec=False)
    rm = read_helm_runs(tmp_path / "runs" / "v1")
    # adapter_spec.model; else adapter_spec.model_deployment; else the run name's model= part ("/" written "_")
    assert list(rm.model_ids) == ["huggingface/no-model-field", "openai/gpt2", "org_no-spec"]
    assert list(rm.item_ids) == ["boolq/id0", "mmlu:subject=anatomy,method=multiple_choice_joint/id0"]
    np.testing.assert_array_equal(rm.values_with_nan(), [[0, np.nan], [np.nan, 1], [1, np.nan]])
    # a run folder, its per_instance_stats.json, and a list of them
    run = next((tmp_path / "runs" / "v1").glob("mmlu*"))
    assert read_helm_runs(run).shape == read_helm_runs(run / "per_instance_stats.json").shape == (1, 1)
    assert read_helm_runs([run, run]).shape == (1, 1)  # one folder named twice is one run


def test_perturbations_splits_and_trials(tmp_path):
    other = {**TYPO, "prob": 0.3}
    entries = [
        _entry("id0", 0, [_stat("exact_match", 1.0)]),
        _entry("id0", 1, [_stat("exact_match", 0.0)]),  # a second train trial: the value is the mean, 0.5
        _entry("id1", 0, [_stat("exact_match", 1.0)]),
        _entry("id0", 0, [_stat("exact_match", 0.0, perturbation=TYPO)], perturbation=TYPO),
        _entry("id1", 0, [_stat("exact_match", 0.0, perturbation=TYPO)], perturbation=TYPO),
        _entry("id1", 0, [_stat("exact_match", 1.0, perturbation=other)], perturbation=other),
        _entry("id2", 0, [_stat("exact_match", 1.0, split="valid")]),
    ]
    write_run(tmp_path, "v1", "a/m", "boolq", entries)
    rm = read_helm_runs(tmp_path)
    assert list(rm.item_ids) == ["boolq/id0", "boolq/id1"] and rm.values.tolist() == [[0.5, 1.0]] and rm.kind == "score"
    assert read_helm_runs(tmp_path, split=None).values.tolist() == [[0.5, 1.0, 1.0]]
    assert read_helm_runs(tmp_path, split="valid").values.tolist() == [[1.0]]
    assert read_helm_runs(tmp_path, perturbation={"name": "typo", "prob": 0.1}).values.tolist() == [[0.0, 0.0]]
    assert read_helm_runs(tmp_path, perturbation={"prob": 0.3}).values.tolist() == [[1.0]]
    with pytest.raises(ValueError, match="^perturbation: id1 .*several 'exact_match' stats"):
        read_helm_runs(tmp_path, perturbation="typo")  # two typo variants of id1: the name alone is ambiguous


def test_a_repeated_instance_record_is_named_not_blamed_on_an_option(tmp_path):
    # two records alike (a file written twice): no option picks one, so the message names the record, not an option
    entries = [_entry("id0", 0, [_stat("exact_match", 1.0)]), _entry("id1", 0, [_stat("exact_match", 0.0)]),
               _entry("id0", 0, [_stat("exact_match", 0.0)])]
    write_run(tmp_path / "dup", "v1", "a/m", "boolq", entries)
    with pytest.raises(ValueError, match=r"^path_or_paths: boolq:model=a_m/per_instance_stats\.json repeats instance "
                                         r"'id0' \(train trial 0, split 'test', perturbation None\) with two values "
                                         r"of 'exact_match', 1 and 0 \(records 0 and 2\); HELM's records of one "
                                         r"instance, perturbation and train trial agree, so no option picks one"):
        read_helm_runs(tmp_path / "dup")
    # the same instance in two splits, read with split=None: the split picks one
    entries = [_entry("id0", 0, [_stat("exact_match", 1.0), _stat("exact_match", 0.0, split="valid")])]
    write_run(tmp_path / "splits", "v1", "a/m", "boolq", entries)
    with pytest.raises(ValueError, match=r"^split: id0 \(train trial 0\) has 'exact_match' stats in the splits "
                                         r"'test' and 'valid' .*pass split= one of them"):
        read_helm_runs(tmp_path / "splits", split=None)
    assert read_helm_runs(tmp_path / "splits", split="valid").values.tolist() == [[0.0]]


def test_records_of_several_metric_classes_are_merged_and_conflicts_refused(tmp_path, capsys):
    """HELM's runner writes one record for each metric class that scored an (instance, perturbation, train trial),
    and reads them merged: a stat two records both give is one value when they agree, and refused, naming the
    file and the key, when they do not (no option picks one); the command line says it in one line, exit 2."""
    from effstats.cli import main

    basic = _entry("id0", 0, [_stat("exact_match", 1.0), _stat("num_output_tokens", 3.0)])
    other = _entry("id0", 0, [_stat("exact_match", 1.0), _stat("f1_score", 0.5)])  # a second metric class
    write_run(tmp_path / "agree", "v1", "a/m", "boolq", [basic, other, _entry("id1", 0, [_stat("exact_match", 0.0)])])
    assert read_helm_runs(tmp_path / "agree").values.tolist() == [[1.0, 0.0]]
    assert read_helm_runs(tmp_path / "agree", metric="f1_score").values.tolist() == [[0.5]]
    where = r"^path_or_paths: boolq:model=a_m/per_instance_stats\.json "
    twice = _entry("id0", 0, [_stat("exact_match", 1.0), _stat("exact_match", 0.0)])
    sub = _entry("id0", 0, [_stat("exact_match", 1.0), {**_stat("exact_match", 1.0), "name": {
        "name": "exact_match", "split": "test", "sub_split": "toxic"}}])
    for name, entries, msg in [
            ("conflict", [basic, _entry("id0", 0, [_stat("exact_match", 0.0)])],
             r"repeats instance 'id0' \(train trial 0, split 'test', perturbation None\) with two values of "
             r"'exact_match', 1 and 0 \(records 0 and 1\)"),
            ("twice", [twice], r"repeats instance 'id0' .* 1 and 0 \(record 0, its stat listed twice\)"),
            ("sub_split", [sub], r"puts instance 'id0' \(train trial 0, split 'test', perturbation None\) in the "
                                 r"sub-splits None and 'toxic' \(record 0\); HELM gives an instance one sub-split")]:
        write_run(tmp_path / name, "v1", "a/m", "boolq", entries)
        with pytest.raises(ValueError, match=where + msg):
            read_helm_runs(tmp_path / name)
        assert main(["select", str(tmp_path / name), "--budget", "2", "--out", str(tmp_path / "out")]) == 2
        err = capsys.readouterr().err
        assert len(err.splitlines()) == 1 and "Traceback" not in err, err


@pytest.mark.parametrize("field, bad", [
    ("train_trial_index", [0]), ("train_trial_index", "0"), ("train_trial_index", True),
    ("train_trial_index", -1), ("train_trial_index", 0.0), ("instance_id", None), ("instance_id", {"id": 1}),
    ("instance_id", False), ("perturbation", "typo"), ("perturbation", {"name": ["typo"]}),
])
def test_a_record_whose_key_is_not_helms_kind_is_refused_naming_it(tmp_path, capsys, field, bad):
    """An instance id, train trial or perturbation HELM would not write (a list, text for a number, a negative trial)
    is one error naming the file, the record and the field: not a TypeError from an unhashable key, and not "0"
    beside 0 read as two train trials."""
    from effstats.cli import main

    good = _entry("id1", 0, [_stat("exact_match", 1.0)])
    if field == "perturbation":
        entry = _entry("id0", 0, [_stat("exact_match", 0.0, perturbation=bad)], perturbation=bad)
    else:
        entry = {**_entry("id0", 0, [_stat("exact_match", 0.0)]), field: bad}
    write_run(tmp_path, "v1", "a/m", "boolq", [good, entry, _entry("id0", 0, [_stat("exact_match", 1.0)])])
    expected = {"train_trial_index": r"entry 1 \(id0\): train_trial_index is .*, expected a whole number >= 0",
                "instance_id": r"entry 1: instance_id is .*, expected a string",
                "perturbation": r"entry 1 \(id0\): the perturbation of 'exact_match' is .*, expected a JSON object "
                                r"with a string name"}[field]
    for kw in ({}, {"trials": "separate"}, {"split": None}):
        with pytest.raises(ValueError, match=r"^path_or_paths: boolq:model=a_m/per_instance_stats\.json " + expected):
            read_helm_runs(tmp_path, perturbation="typo" if field == "perturbation" else None, **kw)
    assert main(["select", str(tmp_path), "--budget", "2", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "Traceback" not in err and "entry 1" in err, err


def test_duplicate_runs_first_last_mean_error(tmp_path):
    write_run(tmp_path, "v1.9", "a/m", "boolq", truth_entries([1.0, 0.0, 1.0], [True, True, True]))
    write_run(tmp_path, "v1.10", "a/m", "boolq", truth_entries([0.0, 0.0], [True, True]))
    write_run(tmp_path, "v1.10", "b/m", "boolq", truth_entries([1.0, 1.0, 1.0], [True, True, True]))
    with pytest.warns(UserWarning, match=r"model 'a/m', task 'boolq' \(2 runs: v1\.9/.*v1\.10/.*\); using the last run "
                                         r"of each in the order given \(duplicates='last'; 'mean' averages the runs"):
        last = read_helm_runs(tmp_path / "runs")  # v1.9 is read before v1.10
    np.testing.assert_array_equal(last.values_with_nan()[0], [0.0, 0.0, np.nan])
    with pytest.warns(UserWarning, match=r"\(2 runs: v1\.9/.*\); using the first run of each in the order given"):
        first = read_helm_runs(tmp_path / "runs", duplicates="first")
    np.testing.assert_array_equal(first.values_with_nan()[0], [1.0, 0.0, 1.0])
    with pytest.warns(UserWarning, match=r"model 'a/m', task 'boolq' \(2 runs: v1\.9/.*v1\.10/.*\); averaging the runs "
                                         r"of each: an item's 0/1 results become a graded score, the share of runs "
                                         r"right \(duplicates='mean'; 'last' or 'first' takes one run, 'error' refuses "
                                         r"them\)"):
        mean = read_helm_runs(tmp_path / "runs", duplicates="mean")
    np.testing.assert_array_equal(mean.values_with_nan()[0], [0.5, 0.0, 1.0])  # id2: only in the v1.9 run
    with pytest.raises(ValueError, match=r"^path_or_paths: model 'a/m' has 2 runs of task 'boolq' \(v1\.9/.*v1\.10/"):
        read_helm_runs(tmp_path / "runs", duplicates="error")
    # the order given decides which run is last
    runs = sorted((tmp_path / "runs").glob("*/boolq*model=a_m"))
    with pytest.warns(UserWarning, match=r"\(2 runs: v1\.10/.*v1\.9/.*\); using the last run of each in the order"):
        assert read_helm_runs(runs[::-1] if runs[0].parent.name == "v1.9" else runs).values.tolist() == [[1.0, 0.0,
                                                                                                          1.0]]
    with pytest.raises(ValueError, match="^duplicates: expected one of 'last', 'first', 'error', 'mean'"):
        read_helm_runs(tmp_path / "runs", duplicates="latest")


def test_missing_cells_and_runs_without_the_metric(tmp_path):
    write_run(tmp_path, "v1", "a/m", "boolq", truth_entries([1.0, 0.0, 1.0], [True, False, True]))
    write_run(tmp_path, "v1", "b/m", "boolq", truth_entries([0.0, 1.0, 1.0], [True, True, True]))
    write_run(tmp_path, "v1", "b/m", "narrative_qa", truth_entries([0.4], [True], metric="f1_score"))
    with pytest.warns(UserWarning, match=r"^path_or_paths: 1 of 3 runs have no 'exact_match' stats.*narrative_qa"):
        rm = read_helm_runs(tmp_path)
    np.testing.assert_array_equal(rm.missing, [[False, True, False], [False, False, False]])
    np.testing.assert_array_equal(rm.values_with_nan(), [[1, np.nan, 1], [0, 1, 1]])
    with pytest.warns(UserWarning, match="2 of 3 runs have no 'f1_score' stats"):
        f1 = read_helm_runs(tmp_path, metric="f1_score")
    assert f1.shape == (1, 1) and f1.values.tolist() == [[0.4]] and f1.kind == "score"


def test_bad_input_gives_one_line_errors_naming_the_argument(tmp_path):
    run = write_run(tmp_path, "v1", "a/m", "boolq", truth_entries([1.0, 0.0], [True, True]))
    with pytest.raises(ValueError,
                       match=r"^metric: 'bleu_4' is in no run's per_instance_stats.json; metrics there: \["):
        read_helm_runs(tmp_path, metric="bleu_4")
    with pytest.raises(ValueError, match=r"^metric: 'num_output_tokens' values must lie in \[0, 1\]"):
        read_helm_runs(tmp_path, metric="num_output_tokens")
    with pytest.raises(ValueError,
                       match=r"^split: no 'exact_match' stats on split 'train'; splits there: \['test', 'valid'\]"):
        read_helm_runs(tmp_path, split="train")
    with pytest.raises(ValueError,
                       match=r"^perturbation: no 'exact_match' stats match 'dialect'; perturbations there: \[None, "
                             r"'typo'\]"):
        read_helm_runs(tmp_path, perturbation="dialect")
    for bad, name in [(3.14, "path_or_paths"), ([], "path_or_paths")]:
        with pytest.raises(ValueError, match=f"^{name}:"):
            read_helm_runs(bad)
    with pytest.raises(FileNotFoundError, match="^path_or_paths:"):
        read_helm_runs(tmp_path / "nothing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="^path_or_paths: directory .* contains no HELM run folder"):
        read_helm_runs(tmp_path / "empty")
    for kw, name in [({"metric": ""}, "metric"), ({"split": 3}, "split"), ({"perturbation": 3}, "perturbation"),
                     ({"perturbation": {}}, "perturbation")]:
        with pytest.raises(ValueError, match=f"^{name}:"):
            read_helm_runs(tmp_path, **kw)

    stats = run / "per_instance_stats.json"
    good = stats.read_text()
    stats.write_text("version https://git-lfs.github.com/spec/v1\noid sha256:" + "0" * 64 + "\nsize 123456\n")
    with pytest.raises(ValueError) as exc:
        read_helm_runs(tmp_path)
    msg = str(exc.value)
    assert msg == (f"path_or_paths: {run.name}/per_instance_stats.json is a Git LFS pointer, not the log; "
                   "run `git lfs pull`")
    stats.write_text(good[: len(good) // 2])
    with pytest.raises(ValueError,
                       match=r"^path_or_paths: boolq:model=a_m/per_instance_stats.json is truncated, "
                             r"not valid JSON") as exc:
        read_helm_runs(tmp_path)
    assert "\n" not in str(exc.value)
    stats.write_text('[{"instance_id": "id0", "stats": [}]')
    with pytest.raises(ValueError, match=r"^path_or_paths: .*per_instance_stats.json is not valid JSON \(line 1"):
        read_helm_runs(tmp_path)
    stats.write_text('[{"id": "id0"}]')
    with pytest.raises(ValueError, match=r"^path_or_paths: .*entry 0 is not a HELM per-instance record"):
        read_helm_runs(tmp_path)
    stats.write_text(good)
    (run / "run_spec.json").write_text("[1, 2]")
    with pytest.raises(ValueError, match=r"^path_or_paths: .*run_spec.json is not a HELM run spec"):
        read_helm_runs(tmp_path)


def test_the_package_exports_the_reader_and_its_examples_run():
    import effstats.datasets as ds

    assert "read_helm_runs" in ds.__all__ and ds.read_helm_runs is read_helm_runs
    result = doctest.testmod(helm, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


def test_a_nul_in_an_instance_id_is_kept(tmp_path):
    # JSON keeps the whole id (a CSV parser would cut it at the NUL): 'id0\0x' stays another instance than 'id0'
    entries = [_entry("id0", 0, [_stat("exact_match", 1.0)]), _entry("id0\0x", 0, [_stat("exact_match", 0.0)])]
    write_run(tmp_path, "v1", "a/m", "boolq", entries)
    rm = read_helm_runs(tmp_path)
    assert list(rm.item_ids) == ["boolq/id0", "boolq/id0\0x"] and rm.values.tolist() == [[1.0, 0.0]]


@pytest.mark.parametrize("name", ["per_instance_stats.json", "run_spec.json"])
def test_a_run_file_nested_too_deeply_is_one_error_and_a_byte_order_mark_is_read_past(tmp_path, name):
    write_run(tmp_path, "v1", "a/m", "boolq", truth_entries([1.0, 0.0, 1.0], [True, True, True]))
    f = next((tmp_path / "runs").rglob(name))
    want = read_helm_runs(tmp_path / "runs").values.tolist()
    f.write_bytes(b"\xef\xbb\xbf" + f.read_bytes())  # a BOM, as some editors save JSON
    assert read_helm_runs(tmp_path / "runs").values.tolist() == want
    f.write_text("[" * 50_000)
    with pytest.raises(ValueError, match=rf"^path_or_paths: .*{name} nests lists or objects too deeply to be a HELM "
                                         "run file"):
        read_helm_runs(tmp_path / "runs")


def test_a_run_spec_naming_a_key_twice_is_refused(tmp_path):
    write_run(tmp_path, "v1", "a/m", "boolq", truth_entries([1.0, 0.0, 1.0], [True, True, True]))
    f = next((tmp_path / "runs").rglob("run_spec.json"))
    text = f.read_text().replace("{", '{"name": "x", ', 1)  # the spec's name twice: the reader would keep the last
    f.write_text(text)
    line = text[:text.index('"name"', text.index('"name"') + 1)].count("\n") + 1  # where it is named again
    with pytest.raises(ValueError, match=rf"^path_or_paths: .*run_spec.json line {line} names the key 'name' twice "
                                         "in one object"):
        read_helm_runs(tmp_path / "runs")
    f.write_text(text.replace('{"name": "x", ', '{"name": "x",\n\n  ', 1))  # the line counts the file's lines
    with pytest.raises(ValueError, match=rf"run_spec.json line {line + 2} names the key 'name' twice"):
        read_helm_runs(tmp_path / "runs")


@pytest.mark.parametrize("iid", ['"id1"', '"q:1"', '"q\\u003a1"'])
def test_per_instance_stats_naming_a_key_twice_are_refused(tmp_path, iid):
    """A stat with ``mean`` twice, or a perturbation with ``name`` twice (JSON keeps the last), is refused naming the
    key, whether or not the file's strings hold colons (written or escaped); the file without them reads."""
    run = write_run(tmp_path, "v1", "a/m", "boolq", truth_entries([1.0, 0.0, 1.0], [True, True, True]))
    f = run / "per_instance_stats.json"
    text = f.read_text().replace('"id1"', iid)
    f.write_text(text)
    assert read_helm_runs(tmp_path / "runs").shape == (1, 3)
    for twice, key in [('"mean": 0.0, "mean": 1.0', "mean"), ('"name": "typo", "name": "x:y"', "name")]:
        bad = text.replace(twice.split(", ")[0], twice.replace(", ", ",\n"), 1)
        f.write_text(bad)
        again = bad.index(twice.split(", ")[1], bad.index(twice.split(", ")[0]))
        line = bad[:again].count("\n") + 1  # the line that names it again
        with pytest.raises(ValueError, match=rf"^path_or_paths: .*per_instance_stats.json line {line} names the key "
                                             rf"'{key}' twice in one object \(a hand edit\?\); keep one of them$"):
            read_helm_runs(tmp_path / "runs")


@pytest.mark.parametrize("stat, shown", [
    ({"count": "1", "sum": 1.0}, r"count is '1'"), ({"count": [1], "sum": 1.0}, r"count is \[1\]"),
    ({"count": 1, "sum": "1"}, r"sum is '1'"), ({"count": True, "sum": 1.0}, r"count is True"),
    ({"count": -1, "sum": -1.0}, r"count is -1"), ({"count": 1.5, "sum": 1.0}, r"count is 1\.5"),
    ({"mean": 10 ** 400}, r"is 1000+, expected a finite number"),
    ({"count": 1, "sum": 10 ** 400}, r"sum is 1000+, expected a finite number"),
    ({"mean": 1.0000001}, r"has 1\.0000001$"),
])
def test_a_stat_whose_count_sum_or_mean_is_no_number_is_one_error(tmp_path, capsys, stat, shown):
    """HELM's Stat holds a whole count >= 0 and float sum and mean; a count or sum given as text, a list, a boolean
    or a negative count, and an integer too large for a float, are one error naming the stat's field (not a
    TypeError or OverflowError, nor -1 / -1 read as 1); a value just outside [0, 1] is shown with its digits, not
    rounded into the interval."""
    from effstats.cli import main

    bad = {"name": {"name": "exact_match", "split": "test"}, **stat}
    write_run(tmp_path, "v1", "a/m", "boolq", [_entry("id1", 0, [_stat("exact_match", 1.0)]), _entry("id0", 0, [bad])])
    for kw in ({}, {"trials": "separate"}):
        with pytest.raises(ValueError, match=r"^metric: 'exact_match' of id0 in boolq:model=a_m/per_instance_stats"
                                             r"\.json (entry 1|has|is)|^metric: 'exact_match' values must lie") as e:
            read_helm_runs(tmp_path, **kw)
        assert len(str(e.value).splitlines()) == 1
        assert __import__("re").search(shown, str(e.value)), str(e.value)
    assert main(["select", str(tmp_path), "--budget", "2", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err


def test_a_perturbation_without_a_name_is_listed_by_its_fields_not_as_unperturbed(tmp_path):
    """Perturbed records whose perturbation has no name: when nothing matches, the perturbations listed showed them
    as None, read '(None: unperturbed)', as if the run had no perturbed instance; they are listed by their fields,
    as JSON, which is what perturbation= (and --perturbation) take to read them."""
    nameless = {"robustness": True, "prob": 0.1}
    write_run(tmp_path, "v1", "a/m", "boolq", [
        _entry("id0", 0, [_stat("exact_match", 1.0)]),
        _entry("id0", 0, [_stat("exact_match", 0.0, perturbation=nameless)], perturbation=nameless)])
    with pytest.raises(ValueError, match=r"^perturbation: no 'exact_match' stats match 'typo'; perturbations there: "
                                         r"\[None, '\{\"prob\": 0\.1, \"robustness\": true\}'\] "
                                         r"\(None: unperturbed\)$"):
        read_helm_runs(tmp_path, perturbation="typo")
    assert read_helm_runs(tmp_path, perturbation=json.loads('{"prob": 0.1, "robustness": true}')).values.tolist() == [
        [0.0]]
