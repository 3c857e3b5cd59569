"""What the reference runs of lm-evaluation-harness ran on the chosen documents (its per-document digests of the
document, the prompt and the target; each task's version, few-shot count and filter), recorded with a selection or a
sequential run, and the check of a new model's logs against it.

A ``doc_id`` is a document's index in its task: on another dataset revision, in another document order or under a
bumped task version, index 17 is another question. The digests lm-eval logs beside each document
(``--log_samples``: SHA-256 of the document, of the prompt, of the target) tell that apart:

* another ``doc_hash`` or ``target_hash`` is another question or another answer: the new result says nothing about
  the chosen item, and is refused;
* another ``prompt_hash`` or few-shot count is the same question asked another way (template, few-shot examples,
  chat template): a protocol change that moves every score, so the new model's estimate is not comparable with the
  reference models' scores. It is refused unless ``allow_protocol_change=True`` (``--allow-protocol-change``), then
  said in a warning;
* another task version alone (the digests agree, or are not logged) is a warning: the version names the task's
  code, which may or may not change what the model sees;
* another filter is another answer extracted from the same output (``strict-match``, ``flexible-extract``): a
  score of another metric, refused always.

HELM runs record each scenario's adapter spec (``run_spec.json``: method, prompt parts, few-shot count,
temperature, stop sequences; not the model, the number of train trials or of instances): a new run under another
one is a protocol change, refused unless ``allow_protocol_change=True``, naming the fields that differ.

Logs without digests (harness versions before they were logged) and tables are not checked.
"""
from __future__ import annotations

import json
import warnings
from typing import Any

import numpy as np
import pandas as pd

from .._escape import md_text
from .._shared import _name_list, _plain
from ..datasets._lm_eval_files import RUN_FIELDS
from ..datasets._lm_eval_records import FILTER, HASH_FIELDS, HASH_WIDTH, HASHES, MIXED
from ..datasets.helm import ADAPTER, differing_fields
from ..responses import ResponseMatrix

_WHY = {"doc_hash": "another dataset revision or document order?",
        "target_hash": "another gold answer: another dataset revision?",
        "prompt_hash": "another prompt template, few-shot examples or chat template?"}
_RUN_NAMES = {"n_shot": "n-shot", "task_version": "version", FILTER: "filter", ADAPTER: "HELM adapter spec"}
_FIELDS = RUN_FIELDS + (FILTER, ADAPTER)  # the run-level fields recorded per task


def lm_eval_provenance(rm: ResponseMatrix, items: Any = None, hashes: bool = True) -> dict | None:
    """``{"hashes": {item: digests}, "runs": {field: {task: value}}}`` of ``items`` (default: every item) as read
    from lm-eval logs, for the record of a selection or a run; None for data without them. ``hashes=False`` leaves
    the digests out (an adaptive run records them as it hands the items out) and keeps every task's run fields.

    The digests of an item are the three fields' first :data:`HASH_WIDTH` hexadecimal characters side by side;
    items whose reference runs disagree on them are left out (nothing to compare with), as are tasks whose runs
    log other versions or shot counts. Each task's filter (the reader's ``lm_eval_filter``) is a run field too.
    """
    cols = rm.items.columns
    if HASHES not in cols and not any(f in cols for f in _FIELDS):
        return None
    info = rm.items if items is None else rm.items.reindex(pd.Index(items))
    out: dict[str, Any] = {}
    if HASHES in cols and hashes:
        h = info[HASHES].fillna("").astype(str)
        keep = (h.str.len() == len(HASH_FIELDS) * HASH_WIDTH).to_numpy()
        if keep.any():
            out["hashes"] = dict(zip(map(str, info.index[keep]), h[keep]))
    tasks = set((info if hashes else rm.items)["task"].astype(str))
    runs = {}
    for f in _FIELDS:
        if f in cols:
            per = rm.items.groupby(rm.items["task"].astype(str))[f].first()
            per = {t: str(v) for t, v in per.items() if t in tasks and isinstance(v, str) and v and v != MIXED}
            if per:
                runs[f] = per
    if runs:
        out["runs"] = runs
    return out or None


def check_lm_eval_provenance(reference: dict, new: ResponseMatrix, allow_protocol_change: bool = False,
                             name: str = "new_results") -> list[str]:
    """Refuse new lm-eval logs whose documents or targets differ from the reference logs' at the recorded items,
    and (unless ``allow_protocol_change``) whose prompts or few-shot counts differ; warn of the rest, and return
    what differs (for the report: the estimate compares runs made differently).

    Raises
    ------
    ValueError
        Naming the task, a document and the field, e.g. ``"new_results: task arc_easy doc 17: doc_hash differs
        from the reference logs' (another dataset revision or document order?)"``.
    """
    rec = reference.get("lm_eval") if isinstance(reference, dict) else None
    if not rec or "task" not in new.items.columns:
        return []
    protocol: list[str] = []
    if rec.get("hashes") and HASHES in new.items.columns:
        _check_hashes(rec["hashes"], new, allow_protocol_change, name, protocol)
    for field, want in (rec.get("runs") or {}).items():
        if field == ADAPTER:
            _warn_unchecked(want, new, name)
        if field not in new.items.columns:
            continue
        got = new.items.groupby(new.items["task"].astype(str))[field].first()
        for task, v in got.items():
            w = want.get(task)
            if not w or not isinstance(v, str) or not v or v == w:
                continue
            if field == ADAPTER:
                differs = _adapter_difference(w, v)
                if not differs:
                    continue
                msg = f"task {task}: {_RUN_NAMES[field]} {differs}"
            else:
                said = "the new logs' runs log several" if v == MIXED else f"{v} in the new logs"
                msg = f"task {task}: {_RUN_NAMES[field]} {said}, {w} in the reference logs'"
            if field == FILTER:
                raise ValueError(f"{name}: {msg} (each filter extracts another answer from the model's output: "
                                 "the score would be of another metric than the reference models'); score the new "
                                 "run under the reference runs' filter")
            if field in ("n_shot", ADAPTER) and not allow_protocol_change:
                raise ValueError(f"{name}: {msg} (another protocol: the estimate would not be comparable with the "
                                 "reference models' scores); run the new model as the references were, or pass "
                                 "allow_protocol_change=True (--allow-protocol-change)")
            protocol.append(msg)
    if protocol:
        warnings.warn(f"{name}: {'; '.join(protocol[:3])}{' …' if len(protocol) > 3 else ''} (the estimate compares "
                      "runs made differently)", UserWarning, stacklevel=3)
    return protocol


