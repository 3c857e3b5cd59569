"""Summary-column detection for wide score tables: rankings, counts and row summaries that are not scenarios."""
from __future__ import annotations

import re
import warnings
from typing import Any

import numpy as np
import pandas as pd

from .._published import _aggregates_of_rest, _decimals
from .._shared import _tie_ranks

_SUMMARY_NAME = re.compile(r"\b(sd|std|stdev|std\.?\s*dev\.?|standard deviation|variance|iqr|spread|median)\b", re.I)


def _rank_like(v: pd.Series) -> bool:
    """Integers from 1 to at most the number of rows, nearly all distinct (ties allowed), at least 3 of them."""
    r = v.to_numpy(dtype=float)
    x = r[~np.isnan(r)]
    if x.size < 3 or not (x == np.round(x)).all() or x.min() < 1 or x.max() > len(r):
        return False
    return len(np.unique(x)) >= 0.8 * x.size


def _is_rank(v: pd.Series, others: pd.DataFrame) -> bool:
    """A published ranking: integers from 1 to at most the number of rows, nearly all distinct (ties allowed), that
    order the models as the other columns' mean does (Spearman ρ ≤ −0.5: rank 1 is the best)."""
    return bool(others.shape[1]) and _rank_like(v) and _reversed(v, others)


def _reversed(v: pd.Series, others: pd.DataFrame) -> bool:
    """``v`` orders the models the other way round from the mean of the ``others``' ranks (Spearman ρ ≤ −0.5):
    lower is better (a rank, a mean rank)."""
    if not others.shape[1]:
        return False
    r = v.to_numpy(dtype=float)
    have = ~np.isnan(r)
    x = r[have]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # rows without any other score
        # the mean of the other columns' ranks: no column (a parameter count) outweighs the others by its scale
        mean = np.nanmean(others.rank().to_numpy(dtype=float), axis=1)[have]
    ok = ~np.isnan(mean)
    if ok.sum() < 3 or np.ptp(mean[ok]) == 0:
        return False
    from scipy.stats import spearmanr

    return bool(spearmanr(x[ok], mean[ok]).statistic <= -0.5)


def _tracks(v: pd.Series, ref: pd.Series | None, others: pd.DataFrame) -> bool:
    """Whether ``v`` orders the models as the published aggregate ``ref`` does (else as the mean rank of the
    ``others``): Spearman ρ ≥ 0.5 over the rows holding both."""
    from scipy.stats import spearmanr

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # rows without any other score
        r = ref.to_numpy(dtype=float) if ref is not None else np.nanmean(others.rank().to_numpy(dtype=float), axis=1)
    x = v.to_numpy(dtype=float)
    ok = ~np.isnan(x) & ~np.isnan(r)
    if ok.sum() < 3 or np.ptp(x[ok]) == 0 or np.ptp(r[ok]) == 0:
        return False
    return bool(spearmanr(x[ok], r[ok]).statistic >= 0.5)


def _summary_columns(num: pd.DataFrame, cand: list, decimals: dict, ref: pd.Series | None = None) -> dict:
    """Numeric columns of a wide table that are not scenarios, by content: off the scores' scale (a parameter
    count among percentages; whole numbers over 10 times every other column, not ordering the models as the
    published aggregate ``ref`` does: a vote count among Elo ratings), the row median / standard deviation /
    minimum / maximum of the other columns within the rounding of the printed numbers, or named like a median or a
    dispersion (SD, Std, IQR). Returns column -> why.

    The table is read into one array and each column compared with a mask of the others: a leaderboard of
    thousands of columns costs a pass over the others per column, not a pandas selection of them. The columns set
    aside are left out of the scale and the shares of the others, and the rest judged again (a price among
    fractions is off their scale once a parameter count and a year no longer count among the scores)."""
    out = _summary_pass(num, cand, decimals, ref)
    while out and (more := _summary_pass(num, [c for c in cand if c not in out], decimals, ref)):
        out.update(more)
    return {c: out[c] for c in cand if c in out}


