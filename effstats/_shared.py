"""Helpers shared by several subpackages (internal: no stable API).

One home for the small functions more than one public module needs, so that no module imports another's private
names: selecting models or items by id, position or mask (:mod:`effstats.responses`, :mod:`effstats.splits`,
:mod:`effstats.reliability`), weighted group means (:mod:`effstats.responses`, :mod:`effstats.reliability`), and
Cohen's kappa from agreement rates (:mod:`effstats.metrics`, :mod:`effstats.sortsearch`), and names listed in a
message (:mod:`effstats.reliability`, the subset estimators, :mod:`effstats.workflow`), values listed in a message
as plain Python values (every module's errors and warnings), whether a table's cell
reads as a number (:mod:`effstats.datasets`), where child processes find their data and their Python
(:mod:`effstats.irt`, :mod:`effstats.disco`), writing a file atomically (:mod:`effstats.workflow`,
:mod:`effstats.reliability`), competition ranks along an axis (:mod:`effstats.reliability`, the
published-aggregate detection), and a digest of arrays for cache keys (:mod:`effstats.disco`'s run memo and ridge
fits). The package's other internal
modules: ``effstats._validation`` (argument checks), ``effstats._results`` (result classes), ``effstats._subset``
(the subset estimators' shared base), ``effstats._subset_results`` (their result and its intervals) and
``effstats._range`` (out-of-range flags).
"""
from __future__ import annotations

import contextlib
import errno
import math
import os
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd


def _label_order(index: pd.Index, ids: pd.Index, name: str) -> np.ndarray:
    """Positions that put rows labelled ``index`` in the order of ``ids``: the rule for every labelled input (a
    metadata frame, a boolean Series) is that labels are ids, aligned by id; the default 0..n-1 index (a frame or
    Series built without one) means row order. Refused: labels that are not the ids, and a default index when the
    ids are the integers 0..n-1 in another order (row order and id order differ, nothing says which is meant)."""
    n = len(ids)
    if index.equals(ids):
        return np.arange(n)
    default = index.equals(pd.RangeIndex(n))
    if set(index) == set(ids):
        if default:
            raise ValueError(f"{name}: its index is 0..{n - 1} and the ids are the integers 0..{n - 1} in another "
                             "order, so row order and id order differ; put it in the ids' order (.loc[ids] when it is "
                             "indexed by id, .set_axis(ids) when it is in row order)")
        return index.get_indexer(ids)
    if default:
        return np.arange(n)
    unknown = [i for i in index if i not in set(ids)][:5]
    missing = [i for i in ids if i not in set(index)][:5]
    raise ValueError(f"{name}: index does not match the ids; unknown {_plain(unknown)}, missing {_plain(missing)} "
                     f"(index by id, or use a default 0..{n - 1} index for row order)")


def _plain_selection(sel: Any, ids: pd.Index, name: str) -> Any:
    """A selection as numpy can read it: a boolean Series aligned by its index (:func:`_label_order`), nullable
    (``Int64``, ``boolean``) values as numpy integers or booleans, NA refused."""
    if isinstance(sel, pd.Series) and (pd.api.types.is_bool_dtype(sel.dtype) or sel.dtype == object and len(sel)
                                       and all(isinstance(v, (bool, np.bool_)) for v in sel)):
        if len(sel) != len(ids):
            raise ValueError(f"{name}: boolean mask must have length {len(ids)}, got ({len(sel)},)")
        sel = sel.iloc[_label_order(sel.index, ids, name)]
    if isinstance(sel, (pd.Series, pd.Index, pd.api.extensions.ExtensionArray)):
        dt = sel.dtype
        if isinstance(dt, pd.api.extensions.ExtensionDtype) and dt.kind in "biu":
            if pd.isna(sel).any():
                raise ValueError(f"{name}: the selection holds missing values (NA)")
            return np.asarray(sel, dtype=bool if dt.kind == "b" else np.int64)
        return np.asarray(sel)
    return sel


def _indexer(sel: Any, ids: pd.Index, name: str) -> np.ndarray:
    """Positions from None (all), a boolean mask, integer positions or ids."""
    n = len(ids)
    if sel is None:
        return np.arange(n)
    if isinstance(sel, slice):
        return np.arange(n)[sel]
    sel = _plain_selection(sel, ids, name)
    try:
        arr = np.asarray(sel)
    except ValueError:
        raise ValueError(f"{name}: expected ids, positions or a boolean mask, got a ragged sequence") from None
    if arr.ndim == 0:
        arr = arr[None]
    if arr.ndim != 1:
        raise ValueError(f"{name}: expected a 1-D selection (ids, positions or a boolean mask), got shape {arr.shape}")
    if arr.dtype.kind == "c":
        raise ValueError(f"{name}: expected ids, positions or a boolean mask, got complex values")
    if arr.dtype == bool:
        if arr.shape != (n,):
            raise ValueError(f"{name}: boolean mask must have length {n}, got {arr.shape}")
        return np.flatnonzero(arr)
    if np.issubdtype(arr.dtype, np.integer) and not np.issubdtype(ids.dtype, np.integer):
        if arr.size and (arr.min() < -n or arr.max() >= n):
            raise ValueError(f"{name}: positions out of range for {n} entries")
        return arr % n if arr.size else arr.astype(int)
    try:
        pos = ids.get_indexer(arr)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: unknown ids {_plain(arr[:5])}") from None
    if (pos < 0).any():
        raise ValueError(f"{name}: unknown ids {_plain(arr[pos < 0][:5])}")
    return pos


