"""A large long score table is parsed in ranges of lines, each by a process of its own
(``_long_read._read_long_ranges``); small files forced into several ranges must read as in one range: the same
matrix (ids, their order, values, missing cells, kind), the same warnings, the same error message, wherever a
range cuts the file."""
from __future__ import annotations

import os
import signal
import time

import numpy as np
import pytest

from effstats.datasets import _long_read as long_read
from effstats.datasets import _score_tables as tables
from effstats._shared import _Forked
from effstats.datasets import read_scores_csv

from test_table_reader_paths import _outcome

RANGES = [1, 2, 3, 5, 9]
FORKED = 3  # the cut read by forked processes too


def _rows(seed=0, models=6, items=40, cells=("0", "1")):
    """Rows of a long table written model by model, items in a shuffled order per model (an item first seen in a
    later range), every model's rows spread over several ranges."""
    rng = np.random.default_rng(seed)
    names = [f"arc/{i}" for i in range(items)]
    cells = np.asarray(cells)  # choice would convert a sequence of thousands of texts to an array at every draw
    return [f"org/m{m},{names[i]},{rng.choice(cells)}" for m in rng.permutation(models) for i in rng.permutation(items)]


QUOTED = '"org/x' + "\n," * 300 + 'y"'  # line ends in a quoted field over a tenth of the file: a range's cut in it
TABLES = {
    "0/1": _rows(),
    "graded, rows not evaluated": _rows(1, cells=("0", "0.25", "1", "-")),
    "graded, a score a row": _rows(14, cells=tuple(repr(float(v)) for v in np.random.default_rng(14).random(1000))),
    "0/1 off by noise": _rows(2, cells=("0", "1", "0.999999999999")),
    "a pair repeated across ranges": (lambda r: r + [r[0]])(_rows(3)),
    "a score out of range in the last range": (lambda r: r[:-1] + [r[-1].rsplit(",", 1)[0] + ",2"])(_rows(4)),
    "a text score in the last range": (lambda r: r[:-1] + [r[-1].rsplit(",", 1)[0] + ",x"])(_rows(5)),
    "a blank model id in a later range": (lambda r: r[:150] + [",arc/0,1"] + r[150:])(_rows(6)),
    "a row of four fields in a later range": (lambda r: r[:100] + ["org/m9,arc/1,1,0"] + r[100:])(_rows(7)),
    "a quoted id holding a comma": (lambda r: r[:120] + ['"org/x,y",arc/0,1'] + r[120:])(_rows(8)),
    "a quoted id holding line ends": (lambda r: r[:120] + [QUOTED + ",arc/0,1"] + r[120:])(_rows(12)),
    "a NUL character in a later range": (lambda r: r[:130] + ["org/m\0,arc/0,1"] + r[130:])(_rows(13)),
    "a model evaluated on no item": (lambda r: r + ["org/late,arc/0,-"])(_rows(9)),
    "a separator ending every row": [r + "," for r in _rows(14)],
    "header only": [],
}

MATRICES = ["0/1", "graded, rows not evaluated", "graded, a score a row", "0/1 off by noise",
            "a pair repeated across ranges", "a quoted id holding a comma", "a quoted id holding line ends",
            "a model evaluated on no item", "a separator ending every row"]


def _read_in(f, n, monkeypatch, fork=True):
    """The outcome of reading ``f`` cut into (at most) ``n`` ranges (``fork`` false: the ranges parsed in this
    process, as where no child can be started)."""
    with monkeypatch.context() as mp:
        _in_ranges(mp, n, fork)
        mp.setattr(long_read, "_MAX_RANGES", 16)
        return _outcome(lambda: read_scores_csv(f))


