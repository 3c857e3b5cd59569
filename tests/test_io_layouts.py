"""Score tables in the layouts users write, as the loop reads them (``read_results``, ``effstats select|estimate``).

Each layout is either read aligned by id, checked cell by cell against the table it was written from, or refused
with one error that names the argument and the file, says what was found and what layout is expected; the command
line prints that error on one line and exits with status 2. No layout may be read as another set of models or items.
"""
from __future__ import annotations

import json
import re
import unicodedata
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from effstats.cli import main
from effstats.datasets import simulate_responses
from effstats.workflow import estimate, read_results, select

# the reference logs are parsed once and read by test after test (tests/conftest.py: parsed_logs_kept)
pytestmark = pytest.mark.usefixtures("parsed_logs_kept")

MODELS = [f"org/model-{i}" for i in range(12)]
ITEMS = [f"arc/{j}" for j in range(15)] + [f"boolq/{j}" for j in range(15)]


@pytest.fixture(scope="module")
def wide():
    """The truth: 12 models x 30 items of 0/1 correctness, lm-eval item ids."""
    v = simulate_responses(12, 30, rng=0).values.astype(int)
    return pd.DataFrame(v, index=pd.Index(MODELS, name="model"), columns=ITEMS)


def _long(wide: pd.DataFrame) -> pd.DataFrame:
    return wide.stack().rename("score").reset_index().rename(columns={"level_1": "item"})


def _same(rm, wide: pd.DataFrame) -> None:
    """``rm`` holds exactly ``wide``'s models, items and cells, matched by id."""
    assert set(rm.model_ids) == set(wide.index) and set(rm.item_ids) == set(wide.columns)
    got = rm.to_frame().astype(float).loc[wide.index, wide.columns]
    np.testing.assert_array_equal(got.to_numpy(), wide.to_numpy(dtype=float))


# ------------------------------------------------------------------------------------------------ read as it is
def _write_semicolon(wide, f):
    wide.to_csv(f, sep=";")


def _write_row_numbers(wide, f):
    wide.reset_index().to_csv(f)  # pandas' row numbers before the model column


def _write_booleans(wide, f):
    wide.astype(bool).to_csv(f)


def _write_id_not_first(wide, f):
    w = wide.reset_index()
    w.insert(4, "model", w.pop("model"))
    w.to_csv(f, index=False)


def _write_name_not_first(wide, f):
    w = wide.reset_index().rename(columns={"model": "name"})
    w.insert(4, "name", w.pop("name"))
    w.to_csv(f, index=False)


def _write_long_shuffled(wide, f):
    _long(wide).sample(frac=1.0, random_state=0).assign(task="x").to_csv(f, index=False)


@pytest.mark.parametrize("write", [_write_semicolon, _write_row_numbers, _write_booleans, _write_id_not_first,
                                   _write_name_not_first, _write_long_shuffled])
def test_layouts_read_aligned_by_id(tmp_path, wide, write):
    f = tmp_path / "scores.csv"
    write(wide, f)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _same(read_results(f), wide)


# ------------------------------------------------------------------------------------------------ refused
def _transposed_item(wide, f):
    wide.T.rename_axis("item").to_csv(f)


def _one_model_without_model_column(wide, f):
    one = _long(wide)
    one[one.model == one.model.iloc[0]][["item", "score"]].to_csv(f, index=False)


def _transposed_named_model(wide, f):
    wide.T.rename_axis("model").to_csv(f)  # the header says model, the rows are items


def _long_renamed(wide, f):
    _long(wide).rename(columns={"model": "model_name", "item": "doc_id", "score": "acc"}).to_csv(f, index=False)


def _long_task_doc(wide, f):
    lg = _long(wide)
    lg["task"], lg["doc"] = lg["item"].str.split("/").str[0], lg["item"].str.split("/").str[1]
    lg[["model", "task", "doc", "score"]].to_csv(f, index=False)


def _long_numeric_item(wide, f):
    lg = _long(wide)
    lg.assign(item=lg["item"].str.split("/").str[1].astype(int) + 15 * lg["item"].str.startswith("boolq"))[
        ["model", "item", "score"]].rename(columns={"item": "q", "score": "correct"}).to_csv(f, index=False)


def _metadata_text(wide, f):
    w = wide.copy()
    w.insert(0, "release", "2024-05-01")
    w.to_csv(f)


