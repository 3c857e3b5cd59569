"""A sequential run's files: its state (``state.json``) loaded and checked, and saved with the next batch's files or
the decision, and the copies a loaded run reads instead of refitting (the reference data, the adaptive rule's item
bank), all put in place at one moment (:class:`_RunFiles`, a part of :class:`~effstats.workflow.SequentialRun`)."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from .._escape import csv_safe
from .._shared import temporary_copy
from ._copies import _bank_bytes, _bank_key, reread_reference
from ._io import check_path, json_text, output_dir, read_saved
from ._names import HELM_INSTANCES, ITEMS_JSON, LM_EVAL_SAMPLES
from ._reference_copy import REFERENCE_CACHE, stage_reference
from ._schema import check_checksums
from ._sequential_adaptive import BANK
from ._strata import _check_stratified_state

if TYPE_CHECKING:
    from ._sequential import SequentialRun

__all__: list[str] = []

STATE = "state.json"
_FORMAT = "effstats.sequential/1"


class _RunFiles:
    """How a :class:`~effstats.workflow.SequentialRun` is read from its folder (:meth:`load`) and written to it
    (:meth:`save`)."""

    @classmethod
    def load(cls, directory: str | Path, *, reference: Any = None) -> "SequentialRun":
        """Continue a run saved by :meth:`save`.

        Parameters
        ----------
        directory : path
            The folder :meth:`save` wrote, or its ``state.json``.
        reference : path or ResponseMatrix, optional
            ``rule="adaptive"`` and ``correction="logistic"``: the reference data, read instead of the copy
            :meth:`save` keeps beside the state (``reference.npz``) and of the path the state records
            (needed where the run has no copy and was started from data in memory). It must be the data the run
            was started from (same content hash).

        Returns
        -------
        SequentialRun
            Its next batch and decisions are those of the run kept in memory.

        Raises
        ------
        ValueError
            ``directory`` is not a sequential state; ``reference`` is given to a run that reads no reference data
            (an efficacy run, a precision run without the correction) or is other data than the run was started
            from; or refitting the item bank chooses other items than the run did.
        """
        return cls._read(directory, reference)

    @classmethod
    def _read(cls, directory: str | Path, reference: Any = None, clean: bool = True) -> "SequentialRun":
        """:meth:`load`; without ``clean`` it writes nothing (``effstats sequential status``): the temporary files
        of an interrupted write stay for the next update to remove."""
        if clean:  # a replacement (start --force) killed midway: finished or undone before the state is read
            from ._files import recover_unlocked, run_folder

            recover_unlocked(run_folder(check_path(directory, "directory"), STATE))
        p, st = read_saved(directory, STATE, _FORMAT, "sequential state file", clean=clean)
        kind = st["rule"]["kind"]
        if reference is not None and kind != "adaptive" and not st["rule"].get("correction"):
            # an option that does not apply is refused, as read_results refuses a metric for a table: a path that
            # is ignored may be a mistake the user would not otherwise see
            what = "a precision run without the logistic correction" if kind == "precision" else f"an {kind} run"
            raise ValueError(f"reference: this run reads no reference data ({what}; adaptive runs and corrected "
                             "precision runs do): leave it out")
        run = cls(st)
        run._directory = p if p.is_dir() else p.parent
        run._reference_given = reference is not None
        if kind == "adaptive":
            run._reference = reread_reference(st["reference"], reference, run._directory, **_reread_args(st))
            run._replay_adaptive()
        elif st["rule"].get("correction"):
            run._reference = reread_reference(st["reference"], reference, run._directory, **_reread_args(st))
            _check_stratified_state(st, run._reference, f"directory: {STATE}")
            if st["looks"]:
                run.result = run._corrected_look([], [])
        elif st["looks"]:
            run._replay()
        check_checksums(st, f"directory: {STATE}")  # after the corrected run's own check, which names the entry
        return run

    def save(self, directory: str | Path) -> Path:
        """Write ``state.json`` and either the next batch (``batch_NNN/lm_eval_samples.json`` or, for HELM runs,
        ``helm_instances.json``; ``items.json``, the batch's item ids exactly, the list to join results on; and
        ``items.csv``, the same ids for eyes and spreadsheets: ids starting with ``=``, ``+``, ``-`` or ``@``
        quoted, control characters escaped) or
        the decision (``decision.json``, ``decision.md``, ``looks.csv``) into ``directory``; returns the path
        of the next batch's folder, or of ``decision.md``. ``directory`` may also be the run's ``state.json``,
        as :meth:`load` takes it. Runs that need the reference data when loaded (``rule="adaptive"``,
        ``correction="logistic"``) also keep a compressed copy of it, ``reference.npz`` (0/1 values bit-packed,
        with the class probabilities and labels lm-eval logs carry; where its ids and metadata can be written as
        JSON), and adaptive runs their item bank, ``bank.npz``; both are keyed by the reference data's content
        hash, so a copy of other data is not used.

        Parameters
        ----------
        directory : str or Path
            The run's folder (created if missing), or its ``state.json``.

        Returns
        -------
        Path
            The next batch's folder, or ``decision.md`` once the run has stopped.
        """
        return self._save(directory)

    def _save(self, directory: str | Path, replaced: list[str] | None = None) -> Path:
        """:meth:`save`; ``replaced``: the files (relative to the folder) of the run this one replaces (``sequential
        start --force``), which give way to this run's at the moment its state is written: the folder holds the
        old run whole or this one complete (:func:`effstats._user_files.swap_files`)."""
        if isinstance(directory, (str, Path)) and Path(directory).name == STATE and Path(directory).is_file():
            directory = Path(directory).parent
        d = output_dir(directory)
        # the files this run owns (relative to d), kept in the state: replacing the run (sequential start --force)
        # removes these and nothing else
        if "files" not in self.state:  # a state without the list: the files such a run writes, where they exist
            from ._files import owned_files

            self.state["files"] = [f for f in owned_files(d, STATE, None) if f == STATE or (d / f).is_file()]
        files = self.state["files"]

        def owned(rel: str) -> Path:
            if rel not in files:
                files.append(rel)
            return d / rel

        # copies of what a loaded run would otherwise read and fit again: the reference data (bit-packed) and the
        # adaptive rule's item bank, each checked against the reference data's content hash when read; each is
        # written once, to a temporary file beside its place (the reference copy may be large), and put in place
        # with the batch and the state below
        copies: list[tuple[Path, Path]] = []
        try:
            needs_reference = self.state["rule"]["kind"] == "adaptive" or self.state["rule"].get("correction")
            if needs_reference and self._reference is not None and (REFERENCE_CACHE not in files
                                                                      or not (d / REFERENCE_CACHE).is_file()):
                tmp = stage_reference(d / REFERENCE_CACHE, self._reference, self.state["reference"]["sha256"])
                if tmp is not None:
                    copies.append((owned(REFERENCE_CACHE), tmp))
                elif REFERENCE_CACHE in files:
                    files.remove(REFERENCE_CACHE)
            bank = self._test is not None and not (self._bank_saved and self._directory is not None
                                                   and d.resolve() == self._directory.resolve())
            if bank:
                key = _bank_key(self.state, self._test.bank)
                copies.append((owned(BANK), temporary_copy(d / BANK, _bank_bytes(key, self._test.bank))))
            # the state is written last: it says which batch is next, so that batch's files must exist first
            if not self.stopped:
                k = len(self.state["looks"]) + 1
                from ._files import real_folder

                bdir = real_folder(d, f"batch_{k:03d}", "directory")  # never written through a link to elsewhere
                # items.json: the exact ids, to join results on; items.csv: the same for eyes and spreadsheets, whose
                # ids starting with = + - @ are quoted and control characters escaped (csv_safe)
                items = csv_safe(pd.DataFrame({"item": self.next_items})).to_csv(index=False)
                writes = [(owned(f"{bdir.name}/{name}"), text) for name, text in (
                    (LM_EVAL_SAMPLES, None if self.lm_eval_samples is None else json_text(self.lm_eval_samples)),
                    (HELM_INSTANCES, None if self.helm_instances is None else json_text(self.helm_instances)),
                    (ITEMS_JSON, json_text(list(self.next_items))), ("items.csv", items)) if text is not None]
                out = bdir
            else:
                if self.result is None:
                    self._replay()
                writes = [(owned("decision.json"), json_text(self.state["result"])),
                          (owned("looks.csv"), csv_safe(self._trace()).to_csv()),
                          (owned("decision.md"), self.to_markdown())]
                out = d / "decision.md"
        except BaseException:
            for _, tmp in copies:
                tmp.unlink(missing_ok=True)
            raise
        from ._files import swap_files

        # the run's files and the state are put in place together, the state last (it says which batch is next),
        # with what of a replaced run (start --force) this one does not write again removed: a kill leaves the
        # folder as it was (the old run whole, or the run before this look) or, once the next command has completed
        # the swap, this state with its files; never a next batch's files that no state lists
        swap_files(d, copies + writes + [(d / STATE, json_text(self.state))],
                   [f for f in replaced or () if f not in files])
        if bank:
            self._bank_saved, self._directory = True, d
        return out


def _reread_args(state: dict) -> dict:
    """How :func:`reread_reference` reads a run's reference data and words its messages."""
    return {"made": "the run was started from", "where": "directory", "again": "start again",
            "owner": "this run's", "warned_as": "directory", "duplicates": state.get("duplicates", "last")}
