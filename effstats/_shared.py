"""Helpers shared by several subpackages (internal: no stable API).

One home for the small functions more than one public module needs, so that no module imports another's private
names: selecting models or items by id, position or mask (:mod:`effstats.responses`, :mod:`effstats.splits`,
:mod:`effstats.reliability`), weighted group means (:mod:`effstats.responses`, :mod:`effstats.reliability`), and
Cohen's kappa from agreement rates (:mod:`effstats.metrics`, :mod:`effstats.sortsearch`), and names listed in a
message (:mod:`effstats.reliability`, the subset estimators, :mod:`effstats.workflow`), values listed in a message
as plain Python values (every module's errors and warnings), whether a table's cell
reads as a number (:mod:`effstats.datasets`), where child processes find their data and their Python
(:mod:`effstats.irt`, :mod:`effstats.disco`), competition ranks along an axis (:mod:`effstats.reliability`, the
published-aggregate detection), and a digest of arrays for cache keys (:mod:`effstats.disco`'s run memo and ridge
fits). The package's other internal modules: ``effstats._user_files`` (files in users' folders: atomic writes,
folder locks, files swapped together; its names are importable from here too), ``effstats._validation`` (argument
checks), ``effstats._results`` (result classes), ``effstats._subset`` (the subset estimators' shared base),
``effstats._subset_results`` (their result and its intervals) and ``effstats._range`` (out-of-range flags).
"""
from __future__ import annotations

import contextlib
import math
import os
import sys
import tempfile
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

# files in users' folders: their own module, its names used from here as well
from ._user_files import (SWAP, _record_json, exists_or_link, finish_swap, folder_lock,  # noqa: F401
                          free_folder_lock, open_regular, pending_swap, put_in_place, recorded_files,
                          remove_stale_tmp, remove_staged, swap_files, temporary_copy, write_text_atomic)


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


def _level_percent(level: float) -> str:
    """A confidence level as a percentage for text, ``0.95`` → ``'95'``: as many digits as the level has (up to 12
    significant ones, more where fewer would round a level below 1 up to ``'100'``), never a level it is not."""
    pct = 100 * float(level)
    text = f"{pct:.12g}"
    return f"{pct:.17g}" if text == "100" and pct < 100 else text
