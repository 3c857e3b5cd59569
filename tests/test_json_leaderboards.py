"""Leaderboards as HELM's groups JSON, Open LLM Leaderboard results JSON and the Open LLM CSV export, each cell checked
as the table reader checks a CSV's: a row with more or fewer cells than the header, a cell that is not a number, a
model that is not a name, a flag that is not a boolean and one task scored twice are refused in one line naming the
file, the row (model) and the column; null and "-" are read as not evaluated, a number written as text as the number.

Each case is a real file in ``tmp_path`` read by ``effstats audit`` (exit code 2 and one line on stderr for a refused
input) or by the reader itself.
"""
from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from effstats.cli import main, read_helm_json, read_openllm_csv, read_openllm_json

MODELS = [f"model-{i}" for i in range(8)]
SCENARIOS = ["A - EM", "B - EM", "C - F1", "D - EM"]


def _scores() -> np.ndarray:
    rng = np.random.default_rng(8)
    return np.clip(np.linspace(0.8, 0.3, len(MODELS))[:, None] + rng.normal(0, 0.05, (len(MODELS), 4)), 0, 1).round(3)


def _helm(tmp_path, edit=None, header_edit=None):
    """A HELM groups JSON (helm-summarize's layout: a list of tables of header and row cells) after ``edit(rows)``."""
    head = [{"value": "Model/adapter", "markdown": False}, {"value": "Mean win rate", "markdown": False}]
    head += [{"value": s, "description": s, "markdown": False, "lower_is_better": False} for s in SCENARIOS]
    x = _scores()
    rows = [[{"value": m, "markdown": False}, {"value": 0.5, "markdown": False}]
            + [{"value": float(v), "description": "min=0, mean=0, max=1", "markdown": False} for v in row]
            for m, row in zip(MODELS, x)]
    if edit:
        edit(rows)
    if header_edit:
        header_edit(head)
    p = tmp_path / "core_scenarios.json"
    p.write_text(json.dumps([{"title": "Accuracy", "header": head, "rows": rows}]))
    return p


def _audit(capsys, path, *args):
    code = main(["audit", str(path), "--out", str(path.parent / "out"), "--n-boot", "20", "--no-progress", *args])
    return code, capsys.readouterr().err.strip().splitlines()


def _refused(capsys, path, *args) -> str:
    code, err = _audit(capsys, path, *args)
    assert code == 2 and len(err) == 1, err
    assert err[0].startswith("effstats audit: error: SCORES: ") and "Traceback" not in err[0]
    return err[0]


# ---------------------------------------------------------------------------- HELM groups JSON
@pytest.mark.parametrize("edit, cells", [(lambda r: r[2].pop(2), 5),    # the first score cell: the rest shift left
                                         (lambda r: r[2].pop(), 5),     # the last cell
                                         (lambda r: r[2].append({"value": 0.3}), 7)],
                         ids=["a middle cell missing", "the last cell missing", "one cell too many"])
def test_helm_row_with_another_cell_count_than_the_header_is_refused(tmp_path, capsys, edit, cells):
    line = _refused(capsys, _helm(tmp_path, edit), "--format", "helm-json")
    assert (f"core_scenarios.json: HELM table 'Accuracy': row 3 ('model-2') has {cells} cell(s), the header 6"
            in line)


@pytest.mark.parametrize("value, shown", [("abc", '"abc"'), ("1,234", '"1,234"'), ([0.5], "[0.5]"), (True, "true"),
                                          ({"v": 0.5}, '{"v": 0.5}'), ("0.5\u0000", '"0.5\\u0000"'),
                                          ("1_0", '"1_0"'), ("nan", '"nan"'), ("\u0663", '"\\u0663"')])
def test_helm_cell_that_is_not_a_number_is_refused_naming_row_and_column(tmp_path, capsys, value, shown):
    p = _helm(tmp_path, lambda r: r[2][3].__setitem__("value", value))
    line = _refused(capsys, p, "--format", "helm-json")
    assert f"row 3 ('model-2'), column 'B - EM' holds {shown}, not a number" in line
    with pytest.raises(ValueError, match="column 'B - EM' holds"):
        read_helm_json(p)


