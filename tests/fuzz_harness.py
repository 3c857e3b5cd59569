"""Bad-input harness shared by tests/test_fuzz.py and scripts/fuzz_report.py.

A :class:`Case` is one public callable with a factory of valid keyword arguments and, for each argument
that is fuzzed, a *kind* (binary matrix, count, fraction, ids, file ...). Every kind has a list of bad
values (:data:`KINDS`); :func:`run_one` replaces one argument by one bad value and classifies the outcome:

* ``clear``   -- a ValueError/TypeError whose message names the argument (or an accepted alias);
* ``ok``      -- the input was unusual but valid (e.g. a list instead of an array) and the result is right;
* ``crash``   -- any other exception, or a ValueError/TypeError that does not name the argument;
* ``garbage`` -- a result for an invalid input, NaN/inf in an output whose valid baseline is finite, or a
  different result for an equivalent input.

Each bad value is one of three expectations: ``fail`` (must raise), ``same`` (an equivalent spelling of the
valid value: must give the baseline's result) or ``may`` (may raise clearly or return a finite result).
"""
from __future__ import annotations

import atexit
import contextlib
import dataclasses
import io
import os
import re
import shutil
import tempfile
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd

# a message that lists values shows them as Python prints them: numpy 2's scalar reprs (np.int64(26), np.str_('a'))
# are a crash, as is any other unclear message
NUMPY_REPR = re.compile(r"\bnp\.\w+\(")

# ------------------------------------------------------------------------------------------- bad values
FAIL, SAME, MAY = "fail", "same", "may"
# NaN / a missing mask where an estimator reads NaN as "not evaluated": a clear error, or a result with a UserWarning
# that says cells are missing (never a silent estimate)
MISSING = "missing"


def _as_array(v: Any) -> np.ndarray:
    from effstats.responses import ResponseMatrix

    if isinstance(v, ResponseMatrix):
        return v.values_with_nan()
    return np.asarray(v)


def _as_list(v: Any, r: Any) -> list:
    from effstats.responses import ResponseMatrix

    if isinstance(v, ResponseMatrix) and (len(v.items.columns) or len(v.models.columns)):
        raise NotImplementedError("a plain list drops the metadata")
    return _as_array(v).tolist()


def _put(v: Any, value: Any, rng: np.random.Generator, dtype: Any = float) -> np.ndarray:
    a = _as_array(v).astype(dtype, copy=True)
    a.flat[rng.integers(a.size)] = value
    return a


def _empty(v: Any, rng: np.random.Generator) -> np.ndarray:
    a = _as_array(v)
    shape = list(a.shape)
    shape[rng.integers(len(shape))] = 0
    return np.zeros(shape, a.dtype)


