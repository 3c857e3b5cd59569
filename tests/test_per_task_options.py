"""``--metric`` and ``--filter`` given once or per task: two plain names are one too many for "the other tasks",
a HELM run spec's name keeps its commas written ``\\,`` (as ``--tasks`` reads them), and where the default metric
or a filter does not read every task the refusal shows the per-task option that does, from what the logs hold."""
from __future__ import annotations

from pathlib import Path

import pytest
from helm_fixtures import Scenario, write_suite

from loop_inputs import write_mc_and_gsm8k

from effstats.cli import main
from effstats.workflow._io import per_task

TS = "2026-01-01T00-00-00.000000"
MMLU = "mmlu:subject=anatomy,method=multiple_choice_joint"


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> Path:
    """hellaswag (multiple choice, read with acc) and gsm8k (generated answers scored by exact_match, logged under
    two filters), as lm-eval writes a common suite."""
    return write_mc_and_gsm8k(tmp_path_factory.mktemp("suite"))


def _select(argv, capsys) -> tuple[int, list[str], str]:
    code = main(["select", *map(str, argv), "--budget", "20", "--method", "random", "--no-progress"])
    out, err = capsys.readouterr()
    return code, out.splitlines(), err.strip()


def _error(argv, capsys) -> str:
    code, _, err = _select(argv, capsys)
    assert code == 2 and len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err


def test_two_plain_names_are_two_values_for_the_other_tasks(logs, tmp_path, capsys):
    with pytest.raises(ValueError, match=r"^metric: 'acc,acc_norm' gives two metrics for the other tasks \('acc' and "
                       r"'acc_norm'\); one metric per task"):
        per_task("acc,acc_norm", "metric")
    with pytest.raises(ValueError, match=r"^filter: 'a,gsm8k=b,c' gives two filters for the other tasks"):
        per_task("a,gsm8k=b,c", "filter")
    err = _error([logs, "--metric", "acc,acc_norm", "--out", tmp_path / "s"], capsys)
    assert err.startswith("effstats select: error: --metric: 'acc,acc_norm' gives two metrics for the other tasks "
                          "('acc' and 'acc_norm'); one metric per task"), err
    assert "twice" not in err
    # a name given twice is still said so
    with pytest.raises(ValueError, match=r"'gsm8k=acc' in 'gsm8k=em,gsm8k=acc' is twice"):
        per_task("gsm8k=em,gsm8k=acc", "metric")


def test_the_default_metric_is_said_so_with_the_per_task_form_that_reads_the_task(logs, tmp_path, capsys):
    err = _error([logs, "--out", tmp_path / "s"], capsys)
    assert err.startswith("effstats select: error: REFERENCE: the default metric 'acc' is not logged in "
                          f"org__m00/samples_gsm8k_{TS}.jsonl (line 1), a record of generated text"), err
    assert err.endswith("; name the metric per task: --metric gsm8k=exact_match,acc"), err
    assert "--metric:" not in err
    # a metric given is named as the option's
    err = _error([logs, "--metric", "acc", "--out", tmp_path / "s"], capsys)
    assert err.startswith("effstats select: error: --metric: 'acc' is not logged in "), err
    assert err.endswith("; name the metric per task: --metric gsm8k=exact_match,acc"), err
    # per task, the other entries kept
    err = _error([logs, "--metric", "gsm8k=acc_norm,acc", "--out", tmp_path / "s"], capsys)
    assert err.endswith("; name the metric per task: --metric gsm8k=exact_match,acc"), err


@pytest.mark.parametrize("metric,advice", [("nope", "gsm8k=exact_match,hellaswag=acc"),
                                           ("hellaswag=acc,nope", "hellaswag=acc,gsm8k=exact_match"),
                                           ("gsm8k=nope,acc_nope", "gsm8k=exact_match,hellaswag=acc")])
def test_a_metric_no_task_logs_is_advised_per_task_for_every_task_at_once(logs, tmp_path, capsys, metric, advice):
    # the advice reads every task: a metric neither task logs is replaced in both (one refusal, not one a task)
    err = _error([logs, "--metric", metric, "--out", tmp_path / "s"], capsys)
    assert err.endswith(f"; name the metric per task: --metric {advice}"), err
    err = _error([logs, "--tasks", "hellaswag", "--metric", "nope", "--out", tmp_path / "s"], capsys)
    assert err.endswith("; pass --metric acc, which every task logs"), err


