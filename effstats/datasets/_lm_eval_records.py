"""lm-evaluation-harness sample records: one JSON object per evaluated document, read into (document, score,
per-choice log-likelihoods, gold choice, number of choices), and runs of one task averaged."""
from __future__ import annotations

import json
import lzma
import math
import re
from collections.abc import Iterator, Mapping
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from scipy.special import softmax

from .._shared import RepeatedKeyError, _plain, json_object
from . import _lm_eval_cache
from ._files import _open, _refuse_lfs_pointer
from ._lm_eval_files import OLD_SAMPLES, _shown, _task_of


_GREEDY = ("True", "False")
_DIGITS = re.compile(r"\d+")



class EmptySamplesFile(ValueError):
    """A samples file without any record (a run stopped before it logged one); ``task`` is the file's task."""

    def __init__(self, message: str, task: str):
        super().__init__(message)
        self.task = task

def _loglik(x: Any) -> float | None:
    """The loglikelihood of a ``[loglik, is_greedy]`` response (``[-7.2, false]``, ``["-7.2", "False"]``, or that
    pair wrapped once more as in ``resps``); None for anything else, e.g. generated text."""
    # called for every choice of every record of a log: a pair as JSON gives it (a list of two) skips the unwrapping
    if type(x) is not list or len(x) != 2:
        if isinstance(x, (list, tuple)) and len(x) == 1 and isinstance(x[0], (list, tuple)):
            x = x[0]
        if not (isinstance(x, (list, tuple)) and len(x) == 2):
            return None
    ll, greedy = x
    # `is` for the two bools (bool has no subclasses), then the strings lm-eval writes
    if not (greedy is True or greedy is False or greedy in _GREEDY) or ll is True or ll is False:
        return None
    try:
        v = float(ll)
    except (TypeError, ValueError):
        return None
    # a Python float: math's tests, not numpy's
    return None if math.isnan(v) or v == math.inf else v


def _logliks(resps: list) -> list | None:
    """:func:`_loglik` of each response, or None unless every response is one (e.g. a generation task's text)."""
    # the form recent harness versions write, [["-7.2", "False"], ...], read in one pass; a number that is NaN or
    # +inf (the sum tells: -inf alone is a loglikelihood) and any other form take the response-by-response path
    try:
        lls = [float(r[0]) for r in resps if type(r) is list and len(r) == 2 and type(r[0]) is str
               and (r[1] == "False" or r[1] == "True")]
    except ValueError:
        lls = None
    if lls is not None and len(lls) == len(resps):
        total = sum(lls)
        if total == total and total != math.inf:
            return lls
    lls = [_loglik(r) for r in resps]
    return None if None in lls else lls  # (floats and None only: `in` compares by identity first)


def _arg_index(key: str) -> int:
    tail = key.rpartition("_")[2]
    return int(tail) if tail.isdigit() else 0


def _continuations(args: Any) -> list[str] | None:
    if isinstance(args, Mapping):  # {"gen_args_0": {"arg_0": ctx, "arg_1": cont}, ...}
        keys = sorted(args, key=_arg_index)
        args = [[a.get(f"arg_{j}") for j in range(len(a))] if isinstance(a, Mapping) else a
                for a in (args[k] for k in keys)]
    if not isinstance(args, list):
        return None
    out = []
    for a in args:
        if isinstance(a, (list, tuple)) and len(a) >= 2 and isinstance(a[1], str):
            out.append(a[1])
        else:
            return None
    return out


def _gold(target: Any, conts: list[str] | None, n: int) -> int:
    """Gold choice index from ``target`` (an index, or the text of a choice); -1 when unknown."""
    if isinstance(target, list) and len(target) == 1:
        target = target[0]
    if isinstance(target, (int, np.integer)) and not isinstance(target, bool):
        return int(target) if 0 <= target < n else -1
    if isinstance(target, str):
        t = target.strip()
        if _DIGITS.fullmatch(t):
            k = int(t)
            return k if k < n else -1
        if conts is not None:
            stripped = [c.strip() for c in conts]
            if stripped.count(t) == 1:
                return stripped.index(t)
    return -1


