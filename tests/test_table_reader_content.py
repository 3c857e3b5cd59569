"""The score-table readers decide by what a file holds, not by its name: compression by the first bytes, NUL
characters refused where pandas' parser would cut a value, numbers as a CSV writes them, a wide table's missing
model column."""
from __future__ import annotations

import bz2
import gzip
import lzma
import zipfile

import numpy as np
import pandas as pd
import pytest

from effstats.datasets import read_scores_csv, read_scores_frame
from effstats.workflow import read_results


def _long(n_models: int = 3, n_items: int = 4) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame([(f"m{m}", f"t0/{i}", float(rng.integers(2))) for m in range(n_models)
                         for i in range(n_items)], columns=["model", "item", "score"])


@pytest.mark.parametrize("field, value", [("item", "t0/1\0x"), ("model", "m1\0evil")])
def test_nul_in_an_id_is_refused_naming_its_line_and_column(tmp_path, field, value):
    # pandas' parser ends a field at a NUL: 't0/1\0x' would be read as 't0/1', another row's id
    df = _long()
    row = 9  # m2's second item: line 11 of the file
    df.loc[row, field] = value
    f = tmp_path / "scores.csv"
    f.write_bytes(df.to_csv(index=False).encode())
    with pytest.raises(ValueError, match=rf"^path: scores\.csv: line 11, column '{field}' holds a NUL character"):
        read_scores_csv(f)
    with pytest.raises(ValueError, match=r"^source: scores\.csv: line 11, column .* NUL"):
        read_results(f)
    gz = tmp_path / "scores.csv.gz"  # the same inside a compressed file
    gz.write_bytes(gzip.compress(f.read_bytes()))
    with pytest.raises(ValueError, match=rf"line 11, column '{field}' holds a NUL"):
        read_scores_csv(gz)


def test_nul_in_a_wide_table_and_a_frame(tmp_path):
    f = tmp_path / "wide.csv"
    f.write_bytes(b"model,t0/0,t0/1\na,0,1\nb,1\x000,1\n")
    with pytest.raises(ValueError, match=r"line 3, column 't0/0' holds a NUL character \('1\\x000'\)"):
        read_scores_csv(f)
    frame = pd.DataFrame({"model": ["a", "b\0x"], "t0/0": [0.0, 1.0], "t0/1": [1.0, 1.0]})
    with pytest.raises(ValueError, match=r"^frame: row 2, column 'model' holds a NUL character"):
        read_scores_frame(frame)
    pytest.importorskip("pyarrow")
    frame.to_parquet(tmp_path / "wide.parquet")
    with pytest.raises(ValueError, match=r"^source: wide\.parquet: row 2, column 'model' holds a NUL"):
        read_results(tmp_path / "wide.parquet")


def test_utf16_is_named(tmp_path):
    f = tmp_path / "scores.csv"
    f.write_bytes(_long().to_csv(index=False).encode("utf-16"))
    with pytest.raises(ValueError, match=r"^path: scores\.csv is UTF-16 text; save it as UTF-8"):
        read_scores_csv(f)


@pytest.mark.parametrize("compress", [gzip.compress, bz2.compress, lzma.compress, "zip", None])
@pytest.mark.parametrize("name", ["scores.csv", "scores.csv.gz"])
def test_compression_is_read_from_the_first_bytes(tmp_path, compress, name):
    df = _long()
    text = df.to_csv(index=False).encode()
    f = tmp_path / name
    if compress == "zip":
        with zipfile.ZipFile(f, "w") as z:
            z.writestr("scores.csv", text)
    else:
        f.write_bytes(text if compress is None else compress(text))
    rm = read_scores_csv(f)
    want = df.pivot(index="model", columns="item", values="score")
    assert rm.model_ids.tolist() == want.index.tolist() and rm.item_ids.tolist() == want.columns.tolist()
    np.testing.assert_array_equal(rm.values_with_nan(), want.to_numpy())
    np.testing.assert_array_equal(read_results(f).values_with_nan(), want.to_numpy())


@pytest.mark.parametrize("marker", ["-", "0"])  # "0": every cell read as text, then parsed
def test_a_number_written_with_an_underscore_is_refused(tmp_path, marker):
    # float("1_0") is 10 (then "percentages?"); pandas' parser reads the cell as text, as a table means it
    long = tmp_path / "long.csv"
    long.write_text("model,item,score\na,t0/0,1\na,t0/1,\nb,t0/0,1_0\nb,t0/1,0\n")  # the first cell refused is named
    with pytest.raises(ValueError, match=r"^path: long\.csv: column 'score' has non-numeric values, e\.g\. '1_0' "
                                         r"\(line 4: numbers are written without '_'\)$"):
        read_scores_csv(long, missing_marker=marker)
    wide = tmp_path / "wide.csv"
    wide.write_text("model,t0/0,t0/1,t0/2\na,1,0,1\nb,1_0,0,1\nc,0,1,0.5\n")
    with pytest.raises(ValueError, match=r"^path: wide\.csv: column 't0/0' has non-numeric values, e\.g\. '1_0' "
                                         r"\(model 'b', line 3"):
        read_scores_csv(wide, missing_marker=marker)
    frame = pd.DataFrame({"model": ["a", "b"], "t0/0": ["1", "0_5"], "t0/1": [0.0, 1.0]})
    with pytest.raises(ValueError, match=r"^frame: column 't0/0' has non-numeric values, e\.g\. '0_5'"):
        read_scores_frame(frame)