def test_a_task_of_several_filters_is_shown_its_per_task_filter(logs, tmp_path, capsys):
    metric = ["--metric", "gsm8k=exact_match,acc"]
    err = _error([logs, *metric, "--out", tmp_path / "s"], capsys)
    assert err == (f"effstats select: error: REFERENCE: org__m00/samples_gsm8k_{TS}.jsonl logs several filters "
                   "['flexible-extract', 'strict-match']; name the filter per task: --filter gsm8k=strict-match")
    # where every task read logs several, one name reads them all
    err = _error([logs, "--tasks", "gsm8k", "--metric", "exact_match", "--out", tmp_path / "s"], capsys)
    assert err.endswith("logs several filters ['flexible-extract', 'strict-match']; pass --filter <one of them>, "
                        "e.g. --filter strict-match"), err
    # one filter for every task fails on the tasks that log another: the hint is the per-task form at once
    err = _error([logs, *metric, "--filter", "strict-match", "--out", tmp_path / "s"], capsys)
    assert err == (f"effstats select: error: --filter: 'strict-match' is not logged in org__m00/samples_hellaswag_{TS}"
                   ".jsonl; it logs ['none']; name the filter per task: --filter gsm8k=strict-match")
    # and it reads
    code, out, err = _select([logs, *metric, "--filter", "gsm8k=strict-match", "--out", tmp_path / "ok"], capsys)
    assert code == 0, err
    assert [ln for ln in out if ln.startswith("metric:")] == [
        "metric: exact_match (lm-eval filter strict-match) in gsm8k; acc (lm-eval filter none) in hellaswag"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("helm")
    scenarios = [Scenario("boolq", n=30), Scenario(MMLU, metric="quasi_exact_match", n=30)]
    write_suite(root, scenarios, 6)
    write_suite(root, scenarios, 1, suite="new", models=["org9/new-model"])
    return root / "runs"


def test_a_run_spec_name_with_commas_keys_the_metric_written_with_backslash_commas(runs, tmp_path, capsys):
    assert per_task(MMLU.replace(",", "\\,") + "=quasi_exact_match,exact_match", "metric") == {
        MMLU: "quasi_exact_match", None: "exact_match"}
    code, out, err = _select([runs / "v1", "--metric", MMLU.replace(",", "\\,") + "=quasi_exact_match,exact_match",
                              "--out", tmp_path / "s"], capsys)
    assert code == 0, err
    assert [ln for ln in out if ln.startswith("metric:")] == [
        f"metric: exact_match (split test) in boolq; quasi_exact_match (split test) in {MMLU}"]
    # the manifest's metric reads back the same way: estimate reads the new runs with it
    code = main(["estimate", str(tmp_path / "s"), str(runs / "new"),
                 "--restrict-to-manifest", "--out", str(tmp_path / "e"), "--no-progress"])
    assert code == 0, capsys.readouterr().err


def test_a_run_spec_name_cut_at_its_commas_is_told_how_to_write_it(runs, tmp_path, capsys):
    err = _error([runs / "v1", "--metric", MMLU + "=quasi_exact_match,exact_match", "--out", tmp_path / "s"], capsys)
    assert err.startswith("effstats select: error: --metric: no run of the scenario(s) ['mmlu:subject', "
                          "'method=multiple_choice_joint']"), err
    assert err.endswith(" (on the command line a comma inside a run spec's name is written \\,: --metric "
                        "'mmlu:subject=anatomy\\,method=multiple_choice_joint=quasi_exact_match'; or key it by its "
                        "scenario: --metric mmlu=quasi_exact_match)"), err


@pytest.mark.parametrize("given", ["hellaswag=acc,gsm8k=exact_match", "gsm8k=exact_match,hellaswag=acc,acc",
                                   "gsm8k=exact_match"])
def test_new_results_take_a_metric_that_reads_each_task_as_the_reference_was_read(logs, given):
    # the same metric per task in another spelling is the reference's; another metric for a task is refused
    from effstats.workflow._io import read_new_results

    ref = {"layout": "lm-eval", "metric": "gsm8k=exact_match,acc", "filter": "gsm8k=strict-match",
           "tasks": ["gsm8k", "hellaswag"]}
    want = read_new_results(logs, ref)[0]
    got = read_new_results(logs, ref, metric=given)[0]
    assert list(got.item_ids) == list(want.item_ids)
    assert (got.values_with_nan() == want.values_with_nan()).all()
    with pytest.raises(ValueError, match=r"^metric: the reference models were read with metric 'gsm8k=exact_match,"
                                         r"acc'; the new results must be scored the same way, got 'acc_norm'"):
        read_new_results(logs, ref, metric="acc_norm")
    with pytest.raises(ValueError, match="scored the same way, got 'hellaswag=acc_norm,gsm8k=exact_match'"):
        read_new_results(logs, ref, metric="hellaswag=acc_norm,gsm8k=exact_match")


def test_sequential_update_takes_the_runs_metric_in_another_spelling(logs, tmp_path, capsys):
    argv = ["sequential", "start", logs, "--out", tmp_path / "run", "--metric", "gsm8k=exact_match,acc", "--filter",
            "gsm8k=strict-match", "--half-width", "0.2", "--no-progress"]
    assert main(list(map(str, argv))) == 0
    update = ["sequential", "update", tmp_path / "run", logs, "--model", "org/m00", "--restrict-to-manifest",
              "--no-progress", "--metric"]
    assert main(list(map(str, update + ["hellaswag=acc_norm,gsm8k=exact_match"]))) == 2
    assert "the new results must be scored the same way" in capsys.readouterr().err
    assert main(list(map(str, update + ["hellaswag=acc,gsm8k=exact_match"]))) == 0, capsys.readouterr().err
