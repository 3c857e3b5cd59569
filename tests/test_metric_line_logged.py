"""The ``metric:`` line ``select`` prints suggests another metric only from those the logs hold for the tasks read
(none where they hold no other), says when HELM's train trials were averaged into graded scores and which split(s)
``--split any`` read; a scenario whose stats are all on another split is named with that split when it is dropped."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from helm_fixtures import Scenario, write_suite
from loop_inputs import write_mc_and_gsm8k

from effstats.cli import main

MMLU = "mmlu:subject=anatomy,method=multiple_choice_joint"
ANOTHER = "another: --metric{}, --split, --perturbation"


def _select(argv, capsys) -> tuple[list[str], str]:
    code = main(["select", *map(str, argv), "--budget", "20", "--method", "random", "--no-progress"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return [ln for ln in out.splitlines() if ln.startswith("metric:")], err


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> Path:
    """arc (multiple choice, with the choices' texts) and gsm8k (generated answers, exact_match only)."""
    return write_mc_and_gsm8k(tmp_path_factory.mktemp("lm"), task="arc", n_models=10, n_docs=30, rng=4)


def test_lm_eval_another_metric_is_one_the_logs_hold(logs, tmp_path, capsys):
    said, _ = _select([logs, "--tasks", "arc", "--out", tmp_path / "a"], capsys)
    assert said == ["metric: acc (lm-eval filter none); another: --metric (e.g. acc_norm), --filter"]
    # not the metric read
    said, _ = _select([logs, "--tasks", "arc", "--metric", "acc_norm", "--out", tmp_path / "b"], capsys)
    assert said == ["metric: acc_norm (lm-eval filter none); another: --metric (e.g. acc), --filter"]
    # generated answers scored by exact_match alone: no other metric to suggest (acc_norm is no score of them)
    said, _ = _select([logs, "--tasks", "gsm8k", "--metric", "exact_match", "--filter", "strict-match", "--out",
                       tmp_path / "c"], capsys)
    assert said == ["metric: exact_match (lm-eval filter strict-match); another: --metric, --filter"]


def _add_stat(runs: Path, scenario: str, stat: str) -> None:
    """Log ``stat`` beside each run's own score stat, with the same values (HELM logs several a run)."""
    for f in runs.glob(f"*/{scenario}*/per_instance_stats.json"):
        entries = json.loads(f.read_text())
        for e in entries:
            e["stats"] += [{**s, "name": {**s["name"], "name": stat}} for s in e["stats"]
                           if s["name"]["name"] == "exact_match"]
        f.write_text(json.dumps(entries))


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("helm")
    write_suite(root, [Scenario("boolq", n=30), Scenario(MMLU, n=30), Scenario("bbq:subject=all", n=30, trials=3),
                       Scenario("narrative_qa", n=30, split="valid")], 6)
    _add_stat(root / "runs", "boolq", "quasi_exact_match")
    return root / "runs"


def test_helm_another_stat_is_one_the_runs_log(runs, tmp_path, capsys):
    said, _ = _select([runs, "--tasks", "boolq", "--out", tmp_path / "a"], capsys)
    assert said == ["metric: exact_match (split test); " + ANOTHER.format(" (e.g. quasi_exact_match)")]
    said, _ = _select([runs, "--tasks", "boolq", "--metric", "quasi_exact_match", "--out", tmp_path / "b"], capsys)
    assert said == ["metric: quasi_exact_match (split test); " + ANOTHER.format(" (e.g. exact_match)")]
    # a run spec logging exact_match alone among the score stats (num_references, num_output_tokens are no scores)
    said, _ = _select([runs, "--tasks", MMLU.replace(",", "\\,"), "--out", tmp_path / "c"], capsys)
    assert said == ["metric: exact_match (split test); " + ANOTHER.format("")]


def test_helm_train_trials_averaged_into_graded_scores_are_said(runs, tmp_path, capsys):
    said, _ = _select([runs, "--tasks", "bbq:subject=all,boolq", "--out", tmp_path / "a"], capsys)
    assert said == ["metric: exact_match (split test, 3 train trials averaged: graded scores) in bbq:subject=all; "
                    "exact_match (split test) in boolq"]
    # read a trial at a time: nothing averaged
    said, _ = _select([runs, "--tasks", "bbq:subject=all", "--trials", "separate", "--out", tmp_path / "b"], capsys)
    assert said == ["metric: exact_match (split test); " + ANOTHER.format("")]


def test_helm_split_any_names_the_splits_read_and_a_dropped_scenario_names_its_split(runs, tmp_path, capsys):
    said, _ = _select([runs, "--tasks", "boolq,narrative_qa", "--split", "any", "--out", tmp_path / "a"], capsys)
    assert said == ["metric: exact_match (split test) in boolq; exact_match (split valid) in narrative_qa"]
    said, err = _select([runs, "--out", tmp_path / "b"], capsys)
    assert "narrative_qa" not in said[0]
    warned = [ln for ln in err.splitlines() if "narrative_qa:model=" in ln]
    assert len(warned) == 1 and warned[0].endswith(
        "their cells are missing (their stats of the metric are on split 'valid': --split valid reads them "
        "(--split any: every split))"), err