@pytest.mark.parametrize("cells", [["0.637", "0.27", "0.041"], ["0", "1", "1"]])
def test_a_wide_table_without_a_model_column_is_refused(tmp_path, cells):
    # its first item column would be read as the model ids: one item lost, models named by their scores
    f = tmp_path / "wide.csv"
    rows = [",".join(cells), ",".join(reversed(cells)), ",".join(cells[1:] + cells[:1])]
    f.write_text("t0/0,t0/1,t1/0\n" + "\n".join(rows) + "\n")
    msg = r"wide\.csv: the table has no model column: its first column 't0/0' is named like the item columns"
    with pytest.raises(ValueError, match="^path: " + msg):
        read_scores_csv(f)
    with pytest.raises(ValueError, match="^path: " + msg):
        read_scores_csv(f, format="wide")
    with pytest.raises(ValueError, match="^source: " + msg):
        read_results(f)
    q = tmp_path / "q.csv"  # items without a task: the same name up to the digits
    q.write_text("q1,q2,q3\n" + "\n".join(rows) + "\n")
    with pytest.raises(ValueError, match=r"its first column 'q1' is named like the item columns"):
        read_scores_csv(q)


@pytest.mark.parametrize("header, ids", [("run", ["0", "1", "2"]), ("model", ["0", "1", "0.5"]),
                                         ("step", ["1000", "2000", "3000"]), ("", ["0.1", "0.2", "0.3"])])
def test_numeric_model_ids_are_still_read(tmp_path, header, ids):
    f = tmp_path / "wide.csv"
    f.write_text(f"{header},t0/0,t0/1\n" + "".join(f"{m},1,0\n" for m in ids))
    rm = read_scores_csv(f)
    assert rm.model_ids.tolist() == ids and rm.item_ids.tolist() == ["t0/0", "t0/1"]
    np.testing.assert_array_equal(rm.values_with_nan(), [[1.0, 0.0]] * 3)


def test_read_results_detects_a_table_by_its_content(tmp_path):
    df = _long()
    text = df.to_csv(index=False).encode()
    want = df.pivot(index="model", columns="item", values="score").to_numpy()
    for name, data in [("scores", text), ("scores.csv.bz2", bz2.compress(text)), ("export", gzip.compress(text)),
                       ("scores.dat", text.replace(b",", b"\t"))]:
        (tmp_path / name).write_bytes(data)
        np.testing.assert_array_equal(read_results(tmp_path / name).values_with_nan(), want)
    (tmp_path / "book.xlsx").write_bytes(b"PK\x03\x04")
    with pytest.raises(ValueError, match=r"^source: .*book\.xlsx: a spreadsheet file; save its sheet as a CSV"):
        read_results(tmp_path / "book.xlsx")


@pytest.mark.parametrize("name", ["scores.csv", "scores.tsv.gz"])
def test_json_lines_under_a_table_name_are_refused_as_json_lines(tmp_path, name):
    # decided by content (the first non-blank line a JSON object, here after a BOM and a blank line), not refused
    # as a table of non-numeric columns
    text = "\ufeff\n" + "".join(r.to_json() + "\n" for _, r in _long().iterrows())
    data = gzip.compress(text.encode()) if name.endswith(".gz") else text.encode()
    (tmp_path / name).write_bytes(data)
    said = "holds JSON lines \\(its first non-blank line is a JSON object\\), not a CSV/TSV table"
    with pytest.raises(ValueError, match=f"^source: .*{name.replace('.', '[.]')} {said}"):
        read_results(tmp_path / name)
    with pytest.raises(ValueError, match=f"^path: {name.replace('.', '[.]')} {said}"):
        read_scores_csv(tmp_path / name)


@pytest.mark.parametrize("lead", ["", "\n", "\ufeff\n \n"], ids=["first line", "after a blank line", "after a BOM"])
def test_json_lines_named_parquet_are_refused_as_json_lines(tmp_path, lead):
    # not sent to the lm-eval reader (which names a missing doc_id), nor refused as "not a Parquet file"
    (tmp_path / "scores.parquet").write_text(lead + "".join(r.to_json() + "\n" for _, r in _long().iterrows()))
    said = ("scores[.]parquet holds JSON lines \\(its first non-blank line is a JSON object\\), not a Parquet table; "
            "lm-evaluation-harness logs are read under their names \\(samples_[*][.]jsonl\\) or from their folder$")
    for fmt in ("auto", "parquet"):
        with pytest.raises(ValueError, match=f"^source: {said}"):
            read_results(tmp_path / "scores.parquet", format=fmt)


@pytest.mark.parametrize("lead", ["\n", "\r\n \n", "\ufeff\n", "\ufeff"],
                         ids=["LF", "CRLF and a space", "BOM line", "BOM"])
def test_a_table_of_another_name_after_blank_lines_is_detected_as_a_table(tmp_path, lead):
    """Blank lines (and a byte order mark) before the header: what the table reader passes over, so does the
    format's detection, a table's name or not."""
    df = _long()
    want = df.pivot(index="model", columns="item", values="score").to_numpy()
    for name, sep in (("scores", ","), ("scores.dat", "\t")):
        (tmp_path / name).write_text(lead + df.to_csv(index=False, sep=sep), encoding="utf-8")
        np.testing.assert_array_equal(read_results(tmp_path / name).values_with_nan(), want)


def test_damaged_or_foreign_encodings_are_named(tmp_path):
    cut = tmp_path / "cut.csv"
    cut.write_bytes(gzip.compress(_long().to_csv(index=False).encode())[:30])
    with pytest.raises(ValueError, match=r"^path: cut\.csv holds gzip data that does not decompress \(EOFError"):
        read_scores_csv(cut)
    latin = tmp_path / "latin.csv"
    latin.write_bytes("model,item,score\nmodèle,t0/0,1\nb,t0/0,0\n".encode("latin-1"))
    with pytest.raises(ValueError, match=r"^path: latin\.csv is not UTF-8 text \(byte 0xe8 .*save it as UTF-8"):
        read_scores_csv(latin)