def _ragged(v: Any, rng: np.random.Generator) -> list:
    a = _as_array(v)
    if a.ndim == 1:
        return [a[: max(1, a.size // 2)].tolist(), a.tolist()]
    rows = a.tolist()
    i = int(rng.integers(len(rows)))
    rows[i] = rows[i][:-1]
    return rows


def _strings(v: Any, rng: np.random.Generator) -> np.ndarray:
    return _as_array(v).astype(str)


def _object_str(v: Any, rng: np.random.Generator) -> np.ndarray:
    a = _as_array(v).astype(object)
    a.flat[rng.integers(a.size)] = "x"
    return a


def _complex(v: Any, rng: np.random.Generator) -> np.ndarray:
    a = _as_array(v).astype(complex)
    a.flat[rng.integers(a.size)] += 1j
    return a


def _short(axis: int) -> Callable:
    def f(v: Any, rng: np.random.Generator) -> np.ndarray:
        a = _as_array(v)
        ax = axis if axis >= 0 else a.ndim + axis
        if ax >= a.ndim:
            return a
        return np.take(a, np.arange(a.shape[ax] - 1), axis=ax)

    return f


ARRAY = [
    ("nan", FAIL, lambda v, r: _put(v, np.nan, r)),
    ("inf", FAIL, lambda v, r: _put(v, np.inf * (1 if r.random() < 0.5 else -1), r)),
    ("empty", FAIL, _empty),
    ("ndim-", FAIL, lambda v, r: _as_array(v).ravel() if _as_array(v).ndim > 1 else _as_array(v)[0]),
    ("ndim+", FAIL, lambda v, r: _as_array(v)[..., None]),
    ("ragged", FAIL, _ragged),
    ("complex", FAIL, _complex),
    ("strings", FAIL, _strings),
    ("object-str", FAIL, _object_str),
    ("none", FAIL, lambda v, r: None),
    ("text", FAIL, lambda v, r: "abc"),
    ("as-list", SAME, _as_list),
]
BINARY = ARRAY + [
    ("twos", FAIL, lambda v, r: _put(v, 2, r, int)),
    ("half", FAIL, lambda v, r: _put(v, 0.5, r)),
    ("negative", FAIL, lambda v, r: _put(v, -1, r, int)),
]
UNIT = ARRAY + [
    ("above-1", FAIL, lambda v, r: _put(v, 1.5, r)),
    ("below-0", FAIL, lambda v, r: _put(v, -0.5, r)),
]
REAL = ARRAY  # any finite reals
PROBA = ARRAY + [
    ("negative", FAIL, lambda v, r: _put(v, -0.2, r)),
    ("no-sum-1", FAIL, lambda v, r: _as_array(v) * 0.5),
]
def _foreign_ids(v: Any, r: np.random.Generator) -> Any:
    from effstats.responses import ResponseMatrix

    if not isinstance(v, ResponseMatrix):
        raise NotImplementedError("ids need a ResponseMatrix")
    return ResponseMatrix(v.values_with_nan(), nan_as_missing=True, model_ids=v.model_ids,
                          item_ids=[f"zz{j}" for j in range(v.n_items)],
                          probabilities=v.probabilities, labels=v.labels)


def _permuted_ids(v: Any, r: np.random.Generator) -> Any:
    return v.subset(items=r.permutation(v.n_items))


def _missing_cells(v: Any, r: np.random.Generator) -> Any:
    from effstats.responses import ResponseMatrix

    miss = np.zeros(v.shape, bool)
    miss[np.arange(v.n_models), r.integers(v.n_items, size=v.n_models)] = True
    return ResponseMatrix(v.values, missing=miss, model_ids=v.model_ids, item_ids=v.item_ids)


def _score_rm(v: Any, r: np.random.Generator) -> Any:
    from effstats.responses import ResponseMatrix

    a = _as_array(v).astype(float) * 0.5 + 0.25  # scores in [0.25, 0.75]: valid scores, not correctness
    return ResponseMatrix(a, kind="score")


def _missing_rm(v: Any, r: np.random.Generator) -> Any:
    from effstats.responses import ResponseMatrix

    a = _as_array(v).astype(float)
    a[np.arange(a.shape[0]), r.integers(a.shape[1], size=a.shape[0])] = np.nan
    return ResponseMatrix(a, nan_as_missing=True, kind="binary")


# ResponseMatrix inputs where complete binary correctness is required
NEEDS_BINARY = [("score-matrix", FAIL, _score_rm), ("missing-cells-matrix", FAIL, _missing_rm)]

# labelled inputs are aligned by id: the same items in another column order give the same result; unknown ids are
# refused
ALIGN = [
    ("permuted-ids", SAME, _permuted_ids),
    ("foreign-ids", FAIL, _foreign_ids),
    ("missing-cells", MAY, _missing_cells),
]
SHORT0 = [("short-rows", FAIL, _short(0))]
SHORT1 = [("short-cols", FAIL, _short(1))]


def _zero_d(v: Any, r: np.random.Generator) -> np.ndarray:
    """The valid number as a 0-d array (what numpy's reductions give): the same number."""
    if isinstance(v, (bool, str)) or not isinstance(v, (int, float, np.number)):
        raise NotImplementedError("the valid value is no number")
    return np.array(v)


ZERO_D = ("0-d", SAME, _zero_d)
INT = [
    ("zero", FAIL, lambda v, r: 0),
    ("negative", FAIL, lambda v, r: -int(r.integers(1, 5))),
    ("float", FAIL, lambda v, r: 2.5),
    ("str", FAIL, lambda v, r: "3"),
    ("bool", FAIL, lambda v, r: True),
    ("nan", FAIL, lambda v, r: float("nan")),
    ("inf", FAIL, lambda v, r: float("inf")),
    ("list", FAIL, lambda v, r: [v]),
    ("huge", FAIL, lambda v, r: 10**6),  # more than any fixture has; small enough not to exhaust memory if accepted
    ("np-int", SAME, lambda v, r: np.int64(v)),
    ("np-negative", FAIL, lambda v, r: np.int64(-3)),  # numpy 2 prints np.int64(-3)
    ZERO_D,
]
NONE = [("none", FAIL, lambda v, r: None)]
FRACTION = [
    ("zero", FAIL, lambda v, r: 0.0),
    ("one", FAIL, lambda v, r: 1.0),
    ("negative", FAIL, lambda v, r: -0.1),
    ("above-1", FAIL, lambda v, r: 1.5),
    ("nan", FAIL, lambda v, r: float("nan")),
    ("inf", FAIL, lambda v, r: float("inf")),
    ("str", FAIL, lambda v, r: "0.05"),
    ("bool", FAIL, lambda v, r: True),
    ("complex", FAIL, lambda v, r: 0.05 + 0.1j),
    ("list", FAIL, lambda v, r: [v]),
    ("np-above-1", FAIL, lambda v, r: np.float64(1.5)),
    ZERO_D,
]
POSITIVE = [  # finite real > 0
    ("zero", FAIL, lambda v, r: 0.0),
    ("negative", FAIL, lambda v, r: -1.0),
    ("nan", FAIL, lambda v, r: float("nan")),
    ("inf", FAIL, lambda v, r: float("inf")),
    ("str", FAIL, lambda v, r: "1"),
    ("bool", FAIL, lambda v, r: True),
    ("complex", FAIL, lambda v, r: 1 + 1j),
    ("np-negative", FAIL, lambda v, r: np.float64(-1.0)),
    ZERO_D,
]
FINITE = [  # any finite real
    ("nan", FAIL, lambda v, r: float("nan")),
    ("inf", FAIL, lambda v, r: float("inf")),
    ("str", FAIL, lambda v, r: "1"),
    ("complex", FAIL, lambda v, r: 1 + 1j),
    ("none", FAIL, lambda v, r: None),
    ("np-nan", FAIL, lambda v, r: np.float64(np.nan)),
    ZERO_D,
]
OPTION = [
    ("unknown", FAIL, lambda v, r: "no-such-option"),
    ("int", FAIL, lambda v, r: 3),
    ("list", FAIL, lambda v, r: [v]),
    ("upper", MAY,
     lambda v, r: v.upper() if isinstance(v, str) and v.upper() != v else "NOPE"),  # case-insensitive is fine
]
FLAG = [
    ("str", FAIL, lambda v, r: "yes"),
    ("int", FAIL, lambda v, r: 2),
    ("none", FAIL, lambda v, r: None),
]
RNG = [
    ("str", FAIL, lambda v, r: "seed"),
    ("float", FAIL, lambda v, r: 1.5),
    ("negative", FAIL, lambda v, r: -1),
    ("dict", FAIL, lambda v, r: {"seed": 1}),
]


def _positions(n: int) -> list:
    """Bad selections of ``n`` entries (positions, ids or masks)."""
    return [
        ("out-of-range", FAIL, lambda v, r: [0, n + int(r.integers(0, 50))]),
        ("negative-oob", FAIL, lambda v, r: [-n - 1 - int(r.integers(0, 50))]),
        ("duplicate", FAIL, lambda v, r: [1, 1]),
        ("float", FAIL, lambda v, r: [0.5, 1.0]),
        ("strings", FAIL, lambda v, r: ["no-such-id"]),
        ("empty", FAIL, lambda v, r: []),
        ("2-D", FAIL, lambda v, r: [[0, 1]]),
        ("mask-length", FAIL, lambda v, r: np.ones(n + 1, bool)),
        ("complex", FAIL, lambda v, r: np.array([0, 1], complex)),
        ("nan", FAIL, lambda v, r: [0.0, np.nan]),
    ]


def _sizes(n: int) -> list:
    """Bad lists of sizes / budgets (each must be an int in [1, n])."""
    return [
        ("empty", FAIL, lambda v, r: []),
        ("str", FAIL, lambda v, r: [2, "a"]),
        ("zero", FAIL, lambda v, r: [0, 2]),
        ("negative", FAIL, lambda v, r: [-1]),
        ("float", FAIL, lambda v, r: [1.5, 2]),
        ("bool", FAIL, lambda v, r: [True, 2]),
        ("nested", FAIL, lambda v, r: [[2]]),
        ("too-big", FAIL, lambda v, r: [2, n + 1 + int(r.integers(0, 1000))]),
        ("nan", FAIL, lambda v, r: [np.nan]),
        ("text", FAIL, lambda v, r: "abc"),
        ("scalar", FAIL, lambda v, r: 3),
    ]


def _ids(n: int) -> list:
    """Bad id lists for ``n`` entries."""
    return [
        ("duplicate", FAIL, lambda v, r: ["a"] * n),
        ("short", FAIL, lambda v, r: [f"x{i}" for i in range(n - 1)]),
        ("long", FAIL, lambda v, r: [f"x{i}" for i in range(n + 1)]),
        ("scalar", FAIL, lambda v, r: "abc"),
        ("nested", FAIL, lambda v, r: [[i] for i in range(n)]),
    ]


def _frame(rng: np.random.Generator, v: Any, how: str) -> Any:
    df = v.copy()
    if how == "dup-columns":
        cols = list(df.columns)
        cols[-1] = cols[0]
        df.columns = cols
    elif how == "dup-index":
        idx = list(df.index)
        idx[-1] = idx[0]
        df.index = idx
    elif how == "empty":
        df = df.iloc[:0]
    elif how == "text-cell":
        df = df.astype(object)
        df.iloc[int(rng.integers(len(df))), int(rng.integers(df.shape[1]))] = "oops"
    elif how == "inf-cell":
        df = df.astype(float)
        df.iloc[int(rng.integers(len(df))), int(rng.integers(df.shape[1]))] = np.inf
    elif how == "complex":
        df = df.astype(complex) + 1j
    return df


FRAME = [
    (h, FAIL, (lambda h: lambda v, r: _frame(r, v, h))(h))
    for h in ("dup-columns", "dup-index", "empty", "text-cell", "inf-cell", "complex")
] + [("array", FAIL, lambda v, r: "not a table"), ("none", FAIL, lambda v, r: None)]
LONG_FRAME = [
    ("dup-rows", FAIL, lambda v, r: pd.concat([v, v.iloc[:1]], ignore_index=True)),
    ("empty", FAIL, lambda v, r: v.iloc[:0]),
    ("text-score", FAIL, lambda v, r: v.assign(score=v["score"].astype(object).where(np.arange(len(v)) != 1, "oops"))),
    ("nan-score", MISSING, lambda v, r: v.assign(score=v["score"].where(np.arange(len(v)) != 1, np.nan))),
    ("nan-model", FAIL, lambda v, r: v.assign(score=v["score"].where(v["model"] != v["model"].iloc[0], np.nan))),
    ("inf-score", FAIL, lambda v, r: v.assign(score=v["score"].where(np.arange(len(v)) != 1, np.inf))),
    ("complex-score", FAIL, lambda v, r: v.assign(score=v["score"].astype(complex) + 1j)),
    ("dup-columns", FAIL, lambda v, r: pd.concat([v, v[["score"]]], axis=1)),
    ("not-frame", FAIL, lambda v, r: v.to_numpy()),
]
COLUMN = [
    ("missing", FAIL, lambda v, r: "no_such_column"),
    ("int", FAIL, lambda v, r: 3),
    ("none", FAIL, lambda v, r: None),
    ("list", FAIL, lambda v, r: [v, v]),
]
CALLABLE = [
    ("not-callable", FAIL, lambda v, r: "abc"),
    ("wrong-shape", FAIL, lambda v, r: lambda *a: np.zeros((1, 1), bool)),
    ("twos", FAIL, lambda v, r: (lambda f: lambda *a: np.where(np.asarray(f(*a)), 2, 0))(v)),
    ("nan", FAIL, lambda v, r: (lambda f: lambda *a: np.where(np.asarray(f(*a)), np.nan, 0.0))(v)),
]


_SCRATCH: dict[int, str] = {}


def scratch_dir(prefix: str = "effstats-fuzz-") -> str:
    """A new folder for a case's files, inside one folder per process that the process removes at its exit.

    The cases' files outlive the calls that make them (a case is built, then called many times), so no call can
    remove its own; a process forked from this one leaves the folder to its maker.
    """
    pid = os.getpid()
    if pid not in _SCRATCH:
        _SCRATCH[pid] = tempfile.mkdtemp(prefix="effstats-fuzz-")
        atexit.register(lambda: os.getpid() == pid and shutil.rmtree(_SCRATCH[pid], ignore_errors=True))
    return tempfile.mkdtemp(prefix=prefix, dir=_SCRATCH[pid])


def _write(kind: str, rng: np.random.Generator, suffix: str) -> str:
    d = Path(scratch_dir())
    p = d / f"bad{suffix}"
    if kind == "missing":
        return str(d / f"nope{suffix}")
    if kind == "directory":
        return str(d)
    if kind == "empty":
        p.write_bytes(b"")
    elif kind == "garbage":
        p.write_bytes(rng.bytes(200))
    elif kind == "pickle-npz":  # an object array: np.load must refuse it (allow_pickle=False)
        np.savez(p, values=np.array([{"evil": 1}, None], dtype=object))
        if not str(p).endswith(".npz"):
            os.replace(str(p) + ".npz", p)
    elif kind == "truncated-npz":
        buf = io.BytesIO()
        np.savez(buf, values=np.zeros((10, 10)))
        p.write_bytes(buf.getvalue()[:120])
    elif kind == "wrong-npz":
        np.savez(p, something_else=np.arange(5))
        if not str(p).endswith(".npz"):
            os.replace(str(p) + ".npz", p)
    elif kind == "text":
        p.write_text("model,item,score\nm0,i0,abc\nm0\n,,\n\x00\x01")
    elif kind == "dup-columns":
        p.write_text("model,i0,i0\nm0,1,0\nm1,0,1\n")
    elif kind == "dup-rows":
        p.write_text("model,item,score\nm0,i0,1\nm0,i0,0\nm1,i0,1\n")
    elif kind == "jsonl-garbage":
        p.write_text('{"doc_id": 0, "acc": 1}\nnot json\n')
    return str(p)


def files(suffix: str,
          kinds: tuple[str, ...] = ("missing", "directory", "empty", "garbage", "pickle-npz", "truncated-npz",
                                    "wrong-npz", "text")) -> list:
    return [(k, FAIL, (lambda k: lambda v, r: _write(k, r, suffix))(k)) for k in kinds]


# ------------------------------------------------------------------------------------------- cases
@dataclass
class Arg:
    name: str
    bad: list  # (label, expectation, make(valid_value, rng))
    aliases: tuple[str, ...] = ()
    skip: tuple[str, ...] = ()  # labels that do not apply
    expect: dict = field(default_factory=dict)  # label -> expectation override

    def values(self) -> list:
        return [(lab, self.expect.get(lab, exp), make) for lab, exp, make in self.bad if lab not in self.skip]


@dataclass
class Case:
    name: str
    module: str  # findings file / owner (sortsearch, metrics, disco, irt, reliability, cli, sequential, responses, ...)
    call: Callable[[dict], Any]
    valid: Callable[[], dict]
    args: list[Arg]

    @property
    def id(self) -> str:
        return self.name


class _Unset:
    pass


def leaves(x: Any, depth: int = 0) -> list[np.ndarray]:
    """Numeric arrays inside a result (arrays, frames, dataclasses, tuples, dicts), for the NaN check."""
    if depth > 4 or x is None or isinstance(x, (str, bytes, bool, Path)):
        return []
    if isinstance(x, (int, float, np.number)):
        return [np.asarray(x, float)]
    if isinstance(x, np.ndarray):
        return [x.astype(float)] if x.dtype.kind in "biuf" else []
    if isinstance(x, pd.Index):
        return []
    if isinstance(x, pd.Series):
        return [x.to_numpy(float)] if x.dtype.kind in "biuf" else []
    if isinstance(x, pd.DataFrame):
        num = x.select_dtypes("number")
        return [num.to_numpy(float)] if num.shape[1] else []
    if isinstance(x, dict):
        return [a for v in x.values() for a in leaves(v, depth + 1)]
    if isinstance(x, (list, tuple)):
        return [a for v in x for a in leaves(v, depth + 1)]
    if dataclasses.is_dataclass(x):
        return [a for f in dataclasses.fields(x) for a in leaves(getattr(x, f.name, None), depth + 1)]
    packed = getattr(x, "packed", None)
    if isinstance(packed, np.ndarray):
        return [packed.astype(float)]
    vals = getattr(x, "values", None)
    if isinstance(vals, np.ndarray) and vals.dtype.kind in "biuf":
        return [vals.astype(float)]
    return []


def _finite(x: Any) -> bool:
    return all(np.isfinite(a).all() for a in leaves(x))


def _new_nonfinite(base: Any, out: Any) -> bool:
    """NaN/inf in ``out`` where the valid baseline had none (leaf by leaf when both have the same leaves)."""
    lb, lo = leaves(base), leaves(out)
    if len(lb) != len(lo):
        return all(np.isfinite(a).all() for a in lb) and not all(np.isfinite(a).all() for a in lo)
    return any(np.isfinite(b).all() and not np.isfinite(o).all() for b, o in zip(lb, lo))


def _same(a: Any, b: Any) -> bool:
    la, lb = leaves(a), leaves(b)
    if len(la) != len(lb):
        return False
    for u, v in zip(la, lb):
        if u.shape != v.shape or not np.allclose(u, v, equal_nan=True):
            return False
    return True


@dataclass
class Outcome:
    case: str
    module: str
    arg: str
    label: str
    status: str  # clear / ok / crash / garbage / skipped
    detail: str
    value: str = ""

    def line(self) -> str:
        return f"{self.case}({self.arg}=<{self.label}>): {self.status}: {self.detail}"


_BASELINES: dict[str, Any] = {}
TIME_LIMIT = 30  # seconds a single call may take before it counts as a crash (a hang on bad input)


class CallTimeout(Exception):
    pass


@contextlib.contextmanager
def _time_limit(seconds: int):
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "SIGALRM"):
        yield
        return

    def handler(signum, frame):
        raise CallTimeout(f"no answer after {seconds} s")

    old = signal.signal(signal.SIGALRM, handler)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def baseline(case: Case) -> Any:
    if case.name not in _BASELINES:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _BASELINES[case.name] = case.call(case.valid())
    return _BASELINES[case.name]


def run_one(case: Case, arg: Arg, label: str, expectation: str, make: Callable, seed: int) -> Outcome:
    rng = np.random.default_rng(seed)
    try:
        kwargs = case.valid() if case.valid else {}
        base = baseline(case) if case.valid else None
    except Exception as exc:  # noqa: BLE001 -- the valid call itself fails: a harness or API problem, not counted
        return Outcome(case.name, case.module, arg.name, label, "skipped",
                       f"valid call failed: {type(exc).__name__}: {str(exc)[:200]}")
    try:
        kwargs[arg.name] = make(kwargs.get(arg.name), rng)
    except Exception as exc:  # the harness itself could not build the value
        return Outcome(case.name, case.module, arg.name, label, "skipped", f"(not applicable: {exc!r})")
    shown = _short_repr(kwargs[arg.name], 80)
    names = (arg.name,) + tuple(arg.aliases)
    # a mismatch between two arguments may be reported under either name
    if label.startswith("short") or "mismatch" in label:
        names += tuple(a.name for a in case.args)
    try:
        with warnings.catch_warnings(record=True) as said, contextlib.redirect_stdout(io.StringIO()), \
                contextlib.redirect_stderr(io.StringIO()), _time_limit(TIME_LIMIT):
            warnings.simplefilter("always")
            out = case.call(kwargs)
    # FileNotFoundError: Python's convention for a missing path
    except (ValueError, TypeError, FileNotFoundError) as exc:
        msg = str(exc)
        if NUMPY_REPR.search(msg):
            return Outcome(case.name, case.module, arg.name, label, "crash", f"numpy reprs in the message: {msg[:200]}",
                           shown)
        if expectation == SAME:
            return Outcome(case.name, case.module, arg.name, label, "crash",
                           f"equivalent input refused: {type(exc).__name__}: {msg[:200]}", shown)
        if any(n in msg for n in names):
            return Outcome(case.name, case.module, arg.name, label, "clear", f"{type(exc).__name__}: {msg[:200]}",
                           shown)
        return Outcome(case.name, case.module, arg.name, label, "crash",
                       f"{type(exc).__name__} not naming {arg.name!r}: {msg[:200]}", shown)
    except BaseException as exc:  # noqa: BLE001 -- any other exception is an unhelpful crash
        if isinstance(exc, KeyboardInterrupt):
            raise
        return Outcome(case.name, case.module, arg.name, label, "crash", f"{type(exc).__name__}: {str(exc)[:200]}",
                       shown)
    shows_numpy = [str(w.message) for w in said if NUMPY_REPR.search(str(w.message))]
    if shows_numpy:
        return Outcome(case.name, case.module, arg.name, label, "crash",
                       f"numpy reprs in a warning: {shows_numpy[0][:200]}", shown)
    if expectation == FAIL:
        return Outcome(case.name, case.module, arg.name, label, "garbage", f"accepted; returned {_short_repr(out)}",
                       shown)
    if expectation == MISSING \
            and not any(issubclass(w.category, UserWarning) and "missing" in str(w.message) for w in said) \
            and not _same(out, base):  # a NaN the estimator never reads (an item it did not select) changes nothing
        return Outcome(case.name, case.module, arg.name, label, "garbage",
                       f"accepted without a warning that cells are missing; returned {_short_repr(out)}", shown)
    if expectation == SAME and not _same(out, base):
        return Outcome(case.name, case.module, arg.name, label, "garbage",
                       f"differs from the baseline: {_short_repr(out)}", shown)
    if (not _finite(out)) if base is None else _new_nonfinite(base, out):
        return Outcome(case.name, case.module, arg.name, label, "garbage", f"NaN/inf in the output: {_short_repr(out)}",
                       shown)
    return Outcome(case.name, case.module, arg.name, label, "ok", "", shown)


def _short_repr(x: Any, n: int = 160) -> str:
    try:
        s = repr(x)
    except Exception:  # noqa: BLE001
        s = type(x).__name__
    s = " ".join(s.split())
    return s if len(s) <= n else s[: n - 3] + "..."


def campaign(cases: list[Case], seeds: range, progress: bool = False) -> list[Outcome]:
    import sys
    import time

    out = []
    for case in cases:
        t0 = time.perf_counter()
        for arg in case.args:
            for label, exp, make in arg.values():
                for s in seeds:
                    out.append(run_one(case, arg, label, exp, make, s))
        if progress:
            print(f"  .. {case.name} {time.perf_counter() - t0:.1f} s", file=sys.stderr, flush=True)
    return out
