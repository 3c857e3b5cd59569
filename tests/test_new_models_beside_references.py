"""A folder holding the reference models' runs and the new model's (HELM's ``benchmark_output/runs/SUITE`` after
``helm-run --suite v1`` for both, an lm-eval output folder of every model): ``estimate --model`` and ``sequential
update --model`` score the new model in it, the refusal without it names the option and the new model, and the
estimate is the one from the new model's runs alone."""
from __future__ import annotations

import shutil

import numpy as np
import pandas as pd
import pytest

from effstats import ResponseMatrix
from effstats.cli import main
from effstats.datasets import simulate_responses
from effstats.workflow import estimate, write_lm_eval_samples

from helm_fixtures import Scenario, write_suite

MMLU = "mmlu:subject=anatomy,method=multiple_choice_joint"


def _run(argv, capsys):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _error(code, err):
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    return err.strip()


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    """Nine models' HELM runs; org2/model-08's moved to new/ (its runs alone), the references in runs/, and a copy
    of the suite with every model's runs, as helm-run leaves them."""
    root = tmp_path_factory.mktemp("suite")
    write_suite(root, [Scenario("boolq", n=60), Scenario(MMLU, n=60)], 9)
    (root / "new" / "v1").mkdir(parents=True)
    shutil.copytree(root / "runs", root / "all")
    for run in (root / "runs" / "v1").glob("*model=org2_model-08"):
        shutil.move(str(run), root / "new" / "v1" / run.name)
    assert main(["select", str(root / "runs"), "--budget", "24", "--out", str(root / "sel")]) == 0
    return root


def test_estimate_scores_the_named_model_of_a_suite_holding_the_references(suite, capsys, tmp_path):
    code, _, err = _run(["estimate", suite / "sel", suite / "all", "--restrict-to-manifest", "--out", tmp_path / "a"],
                        capsys)
    line = _error(code, err)
    assert "(8 of its 9 models) are reference models too" in line, line
    assert line.endswith("score the other model with --model org2/model-08"), line
    assert not (tmp_path / "a").exists()
    code, out, err = _run(["estimate", suite / "sel", suite / "all", "--restrict-to-manifest", "--model",
                           "org2/model-08", "--out", tmp_path / "b"], capsys)
    assert code == 0, err
    code, _, err = _run(["estimate", suite / "sel", suite / "new", "--restrict-to-manifest", "--out", tmp_path / "c"],
                        capsys)
    assert code == 0, err
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "b" / "estimate.csv"),
                                  pd.read_csv(tmp_path / "c" / "estimate.csv"))
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "b" / "tasks.csv"), pd.read_csv(tmp_path / "c" / "tasks.csv"))
    # the Python API alike
    a = estimate(suite / "sel", suite / "all", restrict_to_manifest=True, models="org2/model-08").to_frame()
    pd.testing.assert_frame_equal(a, estimate(suite / "sel", suite / "new", restrict_to_manifest=True).to_frame())


@pytest.mark.parametrize("given, said", [
    ("ORG2/MODEL-08", "--model: no model 'ORG2/MODEL-08' in NEW_RESULTS; did you mean ['org2/model-08']?"),
    ("org2_model-08", "--model: no model 'org2_model-08' in NEW_RESULTS; did you mean ['org2/model-08']?"),
    ("org2/model-08\u200b", "--model: no model 'org2/model-08\\u200b' in NEW_RESULTS; did you mean "
                           "['org2/model-08']?"),  # a zero-width space, shown escaped
    ("nobody", "--model: no model 'nobody' in NEW_RESULTS (its models: 'org0/model-00', "),
    ("org0/model-00", "NEW_RESULTS: model(s) 'org0/model-00' are reference models too: "),
    (",", "--model: expected comma-separated model names, got ','"),
])
def test_a_model_not_in_the_results_or_a_reference_model_is_refused_in_one_line(suite, capsys, tmp_path, given,
                                                                                said):
    code, _, err = _run(["estimate", suite / "sel", suite / "all", "--restrict-to-manifest", "--model", given,
                         "--out", tmp_path / "x"], capsys)
    assert _error(code, err).startswith(f"effstats estimate: error: {said}"), err
    assert not (tmp_path / "x").exists()