# lm-eval's per-document SHA-256 digests (hex) of the document, the prompt and the target; the first HASH_WIDTH
# characters of each are kept, side by side in one string: enough to tell another document from this one (a chance
# match is 1 in 2**48) at a fraction of the memory
HASH_FIELDS = ("doc_hash", "prompt_hash", "target_hash")
HASH_WIDTH = 12
MIXED = "*"  # the records read disagree on a document's digests
HASHES = "lm_eval_hashes"  # the items' column of the digests


FILTER = "lm_eval_filter"  # the items' column of the filter each task was read under


WHY = {"doc_hash": "another dataset revision or document order?",
       "target_hash": "another gold answer: another dataset revision?",
       "prompt_hash": "another prompt template, few-shot examples or chat template?"}


def differing_digests(a: Mapping, b: Mapping) -> dict[str, tuple[int, Any]]:
    """``{field: (number of documents, the first one)}`` of the digest fields that differ between two mappings
    doc_id -> digests (:data:`HASHES`' strings) on the documents both log; blank fields are not compared."""
    out: dict[str, list] = {}
    for d, h in b.items():
        g = a.get(d)
        if g is None or g == h or MIXED in (g, h) or not g or not h:
            continue
        for k, field in enumerate(HASH_FIELDS):
            x, y = g[k * HASH_WIDTH:(k + 1) * HASH_WIDTH].strip(), h[k * HASH_WIDTH:(k + 1) * HASH_WIDTH].strip()
            if x and y and x != y:
                out.setdefault(field, [0, d])[0] += 1
    return {f: (n, d) for f, (n, d) in out.items()}


def _hashes(d: Any, p: Any, t: Any) -> str:
    """The three digests cut to :data:`HASH_WIDTH` characters each, side by side (a field not logged: blanks); ""
    when the record logs none (harness versions before they were logged)."""
    if d is None and p is None and t is None:
        return ""
    return "".join(("" if v is None else str(v))[:HASH_WIDTH].ljust(HASH_WIDTH) for v in (d, p, t))


class MetricNotLogged(ValueError):
    """A samples record without the metric asked for, with the file (as shown), the line, the metric, the metrics
    the record gives (:func:`_record_metrics`) and its number of choices (the log-likelihoods it logs; 0 for a
    record of generated text): a caller reading a new model's logs with the reference's metric says from them
    which kind of task each logs."""

    def __init__(self, message: str, shown: str = "", line: int = 0, metric: str = "", fields: Any = (),
                 choices: int = 0) -> None:
        super().__init__(message)
        self.shown, self.line, self.metric, self.fields, self.choices = shown, line, metric, list(fields), choices


class FilterNotChosen(ValueError):
    """A samples file that logs several filters where none was asked for, or not the one asked for: ``shown`` the
    file as shown, ``wanted`` the filter asked for (None: none), ``logged`` the filters it logs in the order they
    first appear. The reader sets ``task``, ``tasks`` (every task read) and ``suggest`` (the per-task filters that
    read every task read, from what the logs hold; empty where none does) as it passes it on."""

    def __init__(self, message: str, shown: str = "", wanted: str | None = None, logged: Any = ()) -> None:
        super().__init__(message)
        self.shown, self.wanted, self.logged = shown, wanted, list(logged)
        self.task: str | None = None
        self.tasks: list = []
        self.suggest: dict = {}


def task_kind(choices: int) -> str:
    """What a samples record of ``choices`` log-likelihoods (0: generated text) logs, for messages."""
    return (f"a multiple-choice task (the log-likelihoods of {choices} choices)" if choices > 0
            else "generated text (a generate_until task)")


def _numeric_fields(rec: Mapping) -> list[str]:
    skip = {"doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "doc_hash", "prompt_hash", "target_hash",
            "filter", "metrics"}
    return sorted(k for k, v in rec.items() if k not in skip and isinstance(v, (int, float, bool)))


