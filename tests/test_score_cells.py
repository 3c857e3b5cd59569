"""Cells of score tables as spreadsheets and web pages write them: not-evaluated markers, typographic minus signs,
thousands separators, percent signs and decimal commas, read alike on the generic and the Open LLM paths.

The shared torchvision table (../shared/data/leaderboards/imagenet) is read where it is present; the other tables
are written here from a small board.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from effstats.cli import main, read_scores

# beside the checkout (../shared), or beside the folder of worktrees holding it
SHARED = next((p for p in (Path(__file__).resolve().parents[k] / "shared" / "data" / "leaderboards" for k in (2, 3))
               if p.is_dir()), Path("shared"))

OLL = ["ARC", "HellaSwag", "MMLU", "TruthfulQA", "Winogrande", "GSM8K"]


def _board(n_models: int = 8, cols=("S0", "S1", "S2", "S3"), seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = np.clip(np.linspace(0.85, 0.3, n_models)[:, None] + rng.normal(0, 0.05, (n_models, len(cols))), 0.01, 0.99)
    return pd.DataFrame(x.round(3), index=pd.Index([f"org/model-{i}" for i in range(n_models)], name="model"),
                        columns=list(cols))


def _text(board: pd.DataFrame, fmt=str) -> pd.DataFrame:
    return board.apply(lambda c: c.map(fmt)).astype(object)


@pytest.mark.parametrize("marker", ["nan", "NaN", "N/A", "n/a", "\u2014", "\u2013", "?"])
def test_not_evaluated_markers_read_as_missing(tmp_path, marker):
    t = _text(_board())
    t.iloc[2, 1] = marker
    t.to_csv(tmp_path / "b.csv")
    wide, _ = read_scores(tmp_path / "b.csv")
    assert wide.shape == (8, 4) and np.isnan(wide.iloc[2, 1]) and wide.notna().sum().sum() == 31


def test_the_torchvision_table_with_a_row_of_nan_is_read():
    path = SHARED / "imagenet" / "leaderboard_raw.tsv"
    if not path.is_file():
        pytest.skip("the shared leaderboards are not here")
    rows = sum(1 for _ in path.open()) - 1
    wide, _ = read_scores(path)
    assert list(wide.columns) == ["Acc@1", "Acc@5"] and len(wide) == rows - 1  # the row of 'nan': no score
    assert "VGG16_Weights.IMAGENET1K_FEATURES" in wide.attrs["note"]


@pytest.mark.parametrize("minus", ["\u2212", "\u2013"])
def test_a_typographic_minus_is_a_minus(tmp_path, minus):
    path = SHARED / "superglue" / "leaderboard.tsv"
    if not path.is_file():
        pytest.skip("the shared leaderboards are not here")
    text = path.read_text(encoding="utf-8")
    (tmp_path / "web.tsv").write_text(text.replace("\t-0.", f"\t{minus}0."), encoding="utf-8")
    assert minus in (tmp_path / "web.tsv").read_text(encoding="utf-8")
    wide, pub = read_scores(tmp_path / "web.tsv")
    plain, plain_pub = read_scores(path)
    pd.testing.assert_frame_equal(wide, plain)


def test_thousands_separators_are_read(tmp_path):
    b = _board(cols=("Elo", "MT-bench", "MMLU"))
    b["Elo"] = (900 + 300 * b["Elo"]).round()
    t = _text(b, lambda v: f"{v:,.0f}" if v >= 100 else f"{v:.3f}")
    t.to_csv(tmp_path / "arena.csv")
    assert (tmp_path / "arena.csv").read_text().count('"1,') >= 3
    wide, _ = read_scores(tmp_path / "arena.csv")
    assert "Elo" in wide.columns and np.allclose(wide["Elo"], b["Elo"])


def test_a_decimal_comma_is_not_a_thousands_separator(tmp_path):
    t = _text(_board(), lambda v: f"{v:.3f}".replace(".", ","))
    t.to_csv(tmp_path / "b.csv", sep=";")
    wide, _ = read_scores(tmp_path / "b.csv")
    assert np.allclose(wide.to_numpy(), _board().to_numpy())


@pytest.mark.parametrize("form", ["percent", "comma"])
def test_open_llm_tables_read_percent_signs_and_decimal_commas(tmp_path, form):
    b = _board(cols=OLL) * 100
    b.insert(0, "Average", b.mean(axis=1).round(2))
    b.index.name = "Model"  # the export's header: the Open LLM reader, not the generic one
    if form == "percent":
        _text(b, lambda v: f"{v:.2f}%").to_csv(tmp_path / "oll.csv")
    else:
        _text(b, lambda v: f"{v:.2f}".replace(".", ",")).to_csv(tmp_path / "oll.csv", sep=";")
    wide, pub = read_scores(tmp_path / "oll.csv")
    assert list(wide.columns) == OLL
    assert np.allclose(wide.to_numpy(), b[OLL].to_numpy() / 100)
    assert np.allclose(pub.to_numpy(), b["Average"].to_numpy() / 100)


def test_a_text_cell_is_refused_naming_its_row_and_model(tmp_path, capsys):
    t = _text(_board())
    t.iloc[3, 2] = "pending"
    t.to_csv(tmp_path / "b.csv")
    code = main(["audit", str(tmp_path / "b.csv"), "--out", str(tmp_path / "o"), "--n-boot", "20"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert "line 5" in err and "'org/model-3'" in err and "'S2'" in err and "'pending'" in err


def test_a_repeated_header_line_is_named(tmp_path, capsys):
    _text(_board()).to_csv(tmp_path / "b.csv")
    lines = (tmp_path / "b.csv").read_text().splitlines()
    (tmp_path / "two.csv").write_text("\n".join(lines[:5] + lines[:1] + lines[5:]) + "\n")
    code = main(["audit", str(tmp_path / "two.csv"), "--out", str(tmp_path / "o"), "--n-boot", "20"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "line 6 (row 5) repeats the header" in err


def test_a_second_header_row_is_named(tmp_path, capsys):
    t = _text(_board())
    metric = pd.DataFrame([["EM", "F1", "EM", "F1"]], columns=t.columns, index=["Metric"])
    pd.concat([metric, t]).to_csv(tmp_path / "b.csv")
    code = main(["audit", str(tmp_path / "b.csv"), "--out", str(tmp_path / "o"), "--n-boot", "20"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "line 2 is text in 4 of 4 score columns" in err
    assert "a second header row" in err


@pytest.mark.parametrize("marker", ["-", "n/a", ""])
def test_a_long_table_reads_the_missing_markers_of_a_wide_one(tmp_path, marker):
    b = _board()
    long = b.stack().rename("score").rename_axis(["model", "scenario"]).reset_index().astype(object)
    long.loc[5, "score"] = marker
    long.to_csv(tmp_path / "long.csv", index=False)
    wide, _ = read_scores(tmp_path / "long.csv")
    assert wide.shape == (8, 4) and int(wide.isna().sum().sum()) == 1
    assert np.isnan(wide.loc[long.loc[5, "model"], long.loc[5, "scenario"]])


def test_a_text_cell_of_a_long_table_is_named_by_its_line(tmp_path):
    long = _board().stack().rename("score").rename_axis(["model", "scenario"]).reset_index().astype(object)
    long.loc[5, "score"] = "pending"
    long.to_csv(tmp_path / "long.csv", index=False)
    with pytest.raises(ValueError, match=r"^SCORES: row 6 \(line 7, model 'org/model-1'\), column 'score' holds "
                                         r"'pending', not a number"):
        read_scores(tmp_path / "long.csv")


@pytest.mark.parametrize("sep", [";", ","])
def test_excels_sep_line_names_the_delimiter(tmp_path, sep):
    t = _text(_board(), lambda v: f"{v:.3f}".replace(".", "," if sep == ";" else "."))
    t.to_csv(tmp_path / "plain.csv", sep=sep)
    (tmp_path / "hint.csv").write_text(f"sep={sep}\r\n" + (tmp_path / "plain.csv").read_text())
    pd.testing.assert_frame_equal(read_scores(tmp_path / "hint.csv")[0], read_scores(tmp_path / "plain.csv")[0])


def test_select_names_excels_sep_line(tmp_path, capsys):
    rng = np.random.default_rng(0)
    items = pd.DataFrame(rng.integers(0, 2, (12, 30)), columns=[f"t/{i}" for i in range(30)],
                         index=pd.Index([f"m{i}" for i in range(12)], name="model"))
    items.to_csv(tmp_path / "plain.csv")
    (tmp_path / "hint.csv").write_text("sep=,\n" + (tmp_path / "plain.csv").read_text())
    code = main(["select", str(tmp_path / "hint.csv"), "--budget", "10", "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert "hint.csv: line 1 'sep=,' is Excel's delimiter hint, not the header: delete that line" in err


@pytest.mark.parametrize("cols", [OLL, ["S0", "S1", "S2", "S3"]])
def test_baseline_rows_of_a_link_column_are_not_models(tmp_path, cols):
    b = _board(cols=cols) * (100 if cols == OLL else 1)
    t = _text(b, lambda v: f"{v:.2f}")
    t.index = [f'<a target="_blank" href="https://huggingface.co/{m}">{m}</a>' for m in b.index]
    base = pd.DataFrame([["25.0" if cols == OLL else "0.25"] * len(cols)] * 2, columns=cols,
                        index=["<p>Baseline</p>", "<p>Human Baseline</p>"])
    pd.concat([t, base]).rename_axis("Model").to_csv(tmp_path / "links.csv")
    wide, _ = read_scores(tmp_path / "links.csv")
    assert list(wide.index) == list(b.index)
    assert "('Baseline', 'Human Baseline': baselines, not models) are left out" in wide.attrs["note"]


def test_a_score_named_like_metadata_is_kept_when_it_carries_the_tables_score_marker(tmp_path):
    b = _board(cols=("Birds - CLIP ↑", "Birds - Fractal dimension loss ↓", "Logos - CLIP ↑", "Logos - Sharpness ↑"))
    b["Model size (B)"] = np.arange(len(b)) * 7.0
    _text(b, lambda v: f"{v:.3f}").to_csv(tmp_path / "heim.csv")
    wide, _ = read_scores(tmp_path / "heim.csv")
    assert list(wide.columns) == list(b.columns[:4])  # the ↓ score kept, the size column left out
    path = SHARED / "heim" / "aesthetics_auto.tsv"
    if path.is_file():
        wide, _ = read_scores(path)
        assert sum("Fractal dimension loss ↓" in c for c in wide.columns) == 20 and wide.shape[1] == 60


@pytest.mark.parametrize("args, message", [
    (["--scenarios", "S0,S0,S1"], "--scenarios: 'S0' named twice; name each column once"),
    (["--exclude", "S2,S2"], "--exclude: 'S2' named twice; name each column once"),
    (["--exclude", "S0", "--scenarios", "S0,S1,S2"], "--exclude: 'S0' is also in --scenarios; name it in one of them"),
])
def test_a_column_named_twice_in_the_column_options_is_refused(tmp_path, capsys, args, message):
    _text(_board()).to_csv(tmp_path / "b.csv")
    code = main(["audit", str(tmp_path / "b.csv"), "--out", str(tmp_path / "o"), "--n-boot", "20", *args])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.splitlines() == [f"effstats audit: error: {message}"]


def test_an_excel_workbook_is_named_as_such(tmp_path, capsys):
    import zipfile

    with zipfile.ZipFile(tmp_path / "board.csv", "w") as z:  # a workbook under a .csv name
        z.writestr("[Content_Types].xml", "<Types/>")
        z.writestr("xl/workbook.xml", "<workbook/>")
        z.writestr("xl/worksheets/sheet1.xml", "<worksheet/>")
    code = main(["audit", str(tmp_path / "board.csv"), "--out", str(tmp_path / "o"), "--n-boot", "20"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert "SCORES: board.csv is an Excel workbook (a zip file of XML), not CSV/TSV text; save the sheet as CSV" in err


def test_an_item_id_shared_by_two_scenarios_is_named(tmp_path):
    rng = np.random.default_rng(1)
    rows = [(f"m{m}", s, f"{s}-{i}", int(rng.integers(0, 2))) for m in range(4) for s in ("a", "b") for i in range(5)]
    rows += [(f"m{m}", s, "ALL", 0.5) for m in range(4) for s in ("a", "b")]
    pd.DataFrame(rows, columns=["model", "scenario", "item", "score"]).to_csv(tmp_path / "long.csv", index=False)
    with pytest.raises(ValueError, match=r"^SCORES: item 'ALL' appears in scenarios 'a' and 'b' \(line 43\): item ids "
                                         r"must be unique across scenarios; are these summary lines\?"):
        read_scores(tmp_path / "long.csv")
    pd.DataFrame(rows[:40], columns=["model", "scenario", "item", "score"]).to_csv(tmp_path / "ok.csv", index=False)
    assert read_scores(tmp_path / "ok.csv")[0].n_models == 4


def test_a_markdown_table_is_named_and_markdown_link_names_are_read_by_their_text(tmp_path):
    b = _board()
    t = _text(b, lambda v: f"{v:.3f}").reset_index()
    lines = ["| " + " | ".join(t.columns) + " |", "|" + "---|" * t.shape[1]]
    (tmp_path / "board.md").write_text("\n".join(lines + ["| " + " | ".join(r) + " |" for r in t.values]) + "\n")
    with pytest.raises(ValueError, match=r"^SCORES: board\.md is a Markdown table \('\|' separated, a '---' rule on "
                                         r"line 2\), not CSV/TSV"):
        read_scores(tmp_path / "board.md")
    t["model"] = [f"[{m}](https://example.org/{i})" for i, m in enumerate(t["model"])]
    t.to_csv(tmp_path / "links.csv", index=False)
    wide, _ = read_scores(tmp_path / "links.csv")
    assert list(wide.index) == list(b.index) and "Markdown links" in wide.attrs["note"]


def test_a_title_line_above_the_header_is_named(tmp_path):
    t = _text(_board(cols=("S0", "S1", "S2", "S3", "S4", "S5", "S6")))
    t.to_csv(tmp_path / "plain.csv", sep=";")
    (tmp_path / "title.csv").write_text("Leaderboard export;;;;;;\n;;;;;;\n" + (tmp_path / "plain.csv").read_text())
    with pytest.raises(ValueError, match=r"^SCORES: title\.csv: line 1 \('Leaderboard export'\) has 1 field and line "
                                         r"3 has 8: a title line above the header\? delete it"):
        read_scores(tmp_path / "title.csv")


def test_audit_of_a_frame_with_a_column_named_twice_names_it():
    from effstats.reliability import audit

    b = _board()
    with pytest.raises(ValueError, match=r"^data: duplicate column names \['S0'\]; each scenario needs one column$"):
        audit(b[["S0", "S0", "S1", "S2"]], n_boot=20, progress=False)