def test_a_model_named_in_another_unicode_normalisation_is_named_as_the_results_write_it(capsys, tmp_path):
    d = simulate_responses(9, 40, rng=4)
    ids = [f"org/m{i}" for i in range(8)] + ["org/caf\u00e9"]
    rm = ResponseMatrix(d.values, model_ids=ids, item_ids=[f"arc_easy/{k}" for k in range(40)])
    write_lm_eval_samples(rm, tmp_path / "ref", models=ids[:8])
    write_lm_eval_samples(rm, tmp_path / "all")
    assert main(["select", str(tmp_path / "ref"), "--budget", "10", "--out", str(tmp_path / "sel")]) == 0
    capsys.readouterr()
    code, _, err = _run(["estimate", tmp_path / "sel", tmp_path / "all", "--restrict-to-manifest", "--model",
                         "org/cafe\u0301"], capsys)
    line = _error(code, err)
    assert "--model: no model 'org/cafe\u0301' (written 'org/cafe\\u0301')" in line
    assert "the model 'org/caf\u00e9' (written 'org/caf\\xe9') differs from it only by Unicode normalisation" in line


def test_an_lm_eval_folder_of_every_model_and_several_new_ones(capsys, tmp_path):
    d = simulate_responses(14, 60, rng=5)
    ids = [f"org/m{i:02d}" for i in range(14)]
    rm = ResponseMatrix(d.values, model_ids=ids, item_ids=[f"{t}/{k}" for t in ("arc_easy", "hellaswag")
                                                           for k in range(30)])
    write_lm_eval_samples(rm, tmp_path / "ref", models=ids[:12])
    write_lm_eval_samples(rm, tmp_path / "all")  # the output folder of every model's full run
    write_lm_eval_samples(rm, tmp_path / "new", models=ids[12:])
    assert main(["select", str(tmp_path / "ref"), "--budget", "20", "--out", str(tmp_path / "sel")]) == 0
    capsys.readouterr()
    code, _, err = _run(["estimate", tmp_path / "sel", tmp_path / "all", "--restrict-to-manifest"], capsys)
    assert _error(code, err).endswith("(12 of its 14 models) are reference models too: their own reference "
                                      "results would rank them against themselves and enter the fit that estimates "
                                      "them; score the other models with --model org/m12,org/m13"), err
    for models in (["--model", "org/m12,org/m13"], ["--model", "org/m12", "--model", "org/m13"]):
        code, _, err = _run(["estimate", tmp_path / "sel", tmp_path / "all", "--restrict-to-manifest", *models,
                             "--out", tmp_path / "e", "--force"], capsys)
        assert code == 0, err
        code, _, err = _run(["estimate", tmp_path / "sel", tmp_path / "new", "--restrict-to-manifest", "--out",
                             tmp_path / "n", "--force"], capsys)
        assert code == 0, err
        pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "e" / "estimate.csv"),
                                      pd.read_csv(tmp_path / "n" / "estimate.csv"))


def test_sequential_update_names_the_new_model_of_a_suite_holding_the_references(suite, capsys, tmp_path):
    code, out, err = _run(["sequential", "start", suite / "runs", "--half-width", "0.05", "--initial", "20",
                           "--batch", "20", "--out", tmp_path / "s"], capsys)
    assert code == 0, err
    code, _, err = _run(["sequential", "update", tmp_path / "s", suite / "all", "--restrict-to-manifest"], capsys)
    assert _error(code, err) == ("effstats sequential update: error: --model: NEW_RESULTS hold 9 models, 8 of them "
                                 "reference models; name the one to evaluate: --model 'org2/model-08'"), err
    code, _, err = _run(["sequential", "update", tmp_path / "s", suite / "all", "--restrict-to-manifest", "--model",
                         "Org2/Model-08"], capsys)
    assert _error(code, err).endswith("--model: no model 'Org2/Model-08' in NEW_RESULTS; did you mean "
                                      "['org2/model-08']?"), err
    shutil.copytree(tmp_path / "s", tmp_path / "t")
    code, out, err = _run(["sequential", "update", tmp_path / "s", suite / "all", "--restrict-to-manifest", "--model",
                           "org2/model-08"], capsys)
    assert code == 0, err
    code, out2, err = _run(["sequential", "update", tmp_path / "t", suite / "new", "--restrict-to-manifest"], capsys)
    assert code == 0, err
    look = [x for x in out.splitlines() if x.startswith("look 1: 20 items")]
    assert look and look == [x for x in out2.splitlines() if x.startswith("look 1:")], (out, out2)


