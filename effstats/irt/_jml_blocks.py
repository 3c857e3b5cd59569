"""The joint-ML fit's pass over blocks of items (:class:`effstats.irt.IRT2PL` with ``method="jml"``), and the worker
processes that share it.

A pass updates every item's parameters by one Newton step and sums, per block of items, what the next ability step
needs. The blocks are independent, so ``n_jobs`` processes share them: the matrix, the item parameters and each
block's sums live in a file mapped into memory by every process. At each pass (a line on a worker's standard
input) the calling process writes every block's number into a pipe, and each process, itself included, reads the
next free number and runs that block until it reads a stop; a worker then answers. A pass of more blocks than the
pipe holds at once (``_MAX_TOKENS``) gives each process an equal range of the blocks instead. Processes rather than
threads: numpy releases the GIL in each call on a block's cells, but a block takes about 30 calls of 10–30 µs, and
two threads handing the GIL over at every call run a 90 × 80,000 fit 1.1 times as fast as one, two processes 1.85
times. Each block's sums
go to its own row and are added up in block order by the calling process, so the fit is the same for any
``n_jobs``.

The file imports numpy alone: a worker runs it as a script (with the caller's ``sys.path``), which starts in about
0.1 s and runs no user code (a ``multiprocessing`` start would import the user's main script again).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import numpy as np

#: Cells (models × items) from which a fit with ``n_jobs`` > 1 shares its passes among processes: below, the start
#: of a worker (about 0.1 s) outweighs what it saves.
_PROCESS_CELLS = 1 << 21


def _item_blocks(m: int, n: int, cells: int = 1 << 16) -> list[slice]:
    """Slices of about ``cells`` / m items: (models × block) intermediates of 512 KiB stay in cache, where
    whole-matrix temporaries (tens of MB at 90 × 80,000) make every elementwise step a pass over memory."""
    step = max(1, cells // max(m, 1))
    return [slice(s, min(n, s + step)) for s in range(0, n, step)]


def _sigmoid(z: np.ndarray) -> np.ndarray:
    """``expit(z) = 1 / (1 + exp(−z))`` in place, the same formula through numpy's vectorised exp (scipy's expit
    is several times slower on large arrays); agrees with expit to 1 ulp."""
    np.negative(z, out=z)
    with np.errstate(over="ignore"):
        return _sigmoid_of_negated(z)


def _sigmoid_of_negated(nz: np.ndarray) -> np.ndarray:
    """``expit(z)`` in place from ``nz = −z``, for a caller that ignores overflow (``exp`` overflows to inf where p
    is 0; a pass sets that once, where an ``np.errstate`` per block costs about 5 µs on numpy 1.x). A pass computes
    −z directly as ``(−X) @ par``, the same numbers as ``−(X @ par)`` (rounding is symmetric in sign), sparing a
    pass over the block."""
    np.exp(nz, out=nz)
    nz += 1.0
    return np.divide(1.0, nz, out=nz)


def _residuals(p: np.ndarray, y: np.ndarray, w: np.ndarray | None, r: np.ndarray, v: np.ndarray) -> None:
    """``r = (p − y) w``, ``v = p (1 − p) w`` (w: observed-cell weights, None for all ones), into r and v."""
    np.subtract(p, y, out=r)
    np.subtract(1.0, p, out=v)
    v *= p
    if w is not None:
        r *= w
        v *= w


def _capped(step: np.ndarray, cap: float = 1.0) -> np.ndarray:
    """Scale each row's Newton step so that its largest component is at most ``cap`` (Newton overshoots where p
    saturates; a damped step keeps the objective decreasing)."""
    big = np.abs(step)
    # no row capped (most passes): step * 1.0, the same numbers; the largest component of all rows says so in one
    # reduction, much cheaper than the rows' own maxima (a reduction over a short last axis)
    if not big.size or big.max() <= cap:
        return step
    return step * np.minimum(1.0, cap / np.maximum(big.max(axis=-1, keepdims=True), 1e-300))


class _Pass:
    """The arrays of one fit's passes: ``Y`` (m, n) as booleans (a quarter of float32's bytes to read from memory
    in each pass over a large matrix; a block casts its columns to the sweep dtype's 0 and 1 once, the same numbers),
    ``W`` (1 at observed cells) (m, n) in the sweep dtype, the item parameters ``a`` (n, d) and ``b`` (n,) in
    float64 (updated in place), the abilities' design ``X`` = [θ, −1] and its products ``XX`` in the sweep dtype
    (written by the caller before each pass), and each block's sums ``nll`` (blocks,), ``g`` (blocks, m, d) and
    ``h`` (blocks, m, d²). With ``c`` (n,) in the sweep dtype, each column stands for ``c`` items answered alike
    (:meth:`effstats.irt.IRT2PL.fit`): the objective and the ability step's sums count it that often, while its own
    Newton step is one item's."""

    def __init__(self, arrays: dict[str, np.ndarray], prior_sd_a: float, prior_sd_b: float) -> None:
        self.__dict__.update(arrays)
        self.W, self.c = arrays.get("W"), arrays.get("c")
        m, n = self.Y.shape
        self.d = self.a.shape[1]
        self.blocks = _item_blocks(m, n)
        self.pen = np.r_[np.full(self.d, 1.0 / prior_sd_a**2), 1.0 / prior_sd_b**2]
        self.pen_diag = np.diag(self.pen)
        self.floor = max(float(np.finfo(self.X.dtype).tiny), 1e-300)
        self.buf = np.empty((4, m, self.blocks[0].stop), self.X.dtype)
        self.par = np.empty((self.blocks[0].stop, self.d + 1))
        self.nx = np.empty_like(self.X)

    @staticmethod
    def layout(m: int, n: int, d: int, n_blocks: int, dtype: Any, weighted: bool,
               counted: bool = False) -> dict[str, tuple]:
        """Name → (shape, dtype) of the arrays (``counted``: with the items' counts ``c``)."""
        ft = np.dtype(dtype).str
        out = {"Y": ((m, n), "|b1"), "a": ((n, d), "<f8"), "b": ((n,), "<f8"), "X": ((m, d + 1), ft),
               "XX": ((m, (d + 1) ** 2), ft), "nll": ((n_blocks,), "<f8"), "g": ((n_blocks, m, d), "<f8"),
               "h": ((n_blocks, m, d * d), "<f8")}
        if weighted:
            out["W"] = ((m, n), ft)
        if counted:
            out["c"] = ((n,), ft)
        return out

    def run(self, lo: int, hi: int, newton: bool) -> None:
        """Blocks lo .. hi − 1: with ``newton``, one exact Newton step of every item's (d + 1)-dimensional MAP
        logistic regression (a and b updated in place); then, at the resulting parameters, the block's
        −Σ log P(observed answer) and the sums the next ability step needs, Σ_i (p − y) a_i and
        Σ_i p (1 − p) a_i a_iᵀ per model. Blocks keep each (models × items) intermediate in cache, and the
        probabilities at the updated items serve both the objective and the next ability step."""
        self.start()
        with np.errstate(over="ignore"):
            for j in range(lo, hi):
                self.block(j, newton)

    def start(self) -> None:
        """What a pass's blocks share, once the caller has written the abilities: −X, from which the blocks' logits
        come negated (see :func:`_sigmoid_of_negated`)."""
        np.negative(self.X, out=self.nx)

    def block(self, j: int, newton: bool) -> None:
        """Block ``j`` of :meth:`run`, for a caller that ignores overflow (``exp`` overflows to inf where p is 0) and
        has called :meth:`start` for this pass."""
        d, ft, Xf, XXf, pen, nx = self.d, self.X.dtype, self.X, self.XX, self.pen, self.nx
        s = self.blocks[j]
        k = s.stop - s.start
        Wk = None if self.W is None else self.W[:, s]
        p, r, v, Yk = self.buf[0, :, :k], self.buf[1, :, :k], self.buf[2, :, :k], self.buf[3, :, :k]
        # the block's answers in the sweep dtype, once: its three uses below then run numpy's loops of one dtype,
        # where each would cast the booleans again
        np.copyto(Yk, self.Y[:, s])
        par = self.par[:k]  # [a, b] of the block's items (written in place: no hstack's allocation)
        par[:, :d] = self.a[s]
        par[:, d] = self.b[s]
        if newton:
            _residuals(_sigmoid_of_negated(np.matmul(nx, par.T.astype(ft, copy=False), out=p)), Yk, Wk, r, v)
            G = r.T @ Xf + pen * par
            H = (v.T @ XXf).reshape(k, d + 1, d + 1) + self.pen_diag
            par -= _capped(np.linalg.solve(H, G[..., None])[..., 0])
            self.a[s], self.b[s] = par[:, :d], par[:, d]
        _sigmoid_of_negated(np.matmul(nx, par.T.astype(ft, copy=False), out=p))
        # P(observed answer) = p where y = 1 and 1 − p where y = 0: |1 − y − p|
        np.subtract(1.0, Yk, out=r)
        r -= p
        np.abs(r, out=r)
        # a probability of 0 (or subnormal) is floored, so that its log stays finite; a minimum (a fast reduction)
        # says whether any is, and the floor's pass (a slow one) is skipped when none is
        if r.min() < self.floor:
            np.maximum(r, self.floor, out=r)
        np.log(r, out=r)
        if Wk is not None:
            np.multiply(r, Wk, out=r)
        if self.c is not None:
            np.multiply(r, self.c[s], out=r)
        self.nll[j] = np.add.reduce(r, axis=None, dtype=np.float64)
        _residuals(p, Yk, Wk, r, v)
        ak = par[:, :d].astype(ft, copy=False)
        ck = ak if self.c is None else ak * self.c[s, None]  # each distinct item counted as often as it occurs
        self.g[j] = r @ ck
        self.h[j] = v @ (ck[:, :, None] * ak[:, None, :]).reshape(k, d * d)