def _read_file(f: Path, metric: str, normalize: bool, want_filter: str | None, arg: str, failed: list | None = None):
    """Per-document (doc_id, value, logits or None, gold, n_choices) of one samples file; a document whose
    ``metric`` is NaN (a failed document) is left out, as one without a record, and ``(file, line, doc_id)``
    appended to ``failed``.

    Records are reduced to these fields as they are parsed: keeping thousands of parsed records alive makes
    Python's cyclic garbage collector rescan them over and over (a 4x slow-down on large logs).
    """
    _refuse_lfs_pointer(f, _shown(f), arg)
    try:
        return _read_records(f, metric, normalize, want_filter, arg, [] if failed is None else failed)
    except (UnicodeDecodeError, EOFError, OSError, lzma.LZMAError) as exc:  # binary or cut compressed files
        raise ValueError(f"{arg}: {_shown(f)} is not UTF-8 JSON lines ({type(exc).__name__}: {exc})") from None


def _read_file_kept(f: Path, metric: str, normalize: bool, want_filter: str | None, arg: str, failed: list):
    """:func:`_read_file`, through the cache of parsed files (:mod:`effstats.datasets._lm_eval_cache`): a file read
    before with these options and unchanged since is not parsed again."""
    options = (metric, bool(normalize), want_filter)
    if _lm_eval_cache.cache_dir() is None:
        return _read_file(f, metric, normalize, want_filter, arg, failed)
    stamp = _lm_eval_cache.stamp_of(f)  # once, before the parse: a file changed after it has another stamp
    kept = _lm_eval_cache.load(f, options, stamp)
    if kept is not None:
        recs, bad = kept
        failed.extend((_shown(f), line, doc) for line, doc in bad)
        return recs
    n_failed = len(failed)
    recs = _read_file(f, metric, normalize, want_filter, arg, failed)
    _lm_eval_cache.save(f, options, stamp, recs, [(line, doc) for _, line, doc in failed[n_failed:]])
    return recs


def _keys_in(obj: Any) -> int:
    """The number of keys of a parsed JSON object or array and of the objects in it, at any depth (a loop, not
    recursion: ``json`` may parse deeper than Python's recursion limit)."""
    n, todo = 0, [obj]
    while todo:
        o = todo.pop()
        if type(o) is dict:
            n += len(o)
            o = o.values()
        todo.extend(v for v in o if type(v) is dict or type(v) is list)
    return n


def _repeated_key(line: str, rec: dict, colons: int) -> tuple[str | None, bool]:
    """A key that an object of the record ``line`` (parsed: ``rec``; ``colons``: its count of ``":``) names twice,
    or None; and whether the count alone tells that no key is (no ``":`` inside its strings).

    In text that JSON's encoders write, each key ends in ``":`` and a string holds ``":`` only escaped (``\\":``):
    where the count of the one less that of the other is the number of keys of ``rec``, no key was dropped. A line
    that does not add up (keys written ``"key" :``, a key ending in a backslash) is parsed again with a hook that
    refuses a repeated key.
    """
    escaped = line.count('\\":')
    if colons - escaped == _keys_in(rec):
        return None, escaped == 0
    try:
        json.loads(line, object_pairs_hook=json_object)
    except RepeatedKeyError as exc:
        return exc.args[0], False
    return None, False


# bounds on what a samples file may make the reader hold or loop over, by its content, far above real logs: their
# records are lines of under a kilobyte to a few megabytes (long-context prompts repeated per choice) and they hold no
# blank lines but a last newline. A compressed file of one endless line or of gigabytes of blank lines (a few
# megabytes compressed) is refused once past them, not read into memory or looped over for hours.
LINE_LIMIT = 64 * 2**20  # characters of one line
BLANK_LIMIT = 2**20  # characters on blank (whitespace-only) lines, in all