def test_helm_missing_values_are_not_evaluated_and_text_numbers_are_numbers(tmp_path):
    def edit(rows):
        rows[1][2].pop("value")  # HELM's cell of no matching runs: no value at all
        rows[2][3]["value"] = None
        rows[3][4]["value"] = "-"
        rows[4][5]["value"] = "0.25"
        rows[5][2]["value"] = 1  # an integer score

    wide, pub = read_helm_json(_helm(tmp_path, edit))
    x = pd.DataFrame(_scores(), index=MODELS, columns=SCENARIOS)
    x.iloc[1, 0] = x.iloc[2, 1] = x.iloc[3, 2] = np.nan
    x.iloc[4, 3], x.iloc[5, 0] = 0.25, 1.0
    pd.testing.assert_frame_equal(wide, x.rename_axis("Model/adapter"))
    assert pub.tolist() == [0.5] * len(MODELS)


def test_helm_column_without_values_is_left_out_and_said(tmp_path):
    p = _helm(tmp_path, lambda rows: [r[4].pop("value") for r in rows])
    wide, _ = read_helm_json(p)
    assert list(wide.columns) == ["A - EM", "B - EM", "D - EM"]
    assert wide.attrs["note"] == ("Left out of the scores: columns with no values 'C - F1' (not evaluated for any "
                                  "model).")


@pytest.mark.parametrize("flag", ["false", "true", "no", 2, [False]])
def test_helm_lower_is_better_that_is_not_a_boolean_is_refused(tmp_path, capsys, flag):
    p = _helm(tmp_path, header_edit=lambda h: h[2].__setitem__("lower_is_better", flag))
    line = _refused(capsys, p, "--format", "helm-json")
    assert f"column 'A - EM' has lower_is_better {json.dumps(flag)}; expected true or false" in line


@pytest.mark.parametrize("flag, negated", [(True, True), (False, False), (None, False), ("absent", False)])
def test_helm_lower_is_better_booleans_negate_only_when_true(tmp_path, flag, negated):
    def header_edit(head):
        if flag == "absent":
            head[2].pop("lower_is_better")
        else:
            head[2]["lower_is_better"] = flag

    wide, _ = read_helm_json(_helm(tmp_path, header_edit=header_edit))
    np.testing.assert_allclose(wide["A - EM"], (-1 if negated else 1) * _scores()[:, 0])
    np.testing.assert_allclose(wide["B - EM"], _scores()[:, 1])


@pytest.mark.parametrize("model, shown", [({"x": 1}, '{"x": 1}'), (3, "3"), ("", '""'), (None, "null")])
def test_helm_model_cell_that_is_not_a_name_is_refused(tmp_path, capsys, model, shown):
    p = _helm(tmp_path, lambda r: r[2][0].__setitem__("value", model))
    line = _refused(capsys, p, "--format", "helm-json")
    assert f"row 3's first cell ('Model/adapter') is {shown}, not a model name" in line


@pytest.mark.parametrize("table, says", [
    ({"title": "x", "header": {"a": 1}, "rows": {"b": 2}}, "has a 'header' that is a dict, not a list of cells"),
    ({"title": "x", "header": [{"value": "Model"}, {"value": "A"}], "rows": []}, "has 2 column(s) and 0 row(s)"),
    ({"title": "x", "header": [{"value": "Model"}, {"value": ""}], "rows": [[{"value": "m"}, {"value": 1}]]},
     "header cell 2 has no column name"),
    ({"title": "x", "header": [{"value": "Model"}, {"value": "A"}], "rows": [{"value": "m"}]},
     "row 1 is a dict, not a list of cells"),
    ({"title": "x", "header": [{"value": "Model"}, {"value": "Mean win rate"}, {"value": "A"}, {"value": "B"}],
      "rows": [[{"value": f"m{i}"}, {"value": 0.5}, {"value": i / 10}, {"description": "No matching runs"}]
               for i in range(5)]},
     "has 1 score column(s) with values ['A'] (no values in 'B') beside the published aggregate 'Mean win rate': "
     "expected at least 2")])
def test_helm_table_without_rows_or_header_is_refused_naming_it_not_an_option(tmp_path, capsys, table, says):
    p = tmp_path / "t.json"
    p.write_text(json.dumps([table]))
    line = _refused(capsys, p)
    assert "SCORES: t.json: HELM table 'x'" in line and says in line and "--scenarios" not in line


