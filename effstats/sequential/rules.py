"""Composable stopping rules for adaptive evaluation.

A rule looks at the statistics of every look so far (arrays of shape ``(n_runs, n_looks)``, so
thousands of simulated evaluations are judged at once) and returns where it fires. The evaluator
stops at the first look where any rule fires and reports the first rule (in the order given)
that fired there. Every rule is judged on the group-sequential boundaries or the repeated
confidence intervals, so the error rates hold whichever rule stops the evaluation.

Scores are on the scale of the data (e.g. accuracy in [0, 1]): a 2-point margin is ``0.02``.

References
----------
Jennison, C. & Turnbull, B. W. (2000). *Group Sequential Methods with Applications to Clinical Trials*.
Chapman & Hall/CRC, Boca Raton (ch. 9, repeated confidence intervals; ch. 10, stochastic curtailment).

Anonymous authors (under review). Stop guessing when to stop testing: efficient model evaluation with just
enough data. Manuscript under double-blind review (sect. 5.3, stopping criteria).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy.special import ndtr

from .._shared import _plain
from .._validation import _number
from ._looks import LookStats

__all__ = [
    "LookStats",
    "StoppingRule",
    "Efficacy",
    "Equivalence",
    "Precision",
    "Threshold",
    "Futility",
    "BetaSpendingFutility",
    "DiminishingReturns",
]


class StoppingRule:
    """Base class: ``fires(stats)`` returns a bool array (n_runs, n_looks); ``outcome(stats)`` a label per cell.

    ``bound`` says which interval makes the rule's decision and is reported when it stops the evaluation:
    ``"c2"`` the two-sided ``1 - alpha`` repeated CI, ``"c1"`` the interval whose ends are one-sided ``1 - alpha``
    bounds (two-sided level ``1 - 2 alpha``), ``"fixed"`` the fixed-sample ``1 - alpha`` interval
    (:attr:`effstats.sequential.LookStats.fixed_interval`, the precision rule's).

    A subclass sets ``name`` (the label reported when it stops an evaluation), ``bound`` and
    ``needs_null`` (whether it tests the evaluator's ``null``), and implements ``fires``.

    Attributes
    ----------
    name : str
        Label reported as the result's ``reason``.
    bound : {"c2", "c1", "fixed"}
        The interval that makes the rule's decision.
    needs_null : bool
        Whether the rule tests the evaluator's ``null``.

    See Also
    --------
    effstats.sequential.LookStats : What a rule reads.
    effstats.sequential.SequentialEvaluator : Stops at the first look where any rule fires.

    Examples
    --------
    A rule that stops once 200 items are in:

    >>> import numpy as np
    >>> from effstats.sequential import LookStats, StoppingRule
    >>> s = LookStats(n=np.array([[100, 200]]), t=np.array([0.5, 1.0]), estimate=np.array([[0.05, 0.08]]),
    ...               se=np.array([[0.03, 0.02]]), z=None, c2=np.array([2.16, 2.16]), c1=np.array([1.88, 1.88]),
    ...               null=0.0, alpha=0.05)
    >>> class AtLeast(StoppingRule):
    ...     name = "enough"
    ...     def fires(self, s):
    ...         return s.n >= 200
    >>> AtLeast().fires(s)
    array([[False,  True]])
    """

    name: str = "rule"
    bound: str = "c2"
    needs_null: bool = False

    def _scalars(self, *fields: str) -> None:
        """Each of ``fields`` given as a 0-d numeric array (what numpy's reductions give) kept as its scalar, so
        that it is checked and shown as the number it is."""
        for f in fields:
            object.__setattr__(self, f, _number(getattr(self, f)))

    def fires(self, s: LookStats) -> np.ndarray:  # pragma: no cover - abstract
        """Where the rule fires.

        Parameters
        ----------
        s : effstats.sequential.LookStats
            Statistics at every look.

        Returns
        -------
        numpy.ndarray of bool, shape (n_runs, n_looks)
        """
        raise NotImplementedError

    def outcome(self, s: LookStats) -> np.ndarray:
        """Decision label per (run, look) where the rule fires (default: its name).

        Parameters
        ----------
        s : effstats.sequential.LookStats
            Statistics at every look.

        Returns
        -------
        numpy.ndarray of object, shape (n_runs, n_looks)
        """
        return np.full(np.shape(s.estimate), self.name, dtype=object)

    def check_data(self, kind: str) -> None:
        """Raise ValueError if the rule's values cannot apply to ``kind`` ("single", "paired", "unpaired").

        Parameters
        ----------
        kind : {"single", "paired", "unpaired"}
            One model, a paired comparison or two independent arms.

        Raises
        ------
        ValueError
            If the rule cannot apply (the message names the rule's argument).
        """


def _check_pos(x: float, name: str, maximum: float | None = None, what: str = "") -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float, np.floating, np.integer)) or not np.isfinite(x) or x <= 0:
        raise ValueError(f"{name}: expected a positive number, got {_plain(x)!r}")
    if maximum is not None and x >= maximum:
        raise ValueError(f"{name}: expected a value below {maximum:g} on the scale of the scores ({what}), got "
                         f"{_plain(x)!r}; "
                         f"scores are fractions in [0, 1], so 2 points is 0.02")
    return float(x)


@dataclass(frozen=True)
class Efficacy(StoppingRule):
    """Stop when the parameter differs from the evaluator's ``null`` on the group-sequential boundary.

    ``alternative="two-sided"``: ``|z| >= c2`` (probability of any false claim at most ``alpha``; decided and
    reported on the two-sided ``1 - alpha`` repeated CI). ``"greater"`` / ``"less"``: the one-sided bound
    ``c1`` (probability of a false claim in that direction at most ``alpha``; reported on the ``c1`` interval).
    ``z`` is the score statistic at the null (McNemar's for paired binary outcomes, the exact binomial one for one
    model).

    Parameters
    ----------
    alternative : {"two-sided", "greater", "less"}, default="two-sided"
        Direction of the claim.
    name : str, default="efficacy"
        Label reported when the rule stops an evaluation.

    See Also
    --------
    effstats.sequential.SequentialEvaluator : Runs an evaluation with these rules.
    effstats.sequential.Futility : Stops when efficacy has become unlikely.
    effstats.sequential.design : The group-sequential boundaries.

    References
    ----------
    Jennison, C. & Turnbull, B. W. (2000). *Group Sequential Methods with Applications to Clinical
    Trials*. Chapman & Hall/CRC, Boca Raton (ch. 9, repeated confidence intervals).

    Examples
    --------
    >>> import numpy as np
    >>> from effstats.sequential import SequentialEvaluator, Efficacy
    >>> rng = np.random.default_rng(0)
    >>> a = (rng.random(2000) < 0.80).astype(float)  # model A, about 80 % correct
    >>> b = (rng.random(2000) < 0.70).astype(float)  # model B, about 70 % correct
    >>> r = SequentialEvaluator([Efficacy()], rng=0).fit(a, b)
    >>> r.decision, r.reason, r.n
    ('greater', 'efficacy', 400)
    """

    alternative: Literal["two-sided", "greater", "less"] = "two-sided"
    name: str = "efficacy"
    needs_null = True

    def __post_init__(self) -> None:
        if self.alternative not in ("two-sided", "greater", "less"):
            raise ValueError(f"alternative: expected 'two-sided', 'greater' or 'less', got {self.alternative!r}")

    @property
    def bound(self) -> str:  # type: ignore[override]
        """``"c2"`` for a two-sided test, ``"c1"`` for a one-sided one."""
        return "c2" if self.alternative == "two-sided" else "c1"

    def fires(self, s: LookStats) -> np.ndarray:
        """Where the test rejects ``null``: ``|z| >= c2`` (two-sided), ``z >= c1`` (``"greater"``) or
        ``z <= -c1`` (``"less"``).

        Parameters
        ----------
        s : effstats.sequential.LookStats
            Statistics at every look.

        Returns
        -------
        numpy.ndarray of bool, shape (n_runs, n_looks)
        """
        if self.alternative == "two-sided":
            return np.abs(s.z) >= s.c2
        if self.alternative == "greater":
            return s.z >= s.c1
        return s.z <= -s.c1

    def outcome(self, s: LookStats) -> np.ndarray:
        """The side of ``null`` the parameter lies on where the rule fires: ``"greater"`` or ``"less"``.

        Parameters
        ----------
        s : effstats.sequential.LookStats
            Statistics at every look.

        Returns
        -------
        numpy.ndarray of object, shape (n_runs, n_looks)
        """
        return np.where(s.z > 0, "greater", "less").astype(object)


@dataclass(frozen=True)
class Equivalence(StoppingRule):
    """Stop when the difference is within ``null ± margin``: two one-sided score tests at the margins, each on ``c1``.

    Fires when :math:`z(\\mathrm{null} - \\mathrm{margin}) \\ge c_1` and
    :math:`z(\\mathrm{null} + \\mathrm{margin}) \\le -c_1` -- the interval at ``c1`` (level
    ``1 - 2 alpha``, Schuirmann's two one-sided tests) lies inside the margins; that interval is reported. The
    probability of declaring equivalence when the true difference is at or beyond a margin is at most ``alpha``.
    ``margin`` is on the scale of the scores: 2 points is ``0.02``.

    Parameters
    ----------
    margin : float, default=0.02
        Equivalence margin, positive and below 1.
    name : str, default="equivalence"
        Label reported when the rule stops an evaluation.

    See Also
    --------
    effstats.sequential.SequentialEvaluator : Runs an evaluation with these rules.
    effstats.sequential.Efficacy : The test of a difference.

    References
    ----------
    Schuirmann, D. J. (1987). A comparison of the two one-sided tests procedure and the power approach
    for assessing the equivalence of average bioavailability. *Journal of Pharmacokinetics and
    Biopharmaceutics*, 15(6), 657–680.

    Jennison, C. & Turnbull, B. W. (2000). *Group Sequential Methods with Applications to Clinical
    Trials*. Chapman & Hall/CRC, Boca Raton (ch. 9, repeated confidence intervals).

    Examples
    --------
    >>> import numpy as np
    >>> from effstats.sequential import SequentialEvaluator, Equivalence
    >>> rng = np.random.default_rng(0)
    >>> a = (rng.random(2000) < 0.80).astype(float)  # model A, about 80 % correct
    >>> b = (rng.random(2000) < 0.70).astype(float)  # model B, about 70 % correct
    >>> r = SequentialEvaluator([Equivalence(0.2)], rng=0).fit(a, b)  # within 20 points
    >>> r.decision, r.n
    ('equivalence', 300)
    """

    margin: float = 0.02
    name: str = "equivalence"
    bound = "c1"

    def __post_init__(self) -> None:
        self._scalars("margin")
        _check_pos(self.margin, "margin", 1.0, "a difference of accuracies")

    def fires(self, s: LookStats) -> np.ndarray:
        """Where both one-sided tests reject: the parameter is within ``null ± margin``.

        Parameters
        ----------
        s : effstats.sequential.LookStats
            Statistics at every look.

        Returns
        -------
        numpy.ndarray of bool, shape (n_runs, n_looks)
        """
        null = 0.0 if s.null is None else s.null
        return (s.z_at(null - self.margin) >= s.c1) & (s.z_at(null + self.margin) <= -s.c1)


@dataclass(frozen=True)
class Precision(StoppingRule):
    r"""Stop when the ``1 - alpha`` interval is at most ``half_width`` either side: a fixed-width sequential interval.

    Chow & Robbins's (1965) rule: at each look the fixed-sample two-sided ``1 - alpha`` interval of the statistic
    (:attr:`effstats.sequential.LookStats.fixed_interval`: for one model the exact Clopper–Pearson interval, or the
    exact hypergeometric one with the finite-population correction; where that is wider than the worst-case normal
    interval, estimate ± :attr:`~effstats.sequential.LookStats.worst_case_half_width`, the latter, clipped to the
    scores' range) is computed, and the evaluation stops at the first look where half its width is at most
    ``half_width``; that interval is reported. It estimates rather
    than tests, so no alpha is spent over the looks: the items used are those of a fixed design planned at the
    true accuracy (first-order efficient), where the repeated confidence interval of a group-sequential design
    needs its larger bound (about 2.4 instead of 1.96 for Pocock spending) and so about 1.5 times the items,
    plus the looks past the fixed design's size. The rule also stops once the look reaches the worst-case fixed
    design (:attr:`effstats.sequential.LookStats.worst_case_half_width` at most ``half_width``: accuracy 1/2, per-item
    variance 1/4; 1 for a paired difference), so it never needs more items than a fixed design that assumes the
    worst, and with the finite-population correction (``fpc=True``) at the latest when every item is evaluated,
    with the benchmark's exact score and an interval of zero width.

    The interval is not a repeated confidence interval: its coverage is that of the fixed-sample interval at the
    (data-dependent) stop, ``1 - alpha`` as ``half_width`` goes to 0 (Chow & Robbins 1965). The exact intervals
    keep it there at realistic sizes: in simulations of finite benchmarks (1,635 items at ±3 points, 5,000 and
    10,000 items at ±2 points; accuracies 0.2, 0.5, 0.8 and 0.95; looks every 100 items, 1,000 runs each), the 95 %
    interval covered 0.945-0.972 (0.957 on average).
    A small-sample guard is built into the exact interval: an all-correct first look gives
    :math:`[(\alpha/2)^{1/n}, 1]`, never ``[1, 1]``.

    ``half_width`` is on the scale of the scores: ±2 points is ``0.02``.

    With reference models' outputs on the benchmark, stratified batches need fewer items: the strata of the
    reference models' difficulty order (``StratifiedAIPW(n_strata=5, allocation="proportional").fit(reference)
    .strata_``), passed as the evaluator's ``groups``, draw ``batch`` items from every stratum at each look, so every
    look is a stratified random sample and its interval the stratified one. With strata of equal size (their number
    dividing the benchmark's) the mean of the stratum means is the benchmark's score; on the CIFAR-10 and ImageNet
    predictions, at ±1 and ±2 points, the final 95 % interval covered 0.935-0.98 with 0.40-0.90 times the items of
    random batches of 100 (``benchmarks/sequential_strata.py``, ``fpc=True``). Those looks have 100 items too:
    ``initial`` and ``batch`` count items per stratum, so pass ``initial=batch=100 // n_strata``. The defaults (100
    per stratum, 500-item looks with five strata) overshoot on models near the ceiling: on CIFAR-10's best model at
    ±2 points (``fpc=True``) 500 items (680 with the logistic correction) against 340 for random batches of 100.

    ``correction="logistic"`` also corrects every look's stratified estimate by the reference models' predictions
    (prediction-powered inference, Angelopoulos et al. 2023): the evaluator's ``features=`` (the items' features
    from the reference models, e.g. ``StratifiedAIPW(...).fit(reference).features_``: logit difficulty and first
    principal component's loading) feed a penalised logistic model of the target's responses, fitted at every look
    on the items evaluated so far, cross-fitted over two folds of them (their positions in the random order), so
    that it never corrects an item it was fitted on; within every stratum the held-out fold's residuals correct the
    model's mean over the stratum, as :class:`effstats.disco.StratifiedAIPW` does for a fixed sample. At a fixed
    look the estimate is design-unbiased whatever the predictions' quality. Its variance is the stratified variance
    of the cross-fitted residuals (finite-population correction within strata, one prior degree of freedom of the
    pooled within-stratum variance in every stratum), and the interval is the Clopper–Pearson one at the effective
    sample size (Korn & Graubard 1998: ``p (1 - p) / se^2`` times ``(z / t)^2``, ``t`` the quantile on
    Satterthwaite's degrees of freedom, the design effect bounded to [1/4, 2]), which keeps the stop from trusting a
    small residual variance near accuracy 0 or 1 or from a few items of one stratum; responses all alike (or graded
    ones less than an item's worth from it) leave no residual variance to go by and take the Clopper–Pearson
    interval at the items evaluated, as without the correction. The stop at the worst-case
    fixed design and the exact score with a zero-width interval once every item is evaluated hold as without the
    correction. On the CIFAR-10 and ImageNet predictions, for the ten targets of ``benchmarks/sequential_strata.py``
    (per benchmark three models held out at random and the best and the weakest of its best 20 % held out) at ±1 and
    ±2 points, it used 0.68-0.94 times the items of the uncorrected stratified batches (0.82 on average; 0.34-0.79 times
    random batches'), and the final 95 % interval covered 0.920-0.995 of 200 orders per cell (0.958 on average; the two
    cells below 0.94 covered 0.945 and 0.960 of 1,000 orders). Those are measured ranges, not bounds: for other models
    and benchmarks the gain can be smaller (it shrinks as the references predict the target's errors less well), and a
    single run's count varies with its random order. One model only, with ``stratified=True`` and Precision rules only
    (the repeated intervals of the other rules are not corrected), offline (``fit`` and
    ``simulate`` of :class:`~effstats.sequential.SequentialEvaluator`). Up to 4,096 distinct feature rows (within
    strata) the features are used as given; beyond, they are quantised to quantile bins and every item takes its
    cell's mean features, so the estimate stays unbiased.

    Parameters
    ----------
    half_width : float, default=0.02
        Target half-width, positive and below 1.
    name : str, default="precision"
        Label reported when the rule stops an evaluation.
    correction : {None, "logistic"}, default=None
        Correct the estimate by a cross-fitted logistic model on the evaluator's ``features=`` (above).

    See Also
    --------
    effstats.sequential.SequentialEvaluator : Runs an evaluation with these rules.
    effstats.sequential.plan : Items needed for a half-width (``half_width=``).
    effstats.sequential.DiminishingReturns : Stops when the interval no longer narrows.
    effstats.disco.StratifiedAIPW : The reference models' difficulty strata (``strata_``).

    References
    ----------
    Chow, Y. S. & Robbins, H. (1965). On the asymptotic theory of fixed-width sequential confidence intervals for
    the mean. *The Annals of Mathematical Statistics*, 36(2), 457–462.

    Buonaccorsi, J. P. (1987). A note on confidence intervals for proportions in finite populations. *The
    American Statistician*, 41(3), 215–218.

    Angelopoulos, A. N., Bates, S., Fannjiang, C., Jordan, M. I. & Zrnic, T. (2023). Prediction-powered inference.
    *Science*, 382(6671), 669–674.

    Zrnic, T. & Candès, E. J. (2024). Cross-prediction-powered inference. *Proceedings of the National Academy of
    Sciences*, 121(15), e2322083121.

    Korn, E. L. & Graubard, B. I. (1998). Confidence intervals for proportions with small expected number of
    positive counts estimated from survey data. *Survey Methodology*, 24(2), 193–201.

    Examples
    --------
    >>> import numpy as np
    >>> from effstats.sequential import SequentialEvaluator, Precision
    >>> rng = np.random.default_rng(0)
    >>> a = (rng.random(2000) < 0.80).astype(float)  # model A, about 80 % correct
    >>> r = SequentialEvaluator([Precision(0.03)], rng=0).fit(a)  # one model: accuracy to +-3 points
    >>> r.decision, r.n, round(r.ci_low, 3), round(r.ci_high, 3)
    ('precision', 800, 0.771, 0.827)

    A CIFAR-10 model to ±1 point, the other 29 models the reference: stratified batches of 5 x 20 items, without
    and with the logistic correction (the model's score on all 14,021 items is 0.904):

    >>> from effstats.datasets import load_cifar10_predictions
    >>> from effstats.disco import StratifiedAIPW
    >>> rm = load_cifar10_predictions()
    >>> ref = rm.subset(models=[j for j in range(30) if j != 12])
    >>> y = rm.subset(models=[12]).values[0].astype(float)
    >>> est = StratifiedAIPW(n_strata=5, allocation="proportional").fit(ref)
    >>> for rule in (Precision(0.01), Precision(0.01, correction="logistic")):
    ...     r = SequentialEvaluator([rule], fpc=True, initial=20, batch=20, rng=0).fit(
    ...         y, groups=est.strata_, features=est.features_ if rule.correction else None)
    ...     print(r.n, round(r.estimate, 3), round(r.ci_low, 3), round(r.ci_high, 3))
    2200 0.905 0.895 0.914
    1600 0.911 0.9 0.92
    """

    half_width: float = 0.02
    name: str = "precision"
    correction: Literal["logistic"] | None = None
    bound = "fixed"

    def __post_init__(self) -> None:
        self._scalars("half_width")
        _check_pos(self.half_width, "half_width", 1.0, "a fraction")
        if self.correction not in (None, "logistic"):
            raise ValueError(f"correction: expected None or 'logistic', got {_plain(self.correction)!r}")

    def fires(self, s: LookStats) -> np.ndarray:
        """Where the fixed-sample interval's half-width (or its worst case over the items left, when known) is at
        most ``half_width``.

        Parameters
        ----------
        s : effstats.sequential.LookStats
            Statistics at every look.

        Returns
        -------
        numpy.ndarray of bool, shape (n_runs, n_looks)
        """
        low, high = s.fixed_interval
        fire = (high - low) / 2 <= self.half_width
        worst = s.worst_case_half_width
        return fire if worst is None else fire | (worst <= self.half_width)


@dataclass(frozen=True)
class Threshold(StoppingRule):
    """Stop when the score is confidently above and/or below ``tau`` (score test at ``tau``).

    ``direction="above"``: :math:`z(\\tau) \\ge c_1`; ``"below"``: :math:`z(\\tau) \\le -c_1` (each a one-sided test
    at level ``alpha``, reported on the ``c1`` interval). ``"both"``: :math:`|z(\\tau)| \\ge c_2` -- the two-sided ``1 -
    alpha`` repeated CI excludes ``tau``, so a wrong claim either way has probability at most ``alpha``. ``tau`` is on
    the scale of the scores (60 points is ``0.6``; a difference of 2 points is ``0.02``).

    Parameters
    ----------
    tau : float, default=0.6
        The threshold, in (-1, 1) (in (0, 1) for one model).
    direction : {"above", "below", "both"}, default="both"
        Which claims stop the evaluation.
    name : str, default="threshold"
        Label reported when the rule stops an evaluation.

    See Also
    --------
    effstats.sequential.SequentialEvaluator : Runs an evaluation with these rules.
    effstats.sequential.Efficacy : The test against the evaluator's ``null``.

    References
    ----------
    Jennison, C. & Turnbull, B. W. (2000). *Group Sequential Methods with Applications to Clinical
    Trials*. Chapman & Hall/CRC, Boca Raton (ch. 9, repeated confidence intervals).

    Examples
    --------
    >>> import numpy as np
    >>> from effstats.sequential import SequentialEvaluator, Threshold
    >>> rng = np.random.default_rng(0)
    >>> a = (rng.random(2000) < 0.80).astype(float)  # model A, about 80 % correct
    >>> b = (rng.random(2000) < 0.70).astype(float)  # model B, about 70 % correct
    >>> r = SequentialEvaluator([Threshold(0.75, "above")], rng=0).fit(a)
    >>> r.decision, r.n
    ('above 0.75', 700)
    """

    tau: float = 0.6
    direction: Literal["above", "below", "both"] = "both"
    name: str = "threshold"

    def __post_init__(self) -> None:
        self._scalars("tau")
        if self.direction not in ("above", "below", "both"):
            raise ValueError(f"direction: expected 'above', 'below' or 'both', got {self.direction!r}")
        if isinstance(self.tau, bool) or not isinstance(self.tau, (int, float, np.floating, np.integer)) \
                or not np.isfinite(self.tau):
            raise ValueError(f"tau: expected a finite number, got {_plain(self.tau)!r}")
        if not -1 < self.tau < 1:
            raise ValueError(f"tau: expected a value in (-1, 1) on the scale of the scores, got {_plain(self.tau)!r}; "
                             "scores are fractions in [0, 1], so 60 points is 0.6")

    @property
    def bound(self) -> str:  # type: ignore[override]
        """``"c2"`` for ``direction="both"``, ``"c1"`` for one direction."""
        return "c2" if self.direction == "both" else "c1"

    def check_data(self, kind: str) -> None:
        """Raise ValueError when ``tau`` cannot be a score of ``kind``: one model's score lies in (0, 1).

        Parameters
        ----------
        kind : {"single", "paired", "unpaired"}
            One model, a paired comparison or two independent arms.
        """
        if kind == "single" and not 0 < self.tau < 1:
            raise ValueError(f"tau: a single model's score lies in [0, 1]; expected tau in (0, 1), got "
                             f"{_plain(self.tau)!r}")

    def _ab(self, s: LookStats):
        z = s.z_at(self.tau)
        c = s.c2 if self.direction == "both" else s.c1
        return z >= c, z <= -c

    def fires(self, s: LookStats) -> np.ndarray:
        """Where the score test at ``tau`` rejects on the side(s) ``direction`` names.

        Parameters
        ----------
        s : effstats.sequential.LookStats
            Statistics at every look.

        Returns
        -------
        numpy.ndarray of bool, shape (n_runs, n_looks)
        """
        above, below = self._ab(s)
        if self.direction == "above":
            return above
        if self.direction == "below":
            return below
        return above | below

    def outcome(self, s: LookStats) -> np.ndarray:
        """``"above <tau>"`` or ``"below <tau>"``: the side of ``tau`` the score lies on where the rule fires.

        Parameters
        ----------
        s : effstats.sequential.LookStats
            Statistics at every look.

        Returns
        -------
        numpy.ndarray of object, shape (n_runs, n_looks)
        """
        above, _ = self._ab(s)
        return np.where(above, f"above {self.tau:g}", f"below {self.tau:g}").astype(object)


@dataclass(frozen=True)
class Futility(StoppingRule):
    """Stop when the final test is unlikely to reject at the smallest difference worth detecting, ``effect``.

    Conditional power at look ``k`` under the drift of ``effect`` (Brownian motion on the information fraction
    ``t``; Jennison & Turnbull 2000, sec. 10.2), against the **full design's final bound** (``c2_final`` for a
    two-sided, ``c1_final`` for a one-sided efficacy test), whatever the look. ``effect`` is required: conditional
    power under the current trend has no error guarantee. Stopping when it falls below ``threshold`` (gamma)
    costs at most ``gamma * beta / (1 - gamma)`` of the power at ``effect`` (conditional power is a martingale
    under that drift: Lan, Simon & Halperin 1982), where beta is the type-II error without futility stopping;
    being non-binding it never raises the type-I error.

    Parameters
    ----------
    threshold : float, default=0.1
        Conditional power (gamma) below which the rule fires, in (0, 1).
    effect : float
        The smallest difference worth detecting, on the scale of the scores (required).
    alternative : {"two-sided", "greater"}, default="two-sided"
        The efficacy test whose final bound is used.
    name : str, default="futility"
        Label reported when the rule stops an evaluation.

    See Also
    --------
    effstats.sequential.SequentialEvaluator : Runs an evaluation with these rules.
    effstats.sequential.BetaSpendingFutility : Futility on a beta-spending lower bound.
    effstats.sequential.conditional_power : Conditional power of a design.

    References
    ----------
    Lan, K. K. G., Simon, R. & Halperin, M. (1982). Stochastically curtailed tests in long-term clinical
    trials. *Communications in Statistics C*, 1(3), 207–219.

    Jennison, C. & Turnbull, B. W. (2000). *Group Sequential Methods with Applications to Clinical
    Trials*. Chapman & Hall/CRC, Boca Raton (sect. 10.2).

    Examples
    --------
    >>> import numpy as np
    >>> from effstats.sequential import SequentialEvaluator, Efficacy, Futility
    >>> rng = np.random.default_rng(0)
    >>> a = (rng.random(2000) < 0.80).astype(float)  # model A, about 80 % correct
    >>> b = (rng.random(2000) < 0.70).astype(float)  # model B, about 70 % correct
    >>> r = SequentialEvaluator([Efficacy(), Futility(0.1, effect=0.05)], rng=0).fit(a, b)
    >>> r.decision, r.reason, r.n
    ('greater', 'efficacy', 400)
    """

    threshold: float = 0.1
    effect: float | None = None
    alternative: Literal["two-sided", "greater"] = "two-sided"
    name: str = "futility"
    needs_null = True  # futility of the test of null=: on one model without it z is 0 and it stopped at once

    def __post_init__(self) -> None:
        self._scalars("threshold", "effect")
        if isinstance(self.threshold, bool) or not isinstance(self.threshold, (int, float, np.floating)) \
                or not 0 < self.threshold < 1:
            raise ValueError(f"threshold: expected a number in (0, 1), got {_plain(self.threshold)!r}")
        if self.effect is None:
            raise ValueError("effect: required, the smallest difference worth detecting on the scale of the scores "
                             "(e.g. 0.02); conditional power under the current trend has no error guarantee")
        _check_pos(self.effect, "effect", 1.0, "a difference of accuracies")
        if self.alternative not in ("two-sided", "greater"):
            raise ValueError(f"alternative: expected 'two-sided' or 'greater', got {self.alternative!r}")

    def conditional_power(self, s: LookStats) -> np.ndarray:
        """Conditional power under ``effect`` at every (run, look), against the full design's final bound.

        Parameters
        ----------
        s : effstats.sequential.LookStats
            Statistics at every look.

        Returns
        -------
        numpy.ndarray of shape (n_runs, n_looks)
            1 at the last look (nothing is left to gain).

        Examples
        --------
        >>> import numpy as np
        >>> from effstats.sequential import LookStats, Futility
        >>> s = LookStats(n=np.array([[100, 200]]), t=np.array([0.5, 1.0]), estimate=np.array([[0.05, 0.08]]),
        ...               se=np.array([[0.03, 0.02]]), z=None, c2=np.array([2.16, 2.16]), c1=np.array([1.88, 1.88]),
        ...               null=0.0, alpha=0.05)
        >>> Futility(0.1, effect=0.05).conditional_power(s).round(3)
        array([[0.61, 1.  ]])
        """
        t = np.broadcast_to(np.asarray(s.t, float), np.shape(s.z))
        rem = np.clip(1 - t, 0, None)
        z = np.abs(s.z) if self.alternative == "two-sided" else s.z
        c = s.c2_final if self.alternative == "two-sided" else s.c1_final
        b = z * np.sqrt(t)
        with np.errstate(divide="ignore", invalid="ignore"):
            drift = self.effect / (s.se * np.sqrt(t))  # effect / se at the full information
            cp = ndtr((b + drift * rem - c) / np.sqrt(rem))
        return np.where(rem > 0, np.nan_to_num(cp, nan=1.0), 1.0)

    def fires(self, s: LookStats) -> np.ndarray:
        """Where the conditional power at ``effect``
        (:meth:`effstats.sequential.Futility.conditional_power`) is below ``threshold``.

        Parameters
        ----------
        s : effstats.sequential.LookStats
            Statistics at every look.

        Returns
        -------
        numpy.ndarray of bool, shape (n_runs, n_looks)
        """
        return self.conditional_power(s) < self.threshold


@dataclass(frozen=True)
class BetaSpendingFutility(StoppingRule):
    """Stop for futility on a beta-spending lower bound (gsDesign ``test.type = 4``, non-binding).

    The lower bound spends the type-II error ``beta`` with ``spending`` / ``param`` so that a
    difference of ``effect`` (data scale) would be detected with power ``1 - beta``. ``param=None`` (default)
    means the family's default: gsDesign's ``sflpar = -2`` for ``"hsd"``, ``rho = 1`` for ``"ld_obf"``,
    ``rho = 3`` for ``"power"``, none for ``"ld_pocock"`` (which takes no parameter). The bound
    needs the drift ``effect / se_full``: ``se_full`` is the planned standard error with the full
    sample, or (None) the median over runs of ``se0 * sqrt(t)`` at the first look, ``se0`` the standard error the
    test's z divides by (the null variance's). Under the design effect a futility stop then has probability
    about ``beta`` (validation grid, pairs: 0.15 - 0.21 for beta = 0.2, lower with rare disagreement). Upper and lower
    bounds come from one ``design(test_type=4, ...)`` at the looks' fractions; being non-binding,
    stopping on it leaves the type-I error of the efficacy bound unchanged.

    ``alternative="greater"`` fires when ``z < a_k``; ``"two-sided"`` when ``|z| < a_k`` (each tail
    at level ``alpha / 2``).

    Parameters
    ----------
    effect : float, default=0.02
        Difference to detect, on the scale of the scores.
    beta : float, default=0.1
        Type-II error to spend, in (0, 0.5).
    se_full : float, optional
        Planned standard error with the full sample (default: estimated at the first look).
    spending : str, default="hsd"
        Lower-bound spending family (a spending function, not a classic shape).
    param : float, optional
        Its parameter (default: the family's; -2 for ``"hsd"``).
    alternative : {"greater", "two-sided"}, default="greater"
        The efficacy test the bound goes with.
    name : str, default="futility"
        Label reported when the rule stops an evaluation.

    See Also
    --------
    effstats.sequential.SequentialEvaluator : Runs an evaluation with these rules.
    effstats.sequential.Futility : Futility on conditional power.
    effstats.sequential.design : ``test_type=4`` designs.

    References
    ----------
    Jennison, C. & Turnbull, B. W. (2000). *Group Sequential Methods with Applications to Clinical
    Trials*. Chapman & Hall/CRC, Boca Raton (ch. 7, error spending).

    Anderson, K. M. (2026). *gsDesign: Group Sequential Design*. R package version 3.11.0.

    Examples
    --------
    >>> import numpy as np
    >>> from effstats.sequential import SequentialEvaluator, BetaSpendingFutility, Efficacy
    >>> rng = np.random.default_rng(0)
    >>> a = (rng.random(2000) < 0.80).astype(float)  # model A, about 80 % correct
    >>> b = (rng.random(2000) < 0.70).astype(float)  # model B, about 70 % correct
    >>> rules = [Efficacy("greater"), BetaSpendingFutility(effect=0.05)]
    >>> r = SequentialEvaluator(rules, rng=0).fit(a, b)
    >>> r.decision, r.n
    ('greater', 300)
    """

    effect: float = 0.02
    beta: float = 0.1
    se_full: float | None = None
    spending: str = "hsd"
    param: float | None = None
    alternative: Literal["greater", "two-sided"] = "greater"
    name: str = "futility"
    needs_null = True  # futility of the test of null=: on one model without it z is 0 and it stopped at once

    def __post_init__(self) -> None:
        from .spending import get_spending

        self._scalars("effect", "beta", "se_full", "param")
        _check_pos(self.effect, "effect", 1.0, "a difference of accuracies")
        try:  # a parameter the family cannot take is refused here, not at the first look
            sf = get_spending(self.spending, self._param(), "lower_spending")
        except ValueError as e:
            msg = str(e).replace("lower_param", "param", 1).replace("lower_spending", "spending")
            raise ValueError(msg) from None
        if sf.is_classic:
            raise ValueError(f"spending: a beta-spending bound needs a spending function (hsd, ld_obf, ld_pocock, "
                             f"power), got the classic {sf.label!r} bounds")
        if not isinstance(self.beta, (int, float, np.floating)) or not 0 < self.beta < 0.5:
            raise ValueError(f"beta: expected a number in (0, 0.5), got {_plain(self.beta)!r}")
        if self.se_full is not None:
            _check_pos(self.se_full, "se_full")
        if self.alternative not in ("greater", "two-sided"):
            raise ValueError(f"alternative: expected 'greater' or 'two-sided', got {self.alternative!r}")

    def _param(self) -> float | None:
        """``param`` or the family's default (gsDesign's sflpar = -2 for HSD; None lets the family choose)."""
        if self.param is None and isinstance(self.spending, str) and self.spending.lower() in (
                "hsd", "sfhsd", "hwang_shih_decani"):
            return -2.0
        return self.param

    def lower_bound(self, s: LookStats) -> np.ndarray:
        """The futility bound a_k on the z-scale.

        Parameters
        ----------
        s : effstats.sequential.LookStats
            Statistics at every look.

        Returns
        -------
        numpy.ndarray of shape (n_looks,)
            The lower bound at each look (equal to the upper bound at the last).

        Examples
        --------
        >>> import numpy as np
        >>> from effstats.sequential import LookStats, BetaSpendingFutility
        >>> s = LookStats(n=np.array([[100, 200]]), t=np.array([0.5, 1.0]), estimate=np.array([[0.05, 0.08]]),
        ...               se=np.array([[0.03, 0.02]]), z=None, c2=np.array([2.16, 2.16]), c1=np.array([1.88, 1.88]),
        ...               null=0.0, alpha=0.05)
        >>> BetaSpendingFutility(effect=0.05).lower_bound(s).round(3)
        array([-0.262,  1.036])
        """
        from scipy.special import ndtri

        from ._design import design

        t_all = np.asarray(s.t, float)
        # with fpc=True the look that uses up the benchmark and the one before it can both be at fraction 1: the
        # bounds are those of the distinct fractions, shared by looks at the same one
        t, at = np.unique(t_all, return_inverse=True)
        if t.size < 2:
            return np.full(t_all.size, -np.inf)
        se_full = self.se_full if self.se_full is not None else float(np.median(_test_se(s)[..., 0]) * np.sqrt(t[0]))
        a1 = s.alpha / 2 if self.alternative == "two-sided" else s.alpha
        drift = self.effect / max(se_full, 1e-12)
        # gsDesign's drift per unit information is delta = z_alpha + z_beta (n.fix = 1): scale the information
        scale = (drift / (-ndtri(a1) - ndtri(self.beta))) ** 2
        d = design(alpha=a1, beta=self.beta, test_type=4, spending=s.spending, spending_param=s.spending_param,
                   lower_spending=self.spending,
                   lower_param=self._param(), information=t * scale, max_information=scale)
        return d.lower[at]

    def fires(self, s: LookStats) -> np.ndarray:
        """Where ``z`` (``|z|`` for a two-sided test) is below the beta-spending lower bound
        (:meth:`effstats.sequential.BetaSpendingFutility.lower_bound`).

        Parameters
        ----------
        s : effstats.sequential.LookStats
            Statistics at every look.

        Returns
        -------
        numpy.ndarray of bool, shape (n_runs, n_looks)
        """
        a = self.lower_bound(s)
        z = np.abs(s.z) if self.alternative == "two-sided" else s.z
        return z < a


def _test_se(s: LookStats) -> np.ndarray:
    """The standard error the test's z divides by: the null variance's for the score statistics (a paired
    comparison at 0: the discordance rate, not the plug-in ``q - d**2``; one model: ``theta0 (1 - theta0)``).
    The futility bound's drift must be the one z has: with the plug-in se, P(futility stop) at the design effect
    exceeds beta when disagreements are frequent."""
    st, null = s.statistic, s.null
    n_eff = getattr(st, "n_eff", None)
    if null is None or n_eff is None:
        return np.asarray(s.se, float)
    if hasattr(st, "null_variance"):
        v0 = st.null_variance(null)
    else:
        v0 = np.full(np.shape(n_eff), null * (1 - null))
    with np.errstate(divide="ignore", invalid="ignore"):
        se0 = np.sqrt(v0 / n_eff)
    return np.where(np.isfinite(se0) & (se0 > 0), se0, s.se)


@dataclass(frozen=True)
class DiminishingReturns(StoppingRule):
    """Stop when the repeated CI half-width has shrunk by less than ``epsilon`` since the previous look.

    Parameters
    ----------
    epsilon : float, default=0.001
        Smallest worthwhile narrowing of the half-width per look, on the scale of the scores.
    name : str, default="diminishing_returns"
        Label reported when the rule stops an evaluation.

    See Also
    --------
    effstats.sequential.SequentialEvaluator : Runs an evaluation with these rules.
    effstats.sequential.Precision : Stops at a target half-width.

    References
    ----------
    Anonymous authors (under review). Stop guessing when to stop testing: efficient model evaluation
    with just enough data. Manuscript under double-blind review (sect. 5.3, stopping criteria).

    Examples
    --------
    >>> import numpy as np
    >>> from effstats.sequential import SequentialEvaluator, DiminishingReturns, Precision
    >>> rng = np.random.default_rng(0)
    >>> a = (rng.random(2000) < 0.80).astype(float)  # model A, about 80 % correct
    >>> b = (rng.random(2000) < 0.70).astype(float)  # model B, about 70 % correct
    >>> rules = [Precision(0.001), DiminishingReturns(0.002)]
    >>> r = SequentialEvaluator(rules, rng=0).fit(a, b)
    >>> r.reason, r.n
    ('diminishing_returns', 1300)
    """

    epsilon: float = 0.001
    name: str = "diminishing_returns"

    def __post_init__(self) -> None:
        self._scalars("epsilon")
        _check_pos(self.epsilon, "epsilon", 1.0, "a fraction")

    def fires(self, s: LookStats) -> np.ndarray:
        """Where the repeated interval's half-width shrank by less than ``epsilon`` since the previous look
        (never at the first look).

        Parameters
        ----------
        s : effstats.sequential.LookStats
            Statistics at every look.

        Returns
        -------
        numpy.ndarray of bool, shape (n_runs, n_looks)
        """
        hw = s.half_width
        gain = np.full(hw.shape, np.inf)
        gain[..., 1:] = hw[..., :-1] - hw[..., 1:]
        return gain < self.epsilon
