"""Published aggregates: which columns of a leaderboard are the mean, weighted mean or Mean Win Rate of the
others, within the rounding of the printed numbers. Shared by the score-table readers (:mod:`effstats.datasets`),
which set such columns apart from the scenarios, and the audit (:func:`effstats.reliability.audit`), which ranks
the models as the aggregate does."""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ._shared import _tie_ranks

# ---------------------------------------------------------------------------------------- published aggregates
# A column is read as an aggregate of the others when it reproduces one of them (EXACT) within the rounding of
# the printed numbers: its own rounding (half a unit of its last printed decimal) plus, for a mean, the inputs'
# rounding (a mean of values each off by at most half a unit is off by at most that). Win rates published by
# HELM are computed from unrounded scores, so rounding the inputs creates or breaks ties and no rounding bound
# holds (HELM Lite: 0.003 on a 3-decimal column; HELM classic with missing cells: 0.019). Hence the second,
# looser rule (CLOSE): Pearson r >= 0.999 and max |Δ| <= 5% of the column's range. Both need 5 models and 3 other
# columns (on 3 models x 2 columns a scenario equals the mean of two others by chance). On the
# public leaderboards in benchbench the published aggregates reach r >= 0.9999, while no scenario column
# correlates above r = 0.997 with the mean or MWR of the other columns (HEIM's watermark columns).
_EXACT_SLACK = 0.51  # half a unit of the last decimal, plus room for the binary representation of the values
_CLOSE_R = 0.999
_CLOSE_RANGE = 0.05
_MIN_ROWS, _MIN_OTHERS = 5, 3  # models and other columns needed to recognise an aggregate by its values
_EVIDENCE = 20  # an exact match needs the column's range over this many times the rounding bound


def _decimals(col: pd.Series) -> int:
    """Digits after the decimal point, the most any cell of a column prints (12 at most)."""
    def one(v: Any) -> int:
        t = str(v).strip() if isinstance(v, str) else np.format_float_positional(float(v), trim="-")
        return min(len(t.split(".")[1]), 12) if "." in t else 0
    vals = col.dropna()
    return max((one(v) for v in vals), default=0)


def _decimals_of(frame: pd.DataFrame) -> dict:
    """:func:`_decimals` of every column of ``frame``, its text cells read in one pass (a column holding other
    values, such as the means of 'a/b' cells, column by column)."""
    cells = pd.Series(frame.to_numpy(dtype=object).ravel(order="F"), dtype=object)
    text = cells.map(type).eq(str).to_numpy()
    alone = ~(text | cells.isna().to_numpy()).reshape(frame.shape, order="F").all(axis=0)
    digits = np.zeros(len(cells))
    if text.any():
        # the digits between the first point and the next (none without a point), as _decimals counts them
        after = cells[text].str.strip().str.partition(".")[2].str.partition(".")[0].str.len().clip(upper=12)
        digits[text] = after.to_numpy(dtype=float)
    most = digits.reshape(frame.shape, order="F").max(axis=0, initial=0)
    return {c: _decimals(frame.iloc[:, j]) if alone[j] else int(most[j]) for j, c in enumerate(frame.columns)}


def _norm_name(s: Any) -> str:
    return "".join(ch for ch in str(s).lower() if ch.isalnum())


def _aggregates_of_rest(x: np.ndarray) -> dict[str, np.ndarray]:
    """For every column j of x (M, S), the mean and the Mean Win Rates of the other columns: (M, S) each."""
    obs = ~np.isnan(x)
    tot, cnt = np.nansum(x, 1, keepdims=True), obs.sum(1, keepdims=True)
    # per-column win counts as effstats.reliability.mean_win_rate counts them: the other models observed in the
    # column that score strictly lower, a tie half a win under "half"; doubled to stay integers (exact rates)
    filled = np.where(obs, x, np.inf)  # a missing cell is never lower than an observed one
    low, high = _tie_ranks(filled, axis=0)
    n_opp = obs.sum(axis=0, keepdims=True) - 1
    valid = obs & (n_opp > 0)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = {"mean": (tot - np.where(obs, x, 0)) / (cnt - obs)}
        for ties in ("strict", "half"):
            wins2 = 2 * (low - 1) + (high - low if ties == "half" else 0)
            # per-column win rates: independent of the others
            wr = np.where(valid, wins2 / np.maximum(2 * n_opp, 1), 0.0)
            w_tot, w_cnt = wr.sum(1, keepdims=True), valid.sum(1, keepdims=True)
            out[f"mwr_{ties}"] = (w_tot - wr) / (w_cnt - valid)
    return out


