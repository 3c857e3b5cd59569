"""A cache of parsed lm-evaluation-harness samples files, so that the commands of one evaluation loop (``select``,
``sequential start``, ``estimate`` ...) read large logs once.

A samples file of at least :data:`MIN_BYTES` is parsed once per metric, normalisation and filter; what the parse
gives (each document's id, value, log-likelihoods, gold choice, number of choices and digests, and the documents
logged as NaN) is kept in ``<cache>/lm_eval/<digest of the file's real path and the options>.npz`` with the file's
stamp: its size, modification time (ns), inode and status-change time (ns), taken once, before the parse. A file
modified in the last two seconds (being written, or rewritten within one tick of the clock that stamps it) is not
kept. A later read of the same file with the same options takes the kept copy where the file's stamp is still that
one; any other file, or a file changed since (an edit whose modification time is put back, ``cp -p`` or ``mv`` of
another file over it: the status-change time or the inode differ), is parsed again (and its copy replaced). What is
read from the copy is what a parse of the file gives, value for value; a copy that cannot be decoded, or whose
arrays disagree in length, is no copy.

The cache folder is ``$EFFSTATS_CACHE_DIR`` (empty: no cache), else ``$XDG_CACHE_HOME/effstats``, else
``~/.cache/effstats``. A cache that cannot be written (a read-only home, a full disk) is not used; files under
:data:`MIN_BYTES` are parsed each time (in about as long as it takes to read a copy). A read that writes copies
removes, once after its last one, the copies that can no longer be read: of a file that is gone or changed since,
of another layout, and temporary files older than an hour (of a process killed while it wrote). The cache holds
at most one copy per samples file and options, about a tenth of the file's size; deleting the folder at any time
is safe (the files are parsed again). The copies are trusted as the logs are: a folder others can write to lets
them choose what is read.
"""
from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
import threading
import time
import zipfile
from pathlib import Path
from typing import Iterator

import numpy as np

# files smaller than this are parsed each time: their parse costs about what reading a kept copy costs
MIN_BYTES = 1 << 20
_VERSION = 3  # of a kept copy's layout and of the checks its parse passed: a copy of another version is not read
_STALE_TMP_S = 3600  # a temporary file this old (s) is left by a process that was killed while it wrote
_SETTLED_NS = 2_000_000_000  # a file modified less than this long ago (ns) is not kept
# the copies written while a :func:`batch` is open in any thread, whose folders the last batch to close prunes; the
# number of batches open; the lock guarding both (threads of one process may read logs at once)
_written: list[Path] | None = None
_open = 0
_lock = threading.Lock()


def cache_dir() -> Path | None:
    """The folder of effstats' caches, or None where ``EFFSTATS_CACHE_DIR`` is set empty."""
    env = os.environ.get("EFFSTATS_CACHE_DIR")
    if env is not None:
        return Path(env).expanduser() if env.strip() else None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "effstats"