def _lines(fh: Any, f: Path, arg: str, start: int = 1) -> Iterator[tuple[int, str]]:
    """(line number, line) of each line of ``fh`` that is not blank, numbered from ``start``; a line longer than
    :data:`LINE_LIMIT` characters or blank lines of more than :data:`BLANK_LIMIT` characters in all are refused in
    one line naming ``arg`` and the file."""
    blank = 0
    for lineno, line in enumerate(iter(partial(fh.readline, LINE_LIMIT + 1), ""), start):
        if len(line) > LINE_LIMIT:
            raise ValueError(f"{arg}: {_shown(f)} line {lineno} is longer than {LINE_LIMIT:,} characters, not an "
                             "lm-eval sample record (a damaged or hostile file?)")
        if not line.strip():
            blank += len(line)
            if blank > BLANK_LIMIT:
                raise ValueError(f"{arg}: {_shown(f)} holds more than {BLANK_LIMIT:,} characters of blank lines "
                                 f"(by line {lineno}), not lm-eval's samples (a damaged or hostile file?)")
            continue
        yield lineno, line


def _read_records(f: Path, metric: str, normalize: bool, want_filter: str | None, arg: str, failed: list):
    by_filter: dict[str, list] = {}
    seen: dict[str, set] = {}
    # (count of '":', number of fields) of the records whose count of '":' was their number of keys: a record of
    # the same two repeating a key would hold one key fewer in its nested objects than that one; it is not checked
    shapes: set = set()
    with _open(f) as fh:
        lines = _lines(fh, f, arg)
        for lineno, line in lines:
            try:
                rec = json.loads(line)
                key = None
                if type(rec) is dict:
                    shape = (line.count('":'), len(rec))
                    if shape not in shapes:
                        key, plain = _repeated_key(line, rec, shape[0])
                        if plain:
                            shapes.add(shape)
            except RecursionError:
                raise ValueError(
                    f"{arg}: {_shown(f)} line {lineno} nests lists or objects too deeply to read") from None
            except json.JSONDecodeError as exc:
                if next(lines, None) is None:  # the last line: a run stopped while writing it
                    raise ValueError(
                        f"{arg}: {_shown(f)} line {lineno} (the last line) is truncated, not valid JSON ({exc.msg}); "
                        "the run was probably interrupted: rerun the task or delete that line"
                    ) from None
                if lineno == 1 and line.strip() == "[":
                    raise ValueError(f"{arg}: {_shown(f)} is one JSON array over several lines, as in {OLD_SAMPLES}"
                                     ) from None
                if lineno == 1 and line.strip() == "{":  # a JSON document written over several lines
                    raise ValueError(f"{arg}: {_shown(f)} is one JSON document over several lines, not lm-eval's "
                                     "samples (samples_*.jsonl: one JSON record per line)") from None
                raise ValueError(f"{arg}: {_shown(f)} line {lineno} is not valid JSON ({exc.msg})") from None
            except ValueError as exc:  # e.g. an integer of more digits than Python converts
                raise ValueError(f"{arg}: {_shown(f)} line {lineno} is not readable JSON ({exc})") from None
            if not isinstance(rec, dict) or "doc_id" not in rec:
                raise ValueError(f"{arg}: {_shown(f)} line {lineno} is not an lm-eval sample record (no 'doc_id')")
            if key is not None:
                raise ValueError(f"{arg}: {_shown(f)} line {lineno} names the key {key!r} twice in one record (a "
                                 "hand-merged log?); keep one of them")
            filt = str(rec.get("filter", "none"))
            if want_filter is not None and filt != want_filter:
                by_filter.setdefault(filt, [])
                continue
            doc_id = rec["doc_id"] = _doc_id(rec["doc_id"], f, lineno, arg)
            ids = seen.setdefault(filt, set())
            if doc_id in ids:
                raise ValueError(f"{arg}: {_shown(f)} has doc_id {doc_id!r} twice (line {lineno})")
            ids.add(doc_id)
            parsed = _parse_record(rec, f, lineno, metric, normalize, arg)
            if parsed is None:
                if want_filter is None or filt == want_filter:
                    failed.append((_shown(f), lineno, doc_id))
                by_filter.setdefault(filt, [])
                continue
            by_filter.setdefault(filt, []).append(parsed)
    if not by_filter:
        raise EmptySamplesFile(f"{arg}: {_shown(f)} contains no sample records", _task_of(f)[0])
    if want_filter is not None:
        if not by_filter.get(want_filter):
            raise FilterNotChosen(f"filter: {want_filter!r} not logged in {_shown(f)}; it has {sorted(by_filter)}",
                                  _shown(f), want_filter, by_filter)
        return by_filter[want_filter]
    if len(by_filter) > 1:
        raise FilterNotChosen(f"filter: {_shown(f)} logs several filters {sorted(by_filter)}", _shown(f), None,
                              by_filter)
    return next(iter(by_filter.values()))


