"""The planned looks of a sequential evaluation: the items of each dataset at every look (:func:`look_schedule`),
the memory check of a number of items before its schedule is made (:func:`check_looks`) and the dataset sizes an
online evaluation plans (:func:`planned_sizes`)."""
from __future__ import annotations

from typing import Any

import numpy as np

from .._validation import check_array


def check_looks(initial: Any, batch: Any, max_n: int, name: str) -> None:
    """Refuse a number of items whose look schedule (one look a batch) needs more memory than this process may
    use, naming ``name``, before it is made."""
    from .._shared import memory_limit

    initial = initial if isinstance(initial, (int, np.integer)) else 1
    batch = batch if isinstance(batch, (int, np.integer)) and batch > 0 else 1
    looks = max(max_n - initial, 0) // batch + 2
    need, limit = 64 * looks, memory_limit()  # the schedule's arrays and the bounds of every look
    if limit is not None and need > limit:
        raise ValueError(f"{name}: {max_n:,} items in batches of {batch:,} make {looks:,} looks, whose schedule "
                         f"needs about {need / 2**30:,.0f} GiB, more than the {limit / 2**30:,.1f} GiB of memory "
                         "this process may use; give fewer items or larger batches")


def look_schedule(sizes: np.ndarray, initial: int, batch: int, max_n: int | None) -> np.ndarray:
    """Items per stratum at each look, shape (K, D): ``initial`` a stratum, then ``batch`` more at each look, up to
    the stratum's size, the last look at most ``max_n`` items in all (``None``: no such bound)."""
    per = initial + batch * np.arange(0, int(np.ceil(max(sizes.max() - initial, 0) / batch)) + 1)
    n = np.minimum(per[:, None], sizes[None, :])
    if max_n is not None:
        tot = n.sum(1)
        keep = tot < max_n
        if not keep.all():
            first_over = int(np.argmin(keep))
            n = n[: first_over + 1].copy()
            # the last look stops at max_n: trim the strata proportionally to their last batch
            over = n[-1].sum() - max_n
            if over > 0 and first_over > 0:
                add = n[-1] - n[-2]
                cut = np.floor(add * over / add.sum()).astype(int)
                # the rounding's remainder comes off the strata with the most of their batch left, each at
                # most down to its previous look: a stratum's running count never decreases (the items handed
                # out are its first n of a fixed order) and the last look has max_n items
                room = add - cut
                by_room = np.argsort(-room, kind="stable")
                before = np.cumsum(room[by_room]) - room[by_room]
                cut[by_room] += np.clip(over - cut.sum() - before, 0, room[by_room])
                n[-1] = n[-1] - cut
            elif over > 0:
                # max_n below the first look: one item a stratum, the rest shared as the strata's first looks
                # are, the rounding's remainder to the largest fractions (Hamilton's method)
                first = np.minimum(n[-1], 1)
                more = n[-1] - first
                share = more * max(max_n - int(first.sum()), 0) / max(int(more.sum()), 1)
                extra = np.floor(share).astype(int)
                extra[np.argsort(extra - share, kind="stable")[: int(round(share.sum())) - extra.sum()]] += 1
                n[-1] = first + extra
    # drop repeated looks (nothing new)
    tot = n.sum(1)
    keep = np.concatenate(([True], np.diff(tot) > 0))
    return n[keep]


def planned_sizes(max_n: int, n_groups: int, sizes: Any) -> np.ndarray:
    """The items of each of ``n_groups`` datasets an online evaluation of ``max_n`` items plans: ``sizes``, checked,
    or ``max_n`` split equally."""
    if sizes is None:
        sz = np.full(n_groups, max_n // n_groups)
        sz[: max_n - sz.sum()] += 1
    else:
        sz = check_array(sizes, "sizes", ndim=1, shape=(n_groups,)).astype(np.int64)
        if sz.min() < 1 or sz.sum() != max_n:
            raise ValueError(f"sizes: expected {n_groups} positive dataset sizes summing to max_n = {max_n}, "
                             f"got {sz.tolist()}")
    return sz