def protocol_note(changes: Any, compared: str, text: Any = md_text) -> list[str]:
    """A report's Markdown lines on new runs made otherwise than the reference runs (``changes``, as
    :func:`check_lm_eval_provenance` returns them, scored under ``allow_protocol_change``): none where there are
    none. ``compared``: what of the report compares runs made differently ("The estimate and the rank"); ``text``
    writes the changes (which name tasks from the data): :func:`effstats._escape.md_text` for a file,
    :func:`effstats._escape.line_text` for a terminal."""
    if not changes:
        return []
    return ["**The new runs were made otherwise than the reference runs** (allow_protocol_change, "
            f"--allow-protocol-change): {'; '.join(map(text, changes[:5]))}{' …' if len(changes) > 5 else ''}. "
            f"{compared} compare runs made differently.", ""]


def _warn_unchecked(want: dict, new: ResponseMatrix, name: str) -> None:
    """Warn naming the tasks whose reference runs recorded an adapter spec where the new runs give none (no
    run_spec.json, or one with the model's fields only): their protocol cannot be checked."""
    cols = new.items.columns
    tasks = new.items["task"].astype(str)
    got = new.items[ADAPTER].astype(str) if ADAPTER in cols else pd.Series("", index=new.items.index)
    bare = sorted(set(tasks[(got == "").to_numpy()]) & set(want))
    if bare:
        warnings.warn(f"{name}: the new runs of {_name_list(bare, 3)} give no adapter spec (no run_spec.json, or "
                      "one without the protocol's fields): their protocol is not checked against the reference "
                      "runs'", UserWarning, stacklevel=4)


def _adapter_difference(want: str, got: str) -> str:
    """How a new HELM run's adapter spec differs from the reference runs' (both :data:`ADAPTER` JSON), field by
    field: ``"differs from the reference runs' in max_train_instances (5 here, 0 there), temperature (...)"``."""
    if got == MIXED:
        return "differs between the new runs"
    a, b = json.loads(want), json.loads(got) if got else {}
    keys = differing_fields(want, got)
    if not keys:  # equal values spelled otherwise (an older record): no difference
        return ""
    def value(d: dict, k: str) -> str:
        return json.dumps(d[k])[:40] if k in d else "unset"

    shown = ", ".join(f"{k} ({value(b, k)} here, {value(a, k)} there)" for k in keys[:4])
    return f"differs from the reference runs' in {shown}{' …' if len(keys) > 4 else ''}"


def _check_hashes(recorded: dict, new: ResponseMatrix, allow_protocol_change: bool, name: str,
                  protocol: list[str]) -> None:
    ids = new.item_ids.astype(str)
    on = np.asarray(ids.isin(list(recorded)))
    if not on.any():
        return
    got = new.items[HASHES].to_numpy(dtype=object)[on].astype(str)
    want = np.array([recorded[i] for i in ids[on]], dtype=str)
    task = new.items["task"].to_numpy(dtype=object)[on]
    doc = new.items["doc_id"].to_numpy(dtype=object)[on]
    logged = np.char.str_len(got) > 0
    mixed = got == MIXED
    if mixed.any():
        i = int(np.flatnonzero(mixed)[0])
        raise ValueError(f"{name}: task {task[i]} doc {_plain(doc[i])}: the new logs' models or runs log other "
                         f"digests of it ({int(mixed.sum())} such document(s)); read them apart")
    for j, field in enumerate(HASH_FIELDS):
        a = np.char.strip(np.array([g[j * HASH_WIDTH:(j + 1) * HASH_WIDTH] for g in got], dtype=str))
        b = np.char.strip(np.array([w[j * HASH_WIDTH:(j + 1) * HASH_WIDTH] for w in want], dtype=str))
        differ = logged & (np.char.str_len(a) > 0) & (np.char.str_len(b) > 0) & (a != b)
        if not differ.any():
            continue
        i = int(np.flatnonzero(differ)[0])
        msg = (f"task {task[i]} doc {_plain(doc[i])}: {field} differs from the reference logs' ({_WHY[field]}; "
               f"{int(differ.sum())} of {int(logged.sum())} document(s) checked differ)")
        if field != "prompt_hash":
            raise ValueError(f"{name}: {msg}")
        if not allow_protocol_change:
            raise ValueError(f"{name}: {msg}: the estimate would not be comparable with the reference models' "
                             "scores; run the new model as the references were, or pass allow_protocol_change=True "
                             "(--allow-protocol-change)")
        protocol.append(msg)
