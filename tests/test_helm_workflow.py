"""HELM run folders through the evaluation loop: select -> the chosen instances per run spec -> the new model's
HELM runs read back -> estimate, on suites written in HELM's layout from a known truth (tests/helm_fixtures.py).

Checked against the truth: every run's ``stats.json`` aggregate equals the mean of the values read, and held-out
models' intervals cover their means over every instance; the command line's HELM options (split, perturbation,
train trials, per-scenario metrics) and its refusals give one line.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from effstats.cli import main
from effstats.datasets import read_helm_runs
from effstats.workflow import estimate, read_results

from helm_fixtures import Scenario, held_out_coverage, stats_json_agreement, write_suite

# the reference logs are parsed once and read by test after test (tests/conftest.py: parsed_logs_kept)
pytestmark = pytest.mark.usefixtures("parsed_logs_kept")

BBQ = "bbq:subject=all,method=multiple_choice_joint"
MMLU = "mmlu:subject=anatomy,method=multiple_choice_joint"


def _run(argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _one_line_error(code, err, *needles):
    assert code == 2, err
    lines = err.strip().splitlines()
    errors = [x for x in lines if ": error: " in x]
    assert len(errors) == 1 and "Traceback" not in err, err
    for n in needles:
        assert n in errors[0], (n, errors[0])
    return errors[0]


def _split_off(root: Path, model_part: str) -> Path:
    """Move one model's run folders out of the suite: its 'new' runs."""
    dest = root / "new" / "v1"
    dest.mkdir(parents=True, exist_ok=True)
    for run in (root / "runs" / "v1").glob(f"*model={model_part}"):
        shutil.move(str(run), dest / run.name)
    return root / "new"


def test_a_valid_only_scenario_needs_split_valid(tmp_path, capsys):
    truth = write_suite(tmp_path, [Scenario("hellaswag", split="valid", n=80)], 9)
    new = _split_off(tmp_path, "org2_model-08")
    code, _, err = _run(["select", tmp_path / "runs", "--budget", "20", "--out", tmp_path / "sel"], capsys)
    line = _one_line_error(code, err, "--split: no 'exact_match' stats on split 'test'", "['valid']",
                           "--split any")
    assert "None" not in line and "split=" not in line
    code, out, err = _run(["select", tmp_path / "runs", "--budget", "20", "--split", "valid", "--out",
                           tmp_path / "sel"], capsys)
    assert code == 0, err
    manifest = json.loads((tmp_path / "sel" / "manifest.json").read_text())
    assert manifest["reference"]["helm"] == {"split": "valid", "perturbation": None, "trials": "mean"}
    # the new model's runs are read on the manifest's split: no option needed at estimate
    code, out, err = _run(["estimate", tmp_path / "sel", new, "--restrict-to-manifest"], capsys)
    assert code == 0, err
    n_new = read_results(new, split="valid").n_items
    assert n_new > len(manifest["items"]) and f"left out its {n_new - len(manifest['items'])} other item(s)" in out, out
    est = pd.read_csv(tmp_path / "sel" / "estimate" / "new" / "estimate.csv")
    true = truth["org2/model-08"]["hellaswag"].mean()
    assert est["low"].iloc[0] <= true <= est["high"].iloc[0]
    assert read_results(tmp_path / "runs", split=None).n_items == 80


