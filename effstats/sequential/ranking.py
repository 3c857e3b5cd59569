"""Ranking several models by pairwise sequential comparisons with a familywise-error correction built into the stops.

All pairs are compared on the same items in the same order, look by look. Each pair's group-sequential test runs
at a level that the multiplicity correction assigns and updates as comparisons end:

* ``"bonferroni"``: every pair at ``alpha / P`` (``P`` pairs) throughout;
* ``"holm"``: the sequential Holm procedure of Maurer & Bretz (2013): every pair starts at ``alpha / P``; when a
  pair's difference is declared significant, its level is passed on, so the pairs still open are judged at
  ``alpha / j`` (``j`` hypotheses not yet rejected), from that look on (re-checked at the same look).

Both keep the familywise error -- the probability of declaring any pair of equal models different -- at most
``alpha``; the per-pair ``decision`` / ``reason`` columns are those corrected decisions, and each pair stops as soon
as its corrected test decides. The same items are evaluated by all models, so a model's cost is the largest
number of items any of its open comparisons needed: ``fraction_used`` counts exactly that.

References
----------
Maurer, W. & Bretz, F. (2013). Multiple testing in group sequential trials using graphical approaches.
*Statistics in Biopharmaceutical Research*, 5(4), 311–320.

Holm, S. (1979). A simple sequentially rejective multiple test procedure. *Scandinavian Journal of
Statistics*, 6(2), 65–70.
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Any, Sequence

import numpy as np
import pandas as pd

from .._shared import _plain
from .._validation import check_array, check_rng
from ..responses import ResponseMatrix
from ._scores import _groups, _scores
from .evaluator import SequentialEvaluator
from .rules import Efficacy, StoppingRule

__all__ = ["PairwiseRanking", "rank_models", "SequentialRanking"]


@dataclass(frozen=True)
class PairwiseRanking:
    """Pairwise sequential comparisons and the ranking they imply.

    Attributes
    ----------
    pairs : pandas.DataFrame
        One row per pair: model_a, model_b, look, n, fraction, estimate (a - b), standard_error, z, ci_low, ci_high
        and confidence_level (the interval that made the corrected decision, at the pair's level), alpha_used
        (the corrected level at the stop), decision, reason, significant, winner.
    ranking : pandas.DataFrame
        Models sorted by Copeland score (significant wins - losses), then by the mean estimated difference to the
        other models; with ``rank`` and ``n`` (items the model was evaluated on).
    fraction_used : float
        Items evaluated by all models / items a full evaluation of every model would use (each model is evaluated
        on the longest prefix any of its comparisons needed).
    correction : str
        The multiplicity correction, ``"holm"`` or ``"bonferroni"``.

    See Also
    --------
    effstats.sequential.rank_models : Builds one from a complete score matrix.
    effstats.sequential.SequentialRanking : Builds one batch by batch.

    Examples
    --------
    >>> import numpy as np
    >>> from effstats.sequential import rank_models
    >>> rng = np.random.default_rng(0)
    >>> X = (rng.random((3, 1500)) < np.array([[0.9], [0.8], [0.7]])).astype(float)  # 3 models x 1500 items
    >>> r = rank_models(X, model_ids=["a", "b", "c"], rng=0)
    >>> r.ranking["rank"].tolist(), round(r.fraction_used, 3)
    ([1, 2, 3], 0.222)
    >>> r.pairs[["model_a", "model_b", "n", "decision", "winner"]]
      model_a model_b    n decision winner
    0       a       b  200  greater      a
    1       a       c  100  greater      a
    2       b       c  400  greater      b
    """

    pairs: pd.DataFrame
    ranking: pd.DataFrame
    fraction_used: float
    correction: str

    def to_frame(self) -> pd.DataFrame:
        """The pairwise table, one row per pair (a copy of ``pairs``).

        Returns
        -------
        pandas.DataFrame

        Examples
        --------
        >>> import numpy as np
        >>> from effstats.sequential import rank_models
        >>> rng = np.random.default_rng(0)
        >>> X = (rng.random((3, 1500)) < np.array([[0.9], [0.8], [0.7]])).astype(float)  # 3 models x 1500 items
        >>> rank_models(X, rng=0).to_frame().shape
        (3, 16)
        """
        return self.pairs.copy()


def _ids_text(ix) -> str:
    ix = _plain(list(ix))
    return f"{ix[:5]}{'...' if len(ix) > 5 else ''}"


def _align_models(scores: Any, ids: list | None, name: str = "scores"):
    """A DataFrame (models x items) is reindexed to ``ids`` by its index; returns (frame or array, ids)."""
    if not isinstance(scores, pd.DataFrame):
        return scores, ids
    if not scores.index.is_unique:
        raise ValueError(f"{name}: the DataFrame index (model ids) has duplicates")
    if not scores.columns.is_unique:
        raise ValueError(f"{name}: the DataFrame columns (item ids) have duplicates")
    if ids is None:
        return scores, list(scores.index)
    missing = pd.Index(ids).difference(scores.index)
    unseen = scores.index.difference(pd.Index(ids))
    if len(missing) or len(unseen):
        raise ValueError(f"{name}: the DataFrame index must hold the model ids {_ids_text(ids)}; missing: "
                         f"{_ids_text(missing)}, unknown: {_ids_text(unseen)}")
    return scores.reindex(ids), ids


def _align_groups(groups: Any, items: pd.Index | None):
    """A groups Series is reindexed to the item ids (columns); missing or unknown ids are refused."""
    if not isinstance(groups, pd.Series) or items is None:
        return groups.to_numpy() if isinstance(groups, pd.Series) else groups
    missing = items.difference(groups.index)
    if len(missing):
        raise ValueError(f"groups: no group for item ids {_ids_text(missing)}")
    if not groups.index.is_unique:
        raise ValueError("groups: the Series index (item ids) has duplicates")
    return groups.reindex(items).to_numpy()


def _lockstep(fires: np.ndarray, eff: np.ndarray, correction: str):
    """Corrected stopping: ``fires`` / ``eff`` (L, runs, P, K) -- some rule fires / it is an efficacy rejection at
    level index ``l`` (level alpha / (l + 1) for Holm; one level for Bonferroni).

    Returns look (runs, P) (K - 1 with ``stopped`` False if none), stopped, level index used (runs, P).
    """
    L, R, P, K = fires.shape
    active = np.ones((R, P), bool)
    rejected = np.zeros((R, P), bool)
    look = np.full((R, P), K - 1)
    level = np.zeros((R, P), np.intp)
    rr = np.arange(R)[:, None]
    pp = np.arange(P)[None, :]
    for k in range(K):
        while True:
            if correction == "holm":
                li = np.clip(P - rejected.sum(1), 1, P) - 1  # alpha / j with j hypotheses not rejected
            else:
                li = np.zeros(R, np.intp)
            lk = np.broadcast_to(li[:, None], (R, P))
            f = active & fires[lk, rr, pp, k]
            if not f.any():
                break
            e = f & eff[lk, rr, pp, k]
            look[f] = k
            level[f] = lk[f]
            active &= ~f
            rejected |= e
            if correction != "holm" or not e.any():
                break
    if correction == "holm":
        # a pair still undecided at the end was last tested at the final Holm level, alpha / (pairs not rejected);
        # index 0 (alpha itself) reported it at the uncorrected level with a too narrow interval
        final = np.clip(P - rejected.sum(1), 1, P) - 1
        level = np.where(active, final[:, None], level)
    return look, ~active, level


class SequentialRanking:
    """Online (and offline) pairwise sequential ranking of several models with a familywise-error correction.

    Use :meth:`effstats.sequential.SequentialRanking.start` then :meth:`effstats.sequential.SequentialRanking.update`
    with each batch of scores (n_models, batch), or :func:`effstats.sequential.rank_models`
    for complete score matrices. Both give the same decisions on the same item order.

    Parameters
    ----------
    rules : sequence of effstats.sequential.StoppingRule, optional
        Default: two-sided efficacy. A pair's claim counts as a rejection (passing its level on under Holm) when
        the rule that stops it is an :class:`~effstats.sequential.Efficacy`.
    correction : {"holm", "bonferroni"}, default="holm"
        Sequential Holm (levels passed on as pairs are declared different) or Bonferroni.
    alpha : float, default=0.05
        Familywise error over all pairs.
    **evaluator_kw
        ``initial``, ``batch``, ``spending``, ``max_n``, ``fpc``, ... for the
        underlying :class:`effstats.sequential.SequentialEvaluator`.

    Attributes
    ----------
    result_ : effstats.sequential.PairwiseRanking
        The ranking after the last :meth:`effstats.sequential.SequentialRanking.update`.

    See Also
    --------
    effstats.sequential.rank_models : The same ranking on a complete score matrix.
    effstats.sequential.SequentialEvaluator : One pair's (or one model's) adaptive evaluation.
    effstats.sequential.plan : Items needed for a number of models (``n_models=``).

    References
    ----------
    Maurer, W. & Bretz, F. (2013). Multiple testing in group sequential trials using graphical
    approaches. *Statistics in Biopharmaceutical Research*, 5(4), 311–320.

    Holm, S. (1979). A simple sequentially rejective multiple test procedure. *Scandinavian Journal of
    Statistics*, 6(2), 65–70.

    Anonymous authors (under review). Stop guessing when to stop testing: efficient model evaluation
    with just enough data. Manuscript under double-blind review (ranking experiments, sect. 7).

    Examples
    --------
    >>> import numpy as np
    >>> from effstats.sequential import SequentialRanking
    >>> rng = np.random.default_rng(0)
    >>> X = (rng.random((3, 1500)) < np.array([[0.9], [0.8], [0.7]])).astype(float)  # 3 models x 1500 items
    >>> ranker = SequentialRanking(initial=100, batch=100).start(["a", "b", "c"], max_n=1500)
    >>> for k in range(0, 1500, 100):
    ...     res = ranker.update(X[:, k:k + 100])
    ...     if (res.pairs["decision"] != "continue").all():
    ...         break
    >>> k, res.pairs["n"].tolist(), res.ranking.index.tolist()
    (400, [500, 300, 500], ['a', 'b', 'c'])
    """

    def __init__(self, rules: Sequence[StoppingRule] | None = None, *, correction: str = "holm", alpha: float = 0.05,
                 **evaluator_kw: Any) -> None:
        self.rules = rules
        self.correction = correction
        self.alpha = alpha
        self.evaluator_kw = evaluator_kw

    def _check(self):
        if self.correction not in ("holm", "bonferroni"):
            raise ValueError(f"correction: expected 'holm' or 'bonferroni', got {self.correction!r}")
        if self.rules is not None and len(list(self.rules)) == 0:
            raise ValueError("rules: expected at least one StoppingRule (None for two-sided efficacy)")
        ev = SequentialEvaluator([Efficacy()] if self.rules is None else self.rules, alpha=self.alpha,
                                 **self.evaluator_kw)
        rules = ev._validate_params()
        return ev, rules

    # ---------------------------------------------------------------- core on cumulative sums
    def _decide(self, ev: SequentialEvaluator, rules, pair_streams, sizes, n_tot, info, max_info, planned_info, R, P):
        """Judge all pairs at every corrected level; return per-level LookStats pieces and the lockstep result."""
        L = P if self.correction == "holm" else 1
        levels = [self.alpha / (l + 1) for l in range(L)] if self.correction == "holm" else [self.alpha / P]
        streams = list(pair_streams)
        fires = np.zeros((L, R, P, n_tot.size), bool)
        eff = np.zeros_like(fires)
        first = np.zeros((L, R, P, n_tot.size), np.intp)
        stats = []
        for li, a in enumerate(levels):
            ev.alpha = a
            s = ev._look_stats("paired", [iter(streams)], [sizes], n_tot, info, max_info, 0.0,
                               planned_info=planned_info)
            fr = np.stack([np.broadcast_to(r.fires(s), np.shape(s.estimate)) for r in rules])  # (rules, R*P, K)
            w = np.argmax(fr, 0)
            fires[li] = fr.any(0).reshape(R, P, -1)
            is_eff = np.array([isinstance(r, Efficacy) for r in rules])
            eff[li] = (fr.any(0) & is_eff[w]).reshape(R, P, -1)
            first[li] = w.reshape(R, P, -1)
            stats.append(s)
        ev.alpha = self.alpha
        look, stopped, level = _lockstep(fires, eff, self.correction)
        return stats, levels, first, look, stopped, level

    def _table(self, rules, stats, levels, first, look, stopped, level, n_tot, max_n, ids, pairs_ij, final: bool):
        R, P = look.shape
        rows = np.arange(R * P)
        lk = look.reshape(-1)
        lv = level.reshape(-1)
        names = np.array([r.name for r in rules], dtype=object)
        bounds = np.array([r.bound for r in rules], dtype=object)
        est = np.empty(R * P)
        se = np.empty(R * P)
        z = np.empty(R * P)
        lo = np.empty(R * P)
        hi = np.empty(R * P)
        conf = np.empty(R * P)
        reason = np.empty(R * P, dtype=object)
        decision = np.empty(R * P, dtype=object)
        st_flat = stopped.reshape(-1)
        for li, s in enumerate(stats):
            m = lv == li
            if not m.any():
                continue
            idx = rows[m]
            w = first[li].reshape(R * P, -1)[idx, lk[idx]]
            b = np.where(st_flat[idx], bounds[w], "c2")
            sub = s.statistic.take((idx, lk[idx]))
            c = np.where(b == "c1", np.asarray(s.c1)[lk[idx]], np.asarray(s.c2)[lk[idx]])
            l_, h_ = sub.interval(c)
            fixed = b == "fixed"
            if fixed.any():  # a precision stop: the rule's fixed-sample interval
                lf, hf = (np.broadcast_to(v, np.shape(s.estimate))[idx, lk[idx]] for v in s.fixed_interval)
                l_, h_ = np.where(fixed, lf, l_), np.where(fixed, hf, h_)
            est[idx], se[idx], z[idx], lo[idx], hi[idx] = sub.estimate, sub.se, np.asarray(s.z)[idx, lk[idx]], l_, h_
            conf[idx] = np.where(b == "c1", 1 - 2 * levels[li], 1 - levels[li])
            outcome = np.stack([np.broadcast_to(r.outcome(s), np.shape(s.estimate))[idx, lk[idx]] for r in rules])
            reason[idx] = np.where(st_flat[idx], names[w], "max_n" if final else "continue")
            decision[idx] = np.where(st_flat[idx], outcome[w, np.arange(idx.size)],
                                     "no decision" if final else "continue")
        n = n_tot[lk]
        eff_names = {r.name for r in rules if isinstance(r, Efficacy)}  # by type: a renamed Efficacy rule counts
        significant = np.isin(reason, list(eff_names)) & np.isin(decision, ["greater", "less"])
        return dict(look=lk + 1, n=n, fraction=n / max_n, estimate=est, standard_error=se, z=z, ci_low=lo, ci_high=hi,
                    confidence_level=conf, alpha_used=np.asarray(levels)[lv], decision=decision, reason=reason,
                    significant=significant)

    def _assemble(self, d: dict, ids, pairs_ij, max_n: int) -> PairwiseRanking:
        m = len(ids)
        ia = np.array([i for i, _ in pairs_ij])
        ja = np.array([j for _, j in pairs_ij])
        pairs = pd.DataFrame({"model_a": [ids[i] for i in ia], "model_b": [ids[j] for j in ja], **d})
        pairs["winner"] = np.where(pairs["significant"], np.where(pairs["estimate"] > 0, pairs["model_a"],
                                                                  pairs["model_b"]), None)
        wins = pd.Series(0, index=ids, dtype=int)
        for _, r in pairs[pairs["significant"]].iterrows():
            loser = r["model_b"] if r["winner"] == r["model_a"] else r["model_a"]
            wins[r["winner"]] += 1
            wins[loser] -= 1
        diff = pd.concat([pairs.set_index("model_a")["estimate"], -pairs.set_index("model_b")["estimate"]])
        # a model is evaluated on the longest prefix any of its comparisons needed (all share one item order)
        n_model = np.zeros(m, int)
        np.maximum.at(n_model, ia, pairs["n"].to_numpy().astype(int))
        np.maximum.at(n_model, ja, pairs["n"].to_numpy().astype(int))
        ranking = pd.DataFrame({"copeland": wins, "mean_difference": diff.groupby(level=0).mean().reindex(ids),
                                "n": n_model}, index=pd.Index(ids, name="model"))
        ranking = ranking.sort_values(["copeland", "mean_difference"], ascending=False)
        ranking["rank"] = np.arange(1, m + 1)
        return PairwiseRanking(pairs=pairs, ranking=ranking, fraction_used=float(n_model.sum() / (m * max_n)),
                               correction=self.correction)

    @staticmethod
    def _pair_sums(X: np.ndarray, counts: np.ndarray, pairs_ij):
        """Per dataset cumulative sums of the pairs' differences: X (R, m, N_d) in evaluation order -> (R*P, K)."""
        ia = np.array([i for i, _ in pairs_ij])
        ja = np.array([j for _, j in pairs_ij])
        Dif = X[:, ia, :] - X[:, ja, :]  # (R, P, N_d)
        R, P = Dif.shape[:2]
        cs = [np.cumsum(v, axis=-1)[..., counts - 1].reshape(R * P, -1) for v in (Dif, Dif * Dif, np.abs(Dif))]
        return cs[0], cs[1], cs[2], counts.astype(float)

    # ---------------------------------------------------------------- offline / simulation
    def _run_ordered(self, X_by_d: list, sizes: np.ndarray, ids, final_plan: bool = True):
        """X_by_d: per dataset (R, m, N_d) scores in evaluation order. Returns (dict of arrays, pairs_ij, max_n)."""
        ev, rules = self._check()
        m = X_by_d[0].shape[1]
        R = X_by_d[0].shape[0]
        pairs_ij = list(combinations(range(m), 2))
        P = len(pairs_ij)
        sched = ev._schedule(sizes)
        n_tot = sched.sum(1)
        info = ev._information("paired", sched, sizes)
        streams = [self._pair_sums(X_by_d[d], sched[:, d], pairs_ij) for d in range(sizes.size)]
        stats, levels, first, look, stopped, level = self._decide(ev, rules, streams, sizes, n_tot, info,
                                                                  float(info[-1]), None, R, P)
        d = self._table(rules, stats, levels, first, look, stopped, level, n_tot, int(n_tot[-1]), ids, pairs_ij, True)
        return d, pairs_ij, int(n_tot[-1]), (look, stopped)

    # ---------------------------------------------------------------- online
    def start(self, model_ids: Sequence, max_n: int, n_groups: int = 1, *, sizes: Any = None) -> "SequentialRanking":
        """Begin an online ranking of ``model_ids`` on at most ``max_n`` items in ``n_groups`` datasets (``sizes``).

        Parameters
        ----------
        model_ids : sequence
            At least two distinct model ids, in the row order of the batches.
        max_n : int
            Maximum items per model.
        n_groups : int, default=1
            Datasets (mean of means).
        sizes : array-like of shape (n_groups,), optional
            Items per dataset.

        Returns
        -------
        effstats.sequential.SequentialRanking
            ``self``, ready for :meth:`effstats.sequential.SequentialRanking.update`.

        Examples
        --------
        >>> from effstats.sequential import SequentialRanking
        >>> ranker = SequentialRanking(initial=100, batch=100).start(["a", "b"], max_n=1000)
        """
        ev, rules = self._check()
        if isinstance(model_ids, (str, bytes)) or not hasattr(model_ids, "__iter__"):
            raise ValueError(f"model_ids: expected a sequence of model ids, got {model_ids!r}")
        ids = list(model_ids)
        if len(ids) < 2 or len(set(ids)) != len(ids):
            raise ValueError(f"model_ids: expected at least 2 distinct model ids, got {ids!r}")
        ev.start(max_n, n_groups, sizes=sizes)
        self._online = {"ids": ids, "ev": ev, "rules": rules, "sizes": ev._online["sizes"], "plan": ev._online["plan"],
                        "batches": [], "groups": [], "max_n": int(max_n), "D": int(n_groups)}
        return self

    def update(self, scores: Any, groups: Any = None) -> PairwiseRanking:
        """Add a batch: scores (n_models, batch) of every model on the same new items; returns the ranking so far.

        Pairs already decided keep their decision; open pairs are judged at their current corrected level with
        the full planned design's bounds, as :func:`effstats.sequential.rank_models` does offline on the same item
        order.

        Parameters
        ----------
        scores : array-like of shape (n_models, batch) or pandas.DataFrame
            Scores of every model on the new items (a DataFrame: models as rows by id, item ids as columns;
            an item id may enter once).
        groups : array-like of shape (batch,), optional
            Dataset code of each item, in ``[0, n_groups)``.

        Returns
        -------
        effstats.sequential.PairwiseRanking
            The ranking so far (decision ``"continue"`` for open pairs).

        Raises
        ------
        ValueError
            Before :meth:`effstats.sequential.SequentialRanking.start`, for the wrong number of rows, or for
            more items than planned.

        Examples
        --------
        >>> import numpy as np
        >>> from effstats.sequential import SequentialRanking
        >>> ranker = SequentialRanking(initial=100, batch=100).start(["a", "b"], max_n=1000)
        >>> ranker.update(np.ones((2, 100))).pairs["decision"].tolist()
        ['continue']
        """
        st = getattr(self, "_online", None)
        if st is None:
            raise ValueError("update: call start(model_ids, max_n, n_groups) first")
        items = None
        if isinstance(scores, pd.DataFrame):  # rows by model id, columns are item ids
            scores, _ = _align_models(scores, st["ids"])
            items = scores.columns
            seen = st.get("seen")
            if seen is not None and len(items.intersection(seen)):
                raise ValueError(f"scores: item ids already evaluated in an earlier batch: "
                                 f"{_ids_text(items.intersection(seen))}; each item may enter once")
            groups = _align_groups(groups, items)
        elif st.get("seen") is not None:
            raise ValueError("scores: earlier batches were labelled DataFrames; pass this one with its ids too")
        elif isinstance(groups, pd.Series):
            raise ValueError("groups: a labelled Series needs scores as a DataFrame with item ids as columns")
        x = _scores(scores, "scores", ndim=2)
        if x.shape[0] != len(st["ids"]):
            raise ValueError(f"scores: expected {len(st['ids'])} rows (one per model), got {x.shape[0]}")
        g = np.zeros(x.shape[1], np.intp) if groups is None else check_array(groups, "groups", ndim=1, dtype=None,
                                                                             shape=(x.shape[1],))
        if not np.issubdtype(g.dtype, np.integer) or g.min() < 0 or g.max() >= st["D"]:
            raise ValueError(f"groups: expected integer dataset codes in [0, {st['D']}), got "
                             f"{np.unique(g)[:5].tolist()}")
        st["batches"].append(x)
        st["groups"].append(g)
        X = np.concatenate(st["batches"], 1)
        G = np.concatenate(st["groups"])
        D = st["D"]
        counts = np.stack([np.bincount(np.concatenate(st["groups"][:k + 1]), minlength=D)
                           for k in range(len(st["groups"]))])  # (K, D)
        if np.any(counts[-1] > st["sizes"]):
            st["batches"].pop()
            st["groups"].pop()
            raise ValueError("scores: more items than planned in some dataset; pass sizes= to start()")
        if items is not None:
            st["seen"] = items if st.get("seen") is None else st["seen"].append(items)
        ev, rules = self._check()
        m = x.shape[0]
        pairs_ij = list(combinations(range(m), 2))
        P = len(pairs_ij)
        n_tot = counts.sum(1)
        sz = st["sizes"]
        info = ev._information("paired", counts, sz)
        plan_info = ev._information("paired", st["plan"], sz)
        later = plan_info[st["plan"].sum(1) > n_tot[-1]]
        streams = []
        for d in range(D):
            Xd = X[:, G == d][None]
            c = counts[:, d]
            if Xd.shape[-1] == 0:
                z0 = np.zeros((P, c.size))
                streams.append((z0, z0, z0, c.astype(float)))
                continue
            cs = self._pair_sums(Xd, np.maximum(c, 1), pairs_ij)
            streams.append(tuple(np.where(c > 0, v, 0.0) for v in cs[:3]) + (c.astype(float),))
        stats, levels, first, look, stopped, level = self._decide(ev, rules, streams, sz, n_tot, info,
                                                                  float(plan_info[-1]), later, 1, P)
        final = n_tot[-1] >= st["max_n"]
        d = self._table(rules, stats, levels, first, look, stopped, level, n_tot, st["max_n"], st["ids"], pairs_ij,
                        bool(final))
        if not final:  # open pairs have used every item so far
            d["n"] = np.where(stopped.reshape(-1), d["n"], n_tot[-1])
            d["look"] = np.where(stopped.reshape(-1), d["look"], n_tot.size)
            d["fraction"] = d["n"] / st["max_n"]
        self.result_ = self._assemble(d, st["ids"], pairs_ij, st["max_n"])
        return self.result_