# ---------------------------------------------------------------------------- Open LLM results JSON
def _openllm(tmp_path, edit=None):
    folder = tmp_path / "results"
    x = _scores()
    for i, m in enumerate(MODELS):
        res = {"harness|arc:challenge|25": {"acc": 0.1, "acc_norm": float(x[i, 0]), "acc_norm_stderr": 0.01},
               "harness|hellaswag|10": {"acc_norm": float(x[i, 1])},
               "harness|winogrande|5": {"acc": float(x[i, 2])},
               "harness|gsm8k|5": {"acc": float(x[i, 3]), "acc_stderr": "N/A"}}
        d = {"config_general": {"model_name": m}, "results": res}
        if edit and i == 2:
            edit(res)
        (folder / m).mkdir(parents=True)
        (folder / m / "results_2024-01-01T00-00-00.json").write_text(json.dumps(d))
    return folder


@pytest.mark.parametrize("value, shown", [("abc", '"abc"'), ("0.5\u0000", '"0.5\\u0000"'), (True, "true"),
                                          ([0.5], "[0.5]"), ("1,5", '"1,5"')])
def test_openllm_json_metric_that_is_not_a_number_is_refused(tmp_path, capsys, value, shown):
    folder = _openllm(tmp_path, lambda r: r["harness|gsm8k|5"].__setitem__("acc", value))
    line = _refused(capsys, folder, "--format", "openllm-json")
    assert "model-2/results_2024-01-01T00-00-00.json" in line
    assert f"'harness|gsm8k|5' has acc {shown}, not a number" in line


def test_openllm_json_text_number_is_read_and_null_is_not_evaluated_with_a_warning(tmp_path):
    def edit(res):
        res["harness|gsm8k|5"]["acc"] = None
        res["harness|arc:challenge|25"]["acc_norm"] = "0.65"  # the leaderboard's metric, not the numeric 'acc'
        res["harness|hellaswag|10"]["alias"] = "hellaswag"  # lm-eval's text entries beside the metrics

    with pytest.warns(UserWarning, match=r"1 result\(s\) are null, read as not evaluated: 'model-2' "
                                         r"'harness\|gsm8k\|5'"):
        wide = read_openllm_json(_openllm(tmp_path, edit))
    assert wide.loc["model-2", "ARC"] == 0.65 and np.isnan(wide.loc["model-2", "GSM8K"])
    assert wide.loc["model-2", "HellaSwag"] == _scores()[2, 1]
    assert wide.drop(index="model-2").notna().all().all()


def test_openllm_json_task_at_two_shot_counts_is_refused_naming_both(tmp_path, capsys):
    folder = _openllm(tmp_path, lambda r: r.__setitem__("harness|arc:challenge|0", {"acc_norm": 0.1}))
    line = _refused(capsys, folder, "--format", "openllm-json")
    assert ("'model-2' has the task 'arc:challenge' scored 2 times ('harness|arc:challenge|25', "
            "'harness|arc:challenge|0')") in line
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        wide = read_openllm_json(_openllm(tmp_path / "clean"))  # MMLU-like distinct tasks are not "twice"
    assert wide.notna().all().all()


def test_openllm_json_folder_reads_compressed_results_files_as_one_given_alone(tmp_path, capsys):
    """Results files compressed with gzip, bzip2 or xz (``.json.gz``, ``.json.bz2``, ``.json.xz``) are read in a
    folder, as each is given alone and as the same files uncompressed are: a model named by no field is named by
    the file's name without both endings."""
    import bz2
    import gzip
    import lzma

    plain = _openllm(tmp_path / "plain")
    doc = json.loads((plain / MODELS[0] / "results_2024-01-01T00-00-00.json").read_text())
    del doc["config_general"]
    (plain / MODELS[0] / "results_2024-01-01T00-00-00.json").unlink()
    (plain / f"{MODELS[0]}.json").write_text(json.dumps(doc))  # named by its file
    packed = tmp_path / "packed"
    packers = [(".json.gz", gzip.compress), (".json.bz2", bz2.compress), (".json.xz", lzma.compress),
               (".json", bytes)]
    for k, f in enumerate(sorted(plain.rglob("*.json"))):
        ext, pack = packers[k % len(packers)]
        out = packed / f.relative_to(plain).with_suffix(ext)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(pack(f.read_bytes()))
    pd.testing.assert_frame_equal(read_openllm_json(packed), read_openllm_json(plain))
    assert {f.name.partition(".")[2] for f in packed.rglob("*.json*")} == {"json", "json.gz", "json.bz2", "json.xz"}
    one = next(packed.rglob("*.json.xz"))
    alone = plain / one.relative_to(packed).with_suffix("")
    pd.testing.assert_frame_equal(read_openllm_json(one), read_openllm_json(alone))
    assert _audit(capsys, packed)[0] == 0