def test_several_train_trials_one_trial_or_separate_responses(tmp_path, capsys):
    truth = write_suite(tmp_path, [Scenario(MMLU, n=60, trials=3)], 9)
    new = _split_off(tmp_path, "org2_model-08")
    # a method of 0/1 results refuses the trials' means, saying how to keep 0/1 responses; the default takes them
    code, _, err = _run(["select", tmp_path / "runs", "--budget", "30", "--method", "sortsearch", "--out",
                         tmp_path / "s"], capsys)
    _one_line_error(code, err, "means over 3 train trials", "--trials 0", "--trials separate")
    code, _, err = _run(["select", tmp_path / "runs", "--budget", "30", "--out", tmp_path / "mean"], capsys)
    assert code == 0, err
    ref = read_helm_runs(tmp_path / "runs")
    assert ref.kind == "score" and (ref.models["n_trials"] == 3).all()

    # one draw, whose interval is checked below: 39 of seeds 0-39 cover
    code, out, err = _run(["select", tmp_path / "runs", "--budget", "30", "--trials", "separate", "--seed", "1",
                           "--out", tmp_path / "sep"], capsys)
    assert code == 0, err
    manifest = json.loads((tmp_path / "sep" / "manifest.json").read_text())
    assert manifest["reference"]["n_items"] == 180 and manifest["reference"]["kind"] == "binary"
    assert all(i.rsplit("/", 1)[1] in ("trial0", "trial1", "trial2") for i in manifest["items"])
    chosen = json.loads((tmp_path / "sep" / "helm_instances.json").read_text())
    ids = chosen[MMLU]
    assert len(ids) == len(set(ids)) == len({i.rsplit("/", 2)[1] for i in manifest["items"]})
    code, out, err = _run(["estimate", tmp_path / "sep", new, "--restrict-to-manifest"], capsys)
    assert code == 0, err
    est = pd.read_csv(tmp_path / "sep" / "estimate" / "new" / "estimate.csv")
    true = truth["org2/model-08"][MMLU].mean()  # over every instance and trial
    assert est["low"].iloc[0] <= true <= est["high"].iloc[0] and est["n_items"].iloc[0] == 30

    code, out, err = _run(["select", tmp_path / "runs", "--budget", "30", "--trials", "1", "--out",
                           tmp_path / "one"], capsys)
    assert code == 0, err
    one = read_helm_runs(tmp_path / "runs", trials=1)
    values = np.array([truth[m][MMLU][1] for m in one.model_ids])
    np.testing.assert_array_equal(one.values_with_nan(), values)
    code, out, err = _run(["select", tmp_path / "runs", "--budget", "30", "--trials", "5", "--out",
                           tmp_path / "five"], capsys)
    _one_line_error(code, err, "--trials: no 'exact_match' stats of train trial 5; trials there: [0, 1, 2]")
    code, out, err = _run(["select", tmp_path / "runs", "--budget", "30", "--trials", "all", "--out",
                           tmp_path / "five"], capsys)
    _one_line_error(code, err, "--trials: expected mean, separate or a train trial's index")


@pytest.mark.parametrize("trials", ["\u00b2", "\u0661", "\uff11", " 1", "1\n"])
def test_trials_takes_only_ascii_digits(tmp_path, capsys, trials):
    # a superscript two (str.isdigit, which int() refuses) and the digits of other scripts (which int() reads):
    # refused naming --trials, as every integer option refuses them, before any file is read
    code, out, err = _run(["select", tmp_path / "no-such-runs", "--budget", "30", "--trials", trials, "--out",
                           tmp_path / "out"], capsys)
    _one_line_error(code, err, "--trials: expected mean, separate or a train trial's index", repr(trials))


def test_an_empty_split_is_refused_in_the_command_lines_words(tmp_path, capsys):
    # every split is --split any on the command line (None in Python)
    code, out, err = _run(["select", tmp_path / "no-such-runs", "--budget", "30", "--split", "", "--out",
                           tmp_path / "out"], capsys)
    line = _one_line_error(code, err, "--split: expected a split name such as 'test' or 'valid', or any (every split)")
    assert "None" not in line


