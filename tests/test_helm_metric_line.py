"""``select`` on HELM runs names the stat it read each run spec with, and the split and perturbation, in one
``metric:`` line, as it names the metric and filter of each task of lm-eval logs."""
from __future__ import annotations

import json

import pytest
from helm_fixtures import TYPO, Scenario, write_suite

from effstats.cli import main

BBQ = "bbq:subject=all,method=multiple_choice_joint"
MMLU = "mmlu:subject=anatomy,method=multiple_choice_joint"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("helm")
    write_suite(root, [Scenario(BBQ, metric="quasi_exact_match", n=30), Scenario("boolq", n=30, perturbed=True),
                       Scenario(MMLU, n=30), Scenario("mmlu:subject=virology,method=multiple_choice_joint", n=30),
                       Scenario("mmlu:subject=astronomy,method=multiple_choice_joint", n=30)], 6)
    return root / "runs"


def _metric_lines(runs, capsys, tmp_path, *options) -> list[str]:
    code = main(["select", str(runs), "--budget", "20", "--method", "random", "--out", str(tmp_path / "sel"),
                 "--no-progress", *options])
    out, err = capsys.readouterr()
    assert code == 0, err
    lines = out.splitlines()
    said = [ln for ln in lines if ln.startswith("metric:")]
    # after the task table, before the manifest's path
    assert said and lines.index(said[0]) < next(k for k, ln in enumerate(lines) if ln.startswith("manifest:"))
    return said


def test_one_stat_for_every_run_spec(runs, capsys, tmp_path):
    said = _metric_lines(runs, capsys, tmp_path, "--tasks", "boolq," + MMLU.replace(",", "\\,"))
    # these runs log no other score stat: no example of another metric
    assert said == ["metric: exact_match (split test) in every run spec; another: --metric, --split, --perturbation"]


def test_a_stat_per_scenario_names_the_run_specs_read_with_each(runs, capsys, tmp_path):
    said = _metric_lines(runs, capsys, tmp_path, "--metric", "bbq=quasi_exact_match,exact_match")
    tasks = json.loads((tmp_path / "sel" / "manifest.json").read_text())["tasks"]
    assert len(tasks) == 5
    assert said == ["metric: quasi_exact_match (split test) in " + BBQ + "; exact_match (split test) in the other 4 "
                    "run specs"]


def test_the_perturbation_read_is_named(runs, capsys, tmp_path):
    said = _metric_lines(runs, capsys, tmp_path, "--tasks", "boolq", "--perturbation", "typo")
    assert said == ["metric: exact_match (split test, perturbation typo); another: --metric, --split, --perturbation"]
    fields = json.dumps({k: TYPO[k] for k in ("name", "prob")})
    said = _metric_lines(runs, capsys, tmp_path / "b", "--tasks", "boolq", "--perturbation", fields)
    assert said == ['metric: exact_match (split test, perturbation {"name": "typo", "prob": 0.1}); another: --metric, '
                    "--split, --perturbation"]


@pytest.mark.parametrize("command", ["select", "estimate"])
def test_a_run_spec_split_at_its_commas_by_tasks_is_told_how_to_write_it(runs, capsys, tmp_path, command):
    """``--tasks`` splits its value at commas, and a HELM run spec's name holds commas: the refusal names the parts
    it did not find and shows the name written with ``\\,``."""
    argv = ["select", str(runs), "--budget", "20", "--out", str(tmp_path / "sel"), "--no-progress"]
    if command == "estimate":
        assert main(argv) == 0
        capsys.readouterr()
        argv = ["estimate", str(tmp_path / "sel"), str(runs / "v1" / f"{MMLU},model=org0_model-00"),
                "--restrict-to-manifest", "--out", str(tmp_path / "e")]
    code = main(argv + ["--tasks", MMLU])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1, err
    # select names the parts in sorted order, estimate in the order given (here the reverse)
    parts = sorted(["'method=multiple_choice_joint'", "'mmlu:subject=anatomy'"], reverse=command == "estimate")
    assert err.startswith(f"effstats {command}: error: --tasks: [{', '.join(parts)}] not among the "), err
    assert err.endswith(" (on the command line a comma inside a task's name is written \\,: --tasks "
                        "'mmlu:subject=anatomy\\,method=multiple_choice_joint')"), err