def _summary_pass(num: pd.DataFrame, cand: list, decimals: dict, ref: pd.Series | None = None) -> dict:
    """One pass of :func:`_summary_columns` over the columns ``cand``."""
    out: dict = {}
    if not cand:
        return out
    x_all = num[cand].to_numpy(dtype=float)
    with np.errstate(invalid="ignore"):
        maxima, minima = num[cand].max().to_numpy(dtype=float), num[cand].min().to_numpy(dtype=float)
    # the scores' scale: fractions or percent, where at least 80% of the other columns lie
    share = {t: ((maxima <= t) & (minima >= 0)).astype(float) for t in (1.0, 100.0)}
    share = {t: (v.sum() - v) / max(len(cand) - 1, 1) for t, v in share.items()}
    infinite = np.isinf(x_all).any(axis=0)
    # a count (votes, battles, samples) among scores: whole numbers beyond 100 and over 10 times every other
    # column's largest magnitude, beside at least 2 other columns (Elo ratings beside a vote count); below 2**53,
    # where floats still tell whole numbers from others (1e308 is "whole" only for want of digits); and not ordering
    # the models as the published aggregate (else the other columns) does: a score on a wide scale does
    with np.errstate(invalid="ignore"):
        absmax = np.nanmax(np.abs(x_all), axis=0, initial=0.0)
    whole = np.all(np.isnan(x_all) | (x_all == np.round(x_all)), axis=0)
    # a column of few whole-number levels (a 0/1 flag, parameter sizes 7/13/70, a count of tasks passed) among
    # columns that print decimals: levels at most 10 or one more than the columns, each about 3 rows or more
    n_obs = (~np.isnan(x_all)).sum(axis=0)
    share_whole = (whole.sum() - whole) / max(len(cand) - 1, 1)
    coded = whole & (share_whole <= 0.2) & (len(cand) >= 4) & np.array(
        [len(np.unique(x_all[~np.isnan(x_all[:, i]), i])) <= min(max(10, len(cand) + 1), n_obs[i] / 3)
         for i in range(len(cand))])
    # every other column's largest magnitude: the largest of all but where the column is it, then the second
    big = np.sort(absmax)[::-1]
    other_max = np.where(absmax == big[0], big[1], big[0]) if len(big) > 1 else np.full(len(big), -np.inf)
    for i, c in enumerate(cand):
        count = (len(cand) >= 3 and whole[i] and minima[i] >= 0 and 100 < maxima[i] < 2.0 ** 53 and other_max[i] > 0
                 and maxima[i] > 10 * other_max[i])
        top = next((t for t in (1.0, 100.0) if len(cand) - 1 >= 3 and share[t][i] >= 0.8), np.nan)
        if infinite[i]:
            continue  # an infinite score is refused, not set aside
        if np.isfinite(top) and maxima[i] > 1.5 * top:
            out[c] = f"values up to {maxima[i]:g}, off the scores' scale (at most {top:g})"
        elif count and not _tracks(num[c], ref, num[[o for o in cand if o != c]]):
            out[c] = (f"whole numbers up to {maxima[i]:g}, over 10 times every other column's largest value "
                      f"({other_max[i]:g}): a count (votes, battles), not a score")
        elif _SUMMARY_NAME.search(str(c)):
            out[c] = "named like a median or a dispersion of the scores"
        elif coded[i] and (n_levels := len(np.unique(x_all[~np.isnan(x_all[:, i]), i]))) >= 2:
            out[c] = (f"whole numbers of {n_levels} levels among scores with decimals: a flag, a size or a count "
                      "(name it with --scenarios if it is a score)")
    rest = [c for c in cand if c not in out]
    x = num[rest].to_numpy(dtype=float)
    tols = np.array([0.51 * 10.0 ** -(decimals[c] if c in decimals else _decimals(num[c])) for c in rest])
    if len(rest) > 31 and not _row_statistic_screen(x, tols).any():
        return out  # no column is a row statistic of all the others: the passes below would find none
    taken = np.zeros(len(rest), bool)
    for _ in range(2):  # a median beside a standard deviation: each is found once the other is set aside
        for i, c in enumerate(rest):
            if taken[i]:
                continue
            others = ~taken
            others[i] = False
            # also without each one other column (an aggregate not yet recognised), on tables small enough
            trials = [others]
            if others.sum() <= 30:
                for d in np.flatnonzero(others):
                    trials.append(others.copy())
                    trials[-1][d] = False
            why = next((w for w in (_row_statistic(x[:, i], x[:, o], tols[i] + tols[o].max()) for o in trials
                                    if o.sum() >= 2) if w), None)
            if why:
                out[c] = why
                taken[i] = True
    return out