@pytest.mark.parametrize("name", list(TABLES))
@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_long_table_read_in_ranges_reads_as_in_one(tmp_path, monkeypatch, name, newline):
    f = tmp_path / "scores.csv"
    f.write_bytes(newline.join(["model,item,score", *TABLES[name]]).encode() + newline.encode())
    one = _read_in(f, 1, monkeypatch)
    assert one[0] == ("matrix" if name in MATRICES else "error")
    assert bool(one[2]) == (name in ("a pair repeated across ranges", "a model evaluated on no item"))  # warned
    for n in RANGES[1:]:
        with monkeypatch.context() as mp:
            mp.setattr(long_read, "_RANGE_BYTES", 1)
            mp.setattr(long_read, "_MAX_RANGES", 16)
            mp.setattr(long_read, "_cpus", lambda: n)
            assert len(long_read._line_ranges(f)) == n or name == "header only"
        assert _read_in(f, n, monkeypatch, fork=False) == one, n
    # each range in a process of its own: the results sent back, joined in file order, and a child that raised or
    # warned run again here (each forked child costs about a tenth of a CPU second: the cuts above are parsed here)
    assert _read_in(f, FORKED, monkeypatch) == one


@pytest.mark.parametrize("n", RANGES[1:])
def test_the_ranges_give_the_matrix_without_the_general_reader(tmp_path, monkeypatch, n):
    # the ranges' chunks joined in file order: models and items in the order they first appear, the cells as
    # written; the general reader is not called
    rows = _rows(10, models=5, items=30, cells=("0", "1", "-"))
    f = tmp_path / "scores.csv"
    f.write_text("\n".join(["model,item,score", *rows]) + "\n")
    monkeypatch.setattr(long_read, "_RANGE_BYTES", 1)
    monkeypatch.setattr(long_read, "_MAX_RANGES", 16)
    monkeypatch.setattr(long_read, "_cpus", lambda: n)
    monkeypatch.setattr(tables, "_table_to_matrix", None)
    rm = read_scores_csv(f)
    cells = [r.split(",") for r in rows]
    items = list(dict.fromkeys(c[1] for c in cells))
    assert list(rm.item_ids) == items and list(rm.model_ids) == list(dict.fromkeys(c[0] for c in cells))
    values = rm.values_with_nan()
    for m, i, s in cells:
        v = values[list(rm.model_ids).index(m), items.index(i)]
        assert (np.isnan(v) if s == "-" else v == float(s)), (m, i, s)


def test_the_ranges_cut_after_line_ends_and_cover_the_file(tmp_path, monkeypatch):
    f = tmp_path / "scores.csv"
    text = "model,item,score\r\n" + "\r\n".join(_rows(11)) + "\r\n"
    f.write_text(text, newline="")
    data = f.read_bytes()
    assert long_read._line_ranges(f) == [(0, len(data))]  # a small file: one range, no process started
    monkeypatch.setattr(long_read, "_RANGE_BYTES", 1)
    for n in RANGES:
        monkeypatch.setattr(long_read, "_cpus", lambda: n)
        ranges = long_read._line_ranges(f)
        assert len(ranges) == min(n, long_read._MAX_RANGES) and ranges[0][0] == 0 and ranges[-1][1] == len(data)
        assert all(a == b for (_, a), (b, _) in zip(ranges, ranges[1:]))
        assert all(data[a - 1:a] == b"\n" for a, _ in ranges[1:])


@pytest.mark.parametrize("name", ["a quoted id holding line ends", "a quoted id holding a comma"])
def test_a_file_with_quotes_is_read_without_the_general_reader(tmp_path, monkeypatch, name):
    # a quoted field holding line ends where a range's cut falls: the range before it does not parse, and the file
    # is read in one pass; quoted fields on one line each: read in ranges
    f = tmp_path / "scores.csv"
    f.write_text("\n".join(["model,item,score", *TABLES[name]]) + "\n")
    monkeypatch.setattr(long_read, "_RANGE_BYTES", 1)
    monkeypatch.setattr(long_read, "_cpus", lambda: 8)
    monkeypatch.setattr(tables, "_table_to_matrix", None)
    passes = []
    real = long_read._read_long_ranges
    monkeypatch.setattr(long_read, "_read_long_ranges", lambda *a: passes.append("ranges") or real(*a))
    monkeypatch.setattr(long_read, "_refuse_nul", lambda *a: passes.append("one"))
    rm = read_scores_csv(f)
    assert rm.shape == (7, 40)
    assert (QUOTED[1:-1] if "line" in name else "org/x,y") in list(rm.model_ids)
    assert passes == (["ranges", "one"] if "line" in name else ["ranges"])