def _doc_id(v: Any, f: Path, lineno: int, arg: str) -> int:
    """lm-eval's ``doc_id``: the document's index in its task, an integer ≥ 0 (``5.0`` is read as 5)."""
    if isinstance(v, float) and v.is_integer() and 0 <= v < 2**53:
        return int(v)
    if isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2**63:
        return v
    raise ValueError(f"{arg}: {_shown(f)} line {lineno} has doc_id {_plain(v)!r}; expected the document's index, an "
                     "integer "
                     "≥ 0")


def _parse_record(rec: dict, f: Path, lineno: int, metric: str, normalize: bool, arg: str):
    """The record's (doc_id, value, logits, gold, n_choices, hashes); None where ``metric`` is NaN (a failed
    document)."""
    doc_id = rec["doc_id"]
    resps = rec.get("filtered_resps", rec.get("resps"))
    lls = _logliks(resps) if isinstance(resps, list) and resps else None  # None: a generation task (text)
    n = len(lls) if lls is not None else 0
    target = rec.get("target")
    # continuation texts are parsed only when needed (normalisation, or a target given as text)
    need_conts = n and (normalize or (isinstance(target, str) and not target.strip().isdigit()))
    conts = _continuations(rec.get("arguments")) if need_conts else None
    gold = _gold(target, conts, n) if n else -1
    logits = None
    if lls is not None:
        logits = np.asarray(lls, dtype=float)
        if normalize:
            if conts is None or len(conts) != n:
                raise ValueError(f"normalize: {_shown(f)} line {lineno} has no continuation texts to normalise by")
            # the harness's acc_norm divides by the character length of the choice (without the delimiter)
            lengths = np.array([max(len(c[1:] if c.startswith(" ") else c), 1) for c in conts], dtype=float)
            logits = logits / lengths
    if metric in rec:
        v = rec[metric]
        if isinstance(v, (bool, int)) and abs(v) < 2**1023:  # an integer beyond float64 is not a score
            v = float(v)
        if isinstance(v, float) and math.isnan(v):
            return None
        if not isinstance(v, float) or not math.isfinite(v):  # math's test: numpy's is slow on one float
            shown = f"{str(v)[:20]}… ({len(str(v))} digits)" if isinstance(v, int) else repr(_plain(v))
            raise ValueError(f"{arg}: {_shown(f)} line {lineno}: {metric!r} of doc {doc_id!r} is {shown}, expected a "
                             "number (a failed document logged as NaN is read as missing)")
        value = float(v)
    elif metric in ("acc", "acc_norm") and logits is not None and gold >= 0:
        value = float(np.argmax(logits) == gold)
    else:
        fields = _record_metrics(rec)[1]  # what the refusals of another kind of task list too
        raise MetricNotLogged(f"metric: {metric!r} is not logged in {_shown(f)} (line {lineno}), a record of "
                              f"{task_kind(n)}; its metrics: {fields}", _shown(f), lineno, metric, fields, n)
    # inline, not a call: run for every record of every log
    d, p, t = rec.get("doc_hash"), rec.get("prompt_hash"), rec.get("target_hash")
    if d is None and p is None:  # logs of harness versions before the digests (raising would cost more)
        h = "" if t is None else _hashes(d, p, t)
    else:
        try:
            h = d[:HASH_WIDTH] + p[:HASH_WIDTH] + t[:HASH_WIDTH]
        except TypeError:  # a field not logged (None) or not text
            h = None
        if type(h) is not str or len(h) != 3 * HASH_WIDTH:  # (all three that long: a short one makes it shorter)
            h = _hashes(d, p, t)
    return doc_id, value, logits, gold, n, h


