"""Compressed samples logs built to exhaust the reader: one endless line, or gigabytes of blank lines, after real
records (a few megabytes compressed). The reader's bounds (``LINE_LIMIT``, ``BLANK_LIMIT``) are lowered here so
that small bombs run the same code path as large ones."""
from __future__ import annotations

import bz2
import gzip
import json
import lzma

import numpy as np
import pytest

from effstats.datasets import _lm_eval_records as records
from effstats.datasets import read_lm_eval_samples

OPENERS = {"gz": gzip.open, "bz2": bz2.open, "xz": lzma.open}
RECORD = {"doc_id": 0, "target": "1", "filter": "none", "acc": 1.0,
          "arguments": {f"gen_args_{k}": {"arg_0": "Q:", "arg_1": f" choice {k}"} for k in range(4)},
          "filtered_resps": [["-3.0", "False"], ["-0.5", "False"], ["-3.0", "False"], ["-3.0", "False"]]}


def _log(folder, suffix, tail):
    """A samples file of 20 real records then ``tail`` (text), compressed by ``suffix``."""
    f = folder / "m" / f"samples_arc_2024-05-01T12-00-00.123456.jsonl.{suffix}"
    f.parent.mkdir(parents=True)
    with OPENERS[suffix](f, "wt", encoding="utf-8") as fh:
        fh.writelines(json.dumps(dict(RECORD, doc_id=d)) + "\n" for d in range(20))
        fh.write(tail)
    return f


@pytest.fixture
def small_bounds(monkeypatch):
    monkeypatch.setenv("EFFSTATS_CACHE_DIR", "")
    monkeypatch.setattr(records, "LINE_LIMIT", 2**20)
    monkeypatch.setattr(records, "BLANK_LIMIT", 2**16)


@pytest.mark.parametrize("suffix", sorted(OPENERS))
def test_an_endless_line_is_refused_naming_the_argument_and_the_file(tmp_path, small_bounds, suffix):
    f = _log(tmp_path, suffix, " " * (4 * 2**20))  # no newline: one 4 MiB line
    assert f.stat().st_size < 2**17  # a bomb: compressed, a small fraction of what it holds
    with pytest.raises(ValueError, match=rf"^path_or_paths: m/{f.name} line 21 is longer than 1,048,576 characters"):
        read_lm_eval_samples(tmp_path)
    # the readers that look at a log for a message pass it over instead of reading it whole
    assert records.first_digests(f) == {}
    assert records.logged_filters(f) == ["none"] and records.file_metrics(f) == ["acc", "acc_norm"]


@pytest.mark.parametrize("suffix", sorted(OPENERS))
def test_a_run_of_blank_lines_is_refused_not_looped_over(tmp_path, small_bounds, suffix):
    f = _log(tmp_path, suffix, "\n" * (4 * 2**20))
    said = rf"^path_or_paths: m/{f.name} holds more than 65,536 characters of blank lines \(by line 65557\)"
    with pytest.raises(ValueError, match=said):
        read_lm_eval_samples(tmp_path)
    assert records.logged_filters(f) == ["none"]  # those of the records before the bound


def test_a_truncated_last_line_after_an_endless_one_is_refused_at_the_bound(tmp_path, small_bounds):
    f = _log(tmp_path, "gz", '{"doc_id": 20, "acc": \n' + "x" * (2 * 2**20))
    with pytest.raises(ValueError, match=r"line 22 is longer than 1,048,576 characters"):
        read_lm_eval_samples(tmp_path)
    assert f.exists()


def test_blank_lines_and_long_records_within_the_bounds_are_read(tmp_path, small_bounds):
    long = dict(RECORD, doc_id=20, doc={"text": "y" * (2**20 - 2**12)})  # just under LINE_LIMIT
    _log(tmp_path, "gz", json.dumps(long) + "\n" + "\n \n" * 2**13 + json.dumps(dict(RECORD, doc_id=21)) + "\n")
    rm = read_lm_eval_samples(tmp_path)
    assert rm.shape == (1, 22)
    np.testing.assert_array_equal(rm.values, 1)


def test_the_default_bounds_are_far_above_real_records():
    # a long-context record (128k tokens of prompt, some 500,000 characters, repeated for 4 choices) fits 30 times
    assert records.LINE_LIMIT >= 30 * 4 * 500_000
    assert records.BLANK_LIMIT >= 2**20