def _long_file(tmp_path, cells=("0", "1"), items=40):
    f = tmp_path / "scores.csv"
    f.write_text("\n".join(["model,item,score", *_rows(0, items=items, cells=cells)]) + "\n")
    return f


def _in_ranges(monkeypatch, n=3, fork=True):
    monkeypatch.setattr(long_read, "_RANGE_BYTES", 1)
    monkeypatch.setattr(long_read, "_cpus", lambda: n)
    if not fork:  # the ranges parsed in this process, as where no child can be started
        monkeypatch.setattr(long_read, "_Forked", lambda fn: _Forked(fn, fork=False))


@pytest.mark.parametrize("ranges", [False, True])
def test_a_long_table_read_leaves_this_process_malloc_settings_alone(tmp_path, monkeypatch, ranges):
    # glibc's mallopt cannot be undone: setting its thresholds turns off the dynamic mmap threshold for good, which
    # makes every large numpy temporary of the rest of the process a fresh mapping
    import ctypes

    f = _long_file(tmp_path)
    if ranges:
        _in_ranges(monkeypatch)
    here, calls, real = os.getpid(), [], ctypes.CDLL

    class Spied:
        def __init__(self, *a, **kw):
            self._lib = real(*a, **kw)

        def __getattr__(self, name):
            if os.getpid() == here:
                calls.append(name)
            return getattr(self._lib, name)

    monkeypatch.setattr(ctypes, "CDLL", Spied)
    assert read_scores_csv(f).shape == (6, 40)
    assert "mallopt" not in calls


def test_graded_scores_are_parsed_as_numbers_not_texts(tmp_path, monkeypatch):
    cells = tuple(repr(float(v)) for v in np.random.default_rng(3).random(5000))
    f = _long_file(tmp_path, cells=cells, items=400)
    texts = []
    real = long_read._cell_numbers
    monkeypatch.setattr(long_read, "_cell_numbers", lambda c, **kw: texts.append(len(c)) or real(c, **kw))
    rm = read_scores_csv(f)
    assert sum(texts) < 100  # not one text per cell
    rows = [r.split(",") for r in _rows(0, items=400, cells=cells)]
    want = {(m, i): float(v) for m, i, v in rows}
    models, items = list(rm.models.index), list(rm.items.index)
    assert all(rm.values[models.index(m), items.index(i)] == v for (m, i), v in want.items())  # as float(text)
    texts.clear()
    _long_file(tmp_path, items=400)
    read_scores_csv(f)
    assert 0 < sum(texts) <= 4  # 0/1 scores: their few texts parsed once per chunk


@pytest.mark.parametrize("ranges", [False, True])
def test_ctrl_c_while_the_parser_reads_the_file_interrupts_the_read(tmp_path, monkeypatch, ranges):
    f = _long_file(tmp_path, items=2000)
    if ranges:
        _in_ranges(monkeypatch, fork=False)
    source = long_read._Range if ranges else long_read._Counted
    real, calls = source.read, []

    def read(self, *a):
        calls.append(1)
        if len(calls) == 2:
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C pressed while pandas' parser asks for bytes
            time.sleep(0.01)
        return real(self, *a)

    monkeypatch.setattr(source, "read", read)
    monkeypatch.setattr(tables, "_table_to_matrix", None)  # no second read by the general reader
    with pytest.raises(KeyboardInterrupt):
        read_scores_csv(f)
    assert len(calls) >= 2


@pytest.mark.parametrize("fork", [True, False])
def test_a_file_replaced_during_the_read_is_read_in_one_version(tmp_path, monkeypatch, fork):
    # publishing a new score file by renaming it over the old one while the ranges are read
    f = _long_file(tmp_path)
    old = f.read_text()
    new = tmp_path / "new.csv"
    new.write_text(old.replace(",1\n", ",x\n").replace(",0\n", ",1\n").replace(",x\n", ",0\n"))  # same line lengths
    want_old, want_new = read_scores_csv(f), read_scores_csv(new)
    _in_ranges(monkeypatch, n=3, fork=fork)
    started = []

    def forked(fn):
        started.append(fn)
        if len(started) == 2:
            os.replace(new, f)
        return _Forked(fn, fork=fork)

    monkeypatch.setattr(long_read, "_Forked", forked)
    rm = read_scores_csv(f)
    assert len(started) == 3
    np.testing.assert_array_equal(rm.values, want_old.values)
    assert not np.array_equal(want_old.values, want_new.values)


