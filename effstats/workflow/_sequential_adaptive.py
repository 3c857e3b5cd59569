"""``rule="adaptive"`` of a sequential run: the item bank, the batches it chooses, and the looks replayed on it."""
from __future__ import annotations

import dataclasses

import numpy as np

from .._shared import _plain
from ._copies import _bank_key, _load_bank, _refuse_bank
from ._provenance import lm_eval_provenance
from ._report import _adaptive_reason
from ._tasks import _version, item_tasks

BANK = "bank.npz"  # rule="adaptive": the item bank fitted on the reference data, so that a loaded run need not refit


class _AdaptiveRule:
    """How a :class:`~effstats.workflow.SequentialRun` with ``rule="adaptive"`` chooses its batches and records its
    looks: an :class:`~effstats.irt.AdaptiveTest` on the item bank fitted on the reference data (or the run's copy
    of it, ``BANK``), replayed from the state when the run is loaded."""

    def _adaptive_test(self, refit: bool = False):
        """Fit the item bank on the reference data (or read the run's copy of it, unless ``refit``) and start an
        adaptive test with no answers."""
        from ..irt import IRT2PL, AdaptiveTest

        st, rm = self.state, self._reference
        if self._test is not None and not refit:
            bank = self._test.bank  # read or fitted already (a replay after a refused look): the test only reads it
        else:
            bank = IRT2PL(random_state=0)  # one dimension: deterministic (random_state only seeds extra ones)
            key = _bank_key(st, bank)
            fitted = None if self._directory is None or refit else _load_bank(self._directory / BANK, key, bank, rm)
            self._bank_saved = fitted is not None
            bank = fitted if fitted is not None else bank.fit(rm)
        self._test = AdaptiveTest(bank, target_se=st["rule"]["target_se"], max_items=st["max_n"],
                                  prior_sd=st["rule"]["prior_sd"],
                                  calibration_error=st["rule"].get("calibration_error", False))
        self._bank_pos = {str(i): j for j, i in enumerate(rm.item_ids)}
        self._item_info = None  # the bank's tasks and doc ids: read from the item ids when a batch is handed out
        return self._test

    def _choose(self, size: int) -> np.ndarray:
        """Bank positions of the next batch: the ``size`` unused items with the largest Fisher information at the
        current ability estimate (ties: the earlier position), at most ``max_n`` items in all."""
        t = self._test
        free = np.ones(len(self._bank_pos), bool)
        free[t.given] = False
        k = min(int(size), int(free.sum()), self.state["max_n"] - len(t.given))
        info = np.where(free, t.information(), -np.inf)
        return np.argsort(-info, kind="stable")[:k]

    def _hand_out(self, size: int) -> None:
        st, pos = self.state, self._choose(size)
        st["order"] += [str(i) for i in self._reference.item_ids[pos]]
        if self._item_info is None:
            self._item_info = item_tasks(self._reference)
        st["tasks"] += [str(t) for t in self._item_info["task"].to_numpy()[pos]]
        st["doc_ids"] += [int(d) for d in self._item_info["doc_id"].to_numpy()[pos]]
        got = lm_eval_provenance(self._reference, self._reference.item_ids[pos])
        if got and got.get("hashes"):  # what the reference logs ran on the items handed out, for the update's check
            st["reference"].setdefault("lm_eval", {}).setdefault("hashes", {}).update(got["hashes"])

    def _adaptive_decision(self) -> str | None:
        t, st = self._test, self.state
        if t.given and t.standard_error <= st["rule"]["target_se"]:
            return "precision"
        if len(t.given) == len(self._bank_pos):
            return "bank"
        if len(t.given) >= st["max_n"]:
            return "max_n"
        return None

    def _adaptive_result(self):
        return dataclasses.replace(self._test.result(), stopped_by=self._adaptive_decision() or "continue")

    def _record_adaptive(self, items: list[str], scores: list[float]) -> None:
        for i, y in zip(items, scores):
            self._test.record(self._bank_pos[i], int(y))

    def _replay_adaptive(self, refit: bool = False):
        """Refit the bank (or read its copy, unless ``refit``) and replay the recorded answers, checking that every
        batch is the one the bank chooses."""
        st = self.state
        self._adaptive_test(refit)
        looks = st["looks"]
        for k, look in enumerate(looks + [None]):
            if look is None and self.stopped:
                break
            size = st["initial"] if k == 0 else st["batch"]
            chosen = [str(i) for i in self._reference.item_ids[self._choose(size)]]
            expected = look["items"] if look is not None else st["order"][self.n_evaluated:]
            if chosen != expected:
                if self._bank_saved and not refit and self._directory is not None:
                    # a copy that passed its checks yet is not the bank the run used: fitted again, as if damaged
                    _refuse_bank(self._directory / BANK, f"it chooses other items than this run at batch {k + 1}")
                    return self._replay_adaptive(refit=True)
                # the reference data is the run's (its content hash is checked): the fit itself differs
                name = "reference" if self._reference_given else "directory"
                raise ValueError(f"{name}: refitting the item bank on the reference data chose other items than this "
                                 f"run at batch {k + 1} (run made with effstats {st['effstats_version']}, this is "
                                 f"{_version()}); start the run again")
            if look is not None:
                self._record_adaptive(look["items"], look["scores"])
        if looks:
            self.result = self._adaptive_result()
        return self._test

    def _look_adaptive(self, batch: list[str], scores: list[float]):
        bad = [(i, y) for i, y in zip(batch, scores) if y not in (0.0, 1.0)]
        if bad:
            raise ValueError(f"new_results: rule='adaptive' needs 0/1 results; {len(bad)} item(s) have graded "
                             f"scores, e.g. {_plain(bad[0][0])!r}: {_plain(bad[0][1])!r}")
        try:
            self._record_adaptive(batch, scores)
        except BaseException:
            self._replay_adaptive()  # the test may hold part of a refused look: rebuild it from the state
            raise
        res = self._adaptive_result()
        self.state["looks"].append({"items": batch, "scores": scores, "theta": res.theta,
                                    "theta_se": res.standard_error, "accuracy": res.accuracy,
                                    "accuracy_se": res.accuracy_se})
        return res

    def _adaptive_dict(self, res) -> dict:
        st = self.state
        level = 1 - st["alpha"]
        lo, hi = res.confidence_interval(level)
        reason = _adaptive_reason(st, res.stopped_by)
        return {"decision": res.stopped_by, "reason": reason, "n": res.n_items, "theta": res.theta,
                "theta_se": res.standard_error, "target_se": st["rule"]["target_se"], "estimate": res.accuracy,
                "standard_error": res.accuracy_se, "ci_low": lo, "ci_high": hi, "confidence_level": level,
                "alpha": st["alpha"]}
