"""A cache of parsed lm-evaluation-harness samples files, so that the commands of one evaluation loop (``select``,
``sequential start``, ``estimate`` ...) read large logs once.

A samples file of at least :data:`MIN_BYTES` is parsed once per metric, normalisation and filter; what the parse
gives (each document's id, value, log-likelihoods, gold choice, number of choices and digests, and the documents
logged as NaN) is kept in ``<cache>/lm_eval/<digest of the file's real path and the options>.npz`` with the file's
size and modification time (ns); a file modified in the last two seconds (being written, or rewritten within one
tick of the clock that stamps it) is not kept. A later read of the same file with the same options takes the kept
copy where the file's size and modification time are still those; any other file, or a file changed since, is
parsed again (and its copy replaced). What is read from the copy is what a parse of the file gives, value for value.

The cache folder is ``$EFFSTATS_CACHE_DIR`` (empty: no cache), else ``$XDG_CACHE_HOME/effstats``, else
``~/.cache/effstats``. A cache that cannot be written (a read-only home) is not used; files under
:data:`MIN_BYTES` are parsed each time (in about as long as it takes to read a copy).
"""
from __future__ import annotations

import hashlib
import os
import tempfile
import time
import zipfile
from pathlib import Path

import numpy as np

# files smaller than this are parsed each time: their parse costs about what reading a kept copy costs
MIN_BYTES = 1 << 20
_VERSION = 1  # of the layout of a kept copy: another layout is not read
_SETTLED_NS = 2_000_000_000  # a file modified less than this long ago (ns) is not kept


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


def stamp_of(f: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(f)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns


def load(f: Path, options: tuple) -> tuple[list, list[tuple[int, int]]] | None:
    """The records and the (line, doc_id) of the failed documents kept for ``f`` read with ``options``, or None
    where no copy is kept for the file as it is now."""
    stamp = stamp_of(f)
    if stamp is None or stamp[0] < MIN_BYTES:
        return None
    where = _entry(f, options)
    if where is None or not where[0].is_file():
        return None
    try:
        with np.load(where[0], allow_pickle=False) as z:
            a = {k: z[k] for k in z.files}
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
        return None
    meta = a.get("meta")
    if (meta is None or meta.tolist() != [_VERSION, stamp[0], stamp[1]]
            or bytes(a["path"]).decode("utf-8", "surrogatepass") != where[1]):
        return None
    n = a["n"].tolist()
    ends = np.cumsum(np.where(a["has_logits"], a["n"], 0))
    flat = a["logits"]
    logits = [flat[e - k:e] if has else None for e, k, has in zip(ends.tolist(), n, a["has_logits"].tolist())]
    text = bytes(a["hashes"]).decode("utf-8", "surrogatepass")
    cuts = np.concatenate([[0], np.cumsum(a["hash_len"])]).tolist()
    hashes = [text[i:j] for i, j in zip(cuts[:-1], cuts[1:])]
    recs = list(zip(a["doc_id"].tolist(), a["value"].tolist(), logits, a["gold"].tolist(), n, hashes))
    return recs, list(zip(a["failed_line"].tolist(), a["failed_doc"].tolist()))


def save(f: Path, options: tuple, stamp: tuple[int, int] | None, recs: list, failed: list[tuple[int, int]]) -> None:
    """Keep ``recs`` and ``failed`` of ``f`` (parsed with ``options`` while its size and modification time were
    ``stamp``), where the file is at least :data:`MIN_BYTES` and is still as it was; a cache that cannot be
    written is passed over."""
    # a file modified in the last seconds may be modified again within the clock tick of its modification time
    # (the same size and time, other contents): it is not kept until it has been left alone
    if (stamp is None or stamp[0] < MIN_BYTES or stamp[1] > time.time_ns() - _SETTLED_NS
            or stamp_of(f) != stamp):
        return
    where = _entry(f, options)
    if where is None:
        return
    path, real = where
    has = np.array([r[2] is not None for r in recs], dtype=bool)
    text = [r[5] for r in recs]
    arrays = {
        "meta": np.array([_VERSION, stamp[0], stamp[1]], dtype=np.int64),
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
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".npz")
        try:
            with os.fdopen(fd, "wb") as fh:
                np.savez(fh, **arrays)
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    except OSError:
        return