@pytest.mark.parametrize("spelled", [np.str_, np.array, lambda m: [m], lambda m: (m,), lambda m: pd.Index([m]),
                                     lambda m: (x for x in [m])],
                         ids=["np.str_", "0-d array", "list", "tuple", "Index", "generator"])
def test_estimate_models_takes_one_name_however_it_is_held(spelled):
    from effstats.workflow import select

    d = simulate_responses(24, 200, rng=3)
    sel = select(d.subset(models=range(20)), 30, seed=0)
    new = d.subset(models=range(20, 24), items=sel.items)
    name = new.model_ids[2]
    want = estimate(sel, new, models=name).to_frame()
    got = estimate(sel, new, models=spelled(name)).to_frame()
    assert list(got.index) == [name]
    pd.testing.assert_frame_equal(got, want)


@pytest.mark.parametrize("name", ["", " "])
def test_an_empty_model_name_is_shown_the_models_not_told_every_name_is_close(name):
    from effstats.workflow import SequentialRun, select

    d = simulate_responses(24, 200, rng=3)
    sel = select(d.subset(models=range(20)), 30, seed=0)
    new = d.subset(models=range(20, 24), items=sel.items)
    with pytest.raises(ValueError, match=r"^models: no model '\s?' in new_results \(its models: 'sim20', 'sim21'"):
        estimate(sel, new, models=[name])
    with pytest.raises(ValueError, match=r"^against: no reference model '\s?' \(models: \['sim0', 'sim1', "):
        SequentialRun.start(d.subset(models=range(20)), against=name)


@pytest.mark.parametrize("given", [["sim20"], ("sim20",), b"sim20", {"sim20"}])
def test_sequential_update_takes_one_model_name_and_says_so(given):
    from effstats.workflow import SequentialRun

    d = simulate_responses(22, 120, rng=2)
    run = SequentialRun.start(d.subset(models=range(20)), half_width=0.2)
    new = d.subset(models=[20, 21], items=run.next_items)
    with pytest.raises(ValueError, match=rf"^model: expected one model's name, got {type(given).__name__}"):
        run.update(new, model=given)
    run.update(new, model=np.array("sim20"))  # the name a 0-d array holds
    assert run.state["model"] == "sim20"


@pytest.mark.parametrize("container", [set, frozenset])
def test_estimate_models_given_as_a_set_are_scored_in_the_results_order(container):
    """A set has no order (a set of names iterates in their hashes' order, another in each process): its models'
    rows come in the order of new_results, as without ``models``; a list keeps the order it gives."""
    from effstats.workflow import select

    d = simulate_responses(28, 200, rng=3)
    sel = select(d.subset(models=range(20)), 30, seed=0)
    new = d.subset(models=range(20, 28), items=sel.items)
    names = list(new.model_ids)
    every = estimate(sel, new).to_frame()
    shuffled = [names[k] for k in (5, 2, 7, 0, 6, 3, 1, 4)]
    got = estimate(sel, new, models=container(shuffled)).to_frame()
    assert list(got.index) == names
    pd.testing.assert_frame_equal(got, every)
    listed = estimate(sel, new, models=shuffled[:3]).to_frame()
    assert list(listed.index) == shuffled[:3]
    pd.testing.assert_frame_equal(listed, every.loc[shuffled[:3]])
    with pytest.raises(ValueError, match=r"^models: no model 'a-missing' in new_results"):
        estimate(sel, new, models=container(["z-missing", names[0], "a-missing"]))