def test_the_chosen_instances_per_run_spec_and_a_full_run_restricted_to_them(tmp_path, capsys):
    # two run specs whose instances share ids (id0, id1, ...): an instance is a run spec's
    write_suite(tmp_path, [Scenario("boolq", n=60, perturbed=True), Scenario(MMLU, n=60)], 9)
    new = _split_off(tmp_path, "org2_model-08")
    code, out, err = _run(["select", tmp_path / "runs", "--budget", "24", "--out", tmp_path / "sel"], capsys)
    assert code == 0, err
    assert "helm_instances.json" in out and "--restrict-to-manifest" in out
    manifest = json.loads((tmp_path / "sel" / "manifest.json").read_text())
    chosen = json.loads((tmp_path / "sel" / "helm_instances.json").read_text())
    assert chosen == manifest["helm_instances"] and sorted(chosen) == ["boolq", MMLU]
    assert sorted(f"{t}/{i}" for t, ids in chosen.items() for i in ids) == sorted(manifest["items"])

    # the whole runs of the new model: refused as they are, read on the manifest's instances when asked
    code, _, err = _run(["estimate", tmp_path / "sel", new], capsys)
    line = _one_line_error(code, err, "NEW_RESULTS: besides the manifest's 24 items",
                           "HELM runs hold whole run specs: read only those with", "--restrict-to-manifest")
    assert "--samples" not in line
    # a whole run that misses some chosen instances (HELM failed on them): the same way out
    missing = chosen["boolq"][0]
    run = next((new / "v1").glob("boolq*"))
    f = run / "per_instance_stats.json"
    whole = f.read_text()
    f.write_text(json.dumps([e for e in json.loads(whole) if e["instance_id"] != missing]))
    code, _, err = _run(["estimate", tmp_path / "sel", new], capsys)
    _one_line_error(code, err, "if they are a whole run, read only those with", "--restrict-to-manifest")
    code, _, err = _run(["estimate", tmp_path / "sel", new, "--restrict-to-manifest", "--out", tmp_path / "m"], capsys)
    assert code == 0 and f"boolq/{missing}" in err  # named among the chosen items without a result
    f.write_text(whole)
    code, out, err = _run(["estimate", tmp_path / "sel", new, "--restrict-to-manifest", "--out", tmp_path / "full"],
                          capsys)
    assert code == 0, err

    # the same runs cut to the chosen instances of each run spec give the same estimate
    cut = tmp_path / "cut" / "v1"
    shutil.copytree(new / "v1", cut)
    for run in cut.iterdir():
        spec = json.loads((run / "run_spec.json").read_text())["name"].rsplit(",model=", 1)[0].rsplit(":model=", 1)[0]
        f = run / "per_instance_stats.json"
        f.write_text(json.dumps([e for e in json.loads(f.read_text()) if e["instance_id"] in chosen[spec]]))
    code, out, err = _run(["estimate", tmp_path / "sel", tmp_path / "cut", "--out", tmp_path / "cut_est"], capsys)
    assert code == 0, err
    a = pd.read_csv(tmp_path / "full" / "estimate.csv")
    b = pd.read_csv(tmp_path / "cut_est" / "estimate.csv")
    pd.testing.assert_frame_equal(a, b)
    # cut by instance id alone (every run spec keeps the ids chosen in any run spec): extra instances, refused
    # as they are; the manifest's instances are still read right when restricted
    union = {i for ids in chosen.values() for i in ids}
    for run in cut.iterdir():
        shutil.copy(new / "v1" / run.name / "per_instance_stats.json", run / "per_instance_stats.json")
        f = run / "per_instance_stats.json"
        f.write_text(json.dumps([e for e in json.loads(f.read_text()) if e["instance_id"] in union]))
    code, _, err = _run(["estimate", tmp_path / "sel", tmp_path / "cut", "--out", tmp_path / "x"], capsys)
    _one_line_error(code, err, "besides the manifest's 24 items")
    est = estimate(tmp_path / "sel", tmp_path / "cut", restrict_to_manifest=True)
    assert est.to_frame()["estimate"].iloc[0] == a["estimate"].iloc[0]
    # the perturbed instances are other items: read with --perturbation typo, the estimate is of those
    code, out, err = _run(["select", tmp_path / "runs", "--budget", "24", "--perturbation", "typo", "--tasks",
                           "boolq", "--out", tmp_path / "typo"], capsys)
    assert code == 0, err
    typo = read_helm_runs(tmp_path / "runs", perturbation="typo")
    plain = read_helm_runs(tmp_path / "runs").subset(items=typo.item_ids)
    np.testing.assert_array_equal(typo.values_with_nan(), 1 - plain.values_with_nan())
    code, out, err = _run(["estimate", tmp_path / "typo", new, "--restrict-to-manifest"], capsys)
    assert code == 0, err
    # one run folder as the new results: the new model's; a reference model's is refused, naming it
    code, _, err = _run(["estimate", tmp_path / "sel", next((new / "v1").glob("boolq*")),
                         "--restrict-to-manifest", "--tasks", "boolq", "--out", tmp_path / "y"], capsys)
    assert code == 0, err
    code, _, err = _run(["estimate", tmp_path / "sel", tmp_path / "runs" / "v1" / "boolq:model=org0_model-00",
                         "--restrict-to-manifest", "--tasks", "boolq", "--out", tmp_path / "z"], capsys)
    _one_line_error(code, err, "'org0/model-00' are reference models too")


def test_a_metric_per_scenario(tmp_path, capsys):
    write_suite(tmp_path, [Scenario(BBQ, metric="quasi_exact_match", n=40), Scenario("boolq", n=40)], 8)
    code, _, err = _run(["select", tmp_path / "runs", "--budget", "20", "--out", tmp_path / "one"], capsys)
    assert code == 0 and "have no 'exact_match' stats" in err  # the bbq runs are left out, and said so
    assert list(json.loads((tmp_path / "one" / "manifest.json").read_text())["tasks"]) == ["boolq"]
    code, out, err = _run(["select", tmp_path / "runs", "--budget", "20", "--metric",
                           "bbq=quasi_exact_match,exact_match", "--out", tmp_path / "both"], capsys)
    assert code == 0, err
    manifest = json.loads((tmp_path / "both" / "manifest.json").read_text())
    assert sorted(manifest["tasks"]) == sorted([BBQ, "boolq"])
    assert manifest["reference"]["metric"] == "bbq=quasi_exact_match,exact_match"
    rm = read_helm_runs(tmp_path / "runs", metric={"bbq": "quasi_exact_match"})
    assert rm.shape == (8, 80) and rm.items["task"].nunique() == 2
    full = read_helm_runs(tmp_path / "runs", metric={BBQ: "quasi_exact_match", None: "exact_match"})
    np.testing.assert_array_equal(full.values, rm.values)
    with pytest.raises(ValueError, match=r"^metric: no run of the scenario\(s\) \['gsm8k'\]"):
        read_helm_runs(tmp_path / "runs", metric={"gsm8k": "exact_match"})
    code, _, err = _run(["select", tmp_path / "runs", "--budget", "20", "--metric", "bbq=", "--out",
                         tmp_path / "bad"], capsys)
    _one_line_error(code, err, "--metric: 'bbq=' in 'bbq=' is empty")


