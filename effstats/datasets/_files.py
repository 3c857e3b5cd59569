"""Users' paths as the readers take them: one path or a nested sequence, Git LFS pointers refused, compressed
files opened, and the ``duplicates`` option."""
from __future__ import annotations

import bz2
import gzip
import lzma
import os
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator


from .._shared import _name_list
from .._user_files import refuse_empty_path
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
        refuse_empty_path(p, arg)
        return one(Path(p).expanduser())
    if isinstance(p, Iterable) and not isinstance(p, (bytes, Mapping)):
        out = [x for q in p for x in _each_path(q, arg, one, what, accepted)]
        if not out:
            raise ValueError(f"{arg}: expected at least one {what}")
        return out
    raise ValueError(f"{arg}: expected {accepted}, got {type(p).__name__}")


class LeftOutPathsWarning(UserWarning):
    """Paths named like results that were not read (not regular files): said beside a refusal too, whose reason
    (a task without results, say) they may be."""


# JupyterLab's editor keeps a copy of each file opened in it, <stem>-checkpoint<suffix>, in a folder of this name
# beside it: a stale copy, not results
JUPYTER_COPIES = ".ipynb_checkpoints"


def without_jupyter_copies(found: list[Path], root: Path, arg: str, stacklevel: int) -> list[Path]:
    """``found`` (paths under the folder ``root``) without those in a :data:`JUPYTER_COPIES` folder under it, named
    in one :class:`LeftOutPathsWarning`."""
    copies = [f for f in found if JUPYTER_COPIES in f.relative_to(root).parts[:-1]]
    if copies:
        warnings.warn(f"{arg}: left out {len(copies)} file(s) in {JUPYTER_COPIES} folders (JupyterLab's copies of "
                      f"files opened in it): {_name_list([f.relative_to(root).as_posix() for f in copies])}",
                      LeftOutPathsWarning, stacklevel=stacklevel + 1)
    return [f for f in found if f not in copies] if copies else found