def _row_statistic_screen(x: np.ndarray, tols: np.ndarray) -> np.ndarray:
    """Which columns of ``x`` could be a row statistic of all the other columns (:func:`_row_statistic` of each
    column against the rest, at once): a superset, the statistics of the others computed from sorted rows and sums,
    the thresholds widened by far more than their rounding, the check against repeated columns left out. A column
    it clears is no row statistic of the others."""
    n, k = x.shape
    ok = ~np.isnan(x).any(axis=1)  # the rows each column is judged on: a missing cell anywhere drops the row
    if ok.sum() < 5 or k < 3:
        return np.zeros(k, bool)
    x = x[ok]
    m = len(x)
    top_tol = np.sort(tols)[::-1]
    tol = tols + np.where(tols == top_tol[0], top_tol[1], top_tol[0])  # the coarsest rounding among the others
    maybe = np.ptp(x, axis=0) > 20 * tol * (1 - 1e-9)
    if not maybe.any():
        return maybe
    order = np.argsort(x, axis=1, kind="stable")
    srt = np.take_along_axis(x, order, axis=1)
    pos = np.empty_like(order)
    np.put_along_axis(pos, order, np.arange(k)[None, :].repeat(m, axis=0), axis=1)

    def others_at(q: int) -> np.ndarray:  # the q-th smallest of the others, every cell's row without it
        return np.where(pos > q, srt[:, [q]], srt[:, [q + 1]])

    h = (k - 1) // 2
    median = others_at(h) if (k - 1) % 2 else (others_at(h - 1) + others_at(h)) / 2
    s1, s2 = x.sum(axis=1, keepdims=True) - x, (x * x).sum(axis=1, keepdims=True) - x * x
    var_n = np.maximum(s2 / (k - 1) - (s1 / (k - 1)) ** 2, 0)
    stats = [median, np.sqrt(var_n * (k - 1) / (k - 2)), np.sqrt(var_n), others_at(0), others_at(k - 2)]
    for ref in stats:
        with np.errstate(invalid="ignore", divide="ignore"):
            dy, dr = x - x.mean(axis=0), ref - ref.mean(axis=0)
            r = (dy * dr).sum(axis=0) / np.sqrt((dy * dy).sum(axis=0) * (dr * dr).sum(axis=0))
        close = maybe & (np.ptp(ref, axis=0) > 0) & ~(r < 0.999 - 1e-6)
        for scale in (1.0, 100.0, 0.01):
            hit = close & (np.ptp(scale * ref, axis=0) > 20 * tol * (1 - 1e-6)) & (
                np.abs(x - scale * ref).max(axis=0) <= (scale * tol + tol) * (1 + 1e-6) + 1e-12)
            if hit.any():
                return hit
    return np.zeros(k, bool)