def _detect_published(num: pd.DataFrame, *, names: Any = (), decimals: dict | None = None) -> list[dict]:
    """Columns of ``num`` (models × numeric columns) that are a published aggregate of the other columns.

    A column matches when it equals, within rounding, the mean or the Mean Win Rate (strict or half-credit
    ties) of the other columns, possibly ×100 (see the rule above), or when its name is one of ``names``
    (the table's file stem or folder). Returns one dict per detected column: ``column``, ``kind``
    ("mean" / "mwr"), ``ties``, ``scale`` (column ÷ recomputed), ``max_abs_diff``, ``r`` and ``rule``
    ("exact", "close" or "name"); best matches first.
    """
    cols = list(num.columns)
    if len(cols) < 3 or len(num) < 3:
        return []
    # by values only with enough evidence: on 3 models × 2 other columns a scenario equals their mean by chance
    by_values = len(cols) > _MIN_OTHERS and len(num) >= _MIN_ROWS
    x = num.to_numpy(dtype=float)
    dec = {c: (decimals or {}).get(c, None) for c in cols}
    dec = {c: _decimals(num[c]) if d is None else d for c, d in dec.items()}
    want = {_norm_name(n) for n in names if _norm_name(n)}
    rest = _aggregates_of_rest(x)
    # the rounding of each row's mean of the other columns: the mean of their half units over the cells it
    # averages (a column of whole numbers, such as a 0/1 flag, weighs one column's share, not the whole bound)
    obs = ~np.isnan(x)
    half = np.where(obs, np.array([0.5 * 10.0 ** -dec[c] for c in cols]), 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        in_round_all = (half.sum(1, keepdims=True) - half) / (obs.sum(1, keepdims=True) - obs)
    # a wide table's columns are judged one by one only where the values allow a match (or the name does)
    maybe = (_could_match(x, rest, in_round_all, np.array([_EXACT_SLACK * 10.0 ** -dec[c] for c in cols]))
             if by_values and len(cols) > 61 else np.full(len(cols), by_values))
    found = []
    for j, c in enumerate(cols):
        if not maybe[j] and _norm_name(c) not in want:
            continue
        y = x[:, j]
        best = None
        for key, ref_all in rest.items():
            ref = ref_all[:, j]
            ok = ~np.isnan(y) & np.isfinite(ref)
            if ok.sum() < 3 or np.ptp(y[ok]) == 0 or np.ptp(ref[ok]) == 0:
                continue
            r = float(np.corrcoef(y[ok], ref[ok])[0, 1])
            for scale in (1.0, 100.0, 0.01):
                diff = np.abs(y[ok] - scale * ref[ok])
                d = float(diff.max())
                tol = _EXACT_SLACK * 10.0 ** -dec[c] + (scale * in_round_all[ok, j] * _EXACT_SLACK / 0.5
                                                        if key == "mean" else 0)
                # evidence: the column varies well beyond the rounding (a bound near its spread proves nothing)
                exact = bool((diff <= tol).all()) and np.ptp(y[ok]) > _EVIDENCE * np.max(tol)
                rule = None if not by_values or ok.sum() < _MIN_ROWS else "exact" if exact else "close" if (
                    r >= _CLOSE_R and d <= _CLOSE_RANGE * np.ptp(y[ok])) else None
                cand = dict(column=c, kind="mean" if key == "mean" else "mwr",
                            ties=None if key == "mean" else key[4:], scale=scale, max_abs_diff=d, r=r, rule=rule,
                            _rank=(rule != "exact", d / np.ptp(y[ok])))
                if best is None or (rule is not None, -cand["_rank"][0], -cand["_rank"][1]) > (
                        best["rule"] is not None, -best["_rank"][0], -best["_rank"][1]):
                    best = cand
        if (best is None or best["rule"] != "exact") and by_values:
            best = _weighted_fit(x, j, cols, dec) or best  # exact with weights beats close without
        if best is None:
            continue
        if best["rule"] is None and _norm_name(c) in want:
            # named after the table: the aggregate whose ranking it follows best (Pearson r on the values)
            best = max((dict(best, kind="mean" if k == "mean" else "mwr", ties=None if k == "mean" else k[4:], r=rr)
                        for k, rr in _correlations(y, rest, j).items()), key=lambda b: b["r"])
            best["rule"] = "name"
        if best["rule"] is not None:
            found.append(best)
    found.sort(key=lambda b: b["_rank"])
    for b in found:
        b.pop("_rank")
    return found


def _could_match(x: np.ndarray, rest: dict, in_round: np.ndarray, unit: np.ndarray) -> np.ndarray:
    """Which columns of ``x`` could match the mean or a Mean Win Rate of the others (``rest``) by the exact or the
    close rule of :func:`_detect_published`, judged for every column at once: a superset (the thresholds widened
    far beyond the floating-point error of sums taken in another order, the evidence bound taken on the column's own
    rounding alone). ``unit``: each
    column's rounding slack; ``in_round``: the rounding of each row's mean of the others."""
    out = np.zeros(x.shape[1], bool)
    have = ~np.isnan(x)
    for key, ref in rest.items():
        ok = have & np.isfinite(ref)
        n = ok.sum(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            span_y = np.where(ok, x, -np.inf).max(axis=0) - np.where(ok, x, np.inf).min(axis=0)
            span_r = np.where(ok, ref, -np.inf).max(axis=0) - np.where(ok, ref, np.inf).min(axis=0)
            dy = np.where(ok, x - np.where(ok, x, 0).sum(axis=0) / n, 0)
            dr = np.where(ok, ref - np.where(ok, ref, 0).sum(axis=0) / n, 0)
            r = (dy * dr).sum(axis=0) / np.sqrt((dy * dy).sum(axis=0) * (dr * dr).sum(axis=0))
            valid = (n >= max(3, _MIN_ROWS)) & (span_y > 0) & (span_r > 0)
            for scale in (1.0, 100.0, 0.01):
                d = np.where(ok, np.abs(x - scale * ref), 0).max(axis=0)
                tol = unit + (scale * in_round * _EXACT_SLACK / 0.5 if key == "mean" else 0)
                tol_max = np.where(ok, tol, -np.inf).max(axis=0)
                # exact: within the rounding, over _EVIDENCE times the column's own rounding at least
                near = ((d <= tol_max * (1 + 1e-6) + 1e-12) & (span_y > _EVIDENCE * unit * (1 - 1e-6))) | (
                    (r >= _CLOSE_R - 1e-6) & (d <= _CLOSE_RANGE * span_y * (1 + 1e-6) + 1e-12))
                out |= valid & near
    return out


def _weighted_fit(x: np.ndarray, j: int, cols: list, dec: dict) -> dict | None:
    """Column ``j`` of ``x`` as a weighted mean of the other columns (``domain_average`` = 0.5 MMLU-PRO + 0.3 BBH
    + 0.2 GPQA): non-negative least squares, weights summing to 1 (or 100 / 0.01: a percent scale), on at least
    2 columns, reproducing every row within the rounding of the printed numbers; None otherwise. Where equal
    weights on the columns the fit uses reproduce it within that rounding too, they are the weights.

    The fit needs 5 more complete rows than it has columns: with fewer, least squares matches any column.
    """
    from scipy.optimize import nnls

    if not 3 <= len(cols) <= 61:  # before the other columns are copied out, once a column of a wide table
        return None
    others = [k for k in range(len(cols)) if k != j]
    y, a = x[:, j], x[:, others]
    ok = ~np.isnan(y) & ~np.isnan(a).any(axis=1)
    if ok.sum() < len(others) + 5 or np.ptp(y[ok]) == 0:
        return None
    w, _ = nnls(a[ok], y[ok])
    scale = next((k for k in (1.0, 100.0, 0.01) if abs(w.sum() / k - 1) <= 0.02), None)
    if scale is None:
        return None
    # refitted with the weights summing to the scale (a heavy extra row), so that the aggregate compared here is
    # the weighted mean the ranking computes: free weights fit the rounding too (SuperGLUE's 8 tasks: 1.0009)
    heavy = 1e3 * max(float(np.abs(a[ok]).max()), 1.0)
    w, _ = nnls(np.vstack([a[ok], np.full(len(others), heavy)]), np.append(y[ok], heavy * scale))
    w *= scale / w.sum()
    used = w > 1e-3 * max(w.sum(), 1e-300)  # a weight under 0.1 % is the fit's noise
    if used.sum() < 2:
        return None

    def bound(w: np.ndarray) -> tuple[float, float]:
        """The largest difference of ``a @ w`` from the column, and its own rounding plus the inputs', weighted
        (as for a mean)."""
        return (float(np.abs(a[ok] @ w - y[ok]).max()),
                _EXACT_SLACK * 10.0 ** -dec[cols[j]] + sum(w[i] * _EXACT_SLACK * 10.0 ** -dec[cols[k]]
                                                           for i, k in enumerate(others)))

    d, tol = bound(w)
    if d > tol or np.ptp(y[ok]) <= _EVIDENCE * tol:
        return None
    # the plain mean of the columns used, where it too reproduces the column within rounding (SuperGLUE: 8 tasks,
    # the diagnostics left out): the fitted weights differ from it only by the rounding of the printed numbers
    equal = np.where(used, scale / used.sum(), 0.0)
    d_equal, tol_equal = bound(equal)
    if d_equal <= tol_equal:
        w, d = equal, d_equal
    weights = {cols[k]: round(float(w[i] / scale), 4) for i, k in enumerate(others) if used[i]}
    return dict(column=cols[j], kind="weighted", ties=None, scale=scale, max_abs_diff=d,
                r=float(np.corrcoef(a[ok] @ w, y[ok])[0, 1]), rule="exact", weights=weights,
                _rank=(False, d / np.ptp(y[ok])))


def _weights_text(weights: dict) -> str:
    return " + ".join(f"{v:g} × {k}" for k, v in sorted(weights.items(), key=lambda kv: -kv[1]))


def _correlations(y: np.ndarray, rest: dict, j: int) -> dict[str, float]:
    out = {}
    for k, ref_all in rest.items():
        ok = ~np.isnan(y) & np.isfinite(ref_all[:, j])
        out[k] = float(np.corrcoef(y[ok], ref_all[ok, j])[0, 1]) if ok.sum() >= 3 else -np.inf
    return out
