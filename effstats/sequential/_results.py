"""What an adaptive evaluation returns: one run (:class:`SequentialResult`) or many simulated runs
(:class:`SimulationResult`), with the repeated confidence intervals of the group-sequential design they ran under.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .._results import ConfidenceInterval, check_confidence_level

__all__ = ["SequentialResult", "SimulationResult"]


def _level(bound: str, alpha: float) -> float:
    return 1 - 2 * alpha if bound == "c1" else 1 - alpha


# levels are matched by value: a level given in float32 (np.float32(0.95) is 0.949999988) is within half of
# float32's spacing near 1 (6e-8) of the level computed in float64, and is that level
LEVEL_TOL = 1e-7


def _check_level(confidence_level: Any, levels: dict, what: str) -> str:
    """The bound ("c2"/"c1") whose interval has ``confidence_level``; ValueError saying why otherwise."""
    level = check_confidence_level(confidence_level)
    for b, lv in levels.items():
        if abs(level - lv) < LEVEL_TOL:
            return b
    # shortest round-trip forms: a level refused never prints as one of those listed
    shown = ", ".join(repr(float(v)) for v in sorted(set(levels.values())))
    raise ValueError(f"confidence_level: the repeated confidence intervals of this {what} are fixed by its "
                     f"group-sequential design at [{shown}] (alpha = the evaluator's alpha); another level would "
                     f"need other boundaries, got {level!r}")


@dataclass(frozen=True)
class SequentialResult:
    """Outcome of one adaptive evaluation.

    Attributes
    ----------
    decision : str
        Label of the rule outcome that stopped the evaluation (e.g. ``"greater"``, ``"equivalence"``,
        ``"precision"``), ``"no decision"`` when the maximum sample was reached first, ``"continue"`` online.
    reason : str
        Name of the rule that fired (``"max_n"`` if none, ``"continue"`` online before a stop).
    n : int
        Items used (per model).
    fraction : float
        ``n`` / maximum sample.
    information_fraction : float
        Information at the stop / planned maximum information (what the spending function was evaluated at).
    estimate : float
        Score (one model) or difference at the stop; also ``statistic``.
    standard_error : float
        Standard error of the estimate (score-statistic model, never 0 short of an exhaustive look with ``fpc``).
    z : float
        Score statistic at the evaluator's null (0 when there is none).
    ci_low, ci_high : float
        The interval that made the decision, at ``confidence_level``: the two-sided ``1 - alpha`` repeated CI, or
        for one-sided rules (one-sided efficacy and threshold, equivalence) the interval whose ends are one-sided
        ``1 - alpha`` bounds (level ``1 - 2 alpha``), valid whatever made the evaluation stop; at a
        :class:`~effstats.sequential.Precision` stop, the fixed-sample interval the rule checks (its validity is
        the rule's). ``confidence_interval(kind="repeated")`` gives the repeated CI at any stop.
    confidence_level : float
    alpha : float
    trace : DataFrame
        One row per look: n, information, estimate, se, z, two- and one-sided bounds, the two-sided repeated CI
        (``ci_low``, ``ci_high``), with a :class:`~effstats.sequential.Precision` rule the fixed-sample interval it
        checks (``fixed_low``, ``fixed_high``: at its stop the result's ``ci_low``, ``ci_high``), with a one-sided
        :class:`~effstats.sequential.Efficacy` rule the one-sided test's repeated interval (``ci_low_one_sided``,
        ``ci_high_one_sided``: level ``1 - 2 alpha``, its end on the tested side the one-sided ``1 - alpha`` bound;
        at an efficacy stop the result's ``ci_low``, ``ci_high``), and the rules that fired.
    pvalue : float or None
        Stage-wise ordering p-value of the efficacy test (:func:`effstats.sequential.stagewise_pvalue` on
        the bounds used) at an efficacy stop or the last look; None when no efficacy test was made or another rule
        stopped the evaluation inside the continuation region.
    rci_low, rci_high : float
        The two-sided ``1 - alpha`` repeated confidence interval at the stop (``confidence_interval(kind="repeated")``
        at level ``1 - alpha``).
    low1, high1 : float
        The one-sided ``1 - alpha`` repeated confidence bounds at the stop (an interval at level ``1 - 2 alpha``).
    efficacy_alternative : {"two-sided", "greater", "less"} or None
        The :class:`~effstats.sequential.Efficacy` rule's alternative; None without an efficacy rule.
    efficacy_name : str
        The efficacy rule's name, the ``reason`` it stops with (default ``"efficacy"``).
    null : float or None
        The value the score statistic ``z`` is tested against (0 for a difference of two models; None when there
        is no null).
    fixed_sample : bool
        True when ``ci_low``, ``ci_high`` are the :class:`~effstats.sequential.Precision` rule's fixed-sample
        interval rather than a repeated confidence interval.
    fixed_low1, fixed_high1 : float
        At a precision stop, the rule's fixed-sample interval at level ``1 - 2 alpha`` (NaN otherwise).

    See Also
    --------
    effstats.sequential.SequentialEvaluator.fit : Returns this result.
    effstats.sequential.SimulationResult : The outcomes of many evaluations at once.
    effstats.sequential.stagewise_inference : Inference after the stop.

    References
    ----------
    Jennison, C. & Turnbull, B. W. (2000). *Group Sequential Methods with Applications to Clinical Trials*.
    Chapman & Hall/CRC, Boca Raton (ch. 7, information-based monitoring; ch. 9, repeated confidence intervals).

    Examples
    --------
    >>> import numpy as np
    >>> from effstats.sequential import Efficacy, SequentialEvaluator
    >>> g = np.random.default_rng(0)
    >>> a, b = (g.random(1000) < 0.80).astype(float), (g.random(1000) < 0.72).astype(float)
    >>> res = SequentialEvaluator([Efficacy()], rng=0).fit(a, b)
    >>> res.decision, res.reason, res.n
    ('greater', 'efficacy', 600)
    >>> round(res.estimate, 4), round(res.ci_low, 4), round(res.ci_high, 4)
    (0.0717, 0.0099, 0.1333)
    """

    decision: str
    reason: str
    n: int
    fraction: float
    information_fraction: float
    estimate: float
    standard_error: float
    z: float
    ci_low: float
    ci_high: float
    confidence_level: float
    alpha: float
    rci_low: float = field(repr=False, default=float("nan"))
    rci_high: float = field(repr=False, default=float("nan"))
    low1: float = field(repr=False, default=float("nan"))
    high1: float = field(repr=False, default=float("nan"))
    trace: pd.DataFrame = field(repr=False, default=None)
    pvalue: float | None = None
    efficacy_alternative: str | None = field(repr=False, default=None)
    efficacy_name: str = field(repr=False, default="efficacy")  # the Efficacy rule's name: the reason it stops with
    null: float | None = field(repr=False, default=None)
    # the deciding interval is the Precision rule's fixed-sample interval (not a repeated CI)
    fixed_sample: bool = field(repr=False, default=False)
    # at a precision stop, the rule's fixed-sample interval at 1 - 2 alpha
    fixed_low1: float = field(repr=False, default=float("nan"))
    fixed_high1: float = field(repr=False, default=float("nan"))

    @property
    def statistic(self) -> float:
        """The estimate at the stop (``estimate``), under scipy's name for a result's statistic.

        Examples
        --------
        >>> import numpy as np
        >>> from effstats.sequential import Precision, SequentialEvaluator
        >>> scores = (np.random.default_rng(1).random(400) < 0.7).astype(float)
        >>> res = SequentialEvaluator([Precision(0.07)], rng=0).fit(scores)
        >>> res.statistic == res.estimate
        True
        """
        return self.estimate

    def final_inference(self):
        """Stage-wise ordering inference after the stop: p-value, median-unbiased estimate, final CI.

        :func:`effstats.sequential.stagewise_inference` on this evaluation's efficacy test: the score statistics
        ``z`` of the looks so far (``trace["z"]``), the bounds that were used (two-sided ``trace["bound"]`` for
        ``Efficacy("two-sided")``, one-sided ``trace["bound_one_sided"]`` otherwise) and the information of each
        look in proportion to ``trace["information"]`` (the fractions the bounds were spent at), scaled to
        ``1 / se**2`` at the stop, so the drift ``theta`` is on the scale of the scores: the estimate and the
        interval are for ``parameter - null`` (the difference itself when comparing two models with ``null=0``;
        for ``Efficacy("less")`` the sign is flipped back). Normal theory on the score statistic: approximate
        where the normal approximation is (very few items or disagreements).

        Defined where the stage-wise ordering is: at an efficacy stop or at the last look of the evaluation
        (``reason`` "efficacy" or "max_n") with an :class:`~effstats.sequential.Efficacy` rule. A stop by another
        rule inside the efficacy continuation region (futility, precision, ...) has no stage-wise ordering; use
        ``confidence_interval(kind="repeated")`` (the repeated CI, valid at any stop) there.

        Returns
        -------
        StagewiseInference
            ``statistic`` (median-unbiased estimate of ``parameter - null``), ``naive_estimate``, ``pvalue``,
            ``confidence_interval(confidence_level)``, ``to_frame()``.

        Raises
        ------
        ValueError
            Without an efficacy rule, or when another rule stopped the evaluation before its last look.

        See Also
        --------
        effstats.sequential.stagewise_inference : The computation, on any design.
        effstats.sequential.SequentialResult.confidence_interval : The repeated CI (``kind="repeated"``), valid
            at any stop.

        References
        ----------
        Jennison, C. & Turnbull, B. W. (2000). *Group Sequential Methods with Applications to Clinical Trials*.
        Chapman & Hall/CRC, Boca Raton (ch. 7, information-based monitoring; ch. 9, repeated confidence intervals).

        Examples
        --------
        >>> import numpy as np
        >>> from effstats.sequential import Efficacy, SequentialEvaluator
        >>> g = np.random.default_rng(0)
        >>> a, b = (g.random(1000) < 0.80).astype(float), (g.random(1000) < 0.72).astype(float)
        >>> inf = SequentialEvaluator([Efficacy()], rng=0).fit(a, b).final_inference()
        >>> round(inf.statistic, 4), round(inf.pvalue, 4)
        (0.0605, 0.0314)
        """
        from .inference import stagewise_inference

        if self.efficacy_alternative is None or self.null is None:
            raise ValueError("final_inference: needs an Efficacy rule testing a null value (stage-wise ordering "
                             "is defined for a group-sequential test); use confidence_interval(kind='repeated') "
                             "instead")
        if self.reason not in (self.efficacy_name, "max_n"):
            raise ValueError(f"final_inference: the evaluation stopped by {self.reason!r} inside the efficacy "
                             "continuation region, where the stage-wise ordering is not defined; use "
                             "confidence_interval(kind='repeated') (the repeated CI, valid at any stop)")
        tr = self.trace
        two = self.efficacy_alternative == "two-sided"
        sign = -1.0 if self.efficacy_alternative == "less" else 1.0
        z = sign * tr["z"].to_numpy(float)
        se = tr["se"].to_numpy(float)
        if not (np.all(np.isfinite(z)) and np.isfinite(se[-1]) and se[-1] > 0):
            raise ValueError("final_inference: a look has an infinite information (exhaustive look with fpc=True) "
                             "or a zero standard error; the estimate there is exact")
        upper = tr["bound" if two else "bound_one_sided"].to_numpy(float)
        look = int(z.size)
        # information proportional to the planned information of each look (the fractions the bounds were spent
        # at), scaled to 1 / se**2 at the stop: monotone (the plug-in 1 / se**2 per look is not when disagreements
        # are rare) and the drift is on the scale of the scores
        t = tr["information"].to_numpy(float)
        res = stagewise_inference(z=float(z[-1]), look=look, information=t / (t[-1] * se[-1] ** 2), upper=upper,
                                  two_sided=two)
        if sign < 0:  # report on the scale of the scores
            object.__setattr__(res, "statistic", -res.statistic)
            object.__setattr__(res, "naive_estimate", -res.naive_estimate)
            object.__setattr__(res, "_sign", -res._sign)
            object.__setattr__(res, "z", -res.z)
        return res

    def confidence_interval(self, confidence_level: float | None = None, *,
                            kind: str = "deciding") -> ConfidenceInterval:
        """The interval that made the decision (``kind="deciding"``) or the repeated CI (``kind="repeated"``).

        ``kind="deciding"`` (default) is the rule's own final interval. At a stop by
        :class:`~effstats.sequential.Precision` it is the fixed-sample interval the rule checks (Chow & Robbins
        1965), whose coverage is the rule's (asymptotic in the half-width), at the rule's level ``1 - alpha`` or at
        ``1 - 2 alpha`` (the same fixed-sample interval at the stop, asymptotically of that level as well: the
        stopping size over the fixed design's tends to 1 at any level). At any other stop (efficacy, futility,
        equivalence, threshold, the last look) the deciding interval is a repeated CI, so the two kinds coincide.
        ``kind="repeated"`` is the repeated CI of the group-sequential design, valid whatever made the evaluation
        stop (Jennison & Turnbull 2000, ch. 9): the two-sided ``1 - alpha`` one (``rci_low``, ``rci_high``) or the
        one whose ends are the one-sided ``1 - alpha`` bounds (level ``1 - 2 alpha``; ``low1``, ``high1``). The
        design fixes these levels; any other level raises ValueError. Within one kind, a lower level never gives a
        wider interval.

        Parameters
        ----------
        confidence_level : float, optional
            ``1 - alpha`` or ``1 - 2 alpha``; default: the level of the interval that made the decision.
        kind : {"deciding", "repeated"}, default="deciding"
            Which interval (see above).

        Returns
        -------
        ConfidenceInterval
            ``low`` and ``high``.

        Raises
        ------
        ValueError
            A level the design does not have, or another ``kind``.

        See Also
        --------
        effstats.sequential.SequentialResult.final_inference : The final (stage-wise) interval after an efficacy
            stop.

        References
        ----------
        Chow, Y. S. & Robbins, H. (1965). On the asymptotic theory of fixed-width sequential confidence intervals
        for the mean. *The Annals of Mathematical Statistics*, 36(2), 457-462.

        Jennison, C. & Turnbull, B. W. (2000). *Group Sequential Methods with Applications to Clinical Trials*.
        Chapman & Hall/CRC, Boca Raton (ch. 7, information-based monitoring; ch. 9, repeated confidence intervals).

        Examples
        --------
        >>> import numpy as np
        >>> from effstats.sequential import Precision, SequentialEvaluator
        >>> scores = (np.random.default_rng(1).random(400) < 0.7).astype(float)
        >>> res = SequentialEvaluator([Precision(0.07)], rng=0).fit(scores)
        >>> ci = res.confidence_interval(0.95)
        >>> round(ci.low, 3), round(ci.high, 3)
        (0.673, 0.799)
        >>> [round(x, 3) for x in res.confidence_interval(0.9)]  # the same interval at 1 - 2 alpha
        [0.684, 0.791]
        >>> rci = res.confidence_interval(0.95, kind="repeated")
        >>> bool(rci.low <= ci.low and ci.high <= rci.high)
        True
        """
        if kind not in ("deciding", "repeated"):
            raise ValueError(f"kind: 'deciding' or 'repeated', got {kind!r}")
        levels = {"c2": 1 - self.alpha, "c1": 1 - 2 * self.alpha}
        own = (confidence_level is None
               or abs(check_confidence_level(confidence_level) - self.confidence_level) < LEVEL_TOL)
        if kind == "deciding" and self.fixed_sample:
            if not own and abs(check_confidence_level(confidence_level) - levels["c1"]) < LEVEL_TOL \
                    and np.isfinite(self.fixed_low1):
                return ConfidenceInterval(self.fixed_low1, self.fixed_high1)
            if not own:
                rep = " and ".join(repr(float(v)) for v in sorted(levels.values()))
                raise ValueError(f"confidence_level: {check_confidence_level(confidence_level)!r} is not a level of "
                                 "the deciding interval "
                                 f"(kind='deciding', the default): the precision rule stopped on its fixed-sample "
                                 f"interval, which is given at {rep} (1 - alpha and 1 - 2 alpha, the levels of the "
                                 "design's repeated CIs, kind='repeated') only; another level needs another alpha "
                                 "(SequentialEvaluator(alpha=...))")
            return ConfidenceInterval(self.ci_low, self.ci_high)
        if kind == "deciding" and own:
            return ConfidenceInterval(self.ci_low, self.ci_high)
        b = _check_level(self.confidence_level if confidence_level is None else confidence_level, levels,
                         "evaluation")
        return ConfidenceInterval(*((self.rci_low, self.rci_high) if b == "c2" else (self.low1, self.high1)))

    def to_frame(self) -> pd.DataFrame:
        """The result as a one-row table.

        Returns
        -------
        DataFrame
            Columns decision, reason, n, fraction, information_fraction, estimate, standard_error, z, pvalue
            (None when no efficacy test was made), ci_low, ci_high, confidence_level, alpha.

        See Also
        --------
        effstats.sequential.SimulationResult.to_frame : One row per simulated evaluation.

        Examples
        --------
        >>> import numpy as np
        >>> from effstats.sequential import Precision, SequentialEvaluator
        >>> scores = (np.random.default_rng(1).random(400) < 0.7).astype(float)
        >>> SequentialEvaluator([Precision(0.07)], rng=0).fit(scores).to_frame()[["decision", "n"]]
            decision    n
        0  precision  200
        """
        keys = ("decision", "reason", "n", "fraction", "information_fraction", "estimate", "standard_error", "z",
                "pvalue", "ci_low", "ci_high", "confidence_level", "alpha")
        return pd.DataFrame({k: [getattr(self, k)] for k in keys})


@dataclass(frozen=True)
class SimulationResult:
    """Vectorised outcomes of many adaptive evaluations (one per random order), arrays of shape (n_runs,).

    Attributes
    ----------
    stop_look, n : ndarray of shape (n_runs,)
        Look at which each run stopped (1-based) and the items it had used.
    fraction : ndarray of shape (n_runs,)
        ``n`` / ``max_n``.
    reason, decision : ndarray of shape (n_runs,)
        As in :class:`effstats.sequential.SequentialResult`.
    estimate, standard_error, z : ndarray of shape (n_runs,)
        At the stop.
    ci_low, ci_high : ndarray of shape (n_runs,)
        Per run, the interval that made the decision, at ``confidence_level``.
    max_n : int
        Maximum number of items per model.
    confidence_level : ndarray of shape (n_runs,)
    rci_low, rci_high : ndarray of shape (n_runs,)
        The two-sided ``1 - alpha`` repeated CI at the stop, whatever the rule.
    alpha : float

    See Also
    --------
    effstats.sequential.SequentialEvaluator.simulate : Returns this result.
    effstats.sequential.SequentialResult : One evaluation, with its trace.

    References
    ----------
    Jennison, C. & Turnbull, B. W. (2000). *Group Sequential Methods with Applications to Clinical Trials*.
    Chapman & Hall/CRC, Boca Raton (ch. 7, information-based monitoring; ch. 9, repeated confidence intervals).

    Examples
    --------
    >>> import numpy as np
    >>> from effstats.sequential import SequentialEvaluator, Threshold
    >>> scores = (np.random.default_rng(0).random(1000) < 0.8).astype(float)
    >>> sim = SequentialEvaluator([Threshold(0.75, "above")]).simulate(scores, n_runs=200, rng=1)
    >>> float(np.mean(sim.reason == "threshold")), float(np.mean(sim.n))
    (1.0, 584.5)
    """

    stop_look: np.ndarray
    n: np.ndarray
    fraction: np.ndarray
    reason: np.ndarray
    decision: np.ndarray
    estimate: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    max_n: int
    standard_error: np.ndarray = None
    z: np.ndarray = None
    confidence_level: np.ndarray = None
    rci_low: np.ndarray = None
    rci_high: np.ndarray = None
    alpha: float = 0.05

    @property
    def statistic(self) -> np.ndarray:
        """The estimates at the stops (``estimate``), under scipy's name for a result's statistic.

        Examples
        --------
        >>> import numpy as np
        >>> from effstats.sequential import Precision, SequentialEvaluator
        >>> scores = (np.random.default_rng(0).random(500) < 0.6).astype(float)
        >>> sim = SequentialEvaluator([Precision(0.05)]).simulate(scores, n_runs=50, rng=1)
        >>> sim.statistic.shape
        (50,)
        """
        return self.estimate

    def confidence_interval(self, confidence_level: float | None = None, *,
                            kind: str = "deciding") -> ConfidenceInterval:
        """Per-run intervals: the deciding ones (default) or the two-sided ``1 - alpha`` repeated CIs.

        As :meth:`effstats.sequential.SequentialResult.confidence_interval`: ``kind="deciding"`` is each run's
        own final interval (the fixed-sample one at a :class:`~effstats.sequential.Precision` stop, else a
        repeated CI), ``kind="repeated"`` the two-sided ``1 - alpha`` repeated CI of every run.

        Parameters
        ----------
        confidence_level : float, optional
            ``1 - alpha``; default: each run's deciding interval at its own level (``kind="deciding"``) or
            ``1 - alpha`` (``kind="repeated"``).
        kind : {"deciding", "repeated"}, default="deciding"

        Returns
        -------
        ConfidenceInterval
            ``low`` and ``high``, arrays of shape (n_runs,).

        See Also
        --------
        effstats.sequential.SequentialResult.confidence_interval : The same for one evaluation.

        Examples
        --------
        >>> import numpy as np
        >>> from effstats.sequential import Precision, SequentialEvaluator
        >>> scores = (np.random.default_rng(0).random(500) < 0.6).astype(float)
        >>> sim = SequentialEvaluator([Precision(0.05)]).simulate(scores, n_runs=200, rng=1)
        >>> ci = sim.confidence_interval(0.95)
        >>> truth = scores.mean()
        >>> float(np.mean((ci.low <= truth) & (truth <= ci.high))) >= 0.95
        True
        """
        if kind not in ("deciding", "repeated"):
            raise ValueError(f"kind: 'deciding' or 'repeated', got {kind!r}")
        if confidence_level is None and kind == "deciding":
            return ConfidenceInterval(self.ci_low, self.ci_high)
        level = 1 - self.alpha if confidence_level is None else check_confidence_level(confidence_level)
        _check_level(level, {"c2": 1 - self.alpha}, "simulation (two-sided repeated CIs)")
        if kind == "repeated":
            return ConfidenceInterval(self.rci_low, self.rci_high)
        # each run's deciding interval where it has this level (a precision stop's fixed-sample interval), else
        # its repeated CI
        own = np.abs(np.asarray(self.confidence_level, float) - level) < LEVEL_TOL
        return ConfidenceInterval(np.where(own, self.ci_low, self.rci_low), np.where(own, self.ci_high, self.rci_high))

    def to_frame(self) -> pd.DataFrame:
        """One row per simulated evaluation.

        Returns
        -------
        DataFrame
            Columns stop_look, n, fraction, reason, decision, estimate, standard_error, z, ci_low, ci_high,
            confidence_level, rci_low, rci_high.

        Examples
        --------
        >>> import numpy as np
        >>> from effstats.sequential import Precision, SequentialEvaluator
        >>> scores = (np.random.default_rng(0).random(500) < 0.6).astype(float)
        >>> SequentialEvaluator([Precision(0.05)]).simulate(scores, n_runs=20, rng=1).to_frame().shape
        (20, 13)
        """
        keys = ("stop_look", "n", "fraction", "reason", "decision", "estimate", "standard_error", "z", "ci_low",
                "ci_high", "confidence_level", "rci_low", "rci_high")
        return pd.DataFrame({k: getattr(self, k) for k in keys if getattr(self, k) is not None})