def _entry(f: Path, options: tuple) -> tuple[Path, str] | None:
    root = cache_dir()
    if root is None:
        return None
    real = os.path.realpath(f)
    key = hashlib.sha256(repr((_VERSION, real) + options).encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return root / "lm_eval" / f"{key}.npz", real


def stamp_of(f: Path) -> tuple[int, int, int, int] | None:
    """The file's size, modification time (ns), inode and status-change time (ns), or None where it cannot be
    stat'ed."""
    try:
        st = os.stat(f)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns


def _records(a: dict) -> tuple[list, list[tuple[int, int]]]:
    """The records and failed documents of a copy's arrays ``a``; ValueError where their lengths disagree."""
    n, has, hash_len = a["n"], a["has_logits"], a["hash_len"]
    m = len(a["doc_id"])
    if any(len(a[k]) != m for k in ("value", "gold", "n", "has_logits", "hash_len")):
        raise ValueError("the per-record arrays disagree in length")
    if (int(n[has].sum()) != len(a["logits"]) or int(hash_len.sum()) != len(a["hashes"])
            or (n < 0).any() or (hash_len < 0).any() or len(a["failed_line"]) != len(a["failed_doc"])):
        raise ValueError("the log-likelihoods or digests disagree with their counts")
    ends = np.cumsum(np.where(has, n, 0))
    flat = a["logits"]
    logits = [flat[e - k:e] if h else None for e, k, h in zip(ends.tolist(), n.tolist(), has.tolist())]
    text = bytes(a["hashes"]).decode("utf-8", "surrogatepass")
    cuts = np.concatenate([[0], np.cumsum(hash_len)]).tolist()
    hashes = [text[i:j] for i, j in zip(cuts[:-1], cuts[1:])]
    recs = list(zip(a["doc_id"].tolist(), a["value"].tolist(), logits, a["gold"].tolist(), n.tolist(), hashes))
    return recs, list(zip(a["failed_line"].tolist(), a["failed_doc"].tolist()))


def load(f: Path, options: tuple, stamp: tuple | None) -> tuple[list, list[tuple[int, int]]] | None:
    """The records and the (line, doc_id) of the failed documents kept for ``f`` read with ``options``, or None
    where no copy is kept for the file as ``stamp`` (:func:`stamp_of`, taken by the caller) says it is."""
    if stamp is None or stamp[0] < MIN_BYTES:
        return None
    where = _entry(f, options)
    if where is None or not where[0].is_file():  # not a FIFO, which would block the read
        return None
    try:
        with np.load(where[0], allow_pickle=False) as z:
            a = {k: z[k] for k in z.files}
        if (a["meta"].tolist() != [_VERSION, *stamp]
                or bytes(a["path"]).decode("utf-8", "surrogatepass") != where[1]):
            return None
        return _records(a)
    except (OSError, ValueError, KeyError, TypeError, IndexError, EOFError, zipfile.BadZipFile):
        return None  # no copy, or one this layout cannot read: the file is parsed again and its copy replaced


def _write(path: Path, arrays: dict) -> None:
    """``arrays`` as an .npz at ``path``, atomically (a temporary file renamed over it); OSError where the folder
    cannot take it (the temporary file is then removed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".npz")
    try:
        # the zip is closed by its own ``with`` whatever happens (a full disk): no half-closed archive is left to
        # the garbage collector, whose late close would report the error again
        with os.fdopen(fd, "wb") as fh, zipfile.ZipFile(fh, "w", zipfile.ZIP_STORED, allowZip64=True) as z:
            for k, v in arrays.items():
                with z.open(f"{k}.npy", "w", force_zip64=True) as member:
                    np.lib.format.write_array(member, np.asanyarray(v), allow_pickle=False)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


@contextlib.contextmanager
def batch() -> Iterator[None]:
    """Saves of many files, one command's read: each folder written to is pruned once, at the end, rather than
    after each copy (a first read of n files would open n²/2 copies). Batches nest and may be open in several
    threads at once: the copies saved while any is open (from any thread) are pruned when the last one closes."""
    global _written, _open
    with _lock:
        _open += 1
        if _written is None:
            _written = []
    try:
        yield
    finally:
        with _lock:
            _open -= 1
            written = None
            if not _open:
                written, _written = _written, None
        for folder in {p.parent for p in written or ()}:
            _prune(folder, set(written))


def _prune(folder: Path, keep: set[Path]) -> None:
    """Remove the copies in ``folder`` that can no longer be read (their file gone or changed since, another
    layout, undecodable) and temporary files older than an hour; the copies in ``keep`` (just written) stay."""
    now = time.time()
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        p = folder / name
        if p in keep or not name.endswith(".npz") or not p.is_file():
            continue
        try:
            if name.startswith(".tmp-"):
                if now - os.stat(p).st_mtime > _STALE_TMP_S:
                    os.unlink(p)
                continue
            try:
                with np.load(p, allow_pickle=False) as z:
                    meta, source = z["meta"].tolist(), bytes(z["path"]).decode("utf-8", "surrogatepass")
                live = meta[0] == _VERSION and stamp_of(source) == tuple(meta[1:])
            except (ValueError, KeyError, TypeError, IndexError, EOFError, zipfile.BadZipFile):
                live = False
            if not live:
                os.unlink(p)
        except OSError:
            continue  # removed meanwhile, or not ours to remove


def save(f: Path, options: tuple, stamp: tuple | None, recs: list, failed: list[tuple[int, int]]) -> None:
    """Keep ``recs`` and ``failed`` of ``f`` (parsed with ``options`` after its stamp was ``stamp``), where the file
    is at least :data:`MIN_BYTES`; a cache that cannot be written is passed over. A file changed during the parse
    has another stamp: its copy, kept under the stamp taken before, is never read."""
    # a file modified in the last seconds may be modified again within the clock tick of its modification time
    # (the same size and times, other contents): it is not kept until it has been left alone
    if stamp is None or stamp[0] < MIN_BYTES or stamp[1] > time.time_ns() - _SETTLED_NS:
        return
    where = _entry(f, options)
    if where is None:
        return
    path, real = where
    has = np.array([r[2] is not None for r in recs], dtype=bool)
    text = [r[5] for r in recs]
    arrays = {
        "meta": np.array([_VERSION, *stamp], dtype=np.int64),
        "path": np.frombuffer(real.encode("utf-8", "surrogatepass"), dtype=np.uint8),
        "doc_id": np.array([r[0] for r in recs], dtype=np.int64),
        "value": np.array([r[1] for r in recs], dtype=np.float64),
        "gold": np.array([r[3] for r in recs], dtype=np.int64),
        "n": np.array([r[4] for r in recs], dtype=np.int64),
        "has_logits": has,
        "logits": (np.concatenate([r[2] for r in recs if r[2] is not None]).astype(np.float64, copy=False)
                   if has.any() else np.zeros(0)),
        "hash_len": np.array([len(h) for h in text], dtype=np.int64),
        "hashes": np.frombuffer("".join(text).encode("utf-8", "surrogatepass"), dtype=np.uint8),
        "failed_line": np.array([k for k, _ in failed], dtype=np.int64),
        "failed_doc": np.array([d for _, d in failed], dtype=np.int64),
    }
    try:
        _write(path, arrays)
    except OSError:
        return
    with _lock:
        deferred = _written is not None
        if deferred:
            _written.append(path)
    if not deferred:
        _prune(path.parent, {path})