def _unique_positions(pos: np.ndarray, ids: pd.Index, name: str) -> np.ndarray:
    """Refuse a selection naming an entry twice (the result would carry duplicated ids)."""
    if len(pos) != len(np.unique(pos)):
        u, c = np.unique(pos, return_counts=True)
        raise ValueError(f"{name}: selected more than once: {_plain(ids[u[c > 1]][:5])}")
    return pos


def _group_means(values: np.ndarray, weights: np.ndarray, codes: np.ndarray, n_groups: int) -> np.ndarray:
    """Weighted means of the columns within each group: (..., n_cols) → (..., n_groups), NaN where a group has
    no weight. ``values`` must be 0 (not NaN) where ``weights`` is 0; ``codes`` (n_cols,) are group ids.

    Linear in the columns: each group's sum runs over its own columns (sorted by group, in their order), where a
    product with a one-hot (n_cols, n_groups) matrix would cost n_cols × n_groups. A table of one column a group
    (scenario scores) is its own sum; ``+ 0.0`` turns its -0.0 into the 0.0 a sum starting from 0 gives."""
    codes = np.asarray(codes)
    wv = values * weights
    if n_groups == len(codes) and np.array_equal(codes, np.arange(n_groups)):
        num, den = wv + 0.0, weights + 0.0
    else:
        order = np.argsort(codes, kind="stable")
        srt = codes[order]
        starts = np.flatnonzero(np.r_[True, srt[1:] != srt[:-1]])
        num = np.zeros(wv.shape[:-1] + (n_groups,))
        den = np.zeros(np.shape(weights)[:-1] + (n_groups,))
        num[..., srt[starts]] = np.add.reduceat(wv[..., order], starts, axis=-1) + 0.0
        den[..., srt[starts]] = np.add.reduceat(np.asarray(weights)[..., order], starts, axis=-1) + 0.0
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1), np.nan)


def _tie_ranks(a: np.ndarray, axis: int = -1, methods: tuple[str, ...] = ("min", "max")) -> tuple[np.ndarray, ...]:
    """``scipy.stats.rankdata(a, method=m, axis=axis)`` for each m of ``methods`` ("min", "max"), from one sort of
    every slice at once.

    Integer ranks from 1 (the lowest value) along ``axis``; equal values share the rank of the first (min) or the
    last (max) of their run, so the order of the sort among equal values does not matter. ``a`` holds no NaN
    (rankdata would return NaN for its slice). rankdata ranks the slices one by one in Python, and importing
    scipy.stats for it costs a command such as ``effstats audit`` a fifth of a second.
    """
    x = np.moveaxis(np.asarray(a), axis, -1)
    n = x.shape[-1]
    order = np.argsort(x, axis=-1)
    srt = np.take_along_axis(x, order, axis=-1)
    pos = np.arange(n, dtype=np.intp)
    new = np.ones(srt.shape, bool)
    new[..., 1:] = srt[..., 1:] != srt[..., :-1]
    out = []
    for m in methods:
        if m == "min":  # the position of the first of the run
            at = np.maximum.accumulate(np.where(new, pos, 0), axis=-1)
        else:  # "max": the position of the last of the run
            last = np.ones(srt.shape, bool)
            last[..., :-1] = new[..., 1:]
            at = np.flip(np.minimum.accumulate(np.flip(np.where(last, pos, n - 1), -1), axis=-1), -1)
        r = np.empty(x.shape, np.intp)
        np.put_along_axis(r, order, at + 1, axis=-1)
        out.append(np.moveaxis(r, -1, axis))
    return tuple(out)


def _e_rand_rates(pa: Any, py: Any) -> Any:
    """Eq. 3 from the two rates of ones: ``p_a p_y + (1 - p_a)(1 - p_y)``."""
    return pa * py + (1 - pa) * (1 - py)


def _kappa_from_rates(err: Any, pa: Any, py: Any, undefined: float = 1.0) -> np.ndarray:
    """Kappa (Eq. 4) from the disagreement rate and the two rates of ones, vectorised.

    ``1 - E_rand = 0`` only when both vectors are the same constant (perfect agreement, kappa = 0/0): that case
    returns ``undefined``.
    """
    err, pa, py = (np.asarray(v, float) for v in (err, pa, py))
    er = _e_rand_rates(pa, py)
    den = 1.0 - er
    safe = np.where(den > 0, den, 1.0)
    return np.where(den > 0, ((1.0 - err) - er) / safe, undefined)


def _caller_stacklevel() -> int:
    """``warnings.warn``'s ``stacklevel`` for the first frame outside effstats, counted from the function that calls
    this: a warning about the caller's data points at the caller's line however deep inside effstats it is raised
    (an estimator's method may call its parent's, which calls a helper)."""
    package = os.path.dirname(os.path.abspath(__file__)) + os.sep
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(package):
        frame, level = frame.f_back, level + 1
    return level


# Names longer than this are cut in messages: a 5,000-character item id would make an error line unreadable.
_LONGEST = 80
_KEEP = 60


def _short(text: str) -> str:
    """``text`` as it is, or, longer than ``_LONGEST`` characters, its first ``_KEEP`` ones, "…" and its length."""
    return text if len(text) <= _LONGEST else f"{text[:_KEEP]}…({len(text)} characters)"


