"""A JSON object naming one key twice is read by ``json`` as its last value without a word. The loop's records of
the files it wrote (an estimate's record, a swap journal) and lm-eval's results files are refused instead, in one
line naming the file, the line of the second occurrence and the key, as the saved manifests and states are."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from effstats._shared import RepeatedKeyError, json_object
from effstats._user_files import json_loads
from effstats.datasets import read_lm_eval_samples
from effstats.workflow import Selection, write_lm_eval_samples
import test_loop_journal
from test_loop_journal import _selection
from test_workflow_files import _one_line, _run, _truth

logs = test_loop_journal.logs  # the fixture: the reference models' lm-eval logs and the whole matrix
SAID = "names the key {key!r} twice in one object (a hand edit?); keep one of them"
# a journal's: which list effstats wrote is unknown, so what to do is to check and remove it
JOURNAL_SAID = ("names the key {key!r} twice in one object (a hand edit?); it is the journal of a command killed while "
                "putting its files in place: check the folder's files, remove the journal, and run that command again "
                "(with --force where it asks) if they are incomplete")


# ------------------------------------------------------------------------------------------- the line, found exactly
def _with_repeat(doc: dict, path: list[str], line_of: int) -> tuple[str, str, int]:
    """``doc`` written one pair a line (``json.dumps(indent=1)``) with a pair ``"<key>": 0`` written again in the
    object at ``path``: the text, the key and the line of its second occurrence."""
    lines = json.dumps(doc, indent=1).splitlines()
    obj = doc
    for k in path:
        obj = obj[k]
    key = sorted(obj)[line_of % len(obj)]
    # the line of that key in that object: found by writing the document with a marker in its place
    marked = json.loads(json.dumps(doc))
    inner = marked
    for k in path:
        inner = inner[k]
    inner[key] = "\x00marker"
    at = next(k for k, ln in enumerate(json.dumps(marked, indent=1).splitlines()) if "\\u0000marker" in ln)
    indent = lines[at][:len(lines[at]) - len(lines[at].lstrip())]
    lines.insert(at, f"{indent}{json.dumps(key)}: 0,")  # before it: the original is the second occurrence
    return "\n".join(lines), key, at + 2


# Keys from a few that JSON writes with escapes (a quote, a backslash, a non-ASCII letter: ensure_ascii), that hold
# what a scan of the text would take for the end of a key or an object (':', '", ', '{', '}'), and one plain, drawn
# from this short list so that objects at several depths name the same key (the line must be that of the object
# refused, not of another naming the key); values holding the same. Drawn from lists, not generated as text: the
# documents cost little to draw, and each draw is one of the cases the line's search can get wrong.
_KEYS = ("a", 'q"', "b\\", "é", 'k": 1, "a', "{}")
_VALUES = (0, 'x": 1, "a', "\\", "}{")


def _objects(inner: st.SearchStrategy) -> st.SearchStrategy:
    return st.dictionaries(st.sampled_from(_KEYS), inner, min_size=1, max_size=4)


_docs = st.recursive(_objects(st.sampled_from(_VALUES)), _objects, max_leaves=8)


@settings(max_examples=60, deadline=None)
@given(doc=_docs, data=st.data())
def test_the_line_of_a_repeated_key_is_that_of_its_second_occurrence(doc, data):
    """A document written one pair a line with one pair written again at a known line, in an object at any depth
    (keys with quotes, backslashes and colons in them, values holding them, the same key in other objects): the
    error names that key and that line, and json_object refuses the same key."""
    path, obj = [], doc
    while any(isinstance(v, dict) for v in obj.values()) and data.draw(st.booleans()):
        k = data.draw(st.sampled_from(sorted(k for k, v in obj.items() if isinstance(v, dict))))
        path.append(k)
        obj = obj[k]
    text, key, line = _with_repeat(doc, path, data.draw(st.integers(0, 9)))
    with pytest.raises(RepeatedKeyError) as e:
        json_loads(text)
    assert e.value.args == (key, line)
    with pytest.raises(RepeatedKeyError, match="") as hook:
        json.loads(text, object_pairs_hook=json_object)
    assert hook.value.args[0] == key


def test_a_key_written_with_an_escape_is_the_same_key():
    with pytest.raises(RepeatedKeyError) as e:
        json_loads('{"files": [],\n "\\u0066iles": ["manifest.json"]}')
    assert e.value.args == ("files", 2)
    assert json_loads('{"a": {"a": 1}, "b": "\\"a\\": 2"}') == {"a": {"a": 1}, "b": '"a": 2'}


# ------------------------------------------------------------------------------------------ the loop's own records
def test_a_swap_journal_naming_a_key_twice_is_refused_not_read_last_wins(logs, capsys, tmp_path):
    """A journal whose ``remove`` is written twice, the second listing the manifest: read last-wins, the next
    command completing it would remove the selection's manifest. It is refused, naming the journal, the line and the
    key, and nothing is removed."""
    sel = tmp_path / "sel"
    new = _selection(logs, capsys, sel)
    journal = sel / ".effstats_swap.json"
    journal.write_text('{"format": "effstats.swap/1", "pid": 1, "rename": [],\n "remove": [],\n'
                       ' "remove": ["manifest.json"]}\n')
    with pytest.raises(ValueError) as e:
        Selection.load(sel)
    assert str(e.value) == f"directory: {journal} line 3 " + JOURNAL_SAID.format(key="remove")
    code, _, err = _run(["estimate", sel, new, "--out", tmp_path / "e", "--no-progress"], capsys)
    assert code == 2 and _one_line(err) == (f"effstats estimate: error: DIR: {journal} line 3 "
                                            + JOURNAL_SAID.format(key="remove")), err
    assert (sel / "manifest.json").is_file() and journal.is_file()


def test_an_estimate_record_naming_its_files_twice_is_refused(logs, capsys, tmp_path):
    """An estimate's record of its report files whose ``files`` is written twice: read last-wins, ``--force``
    would replace whatever the second list names. The record is refused in one line."""
    sel = tmp_path / "sel"
    new = _selection(logs, capsys, sel)
    out = tmp_path / "est"
    assert _run(["estimate", sel, new, "--out", out, "--no-progress"], capsys)[0] == 0
    record = out / ".effstats_estimate.json"
    doc = json.loads(record.read_text())
    text = json.dumps(doc, indent=1)
    record.write_text(text.replace('"files": [', '"files": ["estimate.csv"],\n "files": [', 1))
    line = text[:text.index('"files": [')].count("\n") + 2
    code, _, err = _run(["estimate", sel, new, "--out", out, "--force", "--no-progress"], capsys)
    assert code == 2 and _one_line(err) == (f"effstats estimate: error: --out: {record} line {line} "
                                            + SAID.format(key="files")), err


# --------------------------------------------------------------------------------------------- lm-eval results files
def _logs_with_results(tmp_path: Path, results: str) -> Path:
    truth = _truth()
    out = write_lm_eval_samples(truth.subset(models=[0, 1], items=range(30)), tmp_path / "logs")
    for f in out.glob("*/results_*.json"):
        f.write_text(results)
    return out


@pytest.mark.parametrize("results, key, line", [
    # the few-shot count recorded for the task, which a later run's logs are checked against
    ('{"n-shot": {"t0": 5,\n "t0": 0}}', "t0", 2),
    # two --limit values: the run kept would be said to be a --limit run, or not
    ('{"config": {"limit": null,\n\n "limit": 10}}', "limit", 3),
])
def test_a_results_file_naming_a_key_twice_is_refused(tmp_path, results, key, line):
    """Logs given as a mapping model -> folder (so the results file does not name the model): read last-wins, its run
    fields would be the last values. They are refused naming the file, the line and the key."""
    out = _logs_with_results(tmp_path, results)
    folder = sorted(p for p in out.iterdir())[0]
    f = next(folder.glob("results_*.json"))
    with pytest.raises(ValueError) as e:
        read_lm_eval_samples({"m": folder})
    assert str(e.value) == (f"path_or_paths: {folder.name}/{f.name} (the results file of the run) line {line} "
                            + SAID.format(key=key))


def test_a_results_file_naming_the_model_twice_is_refused_with_its_line(tmp_path):
    out = _logs_with_results(tmp_path, '{"results": {},\n "model_name": "org/a",\n "model_name": "org/b"}')
    with pytest.raises(ValueError, match=r"^path_or_paths: org__m\d\d/results_[^ ]+\.json \(the results file of the "
                       r"run\) line 3 names the key 'model_name' twice in one object"):
        read_lm_eval_samples(out)


def test_a_long_repeated_key_is_cut_in_the_message(tmp_path):
    key = "k" * 5000
    (tmp_path / "manifest.json").write_text(json.dumps({key: 1})[:-1] + f', "{key}": 2}}')
    with pytest.raises(ValueError) as e:
        Selection.load(tmp_path)
    assert len(str(e.value)) < 300 and "…(5000 characters)" in str(e.value), str(e.value)


def test_a_staged_file_beside_a_journal_naming_a_key_twice_is_kept(tmp_path):
    """Which files a journal naming ``rename`` twice stages is unsure until the user keeps one of them: the
    clean-up of a dead process's temporary files leaves every one of them (read last-wins, the journal's first
    list, the staged file's, would be dropped and the file removed)."""
    import subprocess
    import sys

    from effstats._user_files import remove_stale_tmp

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True).stdout.strip()
    staged = tmp_path / f".manifest.json.{dead}.x1.tmp"
    staged.write_text("{}")
    (tmp_path / ".effstats_swap.json").write_text(json.dumps({"format": "effstats.swap/1", "pid": int(dead), "rename": [
        [staged.name, "manifest.json"]], "remove": []})[:-1] + ', "rename": []}')
    assert remove_stale_tmp(tmp_path / "manifest.json") == [] and staged.is_file()
    (tmp_path / ".effstats_swap.json").unlink()  # no journal: a dead process's file goes
    assert remove_stale_tmp(tmp_path / "manifest.json") == [staged] and not staged.exists()