def test_the_ranges_are_as_many_as_the_cgroup_cpu_quota_allows(tmp_path, monkeypatch):
    from effstats import _shared

    (tmp_path / "cpu.max").write_text("150000 100000\n")  # a container started with --cpus=1.5
    assert _shared._cgroup_cpus(str(tmp_path)) == 1.5
    (tmp_path / "cpu.max").write_text("max 100000\n")
    assert _shared._cgroup_cpus(str(tmp_path)) is None
    (tmp_path / "cpu.max").unlink()
    (tmp_path / "cpu").mkdir()
    (tmp_path / "cpu" / "cpu.cfs_quota_us").write_text("300000\n")  # cgroup v1
    (tmp_path / "cpu" / "cpu.cfs_period_us").write_text("100000\n")
    assert _shared._cgroup_cpus(str(tmp_path)) == 3.0
    assert _shared._cgroup_cpus(str(tmp_path / "none")) is None

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(64)), raising=False)
    monkeypatch.setattr(_shared, "_cgroup_cpus", lambda: 1.5)
    assert _shared._cpus() == 2
    monkeypatch.setattr(_shared, "_cgroup_cpus", lambda: None)
    assert _shared._cpus() == 64


BAD_SCORES = {"x": "column 'score' has non-numeric values, e.g. 'x' (line {line})",
              "T": "column 'score' has non-numeric values, e.g. 'T' (line {line})",
              "nan": "'nan' cells found (line {line}); mark cells that were not evaluated with '-'",
              "1_0": "column 'score' has non-numeric values, e.g. '1_0' (line {line}: numbers are written without '_')",
              "9": "the scores in column 'score' run from 0 to 9: a rating (0–10, 1–5)? expected scores in [0, 1] "
                   "(rescale them to [0, 1]); the first outside [0, 1] is on line {line}"}


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
@pytest.mark.parametrize("graded", [False, True])
@pytest.mark.parametrize("cell", list(BAD_SCORES))
def test_a_score_the_reader_refuses_is_named_by_its_line_after_one_parse(tmp_path, monkeypatch, cell, graded,
                                                                        newline):
    """One bad score in the file's last range: refused with its line (blank lines and a quoted line end before it
    counted), every range parsed once, no other pass over the file (graded scores, parsed as numbers, whose parser
    stops at a text without saying where: then by the general reader, not by a pass in one range first); the
    general reader says the same."""
    scores = ("0", "1") if not graded else ("0", *(f"{v:.3f}" for v in np.random.default_rng(3).random(200)))
    rows = _rows(10, cells=scores)
    rows[-5] = rows[-5].rsplit(",", 1)[0] + "," + cell
    rows[200:200] = ["", "   ", '"org/x\ny",arc/0,1']
    lines = ["model,item,score", *rows]
    f, text = tmp_path / "scores.csv", newline.join(lines) + newline
    f.write_bytes(text.encode())
    line = text[:text.index(rows[-5])].count("\n") + 1  # the quoted id's line feed ends a line too
    want = ("error", "path: scores.csv: " + BAD_SCORES[cell].format(line=line), [])
    parses, real = [], long_read.pd.read_csv

    def counted(source, *a, **kw):  # a parse of the file (a range, or the whole): the table in chunks
        if kw.get("chunksize") and "nrows" not in kw:
            parses.append(type(source).__name__)
        return real(source, *a, **kw)

    monkeypatch.setattr(long_read.pd, "read_csv", counted)
    with monkeypatch.context() as mp:
        _in_ranges(mp, 3, fork=False)
        assert _outcome(lambda: read_scores_csv(f)) == want
        again = ["_Counted"] if graded and cell != "9" else []  # the general reader's
        assert parses == ["_Range"] * 3 + again
    parses.clear()
    assert _outcome(lambda: read_scores_csv(f)) == want
    assert parses == ["_Counted"] + again
    with monkeypatch.context() as mp:  # the general reader alone
        mp.setattr(tables, "_read_long", lambda *a, **k: None)
        assert _outcome(lambda: read_scores_csv(f)) == want