def _offsets(layout: dict[str, tuple]) -> tuple[dict[str, int], int]:
    """Where each array of ``layout`` starts in the shared file (64-byte aligned), and the file's size."""
    offsets, end = {}, 0
    for name, (shape, dtype) in layout.items():
        offsets[name] = end
        end += -(-int(np.prod(shape)) * np.dtype(dtype).itemsize // 64) * 64
    return offsets, max(end, 64)


def _mapped(file: Any, layout: dict[str, tuple]) -> tuple[Any, dict[str, np.ndarray]]:
    """The arrays of ``layout`` in the open binary ``file`` (of the size :func:`_offsets` gives), mapped in
    memory."""
    offsets, size = _offsets(layout)
    mm = np.memmap(file, np.uint8, "r+", shape=(size,))
    return mm, {name: np.ndarray(shape, dtype, mm, offsets[name]) for name, (shape, dtype) in layout.items()}


#: Most blocks of a pass handed out one at a time through a pipe (4 bytes each): the pipe holds them all at once
#: (16 KiB, the smallest pipe buffer of the usual systems), so writing them never waits for a reader.
_MAX_TOKENS = 4096


class _Workers:
    """The passes of one fit, shared by the calling process and ``n_workers`` worker processes, over ``arrays``
    copied into a memory-mapped file; ``pass_`` is their :class:`_Pass` in the caller. The blocks of a pass go
    one at a time to whichever process is free (their numbers written to a pipe that every process reads, 4
    bytes at a time), so a process slowed by other jobs takes fewer; with more than ``_MAX_TOKENS`` blocks each
    process takes a contiguous range, the caller's first. A context manager: on
    exit the workers stop and the file is closed.

    The file has no name (POSIX systems only): the workers inherit its descriptor, so the system frees it when the
    last of the processes ends, however it ends. A worker stops at the end of its standard input or of the pipe of
    block numbers, which is where it is when the calling process dies, killed or not."""

    def __init__(self, layout: dict[str, tuple], fill: dict[str, np.ndarray], prior_sd_a: float, prior_sd_b: float,
                 n_workers: int, scratch: Any, command: list[str]) -> None:
        """``scratch``: a function of a size in bytes returning an open binary file of that size, without a name,
        for the arrays (OSError where it cannot, as here on systems other than POSIX: the caller then fits
        alone); ``command``: a worker's command line, to which the path of this file is added."""
        if os.name != "posix":
            raise OSError("worker processes inherit the shared file's descriptor, which needs a POSIX system")
        self.file = scratch(_offsets(layout)[1])
        self.procs: list[subprocess.Popen] = []
        self.tokens = None
        try:
            self._mm, arrays = _mapped(self.file, layout)
            for name, x in fill.items():
                arrays[name][...] = x
            self.pass_ = _Pass(arrays, prior_sd_a, prior_sd_b)
        except BaseException:
            self.file.close()
            raise
        nb = len(self.pass_.blocks)
        edges = [round(i * nb / (n_workers + 1)) for i in range(n_workers + 2)]
        self.ranges = list(zip(edges[:-1], edges[1:]))
        env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
        self.tokens = os.pipe() if nb + n_workers + 1 <= _MAX_TOKENS else None
        spec = {"fd": self.file.fileno(), "layout": {k: [list(s), t] for k, (s, t) in layout.items()},
                "prior_sd_a": prior_sd_a, "prior_sd_b": prior_sd_b, "tokens": self.tokens[0] if self.tokens else None}
        try:
            for lo, hi in self.ranges[1:]:
                proc = subprocess.Popen(command + [os.path.abspath(__file__)], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, env=env,
                                        pass_fds=(self.file.fileno(), *(self.tokens or ())[:1]))
                self.procs.append(proc)
                proc.stdin.write((json.dumps({**spec, "lo": lo, "hi": hi}) + "\n").encode())
                proc.stdin.flush()
        except OSError:  # no worker can start (no Python at sys.executable): the caller takes every block
            self._stop()
            self.ranges = [(0, nb)]
            self._close_tokens()
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> "_Workers":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def run(self, newton: bool) -> None:
        """One pass: the workers' blocks and, meanwhile, the caller's."""
        for proc in self.procs:
            proc.stdin.write(b"n\n" if newton else b"o\n")
            proc.stdin.flush()
        if self.tokens is None:
            self.pass_.run(*self.ranges[0], newton)
        else:
            # every block's number, then a stop (−1) for each process; each write fits the pipe's atomic size and
            # holds whole numbers, so every 4-byte read takes one
            nb = len(self.pass_.blocks)
            order = np.r_[np.arange(nb), np.full(len(self.procs) + 1, -1)].astype("<i4").tobytes()
            for i in range(0, len(order), 512):
                os.write(self.tokens[1], order[i:i + 512])
            _take_blocks(self.pass_, self.tokens[0], newton)
        for proc in self.procs:
            answer = proc.stdout.readline()
            if answer != b"ok\n":
                why = answer.decode().strip() or "no answer"
                raise RuntimeError(f"IRT2PL: a worker process of the joint fit failed ({why}); n_jobs=1 fits in this "
                                   "process alone")

    def close(self) -> None:
        self._close_tokens()  # first: a worker waiting for a block number reads the end of the pipe and stops
        self._stop()
        self.pass_ = None
        self._mm = None
        self.file.close()

    def _stop(self) -> None:
        for proc in self.procs:
            try:
                proc.stdin.close()
                proc.wait(timeout=10)
            except Exception:
                proc.kill()
        self.procs = []

    def _close_tokens(self) -> None:
        for fd in self.tokens or ():
            os.close(fd)
        self.tokens = None


def _take_blocks(work: _Pass, tokens: int, newton: bool) -> None:
    """Run the blocks whose numbers this process reads from the pipe ``tokens``, until it reads a stop (−1) or the
    pipe's end (the caller stopped the fit)."""
    work.start()
    with np.errstate(over="ignore"):  # (once, not per block: see _sigmoid_of_negated)
        while True:
            token = os.read(tokens, 4)
            j = int.from_bytes(token, "little", signed=True) if len(token) == 4 else -1
            if j < 0:
                return
            work.block(j, newton)


class _InProcess:
    """The passes of one fit in the calling process alone (the interface of :class:`_Workers`)."""

    def __init__(self, layout: dict[str, tuple], fill: dict[str, np.ndarray], prior_sd_a: float,
                 prior_sd_b: float) -> None:
        arrays = {name: (fill[name].astype(dtype, copy=False) if name in fill and name not in ("a", "b")
                         else fill.get(name, None)) for name, (shape, dtype) in layout.items()}
        for name, (shape, dtype) in layout.items():
            if arrays[name] is None:
                arrays[name] = np.empty(shape, dtype)
        self.pass_ = _Pass(arrays, prior_sd_a, prior_sd_b)

    def __enter__(self) -> "_InProcess":
        return self

    def __exit__(self, *exc: Any) -> None:
        pass

    def run(self, newton: bool) -> None:
        self.pass_.run(0, len(self.pass_.blocks), newton)


def _worker() -> None:
    """A worker process: the first line of standard input says where the arrays are and which blocks are its (a
    range, or those it reads from the pipe of block numbers); each following line ("n": with the Newton step, "o":
    without) asks for one pass; it answers "ok" when done."""
    spec = json.loads(sys.stdin.buffer.readline())
    layout = {k: (tuple(s), t) for k, (s, t) in spec["layout"].items()}
    _, arrays = _mapped(open(spec["fd"], "r+b"), layout)
    work = _Pass(arrays, spec["prior_sd_a"], spec["prior_sd_b"])
    for line in sys.stdin.buffer:
        try:
            if spec["tokens"] is None:
                work.run(spec["lo"], spec["hi"], line.strip() == b"n")
            else:
                _take_blocks(work, spec["tokens"], line.strip() == b"n")
        except Exception as e:  # reported to the fit, which raises it
            sys.stdout.buffer.write(f"{type(e).__name__}: {e}".replace("\n", " ").encode() + b"\n")
            sys.stdout.buffer.flush()
            return
        sys.stdout.buffer.write(b"ok\n")
        sys.stdout.buffer.flush()


if __name__ == "__main__":
    _worker()