def _row_statistic(y: np.ndarray, x: np.ndarray, tol: float) -> str | None:
    """Which row statistic of the columns ``x`` (median, standard deviation, minimum, maximum) the column ``y``
    equals within the printed rounding ``tol`` (the rounding of ``y`` plus the coarsest of ``x``'s), if any."""
    ok = ~np.isnan(y) & ~np.isnan(x).any(axis=1)
    # evidence: the column varies well beyond the rounding
    if ok.sum() < 5 or np.ptp(y[ok]) <= 20 * tol:
        return None
    if (np.abs(x[ok] - y[ok, None]).max(axis=0) <= 2 * tol).any():
        return None  # it repeats another column within rounding: near-identical scenarios, not a summary
    stats = {"median": np.median(x[ok], axis=1), "standard deviation": np.std(x[ok], axis=1, ddof=1),
             "standard deviation (n)": np.std(x[ok], axis=1), "minimum": np.min(x[ok], axis=1),
             "maximum": np.max(x[ok], axis=1)}
    for what, ref in stats.items():
        if np.ptp(ref) == 0 or np.corrcoef(y[ok], ref)[0, 1] < 0.999:  # near-zero columns agree by chance
            continue
        if what in ("minimum", "maximum"):
            # sparse columns of near-zero fractions match a minimum by chance: it must come from two columns at
            # least, each on 3 rows where it is not 0
            src = (np.argmin if what == "minimum" else np.argmax)(x[ok], axis=1)[ref != 0]
            if (np.bincount(src) >= 3).sum() < 2:
                continue
        hit = next((k for k in (1.0, 100.0, 0.01) if np.ptp(k * ref) > 20 * tol
                    and np.abs(y[ok] - k * ref).max() <= k * tol + tol), None)
        if hit is not None:
            return f"the {what.split(' (')[0]} of the other columns within rounding"
    return None


def _beyond_chance(x: np.ndarray, obs: np.ndarray, cols: np.ndarray, n_rows: int) -> bool:
    """Whether a row that gives the majority answer of the 0/1 model rows ``x`` on every one of the ``cols`` (items
    where a quarter of them or more answer otherwise) is beyond what a model does: the model row that most often
    gives the majority answer of the others there matching on all of them has a chance below 1/1000 over the
    ``n_rows`` rows. A good model on a few contentious items matches them all often enough."""
    xs, seen = np.where(obs[:, cols], x[:, cols], 0.0), obs[:, cols]
    ones, cnt = xs.sum(0) - xs, seen.sum(0) - seen  # each row's others: their right answers, their answers
    with np.errstate(invalid="ignore"):
        agree = np.where(2 * ones > cnt, xs == 1, np.where(2 * ones < cnt, xs == 0, True)) & seen
        share = np.where(seen.sum(1) > 0, agree.sum(1) / np.maximum(seen.sum(1), 1), 0.0)
    return bool(n_rows * float(share.max()) ** int(cols.sum()) < 1e-3)