def test_a_csv_task_column_is_the_task(tmp_path, capsys):
    rng = np.random.default_rng(0)
    rows = [{"model": f"m{m}", "task": t, "item": f"{t}_{i}", "score": float(rng.random() < 0.3 + 0.1 * m)}
            for m in range(6) for t in "abcde" for i in range(30)]
    pd.DataFrame(rows).to_csv(tmp_path / "long.csv", index=False)
    rm = read_results(tmp_path / "long.csv")
    assert rm.items["task"].nunique() == 5
    code, out, err = _run(["select", tmp_path / "long.csv", "--budget", "20", "--out", tmp_path / "s"], capsys)
    assert code == 0, err
    assert sorted(json.loads((tmp_path / "s" / "manifest.json").read_text())["tasks"]) == list("abcde")
    # one item id in two tasks is ambiguous
    rows[0]["item"] = "b_0"
    pd.DataFrame(rows).to_csv(tmp_path / "amb.csv", index=False)
    code, _, err = _run(["select", tmp_path / "amb.csv", "--budget", "20", "--out", tmp_path / "t"], capsys)
    _one_line_error(code, err, "REFERENCE: amb.csv: item 'b_0' stands in the tasks ['a', 'b']")


def test_runs_without_run_spec_are_named_from_their_folder_once(tmp_path, capsys):
    write_suite(tmp_path, [Scenario("boolq", n=30), Scenario(MMLU, n=30)], 4)
    for run in (tmp_path / "runs" / "v1").glob("boolq:*"):
        (run / "run_spec.json").unlink()  # one run of each model without its spec
    with pytest.warns(UserWarning, match=r"^path_or_paths: 4 run\(s\) have no run_spec.json: the model id is taken "
                                         r"from the folder name .*'org0_model-00' read as 'org0/model-00'"):
        rm = read_helm_runs(tmp_path / "runs")
    assert list(rm.model_ids) == ["org0/model-00", "org0/model-03", "org1/model-01", "org2/model-02"]
    assert rm.missing is None
    code, _, err = _run(["select", tmp_path / "runs", "--budget", "10", "--out", tmp_path / "s"], capsys)
    assert code == 0
    warning = [x for x in err.splitlines() if "run_spec.json" in x]
    assert warning and warning[0].startswith("effstats select: warning: REFERENCE: 4 run(s) have no run_spec.json")
    assert "path_or_paths" not in err


@pytest.mark.parametrize("spec", ["without adapter_spec", "adapter_spec null", "model empty"])
def test_runs_whose_run_spec_names_no_model_are_said_so(tmp_path, spec):
    write_suite(tmp_path, [Scenario("boolq", n=10), Scenario(MMLU, n=10)], 2)
    runs = sorted((tmp_path / "runs" / "v1").glob("boolq:*"))
    doc = json.loads((runs[0] / "run_spec.json").read_text())
    if spec == "without adapter_spec":
        del doc["adapter_spec"]
    else:
        doc["adapter_spec"] = None if spec == "adapter_spec null" else {**doc["adapter_spec"], "model": "",
                                                                        "model_deployment": ""}
    (runs[0] / "run_spec.json").write_text(json.dumps(doc))
    (runs[1] / "run_spec.json").unlink()
    with pytest.warns(UserWarning) as said:
        rm = read_helm_runs(runs[0])
    assert [str(w.message).split(":")[1] for w in said] == [
        " 1 run(s) name no model in their run_spec.json (adapter_spec.model)"]
    assert list(rm.model_ids) == ["org0_model-00"]  # no other run names the model org0/model-00
    with pytest.warns(UserWarning, match=r"^path_or_paths: 2 run\(s\) have no run_spec.json or name no model in it "
                                         r"\(adapter_spec.model\): the model id is taken from the folder name"):
        read_helm_runs(tmp_path / "runs")


