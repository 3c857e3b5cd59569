"""What the loop's commands say and under which name: results fed again after a look that dropped items,
sequential start's ``metric:`` line, the argument a record or journal naming a key twice is reported under (and
what to do with a journal), and the estimate's report on a terminal as text, its ``.md`` file as Markdown."""
from __future__ import annotations

import json
import shutil

import pytest

from effstats import ResponseMatrix
from effstats.cli import main
from effstats.datasets import simulate_responses
from effstats.workflow import write_lm_eval_samples

from helm_fixtures import Scenario, write_suite
from test_new_models_beside_references import _error, _run

TASKS = ("clean", "rotate_+30")


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    root = tmp_path_factory.mktemp("labels")
    d = simulate_responses(13, 80, rng=6)
    rm = ResponseMatrix(d.values, model_ids=[f"org/m{i:02d}" for i in range(13)],
                        item_ids=[f"{t}/{k}" for t in TASKS for k in range(40)])
    write_lm_eval_samples(rm, root / "ref", models=rm.model_ids[:12])
    write_lm_eval_samples(rm, root / "new", models=rm.model_ids[12:])
    return root, rm


def test_results_of_a_look_that_dropped_items_fed_again_are_said_recorded_at_an_earlier_look(logs, capsys,
                                                                                             tmp_path):
    root, rm = logs
    code, _, err = _run(["sequential", "start", root / "ref", "--half-width", "0.05", "--initial", "20", "--batch",
                         "20", "--out", tmp_path / "s"], capsys)
    assert code == 0, err
    batch = json.loads((tmp_path / "s" / "batch_001" / "items.json").read_text())
    batch = batch["items"] if isinstance(batch, dict) else batch
    new = rm.model_ids[12:]
    write_lm_eval_samples(rm, tmp_path / "part", models=new, items=batch[2:])  # two documents failed
    write_lm_eval_samples(rm, tmp_path / "whole", models=new, items=batch)  # the batch again, all of it
    code, _, err = _run(["sequential", "update", tmp_path / "s", tmp_path / "part", "--skip-failed"], capsys)
    assert code == 0 and "dropped from the run" in err, err
    for more in ([], ["--restrict-to-manifest"]):
        code, _, err = _run(["sequential", "update", tmp_path / "s", tmp_path / "whole", *more], capsys)
        assert _error(code, err) == ("effstats sequential update: error: NEW_RESULTS: these results were recorded at "
                                     "an earlier look (look 1 is the last); the next batch is batch 002"), err


def _metric_line(out):
    lines = [x for x in out.splitlines() if x.startswith("metric: ")]
    assert len(lines) == 1, out
    return lines[0]


def test_sequential_start_prints_the_metric_line_select_prints(logs, capsys, tmp_path):
    root, _ = logs
    write_suite(tmp_path / "helm", [Scenario("boolq", n=30)], 6)
    for ref in (root / "ref", tmp_path / "helm" / "runs"):
        code, out, err = _run(["select", ref, "--budget", "10", "--out", tmp_path / "sel", "--force"], capsys)
        assert code == 0, err
        code, started, err = _run(["sequential", "start", ref, "--half-width", "0.1", "--out", tmp_path / "s",
                                   "--force"], capsys)
        assert code == 0, err
        assert _metric_line(started) == _metric_line(out)
    assert _metric_line(started).startswith("metric: exact_match (split test)")


def test_a_record_naming_a_key_twice_is_said_under_the_argument_given(logs, capsys, tmp_path):
    root, _ = logs
    sel = tmp_path / "sel"
    assert main(["select", str(root / "ref"), "--budget", "20", "--out", str(sel)]) == 0
    capsys.readouterr()
    for out in ([], ["--out", tmp_path / "e"]):
        code, _, err = _run(["estimate", sel, root / "new", "--restrict-to-manifest", *out], capsys)
        assert code == 0, err
        record = (tmp_path / "e" if out else sel / "estimate" / "new") / ".effstats_estimate.json"
        record.write_text(record.read_text().replace('"format":', '"format": "x",\n "format":', 1))
        code, _, err = _run(["estimate", sel, root / "new", "--restrict-to-manifest", "--force", *out], capsys)
        said = (f"{record} line 3 names the key 'format' twice in one object (a hand edit?); keep one of "
                "them")
        assert _error(code, err) == f"effstats estimate: error: {'--out: ' if out else ''}{said}", err
    # select's folder is its --out: a journal there is said under it, with what to do
    (sel / ".effstats_swap.json").write_text('{"format": "effstats.swap/1",\n "format": 1}')
    code, _, err = _run(["select", root / "ref", "--budget", "20", "--out", sel, "--force"], capsys)
    assert _error(code, err) == (f"effstats select: error: --out: {sel / '.effstats_swap.json'} line 2 names the key "
                                 "'format' twice in one object (a hand edit?); it is the journal of a command killed "
                                 "while putting its files in place: check the folder's files, remove the journal, "
                                 "and run that command again (with --force where it asks) if they are incomplete")


def test_the_report_on_a_terminal_is_text_and_its_file_markdown(logs, capsys, tmp_path):
    root, _ = logs
    assert main(["select", str(root / "ref"), "--budget", "20", "--out", str(tmp_path / "sel")]) == 0
    capsys.readouterr()
    code, out, err = _run(["estimate", tmp_path / "sel", root / "new", "--restrict-to-manifest", "--out",
                           tmp_path / "e"], capsys)
    assert code == 0, err
    md = (tmp_path / "e" / "estimate.md").read_text()
    assert "| org/m12 | rotate\\_+30 |" in md  # escaped for Markdown
    assert "| org/m12 | rotate_+30 |" in out and "\\" not in out, out
    assert out.split("\n", 1)[1].startswith(md.replace("rotate\\_+30", "rotate_+30"))


def test_sequential_update_names_new_results_as_the_other_commands(logs, capsys, tmp_path):
    root, _ = logs
    shutil.copytree(root / "new", tmp_path / "two")
    shutil.copytree(root / "ref" / "org__m00", tmp_path / "two" / "org__m00")
    code, _, err = _run(["sequential", "start", root / "ref", "--half-width", "0.1", "--out", tmp_path / "s"], capsys)
    assert code == 0, err
    code, _, err = _run(["sequential", "update", tmp_path / "s", tmp_path / "two", "--model", "org/m99"], capsys)
    assert "new_results" not in err and "in NEW_RESULTS" in _error(code, err), err


def test_models_and_the_model_to_evaluate_read_as_typed_but_not_a_model_named_in_a_message():
    from effstats.workflow._cli import _cli_names

    assert _cli_names("new_results: x; score the other models with models=['a', 'b,c']", "estimate") == (
        "NEW_RESULTS: x; score the other models with --model 'a,b\\,c'")
    assert _cli_names("model: new_results hold 3 models, 2 of them reference models; name the one to evaluate: "
                      "model='org/a b'", "sequential update") == (
        "--model: NEW_RESULTS hold 3 models, 2 of them reference models; name the one to evaluate: --model 'org/a b'")
    said = "new_results: model='x' is a name, not an option"
    assert _cli_names(said, "estimate") == "NEW_RESULTS" + said[len("new_results"):]
    said = "REFERENCE: no model column; add one (df.assign(model='<its name>'))"
    assert _cli_names(said, "select") == said
