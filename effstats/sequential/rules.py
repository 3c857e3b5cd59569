"""Composable stopping rules for adaptive evaluation.

A rule looks at the statistics of every look so far (arrays of shape ``(n_runs, n_looks)``, so
thousands of simulated evaluations are judged at once) and returns where it fires. The evaluator
stops at the first look where any rule fires and reports the first rule (in the order given)
that fired there. Every rule is judged on the group-sequential boundaries or the repeated
confidence intervals, so the error rates hold whichever rule stops the evaluation.

Scores are on the scale of the data (e.g. accuracy in [0, 1]): a 2-point margin is ``0.02``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy.special import ndtr

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


@dataclass(frozen=True)
class LookStats:
    """Statistics at each look, arrays of shape (n_runs, n_looks) unless stated.

    ``c2`` / ``c1`` (n_looks,) are the two-sided and one-sided boundaries at level ``alpha``
    with the evaluator's spending function (``spending``, ``spending_param``); ``ci_low`` / ``ci_high`` the repeated CI
    ``estimate -/+ c2 * se``; ``t`` (n_looks,) the planned fractions of the maximum sample.
    """

    n: np.ndarray
    t: np.ndarray
    estimate: np.ndarray
    se: np.ndarray
    z: np.ndarray
    c2: np.ndarray
    c1: np.ndarray
    null: float
    alpha: float
    spending: object = "ld_pocock"
    spending_param: float | None = None

    @property
    def ci_low(self) -> np.ndarray:
        return self.estimate - self.c2 * self.se

    @property
    def ci_high(self) -> np.ndarray:
        return self.estimate + self.c2 * self.se

    @property
    def half_width(self) -> np.ndarray:
        return self.c2 * self.se


class StoppingRule:
    """Base class: ``fires(stats)`` returns a bool array (n_runs, n_looks); ``outcome(stats)`` a label per cell."""

    name: str = "rule"

    def fires(self, s: LookStats) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def outcome(self, s: LookStats) -> np.ndarray:
        """Decision label per (run, look) where the rule fires (default: its name)."""
        return np.full(s.estimate.shape, self.name, dtype=object)


def _check_pos(x: float, name: str) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float, np.floating)) or not np.isfinite(x) or x <= 0:
        raise ValueError(f"{name}: expected a positive number, got {x!r}")
    return float(x)


@dataclass(frozen=True)
class Efficacy(StoppingRule):
    """Stop when the difference from the null is significant on the group-sequential boundary.

    ``alternative="two-sided"`` uses the two-sided bound ``|z| >= c2``; ``"greater"`` / ``"less"``
    the one-sided bound ``c1``.
    """

    alternative: Literal["two-sided", "greater", "less"] = "two-sided"
    name: str = "efficacy"

    def __post_init__(self) -> None:
        if self.alternative not in ("two-sided", "greater", "less"):
            raise ValueError(f"alternative: expected 'two-sided', 'greater' or 'less', got {self.alternative!r}")

    def fires(self, s: LookStats) -> np.ndarray:
        if self.alternative == "two-sided":
            return np.abs(s.z) >= s.c2
        if self.alternative == "greater":
            return s.z >= s.c1
        return s.z <= -s.c1

    def outcome(self, s: LookStats) -> np.ndarray:
        return np.where(s.z > 0, "greater", "less").astype(object)


@dataclass(frozen=True)
class Equivalence(StoppingRule):
    """Stop when the difference is within ``±margin``: two one-sided sequential tests, each on ``c1``.

    Fires when ``estimate - c1*se > null - margin`` and ``estimate + c1*se < null + margin``.
    """

    margin: float = 0.02
    name: str = "equivalence"

    def __post_init__(self) -> None:
        _check_pos(self.margin, "margin")

    def fires(self, s: LookStats) -> np.ndarray:
        d = s.estimate - s.null
        return (d - s.c1 * s.se > -self.margin) & (d + s.c1 * s.se < self.margin)


@dataclass(frozen=True)
class Precision(StoppingRule):
    """Stop when the repeated CI half-width is at most ``half_width`` (the "ballpark score")."""

    half_width: float = 0.02
    name: str = "precision"

    def __post_init__(self) -> None:
        _check_pos(self.half_width, "half_width")

    def fires(self, s: LookStats) -> np.ndarray:
        return s.half_width <= self.half_width


@dataclass(frozen=True)
class Threshold(StoppingRule):
    """Stop when the score is confidently above and/or below ``tau`` (one-sided bound ``c1``).

    ``direction``: ``"above"`` fires when ``estimate - c1*se > tau``; ``"below"`` when
    ``estimate + c1*se < tau``; ``"both"`` either way.
    """

    tau: float = 0.6
    direction: Literal["above", "below", "both"] = "both"
    name: str = "threshold"

    def __post_init__(self) -> None:
        if self.direction not in ("above", "below", "both"):
            raise ValueError(f"direction: expected 'above', 'below' or 'both', got {self.direction!r}")
        if isinstance(self.tau, bool) or not isinstance(self.tau, (int, float, np.floating)) or not np.isfinite(self.tau):
            raise ValueError(f"tau: expected a finite number, got {self.tau!r}")

    def _ab(self, s: LookStats):
        above = s.estimate - s.c1 * s.se > self.tau
        below = s.estimate + s.c1 * s.se < self.tau
        return above, below

    def fires(self, s: LookStats) -> np.ndarray:
        above, below = self._ab(s)
        if self.direction == "above":
            return above
        if self.direction == "below":
            return below
        return above | below

    def outcome(self, s: LookStats) -> np.ndarray:
        above, _ = self._ab(s)
        return np.where(above, f"above {self.tau:g}", f"below {self.tau:g}").astype(object)


@dataclass(frozen=True)
class Futility(StoppingRule):
    """Stop when the final two-sided test is unlikely to reject: conditional power below ``threshold``.

    Conditional power uses the Brownian-motion approximation on the fraction ``t`` of the maximum
    sample: under the current trend (``effect=None``) the drift is ``|z| / sqrt(t)``; with an
    ``effect`` (the smallest difference worth detecting, data scale) it is ``effect / (se*sqrt(t))``.
    Futility stopping never rejects H0, so it cannot raise the type-I error (non-binding).
    """

    threshold: float = 0.1
    effect: float | None = None
    name: str = "futility"

    def __post_init__(self) -> None:
        if not isinstance(self.threshold, (int, float, np.floating)) or not 0 < self.threshold < 1:
            raise ValueError(f"threshold: expected a number in (0, 1), got {self.threshold!r}")
        if self.effect is not None:
            _check_pos(self.effect, "effect")

    def conditional_power(self, s: LookStats) -> np.ndarray:
        t = np.broadcast_to(s.t, s.z.shape)
        rem = np.clip(1 - t, 0, None)
        b = np.abs(s.z) * np.sqrt(t)
        with np.errstate(divide="ignore", invalid="ignore"):
            drift = np.abs(s.z) / np.sqrt(t) if self.effect is None else self.effect / (s.se * np.sqrt(t))
            cp = ndtr((b + drift * rem - s.c2[-1]) / np.sqrt(rem))
        return np.where(rem > 0, np.nan_to_num(cp, nan=1.0), 1.0)

    def fires(self, s: LookStats) -> np.ndarray:
        return self.conditional_power(s) < self.threshold


@dataclass(frozen=True)
class BetaSpendingFutility(StoppingRule):
    """Stop for futility on a beta-spending lower bound (gsDesign ``test.type = 4``, non-binding).

    The lower bound spends the type-II error ``beta`` with ``spending`` / ``param`` so that a
    difference of ``effect`` (data scale) would be detected with power ``1 - beta``. The bound
    needs the drift ``effect / se_full``: ``se_full`` is the planned standard error with the full
    sample, or (None) the median over runs of ``se * sqrt(t)`` at the first look. Upper and lower
    bounds come from one ``design(test_type=4, ...)`` at the looks' fractions; being non-binding,
    stopping on it leaves the type-I error of the efficacy bound unchanged.

    ``alternative="greater"`` fires when ``z < a_k``; ``"two-sided"`` when ``|z| < a_k`` (each tail
    at level ``alpha / 2``).
    """

    effect: float = 0.02
    beta: float = 0.1
    se_full: float | None = None
    spending: str = "hsd"
    param: float | None = -2.0
    alternative: Literal["greater", "two-sided"] = "greater"
    name: str = "futility"

    def __post_init__(self) -> None:
        _check_pos(self.effect, "effect")
        if not isinstance(self.beta, (int, float, np.floating)) or not 0 < self.beta < 0.5:
            raise ValueError(f"beta: expected a number in (0, 0.5), got {self.beta!r}")
        if self.se_full is not None:
            _check_pos(self.se_full, "se_full")
        if self.alternative not in ("greater", "two-sided"):
            raise ValueError(f"alternative: expected 'greater' or 'two-sided', got {self.alternative!r}")

    def lower_bound(self, s: LookStats) -> np.ndarray:
        """The futility bound a_k (n_looks,) on the z-scale."""
        from scipy.special import ndtri

        from .design import design

        t = np.asarray(s.t, float)
        if t.size < 2:
            return np.full(t.size, -np.inf)
        se_full = self.se_full if self.se_full is not None else float(np.median(s.se[..., 0]) * np.sqrt(t[0]))
        a1 = s.alpha / 2 if self.alternative == "two-sided" else s.alpha
        drift = self.effect / max(se_full, 1e-12)
        # gsDesign's drift per unit information is delta = z_alpha + z_beta (n.fix = 1): scale the information
        scale = (drift / (-ndtri(a1) - ndtri(self.beta))) ** 2
        d = design(alpha=a1, beta=self.beta, test_type=4, spending=s.spending, spending_param=s.spending_param,
                   lower_spending=self.spending,
                   lower_param=self.param, information=t * scale, max_information=scale)
        return d.lower

    def fires(self, s: LookStats) -> np.ndarray:
        a = self.lower_bound(s)
        z = np.abs(s.z) if self.alternative == "two-sided" else s.z
        return z < a


@dataclass(frozen=True)
class DiminishingReturns(StoppingRule):
    """Stop when the repeated CI half-width shrank by less than ``epsilon`` since the previous look."""

    epsilon: float = 0.001
    name: str = "diminishing_returns"

    def __post_init__(self) -> None:
        _check_pos(self.epsilon, "epsilon")

    def fires(self, s: LookStats) -> np.ndarray:
        hw = s.half_width
        gain = np.full(hw.shape, np.inf)
        gain[..., 1:] = hw[..., :-1] - hw[..., 1:]
        return gain < self.epsilon