def test_auto_with_three_reference_models_says_how_many_it_needs(tmp_path, capsys):
    rows = [{"model": f"m{m}", "item": f"q{i}", "score": float((i * (m + 2)) % 3 == 0)} for m in range(3)
            for i in range(60)]
    pd.DataFrame(rows).to_csv(tmp_path / "three.csv", index=False)
    code, _, err = _run(["select", tmp_path / "three.csv", "--budget", "20", "--method", "auto", "--out",
                         tmp_path / "s"], capsys)
    _one_line_error(code, err, "--method: 'auto'", "needs at least 4 reference models", "got 3")
    rows += [{"model": "m3", "item": f"q{i}", "score": float(i % 2)} for i in range(60)]
    pd.DataFrame(rows).to_csv(tmp_path / "four.csv", index=False)
    code, _, err = _run(["select", tmp_path / "four.csv", "--budget", "20", "--method", "auto", "--out",
                         tmp_path / "s"], capsys)
    assert code == 0, err


def test_round_trip_stats_json_and_held_out_coverage(tmp_path):
    """Ten models on a suite of three run specs (one of them with three train trials): the values read match
    every run's stats.json, and each model held out in turn is covered at 20 and 40 items."""
    write_suite(tmp_path, [Scenario(BBQ, n=80), Scenario("boolq", n=80, perturbed=True),
                           Scenario(MMLU, n=60, trials=3)], 10, seed=3)
    agree = stats_json_agreement(tmp_path / "runs")
    assert len(agree) == 30 and all(r["stats_json"] is not None for r in agree)
    np.testing.assert_allclose([r["read"] for r in agree], [r["stats_json"] for r in agree], rtol=0, atol=1e-12)
    rows = pd.DataFrame(held_out_coverage(tmp_path / "runs", tmp_path / "work", (20, 40), trials="separate"))
    assert len(rows) == 20
    covered = rows.groupby("budget")["covered"].sum()
    # 95 % intervals over 10 models: 8 or more covered has probability 0.99
    assert (covered >= 8).all(), rows
    assert (rows["high"] - rows["low"]).groupby(rows["budget"]).mean().is_monotonic_decreasing


def test_command_line_messages_name_options_as_typed():
    from effstats.workflow._cli import _cli_names

    # the estimators' and readers' argument names, as the options and inputs of the command
    said = {"target_outputs": "NEW_RESULTS:", "source_outputs": "REFERENCE:", "split": "--split:",
            "trials": "--trials:", "duplicates": "--duplicates:", "weights": "--weights:"}
    for head, cli in said.items():
        assert _cli_names(f"{head}: something", "estimate") == f"{cli} something"
    assert _cli_names("split: no stats; read one of them (None: every split)", "select").endswith(
        "(--split any: every split)")


