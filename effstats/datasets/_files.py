"""Users' paths as the readers take them: one path or a nested sequence, Git LFS pointers refused, compressed
files opened, and the ``duplicates`` option."""
from __future__ import annotations

import bz2
import gzip
import lzma
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Callable, Iterable


from .._validation import check_option

_DUPLICATES = ("last", "first", "error", "mean")
_LFS_HEADER = b"version https://git-lfs.github.com/spec/v1"
# compressed logs are read with the standard library
_COMPRESSED = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}


def _each_path(p: Any, arg: str, one: Callable[[Path], list], what: str, accepted: str) -> list:
    """``one(path)`` over a path or a (nested) sequence of paths, concatenated.

    ``what`` names one expected input ("file or directory") and ``accepted`` the accepted types, for the messages.
    """
    if isinstance(p, (str, os.PathLike)):
        return one(Path(p).expanduser())
    if isinstance(p, Iterable) and not isinstance(p, (bytes, Mapping)):
        out = [x for q in p for x in _each_path(q, arg, one, what, accepted)]
        if not out:
            raise ValueError(f"{arg}: expected at least one {what}")
        return out
    raise ValueError(f"{arg}: expected {accepted}, got {type(p).__name__}")


def _refuse_lfs_pointer(f: Path, shown: str, arg: str) -> None:
    """Raise when ``f`` is a Git LFS pointer (a clone without ``git lfs pull``) instead of the file itself."""
    with open(f, "rb") as fh:
        if fh.read(len(_LFS_HEADER)) == _LFS_HEADER:
            raise ValueError(f"{arg}: {shown} is a Git LFS pointer, not the log; run `git lfs pull`")


def _check_duplicates(duplicates: Any) -> str:
    return check_option(duplicates, "duplicates", _DUPLICATES)


def _open(f: Path):
    opener = _COMPRESSED.get(f.suffix.lower())
    return opener(f, "rt", encoding="utf-8") if opener else open(f, encoding="utf-8")
