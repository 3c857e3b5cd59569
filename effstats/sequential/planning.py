"""Planning a sequential evaluation: how many items, at which looks, with which bounds; and conditional power.

:func:`effstats.sequential.plan` answers questions such as "evaluate these 2 models on this benchmark with at most 5
looks: how many items do I need to detect a 2-point difference with 90 % power?" or "10 models on 5 datasets": it sizes
a fixed-sample test for the target (a difference with power, or a confidence-interval half-width), inflates it
by the group-sequential design's maximum information, and reports the maximum and expected number of items,
the items at each look and the bounds. Many models are compared pairwise with a Bonferroni-adjusted alpha
(``alpha / n_pairs`` for every pair); with Holm's step-down procedure (the default of
:func:`effstats.sequential.rank_models`) the smallest p-value is also tested at ``alpha / n_pairs`` and Holm
rejects everything Bonferroni rejects, so the same plan guarantees at least the planned power per pair.

:func:`effstats.sequential.conditional_power` is gsDesign's ``gsCP``: the probability of crossing the upper bound at a
later look given the statistic now.

Scales. The statistic is ``Z_j = estimate_j * sqrt(n_j) / sd`` for ``n_j`` items (per model; paired items for a
comparison), so the drift per item is ``effect / sd``. For a paired comparison of two models scored 0/1 the
per-item difference takes values -1, 0, 1 and its variance is ``disagreement - effect**2``, where
``disagreement`` is the fraction of items on which the two models differ; for one model's accuracy ``p`` it is
``p (1 - p)``. With several datasets the statistic is the mean of the per-dataset means with the same number of
items in each dataset; its variance per item is the mean of the per-dataset variances.

References
----------
Jennison, C. & Turnbull, B. W. (2000). *Group Sequential Methods with Applications to Clinical Trials*.
Chapman & Hall/CRC, Boca Raton (ch. 7, sample size; ch. 10, stochastic curtailment).

Lan, K. K. G. & DeMets, D. L. (1983). Discrete sequential boundaries for clinical trials. *Biometrika*,
70(3), 659–663.

Lan, K. K. G., Simon, R. & Halperin, M. (1982). Stochastically curtailed tests in long-term clinical trials.
*Communications in Statistics C*, 1(3), 207–219.

Fleiss, J. L., Levin, B. & Paik, M. C. (2003). *Statistical Methods for Rates and Proportions*, 3rd ed. Wiley,
Hoboken.

Holm, S. (1979). A simple sequentially rejective multiple test procedure. *Scandinavian Journal of
Statistics*, 6(2), 65–70.

Wassmer, G. & Brannath, W. (2016). *Group Sequential and Confirmatory Adaptive Designs in Clinical Trials*.
Springer, Cham.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any

import numpy as np
import pandas as pd
from scipy.optimize import brentq
from scipy.special import ndtr, ndtri

from .._shared import _plain
from .._validation import _number, check_array, check_fraction, check_positive_int
from ._design import GroupSequentialDesign, design
from .native import EXTREMEZ, gsprob

__all__ = ["SequentialPlan", "plan", "detectable_effect", "conditional_power"]

_CORRECTIONS = ("bonferroni", "holm", "none")
_MIN_FIRST_LOOK = 30  # items at the first look below which plan() warns that the normal approximation is poor


def _num(x: Any, name: str, low: float, high: float, *, closed_low: bool = False, closed_high: bool = False,
         what: str = "") -> float:
    x = _number(x)
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (Real, np.floating, np.integer)) or not np.isfinite(x):
        raise ValueError(f"{name}: expected a finite number{what}, got {_plain(x)!r}")
    x = float(x)
    ok_lo = x >= low if closed_low else x > low
    ok_hi = x <= high if closed_high else x < high
    if not (ok_lo and ok_hi):
        lb = "[" if closed_low else "("
        rb = "]" if closed_high else ")"
        raise ValueError(f"{name}: expected a value in {lb}{low:g}, {high:g}{rb}{what}, got {x:g}")
    return x


def _real_array(x: Any, name: str) -> np.ndarray:
    """A 0/1-D array of real numbers (booleans refused: ``sd=True`` is a mistake, not 1.0)."""
    if isinstance(x, (bool, np.bool_)) or np.asarray(x).dtype == bool:
        raise ValueError(f"{name}: expected a number or an array of numbers, got {_plain(x)!r}")
    return check_array(x, name, ndim=(0, 1)).reshape(-1)


@dataclass(frozen=True)
class SequentialPlan:
    """A planned sequential evaluation (see :func:`effstats.sequential.plan`).

    Attributes
    ----------
    design : effstats.sequential.GroupSequentialDesign
        Bounds at the per-comparison alpha.
    target : {"difference", "precision"}
        What the plan is for: detecting ``effect`` or reaching ``half_width``.
    effect, half_width : float or None
        The difference to detect, or the confidence-interval half-width to reach (scale of the scores).
    sd : float
        Standard deviation per item of the statistic's per-item contribution (pooled over datasets).
    power : float or None
        Target power (difference plans).
    alpha, alpha_per_comparison : float
        Familywise alpha and the alpha each pairwise test is planned at.
    n_comparisons : int
        Pairs compared (``n_models (n_models - 1) / 2``; 1 for one model).
    correction : {"bonferroni", "holm", "none"}
        Multiplicity adjustment over pairs.
    n_fixed : float
        Items a fixed-sample test would need (per model).
    max_n : int
        Maximum items per model (``ceil(inflation * n_fixed)``, rounded up to a multiple of ``n_datasets``).
    expected_n_h0, expected_n_h1 : float
        Expected items per model at stopping with no difference and with the target difference (difference
        plans; at the last look the interval's half-width is about the target (below it in about half of the runs)
        when ``sd`` is right).
    looks : numpy.ndarray of int, shape (k,)
        Cumulative items per model at each look.
    n_datasets : int
        Datasets averaged with equal weight.
    items_available : int or None
        Items per model the benchmark has (all datasets together, equal allocation).
    feasible : bool
        ``max_n <= items_available`` (True when no limit was given).
    power_at_available : float or None
        Power of the same design run to at most ``items_available`` items (difference plans with a limit).
    k : int
        Number of looks.
    saving_h1 : float
        Expected fraction of ``max_n`` not needed under the target difference.

    See Also
    --------
    effstats.sequential.plan : Makes a plan.
    effstats.sequential.SequentialEvaluator : Runs the evaluation it plans.

    Examples
    --------
    >>> from effstats.sequential import plan
    >>> p = plan(0.02, disagreement=0.10, looks=5, power=0.9)
    >>> p.max_n, round(p.n_fixed, 1), round(p.expected_n_h1, 1), p.looks.tolist()
    (2677, 2616.3, 1984.9, [536, 1071, 1607, 2142, 2677])
    """

    design: GroupSequentialDesign
    target: str
    effect: float | None
    half_width: float | None
    sd: float
    power: float | None
    alpha: float
    alpha_per_comparison: float
    n_comparisons: int
    correction: str
    n_fixed: float
    max_n: int
    expected_n_h0: float
    expected_n_h1: float
    looks: np.ndarray
    n_datasets: int
    items_available: int | None
    feasible: bool
    power_at_available: float | None

    @property
    def k(self) -> int:
        """Number of looks.

        Examples
        --------
        >>> from effstats.sequential import plan
        >>> plan(0.02, disagreement=0.10, looks=5).k
        5
        """
        return self.design.k

    @property
    def saving_h1(self) -> float:
        """Expected fraction of ``max_n`` not needed under the target difference (0 for precision plans).

        Examples
        --------
        >>> from effstats.sequential import plan
        >>> round(plan(0.02, disagreement=0.10, looks=5).saving_h1, 3)
        0.259
        """
        return 1 - self.expected_n_h1 / self.max_n

    def to_frame(self) -> pd.DataFrame:
        """One row per look: timing, items (per model and per dataset), bounds, nominal p, alpha spent and, for
        difference plans, the cumulative probability of crossing a bound by then (an early stop, or a decision at
        the last look) with no difference (``stop_h0``) and with the target difference (``stop_h1``).

        Returns
        -------
        pandas.DataFrame
            Indexed by ``look`` (1-based).

        Examples
        --------
        >>> from effstats.sequential import plan
        >>> plan(0.02, disagreement=0.10, looks=5).to_frame()[["items", "upper", "stop_h1"]].round(3)
              items  upper  stop_h1
        look
        1       536  4.877    0.000
        2      1071  3.357    0.100
        3      1607  2.680    0.446
        4      2142  2.290    0.746
        5      2677  2.031    0.900
        """
        d = self.design
        df = pd.DataFrame({"look": np.arange(1, d.k + 1), "timing": d.timing, "items": self.looks,
                           "items_per_dataset": self.looks // self.n_datasets, "upper": d.upper})
        if d.lower is not None:
            df["lower"] = d.lower
        df["nominal_p"] = d.nominal_p
        df["alpha_spent"] = d.alpha_spent
        if self.target == "difference":
            stop = d.upper_prob if d.lower_prob is None else d.upper_prob + d.lower_prob
            df["stop_h0"] = np.cumsum(stop[:, 0])
            df["stop_h1"] = np.cumsum(stop[:, 1])
        return df.set_index("look")

    def conditional_power(self, look: int, estimate: float, effect: Any = None) -> np.ndarray:
        """Conditional power at ``look`` given the observed ``estimate`` (scale of the scores).

        Parameters
        ----------
        look : int
            Current look, 1-based, before the last.
        estimate : float
            Estimate at ``look`` (scale of the scores).
        effect : float or array-like of shape (n_effects,), optional
            Differences to evaluate it at (scale of the scores); default ``(estimate, 0, self.effect)``: the
            current trend, no difference and the planned one.

        Returns
        -------
        numpy.ndarray of shape (n_effects,)

        See Also
        --------
        effstats.sequential.conditional_power : The same on the z-scale of a design.

        Examples
        --------
        >>> from effstats.sequential import plan
        >>> p = plan(0.02, disagreement=0.10, looks=5)
        >>> p.conditional_power(2, estimate=0.015).round(4)  # trend, no difference, planned difference
        array([0.7272, 0.1036, 0.8911])
        """
        estimate = _num(estimate, "estimate", -np.inf, np.inf)
        look = _number(look)
        if isinstance(look, bool) or not isinstance(look, Integral) or not 1 <= look < self.k:
            raise ValueError(f"look: expected an integer in [1, {self.k - 1}] (a look before the last), got "
                             f"{_plain(look)!r}")
        n = self.looks.astype(float)
        z = estimate * np.sqrt(n[look - 1]) / self.sd
        if effect is None:
            eff = np.array([estimate, 0.0, self.effect if self.effect is not None else np.nan])
            eff = eff[np.isfinite(eff)]
        else:
            eff = _real_array(effect, "effect")
        return conditional_power(self.design, look, z, theta=eff / self.sd, information=n)

    def __repr__(self) -> str:
        tgt = f"effect={self.effect:g}, power={self.power:g}" if self.target == "difference" else \
            f"half_width={self.half_width:g}"
        lim = ("" if self.items_available is None
               else f", items_available={self.items_available}, feasible={self.feasible}")
        return (f"SequentialPlan({tgt}, sd={self.sd:.4g}, k={self.k}, "
                f"alpha_per_comparison={self.alpha_per_comparison:.4g}"
                f" ({self.correction}, {self.n_comparisons} comparisons), n_fixed={self.n_fixed:.1f}, "
                f"max_n={self.max_n}, "
                f"expected_n_h1={self.expected_n_h1:.1f}{lim})")


def _one_model_sds(p0: float, effect: float) -> tuple[float, float]:
    """Per-item sd of one model's score at the null ``p0`` and at its alternative ``p0 -/+ effect`` of larger
    variance (towards 1/2: the direction a two-sided plan must cover)."""
    alts = [x for x in (p0 - effect, p0 + effect) if 0 < x < 1]
    if not alts:
        raise ValueError(f"effect: a model of accuracy {p0:g} cannot differ from it by {effect:g}")
    return float(np.sqrt(p0 * (1 - p0))), float(max(np.sqrt(x * (1 - x)) for x in alts))


def _n_fixed_one_model(p0: float, effect: float, z_a: float, z_b: float) -> float:
    """Fixed-sample items for one model of accuracy ``p0`` to detect ``effect`` (one-sample binomial).

    The variance differs under the null and the alternative near 0 and 1, so the normal formula takes each where
    it applies, ``n = ((z_a sd0 + z_b sd1) / effect)**2`` with ``sd1`` at the alternative of the larger variance
    (towards 1/2: the direction a two-sided plan must cover), and Fleiss' continuity correction for the exact
    binomial test, ``n / 4 (1 + sqrt(1 + 2 / (n effect)))**2`` (Fleiss, Levin & Paik 2003, ch. 4). The null
    variance alone would plan too few items near accuracy 0 or 1, where the alternative's variance is larger.
    """
    sd0, sd1 = _one_model_sds(p0, effect)
    n = ((z_a * sd0 + z_b * sd1) / effect) ** 2
    return float(n / 4 * (1 + np.sqrt(1 + 2 / (n * effect))) ** 2)


def plan(effect: float | None = None, *, half_width: float | None = None, sd: Any = None, disagreement: Any = None,
         accuracy: float | None = None, power: float = 0.9, alpha: float = 0.05, sided: int = 2, looks: int = 5,
         spending: Any = "ld_obf", spending_param: float | None = None, timing: Any = None, n_models: int = 2,
         n_datasets: int = 1, correction: str = "bonferroni", items_available: Any = None,
         backend: str = "native") -> SequentialPlan:
    """Plan a sequential evaluation: maximum and expected items, looks and bounds for a target.

    Parameters
    ----------
    effect : float, optional
        Difference to detect (scale of the scores: 2 points is 0.02), for a paired comparison of two models
        (or one model against a fixed value with ``n_models=1``). Give exactly one of ``effect`` and
        ``half_width``.
    half_width : float, optional
        Precision target: the half-width of the fixed-sample confidence interval at the stop (the one
        :class:`effstats.sequential.Precision` stops on, Chow & Robbins), of one model's score (``n_models=1``) or
        of each pair's difference; ``looks`` and ``spending`` set only the repeated intervals shown at the looks
        before it, so ``max_n`` does not depend on them (at ``max_n`` the final repeated interval is wider: about
        ±0.0205 for ``half_width=0.02`` with ``ld_obf`` and 5 looks, ±0.024 with ``ld_pocock``). For binary
        scores (``accuracy`` / ``disagreement``) the exact intervals' extra width (about half an item for one model,
        one for a pair) is planned for. Without ``sd``,
        ``disagreement`` or ``accuracy`` the plan assumes the worst case of 0/1 scores, the one
        :class:`effstats.sequential.Precision` stops at: per-item variance 1/4 for one model (accuracy 1/2) and 1
        for a pair (a paired difference in {-1, 0, 1} whose models disagree on every item). Any of the three
        plans no more items than that; two independent models of accuracy about 1/2 disagree on half the items
        (``disagreement=0.5``, about half the worst case's items).
    sd : float or array-like of shape (n_datasets,), optional
        Standard deviation of the per-item statistic. Alternatively:
    disagreement : float or array-like of shape (n_datasets,), optional
        Fraction of items on which two binary-scored models differ (paired difference: variance ``disagreement -
        effect**2``; ``disagreement >= |effect|``); refused with ``n_models=1``. ``disagreement == |effect|`` is a pair
        whose every disagreement favours one model (e.g. 0.5 % of the items, all one way). The plan takes the test
        statistic as normal with that per-item variance under both hypotheses. McNemar's statistic standardises by the
        observed disagreement, which moves with the difference: when most disagreements go one way it varies less than
        assumed (``sqrt(n10)``, variance 1/4, when all do), so such plans are conservative: ``plan(0.005,
        disagreement=0.005)`` asks for 2,140 items for power 0.9, and :class:`effstats.sequential.SequentialEvaluator`
        on them has power 0.98 (Monte Carlo, 20,000 runs; 0.90 at ``disagreement=0.01``).
    accuracy : float, optional
        Accuracy of the model(s). With ``n_models=1`` the variance is ``p (1 - p)`` (at most 1/4, the
        ``half_width`` plan's default); a difference plan uses it under the null and, at the alternative
        ``p -/+ effect`` of larger variance, under the alternative, with Fleiss' continuity correction for the
        exact binomial test. Monte Carlo at the detectable effect for power 0.8: 0.79 - 0.80 with 2 looks at
        accuracies 0.5 - 0.995, but 0.75 - 0.78 with 10 looks at 0.9 - 0.995 (each look's exact test is discrete;
        the validation grid reports these cells): ask for a little more power near the ceiling. With two or
        more models the variance of a paired difference depends
        on how often the models disagree, not on their accuracy alone; ``accuracy`` then plans for the largest
        disagreement two models of about that accuracy can have, ``2 min(p, 1 - p)`` (no shared errors; models
        with independent errors disagree on ``2 p (1 - p)``, correlated ones on less; at most 1, the
        ``half_width`` plan's default). Pass ``disagreement`` when you know it: the plan shrinks in proportion.
    power : float in (0, 1), default=0.9
        Target power (difference plans).
    alpha : float in (0, 1), default=0.05
        Familywise type-I error (two-sided total when ``sided=2``).
    sided : {1, 2}, default=2
        One- or two-sided tests.
    looks : int, default=5
        Number of looks (interims + final), equally spaced unless ``timing`` is given.
    spending, spending_param : str or effstats.sequential.SpendingFunction, and float, default="ld_obf"
        Spending function (see :func:`effstats.sequential.design`).
    timing : array-like of shape (looks,), optional
        Information fractions of the looks.
    n_models : int, default=2
        Models compared pairwise (``n_models (n_models - 1) / 2`` pairs); 1 for one model.
    n_datasets : int, default=1
        Datasets averaged with equal weight (mean of means); items are split equally among them.
    correction : {"bonferroni", "holm", "none"}, default="bonferroni"
        Multiplicity adjustment over pairs. Bonferroni and Holm are planned at ``alpha / n_pairs`` (Holm's
        first step; it rejects at least what Bonferroni rejects). ``"none"`` plans each pair at ``alpha``.
    items_available : int or array-like of shape (n_datasets,), optional
        Items per model the benchmark has (per dataset if an array); with equal allocation the usable total is
        ``n_datasets * min(items per dataset)``.
    backend : {"native", "gsdesign"}, default="native"
        Implementation of the design (see :func:`effstats.sequential.design`); ``"gsdesign"`` needs at least 2
        looks.

    Returns
    -------
    effstats.sequential.SequentialPlan

    Raises
    ------
    ValueError
        For bad input; the message starts with the argument's name.

    Warns
    -----
    UserWarning
        When the first look has fewer than 30 items: the normal approximation behind the bounds is then
        anti-conservative.

    See Also
    --------
    effstats.sequential.detectable_effect : The inverse: the difference a budget of items detects.
    effstats.sequential.design : The group-sequential design behind the plan.
    effstats.sequential.SequentialEvaluator : Runs the planned evaluation.
    effstats.sequential.rank_models : Ranks several models with the planned correction.

    References
    ----------
    Jennison, C. & Turnbull, B. W. (2000). *Group Sequential Methods with Applications to Clinical
    Trials*. Chapman & Hall/CRC, Boca Raton (ch. 7, sample size).

    Fleiss, J. L., Levin, B. & Paik, M. C. (2003). *Statistical Methods for Rates and Proportions*,
    3rd ed. Wiley, Hoboken (ch. 4, continuity correction).

    Holm, S. (1979). A simple sequentially rejective multiple test procedure. *Scandinavian Journal
    of Statistics*, 6(2), 65–70.

    Anonymous authors (under review). Stop guessing when to stop testing: efficient model evaluation
    with just enough data. Manuscript under double-blind review.

    Examples
    --------
    >>> from effstats.sequential import plan
    >>> p = plan(0.02, disagreement=0.10, looks=5, power=0.9)  # two models, 2-point gap, 10 % disagreement
    >>> p.max_n > p.n_fixed > p.expected_n_h1
    True
    >>> plan(0.01, accuracy=0.9, power=0.8, looks=5).max_n  # two models of ~90 %: worst-case disagreement 0.2
    16078
    >>> plan(half_width=0.02, accuracy=0.8, n_models=1, looks=3).max_n  # one model's accuracy to +-2 points
    1587
    >>> plan(half_width=0.02, n_models=1, looks=3).max_n, plan(half_width=0.02, looks=3).max_n  # worst cases
    (2451, 9704)
    """
    target_diff = effect is not None
    alpha, looks, n_models, n_datasets, effect, half_width, power = _check_plan_args(
        effect, half_width, power, alpha, sided, looks, n_models, n_datasets, correction)
    var, p = _per_item_variance(effect if target_diff else 0.0, sd, disagreement, accuracy, n_models, target_diff)
    if var.size not in (1, n_datasets):
        raise ValueError(f"sd: expected one value or one per dataset ({n_datasets}), got {var.size}")
    sd_eff = float(np.sqrt(var.mean()))
    n_comp, a_comp = _per_comparison(alpha, n_models, correction)
    beta = 1 - power if target_diff else 0.1
    if backend == "gsdesign" and looks < 2:  # design() names its k
        raise ValueError("looks: gsDesign needs at least 2 looks; a one-look plan is the fixed-sample test, "
                         "whose bound backend='native' gives")
    d = design(looks, a_comp, beta, sided=sided, spending=spending, spending_param=spending_param, timing=timing,
               backend=backend)
    a1 = a_comp / sided
    one_model = accuracy is not None and n_models == 1
    if target_diff:
        n_fixed, n_max, en0, en1 = _difference_items(d, effect, sd_eff, a1, beta, p if one_model else None)
    else:
        # binary scores: the exact intervals are wider than c sd / sqrt(n) by about half an item (one model,
        # Clopper-Pearson) or one item (a pair, the corrected score interval)
        n_fixed, n_max, en0, en1 = _precision_items(d, half_width, sd_eff, a1,
                                                    0.0 if sd is not None else (0.5 if n_models == 1 else 1.0))
    max_n, look_n = _allocate(d, n_max, n_datasets)
    if look_n[0] < _MIN_FIRST_LOOK:
        warnings.warn(f"looks: the first look has only {look_n[0]} items; the bounds, power and expected items assume "
                      "a normal statistic, which is anti-conservative this early (Monte Carlo, paired 0/1 scores with "
                      "a plug-in variance: type-I 0.08 for a nominal 0.05 with looks at 10 / 19 / 28 items). Plan "
                      "fewer looks or a later first look (timing=)", UserWarning, stacklevel=2)
    if target_diff and one_model and min(p, 1 - p) * max_n < 5:
        warnings.warn(f"accuracy: fewer than 5 expected {'failures' if p > 0.5 else 'successes'} in the planned "
                      f"{max_n} items: the normal theory behind the plan is rough there (the exact tests are very "
                      "discrete); check the power by simulation (effstats.sequential.validation.simulate_iid)",
                      UserWarning, stacklevel=2)
    avail = None
    feasible = True
    p_avail = None
    if items_available is not None:
        avail = _usable_items(items_available, n_datasets)
        feasible = max_n <= avail
        if target_diff:
            p_avail = _power_at(d, avail, effect, sd_eff, a1, p if one_model else None)
    return SequentialPlan(design=d, target="difference" if target_diff else "precision", effect=effect,
                          half_width=half_width, sd=sd_eff, power=power if target_diff else None, alpha=alpha,
                          alpha_per_comparison=a_comp, n_comparisons=n_comp, correction=correction,
                          n_fixed=float(n_fixed), max_n=max_n, expected_n_h0=float(en0), expected_n_h1=float(en1),
                          looks=look_n, n_datasets=n_datasets, items_available=avail, feasible=feasible,
                          power_at_available=p_avail)


def _check_plan_args(effect, half_width, power, alpha, sided, looks, n_models, n_datasets, correction):
    """Validate :func:`effstats.sequential.plan`'s target and layout; returns ``(alpha, looks, n_models, n_datasets,
    effect,
    half_width, power)``."""
    target_diff = effect is not None
    if target_diff == (half_width is not None):
        raise ValueError("effect: give exactly one of effect (a difference to detect) and half_width (a precision "
                         "target)")
    alpha, looks, n_models, n_datasets = _check_layout(alpha, sided, looks, n_models, n_datasets, correction)
    if target_diff:
        effect = _num(effect, "effect", 0.0, 1.0, what=" on the scale of the scores (2 points is 0.02)")
        power = check_fraction(power, "power")
    else:
        half_width = _num(half_width, "half_width", 0.0, 1.0, what=" on the scale of the scores (2 points is 0.02)")
    return alpha, looks, n_models, n_datasets, effect, half_width, power


def _check_layout(alpha, sided, looks, n_models, n_datasets, correction) -> tuple[float, int, int, int]:
    """Validate the layout :func:`effstats.sequential.plan` and :func:`effstats.sequential.detectable_effect`
    share; returns ``(alpha, looks, n_models, n_datasets)``."""
    alpha = check_fraction(alpha, "alpha")
    if isinstance(sided, bool) or sided not in (1, 2):
        raise ValueError(f"sided: expected 1 or 2, got {sided!r}")
    looks = check_positive_int(looks, "looks")
    n_models = check_positive_int(n_models, "n_models")
    n_datasets = check_positive_int(n_datasets, "n_datasets")
    if correction not in _CORRECTIONS:
        raise ValueError(f"correction: expected one of {_CORRECTIONS}, got {correction!r}")
    return alpha, looks, n_models, n_datasets


def _per_comparison(alpha: float, n_models: int, correction: str) -> tuple[int, float]:
    """Number of pairwise comparisons among ``n_models`` (1 for one model) and the alpha of each."""
    n_comp = n_models * (n_models - 1) // 2 if n_models > 1 else 1
    return n_comp, alpha / n_comp if correction != "none" else alpha


def _check_pair_disagreement(disagreement: Any, n_models: int) -> None:
    """Refuse ``disagreement`` (a rate between two models) for one model, which it would silently plan as a pair."""
    if disagreement is not None and n_models == 1:
        raise ValueError("disagreement: the fraction of items on which two models differ needs n_models >= 2; for "
                         "one model pass accuracy= or sd=")


def _per_item_variance(e: float, sd: Any, disagreement: Any, accuracy: Any, n_models: int,
                       target_diff: bool) -> tuple[np.ndarray, float | None]:
    """Variance per item of the statistic (one value or one per dataset) at the difference ``e``, and the
    accuracy when one was given."""
    _check_pair_disagreement(disagreement, n_models)
    if sum(x is not None for x in (sd, disagreement, accuracy)) > 1:
        raise ValueError("sd: give at most one of sd, disagreement and accuracy")
    if sd is not None:
        s = _real_array(sd, "sd")
        if not np.all(np.isfinite(s)) or np.any(s <= 0):
            raise ValueError(f"sd: expected positive standard deviations, got {s.tolist()}")
        return s**2, None
    if disagreement is not None:
        q = _real_array(disagreement, "disagreement")
        if not np.all(np.isfinite(q)) or np.any(q <= 0) or np.any(q > 1):
            raise ValueError(f"disagreement: expected fractions in (0, 1], got {q.tolist()}")
        # q = |effect|: every disagreement favours one model (0.5 % of the items, all one way); q < |effect| cannot
        # happen. Rounding of a q computed from counts is not a smaller disagreement.
        if np.any(q < e * (1 - 1e-9)):
            raise ValueError(f"disagreement: must be at least |effect| = {e:g} (two models that differ by |effect| "
                             f"disagree on at least that fraction of the items), got {q.tolist()}")
        return np.maximum(q - e**2, 0.0), None
    if accuracy is not None:
        p = _num(accuracy, "accuracy", 0.0, 1.0)
        if n_models == 1:
            return np.array([p * (1 - p)]), p
        q = 2 * min(p, 1 - p)  # a paired difference: the worst-case disagreement of two models of accuracy ~p
        if q <= e:
            raise ValueError(f"accuracy: two models of accuracy about {p:g} differ on at most {q:g} of the items, "
                             f"which cannot produce a difference of {e:g}")
        return np.array([q - e**2]), p
    if not target_diff:
        # the worst case of 0/1 scores, as in the Precision rule's stop: accuracy 1/2 for one model, a pair that
        # disagrees on every item (differences of +-1) for a paired difference
        return np.array([0.25 if n_models == 1 else 1.0]), None
    raise ValueError("sd: a difference plan needs the per-item variability: sd, disagreement (paired binary "
                     "scores) or accuracy (one model)")


def _difference_items(d: GroupSequentialDesign, effect: float, sd: float, a1: float, beta: float,
                      p: float | None) -> tuple[float, float, float, float]:
    """Fixed-sample, maximum and expected (H0, H1) items to detect ``effect``; ``p`` is one model's accuracy."""
    if p is not None:
        n_fixed = _n_fixed_one_model(p, effect, -ndtri(a1), -ndtri(beta))
    else:
        n_fixed = ((-ndtri(a1) - ndtri(beta)) * sd / effect) ** 2
    return n_fixed, d.inflation * n_fixed, d.expected_n_h0 * n_fixed, d.expected_n_h1 * n_fixed


def _precision_items(d: GroupSequentialDesign, half_width: float, sd: float, a1: float,
                     k: float) -> tuple[float, float, float, float]:
    """Fixed-sample, maximum and expected items for a final half-width: ``c sd u + k u**2 = half_width`` solved for
    ``u = 1 / sqrt(n)``, ``k`` the exact interval's extra width in items. The precision rule's interval is the
    fixed-sample one (Chow & Robbins's fixed-width rule, no alpha spent over the looks), so the maximum is the
    fixed-sample size at the planned ``sd``: the looks are spread up to it."""
    def items(c: float) -> float:
        cs = c * sd
        u = half_width / cs if k == 0 else (-cs + np.sqrt(cs * cs + 4 * k * half_width)) / (2 * k)
        return 1.0 / u**2

    n_fixed = items(-ndtri(a1))
    return n_fixed, n_fixed, n_fixed, n_fixed


def _allocate(d: GroupSequentialDesign, n_max: float, n_datasets: int) -> tuple[int, np.ndarray]:
    """Maximum items and items at each look, in whole items per dataset."""
    max_n = int(np.ceil(n_max / n_datasets - 1e-9)) * n_datasets
    look_n = np.ceil(d.timing * max_n / n_datasets - 1e-9).astype(int) * n_datasets
    return max_n, look_n


def _usable_items(items_available: Any, n_datasets: int) -> int:
    """Items per model usable with equal allocation over the datasets."""
    ia = _real_array(items_available, "items_available")
    if ia.size not in (1, n_datasets) or not np.all(np.isfinite(ia)) or np.any(ia < 1):
        raise ValueError(f"items_available: expected a positive count (or one per dataset), got {ia.tolist()}")
    return int(np.floor(ia.min())) * n_datasets if ia.size == n_datasets and n_datasets > 1 else int(ia.sum())


def _power_at(d: GroupSequentialDesign, avail: int, effect: float, sd: float, a1: float, p: float | None) -> float:
    """Power of the design run to at most ``avail`` items; ``p`` is one model's accuracy."""
    if p is None:
        # the same bounds with the looks at the same fractions of the available items
        info = d.timing * avail / sd**2
        lo = d.lower if d.lower is not None else np.full(d.k, -EXTREMEZ)
        return float(gsprob(effect, info, lo, d.upper, d.r)["probhi"].sum())
    # one model: the formula that sizes max_n (null and alternative variances, continuity correction), solved
    # for the power at the available items, so that power and feasibility agree
    z_a = -ndtri(a1)
    sd0, sd1 = _one_model_sds(p, effect)
    zb_lo = -z_a * sd0 / sd1 + 1e-9  # where the formula's n is smallest

    def gap(zb: float) -> float:
        return _n_fixed_one_model(p, effect, z_a, zb) * d.inflation - avail

    if gap(zb_lo) >= 0:
        # fewer items than the formula can describe (its normal power tends to a constant as n -> 0, above the
        # power of an exact test on so few items): report no more than the test's level
        return float(a1)
    return float(ndtr(38.0 if gap(38.0) <= 0 else brentq(gap, zb_lo, 38.0, xtol=1e-12)))


def detectable_effect(items_available: Any, *, sd: Any = None, disagreement: Any = None,
                      accuracy: float | None = None, power: float = 0.9,
                      alpha: float = 0.05, sided: int = 2, looks: int = 5, spending: Any = "ld_obf",
                      spending_param: float | None = None, timing: Any = None, n_models: int = 2,
                      n_datasets: int = 1, correction: str = "bonferroni") -> float:
    """The smallest difference a sequential evaluation with at most ``items_available`` items per model detects
    with the given power (the inverse of :func:`effstats.sequential.plan`).

    Closed forms for a fixed ``sd`` and for a ``disagreement`` rate (Notes); for one model against its
    ``accuracy``, a root search.

    Parameters
    ----------
    items_available : int or array-like of shape (n_datasets,)
        Items per model (per dataset if an array; equal allocation uses ``n_datasets * min``).
    sd, disagreement : float or array-like of shape (n_datasets,)
        Per-item variability, as in :func:`effstats.sequential.plan` (exactly one of these and ``accuracy``).
    accuracy : float, optional
        As in :func:`effstats.sequential.plan`: one model's accuracy (``n_models=1``), or, for two or more models, the
        worst-case disagreement ``2 min(p, 1 - p)`` of models of about that accuracy.
    power, alpha, sided, looks, spending, spending_param, timing, n_models, n_datasets, correction
        As in :func:`effstats.sequential.plan`.

    Returns
    -------
    float
        The detectable difference (scale of the scores).

    Raises
    ------
    ValueError
        For bad input (the message starts with the argument's name), or when one model's ``items_available``
        cannot detect any difference from ``accuracy``.

    See Also
    --------
    effstats.sequential.plan : Items needed for a difference.

    Notes
    -----
    With :math:`c = z_{1 - \\alpha'} + z_{\\mathrm{power}}` (:math:`\\alpha'` the per-comparison level), :math:`R`
    the design's inflation and :math:`n` the items available, a fixed standard deviation :math:`s` gives

    .. math::

        \\mathrm{effect} = \\frac{c\\, s}{\\sqrt{n / R}} .

    With a disagreement rate :math:`q` the variance :math:`q - \\mathrm{effect}^2` depends on the effect, and
    solving :math:`\\mathrm{effect} = c \\sqrt{(q - \\mathrm{effect}^2) R / n}` gives

    .. math::

        \\mathrm{effect} = c \\sqrt{\\frac{q R}{n + c^2 R}} .

    References
    ----------
    Jennison, C. & Turnbull, B. W. (2000). *Group Sequential Methods with Applications to Clinical
    Trials*. Chapman & Hall/CRC, Boca Raton (ch. 7, sample size).

    Examples
    --------
    >>> from effstats.sequential import detectable_effect
    >>> round(detectable_effect(2000, disagreement=0.1), 4)  # two models disagreeing on 10 % of items
    0.0231
    >>> round(detectable_effect(2000, accuracy=0.8, n_models=1), 4)  # one model against its accuracy
    0.0302
    """
    alpha, looks, n_models, n_datasets = _check_layout(alpha, sided, looks, n_models, n_datasets, correction)
    _check_pair_disagreement(disagreement, n_models)
    n = float(_usable_items(items_available, n_datasets))
    if sum(x is not None for x in (sd, disagreement, accuracy)) != 1:
        raise ValueError("sd: give exactly one of sd, disagreement and accuracy")
    power = check_fraction(power, "power")
    _, a_comp = _per_comparison(alpha, n_models, correction)
    d = design(looks, a_comp, 1 - power, sided=sided, spending=spending,
               spending_param=spending_param, timing=timing)
    c = -ndtri(a_comp / sided) - ndtri(1 - power)
    infl = d.inflation
    if accuracy is not None:
        p = _num(accuracy, "accuracy", 0.0, 1.0)
        if n_models == 1:  # the inverse of plan's one-sample formula (no closed form)
            z_a, z_b = -ndtri(a_comp / sided), -ndtri(1 - power)
            hi = max(p, 1 - p) * (1 - 1e-12)
            if _n_fixed_one_model(p, hi, z_a, z_b) * infl > n:
                raise ValueError(f"items_available: {n:g} items cannot detect any difference from accuracy {p:g} "
                                 f"with power {power:g}")
            return float(brentq(lambda e: _n_fixed_one_model(p, e, z_a, z_b) * infl - n, 1e-12, hi, xtol=1e-12))
        else:
            disagreement = 2 * min(p, 1 - p)
    if sd is not None:
        s = _real_array(sd, "sd")
        if not np.all(np.isfinite(s)) or np.any(s <= 0) or s.size not in (1, n_datasets):
            raise ValueError(f"sd: expected one positive value or one per dataset, got {s.tolist()}")
        return float(c * np.sqrt(np.mean(s**2) * infl / n))
    q = _real_array(disagreement, "disagreement")
    if not np.all(np.isfinite(q)) or np.any(q <= 0) or np.any(q > 1) or q.size not in (1, n_datasets):
        raise ValueError(f"disagreement: expected fractions in (0, 1] (one, or one per dataset), got {q.tolist()}")
    return float(c * np.sqrt(np.mean(q) * infl / (n + c**2 * infl)))


def conditional_power(design: GroupSequentialDesign, look: int, z: float, theta: Any = None,
                      information: Any = None) -> np.ndarray:
    r"""Probability of crossing the upper bound at a later look given ``z`` at ``look`` (gsDesign's ``gsCP``).

    Conditional on :math:`Z_\mathrm{look} = z`, the score :math:`Z_j \sqrt{I_j}` of a later look is
    :math:`z \sqrt{I_\mathrm{look}} + N(\theta (I_j - I_\mathrm{look}), I_j - I_\mathrm{look})`, so the remaining
    looks form a group-sequential test on the information increments with bounds
    :math:`(b_j \sqrt{t_j} - z \sqrt{t_\mathrm{look}}) / \sqrt{t_j - t_\mathrm{look}}`.
    Lower bounds (test types 2-6) stop paths, as in gsDesign.

    Parameters
    ----------
    design : effstats.sequential.GroupSequentialDesign
        The design whose bounds are used.
    look : int
        Current look, 1-based, before the last.
    z : float
        Statistic at ``look``.
    theta : float or array-like of shape (n_theta,), optional
        Drift per unit of ``information``. Default: ``(z / sqrt(I_look), 0, delta)`` -- the current trend,
        H0 and the design alternative, as gsCP.
    information : array-like of shape (k,), optional
        Information levels; default the design's (relative to the fixed design, gsDesign's ``n.I``; this
        runs the sample-size search once).

    Returns
    -------
    numpy.ndarray of shape (n_theta,)
        Conditional power for each ``theta``.

    See Also
    --------
    effstats.sequential.SequentialPlan.conditional_power : The same on the scale of the scores.
    effstats.sequential.Futility : A stopping rule on conditional power.

    References
    ----------
    Lan, K. K. G., Simon, R. & Halperin, M. (1982). Stochastically curtailed tests in long-term clinical
    trials. *Communications in Statistics C*, 1(3), 207–219.

    Jennison, C. & Turnbull, B. W. (2000). *Group Sequential Methods with Applications to Clinical
    Trials*. Chapman & Hall/CRC, Boca Raton (ch. 10, stochastic curtailment).

    Anderson, K. M. (2026). *gsDesign: Group Sequential Design*. R package version 3.11.0 (``gsCP``).

    Examples
    --------
    >>> from effstats.sequential import conditional_power, design
    >>> d = design(3, spending="ld_obf")
    >>> conditional_power(d, look=1, z=1.5).round(4)  # current trend, H0, design alternative
    array([0.7767, 0.0904, 0.9031])
    """
    if not isinstance(design, GroupSequentialDesign):
        raise ValueError(f"design: expected a GroupSequentialDesign, got {type(design).__name__}")
    kmax = design.k
    look = _number(look)
    if isinstance(look, bool) or not isinstance(look, Integral) or not 1 <= look < kmax:
        raise ValueError(f"look: expected an integer in [1, {kmax - 1}] (a look before the last), got {_plain(look)!r}")
    z = _num(z, "z", -np.inf, np.inf)
    if information is None:
        info = np.asarray(design.information, float)
    else:
        info = check_array(information, "information", ndim=1, shape=(kmax,))
        if not np.all(np.isfinite(info)) or np.any(info <= 0) or np.any(np.diff(info) <= 0):
            raise ValueError(f"information: expected positive, strictly increasing levels, got {info.tolist()}")
    i = int(look) - 1
    if theta is None:
        thetas = np.array([z / np.sqrt(info[i]), 0.0, design.delta])
    else:
        thetas = _real_array(theta, "theta")
        if thetas.size == 0 or not np.all(np.isfinite(thetas)):
            raise ValueError(f"theta: expected finite drifts, got {thetas.tolist()}")
    t = info / info[-1]
    rest = slice(i + 1, kmax)
    denom = np.sqrt(t[rest] - t[i])
    bnew = (design.upper[rest] * np.sqrt(t[rest]) - z * np.sqrt(t[i])) / denom
    if design.lower is not None:
        anew = (design.lower[rest] * np.sqrt(t[rest]) - z * np.sqrt(t[i])) / denom
    else:
        anew = np.full(kmax - i - 1, -EXTREMEZ)
    p = gsprob(thetas, info[rest] - info[i], anew, bnew, design.r)
    return p["probhi"].sum(0)