# ---------------------------------------------------------------------------- Open LLM CSV export
def _openllm_csv(tmp_path, edit=None):
    """The v1 export's columns (type, model, average, six tasks in percent), one line a model, after ``edit``."""
    x = np.column_stack([_scores(), _scores()[:, :2]]) * 100
    lines = ["T\tModel\tAverage\tARC\tHellaSwag\tMMLU\tTruthfulQA\tWinogrande\tGSM8K"]
    lines += ["\t".join(["x", m, f"{row.mean():.2f}", *(f"{v:.2f}" for v in row)]) for m, row in zip(MODELS, x)]
    if edit:
        lines = edit(lines)
    p = tmp_path / "open_llm.tsv"
    p.write_text("\n".join(lines) + "\n")
    return p


def _cells(lines, k, j, value):
    cells = lines[k].split("\t")
    cells[j] = value
    return lines[:k] + ["\t".join(cells)] + lines[k + 1:]


@pytest.mark.parametrize("fmt", ["openllm-csv", "auto"])
@pytest.mark.parametrize("case, says", [
    ("a row cut after ARC", "line 4 has 4 fields, the header 9"),
    ("a NUL in a cell", "line 4, column 'MMLU' holds a NUL character"),
    ("a NUL in a model name", "line 4, column 'Model' holds a NUL character"),
    ("a word in a cell", "row 3 (line 4, model 'model-2'), column 'MMLU' holds 'abc', not a number"),
    ("a word in the average", "row 3 (line 4, model 'model-2'), column 'Average' holds 'pending', not a number")])
def test_openllm_csv_export_is_checked_as_every_table_is(tmp_path, capsys, fmt, case, says):
    edit = {"a row cut after ARC": lambda ls: ls[:3] + ["\t".join(ls[3].split("\t")[:4])] + ls[4:],
            "a NUL in a cell": lambda ls: _cells(ls, 3, 5, "0.\x0099"),
            "a NUL in a model name": lambda ls: _cells(ls, 3, 1, "model-2\x00x"),
            "a word in a cell": lambda ls: _cells(ls, 3, 5, "abc"),
            "a word in the average": lambda ls: _cells(ls, 3, 2, "pending")}[case]
    p = _openllm_csv(tmp_path, edit)
    line = _refused(capsys, p, "--format", fmt)
    assert "open_llm.tsv" in line and says in line
    with pytest.raises(ValueError, match="open_llm.tsv"):
        read_openllm_csv(p)


def test_openllm_csv_not_evaluated_cells_stay_missing(tmp_path):
    p = _openllm_csv(tmp_path, lambda ls: _cells(_cells(ls, 3, 5, "-"), 4, 6, ""))
    wide, pub = read_openllm_csv(p)
    assert np.isnan(wide.loc["model-2", "MMLU"]) and np.isnan(wide.loc["model-3", "TruthfulQA"])
    assert int(wide.isna().sum().sum()) == 2
    np.testing.assert_allclose(wide["ARC"], _scores()[:, 0], atol=1e-9)


@pytest.mark.parametrize("doc, says", [
    ({"config_general": {"model_name": {"x": 1}}}, 'config_general.model_name is {"x": 1}, not a model name'),
    ({"config_general": {"model_name": "  "}}, 'config_general.model_name is "  ", not a model name'),
    ({"model_name": 7}, "model_name is 7, not a model name"),
    ({"config_general": ["model-2"]}, "'config_general' is [\"model-2\"], not an object"),
    ({"config": {"model_args": {"dtype": "float16"}}}, 'config.model_args is {"dtype": "float16"}, not a model name')])