def first_digests(f: Path, lines: int = 200) -> dict[int, str]:
    """doc_id -> digests (:data:`HASHES`' strings) of the records on the first ``lines`` lines of a samples file:
    enough of a run left out (``duplicates`` 'last' or 'first') to tell other documents or another protocol without
    reading all of it; lines that cannot be read are passed over."""
    out: dict[int, str] = {}
    try:
        with _open(f) as fh:
            for k, line in _lines(fh, f, "source", 0):
                if k >= lines:
                    break
                try:
                    rec = json.loads(line)
                except (ValueError, RecursionError):
                    continue
                d = rec.get("doc_id") if isinstance(rec, dict) else None
                if isinstance(d, float) and d.is_integer():
                    d = int(d)
                if type(d) is int:
                    h = _hashes(rec.get("doc_hash"), rec.get("prompt_hash"), rec.get("target_hash"))
                    if h:
                        out[d] = h
    except (ValueError, UnicodeDecodeError, EOFError, OSError, lzma.LZMAError):
        pass
    return out


# what reading a samples file again for a message can meet: it may have changed, or be cut, since the read
_UNREADABLE = (ValueError, RecursionError, UnicodeDecodeError, EOFError, OSError, lzma.LZMAError)


def _record_filters(f: Path) -> Iterator[str | None]:
    """The ``filter`` of each record of a samples file, in file order ("none" where a record names none; None for a
    line that is not an object), read lazily; raises one of :data:`_UNREADABLE` where the file cannot be read."""
    with _open(f) as fh:
        for _, line in _lines(fh, f, "source"):
            rec = json.loads(line)
            yield str(rec.get("filter", "none")) if isinstance(rec, dict) else None


def first_filter(f: Path) -> str | None:
    """The ``filter`` of the first record of a samples file read before ("none" where it logs none): that of every
    record read from it when no filter was asked for (a file of several is refused then); None where the file
    cannot be read now."""
    try:
        return next(_record_filters(f), None)
    except _UNREADABLE:
        return None


def logged_filters(f: Path) -> list[str]:
    """The filters a samples file logs, in the order they first appear ("none" for records naming none; [] where
    the file cannot be read now): read where a filter must be named per task, to say which."""
    out: dict[str, None] = {}
    try:
        for name in _record_filters(f):
            if name is not None:
                out.setdefault(name)
    except _UNREADABLE:
        pass
    return list(out)


def _first_files(source: Any, tasks: Any) -> dict[str, Path]:
    """The first samples file under ``source`` of each of ``tasks`` (one log a task, for a message)."""
    from ._files import first_of_each
    from ._lm_eval_files import _expand, _task_of

    return first_of_each(lambda: _expand(source, "source"), lambda f: _task_of(f)[0], tasks)


def _record_metrics(rec: Mapping) -> tuple[int, list[str]]:
    """A record's number of choices (the log-likelihoods it logs; 0 for generated text) and the per-item metrics it
    gives: its numeric fields, and ``acc`` where it ranks choices by log-likelihood and names the right one,
    ``acc_norm`` where it also gives the choices' texts (the reader computes those). What every message that says
    which metrics a record gives lists."""
    resps = rec.get("filtered_resps", rec.get("resps"))
    lls = _logliks(resps) if isinstance(resps, list) and resps else None
    n, computed = len(lls or ()), []
    if n:
        try:
            conts = _continuations(rec.get("arguments"))
        except (ValueError, TypeError):
            conts = None
        if _gold(rec.get("target"), conts, n) >= 0:  # the choice that is right, which both compare with
            # acc_norm divides by the choices' lengths: where the record gives their texts as well
            computed += ["acc", "acc_norm"] if len(conts or ()) == n else ["acc"]
    return n, list(dict.fromkeys(computed + _numeric_fields(rec)))


