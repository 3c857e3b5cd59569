"""tests/conftest.py's ``parsed_logs_kept``, which the loop's test modules use: a read that takes a kept parse gives
what a fresh parse gives (the matrix, its ids, metadata and probabilities, the failed documents' warning), and a
file changed since, or written in the last two seconds, is parsed again."""
from __future__ import annotations

import os
import time
import warnings

import numpy as np
import pandas as pd
import pytest

from effstats.datasets import _lm_eval_records, harness, read_lm_eval_samples

from test_harness import TS, _mc_record, _write_run

pytestmark = pytest.mark.usefixtures("parsed_logs_kept")


def _settled(folder):
    """The logs' modification times ten seconds back: past the two seconds within which a file is parsed each time."""
    past = time.time_ns() - 10 * 10**9
    for f in folder.rglob("*.jsonl"):
        os.utime(f, ns=(past, past))


def _read(folder):
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        rm = read_lm_eval_samples(folder)
    return rm, [str(w.message) for w in said]


def _assert_same(a, b):
    (x, said_x), (y, said_y) = a, b
    assert said_x == said_y
    assert list(x.model_ids) == list(y.model_ids) and list(x.item_ids) == list(y.item_ids)
    np.testing.assert_array_equal(x.values, y.values)
    np.testing.assert_array_equal(x.missing, y.missing)
    np.testing.assert_array_equal(x.probabilities, y.probabilities)
    np.testing.assert_array_equal(x.labels, y.labels)
    pd.testing.assert_frame_equal(x.items, y.items)
    pd.testing.assert_frame_equal(x.models, y.models)


@pytest.fixture
def parses(monkeypatch):
    """The files parsed (folder/name), in order."""
    seen = []
    real = _lm_eval_records._read_file

    def parse(f, *args, **kwargs):
        seen.append(f"{f.parent.name}/{f.name}")
        return real(f, *args, **kwargs)

    monkeypatch.setattr(_lm_eval_records, "_read_file", parse)
    return seen


def test_a_kept_parse_reads_as_a_fresh_parse(tmp_path, monkeypatch, parses):
    recs = [_mc_record(j, j % 2, True) for j in range(6)]
    recs[2]["acc"] = float("nan")  # a failed document: counted in a warning, from the kept parse as well
    _write_run(tmp_path, "org/m", "arc_easy", TS, recs)
    _write_run(tmp_path, "org/n", "arc_easy", TS, [_mc_record(j, 1, True) for j in range(6)])
    _settled(tmp_path)
    first, again = _read(tmp_path), _read(tmp_path)
    assert len(parses) == 2  # each file by the first read only
    with monkeypatch.context() as mp:
        mp.setattr(harness, "_read_file_kept", _lm_eval_records._read_file_kept)  # the reader as it is
        fresh = _read(tmp_path)
    assert len(parses) == 4
    assert any("log their metric as NaN" in w for w in fresh[1])
    _assert_same(first, fresh)
    _assert_same(again, fresh)
    # a file rewritten since (another stamp: its status-change time at least) is parsed again, and read as it is now
    recs[0] = _mc_record(0, 1, True)
    folder = _write_run(tmp_path, "org/m", "arc_easy", TS, recs)
    _settled(folder)
    changed = _read(tmp_path)
    assert parses[4:] == [f"{folder.name}/samples_arc_easy_{TS}.jsonl"]
    assert changed[0].values[list(changed[0].model_ids).index("org/m"), 0] == 1


def test_a_file_written_in_the_last_two_seconds_is_parsed_at_each_read(tmp_path, parses):
    _write_run(tmp_path, "org/m", "arc_easy", TS, [_mc_record(j, j % 2, True) for j in range(4)])
    f = next(tmp_path.rglob("*.jsonl"))
    now = time.time_ns()
    os.utime(f, ns=(now, now))
    _read(tmp_path)
    _read(tmp_path)
    assert parses == [f"{f.parent.name}/{f.name}"] * 2