def test_openllm_json_model_that_is_not_a_name_is_refused(tmp_path, capsys, doc, says):
    folder = _openllm(tmp_path)
    f = folder / "model-2" / "results_2024-01-01T00-00-00.json"
    d = json.loads(f.read_text())
    d.pop("config_general")
    f.write_text(json.dumps({**d, **doc}))
    line = _refused(capsys, folder, "--format", "openllm-json")
    assert "model-2/results_2024-01-01T00-00-00.json" in line and says in line


def test_openllm_json_model_args_given_as_an_object_name_the_model(tmp_path):
    folder = _openllm(tmp_path)
    f = folder / "model-2" / "results_2024-01-01T00-00-00.json"
    d = json.loads(f.read_text())
    d.pop("config_general")
    f.write_text(json.dumps({**d, "config": {"model_args": {"pretrained": "org/model-2", "dtype": "float16"}}}))
    wide = read_openllm_json(folder)
    assert "org/model-2" in wide.index and "model-2" not in wide.index
    assert wide.loc["org/model-2", "ARC"] == _scores()[2, 0]


def test_an_audit_written_inside_its_results_folder_is_not_read_as_results(tmp_path, capsys):
    folder = _openllm(tmp_path)
    for _ in range(2):  # the second run reads the folder holding the first's report and its record
        code = main(["audit", str(folder), "--out", str(folder / "audit"), "--n-boot", "20", "--no-progress",
                     "--force"])
        err = capsys.readouterr().err
        assert code == 0, err
    assert (folder / "audit" / ".effstats_audit.json").is_file()
    assert read_openllm_json(folder).shape == (len(MODELS), 4)


def test_openllm_json_copies_jupyter_keeps_in_ipynb_checkpoints_are_left_out_and_named(tmp_path):
    """JupyterLab's editor keeps a copy of an opened results file in .ipynb_checkpoints beside it: read, it is a
    second results file of the model (its stale scores kept or averaged under --duplicates first or mean)."""
    from effstats.datasets._files import LeftOutPathsWarning

    folder = _openllm(tmp_path)
    stale = json.loads((folder / MODELS[2] / "results_2024-01-01T00-00-00.json").read_text())
    stale["results"]["harness|winogrande|5"]["acc"] = 0.0
    (folder / MODELS[2] / ".ipynb_checkpoints").mkdir()
    (folder / MODELS[2] / ".ipynb_checkpoints" / "results_2024-01-01T00-00-00-checkpoint.json").write_text(
        json.dumps(stale))
    for duplicates in ("first", "mean", "error"):
        with pytest.warns(LeftOutPathsWarning, match=rf"^SCORES: left out 1 file\(s\) in \.ipynb_checkpoints folders "
                                                     rf"\(JupyterLab's copies of files opened in it\): "
                                                     rf"{MODELS[2]}/\.ipynb_checkpoints/results_"):
            wide = read_openllm_json(folder, duplicates=duplicates)
        assert wide.loc[MODELS[2], "Winogrande"] == _scores()[2, 2]


# ---------------------------------------------------------------------------- the file itself, and odd cells
def test_json_nested_too_deeply_is_one_line_for_each_json_reader(tmp_path, capsys):
    p = tmp_path / "deep.json"
    p.write_text("[" * 100000 + "]" * 100000)
    for fmt in ("helm-json", "openllm-json", "auto"):
        line = _refused(capsys, p, "--format", fmt)
        assert "deep.json' is nested too deeply to read as JSON" in line, line


def test_helm_json_with_a_byte_order_mark_or_compressed_reads_as_the_plain_file(tmp_path, capsys):
    import bz2
    import gzip

    plain = _helm(tmp_path)
    want, pub = read_helm_json(plain)
    raw = plain.read_bytes()
    for name, data in (("bom.json", b"\xef\xbb\xbf" + raw), ("gz.json", gzip.compress(raw)),
                       ("scores.json.bz2", bz2.compress(raw))):
        p = tmp_path / name
        p.write_bytes(data)
        got, got_pub = read_helm_json(p)
        pd.testing.assert_frame_equal(got, want)
        pd.testing.assert_series_equal(got_pub, pub)
    code, err = _audit(capsys, tmp_path / "gz.json", "--format", "helm-json")
    assert code == 0, err
    (tmp_path / "cut.json").write_bytes(gzip.compress(raw)[:-30])
    line = _refused(capsys, tmp_path / "cut.json", "--format", "helm-json", "--force")
    assert "cut.json' is a gzip file that cannot be decompressed" in line, line