def _name_list(names: Any, limit: int = 8, more: str = "… and {} more") -> str:
    """Comma-separated names, at most ``limit`` of them, then ``more`` with the number left out."""
    names = [str(n) for n in names]  # whole: an entry may be a sentence; ids come cut by _plain
    rest = len(names) - limit
    return ", ".join(names[:limit]) + (" " + more.format(rest) if rest > 0 else "")


def _plain(values: Any) -> Any:
    """Values as plain Python objects, for messages: numpy scalars become ``int``/``float``/``str``/``bool`` (numpy 2
    prints ``np.int64(26)`` where numpy 1 printed ``26``); arrays, Index and Series become lists of them, tuples stay
    tuples, mappings (e.g. an option given per task) become dicts; strings longer than 80 characters are cut
    (:func:`_short`); anything else is returned as it is."""
    if isinstance(values, np.generic) or (isinstance(values, np.ndarray) and values.ndim == 0):
        values = values.item()
        return _short(values) if isinstance(values, str) else values
    if isinstance(values, str):
        return _short(values)
    if isinstance(values, Mapping):
        return {_plain(k): _plain(v) for k, v in values.items()}
    if isinstance(values, tuple):
        return tuple(_plain(v) for v in values)
    if isinstance(values, (list, np.ndarray, pd.Index, pd.Series)):
        return [_plain(v) for v in values]
    return values


def _value_list(values: Any, limit: int = 5) -> str:
    """``[26, 27] and 3 more``: the first ``limit`` values as plain Python values, then how many are left out."""
    values = _plain(list(values))
    more = f" and {len(values) - limit} more" if len(values) > limit else ""
    return f"{values[:limit]}{more}"


def _apart(value: float, low: float, high: float, digits: int = 3) -> tuple[str, str, str]:
    """``value``, ``low`` and ``high`` as decimals with at least ``digits`` places, and as many more (up to 12) as
    it takes for a value beyond a bound to read differently from that bound (0.8199996 against 0.82 must not read
    "0.820 outside [0.820, ...]").

    >>> _apart(0.8199996, 0.82, 0.97)
    ('0.8199996', '0.8200000', '0.9700000')
    >>> _apart(0.5, 0.6, 0.9)
    ('0.500', '0.600', '0.900')
    """
    d = digits
    while d < 12:
        v, lo, hi = (f"{x:.{d}f}" for x in (value, low, high))
        if not ((value < low and v == lo) or (value > high and v == hi)):
            break
        d += 1
    return f"{value:.{d}f}", f"{low:.{d}f}", f"{high:.{d}f}"


def _sorted_codes(col: pd.Series) -> tuple[np.ndarray, pd.Index] | None:
    """Each value's position among the sorted distinct values of ``col``, and those values (the index
    ``DataFrame.pivot`` builds from ``col``); None unless every value is a string or every one an integer (pivot
    drops missing ids, and orders mixed ones its own way)."""
    if pd.api.types.infer_dtype(col, skipna=False) not in ("string", "integer") or col.dtype.kind not in "Oiu":
        return None
    x = col.to_numpy()
    if x.dtype.kind in "iu" and len(x) and 0 <= x.min() and x.max() < 2 * len(x):  # small integers: no hashing
        seen = np.zeros(int(x.max()) + 1, bool)
        seen[x] = True
        if seen.all():  # codes already (0 .. k-1, each used): as they are
            return x, pd.Index(np.arange(len(seen), dtype=x.dtype), name=col.name)
        return (np.cumsum(seen) - 1)[x], pd.Index(np.flatnonzero(seen).astype(x.dtype), name=col.name)
    codes, uniques = pd.factorize(col, sort=True)
    return codes, pd.Index(uniques, name=col.name)


def _repeated(rows: tuple, cols: tuple) -> bool:
    """Whether a (row, column) pair of codes (:func:`_sorted_codes`) occurs twice."""
    seen = np.zeros(len(rows[1]) * len(cols[1]), bool)
    key = rows[0].astype(np.int64) * len(cols[1]) + cols[0]
    seen[key] = True
    return int(seen.sum()) < len(key)


def _progress(enabled: bool, **kw: Any) -> Any:
    """A tqdm bar on standard error, shown once its step has run 2 s (a quick step prints nothing) and only on a
    terminal; ``kw`` go to tqdm (``total``, ``desc``, ...)."""
    from tqdm import tqdm

    return tqdm(disable=None if enabled else True, delay=2, leave=False, **kw)


def _is_float(v: str) -> bool:
    """Whether the text ``v`` is a number as tables write them: what ``float`` reads, without its digit
    separators (``float("1_0")`` is 10; a table's cell ``1_0`` is text, as pandas' parser reads it)."""
    try:
        float(v)
    except ValueError:
        return False
    return "_" not in v


def _id_list(ids: Any, k: int = 5) -> str:
    """The first ``k`` ids as a list, then how many more there are: ``"['a', 'b'] and 3 more"``."""
    more = f" and {len(ids) - k} more" if len(ids) > k else ""
    return f"{_plain(np.asarray(ids[:k]).tolist())}{more}"  # plain values, not numpy reprs


#: Memory as a file system, where Linux has it.
_SHM = "/dev/shm"