def test_the_round_trip_script_reports_a_suite(tmp_path):
    import subprocess
    import sys

    write_suite(tmp_path, [Scenario("boolq", n=40, trials=2)], 4, seed=1)
    script = Path(__file__).resolve().parents[1] / "scripts" / "helm_roundtrip.py"
    run = subprocess.run([sys.executable, str(script), str(tmp_path / "runs"), "--trials", "separate", "--budgets",
                          "10,20"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].startswith("4 runs with 'exact_match' on 'test': 4 with a stats.json mean, largest difference")
    assert float(lines[0].rsplit(" ", 1)[1]) < 1e-12
    assert any(x.startswith("10 items: ") and "of 4 held-out models covered" in x for x in lines)
    assert any(x.startswith("20 items: ") for x in lines)


def test_sequential_batches_of_helm_instances(tmp_path, capsys):
    write_suite(tmp_path, [Scenario("boolq", n=60, trials=3), Scenario(MMLU, n=60, trials=3)], 6)
    code, out, err = _run(["sequential", "start", tmp_path / "runs", "--half-width", "0.05", "--trials", "separate",
                           "--initial", "40", "--batch", "40", "--out", tmp_path / "seq"], capsys)
    assert code == 0, err
    assert "helm_instances.json" in out
    state = json.loads((tmp_path / "seq" / "state.json").read_text())
    assert state["reference"]["helm"]["trials"] == "separate"
    batch = pd.read_csv(tmp_path / "seq" / "batch_001" / "items.csv")["item"].tolist()
    listed = json.loads((tmp_path / "seq" / "batch_001" / "helm_instances.json").read_text())
    # every instance of the batch, once per run spec, whatever its trials
    expected = {}
    for i in batch:
        spec, iid, _ = i.rsplit("/", 2)
        expected.setdefault(spec, set()).add(iid)
    assert {k: set(v) for k, v in listed.items()} == expected
    assert all(len(v) == len(set(v)) for v in listed.values())
    assert "batch_001/helm_instances.json" in state["files"]


def test_train_trials_are_counted_per_model_also_without_run_spec(tmp_path):
    write_suite(tmp_path, [Scenario("boolq", n=20, trials=3), Scenario(MMLU, n=20)], 3)
    for run in (tmp_path / "runs" / "v1").glob("boolq:*"):
        (run / "run_spec.json").unlink()
    with pytest.warns(UserWarning, match="have no run_spec.json"):
        rm = read_helm_runs(tmp_path / "runs")
    assert rm.models["n_trials"].tolist() == [3, 3, 3] and rm.models["n_tasks"].tolist() == [2, 2, 2]
    assert read_helm_runs(tmp_path / "runs" / "v1" / f"{MMLU},model=org0_model-00").models["n_trials"].tolist() == [1]


def _cut_to(runs: Path, dest: Path, items: list[str]) -> Path:
    """Copies of HELM run folders holding only the instances of ``items`` (``<run spec>/<instance id>``)."""
    keep = set(items)
    for run in runs.iterdir():
        shutil.copytree(run, dest / run.name)
        spec = json.loads((run / "run_spec.json").read_text())["name"].rsplit(",model=", 1)[0].rsplit(":model=", 1)[0]
        f = dest / run.name / "per_instance_stats.json"
        f.write_text(json.dumps([e for e in json.loads(f.read_text()) if f"{spec}/{e['instance_id']}" in keep]))
    return dest


def test_sequential_update_reads_a_batch_from_whole_helm_runs(tmp_path, capsys):
    write_suite(tmp_path, [Scenario("boolq", n=60), Scenario(MMLU, n=60)], 7)
    new = _split_off(tmp_path, "org0_model-06")
    code, out, err = _run(["sequential", "start", tmp_path / "runs", "--half-width", "0.04", "--initial", "30",
                           "--batch", "30", "--out", tmp_path / "whole"], capsys)
    assert code == 0, err
    assert "--restrict-to-manifest" in out and "helm-run" in out
    shutil.copytree(tmp_path / "whole", tmp_path / "cut")
    # the new model's whole runs hold every instance: refused as they are, with the way out
    code, _, err = _run(["sequential", "update", tmp_path / "whole", new], capsys)
    _one_line_error(code, err, "NEW_RESULTS: 90 item(s) were never handed out in this run",
                    "HELM runs hold whole run specs: read only this batch's items with --restrict-to-manifest")
    looks = 0
    while not (tmp_path / "whole" / "decision.md").exists():
        looks += 1
        batch = pd.read_csv(tmp_path / "whole" / f"batch_{looks:03d}" / "items.csv")["item"].tolist()
        code, out, err = _run(["sequential", "update", tmp_path / "whole", new, "--restrict-to-manifest"], capsys)
        assert code == 0, err
        left = 120 - len(batch)
        assert f"read the {len(batch)} items of batch {looks:03d} from NEW_RESULTS; left out its {left} other " \
               "item(s) (--restrict-to-manifest)" in out
        # the same look from runs of the batch's instances only
        cut = _cut_to(new / "v1", tmp_path / f"cut{looks}" / "v1", batch)
        code, _, err = _run(["sequential", "update", tmp_path / "cut", cut.parent], capsys)
        assert code == 0, err
        assert looks < 5
    a = json.loads((tmp_path / "whole" / "state.json").read_text())
    b = json.loads((tmp_path / "cut" / "state.json").read_text())
    assert a["looks"] == b["looks"] and a["result"] == b["result"] and len(a["looks"]) == looks
    truth = read_helm_runs(new).subset(items=a["looks"][0]["items"]).values_with_nan()[0]
    np.testing.assert_array_equal(a["looks"][0]["scores"], truth)


def test_sequential_update_restricted_names_what_the_batch_lacks(tmp_path, capsys):
    write_suite(tmp_path, [Scenario("boolq", n=40), Scenario(MMLU, n=40)], 5)
    new = _split_off(tmp_path, "org1_model-04")
    code, _, err = _run(["sequential", "start", tmp_path / "runs", "--half-width", "0.05", "--initial", "20",
                         "--out", tmp_path / "seq"], capsys)
    assert code == 0, err
    batch = pd.read_csv(tmp_path / "seq" / "batch_001" / "items.csv")["item"].tolist()
    spec, missing = batch[0].rsplit("/", 1)
    run = next((new / "v1").glob(f"{spec.split(':')[0]}*"))
    f = run / "per_instance_stats.json"
    f.write_text(json.dumps([e for e in json.loads(f.read_text()) if e["instance_id"] != missing]))
    code, _, err = _run(["sequential", "update", tmp_path / "seq", new, "--restrict-to-manifest"], capsys)
    _one_line_error(code, err, "NEW_RESULTS: model ", "has no result on 1 of batch 001's 20 items (task ", batch[0],
                    "run the batch's run specs whole (batch_001/helm_instances.json lists them)")
    # another run's results: none of the batch's items
    other = _cut_to(new / "v1", tmp_path / "other" / "v1", [i for i in read_helm_runs(new).item_ids
                                                            if i not in set(batch)])
    code, _, err = _run(["sequential", "update", tmp_path / "seq", other.parent, "--restrict-to-manifest"], capsys)
    _one_line_error(code, err, "NEW_RESULTS: none of its 60 items is in batch 001", "batch_001/items.csv")
    assert json.loads((tmp_path / "seq" / "state.json").read_text())["looks"] == []


def _change_adapter(runs: Path, **fields) -> None:
    for spec in runs.rglob("run_spec.json"):
        doc = json.loads(spec.read_text())
        doc["adapter_spec"].update(fields)
        spec.write_text(json.dumps(doc))


def test_a_new_run_under_another_adapter_spec_is_a_protocol_change(tmp_path, capsys):
    """A new model run with other few-shot examples, method or temperature than the reference runs is refused
    (naming the scenario and the fields) unless --allow-protocol-change; other train-trial or instance counts and
    the model's own fields are no protocol change."""
    write_suite(tmp_path, [Scenario("boolq", n=60), Scenario(MMLU, n=60)], 7)
    new = _split_off(tmp_path, "org0_model-06")
    code, _, err = _run(["select", tmp_path / "runs", "--budget", "30", "--out", tmp_path / "sel"], capsys)
    assert code == 0, err
    _change_adapter(new, num_train_trials=3, max_eval_instances=50, model_deployment="elsewhere/m6")
    code, _, err = _run(["estimate", tmp_path / "sel", new, "--restrict-to-manifest"], capsys)
    assert code == 0 and "adapter spec" not in err, err
    assert "made otherwise" not in (tmp_path / "sel" / "estimate" / "new" / "estimate.md").read_text()
    _change_adapter(new, max_train_instances=5, temperature=0.7)
    code, _, err = _run(["estimate", tmp_path / "sel", new, "--restrict-to-manifest"], capsys)
    line = _one_line_error(code, err, "NEW_RESULTS: task boolq: HELM adapter spec differs from the reference runs' "
                           "in max_train_instances (5 here, unset there), temperature (0.7 here, unset there)",
                           "--allow-protocol-change")
    assert "method" not in line
    code, out, err = _run(["estimate", tmp_path / "sel", new, "--restrict-to-manifest", "--allow-protocol-change",
                           "--force"], capsys)
    assert code == 0 and "warning: NEW_RESULTS: task boolq: HELM adapter spec differs" in err, err
    report = (tmp_path / "sel" / "estimate" / "new" / "estimate.md").read_text()
    assert "**The new runs were made otherwise than the reference runs** (allow_protocol_change" in report
    assert "task boolq: HELM adapter spec differs from the reference runs' in max_train_instances" in report
    assert "made otherwise" in (tmp_path / "sel" / "estimate" / "new" / "estimate.html").read_text()
    # the same record guards a sequential run's batches
    code, _, err = _run(["sequential", "start", tmp_path / "runs", "--half-width", "0.05", "--initial", "30",
                         "--batch", "30", "--out", tmp_path / "seq"], capsys)
    assert code == 0, err
    code, _, err = _run(["sequential", "update", tmp_path / "seq", new, "--restrict-to-manifest"], capsys)
    _one_line_error(code, err, "HELM adapter spec differs from the reference runs' in max_train_instances")


def test_a_scenario_name_picks_its_run_specs_in_tasks_and_a_folder_name_is_suggested(tmp_path, capsys):
    mmlu2 = "mmlu:subject=astronomy,method=multiple_choice_joint"
    write_suite(tmp_path, [Scenario("boolq", n=40), Scenario(MMLU, n=40), Scenario(mmlu2, n=40)], 7)
    new = _split_off(tmp_path, "org0_model-06")
    code, out, err = _run(["select", tmp_path / "runs", "--budget", "20", "--tasks", "mmlu", "--out",
                           tmp_path / "sel"], capsys)
    assert code == 0, err
    m = json.loads((tmp_path / "sel" / "manifest.json").read_text())
    assert sorted(m["tasks"]) == sorted([MMLU, mmlu2])
    code, out, err = _run(["estimate", tmp_path / "sel", new, "--restrict-to-manifest", "--tasks", "mmlu"], capsys)
    assert code == 0, err
    code, _, err = _run(["select", tmp_path / "runs", "--budget", "20", "--tasks", "mmlu2", "--out",
                         tmp_path / "sel2"], capsys)
    _one_line_error(code, err, "--tasks: ['mmlu2'] not among the reference's tasks")
    # the run folders' form of a model (org_name) is suggested as its name (org/name)
    code, _, err = _run(["sequential", "start", tmp_path / "runs", "--against", "org1_model-04", "--out",
                         tmp_path / "seq"], capsys)
    _one_line_error(code, err, "--against: no reference model 'org1_model-04'; did you mean ['org1/model-04']?")


def test_adapter_specs_compare_by_value_and_what_cannot_be_checked_is_said(tmp_path, capsys):
    write_suite(tmp_path, [Scenario("boolq", n=60), Scenario(MMLU, n=60)], 7)
    new = _split_off(tmp_path, "org0_model-06")
    _change_adapter(tmp_path / "runs", temperature=0, max_train_instances=5, stop_sequences=None)
    code, _, err = _run(["select", tmp_path / "runs", "--budget", "30", "--out", tmp_path / "sel"], capsys)
    assert code == 0 and "adapter specs" not in err, err
    # equal values spelled otherwise are one protocol
    _change_adapter(new, temperature=0.0, max_train_instances=5.0)
    code, _, err = _run(["estimate", tmp_path / "sel", new, "--restrict-to-manifest"], capsys)
    assert code == 0 and "adapter spec" not in err, err
    # new runs without the protocol's fields cannot be checked: said
    for spec in new.rglob("run_spec.json"):
        doc = json.loads(spec.read_text())
        doc["adapter_spec"] = {"model": doc["adapter_spec"]["model"]}
        spec.write_text(json.dumps(doc))
    code, _, err = _run(["estimate", tmp_path / "sel", new, "--restrict-to-manifest", "--force"], capsys)
    assert code == 0 and "give no adapter spec" in err and "boolq" in err, err
    # an adapter_spec that is no object is refused naming the file
    spec = next(new.rglob("run_spec.json"))
    spec.write_text(json.dumps({**json.loads(spec.read_text()), "adapter_spec": [1, 2]}))
    code, _, err = _run(["estimate", tmp_path / "sel", new, "--restrict-to-manifest", "--force"], capsys)
    _one_line_error(code, err, "run_spec.json: adapter_spec is not a JSON object (got list)")
    # references of one scenario under several specs: said when they are read
    spec = next((tmp_path / "runs").rglob("boolq*/run_spec.json"))
    doc = json.loads(spec.read_text())
    doc["adapter_spec"]["max_train_instances"] = 0
    spec.write_text(json.dumps(doc))
    code, _, err = _run(["select", tmp_path / "runs", "--budget", "30", "--out", tmp_path / "sel2"], capsys)
    assert code == 0 and "ran under several adapter specs, differing in: boolq (max_train_instances)" in err, err


def test_helm_runs_whose_instance_ids_end_in_numbers_get_the_helm_run_text_and_no_lm_eval_file(tmp_path, capsys):
    # instance ids "<scenario>/<n>" read as lm-eval documents too: the selection and the batch still list the HELM
    # instances only, and say how to run helm-run
    import loop_inputs as L

    runs = L.write(L.digits(n_models=12, per_task=40, domains=("clean", "gauss_0.35")), "helm", tmp_path / "runs")
    code, out, err = _run(["select", runs, "--budget", "20", "--method", "random", "--out", tmp_path / "sel",
                           "--no-progress"], capsys)
    assert code == 0, err
    assert "helm-run" in out and "lm_eval" not in out, out
    assert not (tmp_path / "sel" / "lm_eval_samples.json").exists()
    manifest = json.loads((tmp_path / "sel" / "manifest.json").read_text())
    assert manifest["lm_eval_samples"] is None and manifest["helm_instances"]
    code, out, err = _run(["sequential", "start", runs, "--half-width", "0.1", "--out", tmp_path / "seq",
                           "--no-progress"], capsys)
    assert code == 0, err
    assert "helm-run" in out and "lm_eval" not in out, out
    assert not (tmp_path / "seq" / "batch_001" / "lm_eval_samples.json").exists()
    assert (tmp_path / "seq" / "batch_001" / "helm_instances.json").exists()