def _near_by_chance(tol: np.ndarray, spread: np.ndarray, n_rows: int) -> float:
    """The chance that one of ``n_rows`` model rows lies within twice the rounding ``tol`` of a statistic in every
    column by chance, its scores spread as normal ones of standard deviation ``spread`` about it: ``n_rows`` times
    the product of each column's density at the statistic times the window's width (at most 1 a column)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where(spread > 0, 4 * tol / (spread * np.sqrt(2 * np.pi)), 1.0)
    return float(n_rows * np.prod(np.minimum(np.nan_to_num(p, nan=1.0), 1.0)))


# a row named as a summary of the others ("Majority", "ensemble vote", "avg", "SD"): it is taken as one on the
# evidence of its content alone
_SUMMARY_ROW_NAME = re.compile(
    r"(?<![a-z])(majority|vote|voting|consensus|median|mean|avg|average|ensemble|sd|std|stdev|stddev)(?![a-z])")


def _summary_rows(x: np.ndarray, tol: np.ndarray, informative: int = 0,
                  names: list[str] | None = None) -> dict[int, str]:
    """Rows of ``x`` (rows × score columns) that are the column mean, median or standard deviation of the model
    rows within the printed rounding ``tol`` (per column): a spreadsheet's foot ("Mean", "Median", "SD",
    "Average"), not models. Returns row position -> what it is.

    Where ``informative`` is set (per-item tables), a median of an even number of rows is any value between the two
    middle ones (the majority answer of 0/1 rows where they split evenly); on a leaderboard, where tied scores
    (fractions of 0) are common, it is their mean. The rows closest to a statistic of the other rows (relative to
    each column's spread) are the suspects; a summary row beside another one moves that statistic (an SD row drags
    the mean), so every subset of the 5 closest suspects is tried, each of its rows checked against its statistic
    over the rows outside it: the largest subset that holds wins. Evidence: 3 columns, 5 model rows, the row's
    values spread over 20 times the rounding, and at least ``informative`` columns where a quarter of the other
    rows or more lie off the statistic (a 0/1 row agreeing with the majority where nearly every row agrees tells
    nothing); a row matching the median of 0/1 rows there is a summary when no model row would match so often by
    chance (:func:`_beyond_chance`), and on a leaderboard (``informative`` 0) a row within the rounding of a
    statistic in every column when no model row would be so by chance (:func:`_near_by_chance` below 1/100,000: three
    columns printed to 2 decimals are no such evidence), or when its name in ``names`` says it is a summary
    ("Majority", "vote", "mean", "SD")."""
    from itertools import combinations

    n, s = x.shape
    obs = ~np.isnan(x)
    if n < 8 or s < 3:
        return {}

    def median(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if not informative:
            return (np.nanmedian(v, axis=0),) * 2
        return np.nanpercentile(v, 50, axis=0, method="lower"), np.nanpercentile(v, 50, axis=0, method="higher")

    def off(v: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        return np.maximum(np.maximum(lo - v, v - hi), 0)

    stats = {"mean": lambda v: (np.nanmean(v, axis=0),) * 2, "median": median,
             "standard deviation": lambda v: (np.nanstd(v, axis=0, ddof=1),) * 2}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        spread = np.nanstd(x, axis=0)
        spread = np.where(spread > 0, spread, np.inf)
        # leave-one-out mean and standard deviation; the median of all rows stands for the median of the others
        cnt, tot, sq = obs.sum(0), np.nansum(x, 0), np.nansum(x * x, 0)
        m1 = (tot - np.where(obs, x, 0)) / (cnt - obs)
        v1 = (sq - np.where(obs, x * x, 0) - (cnt - obs) * m1 ** 2) / (cnt - obs - 1)
        near = [np.abs(x - m1), off(x, *median(x)), np.abs(x - np.sqrt(np.maximum(v1, 0)))]
        dev = np.min([np.nanmax(np.where(obs, d, np.nan) / spread, axis=1) for d in near], axis=0)
        span = np.nanmax(np.where(obs, x, -np.inf), axis=1) - np.nanmin(np.where(obs, x, np.inf), axis=1)
    ok = (obs.sum(1) >= 3) & (span > 20 * tol.max()) & (dev < 1)
    suspects = [int(i) for i in np.argsort(np.where(ok, dev, np.inf))[:5] if ok[i]]

    for k in range(len(suspects), 0, -1):
        for sub in combinations(suspects, k):
            rest = np.ones(n, bool)
            rest[list(sub)] = False
            if rest.sum() < 5:
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                ref = {what: f(x[rest]) for what, f in stats.items()}
                # per statistic, the columns where a quarter of the model rows or more lie off it
                told = {what: (np.where(obs[rest], off(x[rest], lo, hi), 0) > 2 * tol).sum(0)
                        >= 0.25 * obs[rest].sum(0) for what, (lo, hi) in ref.items()} if informative else {}
                spread_rest = np.nanstd(x[rest], axis=0, ddof=1)

            def evident(i: int, w: str) -> bool:
                """Whether row ``i``'s closeness to statistic ``w`` is beyond a model's chance, or it is named so."""
                if names is not None and _SUMMARY_ROW_NAME.search(names[i].lower()) is not None:
                    return True
                if informative:
                    return w != "median" or _beyond_chance(x[rest], obs[rest], told[w] & obs[i], n)
                # below 1/100,000: three statistics are tried, and real scores crowd about their mean and median
                # more than normal ones (at 1/1000, 14 of about 8,000 real 3-6 column excerpts lost a model)
                return _near_by_chance(tol[obs[i]], spread_rest[obs[i]], n) < 1e-5

            got = {}
            for i in sub:
                o = obs[i]
                what = next((w for w, (lo, hi) in ref.items() if np.all(off(x[i, o], lo[o], hi[o]) <= 2 * tol[o])
                             and (not informative or (told[w] & o).sum() >= informative) and evident(i, w)), None)
                if what is None:
                    break
                got[i] = what
            else:
                return dict(sorted(got.items()))
    return {}


def _companion_columns(num: pd.DataFrame, cand: list) -> dict:
    """Columns that belong to another score column: named as it plus a suffix ("X ±", "X_stderr", "X (n)",
    "X (95% CI low)"), and by their values a count beside it (whole numbers above 1 beside scores that are not),
    an uncertainty (non-negative, at most a fifth of its typical score and under half its range), or one of a
    pair of bounds that bracket it in every row. Returns column -> why."""
    names = {str(c).strip(): c for c in cand}
    out: dict = {}
    bounds: dict = {}
    for c in cand:
        s = str(c).strip()
        # the longest other name that this one extends past a character that is not a letter or digit: looked up
        # at each such character (a pass over every name for each would cost the square of the columns)
        base = next((s[:k] for k in range(len(s) - 1, -1, -1) if not s[k].isalnum() and s[:k] in names), None)
        if base is None:
            continue
        b, x = num[names[base]].to_numpy(dtype=float), num[c].to_numpy(dtype=float)
        ok = ~np.isnan(b) & ~np.isnan(x)
        if ok.sum() < 3 or np.ptp(b[ok]) == 0:
            continue
        b, x = b[ok], x[ok]
        whole = bool((x == np.round(x)).all())
        if whole and x.max() > 1 and not (b == np.round(b)).all():
            out[c] = f"a count beside {base!r}"
        elif (x >= 0).all() and np.median(x) <= 0.2 * np.median(np.abs(b)) and x.max() < 0.5 * np.ptp(b):
            out[c] = f"an uncertainty of {base!r}: at most a fifth of its scores"
        elif np.abs(x - b).max() < 0.5 * np.ptp(b) and ((x <= b).all() or (x >= b).all()) and (x != b).any():
            bounds.setdefault(base, {}).setdefault("low" if (x <= b).all() else "high", []).append(c)
    for base, sides in bounds.items():
        if len(sides) == 2:
            for c in sides["low"] + sides["high"]:
                out[c] = f"a bound of {base!r}: the low and high columns bracket it in every row"
    return out


def summary_model_rows(rm: Any) -> dict[int, str]:
    """Rows of a per-item table (a :class:`effstats.ResponseMatrix`) that are the item means, medians (the
    majority answer of 0/1 rows) or standard deviations of the other rows (:func:`_summary_rows`): a
    spreadsheet's "Mean" or "Majority" row, an "ensemble-mean" pseudo-model. The rounding is the coarsest printed
    by a row holding fractions (a mean printed to 3 decimals beside 0/1 rows: 0.0005); a 0/1 row is judged on 20
    items or more where a quarter of the other rows or more answer otherwise, and one giving their majority answer
    on all of them is a summary only where no model row would do so by chance or where it is named as one
    ("Majority", "vote", "mean"): a good model on a few contentious items often does. Returns row position -> what
    it is.

    The rows are screened on at most 500 items spread over the table, then checked on every item."""
    n, s = rm.shape
    if n < 8 or s < 3:
        return {}
    cols = np.unique(np.linspace(0, s - 1, min(s, 500)).astype(int))
    sample = rm._take(items=cols).values_with_nan()
    # the digits each row prints: the fewest decimals (up to 6) that write every one of its cells
    digits = np.full(n, 7)
    with np.errstate(invalid="ignore"):
        for d in range(6, -1, -1):
            scaled = np.abs(sample * 10.0 ** d)
            written = np.isnan(sample) | (np.abs(scaled - np.rint(scaled)) <= 1e-6 * np.maximum(scaled, 1))
            digits[written.all(axis=1)] = d
    graded = digits[digits > 0]
    tol = 0.51 * 10.0 ** -graded.min() if graded.size else 1e-9

    names = [str(m) for m in rm.model_ids]

    def found(v: np.ndarray) -> dict[int, str]:
        return _summary_rows(v, np.full(v.shape[1], tol), informative=20, names=names)

    hits = found(sample)
    return found(rm.values_with_nan()) if hits and len(cols) < s else hits


def _likely_aggregates(num: pd.DataFrame, cand: list) -> dict:
    """Columns of a wide table that order the models as the other columns together do, far closer than any
    scenario: an aggregate the exact rules do not model (a normalised average, a geometric mean). A column is one
    when its Spearman ρ with the mean or the Mean Win Rate of the other columns is 0.98 or more while every other
    column's, but one more such column at most, is 0.93 or less; on 20 models and 7 columns or more (on the public
    leaderboards no scenario passes 0.98 without other scenarios near it; on excerpts of 10-12 of their models one
    does in up to 1 table in 10: two adjacent swaps of 10 ranks give 0.985). Returns column -> why."""
    if len(cand) < 7 or len(num) < 20:
        return {}
    from scipy.stats import spearmanr

    x = num[cand].to_numpy(dtype=float)
    rest = _aggregates_of_rest(x)
    if not any((_spearman_columns(x, ref) >= 0.98 - 1e-6).any() for ref in rest.values()):
        return {}  # no column near the bar: Spearman's ρ column by column would find none
    rho = np.full(len(cand), -1.0)
    for j in range(len(cand)):
        for ref in rest.values():
            ok = ~np.isnan(x[:, j]) & np.isfinite(ref[:, j])
            if ok.sum() >= 20 and np.ptp(x[ok, j]) > 0 and np.ptp(ref[ok, j]) > 0:
                rho[j] = max(rho[j], float(spearmanr(x[ok, j], ref[ok, j]).statistic))
    top = rho >= 0.98
    if not top.any() or top.sum() > 2 or rho[~top].max() > 0.93:
        return {}
    return {cand[j]: (f"a likely aggregate of the other columns, ranking the models as they do together: "
                      f"Spearman ρ = {rho[j]:.3f}, no scenario above {rho[~top].max():.2f}")
            for j in np.flatnonzero(top)}


def _spearman_columns(x: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Spearman's ρ of each column of ``x`` with the same column of ``ref`` over the rows holding both (at least
    20, neither constant there; else -1), every column at once: average ranks, then Pearson's r (equal to
    scipy.stats.spearmanr's up to the order of the sums)."""
    ok = ~np.isnan(x) & np.isfinite(ref)
    n = ok.sum(axis=0)

    def ranks(v: np.ndarray) -> np.ndarray:  # rows not held rank last, as equals: the others' ranks are theirs
        lo, hi = _tie_ranks(np.where(ok, v, np.inf), axis=0)
        return np.where(ok, (lo + hi) / 2, 0.0)

    rx, rr = ranks(x), ranks(ref)
    with np.errstate(invalid="ignore", divide="ignore"):
        dx = np.where(ok, rx - rx.sum(axis=0) / n, 0)
        dr = np.where(ok, rr - rr.sum(axis=0) / n, 0)
        rho = (dx * dr).sum(axis=0) / np.sqrt((dx * dx).sum(axis=0) * (dr * dr).sum(axis=0))
        spread = (np.where(ok, x, -np.inf).max(axis=0) > np.where(ok, x, np.inf).min(axis=0)) & (
            np.where(ok, ref, -np.inf).max(axis=0) > np.where(ok, ref, np.inf).min(axis=0))
    return np.where((n >= 20) & spread & np.isfinite(rho), rho, -1.0)


def _foot_rows(wide: pd.DataFrame, num: pd.DataFrame, cols: list, decimals: dict) -> dict[int, str]:
    """Row positions of ``wide`` that are the column means, medians or standard deviations of the other rows in
    its numeric columns ``cols`` (:func:`_summary_rows`): a spreadsheet's foot, not models."""
    cols = [c for c, held in zip(cols, num[cols].notna().any().to_numpy()) if held]
    if len(cols) < 3:
        return {}
    tol = np.array([0.51 * 10.0 ** -(decimals[c] if c in decimals else _decimals(wide[c])) for c in cols])
    return _summary_rows(num[cols].to_numpy(dtype=float), tol, names=[str(m) for m in wide.index])


def _foot_text(rows: Any) -> str:
    """The report's words for the summary rows left out: ``rows`` as (row name, statistic) pairs, the statistic as
    :func:`_foot_rows` names it ("mean", "median", ...)."""
    return "summary rows " + "; ".join(f"{str(r)!r} (the column {what}s of the other rows within rounding)"
                                       for r, what in rows)