def _scratch_dir(nbytes: int) -> str:
    """The directory for a scratch file of ``nbytes`` that child processes share: /dev/shm (memory) when it has
    room for twice that, else the system's temporary directory when it has. A file system too small for a mapped
    file kills the process that writes it with SIGBUS instead of raising (containers often give /dev/shm 64 MB).
    Raises OSError when neither has room or no temporary directory is writable (the caller then works alone)."""
    import shutil

    if os.path.isdir(_SHM) and os.access(_SHM, os.W_OK | os.X_OK):
        try:
            if shutil.disk_usage(_SHM).free >= 2 * nbytes:
                return _SHM
        except OSError:
            pass
    tmp = tempfile.gettempdir()  # FileNotFoundError (an OSError) when no directory is writable
    if shutil.disk_usage(tmp).free < 2 * nbytes:
        raise OSError(f"no room for a scratch file of {nbytes} bytes in {tmp}")
    return tmp


def _scratch_file(nbytes: int) -> Any:
    """An open binary file of ``nbytes`` (zeros) for child processes to share, in :func:`_scratch_dir`; on POSIX
    systems it has no name (removed as soon as it is open: the children inherit its descriptor), so no process
    killed at any moment leaves it behind. Its blocks are allocated now, so a full file system raises OSError here
    rather than SIGBUS at a write through a mapping."""
    f = tempfile.TemporaryFile(prefix="effstats-", dir=_scratch_dir(nbytes))
    try:
        if hasattr(os, "posix_fallocate"):
            os.posix_fallocate(f.fileno(), 0, max(nbytes, 1))
        else:
            f.truncate(max(nbytes, 1))
    except BaseException:
        f.close()
        raise
    return f


def _child_python(code: str, *args: str) -> list[str]:
    """The command line of a child Python that runs ``code`` (which may use ``sys.argv[2:]``, i.e. ``args``) with this
    process's ``sys.path``: the same packages, wherever they were found (user site, PYTHONPATH, a path added at run
    time), and no user script imported again."""
    import json
    import sys

    return [sys.executable, "-c", f"import sys, json; sys.path[:] = json.loads(sys.argv[1]); {code}",
            json.dumps(sys.path), *args]


def _cpus() -> int:
    """Cores this process may run on: those of its affinity, at most its cgroup's CPU quota (a container's
    ``--cpus``) rounded up."""
    n = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    quota = _cgroup_cpus()
    return max(1, min(n, math.ceil(quota))) if quota else n


def _cgroup_cpus(root: str = "/sys/fs/cgroup") -> float | None:
    """The CPU time per second the process's cgroup allows (cgroup v2 ``cpu.max``, v1 ``cpu.cfs_quota_us``), or None
    where there is no quota or no such file."""
    for quota, period in ((f"{root}/cpu.max", None), (f"{root}/cpu/cpu.cfs_quota_us", f"{root}/cpu/cpu.cfs_period_us")):
        try:
            with open(quota) as f:
                fields = f.read().split()
            if period is not None:
                with open(period) as f:
                    fields += f.read().split()
            if fields[0] in ("max", "-1"):
                return None
            return int(fields[0]) / int(fields[1])
        except (OSError, ValueError, IndexError, ZeroDivisionError):
            continue
    return None


def _die_with(parent: int) -> None:
    """In a process just forked by ``parent``: asks Linux to kill it when the parent ends (killed by SIGTERM,
    say), so that no child goes on computing for nobody, and leaves at once where the parent has ended already."""
    if sys.platform.startswith("linux"):
        import ctypes
        import signal

        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None).prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:
        os._exit(1)