def file_metrics(f: Path) -> list[str] | None:
    """The per-item metrics the first record of a samples file gives (:func:`_record_metrics`); None where the file
    cannot be read now or holds no record."""
    try:
        with _open(f) as fh:
            rec = json.loads(next(_lines(fh, f, "source"))[1])
    except (StopIteration, *_UNREADABLE):
        return None
    return _record_metrics(rec)[1] if isinstance(rec, dict) else None


def logged_metrics(source: Any, tasks: Any) -> dict[str, list[str]]:
    """The per-item metrics the samples files under ``source`` log for each of ``tasks``, from the first record of
    one file a task (:func:`file_metrics`); a task without a readable record has none. For the messages that
    suggest another metric: names the logs hold, not a fixed list."""
    out = {task: file_metrics(f) for task, f in _first_files(source, tasks).items()}
    return {task: m for task, m in out.items() if m is not None}


def record_of_kind(source: Any, task: str, choices: bool) -> tuple[str, int, int, list[str]] | None:
    """The first record of ``task``'s first samples file under ``source`` that logs a multiple-choice task
    (``choices``: log-likelihoods of its choices) or generated text (not): the file as shown, the line, its number
    of choices and its metrics (:func:`_record_metrics`); None where there is none or the file cannot be read now.
    For the message refusing logs of another kind of task than the reference logs'."""
    f = _first_files(source, [task]).get(str(task))
    if f is None:
        return None
    try:
        with _open(f) as fh:
            for lineno, line in _lines(fh, f, "source"):
                rec = json.loads(line)
                if isinstance(rec, dict):
                    n, metrics = _record_metrics(rec)
                    if (n > 0) == bool(choices):
                        return _shown(f), lineno, n, metrics
    except _UNREADABLE:
        pass
    return None


def _mean_of_runs(per_run: list[list], key: tuple[str, str], arg: str) -> list:
    """Records averaged over runs, document by document; probabilities are averaged as probabilities (a mixture).
    Runs that log other digests of a document give it the digest :data:`MIXED` (not one document, prompt or target)."""
    by_doc: dict[Any, list] = {}
    first = {r[0]: r[5] for r in per_run[0]}
    for recs in per_run[1:]:
        differs = differing_digests(first, {r[0]: r[5] for r in recs})
        if differs:
            field, (n, d) = next(iter(differs.items()))
            raise ValueError(f"{arg}: the runs of model {key[0]!r} on task {key[1]!r} log another {field} on {n} "
                             f"document(s) (e.g. doc {d!r}; {WHY[field]}): runs of other documents or another "
                             "protocol cannot be averaged; keep one (duplicates='last' or 'first')")
    for recs in per_run:
        for r in recs:
            by_doc.setdefault(r[0], []).append(r)
    out = []
    for doc_id, rs in by_doc.items():
        n = {r[4] for r in rs}
        golds = {r[3] for r in rs if r[3] >= 0}
        if len(n) > 1 or len(golds) > 1:
            raise ValueError(
                f"{arg}: the runs of model {key[0]!r} on task {key[1]!r} disagree on document {doc_id!r} "
                f"(numbers of choices {sorted(n)}, gold answers {sorted(golds)}); they cannot be averaged"
            )
        logits = None
        if all(r[2] is not None for r in rs):
            # log of the mean probability: the softmax taken later gives back that mean exactly
            with np.errstate(divide="ignore"):
                logits = np.log(np.mean([softmax(r[2]) for r in rs], axis=0))
        hashes = {r[5] for r in rs} - {""}
        out.append((doc_id, float(np.mean([r[1] for r in rs])), logits, max(golds, default=-1), n.pop(),
                    (hashes.pop() if len(hashes) == 1 else MIXED) if hashes else ""))
    return out


def _doc_sort_key(d: Any) -> tuple:
    return (0, d, "") if isinstance(d, (int, np.integer)) and not isinstance(d, bool) else (1, 0, str(d))