def _metadata_number(wide, f):
    w = wide.copy()
    w.insert(0, "params_b", np.arange(12) + 1)
    w.to_csv(f)


def _metadata_flag(wide, f):
    w = wide.copy()
    w.insert(0, "instruct", np.arange(12) % 2)  # 0/1 like the scores: caught by its name, not its values
    w.to_csv(f)


def _aggregate(wide, f):
    w = wide.copy()
    w["average"] = w.mean(1).round(3)
    w.to_csv(f)


def _headerless_wide(wide, f):
    wide.to_csv(f, header=False)


def _headerless_long(wide, f):
    _long(wide).to_csv(f, header=False, index=False)


def _percent_wide(wide, f):
    (wide * 100).to_csv(f)


def _percent_long(wide, f):
    _long(wide).assign(score=lambda d: d.score * 87.5).to_csv(f, index=False)


def _rating_wide(wide, f):
    (wide * 10).to_csv(f)  # a 0–10 rating is no percentage: dividing it by 100 would misread it


def _rating_long(wide, f):
    _long(wide).assign(score=lambda d: 1 + 4 * d.score).to_csv(f, index=False)  # a 1–5 scale


def _doc_ids_repeat(wide, f):
    w = wide.copy()
    w.columns = [c.split("/")[1] for c in w.columns]  # 'arc/3' and 'boolq/3' both written '3'
    w.to_csv(f)


REFUSED = [
    (_transposed_item, ["looks transposed", "first column is named 'item'", "one row per item and one column per model",
                        "expected one row per model"]),
    (_one_model_without_model_column, ["looks like one model's long table without a model column",
                                       "['item', 'score']", "add a 'model' column"]),
    (_transposed_named_model, ["looks transposed", "rows are named like items ('arc/0', 'arc/1')",
                               "expected one row per model"]),
    (_long_renamed, ["looks like a long table", "['doc_id'] name items", "['model_name', 'doc_id', 'acc']",
                     "name them 'model', 'item' and 'score'"]),
    (_long_task_doc, ["the long layout's columns item='item' are absent", "looks like a long table",
                      "['model', 'task', 'doc', 'score']", "item ids unique across tasks"]),
    (_long_numeric_item, ["looks like a long table", "every id in its column 'model' repeats",
                          "['model', 'q', 'correct']", "name them 'model', 'item' and 'score'"]),
    (_metadata_text, ["column 'release' has non-numeric values, e.g. '2024-05-01'", "a wide table holds the model ids",
                      "drop metadata columns"]),
    (_metadata_number, ["column(s) ['params_b'] are not items", "not an item id <task>/<doc_id> as the other 30",
                        "drop the other columns"]),
    (_metadata_flag, ["column(s) ['instruct'] are not items", "drop the other columns"]),
    (_aggregate, ["column(s) ['average'] are not items", "named like model metadata or an aggregate"]),
    (_headerless_wide, ["has no header line", "'org/model-0,", "add a header line"]),
    (_headerless_long, ["has no header line", "'org/model-0,arc/0,", "'model,item,score'"]),
    (_percent_wide, ["the scores run from 0 to 100: percentages?", "expected scores in [0, 1] (divide them by 100)"]),
    (_percent_long, ["the scores in column 'score' run from 0 to 87.5: percentages?", "expected scores in [0, 1]"]),
    (_rating_wide, ["the scores run from 0 to 10: a rating (0–10, 1–5)?", "(rescale them to [0, 1])"]),
    (_rating_long, ["the scores in column 'score' run from 1 to 5: a rating (0–10, 1–5)?",
                    "expected scores in [0, 1]"]),
    (_doc_ids_repeat, ["repeats the column names", "item ids unique across tasks"]),
]


@pytest.mark.parametrize("write, parts", REFUSED, ids=[w.__name__ for w, _ in REFUSED])
def test_layouts_refused_with_one_clear_error(tmp_path, wide, write, parts):
    f = tmp_path / "scores.csv"
    write(wide, f)
    with pytest.raises(ValueError) as info:
        read_results(f, name="reference")
    msg = str(info.value)
    assert msg.startswith("reference: scores.csv") and "\n" not in msg, msg
    for part in parts:
        assert part in msg, (part, msg)
    # the command line: the same message, on one line, exit status 2
    code = main(["select", str(f), "--budget", "10", "--out", str(tmp_path / "run")])
    assert code == 2