class _Forked:
    """``fn()`` computed in a child process forked on entry, while this process goes on with other work; calling
    the object returns the result.

    With ``fork`` false, on systems without ``fork``, on macOS (whose system libraries may not work in a forked
    child) and when no child can be started, ``fn()`` runs in this process when the result is asked for. The child
    inherits this process's memory (nothing is copied or pickled on the way in) and sends its result back pickled
    through a pipe. A child that raised, or showed a warning (what the caller's filters let through), or sent nothing
    (killed, a result that does not pickle) is not trusted: ``fn()`` then runs here, with what it raises and warns,
    so that the caller sees the same results, errors and warnings in either case. ``fn`` must leave alone the state
    the caller reads: its result is all that comes back. Leaving the ``with`` block ends a child still running.
    """

    def __init__(self, fn: Any, fork: bool = True) -> None:
        self.fn = fn
        self.fork = fork and hasattr(os, "fork") and sys.platform != "darwin"
        self.pid = self.fd = None

    def __enter__(self) -> "_Forked":
        if not self.fork:
            return self
        import warnings

        try:
            r, w = os.pipe()
        except OSError:  # no file descriptors left: computed here
            return self
        import signal

        # Ctrl-C is the caller's to handle (it ends the child on leaving the block): the child ignores SIGINT, which
        # stays blocked from before the fork until then, so that no traceback of the child's is printed
        interrupt = {signal.SIGINT} if hasattr(signal, "pthread_sigmask") else None
        if interrupt:
            signal.pthread_sigmask(signal.SIG_BLOCK, interrupt)
        # another thread may take the signal: Python's handler is deferred too until the child is known to __exit__
        handler, deferred = signal.getsignal(signal.SIGINT), []
        try:
            if callable(handler):
                signal.signal(signal.SIGINT, lambda signum, frame: deferred.append(frame))
        except ValueError:  # not the main thread: its handler runs in the main thread only
            handler = None
        parent, pid = os.getpid(), -1
        try:
            with warnings.catch_warnings():
                # Python 3.12+ warns of fork() in a process with threads (the BLAS library's count): the child runs
                # this package's numpy code and leaves by os._exit, without the caller's exit handlers or output
                warnings.filterwarnings("ignore", "This process .* is multi-threaded", DeprecationWarning)
                pid = os.fork()
        except BaseException as exc:
            # a Ctrl-C taken by another thread of the process is raised at the next Python call: here too
            if pid == 0:
                os._exit(1)  # the child never runs the caller's code
            if pid > 0:
                self.pid = pid
                self.__exit__(None, None, None)
            os.close(r)
            os.close(w)
            if callable(handler):
                signal.signal(signal.SIGINT, handler)
            if interrupt:
                signal.pthread_sigmask(signal.SIG_UNBLOCK, interrupt)
            if isinstance(exc, OSError):  # no memory or process left for a child: computed here
                return self
            raise
        if pid == 0:  # the child
            code = 1
            try:
                _die_with(parent)
                signal.signal(signal.SIGINT, signal.SIG_IGN)
                if interrupt:
                    signal.pthread_sigmask(signal.SIG_UNBLOCK, interrupt)
                os.close(r)
                import pickle

                with warnings.catch_warnings(record=True) as caught:
                    value = self.fn()
                if not caught:
                    data = memoryview(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
                    while data:
                        data = data[os.write(w, data):]
                    code = 0
            finally:
                os._exit(code)
        self.pid, self.fd = pid, r
        try:
            os.close(w)
            if callable(handler):
                signal.signal(signal.SIGINT, handler)
            if interrupt:
                signal.pthread_sigmask(signal.SIG_UNBLOCK, interrupt)
            if deferred and callable(handler):
                handler(signal.SIGINT, deferred[0])
        except BaseException:  # a Ctrl-C pressed meanwhile, raised here: no `with` calls __exit__ for it
            self.__exit__(None, None, None)
            raise
        return self

    def __call__(self) -> Any:
        if self.pid is None:
            return self.fn()
        import pickle

        with open(self.fd, "rb", closefd=True) as f:
            self.fd = None
            data = f.read()
        _, status = os.waitpid(self.pid, 0)
        self.pid = None
        if status != 0 or not data:
            return self.fn()
        return pickle.loads(data)

    def __exit__(self, *exc: Any) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
        if self.pid is not None:
            import signal

            with contextlib.suppress(OSError):
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
            self.pid = None


def _umask() -> int:
    """The process's umask: from /proc on Linux, else read by setting it and putting it back (which, for that
    instant, changes it for every thread)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _tmp_prefix(name: str) -> str:
    return f".{name}."


def remove_stale_tmp(path: str | os.PathLike) -> list[Path]:
    """Remove the temporary files an interrupted :func:`write_text_atomic` of ``path`` left beside it.

    A temporary file is ``.<name>.<pid>.<random>.tmp``; it is stale when the process ``<pid>`` no longer runs (a
    write in progress in a live process is left alone). Files of another form (``.<name>.<random>.tmp``) are
    stale when more than a minute old. Returns the files removed.
    """
    import time

    path = Path(path)
    gone = []
    if not path.parent.is_dir():
        return gone
    prefix = _tmp_prefix(path.name)
    journaled = None
    for f in path.parent.iterdir():
        if not (f.name.startswith(prefix) and f.name.endswith(".tmp")):
            continue
        if journaled is None:
            journaled = _journaled(path.parent)
        if os.path.abspath(f) in journaled:  # a staged file of a swap a kill cut short: the swap's to complete
            continue
        pid = f.name[len(prefix):].split(".", 1)[0]
        try:
            if pid.isdigit():
                if int(pid) != os.getpid() and _alive(int(pid)):
                    continue
            elif time.time() - f.lstat().st_mtime < 60:
                continue
            if f.is_file() or f.is_symlink():
                f.unlink()
                gone.append(f)
        except OSError:  # removed meanwhile, or not ours to remove: leave it
            continue
    return gone


def remove_staged(folder: str | os.PathLike, written: Any) -> None:
    """Remove the files a command killed before its swap journal (:func:`swap_files`) staged in ``folder``: the
    temporary files (:func:`temporary_copy`) of the names ``written(name)`` accepts (the files that command
    writes) and the journal's own, where their process no longer runs (:func:`remove_stale_tmp`); a staged file
    of a name no command writes there, of a live process or that a journal names stays."""
    import re

    staged = re.compile(r"\.(.+)\.[0-9]+\.[^.]+\.tmp")
    with contextlib.suppress(OSError):
        names = {m.group(1) for f in Path(folder).iterdir() if (m := staged.fullmatch(f.name)) and written(m.group(1))}
        for name in sorted(names):
            remove_stale_tmp(Path(folder) / name)
        remove_stale_tmp(Path(folder) / SWAP)  # the journal's own temporary file, where a kill came before its rename


def _journaled(folder: Path) -> set[str]:
    """The temporary files (absolute paths) that the swap journals (:func:`swap_files`) in ``folder`` and the two
    folders above it name (a journal names files in the folders below its own): each is a file a killed swap was
    putting in place, kept for the next command to complete that swap with."""
    names: set[str] = set()
    p = Path(os.path.abspath(folder))
    for d in (p, *p.parents[:2]):
        doc = _record_json(d / SWAP)
        pairs = doc.get("rename") if isinstance(doc, dict) else None
        if isinstance(pairs, list):
            names.update(os.path.normpath(d / pair[0]) for pair in pairs
                         if isinstance(pair, list) and pair and isinstance(pair[0], str))
    return names


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):  # another user's process, or no such pid on this system
        return True
    return True


def exists_or_link(p: Path) -> bool:
    """Whether ``p`` names something: a file, a folder or a link (a dangling one too)."""
    return p.exists() or p.is_symlink()


def open_regular(path: str | os.PathLike) -> Any:
    """``open(path, "rb")`` of a regular file only: a FIFO, a device or a folder raises :class:`OSError` at once
    (opened without waiting for a writer, then refused) instead of blocking the reader for ever."""
    import stat

    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file (a FIFO, a device or a folder)", str(path))
        if getattr(os, "O_NONBLOCK", 0):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def memory_limit() -> int | None:
    """The memory this process may use: the machine's physical memory, or less under an address-space limit
    (``ulimit -v``); None where neither is known."""
    limits = []
    try:
        limits.append(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, ValueError, OSError):
        pass
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
        if soft != resource.RLIM_INFINITY and soft > 0:
            limits.append(soft)
    except (ImportError, AttributeError, ValueError, OSError):
        pass
    return min(limits) if limits else None


def array_digest(*arrays: Any) -> str:
    """A digest of numeric arrays for a cache key: each one's dtype and shape, then its bytes in C order, so that
    equal arrays give one digest whatever their memory layout, and the same bytes under another dtype or shape
    (int32 ``[12, 0]`` and int64 ``[12]``) or cut between the arrays elsewhere give another.

    Examples
    --------
    >>> import numpy as np
    >>> a = np.arange(6.0).reshape(2, 3)
    >>> array_digest(a, 0.5) == array_digest(np.asfortranarray(a), 0.5)
    True
    >>> array_digest(np.array([12, 0], dtype=np.int32)) == array_digest(np.array([12], dtype=np.int64))
    False
    """
    import hashlib

    h = hashlib.sha1()
    for a in arrays:
        a = np.asarray(a)
        h.update(repr((a.dtype.str, a.shape)).encode())
        h.update(a.tobytes())
    return h.hexdigest()


class RepeatedKeyError(ValueError):
    """A JSON object naming one key twice (``json`` keeps the last value without a word); the key is ``args[0]``."""


def json_object(pairs: list) -> dict:
    """``object_pairs_hook`` of the readers of users' JSON files: the object as ``json`` makes it, refusing a key
    named twice (a hand-merged results file with ``"harness|gsm8k|5"`` twice would be read as its last run).

    Examples
    --------
    >>> import json
    >>> json.loads('{"a": 1, "b": {"c": 2}}', object_pairs_hook=json_object)
    {'a': 1, 'b': {'c': 2}}
    >>> json.loads('{"a": 1, "a": 2}', object_pairs_hook=json_object)
    Traceback (most recent call last):
    effstats._shared.RepeatedKeyError: a
    """
    d = dict(pairs)
    if len(d) != len(pairs):
        seen: set = set()
        raise RepeatedKeyError(next(k for k, _ in pairs if k in seen or seen.add(k)))
    return d


def repeated_key(text: str, doc: Any, pairs: int) -> str | None:
    """The first key that an object of the JSON ``text`` names twice, or None; ``doc`` is ``json.loads(text)``
    (without a hook) and ``pairs`` the number of key-value pairs the caller counted in some of its objects.

    For large files, where :func:`json_object` as ``object_pairs_hook`` costs a Python call per object (a fifth
    more parse time on HELM's per-instance stats): every ':' of JSON text outside its strings ends a key, so a
    text with as many ':' as ``pairs`` drops no key, and the check costs a count over the text. Otherwise (colons
    in strings, objects the caller did not count) ``doc``'s pairs and string colons are counted by json's encoder,
    and the text is parsed again with :func:`json_object` only where a key was dropped or a colon is escaped.

    Examples
    --------
    >>> import json
    >>> text = '{"a": 1, "b": {"c": "x:y"}}'
    >>> repeated_key(text, json.loads(text), 1) is None
    True
    >>> text = '{"a": 1, "b": 2, "a": 3}'
    >>> repeated_key(text, json.loads(text), 2)
    'a'
    """
    import json

    colons = int(np.count_nonzero(np.frombuffer(text.encode("utf-8", "surrogatepass"), np.uint8) == ord(":")))
    if colons == pairs:
        return None
    # a colon written as an escape is no ':' in the text but one in doc's strings: only a parse tells
    if "\\u003a" not in text and "\\u003A" not in text and json.dumps(doc).count(":") == colons:
        return None
    try:
        json.loads(text, object_pairs_hook=json_object)
    except RepeatedKeyError as exc:
        return exc.args[0]
    return None


def _record_json(f: Path) -> Any:
    """The JSON of the record file ``f`` (a run's record of its files, a swap journal); None where it is missing,
    a link (it may name any file) or unreadable."""
    import json

    try:
        if f.is_symlink():
            return None
        with open_regular(f) as fh:
            return json.loads(fh.read().decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return None


def recorded_files(folder: Path, record: str, fmt: str, known: Any) -> list[str]:
    """The files a record ``folder/record`` of format ``fmt`` lists among the ``known`` names a run writes (in the
    record's order, each once), the record itself last; none where the record is missing, a link (it may name any
    file), unreadable or not of that format: a run replaces or removes only what such a record says it wrote."""
    doc = _record_json(folder / record)
    if not isinstance(doc, dict) or doc.get("format") != fmt or not isinstance(doc.get("files"), list):
        return []
    return list(dict.fromkeys(n for n in doc["files"] if n in known)) + [record]


def write_text_atomic(path: str | os.PathLike, text: str | bytes) -> Path:
    """Write ``text`` (or bytes) to a temporary file beside ``path``, flush it to disk, then rename it over ``path``.

    An interrupted run leaves either the previous file or the new one, never a half-written file; the temporary
    files an interrupted write left are removed by the next write of ``path``. The file gets the permissions a
    plain ``open(path, "w")`` gives (``0o666`` less the umask).
    """
    return put_in_place(temporary_copy(path, text), Path(path))


def put_in_place(tmp: Path, path: Path) -> Path:
    """Rename the temporary file ``tmp`` (:func:`temporary_copy`) over ``path``: the second half of
    :func:`write_text_atomic`; ``tmp`` is removed where the rename fails."""
    try:
        os.replace(tmp, path)
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError):  # name the file written, not the temporary one (a folder of that name, say)
            raise OSError(exc.errno, exc.strerror, str(path)) from exc
        raise
    return path


def temporary_copy(path: str | os.PathLike, text: str | bytes) -> Path:
    """Write ``text`` (or bytes) to a temporary file beside ``path``, flushed to disk, and return its name: the
    first half of :func:`write_text_atomic`, for a caller that renames several files into place at one moment.
    A temporary file its process left behind is removed by the next write of ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_tmp(path)
    fd, tmp = tempfile.mkstemp(prefix=f"{_tmp_prefix(path.name)}{os.getpid()}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~_umask())  # mkstemp makes the file 0600: give it the user's usual permissions
        binary = isinstance(text, bytes)
        with os.fdopen(fd, "wb" if binary else "w", encoding=None if binary else "utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError) and exc.filename is None:  # a full disk: name the file written, not stdout
            raise OSError(exc.errno, exc.strerror, str(path)) from exc
        raise
    return Path(tmp)


# the lock of a folder a command writes into (select, sequential start and update, estimate, audit): one lock file
# for every command, so that no two of them write into one folder at once, whatever their kinds
LOCK = ".effstats.lock"
LOCK_WAIT = 60.0  # seconds a command waits for another one's lock on its folder before it is refused
# the real paths of the folders whose lock this process holds (each with its count of holds): a swap journal in such a
# folder or below is a killed process's, whatever its pid says (a pid is reused, after a restart above all), since
# every command that writes one holds the lock until the journal is gone
_HELD: dict[str, int] = {}


@contextlib.contextmanager
def folder_lock(d: Path, name: str, wait: float | None = None) -> Any:
    """Hold the exclusive lock of the existing folder ``d`` (``d/.effstats.lock``): a second process waits up to
    ``wait`` seconds (:data:`LOCK_WAIT` where None), then is refused with one line naming ``name`` (the argument
    that gave ``d``). Without flock (Windows) nothing is locked."""
    try:
        import fcntl
    except ImportError:  # no flock on this system: commands are not guarded against one another
        yield
        return
    import time

    try:
        fd = os.open(Path(d) / LOCK, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError as exc:
        raise ValueError(f"{name}: cannot lock {d} ({exc.strerror})") from None
    try:
        deadline = time.monotonic() + (LOCK_WAIT if wait is None else wait)
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise ValueError(f"{name}: another effstats command is writing into {d} ({LOCK} is held); run "
                                     "this one when it has finished") from None
                time.sleep(0.1)
        real = os.path.realpath(d)
        _HELD[real] = _HELD.get(real, 0) + 1
        try:
            yield
        finally:
            _HELD[real] -= 1
            if not _HELD[real]:
                del _HELD[real]
    finally:
        os.close(fd)  # closing the file releases the lock


@contextlib.contextmanager
def free_folder_lock(d: Path) -> Any:
    """The lock of the folder ``d`` (:func:`folder_lock`) where it can be taken at once, for work a command may do
    before it waits for the lock (a reader, a check before a long computation): yields True while held, False
    where it is not taken: ``d`` is not a folder, this process holds it (or a folder's above) already, another
    process holds it, or no lock file can be made there (a read-only folder)."""
    with contextlib.ExitStack() as stack:
        held = False
        if Path(d).is_dir() and not _lock_held(d):
            with contextlib.suppress(ValueError):
                stack.enter_context(folder_lock(d, "directory", wait=0))
                held = True
        yield held


def _lock_held(folder: Path) -> bool:
    """Whether this process holds the lock of ``folder`` or of a folder above it (:func:`folder_lock`)."""
    real = os.path.realpath(folder)
    return any(real == h or real.startswith(h.rstrip(os.sep) + os.sep) for h in _HELD)


# the journal of a set of files being put in place together (:func:`swap_files`), in the folder they go into
SWAP = ".effstats_swap.json"
_SWAP_FORMAT = "effstats.swap/1"


def swap_files(folder: Path, files: list[tuple[Path, str | bytes | Path]], remove: Any = ()) -> None:
    """Put ``files`` (path inside ``folder``, text or bytes) in place together, in their order, and remove the
    files ``remove`` (paths relative to ``folder`` of the output they replace): a kill at any moment leaves the
    old files whole or, once :func:`finish_swap` has run, the new ones complete, never a mix.

    Each file is first written in full under a temporary name beside its own, or is given as that temporary file
    already written (a ``Path`` :func:`temporary_copy` returned for it: a large file written once, by its maker,
    which the swap owns from the call on); an interruption removes them, a kill leaves them to the next write's
    clean-up. Then a journal (``folder/.effstats_swap.json``, written
    atomically) names the renames and removals, which follow, the last file (a run's record) renamed last, and
    the journal goes. A journal a killed process left is completed by the next command's :func:`finish_swap`.
    Ctrl-C, SIGTERM and SIGHUP are held back from the journal's write to its removal."""
    import json

    from ._entry import interrupt_after

    folder = Path(folder)
    given = [text for _, text in files if isinstance(text, Path)]  # removed with the others if the swap fails
    staged: list[tuple[Path, Path]] = []
    done = False
    try:
        for path, text in files:
            if isinstance(text, Path) and Path(os.path.abspath(text)).parent != Path(os.path.abspath(path)).parent:
                raise ValueError(f"{text} is not a temporary file beside {path}")
            staged.append((text if isinstance(text, Path) else temporary_copy(path, text), Path(path)))
        for _, path in staged:  # a rename that would fail: refused while nothing has moved
            if path.is_dir() and not path.is_symlink():
                raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
        rel = [[(f.relative_to(folder).parent / tmp.name).as_posix(), f.relative_to(folder).as_posix()]
               for tmp, f in staged]
        doc = {"format": _SWAP_FORMAT, "pid": os.getpid(), "rename": rel,
               "remove": [r for r in dict.fromkeys(remove) if r not in {f for _, f in rel}]}
        with interrupt_after(kills=True):
            write_text_atomic(folder / SWAP, json.dumps(doc, indent=1) + "\n")
            done = True
            _complete(folder, doc)
    finally:
        if not done:
            for tmp in dict.fromkeys([*given, *(t for t, _ in staged)]):
                tmp.unlink(missing_ok=True)


def finish_swap(folder: Path, known: Any) -> None:
    """Complete the swap of files a process ended by a kill left half done in ``folder`` (its journal, see
    :func:`swap_files`), where each file it names is one ``known(relative path)`` says such an output writes; a
    journal of a process still running (unless this process holds the folder's lock), a link, one naming any other
    file, or one renaming a file in a folder that is a link (or a file) is left alone."""
    doc = pending_swap(folder, known)
    if doc is not None:
        _complete(Path(folder), doc)


def pending_swap(folder: Path, known: Any) -> dict | None:
    """The journal of a swap a process ended by a kill left half done in ``folder``, as :func:`finish_swap`
    completes it (None where there is none to complete: see there). Where this process holds the folder's lock
    the journal's process has ended, whatever runs under its pid now."""
    doc = _record_json(Path(folder) / SWAP)
    if not isinstance(doc, dict) or doc.get("format") != _SWAP_FORMAT or not isinstance(doc.get("pid"), int) \
            or (doc["pid"] != os.getpid() and not _lock_held(folder) and _alive(doc["pid"])):
        return None
    pairs, gone = doc.get("rename"), doc.get("remove")
    if not (isinstance(pairs, list) and isinstance(gone, list)
            and all(isinstance(p, list) and len(p) == 2 and all(isinstance(r, str) for r in p) for p in pairs)
            and all(isinstance(r, str) for r in gone)):
        return None
    # a temporary file goes only onto the name it is the temporary of, in the same folder, a real one inside
    # ``folder``: never through a link (to a folder elsewhere) on the way
    from .workflow._files import _not_real
    from .workflow._schema import safe_relative

    ok = all(known(r) and safe_relative(r) for _, r in pairs) and all(known(r) and safe_relative(r) for r in gone) \
        and all(safe_relative(t) and Path(t).parent == Path(r).parent
        and Path(t).name.startswith(f"{_tmp_prefix(Path(r).name)}{doc['pid']}.") and t.endswith(".tmp")
        and _not_real(Path(folder), Path(r).parts[:-1]) is None for t, r in pairs)
    return doc if ok else None


def _complete(folder: Path, doc: dict) -> None:
    """The renames and removals of the journal ``doc`` not done yet (a rename whose temporary file is gone is
    done), the last rename after the removals, then the journal's removal. Where the last temporary file is gone,
    the swap had reached its last rename, after its removals: nothing is removed again."""
    from .workflow._files import remove_files  # only through real folders inside ``folder``, never a link's target

    pairs = doc["rename"]
    for k, (tmp, rel) in enumerate(pairs):
        if k == len(pairs) - 1 and (folder / tmp).is_file():
            remove_files(folder, doc["remove"])
        if (folder / tmp).is_file():
            try:
                os.replace(folder / tmp, folder / rel)
            except OSError as exc:  # name the file written, not the temporary one
                raise OSError(exc.errno, exc.strerror, str(folder / rel)) from exc
    if not pairs:
        remove_files(folder, doc["remove"])
    (folder / SWAP).unlink(missing_ok=True)


def _level_percent(level: float) -> str:
    """A confidence level as a percentage for text, ``0.95`` → ``'95'``: as many digits as the level has (up to 12
    significant ones, more where fewer would round a level below 1 up to ``'100'``), never a level it is not."""
    pct = 100 * float(level)
    text = f"{pct:.12g}"
    return f"{pct:.17g}" if text == "100" and pct < 100 else text