def rank_models(scores: Any, *, rules: Sequence[StoppingRule] | None = None, correction: str = "holm",
                alpha: float = 0.05, groups: Any = None, model_ids: Sequence | None = None, rng: Any = None,
                **evaluator_kw: Any) -> PairwiseRanking:
    """Rank models by sequential pairwise comparisons whose stops are corrected for multiplicity (Holm / Bonferroni).

    Parameters
    ----------
    scores : array-like of shape (n_models, n_items), pandas.DataFrame or effstats.ResponseMatrix
        Per-item scores of every model on the same items.
    rules : sequence of effstats.sequential.StoppingRule, optional
        Default: two-sided efficacy.
    correction : {"holm", "bonferroni"}, default="holm"
        Sequential Holm (levels passed on as pairs are declared different) or Bonferroni.
    alpha : float, default=0.05
        Familywise error over all pairs.
    groups : array-like of shape (n_items,), optional
        Dataset of each item (mean of means). A ResponseMatrix's first item column is used by default.
    model_ids : sequence, optional
        Model ids in row order (default ``m0``, ``m1``, ...; a DataFrame's index or a ResponseMatrix's ids).
    rng : int or numpy.random.Generator, optional
        Fixes the (common) random item order.
    **evaluator_kw
        ``initial``, ``batch``, ``spending``, ``max_n``, ... for :class:`effstats.sequential.SequentialEvaluator`.

    Returns
    -------
    effstats.sequential.PairwiseRanking

    See Also
    --------
    effstats.sequential.SequentialRanking : The same ranking batch by batch.
    effstats.sequential.SequentialEvaluator : One pair's adaptive evaluation.

    References
    ----------
    Maurer, W. & Bretz, F. (2013). Multiple testing in group sequential trials using graphical
    approaches. *Statistics in Biopharmaceutical Research*, 5(4), 311–320.

    Holm, S. (1979). A simple sequentially rejective multiple test procedure. *Scandinavian Journal of
    Statistics*, 6(2), 65–70.

    Anonymous authors (under review). Stop guessing when to stop testing: efficient model evaluation
    with just enough data. Manuscript under double-blind review (ranking experiments, sect. 7).

    Examples
    --------
    >>> import numpy as np
    >>> from effstats.sequential import rank_models
    >>> rng = np.random.default_rng(0)
    >>> X = (rng.random((3, 1500)) < np.array([[0.9], [0.8], [0.7]])).astype(float)  # 3 models x 1500 items
    >>> r = rank_models(X, model_ids=["a", "b", "c"], rng=0)
    >>> r.ranking[["copeland", "n", "rank"]]
           copeland    n  rank
    model
    a             2  200     1
    b             0  400     2
    c            -2  400     3
    """
    if correction not in ("holm", "bonferroni"):
        raise ValueError(f"correction: expected 'holm' or 'bonferroni', got {correction!r}")
    items = None
    if isinstance(model_ids, str):
        raise ValueError(f"model_ids: expected a sequence of ids, got the string {model_ids!r}")
    if isinstance(scores, pd.DataFrame):  # rows are models (index), columns are item ids
        scores, model_ids = _align_models(scores, None if model_ids is None else list(model_ids))
        items = scores.columns
        groups = _align_groups(groups, items)
    elif isinstance(scores, ResponseMatrix):
        items = pd.Index(scores.item_ids)
        groups = _align_groups(groups, items)
    elif isinstance(groups, pd.Series):
        raise ValueError("groups: a labelled Series needs scores as a DataFrame (items as columns) or a ResponseMatrix")
    if isinstance(scores, ResponseMatrix):
        if scores.missing is not None and np.asarray(scores.missing).any():
            raise ValueError("scores: a complete matrix is required for paired comparisons")
        if groups is None and len(scores.items.columns):
            groups = scores.items.iloc[:, 0].to_numpy()
        model_ids = list(scores.model_ids) if model_ids is None else model_ids
        x = scores.values.astype(float)
    else:
        x = _scores(scores, "scores", ndim=2)
    m = x.shape[0]
    if m < 2:
        raise ValueError(f"scores: expected at least 2 models, got {m}")
    if isinstance(model_ids, str):
        raise ValueError(f"model_ids: expected a sequence of {m} ids, got the string {model_ids!r}")
    ids = list(model_ids) if model_ids is not None else [f"m{i}" for i in range(m)]
    if len(ids) != m:
        raise ValueError(f"model_ids: expected {m} ids, got {len(ids)}")
    if len(set(ids)) != m:
        raise ValueError("model_ids: ids must be distinct, got duplicates "
                         f"{sorted({i for i in ids if ids.count(i) > 1})}")
    codes, _ = _groups(groups, x.shape[1], "groups")
    sizes = np.bincount(codes)
    if sizes.min() < 2:
        raise ValueError("scores: every dataset needs at least 2 items")
    g = check_rng(rng)
    ranker = SequentialRanking(rules, correction=correction, alpha=alpha, **evaluator_kw)
    X_by_d = [x[:, g.permutation(np.flatnonzero(codes == d))][None] for d in range(sizes.size)]
    d, pairs_ij, max_n, _ = ranker._run_ordered(X_by_d, sizes, ids)
    return ranker._assemble(d, ids, pairs_ij, max_n)