def test_scores_below_10_are_percentages_only_under_a_percent_header(tmp_path, wide):
    from effstats.datasets import read_scores_csv

    f = tmp_path / "scores.csv"
    for header, says in (("acc %", "percentages? expected scores in [0, 1] (divide them by 100)"),
                         ("acc", "a rating (0–10, 1–5)? expected scores in [0, 1] (rescale them to [0, 1])")):
        _long(wide).assign(score=lambda d: 8 * d.score).rename(columns={"score": header}).to_csv(f, index=False)
        with pytest.raises(ValueError, match=re.escape(f"in column {header!r} run from 0 to 8: {says}")):
            read_scores_csv(f, score=header)


@pytest.mark.parametrize("layout", ["wide", "long"])
def test_scores_in_percent_in_some_models_rows_name_those_models(tmp_path, wide, layout):
    f = tmp_path / "scores.csv"
    odd = wide.copy()
    odd.loc[[MODELS[3], MODELS[7]]] *= 100
    (odd.to_csv(f) if layout == "wide" else _long(odd).to_csv(f, index=False))
    with pytest.raises(ValueError) as info:
        read_results(f, name="reference")
    msg = str(info.value)
    assert f"(model(s) {MODELS[3]!r}, {MODELS[7]!r} score above 1, the other models within [0, 1]: divide those " \
           "models' scores by 100)" in msg, msg
    # every row in percent: the whole table is divided
    (wide * 100).to_csv(f) if layout == "wide" else _long(wide * 100).to_csv(f, index=False)
    with pytest.raises(ValueError, match=re.escape("expected scores in [0, 1] (divide them by 100)")):
        read_results(f, name="reference")


