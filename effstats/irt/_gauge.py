"""The joint-ML fit's gauge step: the transform of the parameters that leaves every logit as it is and lowers the
priors' penalty the most (:class:`effstats.irt.IRT2PL` with ``method="jml"``).

The 2PL logits θ_m · a_i − b_i are unchanged by θ → θA + 1cᵀ, a → aA⁻ᵀ, b → b + aA⁻ᵀc for any invertible d × d
matrix A and vector c. The likelihood cannot tell these apart; only the priors, ½(‖θ‖² + λ_a‖a‖² + λ_b‖b‖²), do,
and their pull is weak beside the likelihood's curvature (thousands of items per ability). Alternating Newton steps
on the abilities and on the items then creep along this valley, which is why a fit that converges linearly takes
hundreds of sweeps. Moving along it in closed form at each sweep (alternating translations and scales, each the
exact minimiser of the penalty over its part) lowers the objective without changing the likelihood, and a
stationary point of the objective is stationary along the valley too, so the fixed points are the sweeps' own; the
parameter-expansion idea of PX-EM (Liu, Rubin & Wu 1998).

References
----------
Liu, C., Rubin, D. B. & Wu, Y. N. (1998). Parameter expansion to accelerate EM: the PX-EM algorithm. *Biometrika*
85(4), 755–770.
"""
from __future__ import annotations

import numpy as np


def _sqrtm_spd(S: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """S^½ and S^−½ of a symmetric positive definite S, or None if S is not well conditioned."""
    w, V = np.linalg.eigh(S)
    if not w[0] > 1e-12 * max(w[-1], 1e-300):
        return None
    r = np.sqrt(w)
    return (V * r) @ V.T, (V / r) @ V.T


#: Rounds of translation and scale at most: each lowers the penalty, and they stop once a round no longer does (by
#: 1e-12 relative), a handful of rounds where the fit has converged.
_ROUNDS = 50


def _scale(St: np.ndarray, Sa: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """The symmetric A and A⁻¹ with Aᵀ S_t A = A⁻¹ S_a A⁻ᵀ (the best scale of θ against a, ``Sa`` carrying λ_a):
    A = M^½ for M the solution of M S_t M = S_a, the geometric mean of S_t⁻¹ and S_a; None if either is
    singular."""
    roots = _sqrtm_spd(St)
    if roots is None:
        return None
    inner = _sqrtm_spd(roots[0] @ Sa @ roots[0])
    if inner is None:
        return None
    M = roots[1] @ inner[0] @ roots[1]
    return _sqrtm_spd(0.5 * (M + M.T))


def gauge_step(th: np.ndarray, a: np.ndarray, b: np.ndarray, count: np.ndarray | None, la: float, lb: float,
               g: np.ndarray, h: np.ndarray) -> np.ndarray:
    """Move (θ, a, b) along the logits' invariant transforms to where the priors' penalty is lowest, in place on
    ``a`` and ``b`` (each row counted ``count`` times); returns the new θ and transforms the ability step's sums
    ``g`` (m, d) and ``h`` (m, d²) in place, which the unchanged probabilities make exact at the new point.

    With S_θ = θᵀθ and S_a = aᵀ diag(count) a, the penalty's best translation solves (m I + λ_b S_a) c =
    −(θᵀ1 + λ_b aᵀ diag(count) b), and its best scale A (with c = 0) is any A with A Aᵀ = M, M the solution of
    M S_θ M = λ_a S_a (the matrix geometric mean of S_θ⁻¹ and λ_a S_a): then θ'ᵀθ' = λ_a a'ᵀ diag(count) a'."""
    m, d = th.shape
    cw = np.ones(len(b)) if count is None else count
    ac = a * cw[:, None]
    Sa, u, bb = a.T @ ac, ac.T @ b, float(b @ (b * cw))
    St, t = th.T @ th, th.sum(0)
    A, c = np.eye(d), np.zeros(d)
    eye = np.eye(d)
    pen = np.trace(St) + la * np.trace(Sa) + lb * bb
    for _ in range(_ROUNDS):
        # the best translation c2 at the current (A, c): θ'' = θ' + 1 c2ᵀ, b'' = b' + a' c2
        c2 = -np.linalg.solve(m * eye + lb * Sa, t + lb * u)
        St = St + np.outer(t, c2) + np.outer(c2, t) + m * np.outer(c2, c2)
        bb += 2 * u @ c2 + c2 @ Sa @ c2
        t, u, c = t + m * c2, u + Sa @ c2, c + c2
        # then the best scale: θ'' = θ' A2, a'' = a' A2⁻ᵀ (A2 symmetric: a rotation changes no penalty)
        A2 = _scale(St, la * Sa)
        if A2 is None:
            break
        A2, A2i = A2
        St, t, Sa, u = A2 @ St @ A2, A2 @ t, A2i @ Sa @ A2i, A2i @ u
        A, c = A @ A2, A2 @ c
        prev, pen = pen, np.trace(St) + la * np.trace(Sa) + lb * bb
        if prev - pen <= 1e-12 * pen:
            break
    B = np.linalg.inv(A).T
    a[...] = a @ B
    b += a @ c
    g[...] = g @ B
    h3 = h.reshape(m, d, d)
    h3[...] = B.T @ h3 @ B
    return th @ A + c