def file_version(path: str | os.PathLike) -> tuple | None:
    """What a file's replacement changes, whatever it keeps (``cp -p``, ``rsync -a`` and ``tar x`` keep the
    modification time): its device and inode, size, and modification and status-change times in nanoseconds; None
    where it cannot be looked up (the reader then says why). A key for caches of files read once."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


_VIRTUAL = ("/proc", "/sys", "/dev")  # the kernel's file systems, not followed through links


def _find(root: Path, match: Callable[[str], bool]) -> list[Path]:
    """The paths under the folder ``root`` whose name ``match``es, sorted, through linked folders too (a folder of
    links to runs gathered from several places is read as the runs). The real folders are walked first, then the
    linked ones not walked yet, each real folder once: a folder reached both ways is read by its own path, on every
    file system alike, and a link to the root or a folder above it (up to ``/``), which would walk what lies beside
    the root, is not followed, nor one into the kernel's virtual file systems (``/proc``, ``/sys``, ``/dev``: their
    entries come and go, and ``/proc/<pid>/cwd`` leads into other processes' folders). Anything so named is
    returned, a folder, FIFO or broken link too, for the caller to name."""
    return sorted(_walk(root, match))


def _walk(root: Path, match: Callable[[str], bool]) -> Iterator[Path]:
    """:func:`_find`'s paths in the order the walk meets them, one folder's at a time: a caller looking for one
    stops the walk there."""
    top = os.path.join(os.path.realpath(root), "")
    seen: set[str] = set()
    pending = [str(root)]
    while pending:
        start = pending.pop(0)
        real = os.path.realpath(start)
        if (real in seen or real != top[:-1] and top.startswith(os.path.join(real, ""))
                or start != str(root) and (real in _VIRTUAL or real.startswith(tuple(v + "/" for v in _VIRTUAL)))):
            continue
        for d, dirs, files in os.walk(start):
            real = os.path.realpath(d)
            if real in seen:
                dirs[:] = []
                continue
            seen.add(real)
            dirs.sort()
            links = [name for name in dirs if os.path.islink(os.path.join(d, name))]
            pending += [os.path.join(d, name) for name in links]
            dirs[:] = [name for name in dirs if name not in links]
            yield from (Path(d, name) for name in files + dirs + links if match(name))


def first_of_each(listed: Callable[[], list[Path]], task_of: Callable[[Path], str], tasks: Any) -> dict[str, Path]:
    """The first path ``listed()`` gives of each of ``tasks`` (``task_of`` naming a path's task); {} where the
    listing fails, and a path whose task cannot be told is passed over: what the messages that describe a read
    look at once more, one log a task."""
    wanted, first = set(map(str, tasks)), {}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the read this describes has said what its own listing left out
            paths = listed()
    except (ValueError, OSError):
        return {}
    for p in paths:
        try:
            task = task_of(p)
        except (ValueError, OSError):
            continue
        if task in wanted and task not in first:
            first[task] = p
    return first


def _refuse_lfs_pointer(f: Path, shown: str, arg: str) -> None:
    """Raise when ``f`` is a Git LFS pointer (a clone without ``git lfs pull``) instead of the file itself."""
    with open(f, "rb") as fh:
        if fh.read(len(_LFS_HEADER)) == _LFS_HEADER:
            raise ValueError(f"{arg}: {shown} is a Git LFS pointer, not the log; run `git lfs pull`")


def _check_duplicates(duplicates: Any) -> str:
    return check_option(duplicates, "duplicates", _DUPLICATES)


def warn_repeated_runs(arg: str, pairs: list[str], duplicates: str, order: str, stacklevel: int = 2) -> None:
    """One UserWarning for the (model, task) pairs with several runs (``pairs``: each as ``"model 'm', task 't'
    (2 runs ...)"``) read under ``duplicates`` 'last', 'first' or 'mean': which run each reads or that they are
    averaged, the averaged 0/1 results being graded scores. ``order``: what 'last' and 'first' go by (``"latest"``
    / ``"earliest"`` by the runs' timestamps, ``"last"`` / ``"first"`` in the order given): the harness logs' and
    HELM runs' readers say it alike."""
    if not pairs:
        return
    take = {"latest": ("using the latest run of each", "using the earliest run of each"),
            "given": ("using the last run of each in the order given", "using the first run of each in the order "
                      "given")}[order]
    which = {"last": take[0], "first": take[1],
             "mean": "averaging the runs of each: an item's 0/1 results become a graded score, the share of runs "
                     "right"}[duplicates]
    others = "'mean' averages the runs" if duplicates != "mean" else "'last' or 'first' takes one run"
    warnings.warn(f"{arg}: several runs of one task for {len(pairs)} (model, task) pair(s): {'; '.join(pairs[:5])}"
                  f"{' ...' if len(pairs) > 5 else ''}; {which} (duplicates={duplicates!r}; {others}, 'error' refuses "
                  "them)", UserWarning, stacklevel=stacklevel + 1)


def refuse_repeated_runs(arg: str, model: str, task: str, runs: list[str]) -> None:
    """The error of ``duplicates='error'`` for a (model, task) with the several ``runs`` (their files or folders)."""
    raise ValueError(f"{arg}: model {model!r} has {len(runs)} runs of task {task!r} ({', '.join(runs)}); pass "
                     "duplicates='last', 'first' or 'mean' to choose or average them")


def _compression_of(head: bytes) -> str | None:
    """The compression of a file whose first 10 bytes are ``head``, by pandas' names; None: not compressed. A file
    is read by what it holds, whatever its name says (a gzip file named .csv, a plain one named .gz)."""
    if head.startswith(b"\x1f\x8b"):
        return "gzip"
    if head[:3] == b"BZh" and head[3:4].isdigit() and head[4:10] in (b"1AY&SY", b"\x17rE8P\x90"):
        return "bz2"
    if head.startswith(b"\xfd7zXZ\x00"):
        return "xz"
    if head.startswith(b"PK\x03\x04"):
        return "zip"
    if head.startswith(b"\x28\xb5\x2f\xfd"):
        return "zstd"
    return None


def _open(f: Path):
    with open(f, "rb") as fh:
        found = _compression_of(fh.read(10))
    # by the content, else by the name (whose opener then says what the file is not)
    opener = {"gzip": gzip.open, "bz2": bz2.open, "xz": lzma.open}.get(found or "") or _COMPRESSED.get(f.suffix.lower())
    # utf-8-sig: a byte order mark at the head (a log saved by a Windows editor) is not part of the first record
    return opener(f, "rt", encoding="utf-8-sig") if opener else open(f, encoding="utf-8-sig")