def test_command_line_prints_the_layout_error_on_one_line(tmp_path, wide, capsys):
    f = tmp_path / "scores.csv"
    _transposed_item(wide, f)
    assert main(["select", str(f), "--budget", "10", "--out", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("effstats select: error: REFERENCE: scores.csv looks "
                                                         "transposed"), err
    assert not (tmp_path / "run").exists()


def test_warnings_about_a_table_name_the_argument(tmp_path, wide):
    f = tmp_path / "scores.csv"
    pd.concat([wide, wide.iloc[[2]]]).to_csv(f)
    with pytest.warns(UserWarning,
                      match=r"^new_results: scores.csv: model ids in column 'model' repeat, e.g. 'org/model-2'"):
        read_results(f, name="new_results")


def test_wide_numeric_ids_are_not_mistaken_for_a_header_less_file(tmp_path):
    f = tmp_path / "scores.csv"
    f.write_text("model,0,1,2\na,1,0,1\nb,0,0,1\n")  # item ids 0, 1, 2 under a 'model' header
    rm = read_results(f)
    assert list(rm.item_ids) == ["0", "1", "2"] and list(rm.model_ids) == ["a", "b"]


def test_two_runs_per_model_of_a_wide_table_are_not_taken_for_a_long_one(tmp_path):
    f = tmp_path / "scores.csv"
    f.write_text("model,q1,q2\na,1,0\na,1,1\nb,0,1\nb,0,0\n")
    with pytest.warns(UserWarning, match="repeat"):
        rm = read_results(f)
    assert rm.values.tolist() == [[1, 1], [0, 0]]


# ------------------------------------------------------------------------------------------------ estimate
@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """A manifest from a wide reference CSV of 40 models, and two new models' results on its items."""
    root = tmp_path_factory.mktemp("layouts")
    sim = simulate_responses(42, 200, rng=0)
    ids = [f"arc/{j}" for j in range(100)] + [f"boolq/{j}" for j in range(100)]
    full = pd.DataFrame(sim.values.astype(int), index=pd.Index([f"org/m{i}" for i in range(42)], name="model"),
                        columns=ids)
    full.iloc[:40].to_csv(root / "ref.csv")
    sel = select(root / "ref.csv", 40, seed=0)
    sel.save(root / "run")
    return root, full.iloc[40:][list(sel.items)]


def test_estimate_reads_long_and_wide_results_alike(run):
    root, new = run
    new.to_csv(root / "new_wide.csv")
    _long(new).sample(frac=1.0, random_state=1).to_csv(root / "new_long.csv", index=False)
    a, b = estimate(root / "run", root / "new_wide.csv"), estimate(root / "run", root / "new_long.csv")
    pd.testing.assert_frame_equal(a.to_frame(), b.to_frame().reindex(a.to_frame().index))


@pytest.mark.parametrize("write, part", [
    (lambda n, f: n.T.rename_axis("item").to_csv(f), "new.csv looks transposed"),
    (lambda n, f: n.T.rename_axis("").to_csv(f), "new.csv looks transposed (its rows are named like items"),
    (lambda n, f: (n * 100).to_csv(f), "percentages?"),
    (lambda n, f: n.to_csv(f, header=False), "has no header line"),
    (lambda n, f: n.set_axis([c.replace("/", "_") for c in n.columns], axis=1).to_csv(f),
     "(the manifest names its items like 'arc/"),
])
def test_estimate_refuses_results_in_another_layout(run, capsys, write, part):
    root, new = run
    write(new, root / "new.csv")
    assert main(["estimate", str(root / "run"), str(root / "new.csv"), "--out", str(root / "est")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("effstats estimate: error: NEW_RESULTS:") and part in err, err


def test_estimate_refuses_a_transposed_table_it_cannot_tell_by_its_header(tmp_path):
    # generic ids (q0, q1, ...): only the manifest tells that the rows are items
    sim = simulate_responses(23, 60, rng=1)
    full = pd.DataFrame(sim.values.astype(int), index=[f"m{i}" for i in range(23)],
                        columns=[f"q{j}" for j in range(60)])
    sel = select(read_results_frame(full.iloc[:20]), 20, seed=0)
    new = full.iloc[20:][list(sel.items)]
    f = tmp_path / "new.csv"
    new.T.to_csv(f, index_label="")
    with pytest.raises(ValueError, match=r"^new_results: looks transposed \(its models include the manifest's items"):
        estimate(sel, f)


@pytest.mark.parametrize("name, theirs, part", [
    (lambda j: f"caf\u00e9-{j:02d}", lambda i: unicodedata.normalize("NFD", i),
     ("differ from the reference data's only by Unicode normalisation", r"written 'cafe\u0301-", "(NFD), is 'café-",
      r"in the reference data, written 'caf\xe9-", "(NFC); normalise the results' ids with "
      "unicodedata.normalize('NFC', id)")),
    (lambda j: "x" * 5000 + f"{j:02d}", lambda i: i + "!", ("'" + "x" * 60 + "…(5003 characters)'",)),
])
def test_estimate_message_on_ids_that_print_alike_or_run_long(tmp_path, capsys, name, theirs, part):
    """Ids that print alike are told apart, and a 5,000-character id is cut: the error stays one short line."""
    sim = simulate_responses(23, 60, rng=1)
    items = [name(j) for j in range(60)]
    full = pd.DataFrame(sim.values.astype(int), index=[f"m{i}" for i in range(23)], columns=items)
    full.iloc[:20].to_csv(tmp_path / "ref.csv", index_label="model")
    select(tmp_path / "ref.csv", 20, seed=0).save(tmp_path / "run")
    full.iloc[20:].set_axis([theirs(i) for i in items], axis=1).to_csv(tmp_path / "new.csv", index_label="model")
    assert main(["estimate", str(tmp_path / "run"), str(tmp_path / "new.csv"), "--out", str(tmp_path / "e")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and len(err) < 1000 and all(p in err for p in part), err


def test_one_task_in_another_normalisation_is_told_apart_in_estimate_and_update(tmp_path, capsys):
    """One task's ids composed (NFC) in the reference and decomposed (NFD) in the results, the others alike: every
    command says the ids differ only by Unicode normalisation, showing both as escapes, not that the task was not
    run or that its items are not in the manifest."""
    sim = simulate_responses(21, 80, rng=3)
    items = [f"caf\u00e9/{j}" for j in range(40)] + [f"plain/{j}" for j in range(40)]
    full = pd.DataFrame(sim.values.astype(int), index=[f"m{i}" for i in range(21)], columns=items)
    full.iloc[:20].to_csv(tmp_path / "ref.csv", index_label="model")
    full.iloc[20:].set_axis([unicodedata.normalize("NFD", i) for i in items], axis=1).to_csv(
        tmp_path / "new.csv", index_label="model")
    said = ("error: NEW_RESULTS: {n} item id(s) differ from {where}'s only by Unicode normalisation, e.g. "
            "'{nfd}/{j}', written 'cafe\\u0301/{j}' (NFD), is 'café/{j}' in {where}, written 'caf\\xe9/{j}' (NFC); "
            "normalise the results' ids with unicodedata.normalize('NFC', id)")
    assert main(["select", str(tmp_path / "ref.csv"), "--budget", "20", "--out", str(tmp_path / "sel"),
                 "--no-progress"]) == 0
    capsys.readouterr()
    for restrict in ([], ["--restrict-to-manifest"]):
        assert main(["estimate", str(tmp_path / "sel"), str(tmp_path / "new.csv"), "--out", str(tmp_path / "e"),
                     *restrict]) == 2
        err = capsys.readouterr().err.strip()
        assert err == "effstats estimate: " + said.format(n=40, where="the reference data", j=0,
                                                            nfd=unicodedata.normalize("NFD", "caf\u00e9")), err
    assert main(["sequential", "start", str(tmp_path / "ref.csv"), "--half-width", "0.1", "--initial", "20",
                 "--out", str(tmp_path / "seq"), "--no-progress"]) == 0
    capsys.readouterr()
    for restrict in ([], ["--restrict-to-manifest"]):
        assert main(["sequential", "update", str(tmp_path / "seq"), str(tmp_path / "new.csv"), *restrict]) == 2
        err = capsys.readouterr().err.strip()
        assert re.match(r"effstats sequential update: error: NEW_RESULTS: \d+ item id\(s\) differ from the run's "
                        "only by Unicode normalisation, e.g. 'cafe\u0301/", err), err
        assert "written 'cafe\\u0301/" in err and "(NFD), is 'café/" in err and "in the run, written 'caf\\xe9/" in err


def test_a_new_model_named_as_a_reference_model_in_another_normalisation_is_refused(tmp_path, capsys):
    """A new model whose id is a reference model's but decomposed (NFD) prints as that model and would be ranked
    beside its own reference row, which entered the fit that estimates it: it is refused as the same id is."""
    sim = simulate_responses(21, 40, rng=3)
    nfc, nfd = "caf\u00e9", unicodedata.normalize("NFD", "caf\u00e9")
    models = [f"m{i}" for i in range(19)] + [nfc, "new"]
    full = pd.DataFrame(sim.values.astype(int), index=models, columns=[f"t/{j}" for j in range(40)])
    full.iloc[:20].to_csv(tmp_path / "ref.csv", index_label="model")
    full.iloc[20:].set_axis([nfd]).to_csv(tmp_path / "new.csv", index_label="model")
    assert main(["select", str(tmp_path / "ref.csv"), "--budget", "20", "--out", str(tmp_path / "sel"),
                 "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["estimate", str(tmp_path / "sel"), str(tmp_path / "new.csv"), "--out", str(tmp_path / "e"),
                 "--restrict-to-manifest"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("effstats estimate: error: NEW_RESULTS: 1 model id(s) differ from the reference data's only by "
                   f"Unicode normalisation, e.g. '{nfd}', written "
                   "'cafe\\u0301' (NFD), is 'café' in the reference data, written 'caf\\xe9' (NFC); normalise the "
                   "results' ids with unicodedata.normalize('NFC', id)"), err
    assert not (tmp_path / "e").exists()


@pytest.mark.parametrize("lookalike", ["clean\u2215{j}", "clean/{j}\u200b", "clean\u2044{j}", "\ufeffclean/{j}"])
def test_a_result_under_a_lookalike_id_is_named_in_estimate_and_update(tmp_path, capsys, lookalike):
    """A chosen item whose result is under an id that prints alike (a division or fraction slash for "/", a
    zero-width space, a byte order mark): estimate's warning and sequential update's error (and its skip_failed
    warning) name that id, escaped, not only the item as one without a result."""
    sim = simulate_responses(21, 80, rng=3)
    items = [f"clean/{j}" for j in range(40)] + [f"plain/{j}" for j in range(40)]
    full = pd.DataFrame(sim.values.astype(int), index=[f"m{i}" for i in range(21)], columns=items)
    full.iloc[:20].to_csv(tmp_path / "ref.csv", index_label="model")
    assert main(["select", str(tmp_path / "ref.csv"), "--budget", "20", "--out", str(tmp_path / "sel"),
                 "--no-progress"]) == 0
    assert main(["sequential", "start", str(tmp_path / "ref.csv"), "--half-width", "0.1", "--initial", "20",
                 "--out", str(tmp_path / "seq"), "--no-progress"]) == 0
    chosen = json.loads((tmp_path / "sel" / "manifest.json").read_text())["items"]
    batch = pd.read_csv(tmp_path / "seq" / "batch_001" / "items.csv")["item"].tolist()
    for name, ids in (("sel", chosen), ("seq", batch)):
        j = next(i for i in ids if i.startswith("clean/")).split("/")[1]
        twin = lookalike.format(j=j)
        long = full.iloc[20:].rename(columns={f"clean/{j}": twin}).rename_axis("model").melt(
            ignore_index=False, var_name="item", value_name="score")
        long.to_csv(tmp_path / f"new_{name}.csv")  # a long table: model, item, score
        said = (f"under an id that prints alike but differs in invisible or look-alike characters, e.g. "
                f"'clean/{j}', written 'clean/{j}', as {twin!r}, written {ascii(twin)}: write the results' ids as ")
        capsys.readouterr()
        if name == "sel":
            assert main(["estimate", str(tmp_path / "sel"), str(tmp_path / "new_sel.csv"), "--out",
                         str(tmp_path / "e"), "--restrict-to-manifest"]) == 0
            err = capsys.readouterr().err
            assert "1 chosen item(s) have no result for some model" in err and said + "the manifest does" in err, err
            continue
        update = ["sequential", "update", str(tmp_path / "seq"), str(tmp_path / "new_seq.csv"),
                  "--restrict-to-manifest"]
        assert main(update) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and "has no result on 1 of batch 001's" in err, err
        assert said + "the run does" in err, err
        assert main([*update, "--skip-failed"]) == 0
        err = capsys.readouterr().err
        assert "dropped from the run" in err and said + "the run does" in err, err


def test_a_run_makes_the_set_of_its_ids_once_and_again_only_when_its_order_changes(monkeypatch):
    """Each look checks the results' ids against the run's for Unicode twins: the set of the run's ids is made at the
    first look and kept while the order stays (random order: every look), made again after ``skip_failed`` drops
    items, and still finds a twin: a decomposed (NFD) id of an item handed out later, or of a dropped one."""
    from effstats import ResponseMatrix
    from effstats.workflow import SequentialRun, _estimate, _sequential

    made = []
    for module in (_estimate, _sequential):
        monkeypatch.setattr(module, "str_id_set", lambda known: made.append(1) or {i for i in known})
    sim = simulate_responses(21, 300, rng=4)
    items = [f"caf\u00e9/{j}" for j in range(300)]
    truth = ResponseMatrix(sim.values, model_ids=[f"m{i}" for i in range(21)], item_ids=items)
    run = SequentialRun.start(truth.subset(models=range(20)), rule="precision", half_width=0.001, initial=20,
                              batch=20)
    for _ in range(4):
        run.update(truth.subset(models=[20], items=run.next_items))
    assert len(made) == 1 and run.n_evaluated == 80
    later = run.state["order"][-1]
    twin = truth.subset(models=[20], items=[later]).values
    nfd = ResponseMatrix(twin, model_ids=["m20"], item_ids=[unicodedata.normalize("NFD", later)])
    said = (f"new_results: 1 item id(s) differ from the run's only by Unicode normalisation, e.g. "
            f"{unicodedata.normalize('NFD', later)!r}, written {ascii(unicodedata.normalize('NFD', later))} (NFD), "
            f"is {later!r} in the run, written {ascii(later)} (NFC); normalise the results' ids with "
            "unicodedata.normalize('NFC', id)")
    with pytest.raises(ValueError) as e:
        run.update(nfd)
    assert str(e.value) == said and len(made) == 1
    batch = list(run.next_items)
    with pytest.warns(UserWarning, match="dropped from the run"):
        run.update(truth.subset(models=[20], items=batch[1:]), skip_failed=True)
    nxt = list(run.next_items)
    run.update(truth.subset(models=[20], items=nxt))
    assert len(made) == 2 and run.n_evaluated == 80 + 19 + len(nxt)
    nfd = ResponseMatrix(truth.subset(models=[20], items=batch[:1]).values, model_ids=["m20"],
                         item_ids=[unicodedata.normalize("NFD", batch[0])])
    with pytest.raises(ValueError, match=r"^new_results: 1 item id\(s\) differ from the run's only by Unicode"):
        run.update(nfd)


def test_ids_equal_after_normalisation_are_warned_once_a_command(tmp_path, capsys):
    sim = simulate_responses(21, 40, rng=2)
    items = [f"caf\u00e9-{j}" for j in range(38)] + [unicodedata.normalize("NFD", f"caf\u00e9-{j}") for j in range(2)]
    full = pd.DataFrame(sim.values.astype(int), index=[f"m{i}" for i in range(21)], columns=items)
    full.iloc[:20].to_csv(tmp_path / "ref.csv", index_label="model")
    full.iloc[20:].to_csv(tmp_path / "new.csv", index_label="model")
    assert main(["select", str(tmp_path / "ref.csv"), "--budget", "20", "--out", str(tmp_path / "run")]) == 0
    assert main(["estimate", str(tmp_path / "run"), str(tmp_path / "new.csv"), "--out", str(tmp_path / "e"),
                 "--restrict-to-manifest"]) == 0
    err = capsys.readouterr().err
    said = [line for line in err.splitlines() if "Unicode normalisation (NFC/NFD)" in line]
    assert [line.split(":")[0] for line in said] == ["effstats select", "effstats estimate"], err


def read_results_frame(df: pd.DataFrame):
    from effstats import ResponseMatrix

    return ResponseMatrix.from_wide(df)


def test_checkpoint_ids_under_a_model_header_are_models(tmp_path):
    f = tmp_path / "scores.csv"
    f.write_text("model,q1,q2,q3\nckpt/1000,0,1,0\nckpt/2000,1,1,0\n")
    rm = read_results(f)
    assert list(rm.model_ids) == ["ckpt/1000", "ckpt/2000"] and list(rm.item_ids) == ["q1", "q2", "q3"]


@pytest.mark.parametrize("frame, expect", [
    (lambda w: w, None),                                                    # ids as the index, as to_parquet keeps it
    (lambda w: _long(w), None),
    (lambda w: w.astype(bool), None),
    (lambda w: w.T.rename_axis("item"), "looks transposed"),
    (lambda w: w * 100.0, "percentages?"),
    (lambda w: w.assign(average=w.mean(1)), "column(s) ['average'] are not items"),
])
def test_parquet_tables_get_the_same_checks(tmp_path, monkeypatch, wide, frame, expect):
    f = tmp_path / "scores.parquet"
    f.write_bytes(b"PAR1")  # the engine is replaced: the table below is what it returns
    monkeypatch.setattr(pd, "read_parquet", lambda path: frame(wide))
    if expect is None:
        _same(read_results(f), wide)
    else:
        with pytest.raises(ValueError, match=r"^reference: scores.parquet.*" + re.escape(expect)):
            read_results(f, name="reference")


def test_parquet_without_an_engine_says_what_to_install(tmp_path, monkeypatch, capsys):
    import sys

    f = tmp_path / "scores.parquet"
    f.write_bytes(b"PAR1")
    for engine in ("pyarrow", "fastparquet"):  # as on a machine without either (importing them fails)
        monkeypatch.setitem(sys.modules, engine, None)
    import shlex

    said = (f"reading Parquet needs pyarrow ({shlex.quote(sys.executable)} -m pip install pyarrow; effstats installed "
            "from PyPI: its extra effstats[parquet]), or give the table as a CSV")
    with pytest.raises(ValueError, match=r"^reference: scores\.parquet: " + re.escape(said) + "$"):
        read_results(f, name="reference")
    assert main(["select", str(f), "--budget", "10", "--out", str(tmp_path / "s")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].endswith(said), err


def test_parquet_extra_installs_the_engine_the_reader_names():
    """pyproject's ``parquet`` extra holds pyarrow, the engine the missing-engine message names."""
    import tomllib
    from pathlib import Path

    project = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())["project"]
    assert any(r.startswith("pyarrow") for r in project["optional-dependencies"]["parquet"])


def test_a_csv_read_as_parquet_is_said_not_to_be_parquet(tmp_path, capsys):
    """``--format parquet`` on a CSV: "not a Parquet file", whether or not a Parquet engine is installed."""
    f = tmp_path / "scores.csv"
    f.write_text("model,item,score\nm1,i1,1\nm2,i1,0\n")
    with pytest.raises(ValueError, match=r"^reference: scores\.csv is not a Parquet file \(it does not begin with "
                                         r"PAR1\); for a CSV or TSV table, format='csv'$"):
        read_results(f, name="reference", format="parquet")
    assert main(["select", str(f), "--format", "parquet", "--budget", "1", "--out", str(tmp_path / "s")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].endswith("is not a Parquet file (it does not begin with PAR1); for a CSV or TSV "
                                             "table, --format csv"), err


@settings(max_examples=300, deadline=None)
@given(ids=st.lists(st.text(alphabet="a/1٣² \n", max_size=6), min_size=1, max_size=8))
def test_item_ids_split_as_the_patterns_read_them(ids):
    # the split without a regular expression a row gives the groups _DOC and _TASK_ITEM give
    from effstats.workflow._tasks import _DOC, _TASK_ITEM, _split_ids

    index = pd.Index(ids, dtype=object)
    want = index.str.extract(_DOC).assign(named=index.str.extract(_TASK_ITEM)["task"]).set_axis(index)
    got = _split_ids(index)
    assert got.fillna("<none>").astype(str).equals(want.fillna("<none>").astype(str))


@pytest.mark.parametrize("ids, tasks", [
    ([f"{t}/ILSVRC2012_val_{i:08d}.JPEG" for t in ("imagenet_val", "imagenet_v2") for i in range(40)],
     {"imagenet_val": 40, "imagenet_v2": 40}),
    ([f"{t}/{i}" for t in ("arc", "boolq") for i in range(40)], {"arc": 40, "boolq": 40}),
    ([f"suite/{t}/q{i}" for t in ("a", "b") for i in range(40)], {"suite/a": 40, "suite/b": 40}),
    # image paths: class folders (more than 100 and than the square root of the items) are no tasks, the dataset is
    ([f"{d}/n{c:03d}/{i:x}.jpeg" for d in ("v2", "val") for c in range(120) for i in range(2)],
     {"v2": 240, "val": 240}),
    # a suite's 10 task folders of 5 questions stay tasks (more than the square root of its items, but few)
    ([f"suite/t{t}/q{i}" for t in range(10) for i in range(5)], {f"suite/t{t}": 5 for t in range(10)}),
    ([f"img_{i}.JPEG" for i in range(80)], {"all": 80}),
    ([f"q{i}/text" for i in range(80)], {"all": 80}),  # a prefix per item names no task
])
def test_tables_split_item_ids_into_tasks_alike(tmp_path, ids, tasks):
    from effstats.workflow._tasks import item_tasks

    sim = simulate_responses(12, len(ids), rng=0)
    wide = pd.DataFrame(sim.values.astype(int), index=pd.Index([f"m{i}" for i in range(12)], name="model"),
                        columns=ids)
    wide.to_csv(tmp_path / "wide.csv")
    wide.stack().rename("score").rename_axis(["model", "item"]).reset_index().to_csv(tmp_path / "long.csv",
                                                                                      index=False)
    for f in ("wide.csv", "long.csv"):
        got = item_tasks(read_results(tmp_path / f))["task"].value_counts().to_dict()
        assert got == tasks, f
    sel = select(tmp_path / "wide.csv", 20, seed=0)
    assert sorted(sel.tasks.index) == sorted(tasks) and int(sel.tasks["budget"].sum()) == 20


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_models=st.integers(1, 5), n_items=st.integers(1, 9),
       share=st.sampled_from([0.0, 0.3, 0.7]))
def test_models_lacking_a_task_are_the_brute_force_pairs(seed, n_models, n_items, share):
    # the reference model/task pairs without a result on any of the task's items, counted pair by pair
    from effstats import ResponseMatrix
    from effstats.workflow._tasks import _warn_models_missing_tasks

    rng = np.random.default_rng(seed)
    missing = rng.random((n_models, n_items)) < share
    missing[np.arange(n_models), rng.integers(0, n_items, n_models)] = False  # every model evaluated somewhere
    rm = ResponseMatrix(rng.random((n_models, n_items)) < 0.5, missing=missing)
    task = rng.choice(["b", "a", "c"], n_items)
    lacking = sum(not any(not missing[m, j] for j in range(n_items) if task[j] == t)
                  for m in range(n_models) for t in set(task))
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        _warn_models_missing_tasks(rm, task)
    assert [str(w.message).split(" reference model/task")[0] for w in said] == (
        [f"reference: {lacking}"] if lacking else [])
