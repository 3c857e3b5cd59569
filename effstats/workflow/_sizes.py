"""How many items a precision run may need: the worst-case fixed design that caps it, and the size of its next
batch projected from the current estimate."""
from __future__ import annotations

import numpy as np
from scipy.special import ndtri
from scipy.stats import beta


def _worst_case_items(half_width: float, alpha: float, n_items: int) -> int:
    """Items of the fixed design for ``± half_width`` at accuracy 1/2 (per-item variance 1/4, the largest), with
    the finite-population correction ``(N - n) / (N - 1)`` on ``n_items`` items."""
    n0 = ndtri(1 - alpha / 2) ** 2 * 0.25 / half_width**2
    return int(min(n_items, np.ceil(n0 * n_items / (n_items - 1 + n0))))


def _cap_reason(st: dict) -> str:
    """What set a run's cap on its items, and whether the last batch was cut short to end there, as a clause of the
    decision ("" for a state that does not record it)."""
    why = {"worst-case": f", the worst-case fixed design's for ±{st['rule']['half_width']:g}, automatic unless "
                         "--max-n (max_n) is smaller",
           "max_n": ", set by --max-n (max_n)"}.get(st.get("capped_by"), "")
    looks = st["looks"]
    if not looks or sum(len(lk["items"]) for lk in looks) < st["max_n"]:
        return why
    # the size the last batch was handed out at: the first batch's, a stratified look's, or the projected one
    planned = st["initial"] if len(looks) == 1 else (st["batch"] if st.get("look_sizes") else
                                                     st.get("next_batch") or st["batch"])
    last = len(looks[-1]["items"])
    return why + (f"; the last batch cut to {last:,} of its {planned:,} items to end at the cap" if last < planned
                  else "")


# the fewest items of a projected batch (fewer where ``batch`` or a tenth of the items evaluated is smaller): each
# batch is a harness launch, a model load, so batches that creep up on the projection (700 -> 774 -> 798 -> 811 ->
# 820 items) cost more than the items; a tenth keeps a small design's overshoot within a tenth of its items
MIN_BATCH = 50


def _projected_batch(st: dict, n: int, total: float) -> int:
    """Size of the next batch of a precision run: the fixed design's items at the current estimate smoothed by half
    an item, ``(total + 1/2) / (n + 1)`` (never 0 or 1), with the finite-population correction, less the items
    evaluated; at least :data:`MIN_BATCH` or a tenth of the items evaluated, whichever is fewer (the exact
    interval is a little wider than the normal one the projection uses), and at most ``batch`` (the hand-out cuts it
    to the items left under the cap)."""
    N, h = st["n_eligible"], st["rule"]["half_width"]
    p = (total + 0.5) / (n + 1.0)
    c = ndtri(1 - st["alpha"] / 2) ** 2 * p * (1 - p)
    need = int(np.ceil(c * N / (h * h * (N - 1) + c)))
    least = max(1, min(MIN_BATCH, int(np.ceil(0.1 * n))))
    return int(np.clip(max(need - n, _fewest_to_reach(st, n, total)), min(least, st["batch"]), st["batch"]))


def _fewest_to_reach(st: dict, n: int, total: float) -> int:
    """The fewest further items with which the interval could reach ``± half_width`` at all: every one of them right
    (or every one wrong, whichever narrows it), Clopper-Pearson's interval with the finite-population factor. Near 0
    or 1 the normal projection is short of the exact interval, and batches smaller than this cannot stop the run."""
    N, h, a = st["n_eligible"], st["rule"]["half_width"], st["alpha"]
    m = np.arange(1, max(1, min(st["batch"], N - n)) + 1)
    nn = n + m
    best = np.inf
    for x in (total + m, np.full(m.shape, float(total))):
        lo = np.where(x > 0, beta.ppf(a / 2, np.maximum(x, 1e-12), nn - x + 1), 0.0)
        hi = np.where(x < nn, beta.ppf(1 - a / 2, x + 1, np.maximum(nn - x, 1e-12)), 1.0)
        best = np.minimum(best, (hi - lo) / 2 * np.sqrt(np.maximum(N - nn, 0) / max(N - 1, 1)))
    ok = np.flatnonzero(best <= h)
    return int(m[ok[0]] if ok.size else m[-1])