@pytest.mark.parametrize("raw", ["1e400", "-1e999", "Infinity"])
def test_helm_infinite_cell_is_refused_naming_file_row_and_column(tmp_path, capsys, raw):
    p = _helm(tmp_path)
    p.write_text(p.read_text().replace('{"value": 0.5, "markdown": false}', f'{{"value": {raw}, "markdown": false}}',
                                       1))
    line = _refused(capsys, p, "--format", "helm-json")
    assert ("core_scenarios.json: HELM table 'Accuracy': row 1 ('model-0'), column 'Mean win rate' holds "
            in line and "Infinity (a number beyond the float range" in line), line


@pytest.mark.parametrize("flag", [1, 0, 1.0])
def test_helm_lower_is_better_given_as_a_number_is_refused(tmp_path, capsys, flag):
    p = _helm(tmp_path, header_edit=lambda h: h[3].__setitem__("lower_is_better", flag))
    line = _refused(capsys, p, "--format", "helm-json")
    assert f"column 'B - EM' has lower_is_better {json.dumps(flag)}; expected true or false" in line


def test_helm_lower_is_better_column_is_said_negated_not_negative_in_the_file(tmp_path, capsys):
    p = _helm(tmp_path, header_edit=lambda h: h[3].__setitem__("lower_is_better", True))
    code, err = _audit(capsys, p, "--format", "helm-json")
    assert code == 0, err
    report = (tmp_path / "out" / "report.md").read_text()
    assert "holds negative values" not in report
    assert "Lower-is-better column(s) 'B - EM' (the file's lower_is_better) are negated" in report
    assert "a mean over the columns subtracts them" in report


@pytest.mark.parametrize("value", [-0.2, 55.0])
@pytest.mark.parametrize("lower", [False, True])
def test_helm_cell_outside_the_fractions_of_its_table_is_refused_as_the_table_reader_does(tmp_path, capsys, value,
                                                                                          lower):
    # a lower-is-better column elsewhere (negative as read) leaves the other columns judged
    p = _helm(tmp_path, lambda r: r[2][3].__setitem__("value", value),
              header_edit=lambda h: h[5].__setitem__("lower_is_better", lower))
    line = _refused(capsys, p, "--format", "helm-json")
    assert f"cell(s) outside [0, 1] among fractions: 'model-2' in 'B - EM' = {value:g}" in line, line
    x = pd.DataFrame(_scores(), index=pd.Index(MODELS, name="model"), columns=SCENARIOS)
    x.iloc[2, 1] = value
    x.to_csv(tmp_path / "wide.csv")
    line = _refused(capsys, tmp_path / "wide.csv")
    assert f"cell(s) outside [0, 1] among fractions: 'model-2' in 'B - EM' = {value:g}" in line, line


@pytest.mark.parametrize("suffix", ["gz", "bz2", "xz"])
def test_a_compressed_json_score_file_that_decompresses_past_the_bound_is_refused(tmp_path, monkeypatch, suffix):
    import bz2
    import gzip
    import lzma

    from effstats.datasets import _score_files

    monkeypatch.setattr(_score_files, "JSON_FLOOR", 2**20)  # a small bomb runs the large one's path
    plain = _helm(tmp_path)
    raw = plain.read_bytes()
    compress = {"gz": gzip.compress, "bz2": bz2.compress, "xz": lzma.compress}[suffix]
    ok = tmp_path / f"ok.json.{suffix}"
    ok.write_bytes(compress(raw + b" " * 2**19))  # within the floor at any ratio
    pd.testing.assert_frame_equal(read_helm_json(ok)[0], read_helm_json(plain)[0])
    bomb = tmp_path / f"bomb.json.{suffix}"
    bomb.write_bytes(compress(raw + b" " * 4 * 2**20))
    assert bomb.stat().st_size * _score_files.JSON_RATIO < 4 * 2**20
    with pytest.raises(ValueError, match=rf"^SCORES: '.*bomb.json.{suffix}' decompresses to more than [\d,]+ "
                                         r"bytes \(200 times its size\): not a score file"):
        read_helm_json(bomb)
